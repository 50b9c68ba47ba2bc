//! The tools' error type: the library's errors, and what only the tools can get wrong.

use std::path::PathBuf;

/// Everything that can go wrong in a tool run.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The library refused or failed (configuration, device, watchdog, shader).
    #[error(transparent)]
    Heap(#[from] gpu_heap::Error),

    /// Options that cannot run: an empty size list, zero rounds, a heap below a minimum.
    #[error("invalid options: {0}")]
    InvalidOptions(String),

    /// wgpu or naga reported an error in a tool's own GPU work (buffers, pipelines, mapping,
    /// translating kernels).
    #[error("wgpu error during {what}: {message}")]
    Gpu { what: String, message: String },

    /// Benchmark results that cannot be merged: their times do not compare (another
    /// adapter, timer, heap size, round count or heap kind).
    #[error("results that do not compare: {0}")]
    IncomparableResults(String),

    /// The child process of `gpu-heap bench --prime`, which builds the pipelines first,
    /// could not run or failed (its own error went to standard error before this one).
    #[error("priming failed: {0}")]
    Priming(String),

    /// What this machine cannot do for a tool (a Vulkan driver without the extension
    /// `kernel-stats` needs, say).
    #[error("unsupported here: {0}")]
    Unsupported(String),

    /// A file could not be read or written.
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
}

impl Error {
    /// The process exit code for this error: 2 for a usage error (options that cannot run,
    /// result files that do not merge), as clap uses for arguments it cannot parse; 3 for a
    /// set-up failure (no adapter, a heap or GPU resource the device refused, a file). A
    /// run whose checks fail exits with 1.
    pub fn exit_code(&self) -> u8 {
        match self {
            Error::InvalidOptions(_) | Error::IncomparableResults(_) => 2,
            Error::Heap(_)
            | Error::Gpu { .. }
            | Error::Priming(_)
            | Error::Unsupported(_)
            | Error::Io { .. } => 3,
        }
    }
}

/// Shorthand for results of the tools.
pub type Result<T, E = Error> = std::result::Result<T, E>;
