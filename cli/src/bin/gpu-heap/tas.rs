//! `gpu-heap tas` measures the random walks' average steps per thread against Pham & Tu's
//! model; `gpu-heap utilisation` fills a heap with one request size until NULL, per size.

use std::path::PathBuf;
use std::process::ExitCode;

use gpu_heap::Strategy;
use gpu_heap_cli::tas::{self, TasOptions};
use gpu_heap_cli::utilisation;

use crate::args::{long_watchdog, parse_bytes, strategy_parser, AdapterArg, WatchdogArg};

#[derive(clap::Args)]
#[command(mut_arg("watchdog_secs", long_watchdog))]
pub struct Args {
    #[command(flatten)]
    adapter: AdapterArg,
    /// Strategies (rw, rw-bm, corw; default all three).
    #[arg(long, value_parser = strategy_parser(), value_delimiter = ',')]
    strategy: Vec<Strategy>,
    /// log2 of the number of pages (20: the paper's 1M pages).
    #[arg(long, default_value_t = 20)]
    page_bits: u32,
    /// Free fractions in percent, comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "50,10,1,0.5")]
    free: Vec<f64>,
    /// Thread counts, comma-separated.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "1000,2000,3000,4000,5000"
    )]
    threads: Vec<u32>,
    /// Repetitions with different prefills, averaged.
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..))]
    rounds: u32,
    #[command(flatten)]
    watchdog: WatchdogArg,
    /// Write the rows as JSON here (- for standard output, the text report then goes to
    /// standard error).
    #[arg(long)]
    json: Option<PathBuf>,
    /// Write the Markdown table here.
    #[arg(long)]
    markdown: Option<PathBuf>,
}

#[derive(clap::Args)]
#[command(mut_arg("watchdog_secs", long_watchdog))]
pub struct UtilisationArgs {
    #[command(flatten)]
    adapter: AdapterArg,
    #[arg(long, value_parser = strategy_parser(), default_value = "rw-malloc")]
    strategy: Strategy,
    #[arg(long, default_value = "16MiB", value_parser = parse_bytes)]
    heap_size: u64,
    /// RW_malloc unit (and page size of page-based strategies) in bytes.
    #[arg(long, default_value_t = 16)]
    unit_size: u32,
    /// Request sizes in bytes, comma-separated.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "24,100,200,1000,3000,5000,50000"
    )]
    sizes: Vec<u32>,
    #[command(flatten)]
    watchdog: WatchdogArg,
    #[arg(long)]
    json: Option<PathBuf>,
}

pub fn run(args: Args) -> gpu_heap_cli::Result<ExitCode> {
    let (gpu, adapter) = args.adapter.open_announced()?;
    let mut options = TasOptions {
        page_bits: args.page_bits,
        free_percent: args.free,
        threads: args.threads,
        rounds: args.rounds,
        watchdog: args.watchdog.duration(),
        ..TasOptions::default()
    };
    if !args.strategy.is_empty() {
        options.strategies = args.strategy;
    }
    let rows = tas::run(&gpu, &options, |what| eprintln!("  {what}"))?;
    let table = tas::markdown(&rows);
    print!("{table}");
    if let Some(path) = args.markdown {
        std::fs::write(&path, &table).map_err(|source| gpu_heap_cli::Error::Io { path, source })?;
    }
    if let Some(path) = args.json {
        let report = serde_json::json!({
            "adapter": adapter,
            "date": chrono::Utc::now().format("%Y-%m-%d").to_string(),
            "pages": 1u64 << options.page_bits,
            "rounds": options.rounds,
            "results": rows,
        });
        crate::args::write_json(&path, &report)?;
    }
    Ok(ExitCode::SUCCESS)
}

pub fn run_utilisation(args: UtilisationArgs) -> gpu_heap_cli::Result<ExitCode> {
    let (gpu, adapter) = args.adapter.open_announced()?;
    let rows = utilisation::measure(
        &gpu,
        args.strategy,
        args.heap_size,
        args.unit_size,
        &args.sizes,
        args.watchdog.duration(),
    )?;
    crate::say!(
        "{:<10} {:>8} {:>10} {:>10} {:>8} {:>9} {:>6} {:>6} {:>9} {:>10}",
        "strategy",
        "size",
        "attempts",
        "allocs",
        "granted",
        "requested",
        "oom",
        "cont",
        "corrupted",
        "refilled"
    );
    let mut bad = false;
    for r in &rows {
        crate::say!(
            "{:<10} {:>8} {:>10} {:>10} {:>7.2}% {:>8.2}% {:>6} {:>6} {:>9} {:>10}",
            r.strategy.name(),
            r.size,
            r.attempts,
            r.allocations,
            100.0 * r.granted,
            100.0 * r.requested,
            r.failures.out_of_memory,
            r.failures.contention,
            r.corrupted + r.overlaps,
            r.refilled
        );
        bad |= r.corrupted + r.overlaps > 0 || r.live_after_free != (0, 0);
    }
    if let Some(path) = args.json {
        let report = serde_json::json!({
            "adapter": adapter,
            "date": chrono::Utc::now().format("%Y-%m-%d").to_string(),
            "results": rows,
        });
        crate::args::write_json(&path, &report)?;
    }
    Ok(if bad {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}
