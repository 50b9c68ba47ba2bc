//! `gpu-heap flatten`: prints a self-contained alloc.wgsl for WebGPU users outside Rust,
//! planned for WebGPU's default limits or for one adapter's.

use std::process::ExitCode;

use gpu_heap::{Gpu, HeapConfig, Strategy};

use crate::args::{parse_bytes, strategy_parser, AdapterArg};

#[derive(clap::Args)]
#[command(mut_arg("adapter", |a| {
    a.help("Plan for this adapter's limits and features instead of WebGPU's defaults (the output is still for WebGPU)")
}))]
pub struct Args {
    #[arg(long, value_parser = strategy_parser(), value_delimiter = ',')]
    strategy: Strategy,
    #[arg(long, default_value = "64MiB", value_parser = parse_bytes)]
    heap_size: u64,
    #[arg(long, default_value_t = 256)]
    page_size: u32,
    /// The bind group index of the heap's bindings (the user's pipelines put theirs in the
    /// other groups).
    #[arg(long, default_value_t = 0)]
    bind_group: u32,
    /// Plan for a device with WebGPU's `subgroups` feature (without --adapter): the
    /// strategies that can use subgroup operations do, and the module enables them.
    #[arg(long, conflicts_with = "adapter")]
    subgroups: bool,
    /// Also write the heap's manifest here as JSON: buffers, bindings, the init pass,
    /// the statistics words and the WGSL API.
    #[arg(long)]
    manifest: Option<std::path::PathBuf>,
    #[command(flatten)]
    adapter: AdapterArg,
}

pub fn run(args: Args) -> gpu_heap_cli::Result<ExitCode> {
    let config = HeapConfig::new(args.heap_size)
        .strategy(args.strategy)
        .bind_group_index(args.bind_group);
    let config = gpu_heap_cli::with_pages(config, args.page_size, 16);
    let (limits, features) = match args.adapter.adapter {
        Some(name) => {
            let gpu = Gpu::open(Some(&name))?;
            (gpu.device.limits(), gpu.device.features())
        }
        None if args.subgroups => (wgpu::Limits::default(), wgpu::Features::SUBGROUP),
        None => (wgpu::Limits::default(), wgpu::Features::empty()),
    };
    if let Some(path) = &args.manifest {
        crate::args::write_json(path, &gpu_heap::manifest(&config, &limits, features)?)?;
    }
    let text = gpu_heap::flatten(&config, &limits, features)?;
    // A reader that stops early (`| head`) is not an error.
    match std::io::Write::write_all(&mut std::io::stdout().lock(), text.as_bytes()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
            return Err(gpu_heap_cli::Error::Io {
                path: "standard output".into(),
                source: e,
            })
        }
        _ => {}
    }
    Ok(ExitCode::SUCCESS)
}
