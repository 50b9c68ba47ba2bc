//! The crate's one error type.

use std::time::Duration;

use crate::shader::ShaderError;

/// Everything that can go wrong on the host. Messages say what to do about it.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A heap of zero bytes was requested.
    #[error("the heap size must be greater than zero")]
    ZeroSize,

    /// The requested heap cannot be held by this device or this strategy.
    #[error("a heap of {requested} bytes is too large: {reason}")]
    TooLarge {
        /// The requested size in bytes.
        requested: u64,
        /// Which limit it exceeds.
        reason: String,
    },

    /// A configuration value is out of range.
    #[error("invalid heap configuration: {0}")]
    InvalidConfig(String),

    /// The device lacks features the heap needs.
    #[error(
        "the device lacks features needed for {needed_for}: {missing:?}; request them in \
             DeviceDescriptor::required_features (gpu_heap::device_features() lists them)"
    )]
    MissingFeatures {
        /// What needs them.
        needed_for: String,
        /// The features the device lacks.
        missing: wgpu::Features,
    },

    /// A device limit is too low for the heap.
    #[error(
        "the device limit {limit} is {have}, the heap needs {needed}; request the adapter's \
             limits in DeviceDescriptor::required_limits"
    )]
    LimitTooLow {
        /// The limit's name in `wgpu::Limits`.
        limit: &'static str,
        /// The device's value.
        have: u64,
        /// The value the heap needs.
        needed: u64,
    },

    /// The adapter is known to break the allocators; [`crate::HeapConfig::allow_unsupported_adapter`]
    /// overrides this.
    #[error("the adapter {adapter} is not supported: {reason}")]
    UnsupportedAdapter {
        /// The adapter's name.
        adapter: String,
        /// What breaks on it, and what to install instead.
        reason: String,
    },

    /// A pipeline layout was asked to put another bind group layout at the heap's index,
    /// or two at one index: one of them would have been replaced without a word.
    #[error(
        "bind group index {index} is taken (the heap is at {heap_index}); give your layouts \
             other indices, or move the heap with HeapConfig::bind_group_index"
    )]
    BindGroupIndexTaken {
        /// The index asked for twice.
        index: u32,
        /// The heap's index.
        heap_index: u32,
    },

    /// A shader failed to compose or validate.
    #[error(transparent)]
    Shader(#[from] ShaderError),

    /// The GPU did not finish in time: the work is presumed hung. The device has been leaked
    /// on purpose (dropping a device with hung work blocks forever on some drivers).
    #[error("watchdog: {what} did not finish within {after:?}; the GPU work is presumed hung")]
    Timeout {
        /// The work that did not finish.
        what: String,
        /// The watchdog it exceeded.
        after: Duration,
    },

    /// wgpu reported an error (device lost, validation, mapping).
    #[error("wgpu error during {what}: {message}")]
    Gpu {
        /// What the heap was doing.
        what: String,
        /// wgpu's message.
        message: String,
    },

    /// No adapter matched.
    #[error(
        "no GPU adapter found{0}; on a machine without a GPU driver install Mesa's lavapipe \
             (see README)"
    )]
    NoAdapter(String),

    /// The strategy has no growth hooks: plan the heap without `max_size` above `size`.
    #[error(
        "strategy {strategy} cannot grow (it has no strategy_grow hook); use a heap without \
             max_size above size, or another strategy"
    )]
    GrowthUnsupported {
        /// The strategy.
        strategy: String,
    },

    /// A grow asked for more than the heap's reserved maximum.
    #[error(
        "cannot grow the heap to {requested} bytes: its reserved maximum is {max} bytes \
             (HeapConfig::max_size)"
    )]
    GrowBeyondMax {
        /// The size asked for in bytes.
        requested: u64,
        /// The reserved maximum in bytes.
        max: u64,
    },

    /// A trim asked to go below the heap's initial size.
    #[error("cannot trim the heap to {requested} bytes: its initial size is {initial} bytes")]
    TrimBelowInitial {
        /// The size asked for in bytes.
        requested: u64,
        /// The initial size in bytes.
        initial: u64,
    },
}

/// Shorthand for results of this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;
