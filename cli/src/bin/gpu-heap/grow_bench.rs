//! `gpu-heap grow-bench`: grows a heap by committing segments and, for comparison, a
//! buffer by copying it into a twice larger one; prints time per step and peak memory.

use std::path::PathBuf;
use std::process::ExitCode;

use gpu_heap::Strategy;
use gpu_heap_cli::bench;

use crate::args::{long_watchdog, parse_bytes, strategy_parser, AdapterArg, WatchdogArg};

#[derive(clap::Args)]
#[command(mut_arg("watchdog_secs", long_watchdog))]
pub struct Args {
    #[command(flatten)]
    adapter: AdapterArg,
    /// Strategies of the committing heap (comma-separated).
    #[arg(long, value_parser = strategy_parser(), value_delimiter = ',', default_value = "bump,rw-bm")]
    strategy: Vec<Strategy>,
    /// Initial size.
    #[arg(long, default_value = "64MiB", value_parser = parse_bytes)]
    initial: u64,
    /// Largest size (the heap's reserved maximum).
    #[arg(long, default_value = "1GiB", value_parser = parse_bytes)]
    max: u64,
    /// Page size of the page-based strategies.
    #[arg(long, default_value_t = 256)]
    page_size: u32,
    /// Rounds of the whole doubling sequence (median per step).
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..))]
    rounds: u32,
    #[command(flatten)]
    watchdog: WatchdogArg,
    /// Write the results as JSON here (- for standard output, the text report then goes to
    /// standard error).
    #[arg(long)]
    json: Option<PathBuf>,
    /// Write the plot (SVG) here.
    #[arg(long)]
    plot: Option<PathBuf>,
}

pub fn run(args: Args) -> gpu_heap_cli::Result<ExitCode> {
    let (gpu, _) = args.adapter.open_announced()?;
    let options = bench::grow::GrowOptions {
        initial: args.initial,
        max: args.max,
        strategies: args.strategy,
        page_size: args.page_size,
        rounds: args.rounds,
        watchdog: args.watchdog.duration(),
    };
    let report = bench::grow::run(&gpu, &options)?;
    for (s, ms) in &report.reserve_ms {
        crate::say!("heap creation ({s}): {ms:.2} ms (reserve + initial commit + init)");
    }
    crate::say!(
        "{:<8} {:<10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>11}",
        "method",
        "strategy",
        "from MiB",
        "to MiB",
        "ms",
        "min",
        "max",
        "grow ms",
        "peak MiB"
    );
    let ms = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{v:.3}"));
    for r in &report.results {
        crate::say!(
            "{:<8} {:<10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>11}{}",
            r.method,
            r.strategy.as_deref().unwrap_or("-"),
            r.from_bytes >> 20,
            r.to_bytes >> 20,
            ms(r.ms),
            ms(r.ms_min),
            ms(r.ms_max),
            ms(r.grow_ms),
            r.peak_bytes >> 20,
            r.note
                .as_ref()
                .map_or(String::new(), |n| format!("  ({n})"))
        );
    }
    if let Some(path) = args.json {
        crate::args::write_json(&path, &report)?;
    }
    if let Some(path) = args.plot {
        bench::grow::plot(&report, &path)?;
    }
    Ok(ExitCode::SUCCESS)
}
