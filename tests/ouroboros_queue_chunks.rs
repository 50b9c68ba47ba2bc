//! The virtualized Ouroboros queues keep a bounded number of queue chunks under churn.
//!
//! Every invocation holds 16 pages of 16 B and swaps them for new ones, dispatch after
//! dispatch: each class queue (or chunk-token log) fills and drains many queue chunks, which
//! go back to the pool and come out again as queue chunks. A chunk that comes back with
//! content its next use does not expect (a token log's removed tokens where empty words
//! should be) leaves positions that never finish: front stops, and the queue grows by a chunk
//! per chunk of traffic until the heap is gone. The conformance suite's scenarios are too
//! short to show that; this test counts the queue chunks after many dispatches.
//!
//! Queue chunks made from fresh memory are not emptied: memory the heap has not handed out
//! is zero, and a reset keeps it so. The second test writes ones over a whole heap, resets
//! it, and churns again: a queue chunk made from memory that still held the ones would take
//! them for items.

mod common;

use common::Kernel;
use gpu_heap::{Gpu, GpuHeap, HeapConfig, Strategy};

const INVOCATIONS: u32 = 4096;
const HELD: u32 = 16;

/// held[i * HELD + j]: invocation i's j-th page (HEAP_NULL at first), which holds the slot's
/// number and the dispatch's in its first two words while held. out[0]: mallocs that
/// returned NULL; out[1]: frees that failed; out[2]: pages that lost their pattern (handed
/// out twice); out[3]: the dispatch (its number, set by the host).
const KERNEL: &str = r#"
#include "alloc.wgsl"
@group(1) @binding(0) var<storage, read_write> held: array<u32>;
@group(1) @binding(1) var<storage, read_write> out: array<atomic<u32>>;
@compute @workgroup_size(64)
fn swap(@builtin(global_invocation_id) id: vec3<u32>) {
    for (var j = 0u; j < 16u; j++) {
        let slot = id.x * 16u + j;
        let old = held[slot];
        if (old != HEAP_NULL) {
            if (heap_load(old, 0u) != slot || heap_load(old, 1u) != atomicLoad(&out[3]) - 1u) {
                atomicAdd(&out[2], 1u);
            }
            free(old);
            if (heap_status != HEAP_OK) {
                atomicAdd(&out[1], 1u);
            }
        }
        let p = malloc(16u);
        if (p == HEAP_NULL) {
            atomicAdd(&out[0], 1u);
        } else {
            heap_store(p, 0u, slot);
            heap_store(p, 1u, atomicLoad(&out[3]));
        }
        held[slot] = p;
    }
}
"#;

/// Fills the heap with 4 KiB blocks of ones, one per invocation; counts them in out[0].
const FILL: &str = r#"
#include "alloc.wgsl"
@group(1) @binding(0) var<storage, read_write> out: array<atomic<u32>>;
@compute @workgroup_size(64)
fn fill() {
    let p = malloc(4096u);
    if (p != HEAP_NULL) {
        for (var w = 0u; w < 1024u; w++) {
            heap_store(p, w, 0xffffffffu);
        }
        atomicAdd(&out[0], 1u);
    }
}
"#;

/// A 2 MiB heap of `strategy`.
fn heap(gpu: &Gpu, strategy: Strategy) -> GpuHeap {
    GpuHeap::with_config(
        &gpu.device,
        &gpu.queue,
        HeapConfig::new(2 << 20)
            .strategy(strategy)
            .watchdog(common::WATCHDOG),
    )
    .unwrap()
}

/// Swaps on `heap` (of `strategy`) for `dispatches` dispatches; after each one past the
/// first `early`, its live queue chunks may exceed those after `early` by `slack` at most
/// (checked at once, so that a leaking queue fails before it runs the heap out). Live: not
/// the drained chunks a linked queue keeps behind its front, a trail that fills over the
/// queue's first front moves, which take more or fewer dispatches as the invocations
/// happen to run. No malloc or free may fail.
fn churn(gpu: &Gpu, heap: &GpuHeap, strategy: Strategy, early: u32, dispatches: u32, slack: u32) {
    let slots = (INVOCATIONS * HELD) as usize;
    let held = common::storage_from(gpu, "held", &vec![0; slots]);
    let out = common::storage(gpu, "out", 16);
    let kernel = Kernel::new(gpu, heap, KERNEL, "swap", &[common::RW, common::RW]);
    let mut first = 0;
    // Live and trailing queue chunks after each dispatch from `early` on, for the message.
    let mut history = Vec::new();
    for dispatch in 1..=dispatches {
        gpu.queue.write_buffer(&out, 12, &dispatch.to_le_bytes());
        kernel.run(gpu, heap, &[&held, &out], INVOCATIONS / 64);
        if dispatch < early {
            continue;
        }
        let report = heap.ouroboros_report().unwrap().unwrap();
        let linked = matches!(strategy, Strategy::OuroPVL | Strategy::OuroCVL);
        assert_eq!(
            report.trailing_queue_chunks.is_some(),
            linked,
            "{strategy:?}"
        );
        let live = report.queue_chunks - report.trailing_queue_chunks.unwrap_or(0);
        if dispatch == early {
            first = live;
        }
        history.push((live, report.trailing_queue_chunks.unwrap_or(0)));
        assert!(
            live <= first + slack,
            "{strategy:?}: {first} live queue chunks after {early} dispatches, {live} after \
             {dispatch} (live and trailing from dispatch {early} on: {history:?}); the books \
             then: {report:?}"
        );
    }
    println!(
        "{strategy:?}: live and trailing queue chunks from dispatch {early} on: {history:?}; \
         the books: {:?}",
        heap.ouroboros_report().unwrap().unwrap()
    );
    let failed = common::read_words(gpu, &out, 3);
    assert_eq!(
        failed,
        [0, 0, 0],
        "{strategy:?}: NULL mallocs, failed frees, pages handed out twice"
    );
}

const VIRTUALIZED: [Strategy; 4] = [
    Strategy::OuroPVA,
    Strategy::OuroPVL,
    Strategy::OuroCVA,
    Strategy::OuroCVL,
];

#[test]
fn virtualized_queues_keep_their_chunks_bounded_under_churn() {
    // A queue that loses a position per chunk of traffic grows by about one chunk per
    // dispatch until the heap is gone. On a CPU adapter (lavapipe) the queues hold 0-4 live
    // chunks throughout: twelve dispatches after the fourth, each moving tens of chunks of
    // items, and a slack of 4 tell a leak. On a GPU, OuroCVL's token log settles higher
    // and wanders there (BENCHMARKS.md, "The churn test on the GPU"): the test runs 2000
    // dispatches with a slack of a quarter of the heap, which a leak of one chunk every 30
    // dispatches exceeds. GPU_HEAP_CHURN_DISPATCHES and GPU_HEAP_CHURN_SLACK override both
    // (run with --nocapture for the counts).
    let gpu = common::gpu();
    let cpu = gpu.adapter.get_info().device_type == wgpu::DeviceType::Cpu;
    let dispatches = common::env_u32("GPU_HEAP_CHURN_DISPATCHES", if cpu { 16 } else { 2000 });
    let slack = common::env_u32("GPU_HEAP_CHURN_SLACK", if cpu { 4 } else { 64 });
    for strategy in VIRTUALIZED {
        churn(gpu, &heap(gpu, strategy), strategy, 4, dispatches, slack);
    }
}

#[test]
fn queue_chunks_after_a_reset_start_empty() {
    let gpu = common::gpu();
    for strategy in VIRTUALIZED {
        let heap = heap(gpu, strategy);
        let capacity = heap.layout().capacity_for(4096) as u32;
        let out = common::storage(gpu, "out", 4);
        let fill = Kernel::new(gpu, &heap, FILL, "fill", &[common::RW]);
        fill.run(gpu, &heap, &[&out], capacity.div_ceil(64));
        let filled = common::read_words(gpu, &out, 1)[0];
        assert!(
            filled >= capacity * 3 / 4,
            "{strategy:?}: {filled} of {capacity} blocks of ones"
        );
        heap.reset().unwrap();
        churn(gpu, &heap, strategy, 4, 8, 4);
    }
}
