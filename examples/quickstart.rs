//! The smallest complete program: a compute shader that includes alloc.wgsl, allocates
//! per-invocation data, uses it and frees it; the host checks the results and prints the
//! heap's statistics.
//!
//! cargo run --release --example quickstart

use gpu_heap::{Gpu, GpuHeap};

const INVOCATIONS: u32 = 100_000;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // 1. A device with what gpu-heap can use (the default adapter; lavapipe without a GPU).
    let gpu = Gpu::open(None)?;
    let adapter = gpu.describe();
    println!(
        "adapter: {} ({}, {})",
        adapter.name, adapter.backend, adapter.driver
    );

    // 2. A 64 MiB heap with the default strategy (ualloc: every size from 1 byte), its
    //    bindings at @group(0).
    let heap = GpuHeap::new(&gpu.device, &gpu.queue, 64 << 20)?;

    // 3. The user's shader: `#include "alloc.wgsl"` resolves against the heap.
    let module = heap.create_shader_module("quickstart.wgsl", include_str!("quickstart.wgsl"))?;

    // 4. The user's own bindings at @group(1): one output word per invocation.
    let size = INVOCATIONS as u64 * 4;
    let sums = gpu.device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("sums"),
        size,
        usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
        mapped_at_creation: false,
    });
    let rw = wgpu::BufferBindingType::Storage { read_only: false };
    let layout = gpu_heap::buffer_group_layout(&gpu.device, "quickstart", &[rw]);
    let group = gpu_heap::buffer_group(&gpu.device, "quickstart", &layout, &[&sums]);
    let pipeline = heap.compute_pipeline("quickstart", &module, "main", &[(1, &layout)])?;

    // 5. Compile it now: some drivers (lavapipe) compile on the first dispatch, which would
    //    count against that dispatch's watchdog. Then dispatch with the heap's bind group at
    //    its index, under a watchdog.
    let timeout = std::time::Duration::from_secs(60);
    heap.warm_up(
        &pipeline,
        &[(1, &group)],
        std::time::Duration::from_secs(600),
    )?;
    let mut encoder = gpu.device.create_command_encoder(&Default::default());
    {
        let mut pass = encoder.begin_compute_pass(&Default::default());
        pass.set_pipeline(&pipeline);
        pass.set_bind_group(heap.bind_group_index(), heap.bind_group(), &[]);
        pass.set_bind_group(1, &group, &[]);
        pass.dispatch_workgroups(INVOCATIONS.div_ceil(64), 1, 1);
    }
    gpu_heap::submit_and_wait(&gpu.device, &gpu.queue, encoder, timeout, "quickstart")?;

    // 6. Check every sum, then read the heap's statistics.
    let bytes = gpu_heap::read_buffer(&gpu.device, &gpu.queue, &sums, 0, size, timeout)?;
    let got: Vec<u32> = bytemuck::pod_collect_to_vec(&bytes);
    let wrong = (0..INVOCATIONS)
        .filter(|&i| {
            let len = i % 50 + 1;
            got[i as usize] != (0..len).map(|k| i + k).sum::<u32>()
        })
        .count();
    let stats = heap.stats()?;
    println!("{INVOCATIONS} invocations, {wrong} wrong sums");
    println!("{stats:#?}");
    if wrong > 0 || stats.allocations_live != 0 {
        return Err(format!(
            "{wrong} wrong sums, {} allocations leaked",
            stats.allocations_live
        )
        .into());
    }
    Ok(())
}
