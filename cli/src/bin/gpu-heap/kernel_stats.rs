//! `gpu-heap kernel-stats`: the driver's statistics of the benchmark's kernels per strategy
//! (registers per invocation first), on Vulkan drivers with
//! VK_KHR_pipeline_executable_properties.

use std::path::PathBuf;
use std::process::ExitCode;

use gpu_heap::{HeapConfig, Strategy};

use crate::args::{parse_bytes, strategy_parser, AdapterArg};

#[derive(clap::Args)]
pub struct Args {
    /// Strategies, comma-separated (default: all).
    #[arg(long, value_parser = strategy_parser(), value_delimiter = ',')]
    strategy: Vec<Strategy>,
    /// The heap the kernels are composed for, as `bench` makes it.
    #[arg(long, default_value = "8GiB", value_parser = parse_bytes)]
    heap_size: u64,
    #[arg(long, default_value_t = 256)]
    page_size: u32,
    /// Kernels of the benchmark's kernel file, comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "bench_malloc,bench_free")]
    kernel: Vec<String>,
    /// Also write the statistics as JSON here (- for standard output, the text then goes
    /// to standard error).
    #[arg(long)]
    json: Option<PathBuf>,
    #[command(flatten)]
    adapter: AdapterArg,
}

#[derive(serde::Serialize)]
struct Row {
    strategy: &'static str,
    #[serde(flatten)]
    stats: gpu_heap_cli::kernel_stats::KernelStats,
}

pub fn run(args: Args) -> gpu_heap_cli::Result<ExitCode> {
    let (gpu, _) = args.adapter.open_announced()?;
    let strategies = if args.strategy.is_empty() {
        Strategy::ALL.to_vec()
    } else {
        args.strategy
    };
    let mut rows = Vec::new();
    for strategy in strategies {
        let config = HeapConfig::new(args.heap_size).strategy(strategy);
        let config = gpu_heap_cli::with_pages(config, args.page_size, 16);
        for stats in gpu_heap_cli::kernel_stats::bench_kernels(&gpu, &config, &args.kernel)? {
            let listed: Vec<String> = stats
                .statistics
                .iter()
                .map(|(name, value)| format!("{name} {value}"))
                .collect();
            crate::say!(
                "{:<10} {:<14} {}",
                strategy.name(),
                stats.kernel,
                listed.join("; ")
            );
            rows.push(Row {
                strategy: strategy.name(),
                stats,
            });
        }
    }
    if let Some(path) = args.json {
        crate::args::write_json(&path, &rows)?;
    }
    Ok(ExitCode::SUCCESS)
}
