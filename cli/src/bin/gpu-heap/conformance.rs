//! `gpu-heap conformance`: runs the conformance scenarios for each strategy, prints a row
//! per scenario and exits non-zero if any fails or the GPU hangs.

use std::path::PathBuf;
use std::process::ExitCode;

use gpu_heap::{AdapterDescription, Gpu, Strategy};
use gpu_heap_cli::conformance::{self, Options, Scenario, ScenarioResult};
use indicatif::{ProgressBar, ProgressStyle};

use crate::args::{parse_bytes, scenario_parser, AdapterArg, StrategiesArg, WatchdogArg};

#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    adapter: AdapterArg,
    #[command(flatten)]
    strategies: StrategiesArg,
    /// Scenarios to run, comma-separated (default: all).
    #[arg(long, value_parser = scenario_parser(), value_delimiter = ',')]
    scenario: Vec<Scenario>,
    /// Heap size, e.g. 512MiB or 8GiB.
    #[arg(long, default_value = "512MiB", value_parser = parse_bytes)]
    heap_size: u64,
    /// Page size in bytes of RW, RW-BM and CoRW, and tbuddy's leaf.
    #[arg(long, default_value_t = 256)]
    page_size: u32,
    /// RW_malloc's unit size in bytes.
    #[arg(long, default_value_t = 16)]
    unit_size: u32,
    /// Invocations per dispatch.
    #[arg(long, default_value_t = 16_384, value_parser = clap::value_parser!(u32).range(1..))]
    slots: u32,
    /// Workgroups of 64 invocations in the scale and round-trip scenarios.
    #[arg(long, default_value_t = 1024, value_parser = clap::value_parser!(u32).range(1..))]
    workgroups: u32,
    #[command(flatten)]
    watchdog: WatchdogArg,
    /// Write the results as JSON here (- for standard output, the text report then goes to
    /// standard error).
    #[arg(long)]
    json: Option<PathBuf>,
}

pub fn run(args: Args) -> gpu_heap_cli::Result<ExitCode> {
    let (gpu, adapter) = args.adapter.open_announced()?;
    let strategies = if args.strategies.strategy.is_empty() {
        Strategy::ALL.to_vec()
    } else {
        args.strategies.strategy
    };
    let options = Options {
        heap_size: args.heap_size,
        page_size: args.page_size,
        unit_size: args.unit_size,
        slots: args.slots,
        workgroups: args.workgroups,
        watchdog: args.watchdog.duration(),
        ..Options::default()
    };
    let scenarios = if args.scenario.is_empty() {
        Scenario::ALL.to_vec()
    } else {
        args.scenario
    };
    run_conformance(&gpu, adapter, &strategies, &scenarios, &options, args.json)
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
    adapter: AdapterDescription,
    strategies: &[Strategy],
    scenarios: &[Scenario],
    options: &Options,
    json: Option<PathBuf>,
) -> gpu_heap_cli::Result<ExitCode> {
    let total = (strategies.len() * scenarios.len()) as u64;
    let bar = ProgressBar::new(total).with_style(
        ProgressStyle::with_template("{bar:30} {pos}/{len} {msg}").expect("valid template"),
    );
    // Rows are printed as scenarios finish (a cold driver cache can make a whole run take
    // minutes); the bar, on a terminal only, stays below them.
    bar.suspend(|| {
        crate::say!(
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
    crate::say!("{passed} passed, {failed} failed");
    if hung {
        crate::say!("stopped early: the GPU is presumed hung (see the last problem above)");
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
        crate::args::write_json(&path, &report)?;
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
    crate::say!(
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
        crate::say!(
            "    utilisation: {:.2}% of the heap handed out as 16 B ({:.2}% of heap + metadata); \
             {:.2}% in one dispatch",
            u * 100.0,
            r.utilisation_with_meta.unwrap_or(0.0) * 100.0,
            r.burst_utilisation.unwrap_or(0.0) * 100.0
        );
    }
    for p in &r.problems {
        crate::say!("    {p}");
    }
    if !r.passed || r.utilisation.is_some() {
        for p in &r.ouroboros {
            crate::say!("    heap after {}: {}", p.phase, p.report.summary());
        }
    }
}
