//! A heap that grows with its output, in the spirit of the join example of NVIDIA's
//! "Introducing low-level GPU virtual memory management" (a join's output size is not known
//! until it runs, so either you allocate for the worst case or you grow).
//!
//! The probe kernel (grow_join.wgsl) writes each row's matches into a heap allocation of
//! exactly that size. The heap starts at 1 or 2 MiB and may grow to 64 MiB; rows whose malloc
//! fails for lack of memory stay undone and add what they asked for to a demand counter.
//! Between rounds, `GpuHeap::maintain` reads the device's pressure flag and grows the
//! committed memory by that demand plus 1/8 (new segments only: nothing is copied, handles
//! written in earlier rounds stay valid), and the kernel runs again for the undone rows. At the end a verification kernel checks every pair, and the committed
//! memory is compared with the output size and with the worst-case estimate.
//!
//! cargo run --release --example grow_join [-- <strategy>]   (rw-malloc, the default, or
//! bump: the page-based strategies would give every row a whole page)

use std::time::Duration;

use gpu_heap::{Gpu, GpuHeap, GrowthPolicy, HeapConfig, RandomWalkParams, Strategy};

const ROWS: u32 = 1 << 17;
/// Most matches a probe row can have (matches_of in the shader).
const MAX_MATCHES: u64 = 511;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let strategy: Strategy = match std::env::args().nth(1) {
        Some(name) => name.parse()?,
        None => Strategy::RwMalloc,
    };
    let gpu = Gpu::open(None)?;
    let adapter = gpu.describe();
    println!("adapter: {} ({})", adapter.name, adapter.driver);

    // 1 MiB asked for, 64 MiB reserved. The stride follows the initial size unless the
    // device cannot bind that many segments (lavapipe: 2 MiB segments, so 2 MiB committed
    // at first). Pages of 4 KiB for the page-based strategies: a row's output fits one.
    let config = HeapConfig::new(1 << 20)
        .max_size(64 << 20)
        .strategy(strategy)
        .random_walk(RandomWalkParams {
            page_size: 4096,
            ..Default::default()
        });
    let mut heap = GpuHeap::with_config(&gpu.device, &gpu.queue, config)?;
    let module = heap.create_shader_module("grow_join.wgsl", include_str!("grow_join.wgsl"))?;

    let device = &gpu.device;
    let rows = gpu_heap::storage_buffer(device, "rows", ROWS as u64 * 16)?;
    let counters = gpu_heap::storage_buffer(device, "counters", 16)?;
    let rw = wgpu::BufferBindingType::Storage { read_only: false };
    let layout = gpu_heap::buffer_group_layout(device, "grow_join", &[rw, rw]);
    let group = gpu_heap::buffer_group(device, "grow_join", &layout, &[&rows, &counters]);
    // Built once: the heap's bind group layout never changes, however much it grows.
    let probe = heap.compute_pipeline("probe", &module, "probe", &[(1, &layout)])?;
    let verify = heap.compute_pipeline("verify", &module, "verify", &[(1, &layout)])?;

    let timeout = Duration::from_secs(60);
    let run = |heap: &GpuHeap, pipeline: &wgpu::ComputePipeline, what: &str| {
        gpu.queue.write_buffer(&counters, 0, &[0u8; 16]);
        let mut encoder = device.create_command_encoder(&Default::default());
        {
            let mut pass = encoder.begin_compute_pass(&Default::default());
            pass.set_pipeline(pipeline);
            // Fetched at every dispatch: grow() and maintain() replace the bind group.
            pass.set_bind_group(heap.bind_group_index(), heap.bind_group(), &[]);
            pass.set_bind_group(1, &group, &[]);
            pass.dispatch_workgroups(ROWS.div_ceil(64), 1, 1);
        }
        gpu_heap::submit_and_wait(device, &gpu.queue, encoder, timeout, what)?;
        let bytes = gpu_heap::read_buffer(device, &gpu.queue, &counters, 0, 16, timeout)?;
        Ok::<Vec<u32>, gpu_heap::Error>(bytemuck::pod_collect_to_vec(&bytes))
    };

    // Grow by the recorded demand (no multiplicative factor); the watermark is off, so
    // only failed mallocs trigger growth.
    let policy = GrowthPolicy::default().factor(1.0).low_watermark(0.0);
    heap.maintain(&policy)?;
    let mut round = 0;
    loop {
        round += 1;
        let c = run(&heap, &probe, "probe")?;
        let (failed, demand) = (c[0], c[3] as u64);
        let report = heap.maintain(&policy.clone().at_least(demand + demand / 8))?;
        println!(
            "round {round}: {failed} rows out of memory asking for {} KiB; committed {} -> {} KiB",
            demand >> 10,
            report.committed_before >> 10,
            report.committed_after >> 10
        );
        if failed == 0 {
            break;
        }
        if !report.grew() {
            return Err(format!("out of memory at the heap's maximum: {report:?}").into());
        }
        if round > 16 {
            return Err("no progress after 16 rounds".into());
        }
    }

    let counters = run(&heap, &verify, "verify")?;
    let (wrong, pairs) = (counters[1], counters[2] as u64);
    let stats = heap.stats()?;
    let output = pairs * 8;
    let committed = heap.committed_bytes();
    let worst = ROWS as u64 * MAX_MATCHES * 8;
    println!(
        "{pairs} pairs ({} KiB of output), {wrong} rows wrong",
        output >> 10
    );
    println!(
        "live: {} allocations, {} KiB granted; committed {} KiB ({:.2}x the output); \
         worst-case estimate {} KiB ({:.1}x)",
        stats.allocations_live,
        stats.bytes_live >> 10,
        committed >> 10,
        committed as f64 / output as f64,
        worst >> 10,
        worst as f64 / output as f64
    );
    if wrong != 0 {
        return Err(format!("{wrong} rows with wrong output").into());
    }
    // Growing by the demand plus 1/8 ends within about 1/8 of what is live, plus a
    // segment's rounding; allow half the output more, plus two segments.
    let segment = heap.layout().segment_sizes[0];
    if committed > output + output / 2 + 2 * segment || committed < output {
        return Err(format!("committed {committed} bytes for {output} bytes of output").into());
    }
    if committed * 8 > worst {
        return Err("committed memory is not far below the worst case".into());
    }
    Ok(())
}
