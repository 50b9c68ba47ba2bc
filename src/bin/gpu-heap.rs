//! The gpu-heap command line: `info`, `conformance`, `bench`, `grow-bench`, `tas`,
//! `utilisation` and `flatten`.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::{Parser, Subcommand};
use gpu_heap::bench::{self, Test};
use gpu_heap::conformance::{self, Options, Scenario, ScenarioResult};
use gpu_heap::random_walk::tas::{self, TasOptions};
use gpu_heap::random_walk::utilisation;
use gpu_heap::{AdapterDescription, Gpu, HeapConfig, Strategy};
use indicatif::{ProgressBar, ProgressStyle};

#[derive(Parser)]
#[command(
    version,
    about = "A portable GPU memory allocator for WGSL: tools and conformance suite"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Print the adapter, backend, driver and the limits and features that matter.
    Info {
        /// Use the adapter whose name contains this text.
        #[arg(long)]
        adapter: Option<String>,
    },
    /// Run the conformance suite; exits non-zero if any scenario fails.
    Conformance {
        #[arg(long)]
        adapter: Option<String>,
        /// Strategies to run (default: all).
        #[arg(long, value_parser = parse_strategy, value_delimiter = ',')]
        strategy: Vec<Strategy>,
        /// Scenarios to run (default: all): basic, churn, exhaustion, device-bad-input,
        /// host-bad-input, utilisation, growth, scale, free-all, round-trip.
        #[arg(long, value_parser = parse_scenario, value_delimiter = ',')]
        scenario: Vec<Scenario>,
        /// Heap size, e.g. 512MiB or 8GiB.
        #[arg(long, default_value = "512MiB", value_parser = parse_bytes)]
        heap_size: u64,
        /// Page size in bytes of RW, RW-BM and CoRW.
        #[arg(long, default_value_t = 256)]
        page_size: u32,
        /// RW_malloc's unit size in bytes.
        #[arg(long, default_value_t = 16)]
        unit_size: u32,
        /// Invocations per dispatch.
        #[arg(long, default_value_t = 16_384)]
        slots: u32,
        /// Workgroups of 64 invocations in the scale and round-trip scenarios.
        #[arg(long, default_value_t = 1024)]
        workgroups: u32,
        /// Seconds one dispatch may take before it counts as hung.
        #[arg(long, default_value_t = 60)]
        watchdog_secs: u64,
        /// Write the results as JSON here.
        #[arg(long)]
        json: Option<PathBuf>,
    },
    /// Run the benchmark suite (the survey's test cases) for every strategy.
    Bench {
        #[arg(long)]
        adapter: Option<String>,
        /// Strategies to run (default: all).
        #[arg(long, value_parser = parse_strategy, value_delimiter = ',')]
        strategy: Vec<Strategy>,
        /// Tests to run (default: all): alloc, accumulate, subgroup, mixed, scaling,
        /// fragmentation, out-of-memory, work-generation, write, init.
        #[arg(long, value_parser = parse_test)]
        test: Vec<Test>,
        /// Heap size (default: 8GiB, or 64MiB with --quick).
        #[arg(long, value_parser = parse_bytes)]
        heap_size: Option<u64>,
        /// Timed rounds per cell, after one warm-up round.
        #[arg(long, default_value_t = 5)]
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
        /// Seconds one dispatch may take before it counts as hung.
        #[arg(long, default_value_t = 60)]
        watchdog_secs: u64,
        /// Seconds after which a cell runs no more rounds (after at least one timed round);
        /// its record counts the rounds that ran and its note says it was cut.
        #[arg(long)]
        cell_secs: Option<u64>,
        /// Write the results as JSON here.
        #[arg(long)]
        json: Option<PathBuf>,
        /// Write the results as CSV here.
        #[arg(long)]
        csv: Option<PathBuf>,
        /// Write SVG plots into this directory.
        #[arg(long)]
        plots: Option<PathBuf>,
        /// Write the comparison with the reference numbers (DESIGN.md) as Markdown here.
        #[arg(long)]
        markdown: Option<PathBuf>,
        /// Heaps that can grow (the heap size committed, twice as much reserved):
        /// what the runtime committed limit costs.
        #[arg(long)]
        growable: bool,
    },
    /// Grow a heap by doubling without copying (committing segments) against growing one
    /// buffer by copying it into a twice larger one: time per step and peak memory.
    GrowBench {
        #[arg(long)]
        adapter: Option<String>,
        /// Strategies of the committing heap (comma-separated).
        #[arg(long, value_parser = parse_strategy, value_delimiter = ',', default_value = "bump,rw-bm")]
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
        #[arg(long, default_value_t = 3)]
        rounds: u32,
        #[arg(long, default_value_t = 120)]
        watchdog_secs: u64,
        /// Write the results as JSON here.
        #[arg(long)]
        json: Option<PathBuf>,
        /// Write the plot (SVG) here.
        #[arg(long)]
        plot: Option<PathBuf>,
    },
    /// Measure the random walks' average steps per thread (TAS) against Pham & Tu's model.
    Tas {
        #[arg(long)]
        adapter: Option<String>,
        /// Strategies (rw, rw-bm, corw; default all three).
        #[arg(long, value_parser = parse_strategy, value_delimiter = ',')]
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
        #[arg(long, default_value_t = 3)]
        rounds: u32,
        #[arg(long, default_value_t = 120)]
        watchdog_secs: u64,
        /// Write the rows as JSON here.
        #[arg(long)]
        json: Option<PathBuf>,
        /// Write the Markdown table here.
        #[arg(long)]
        markdown: Option<PathBuf>,
    },
    /// Out-of-memory utilisation: fill a heap with one size until NULL, per size.
    Utilisation {
        #[arg(long)]
        adapter: Option<String>,
        #[arg(long, value_parser = parse_strategy, default_value = "rw-malloc")]
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
        #[arg(long, default_value_t = 120)]
        watchdog_secs: u64,
        #[arg(long)]
        json: Option<PathBuf>,
    },
    /// Redraw the plots and the reference comparison of saved `bench --json` results
    /// (several files are merged, e.g. runs split by test; a cell that a later file measured
    /// again takes that file's record).
    BenchReport {
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
    },
    /// Print a self-contained alloc.wgsl for WebGPU users outside Rust.
    Flatten {
        #[arg(long, value_parser = parse_strategy, value_delimiter = ',')]
        strategy: Strategy,
        #[arg(long, default_value = "64MiB", value_parser = parse_bytes)]
        heap_size: u64,
        #[arg(long, default_value_t = 256)]
        page_size: u32,
        /// Plan segments for this adapter's limits instead of WebGPU's defaults.
        #[arg(long)]
        adapter: Option<String>,
    },
}

fn parse_strategy(s: &str) -> Result<Strategy, String> {
    s.parse()
}

fn parse_test(s: &str) -> Result<Test, String> {
    s.parse()
}

fn parse_scenario(s: &str) -> Result<Scenario, String> {
    Scenario::ALL
        .iter()
        .copied()
        .find(|sc| sc.name() == s)
        .ok_or_else(|| {
            let names: Vec<_> = Scenario::ALL.iter().map(|sc| sc.name()).collect();
            format!("unknown scenario \"{s}\"; known: {}", names.join(", "))
        })
}

/// Bytes with an optional binary suffix: 4096, 64KiB, 512MiB, 8GiB.
fn parse_bytes(s: &str) -> Result<u64, String> {
    let split = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
    let (digits, suffix) = s.split_at(split);
    let value: u64 = digits.parse().map_err(|_| format!("not a size: \"{s}\""))?;
    let shift = match suffix.trim() {
        "" | "B" => 0,
        "K" | "KiB" => 10,
        "M" | "MiB" => 20,
        "G" | "GiB" => 30,
        other => {
            return Err(format!(
                "unknown size suffix \"{other}\" (use KiB, MiB or GiB)"
            ))
        }
    };
    value
        .checked_mul(1 << shift)
        .ok_or_else(|| format!("size \"{s}\" overflows"))
}

fn main() -> ExitCode {
    // wgpu's own errors while probing backends without drivers (EGL, say) are noise here;
    // RUST_LOG=wgpu_hal=warn brings them back.
    env_logger::Builder::from_env(
        env_logger::Env::default().default_filter_or("warn,wgpu_hal=off"),
    )
    .init();
    match run(Cli::parse()) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run(cli: Cli) -> gpu_heap::Result<ExitCode> {
    match cli.command {
        Command::Info { adapter } => {
            let gpu = Gpu::open(adapter.as_deref())?;
            info(&gpu);
            Ok(ExitCode::SUCCESS)
        }
        Command::Conformance {
            adapter,
            strategy,
            scenario,
            heap_size,
            page_size,
            unit_size,
            slots,
            workgroups,
            watchdog_secs,
            json,
        } => {
            let gpu = Gpu::open(adapter.as_deref())?;
            let strategies = if strategy.is_empty() {
                Strategy::ALL.to_vec()
            } else {
                strategy
            };
            let options = Options {
                heap_size,
                page_size,
                unit_size,
                slots,
                workgroups,
                watchdog: Duration::from_secs(watchdog_secs),
                ..Options::default()
            };
            let scenarios = if scenario.is_empty() {
                Scenario::ALL.to_vec()
            } else {
                scenario
            };
            run_conformance(&gpu, &strategies, &scenarios, &options, json)
        }
        Command::Bench {
            adapter,
            strategy,
            test,
            heap_size,
            rounds,
            threads,
            sizes,
            quick,
            watchdog_secs,
            cell_secs,
            json,
            csv,
            plots,
            markdown,
            growable,
        } => {
            let gpu = Gpu::open(adapter.as_deref())?;
            let mut options = if quick {
                bench::Options::quick()
            } else {
                bench::Options::full()
            };
            if !strategy.is_empty() {
                options.strategies = strategy;
            }
            if !test.is_empty() {
                options.tests = test;
            }
            if let Some(size) = heap_size {
                options.heap_size = size;
            }
            options.rounds = rounds;
            options.only_threads = threads;
            options.only_sizes = sizes;
            options.growable = growable;
            options.watchdog = Duration::from_secs(watchdog_secs);
            options.cell_budget = cell_secs.map(Duration::from_secs);
            run_bench(&gpu, &options, json, csv, plots, markdown)
        }
        Command::Tas {
            adapter,
            strategy,
            page_bits,
            free,
            threads,
            rounds,
            watchdog_secs,
            json,
            markdown,
        } => {
            let gpu = Gpu::open(adapter.as_deref())?;
            let mut options = TasOptions {
                page_bits,
                free_percent: free,
                threads,
                rounds,
                watchdog: Duration::from_secs(watchdog_secs),
                ..TasOptions::default()
            };
            if !strategy.is_empty() {
                options.strategies = strategy;
            }
            let adapter = gpu.describe();
            println!(
                "adapter {} ({}, {})",
                adapter.name, adapter.backend, adapter.driver
            );
            let rows = tas::run(&gpu, &options, |what| eprintln!("  {what}"))?;
            let table = tas::markdown(&rows);
            print!("{table}");
            if let Some(path) = markdown {
                std::fs::write(&path, &table)
                    .map_err(|source| gpu_heap::Error::Io { path, source })?;
            }
            if let Some(path) = json {
                let report = serde_json::json!({
                    "adapter": adapter,
                    "date": chrono::Utc::now().format("%Y-%m-%d").to_string(),
                    "pages": 1u64 << options.page_bits,
                    "rounds": options.rounds,
                    "results": rows,
                });
                let text = serde_json::to_string_pretty(&report).expect("serialisable");
                std::fs::write(&path, text)
                    .map_err(|source| gpu_heap::Error::Io { path, source })?;
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::GrowBench {
            adapter,
            strategy,
            initial,
            max,
            page_size,
            rounds,
            watchdog_secs,
            json,
            plot,
        } => {
            let gpu = Gpu::open(adapter.as_deref())?;
            let adapter = gpu.describe();
            println!(
                "adapter {} ({}, {})",
                adapter.name, adapter.backend, adapter.driver
            );
            let options = bench::grow::GrowOptions {
                initial,
                max,
                strategies: strategy,
                page_size,
                rounds,
                watchdog: Duration::from_secs(watchdog_secs),
            };
            let report = bench::grow::run(&gpu, &options)?;
            for (s, ms) in &report.reserve_ms {
                println!("heap creation ({s}): {ms:.2} ms (reserve + initial commit + init)");
            }
            println!(
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
                println!(
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
            if let Some(path) = json {
                let text = serde_json::to_string_pretty(&report).expect("serialisable");
                std::fs::write(&path, text)
                    .map_err(|source| gpu_heap::Error::Io { path, source })?;
            }
            if let Some(path) = plot {
                bench::grow::plot(&report, &path)?;
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Utilisation {
            adapter,
            strategy,
            heap_size,
            unit_size,
            sizes,
            watchdog_secs,
            json,
        } => {
            let gpu = Gpu::open(adapter.as_deref())?;
            let adapter = gpu.describe();
            println!(
                "adapter {} ({}, {})",
                adapter.name, adapter.backend, adapter.driver
            );
            let rows = utilisation::measure(
                &gpu,
                strategy,
                heap_size,
                unit_size,
                &sizes,
                Duration::from_secs(watchdog_secs),
            )?;
            println!(
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
                println!(
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
            if let Some(path) = json {
                let report = serde_json::json!({
                    "adapter": adapter,
                    "date": chrono::Utc::now().format("%Y-%m-%d").to_string(),
                    "results": rows,
                });
                let text = serde_json::to_string_pretty(&report).expect("serialisable");
                std::fs::write(&path, text)
                    .map_err(|source| gpu_heap::Error::Io { path, source })?;
            }
            Ok(if bad {
                ExitCode::FAILURE
            } else {
                ExitCode::SUCCESS
            })
        }
        Command::BenchReport {
            json,
            plots,
            markdown,
            csv,
            merged_json,
        } => {
            let mut merged: Option<bench::Report> = None;
            for path in json {
                let text =
                    std::fs::read_to_string(&path).map_err(|source| gpu_heap::Error::Io {
                        path: path.clone(),
                        source,
                    })?;
                let report: bench::Report =
                    serde_json::from_str(&text).map_err(|e| gpu_heap::Error::Io {
                        path: path.clone(),
                        source: std::io::Error::other(e),
                    })?;
                match &mut merged {
                    None => merged = Some(report),
                    Some(m) => m.merge(report).map_err(|e| match e {
                        gpu_heap::Error::IncomparableResults(why) => {
                            gpu_heap::Error::IncomparableResults(format!(
                                "{}: {why}",
                                path.display()
                            ))
                        }
                        e => e,
                    })?,
                }
            }
            let report = merged.expect("clap requires one file");
            if report.unfinished > 0 {
                println!(
                    "{} cells of these runs were not finished (runs cut short; files merged \
                     here may hold some of them)",
                    report.unfinished
                );
            }
            if let Some(path) = &merged_json {
                write_report(&report, path)?;
            }
            if let Some(path) = markdown {
                std::fs::write(&path, bench::comparison(&report))
                    .map_err(|source| gpu_heap::Error::Io { path, source })?;
            }
            if let Some(path) = csv {
                bench::write_csv(&report, &path)?;
            }
            if let Some(dir) = plots {
                let files = bench::write_plots(&report, &dir)?;
                println!("{} plots in {}", files.len(), dir.display());
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Flatten {
            strategy,
            heap_size,
            page_size,
            adapter,
        } => {
            let config = HeapConfig::new(heap_size)
                .strategy(strategy)
                .page_size(page_size);
            let text = match adapter {
                Some(name) => {
                    let gpu = Gpu::open(Some(&name))?;
                    gpu_heap::flatten(&config, &gpu.device.limits(), gpu.device.features())?
                }
                None => {
                    gpu_heap::flatten(&config, &wgpu::Limits::default(), wgpu::Features::empty())?
                }
            };
            print!("{text}");
            Ok(ExitCode::SUCCESS)
        }
    }
}

fn info(gpu: &Gpu) {
    let d = gpu.describe();
    let info = gpu.adapter.get_info();
    let limits = gpu.device.limits();
    println!("adapter   {} ({:?})", d.name, info.device_type);
    println!("backend   {}", d.backend);
    println!("driver    {}", d.driver);
    println!("limits");
    for (name, value) in [
        ("max_buffer_size", limits.max_buffer_size),
        (
            "max_storage_buffer_binding_size",
            limits.max_storage_buffer_binding_size,
        ),
        (
            "max_storage_buffers_per_shader_stage",
            limits.max_storage_buffers_per_shader_stage as u64,
        ),
        (
            "max_binding_array_elements_per_shader_stage",
            limits.max_binding_array_elements_per_shader_stage as u64,
        ),
        (
            "max_compute_workgroups_per_dimension",
            limits.max_compute_workgroups_per_dimension as u64,
        ),
        (
            "max_compute_invocations_per_workgroup",
            limits.max_compute_invocations_per_workgroup as u64,
        ),
    ] {
        println!("  {name:<44} {value}");
    }
    println!("features");
    for (name, feature) in [
        (
            "binding arrays of storage buffers",
            gpu_heap::BINDING_ARRAY_FEATURES,
        ),
        ("subgroups", wgpu::Features::SUBGROUP),
        ("timestamp queries", wgpu::Features::TIMESTAMP_QUERY),
        (
            "64-bit atomics",
            wgpu::Features::SHADER_INT64_ATOMIC_ALL_OPS,
        ),
    ] {
        let have = gpu.adapter.features().contains(feature);
        println!("  {name:<44} {}", if have { "yes" } else { "no" });
    }
    println!(
        "largest heap  {} GiB ({} segments of {} MiB with binding arrays)",
        largest_heap(&limits) >> 30,
        largest_heap(&limits) / segment_bytes(&limits),
        segment_bytes(&limits) >> 20
    );
}

fn segment_bytes(limits: &wgpu::Limits) -> u64 {
    let cap = limits
        .max_storage_buffer_binding_size
        .min(limits.max_buffer_size);
    1 << (63 - cap.leading_zeros())
}

fn largest_heap(limits: &wgpu::Limits) -> u64 {
    let segments = (limits.max_binding_array_elements_per_shader_stage as u64)
        .min(limits.max_storage_buffers_per_shader_stage as u64 - 1);
    (segments * segment_bytes(limits)).min(u32::MAX as u64 * 16)
}

#[derive(serde::Serialize)]
struct Report<'a> {
    adapter: AdapterDescription,
    date: String,
    heap_size: u64,
    page_size: u32,
    unit_size: u32,
    slots: u32,
    workgroups: u32,
    results: &'a [ScenarioResult],
}

fn run_conformance(
    gpu: &Gpu,
    strategies: &[Strategy],
    scenarios: &[Scenario],
    options: &Options,
    json: Option<PathBuf>,
) -> gpu_heap::Result<ExitCode> {
    let adapter = gpu.describe();
    println!(
        "adapter {} ({}, {})",
        adapter.name, adapter.backend, adapter.driver
    );
    let total = (strategies.len() * scenarios.len()) as u64;
    let bar = ProgressBar::new(total).with_style(
        ProgressStyle::with_template("{bar:30} {pos}/{len} {msg}").expect("valid template"),
    );
    // Rows are printed as scenarios finish (a cold driver cache can make a whole run take
    // minutes); the bar, on a terminal only, stays below them.
    bar.suspend(|| {
        println!(
            "{:<10} {:<18} {:<6} {:>10} {:>6} {:>6} {:>6} {:>6} {:>9} {:>8}",
            "strategy",
            "scenario",
            "result",
            "operations",
            "oom",
            "cont",
            "inv-rq",
            "inv-fr",
            "corrupted",
            "seconds"
        );
    });
    let mut results = Vec::new();
    let mut hung = false;
    'outer: for &strategy in strategies {
        for &scenario in scenarios {
            bar.set_message(format!("{strategy} {}", scenario.name()));
            let r = conformance::run(gpu, strategy, scenario, options);
            bar.suspend(|| print_conformance_row(&r));
            let stop = r.hung;
            results.push(r);
            if stop {
                hung = true;
                break 'outer;
            }
            bar.inc(1);
        }
    }
    bar.finish_and_clear();
    let passed = results.iter().filter(|r| r.passed).count();
    let failed = results.len() - passed;
    println!("{passed} passed, {failed} failed");
    if hung {
        println!("stopped early: the GPU is presumed hung (see the last problem above)");
    }
    if let Some(path) = json {
        let report = Report {
            adapter,
            date: chrono::Utc::now().format("%Y-%m-%d").to_string(),
            heap_size: options.heap_size,
            page_size: options.page_size,
            unit_size: options.unit_size,
            slots: options.slots,
            workgroups: options.workgroups,
            results: &results,
        };
        let text = serde_json::to_string_pretty(&report).expect("serialisable");
        std::fs::write(&path, text).map_err(|source| gpu_heap::Error::Io { path, source })?;
    }
    let all_ran = !hung && results.len() as u64 == total;
    Ok(if failed == 0 && all_ran {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// One scenario's row of the conformance table, with its details.
fn print_conformance_row(r: &conformance::ScenarioResult) {
    println!(
        "{:<10} {:<18} {:<6} {:>10} {:>6} {:>6} {:>6} {:>6} {:>9} {:>8.2}",
        r.strategy.name(),
        r.scenario.name(),
        if r.passed { "pass" } else { "FAIL" },
        r.operations,
        r.failures.out_of_memory,
        r.failures.contention,
        r.failures.invalid_request,
        r.failures.invalid_free,
        r.corrupted,
        r.seconds
    );
    if let Some(u) = r.utilisation {
        println!(
            "    utilisation: {:.2}% of the heap handed out as 16 B ({:.2}% of heap + metadata); \
             {:.2}% in one dispatch",
            u * 100.0,
            r.utilisation_with_meta.unwrap_or(0.0) * 100.0,
            r.burst_utilisation.unwrap_or(0.0) * 100.0
        );
    }
    for p in &r.problems {
        println!("    {p}");
    }
    if !r.passed || r.utilisation.is_some() {
        for p in &r.ouroboros {
            println!("    heap after {}: {}", p.phase, p.report.summary());
        }
    }
}

/// Writes `report` as JSON to `path` through a temporary file, so the file always holds a
/// whole report even if the process is killed while writing.
fn write_report(report: &bench::Report, path: &std::path::Path) -> gpu_heap::Result<()> {
    let text = serde_json::to_string_pretty(report).expect("serialisable");
    let tmp = path.with_extension("json.tmp");
    std::fs::write(&tmp, text)
        .and_then(|()| std::fs::rename(&tmp, path))
        .map_err(|source| {
            let _ = std::fs::remove_file(&tmp);
            gpu_heap::Error::Io {
                path: path.to_owned(),
                source,
            }
        })
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
) -> gpu_heap::Result<ExitCode> {
    let adapter = gpu.describe();
    println!(
        "adapter {} ({}, {})",
        adapter.name, adapter.backend, adapter.driver
    );
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
            // after it, so writing takes at most a tenth of the run. (Writing at most every
            // 2 s instead lost the quick cells before one that hung: on the H200, a run
            // killed during its 13th cell had one cell in its file.)
            if let Some(path) = &json {
                if last_write.is_none_or(|(end, took)| end.elapsed() >= 9 * took) {
                    let start = std::time::Instant::now();
                    if let Err(e) = write_report(report, path) {
                        eprintln!("{e}");
                    }
                    last_write = Some((std::time::Instant::now(), start.elapsed()));
                }
            }
        }
    })?;
    bar.finish_and_clear();
    println!("timer: {:?}", report.timer);
    println!(
        "{:<16} {:<10} {:>8} {:>11} {:>10} {:>10}  notes",
        "test", "strategy", "threads", "size", "malloc ms", "free ms"
    );
    for r in &report.results {
        println!("{}", bench_row(r));
    }
    if let Some(path) = &json {
        write_report(&report, path)?;
    }
    if let Some(path) = csv {
        bench::write_csv(&report, &path)?;
    }
    if let Some(path) = markdown {
        std::fs::write(&path, bench::comparison(&report))
            .map_err(|source| gpu_heap::Error::Io { path, source })?;
    }
    if let Some(dir) = plots {
        let files = bench::write_plots(&report, &dir)?;
        println!("{} plots in {}", files.len(), dir.display());
    }
    Ok(ExitCode::SUCCESS)
}
