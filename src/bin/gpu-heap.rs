//! The gpu-heap command line: `info`, `conformance` and `flatten`.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::{Parser, Subcommand};
use gpu_heap::conformance::{self, Options, Scenario, ScenarioResult};
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
        #[arg(long, value_parser = parse_strategy)]
        strategy: Vec<Strategy>,
        /// Scenarios to run (default: all), e.g. utilisation.
        #[arg(long, value_parser = parse_scenario)]
        scenario: Vec<Scenario>,
        /// Heap size, e.g. 512MiB or 8GiB.
        #[arg(long, default_value = "512MiB", value_parser = parse_bytes)]
        heap_size: u64,
        /// RW-BM page size in bytes.
        #[arg(long, default_value_t = 256)]
        page_size: u32,
        /// Invocations per dispatch.
        #[arg(long, default_value_t = 16_384)]
        slots: u32,
        /// Seconds one dispatch may take before it counts as hung.
        #[arg(long, default_value_t = 60)]
        watchdog_secs: u64,
        /// Write the results as JSON here.
        #[arg(long)]
        json: Option<PathBuf>,
    },
    /// Print a self-contained alloc.wgsl for WebGPU users outside Rust.
    Flatten {
        #[arg(long, value_parser = parse_strategy)]
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

/// Bytes with an optional binary suffix: 4096, 64KiB, 512MiB, 8GiB.
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
            slots,
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
                slots,
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
    slots: u32,
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
    let mut results = Vec::new();
    let mut hung = false;
    'outer: for &strategy in strategies {
        for &scenario in scenarios {
            bar.set_message(format!("{strategy} {}", scenario.name()));
            let r = conformance::run(gpu, strategy, scenario, options);
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
    for r in &results {
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
                "    utilisation: {:.2}% of the heap handed out as 16 B ({:.2}% of heap + metadata)",
                u * 100.0,
                r.utilisation_with_meta.unwrap_or(0.0) * 100.0
            );
        }
        for p in &r.problems {
            println!("    {p}");
        }
    }
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
            slots: options.slots,
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
