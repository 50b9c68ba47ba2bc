//! Ouroboros under mixed traffic: in one dispatch, every invocation repeatedly mallocs,
//! writes a pattern over its block, verifies it and frees it, so enqueues and dequeues of
//! the same queues (and, for the virtualized variants, queue chunks being placed and
//! returned) race each other. A block handed to two invocations at once shows up as a
//! pattern mismatch. Afterwards nothing may be live and no call may have failed.

mod common;

use common::Kernel;
use gpu_heap::{GpuHeap, HeapConfig, Strategy};

const KERNEL: &str = r#"
#include "alloc.wgsl"

// [0] successful mallocs, [1] NULLs, [2] corrupted blocks, [3] frees not OK
@group(1) @binding(0) var<storage, read_write> tally: array<atomic<u32>>;

const ROUNDS: u32 = 8u;

@compute @workgroup_size(64)
fn mixed(@builtin(global_invocation_id) id: vec3<u32>) {
    var rng = gpu_heap_hash(id.x * 0x9e3779b9u + 1u) | 1u;
    for (var round = 0u; round < ROUNDS; round++) {
        rng = gpu_heap_rng_next(rng);
        // Mostly small sizes, some up to 4 KiB: several classes share the dispatch.
        let size = 16u << ((rng >> 4u) % 9u);
        let p = malloc(size);
        if (p == 0u) {
            atomicAdd(&tally[1], 1u);
            continue;
        }
        atomicAdd(&tally[0], 1u);
        let words = min(size / 4u, 64u);
        let tag = id.x * 977u + round;
        for (var k = 0u; k < words; k++) {
            heap_store(p, k * (size / 4u / words), gpu_heap_hash(tag ^ k));
        }
        var bad = false;
        for (var k = 0u; k < words; k++) {
            if (heap_load(p, k * (size / 4u / words)) != gpu_heap_hash(tag ^ k)) {
                bad = true;
            }
        }
        if (bad) {
            atomicAdd(&tally[2], 1u);
        }
        free(p);
        if (heap_status != HEAP_OK) {
            atomicAdd(&tally[3], 1u);
        }
    }
}
"#;

fn check(strategy: Strategy) {
    let gpu = common::gpu();
    let (device, queue) = (&gpu.device, &gpu.queue);
    let heap = GpuHeap::with_config(
        device,
        queue,
        HeapConfig::new(64 << 20)
            .strategy(strategy)
            .max_segment_size(16 << 20)
            .watchdog(common::WATCHDOG),
    )
    .unwrap();
    let tally = common::storage(gpu, "tally", 16);
    let kernel = Kernel::new(gpu, &heap, KERNEL, "mixed", &[common::RW]);
    let threads = 32_768u32;
    for _ in 0..2 {
        queue.write_buffer(&tally, 0, &[0; 16]);
        kernel.run(gpu, &heap, &[&tally], threads / 64);
        let t = common::read_words(gpu, &tally, 4);
        let stats = heap.stats().unwrap();
        eprintln!("{strategy}: tally {t:?}, {stats:?}");
        let report = audit(&heap);
        assert_eq!(t[0] + t[1], threads * 8, "every call accounted for");
        assert_eq!(t[2], 0, "blocks handed to two invocations at once");
        assert_eq!(t[3], 0, "frees not OK");
        assert_eq!((stats.allocations_live, stats.bytes_live), (0, 0));
        assert_eq!(t[1], 0, "NULLs from malloc");
        assert_eq!(stats.failures, Default::default());
        assert_eq!(
            report.unaccounted_units().unwrap_or(0),
            0,
            "pages lost track of"
        );
        assert_eq!(
            report.unreachable_queue_chunks.unwrap_or(0),
            0,
            "queue chunks lost"
        );
    }
}

/// Where the heap's chunks are; printed before any assertion so that a failure on a GPU
/// shows where the memory went.
fn audit(heap: &GpuHeap) -> gpu_heap::OuroborosReport {
    let report = heap.ouroboros_report().unwrap().expect("an Ouroboros heap");
    eprintln!("{}", report.summary());
    report
}

#[test]
fn ouro_c_s() {
    check(Strategy::OuroCS);
}

#[test]
fn ouro_c_va() {
    check(Strategy::OuroCVA);
}

#[test]
fn ouro_c_vl() {
    check(Strategy::OuroCVL);
}

const REUSE_KERNEL: &str = r#"
#include "alloc.wgsl"

struct Params {
    n: u32,
    size: u32,
    free_them: u32,
    pad: u32,
}
@group(1) @binding(0) var<storage, read_write> handles: array<u32>;
@group(1) @binding(1) var<storage, read_write> ok: array<atomic<u32>>;
@group(1) @binding(2) var<uniform> params: Params;

@compute @workgroup_size(64)
fn pass_(@builtin(global_invocation_id) id: vec3<u32>) {
    if (id.x >= params.n) {
        return;
    }
    if (params.free_them == 1u) {
        free(handles[id.x]);
        handles[id.x] = 0u;
        return;
    }
    let p = malloc(params.size);
    handles[id.x] = p;
    if (p != 0u) {
        atomicAdd(&ok[0], 1u);
    }
}
"#;

/// The chunk-based variants return chunks whose pages are all free to the chunk pool, so a
/// heap filled with 16-byte pages and emptied again can be filled with pages of 8 KiB.
#[test]
fn ouro_c_s_returns_empty_chunks_to_the_pool() {
    returns_empty_chunks_to_the_pool(Strategy::OuroCS);
}

/// The same on virtualized token queues, whose queue chunks come from the heap: both fills
/// get every chunk but the queue reserve.
#[test]
fn ouro_c_va_returns_empty_chunks_to_the_pool() {
    returns_empty_chunks_to_the_pool(Strategy::OuroCVA);
}

#[test]
fn ouro_c_vl_returns_empty_chunks_to_the_pool() {
    returns_empty_chunks_to_the_pool(Strategy::OuroCVL);
}

fn returns_empty_chunks_to_the_pool(strategy: Strategy) {
    use wgpu::util::DeviceExt;
    let gpu = common::gpu();
    let (device, queue) = (&gpu.device, &gpu.queue);
    let bytes = 1u32 << 20;
    let heap = GpuHeap::with_config(
        device,
        queue,
        HeapConfig::new(bytes as u64).strategy(strategy),
    )
    .unwrap();
    let n_max = bytes / 16;
    let handles = common::storage(gpu, "handles", n_max as u64 * 4);
    let ok = common::storage(gpu, "ok", 16);
    let kernel = Kernel::new(
        gpu,
        &heap,
        REUSE_KERNEL,
        "pass_",
        &[common::RW, common::RW, wgpu::BufferBindingType::Uniform],
    );
    let run = |n: u32, size: u32, free_them: u32| -> u32 {
        let params = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: None,
            contents: bytemuck::cast_slice(&[n, size, free_them, 0]),
            usage: wgpu::BufferUsages::UNIFORM,
        });
        queue.write_buffer(&ok, 0, &[0; 16]);
        kernel.run(gpu, &heap, &[&handles, &ok, &params], n.div_ceil(64));
        common::read_words(gpu, &ok, 1)[0]
    };
    let chunks = bytes / 8192;
    // Every chunk but the queue reserve of virtualized token queues (capacity_for); one
    // dispatch of every malloc at once may get up to two chunks less, where the queue
    // outgrows the reserve for a moment.
    let layout = heap.layout();
    let (small_cap, large_cap) = (
        layout.capacity_for(16) as u32,
        layout.capacity_for(8192) as u32,
    );
    let slack = if strategy == Strategy::OuroCS { 0 } else { 2 };
    let small = run(n_max, 16, 0);
    eprintln!("{:?}", heap.stats().unwrap());
    audit(&heap);
    assert!(
        small >= small_cap - slack * 512 && small <= small_cap,
        "16-byte fill: {small} of a capacity of {small_cap}"
    );
    run(n_max, 16, 1);
    let stats = heap.stats().unwrap();
    assert_eq!(stats.allocations_live, 0);
    audit(&heap);
    let large = run(chunks, 8192, 0);
    eprintln!("{:?}", heap.stats().unwrap());
    audit(&heap);
    assert!(
        large >= large_cap - slack && large <= large_cap,
        "8 KiB fill after the 16-byte pages were freed: {large} of a capacity of {large_cap}"
    );
    run(chunks, 8192, 1);
    let stats = heap.stats().unwrap();
    assert_eq!(stats.allocations_live, 0);
    assert_eq!(stats.failures.contention, 0);
    assert_eq!(stats.failures.invalid_free, 0);
}

#[test]
fn ouro_p_s() {
    check(Strategy::OuroPS);
}

#[test]
fn ouro_p_va() {
    check(Strategy::OuroPVA);
}

#[test]
fn ouro_p_vl() {
    check(Strategy::OuroPVL);
}
