//! The gpu-heap command line: `info`, `conformance`, `bench`, `grow-bench`, `tas`,
//! `utilisation`, `bench-report`, `kernel-stats` and `flatten`, each run by its own module.

/// `println!` for the text report, to standard error under `--json -`
/// ([`args::TEXT_TO_STDERR`]).
#[macro_export]
macro_rules! say {
    ($($t:tt)*) => {
        if $crate::args::TEXT_TO_STDERR.load(std::sync::atomic::Ordering::Relaxed) {
            eprintln!($($t)*)
        } else {
            println!($($t)*)
        }
    };
}

mod args;
mod bench;
mod conformance;
mod flatten;
mod grow_bench;
mod info;
mod kernel_stats;
mod tas;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(
    version,
    about = "A portable GPU memory allocator for WGSL: tools and conformance suite",
    after_help = "Exit status: 0 success, 1 checks failed (conformance, TAS), 2 usage error, \
                  3 set-up failure (no usable adapter, a heap or file that could not be made)."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Print the adapter, backend, driver and the limits and features that matter.
    Info(info::Args),
    /// Run the conformance suite; exits with 1 if any scenario fails.
    Conformance(conformance::Args),
    /// Run the benchmark suite (the survey's test cases) for every strategy.
    Bench(bench::Args),
    /// Grow a heap by doubling without copying (committing segments) against growing one
    /// buffer by copying it into a twice larger one: time per step and peak memory.
    GrowBench(grow_bench::Args),
    /// Measure the random walks' average steps per thread (TAS) against Pham & Tu's model.
    Tas(tas::Args),
    /// Out-of-memory utilisation: fill a heap with one size until NULL, per size.
    Utilisation(tas::UtilisationArgs),
    /// Redraw the plots and the reference comparison of saved `bench --json` results
    /// (several files are merged, e.g. runs split by test; a cell that a later file measured
    /// again takes that file's record).
    BenchReport(bench::ReportArgs),
    /// Print the driver's statistics of the benchmark's kernels (registers per invocation
    /// first, which set how many workgroups stay resident); Vulkan drivers with
    /// VK_KHR_pipeline_executable_properties only.
    KernelStats(kernel_stats::Args),
    /// Print a self-contained alloc.wgsl for WebGPU users outside Rust.
    Flatten(flatten::Args),
}

fn main() -> ExitCode {
    // wgpu's own errors while probing backends without drivers (EGL, say) are noise here;
    // RUST_LOG=wgpu_hal=warn brings them back.
    env_logger::Builder::from_env(
        env_logger::Env::default().default_filter_or("warn,wgpu_hal=off"),
    )
    .init();
    let argv: Vec<String> = std::env::args().collect();
    args::TEXT_TO_STDERR.store(
        args::json_to_stdout(&argv),
        std::sync::atomic::Ordering::Relaxed,
    );
    match run(Cli::parse()) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(e.exit_code())
        }
    }
}

fn run(cli: Cli) -> gpu_heap_cli::Result<ExitCode> {
    match cli.command {
        Command::Info(args) => info::run(args),
        Command::Conformance(args) => conformance::run(args),
        Command::Bench(args) => bench::run(args),
        Command::GrowBench(args) => grow_bench::run(args),
        Command::Tas(args) => tas::run(args),
        Command::Utilisation(args) => tas::run_utilisation(args),
        Command::BenchReport(args) => bench::run_report(args),
        Command::KernelStats(args) => kernel_stats::run(args),
        Command::Flatten(args) => flatten::run(args),
    }
}
