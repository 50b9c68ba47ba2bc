//! The virtualized Ouroboros queues keep a bounded number of queue chunks under churn.
//!
//! Every invocation holds 16 pages of 16 B and swaps them for new ones, dispatch after
//! dispatch: each class queue (or chunk-token log) fills and drains many queue chunks, which
//! go back to the pool and come out again as queue chunks. A chunk that comes back with
//! content its next use does not expect (a token log's removed tokens where empty words
//! should be) leaves positions that never finish: front stops, and the queue grows by a chunk
//! per chunk of traffic until the heap is gone. The conformance suite's scenarios are too
//! short to show that; this test counts the queue chunks after many dispatches.

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

/// Swaps on a 2 MiB heap of `strategy` for `dispatches` dispatches; after each one past
/// the first `early`, its queue chunks may exceed those after `early` by `slack` at most
/// (checked at once, so that a leaking queue fails before it runs the heap out). No malloc
/// or free may fail.
fn churn(strategy: Strategy, early: u32, dispatches: u32, slack: u32) {
    let gpu = Gpu::open(None).expect("a GPU adapter (install Mesa's lavapipe without a GPU)");
    let heap = GpuHeap::with_config(
        &gpu.device,
        &gpu.queue,
        HeapConfig::new(2 << 20)
            .strategy(strategy)
            .watchdog(common::WATCHDOG),
    )
    .unwrap();
    let slots = (INVOCATIONS * HELD) as usize;
    let held = common::storage_from(&gpu, "held", &vec![0; slots]);
    let out = common::storage(&gpu, "out", 16);
    let kernel = Kernel::new(&gpu, &heap, KERNEL, "swap", &[common::RW, common::RW]);
    let mut first = 0;
    for dispatch in 1..=dispatches {
        gpu.queue.write_buffer(&out, 12, &dispatch.to_le_bytes());
        kernel.run(&gpu, &heap, &[&held, &out], INVOCATIONS / 64);
        if dispatch < early {
            continue;
        }
        let report = heap.ouroboros_report().unwrap().unwrap();
        if dispatch == early {
            first = report.queue_chunks;
        }
        assert!(
            report.queue_chunks <= first + slack,
            "{strategy:?}: {first} queue chunks after {early} dispatches, {} after {dispatch}",
            report.queue_chunks
        );
    }
    let failed = common::read_words(&gpu, &out, 3);
    assert_eq!(
        failed,
        [0, 0, 0],
        "{strategy:?}: NULL mallocs, failed frees, pages handed out twice"
    );
}

#[test]
fn virtualized_queues_keep_their_chunks_bounded_under_churn() {
    // Twelve dispatches after the fourth move tens of chunks of items through each queue;
    // a queue that loses a position per chunk grows by about one chunk per dispatch.
    for strategy in [
        Strategy::OuroPVA,
        Strategy::OuroPVL,
        Strategy::OuroCVA,
        Strategy::OuroCVL,
    ] {
        churn(strategy, 4, 16, 4);
    }
}
