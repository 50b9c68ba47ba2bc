//! The linked-chunk queue (VLQ) recovers when its back pointer falls behind front.
//!
//! On a GPU, back's moves race: a front move drags back along with a CAS that expects back
//! at the chunk front leaves, and a drag delayed past the next front move leaves back behind
//! front for good. Old then frees back's chunk and every enqueue fails (seen on the H200 as
//! P-VL frees failing with out of memory by the hundred thousand). lavapipe does not delay
//! invocations that way, so this test puts back where such a late drag leaves it (at the
//! oldest retained chunk, behind front) and checks that the queue keeps working for more
//! than OURO_VL_TRAIL chunks of traffic, after which that chunk has been freed.

mod common;

use common::Kernel;
use gpu_heap::{Gpu, GpuHeap, HeapConfig, Strategy};

const KERNEL: &str = r#"
#include "alloc.wgsl"

// [0] failed enqueues, [1] dequeues that found no item, [2] 1 when done,
// [3] 1 if the set-up left back behind front
@group(1) @binding(0) var<storage, read_write> out: array<atomic<u32>>;

// Items are pages of the 16-byte class (dequeuers take nothing else: cq_holds_item): the
// pages of the heap's last chunk, marked as that class's and never handed out here.
fn page(i: u32) -> u32 {
    let first = (OURO_CHUNKS - 1u) << OURO_CHUNK_SHIFT;
    return heap_handle_of(first + (i % ouro_batch(0u)) * OURO_MIN_PAGE_UNITS);
}

// One chunk's worth of items in, then out, on the 16-byte class's queue.
fn lap() {
    for (var i = 0u; i < OURO_QC_ITEMS; i++) {
        if (!cq_enqueue(0u, page(i))) {
            atomicAdd(&out[0], 1u);
        }
    }
    for (var i = 0u; i < OURO_QC_ITEMS; i++) {
        if (cq_dequeue(0u) == OQ_EMPTY) {
            atomicAdd(&out[1], 1u);
        }
    }
}

@compute @workgroup_size(1)
fn lagging_back() {
    let d = ouro_queue_meta(0u);
    atomicStore(&heap_meta[OURO_CHUNK_INFO + OURO_CHUNKS - 1u], 1u);
    for (var r = 0u; r < 4u; r++) {
        lap();
    }
    // A late drag: back at the oldest chunk still kept, behind front.
    let old = atomicLoad(&heap_meta[d + 7u]);
    atomicStore(&heap_meta[d + 6u], old);
    let fs = atomicLoad(&heap_meta[OURO_QC_START + atomicLoad(&heap_meta[d + 5u]) - 1u]);
    let bs = atomicLoad(&heap_meta[OURO_QC_START + old - 1u]);
    if (bitcast<i32>(fs - bs) > 0) {
        atomicStore(&out[3], 1u);
    }
    for (var r = 0u; r < OURO_VL_TRAIL + 4u; r++) {
        lap();
    }
    atomicStore(&out[2], 1u);
}
"#;

#[test]
fn ouro_p_vl_back_behind_front_recovers() {
    let gpu = Gpu::open(None).expect("a GPU adapter (install Mesa's lavapipe without a GPU)");
    let (device, queue) = (&gpu.device, &gpu.queue);
    // 1024 chunks: OURO_VL_TRAIL is 8.
    let heap = GpuHeap::with_config(
        device,
        queue,
        HeapConfig::new(8 << 20)
            .strategy(Strategy::OuroPVL)
            .watchdog(common::WATCHDOG),
    )
    .unwrap();
    let out = common::storage(&gpu, "out", 16);
    Kernel::new(&gpu, &heap, KERNEL, "lagging_back", &[common::RW]).run(&gpu, &heap, &[&out], 1);
    let t = common::read_words(&gpu, &out, 4);
    assert_eq!(t[2], 1, "the kernel ran to its end");
    assert_eq!(t[3], 1, "the set-up left back behind front");
    assert_eq!(t[0], 0, "failed enqueues");
    assert_eq!(t[1], 0, "dequeues without an item");
}
