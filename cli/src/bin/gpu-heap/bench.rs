//! `gpu-heap bench` runs the benchmark suite and prints, saves and plots its results;
//! `gpu-heap bench-report` merges saved results and redraws their plots and comparison.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use gpu_heap::Gpu;
use gpu_heap_cli::bench::{self, Test};
use indicatif::{ProgressBar, ProgressStyle};

use crate::args::{parse_bytes, test_parser, AdapterArg, StrategiesArg, WatchdogArg};

#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    adapter: AdapterArg,
    #[command(flatten)]
    strategies: StrategiesArg,
    /// Tests to run, comma-separated (default: all).
    #[arg(long, value_parser = test_parser(), value_delimiter = ',')]
    test: Vec<Test>,
    /// Heap size (default: 8GiB, or 64MiB with --quick).
    #[arg(long, value_parser = parse_bytes)]
    heap_size: Option<u64>,
    /// Timed rounds per cell, after one warm-up round.
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u32).range(1..))]
    rounds: u32,
    /// Only cells with these thread counts (comma-separated).
    #[arg(long, value_delimiter = ',')]
    threads: Vec<u32>,
    /// Only cells of these sizes (or upper ends of size ranges; comma-separated).
    #[arg(long, value_delimiter = ',')]
    sizes: Vec<u32>,
    /// The small version of every test (about a minute on lavapipe).
    #[arg(long)]
    quick: bool,
    #[command(flatten)]
    watchdog: WatchdogArg,
    /// Seconds after which a cell runs no more rounds (after at least one timed round);
    /// its record counts the rounds that ran and its note says it was cut.
    #[arg(long)]
    cell_secs: Option<u64>,
    /// Write the results as JSON here (- for standard output, the text report then goes to
    /// standard error).
    #[arg(long)]
    json: Option<PathBuf>,
    /// Write the results as CSV here.
    #[arg(long)]
    csv: Option<PathBuf>,
    /// Write SVG plots into this directory.
    #[arg(long)]
    plots: Option<PathBuf>,
    /// Write the comparison with the peers' published numbers (BENCHMARKS.md) as Markdown here.
    #[arg(long)]
    markdown: Option<PathBuf>,
    /// Heaps that can grow (the heap size committed, twice as much reserved):
    /// what the runtime committed limit costs.
    #[arg(long)]
    growable: bool,
    /// First build every selected cell's pipelines in a child process, so that this one
    /// loads them from the driver's cache: on NVIDIA, pipelines a process has just compiled
    /// can run slower for a while (BENCHMARKS.md, Method).
    #[arg(long)]
    prime: bool,
    /// Build every selected cell's heap and pipelines, measure and write nothing (what
    /// --prime runs).
    #[arg(long, hide = true, conflicts_with = "prime")]
    compile_only: bool,
    /// After every round, read the books of ualloc, tbuddy and Ouroboros into the cell's
    /// record: ualloc's semaphores against its bins, bins or tree buddy blocks that
    /// searches cannot reach, Ouroboros's malloc events (with --full-statistics), failed
    /// enqueues and queue chunks.
    #[arg(long)]
    books: bool,
    /// Heaps with full statistics, every heap's default (without: failures only, so that
    /// the cells time the allocator alone).
    #[arg(long)]
    full_statistics: bool,
}

#[derive(clap::Args)]
pub struct ReportArgs {
    /// Result files of `gpu-heap bench --json`.
    #[arg(required = true)]
    json: Vec<PathBuf>,
    /// Write SVG plots into this directory.
    #[arg(long)]
    plots: Option<PathBuf>,
    /// Write the comparison with the reference numbers as Markdown here.
    #[arg(long)]
    markdown: Option<PathBuf>,
    /// Write the merged results as CSV here.
    #[arg(long)]
    csv: Option<PathBuf>,
    /// Write the merged results as JSON here (every file must come from one adapter,
    /// timer, heap size and round count, or the merge is refused).
    #[arg(long)]
    merged_json: Option<PathBuf>,
}

pub fn run(args: Args) -> gpu_heap_cli::Result<ExitCode> {
    if args.prime {
        prime()?;
    }
    let (gpu, _) = args.adapter.open_announced()?;
    let mut options = if args.quick {
        bench::Options::quick()
    } else {
        bench::Options::full()
    };
    if !args.strategies.strategy.is_empty() {
        options.strategies = args.strategies.strategy;
    }
    if !args.test.is_empty() {
        options.tests = args.test;
    }
    if let Some(size) = args.heap_size {
        options.heap_size = size;
    }
    options.rounds = args.rounds;
    options.only_threads = args.threads;
    options.only_sizes = args.sizes;
    options.growable = args.growable;
    options.watchdog = args.watchdog.duration();
    options.cell_budget = args.cell_secs.map(Duration::from_secs);
    options.compile_only = args.compile_only;
    options.books = args.books;
    if args.full_statistics {
        options.statistics = gpu_heap::Statistics::Full;
    }
    if args.compile_only {
        return run_bench(&gpu, &options, None, None, None, None);
    }
    run_bench(
        &gpu,
        &options,
        args.json,
        args.csv,
        args.plots,
        args.markdown,
    )
}

/// Runs this command again with --compile-only in place of --prime (which writes no
/// output file), in a child process whose pipelines then sit in the driver's cache.
fn prime() -> gpu_heap_cli::Result<()> {
    let exe = std::env::current_exe()
        .map_err(|e| gpu_heap_cli::Error::Priming(format!("no path to this program: {e}")))?;
    let mut child_args: Vec<_> = std::env::args_os()
        .skip(1)
        .filter(|arg| arg != "--prime")
        .collect();
    child_args.push("--compile-only".into());
    crate::say!("priming: building every cell's pipelines in a child process first");
    let status = std::process::Command::new(&exe)
        .args(&child_args)
        .stdout(std::process::Stdio::null())
        .status()
        .map_err(|e| gpu_heap_cli::Error::Priming(format!("{}: {e}", exe.display())))?;
    if !status.success() {
        return Err(gpu_heap_cli::Error::Priming(format!(
            "`{}` {status}",
            child_args.join(" ".as_ref()).to_string_lossy()
        )));
    }
    Ok(())
}

pub fn run_report(args: ReportArgs) -> gpu_heap_cli::Result<ExitCode> {
    let mut merged: Option<bench::Report> = None;
    for path in args.json {
        let text = std::fs::read_to_string(&path).map_err(|source| gpu_heap_cli::Error::Io {
            path: path.clone(),
            source,
        })?;
        let report: bench::Report =
            serde_json::from_str(&text).map_err(|e| gpu_heap_cli::Error::Io {
                path: path.clone(),
                source: std::io::Error::other(e),
            })?;
        match &mut merged {
            None => merged = Some(report),
            Some(m) => m.merge(report).map_err(|e| match e {
                gpu_heap_cli::Error::IncomparableResults(why) => {
                    gpu_heap_cli::Error::IncomparableResults(format!("{}: {why}", path.display()))
                }
                e => e,
            })?,
        }
    }
    let report = merged.expect("clap requires one file");
    print_slow_cells(&report);
    if report.unfinished > 0 {
        crate::say!(
            "{} cells of these runs were not finished (runs cut short; files merged \
             here may hold some of them)",
            report.unfinished
        );
    }
    if let Some(path) = &args.merged_json {
        crate::args::write_json(path, &report)?;
    }
    if let Some(path) = args.markdown {
        std::fs::write(&path, bench::comparison(&report))
            .map_err(|source| gpu_heap_cli::Error::Io { path, source })?;
    }
    if let Some(path) = args.csv {
        bench::write_csv(&report, &path)?;
    }
    if let Some(dir) = args.plots {
        let files = bench::write_plots(&report, &dir)?;
        crate::say!("{} plots in {}", files.len(), dir.display());
    }
    Ok(ExitCode::SUCCESS)
}

/// Lists the cells over [`bench::SLOW_FACTOR`] times bump, so that none sits unnoticed.
fn print_slow_cells(report: &bench::Report) {
    let slow = bench::slow_cells(report);
    if !slow.is_empty() {
        crate::say!("{}:", bench::slow_summary(&slow));
    }
    for c in slow {
        crate::say!("  {c}");
    }
}

/// One line of the result table.
fn bench_row(r: &bench::Record) -> String {
    let ms = |v: Option<f64>| v.map_or("-".to_owned(), |v| format!("{v:.4}"));
    let size = match r.size_hi {
        Some(hi) => format!("{}..{}", r.size, hi),
        None => r.size.to_string(),
    };
    let mut notes: Vec<String> = r.extra.iter().map(|(k, v)| format!("{k}={v:.4}")).collect();
    if r.failed {
        notes.insert(
            0,
            format!("FAILED {:?} corrupted={}", r.failures, r.corrupted),
        );
    }
    notes.extend(r.note.clone());
    format!(
        "{:<16} {:<10} {:>8} {:>11} {:>10} {:>10}  {}",
        r.test,
        r.strategy,
        r.threads,
        size,
        ms(r.malloc_ms),
        ms(r.free_ms),
        notes.join(" ")
    )
}

fn run_bench(
    gpu: &Gpu,
    options: &bench::Options,
    json: Option<PathBuf>,
    csv: Option<PathBuf>,
    plots: Option<PathBuf>,
    markdown: Option<PathBuf>,
) -> gpu_heap_cli::Result<ExitCode> {
    let bar = ProgressBar::new(0).with_style(
        ProgressStyle::with_template("{bar:30} {pos}/{len} {elapsed_precise} {msg}")
            .expect("valid template"),
    );
    // Without a terminal (CI, the GPU machine) the bar draws nothing: log each cell instead,
    // so a run cut short still shows how far it got.
    let log = !std::io::IsTerminal::is_terminal(&std::io::stderr());
    let started = std::time::Instant::now();
    // When the last --json write ended, and how long it took.
    let mut last_write: Option<(std::time::Instant, Duration)> = None;
    let report = bench::run(gpu, options, |p| match p {
        bench::Progress::Starting { done, total, what } => {
            bar.set_length(total as u64);
            bar.set_position(done as u64);
            bar.set_message(what.to_owned());
            if log {
                eprintln!(
                    "[{done}/{total} {:.1}s] {what}",
                    started.elapsed().as_secs_f64()
                );
            }
        }
        bench::Progress::Finished { record, report } => {
            if log {
                eprintln!("{}", bench_row(record));
            }
            // Rewritten as cells finish, so a run that is killed keeps what it measured:
            // after every cell that ends at least nine times the last write's duration
            // after it, so writing takes at most a tenth of the run. (A fixed interval
            // between writes could lose the quick cells that come before one that hangs.)
            // (Standard output gets the report once, at the end.)
            if let Some(path) = json.as_ref().filter(|p| !crate::args::is_stdout(p)) {
                if last_write.is_none_or(|(end, took)| end.elapsed() >= 9 * took) {
                    let start = std::time::Instant::now();
                    if let Err(e) = crate::args::write_json(path, report) {
                        eprintln!("{e}");
                    }
                    last_write = Some((std::time::Instant::now(), start.elapsed()));
                }
            }
        }
    })?;
    bar.finish_and_clear();
    crate::say!("timer: {:?}", report.timer);
    crate::say!(
        "{:<16} {:<10} {:>8} {:>11} {:>10} {:>10}  notes",
        "test",
        "strategy",
        "threads",
        "size",
        "malloc ms",
        "free ms"
    );
    for r in &report.results {
        crate::say!("{}", bench_row(r));
    }
    if let Some(path) = &json {
        crate::args::write_json(path, &report)?;
    }
    if let Some(path) = csv {
        bench::write_csv(&report, &path)?;
    }
    if let Some(path) = markdown {
        std::fs::write(&path, bench::comparison(&report))
            .map_err(|source| gpu_heap_cli::Error::Io { path, source })?;
    }
    if let Some(dir) = plots {
        let files = bench::write_plots(&report, &dir)?;
        crate::say!("{} plots in {}", files.len(), dir.display());
    }
    print_slow_cells(&report);
    Ok(ExitCode::SUCCESS)
}
