//! `gpu-heap info`: prints the adapter, backend, driver, the limits and features the heap
//! depends on, the largest heap those limits allow, and what each strategy's heap of a
//! given size costs in metadata; `--json` writes the same as JSON.

use std::path::PathBuf;
use std::process::ExitCode;

use gpu_heap::{AdapterDescription, Gpu, HeapConfig, HeapLayout, Strategy};

use crate::args::{parse_bytes, AdapterArg};

#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    adapter: AdapterArg,
    /// Heap sizes to show each strategy's metadata for, comma-separated.
    #[arg(long, value_parser = parse_bytes, value_delimiter = ',', default_value = "16MiB,1GiB")]
    heap_size: Vec<u64>,
    /// Also write what is printed as JSON here (- for standard output, the text then goes
    /// to standard error).
    #[arg(long)]
    json: Option<PathBuf>,
}

/// What `info` reports.
#[derive(serde::Serialize)]
struct Info {
    adapter: AdapterDescription,
    device_type: String,
    /// Why the library refuses this adapter, if it does.
    unsupported: Option<String>,
    limits: Vec<(&'static str, u64)>,
    features: Vec<(&'static str, bool)>,
    largest_heap_bytes: u64,
    segment_bytes: u64,
    metadata: Vec<Metadata>,
}

/// One strategy's heap of one size, with default settings, as planned on this device.
#[derive(serde::Serialize)]
struct Metadata {
    heap_bytes: u64,
    strategy: &'static str,
    metadata_bytes: Option<u64>,
    max_alloc: Option<u32>,
    /// Why the heap cannot be planned here.
    error: Option<String>,
}

pub fn run(args: Args) -> gpu_heap_cli::Result<ExitCode> {
    let gpu = args.adapter.open()?;
    let info = gather(&gpu, &args.heap_size);
    print(&info);
    if let Some(path) = args.json {
        crate::args::write_json(&path, &info)?;
    }
    Ok(ExitCode::SUCCESS)
}

fn gather(gpu: &Gpu, sizes: &[u64]) -> Info {
    let limits = gpu.device.limits();
    // Planning a small heap is the library's own verdict on this adapter.
    let unsupported = match HeapLayout::for_device(&HeapConfig::new(1 << 20), &gpu.device) {
        Err(e @ gpu_heap::Error::UnsupportedAdapter { .. }) => Some(e.to_string()),
        _ => None,
    };
    let metadata = sizes
        .iter()
        .flat_map(|&size| Strategy::ALL.iter().map(move |&s| (size, s)))
        .map(|(size, strategy)| {
            let config = HeapConfig::new(size).strategy(strategy);
            let planned = HeapLayout::for_device(&config, &gpu.device);
            Metadata {
                heap_bytes: size,
                strategy: strategy.name(),
                metadata_bytes: planned.as_ref().ok().map(|l| l.metadata_bytes()),
                max_alloc: planned.as_ref().ok().map(|l| l.max_alloc),
                error: planned.err().map(|e| e.to_string()),
            }
        })
        .collect();
    Info {
        adapter: gpu.describe(),
        device_type: format!("{:?}", gpu.adapter.get_info().device_type),
        unsupported,
        limits: vec![
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
        ],
        features: [
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
        ]
        .into_iter()
        .map(|(name, f)| (name, gpu.adapter.features().contains(f)))
        .collect(),
        largest_heap_bytes: largest_heap(&limits),
        segment_bytes: segment_bytes(&limits),
        metadata,
    }
}

fn print(info: &Info) {
    let d = &info.adapter;
    crate::say!("adapter   {} ({})", d.name, info.device_type);
    crate::say!("backend   {}", d.backend);
    crate::say!("driver    {}", d.driver);
    match &info.unsupported {
        Some(why) => crate::say!("gpu-heap  {why}"),
        None => crate::say!("gpu-heap  supported"),
    }
    crate::say!("limits");
    for (name, value) in &info.limits {
        crate::say!("  {name:<44} {value}");
    }
    crate::say!("features");
    for (name, have) in &info.features {
        crate::say!("  {name:<44} {}", if *have { "yes" } else { "no" });
    }
    crate::say!(
        "largest heap  {} GiB ({} segments of {} MiB with binding arrays)",
        info.largest_heap_bytes >> 30,
        info.largest_heap_bytes / info.segment_bytes,
        info.segment_bytes >> 20
    );
    crate::say!("metadata (default settings)");
    for m in &info.metadata {
        let size = m.heap_bytes >> 20;
        match (&m.error, m.metadata_bytes, m.max_alloc) {
            (None, Some(bytes), Some(max)) => crate::say!(
                "  {size:>6} MiB  {:<10} {bytes:>12} bytes {:>7.3} %  largest malloc {max} bytes",
                m.strategy,
                100.0 * bytes as f64 / m.heap_bytes as f64,
            ),
            (error, ..) => crate::say!(
                "  {size:>6} MiB  {:<10} {}",
                m.strategy,
                error.as_deref().unwrap_or("not planned")
            ),
        }
    }
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
