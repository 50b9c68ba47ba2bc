//! The linked-chunk queue (VLQ) recovers when its back pointer falls behind front.
//!
//! On a GPU, back's moves race: a front move drags back along with a CAS that expects back
//! at the chunk front leaves, and a drag delayed past the next front move leaves back behind
//! front for good. Old then frees back's chunk and every enqueue fails (seen on the H200 as
//! P-VL frees failing with out of memory by the hundred thousand). lavapipe does not delay
//! invocations that way, so this test puts back where such a late drag leaves it (at the
//! oldest retained chunk, behind front) and checks that the queue keeps working for more
//! than GPU_HEAP_OURO_VL_TRAIL chunks of traffic, after which that chunk has been freed.

mod common;

use common::Kernel;
use gpu_heap::{GpuHeap, HeapConfig, Strategy};

const KERNEL: &str = r#"
#include "alloc.wgsl"

// [0] failed enqueues, [1] dequeues that found no item, [2] 1 when done,
// [3] 1 if the set-up left back behind front
@group(1) @binding(0) var<storage, read_write> out: array<atomic<u32>>;

// Items are pages of the 16-byte class (dequeuers take nothing else: cq_holds_item): the
// pages of the heap's last chunk, marked as that class's and never handed out here.
fn page(i: u32) -> u32 {
    let first = (GPU_HEAP_OURO_CHUNKS - 1u) << GPU_HEAP_OURO_CHUNK_SHIFT;
    return gpu_heap_handle_of(first + (i % gpu_heap_ouro_batch(0u)) * GPU_HEAP_OURO_MIN_PAGE_UNITS);
}

// One chunk's worth of items in, then out, on the 16-byte class's queue.
fn lap() {
    for (var i = 0u; i < GPU_HEAP_OURO_QC_ITEMS; i++) {
        if (!gpu_heap_cq_enqueue(0u, page(i))) {
            atomicAdd(&out[0], 1u);
        }
    }
    for (var i = 0u; i < GPU_HEAP_OURO_QC_ITEMS; i++) {
        if (gpu_heap_cq_dequeue(0u) == GPU_HEAP_OQ_EMPTY) {
            atomicAdd(&out[1], 1u);
        }
    }
}

@compute @workgroup_size(1)
fn lagging_back() {
    let d = gpu_heap_ouro_queue_meta(0u);
    atomicStore(&gpu_heap_meta[GPU_HEAP_OURO_CHUNK_INFO + GPU_HEAP_OURO_CHUNKS - 1u], 1u);
    for (var r = 0u; r < 4u; r++) {
        lap();
    }
    // A late drag: back at the oldest chunk still kept, behind front.
    let old = atomicLoad(&gpu_heap_meta[d + 7u]);
    atomicStore(&gpu_heap_meta[d + 6u], old);
    let fs = atomicLoad(&gpu_heap_meta[GPU_HEAP_OURO_QC_START + atomicLoad(&gpu_heap_meta[d + 5u]) - 1u]);
    let bs = atomicLoad(&gpu_heap_meta[GPU_HEAP_OURO_QC_START + old - 1u]);
    if (bitcast<i32>(fs - bs) > 0) {
        atomicStore(&out[3], 1u);
    }
    for (var r = 0u; r < GPU_HEAP_OURO_VL_TRAIL + 4u; r++) {
        lap();
    }
    atomicStore(&out[2], 1u);
}

// [4] enqueues that failed while the heap had no chunk, [5] dequeues of the items put then
// that found none.
@compute @workgroup_size(1)
fn starved() {
    atomicStore(&gpu_heap_meta[GPU_HEAP_OURO_CHUNK_INFO + GPU_HEAP_OURO_CHUNKS - 1u], 1u);
    lap();
    // The heap runs out of chunks (the pool is still empty: no queue chunk was freed yet),
    // while the queue needs two more chunks' worth.
    let fresh = atomicLoad(&gpu_heap_meta[GPU_HEAP_OURO_FRESH]);
    atomicStore(&gpu_heap_meta[GPU_HEAP_OURO_FRESH], GPU_HEAP_OURO_CHUNKS);
    var put = 0u;
    for (var i = 0u; i < 3u * GPU_HEAP_OURO_QC_ITEMS; i++) {
        if (gpu_heap_cq_enqueue(0u, page(i))) {
            put += 1u;
        } else {
            atomicAdd(&out[4], 1u);
        }
    }
    atomicStore(&gpu_heap_meta[GPU_HEAP_OURO_FRESH], fresh);
    for (var i = 0u; i < put; i++) {
        if (gpu_heap_cq_dequeue(0u) == GPU_HEAP_OQ_EMPTY) {
            atomicAdd(&out[5], 1u);
        }
    }
    for (var r = 0u; r < GPU_HEAP_OURO_VL_TRAIL + 4u; r++) {
        lap();
    }
    atomicStore(&out[2], 1u);
}
"#;

/// Runs `entry` of KERNEL in one invocation on an 8 MiB `ouro-p-vl` heap (1024 chunks:
/// GPU_HEAP_OURO_VL_TRAIL is 8); returns the heap and the kernel's six counters.
fn run_one(entry: &str) -> (GpuHeap, Vec<u32>) {
    let gpu = common::gpu();
    let heap = GpuHeap::with_config(
        &gpu.device,
        &gpu.queue,
        HeapConfig::new(8 << 20)
            .strategy(Strategy::OuroPVL)
            .watchdog(common::WATCHDOG),
    )
    .unwrap();
    let out = common::storage(gpu, "out", 24);
    Kernel::new(gpu, &heap, KERNEL, entry, &[common::RW]).run(gpu, &heap, &[&out], 1);
    let t = common::read_words(gpu, &out, 6);
    assert_eq!(t[2], 1, "the kernel ran to its end");
    (heap, t)
}

#[test]
fn ouro_p_vl_back_behind_front_recovers() {
    let (_, t) = run_one("lagging_back");
    assert_eq!(t[3], 1, "the set-up left back behind front");
    assert_eq!(t[0], 0, "failed enqueues");
    assert_eq!(t[1], 0, "dequeues without an item");
}

/// Enqueues that find no chunk for the queue (the heap is full) leave their positions void:
/// once chunks are back, the queue keeps working, its front passes every finished chunk, and
/// it keeps no more chunks than its trail.
#[test]
fn ouro_p_vl_starved_queue_recovers() {
    let (heap, t) = run_one("starved");
    assert!(t[4] > 0, "no enqueue found the heap without chunks");
    assert_eq!(
        t[5], 0,
        "dequeues of the items put while starved that found none"
    );
    assert_eq!(t[0], 0, "failed enqueues afterwards");
    assert_eq!(t[1], 0, "dequeues without an item afterwards");
    let report = heap.ouroboros_report().unwrap().unwrap();
    assert_eq!(report.stalled_queue_chunks, Some(0), "{}", report.summary());
    assert_eq!(
        report.unreachable_queue_chunks,
        Some(0),
        "{}",
        report.summary()
    );
    // 1024 chunks: GPU_HEAP_OURO_VL_TRAIL is 8; front's and back's chunks and one linked ahead.
    assert!(report.queue_chunks <= 8 + 3, "{}", report.summary());
}
