//! `gpu-heap info`: prints the adapter, backend, driver, the limits and features the heap
//! depends on, the largest heap those limits allow, and what each strategy's heap of a
//! given size costs in metadata.

use std::process::ExitCode;

use gpu_heap::{Gpu, HeapConfig, HeapLayout, Strategy};

use crate::args::{parse_bytes, AdapterArg};

#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    adapter: AdapterArg,
    /// Heap sizes to show each strategy's metadata for, comma-separated.
    #[arg(long, value_parser = parse_bytes, value_delimiter = ',', default_value = "16MiB,1GiB")]
    heap_size: Vec<u64>,
}

pub fn run(args: Args) -> gpu_heap_cli::Result<ExitCode> {
    let gpu = args.adapter.open()?;
    info(&gpu);
    metadata(&gpu, &args.heap_size);
    Ok(ExitCode::SUCCESS)
}

/// Per strategy and heap size (default settings): the metadata buffer, its share of the
/// heap, and the largest malloc, as planned on this device.
fn metadata(gpu: &Gpu, sizes: &[u64]) {
    println!("metadata (default settings)");
    for &size in sizes {
        for &strategy in Strategy::ALL {
            let config = HeapConfig::new(size).strategy(strategy);
            match HeapLayout::for_device(&config, &gpu.device) {
                Ok(l) => println!(
                    "  {:>6} MiB  {:<10} {:>12} bytes {:>7.3} %  largest malloc {} bytes",
                    size >> 20,
                    strategy.name(),
                    l.metadata_bytes(),
                    100.0 * l.metadata_bytes() as f64 / size as f64,
                    l.max_alloc
                ),
                Err(e) => println!("  {:>6} MiB  {:<10} {e}", size >> 20, strategy.name()),
            }
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
    // Planning a small heap is the library's own verdict on this adapter.
    match gpu_heap::HeapLayout::for_device(&gpu_heap::HeapConfig::new(1 << 20), &gpu.device) {
        Err(e @ gpu_heap::Error::UnsupportedAdapter { .. }) => println!("gpu-heap  {e}"),
        _ => println!("gpu-heap  supported"),
    }
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
