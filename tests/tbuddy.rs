//! The tree buddy beyond the conformance suite: memory that batch splits scattered comes
//! back together for a larger malloc, and the books read on the smallest heaps.

mod common;

use common::Kernel;
use gpu_heap::{Gpu, GpuHeap, HeapConfig, Strategy, TBuddyParams};

/// One invocation: malloc and free one leaf (the malloc splits the whole heap into a batch
/// of leaves), then malloc the whole heap. Writes the statuses and the last handle.
const KERNEL: &str = r#"
#include "alloc.wgsl"
@group(1) @binding(0) var<storage, read_write> out: array<u32>;
@compute @workgroup_size(1)
fn small_then_whole() {
    let p = malloc(256u);
    out[0] = heap_status;
    free(p);
    out[1] = heap_status;
    let q = malloc(HEAP_MAX_ALLOC);
    out[2] = heap_status;
    out[3] = q;
}
"#;

#[test]
fn a_batch_split_comes_back_together() {
    let gpu = Gpu::open(None).expect("a GPU adapter (install Mesa's lavapipe without a GPU)");
    // 512 leaves of 256 B: one block of order 9, which a malloc of one leaf splits into
    // a batch of 512 leaves.
    let config = HeapConfig::new(512 * 256)
        .strategy(Strategy::TBuddy)
        .tbuddy(TBuddyParams { leaf_size: 256 })
        .watchdog(common::WATCHDOG);
    let heap = GpuHeap::with_config(&gpu.device, &gpu.queue, config).unwrap();
    assert_eq!(heap.layout().max_alloc, 512 * 256);
    let out = common::storage(&gpu, "out", 16);
    Kernel::new(&gpu, &heap, KERNEL, "small_then_whole", &[common::RW]).run(
        &gpu,
        &heap,
        &[&out],
        1,
    );
    let words = common::read_words(&gpu, &out, 4);
    assert_eq!(&words[..3], &[gpu_heap::HEAP_OK; 3], "statuses {words:?}");
    assert_ne!(words[3], 0);
    let report = heap.tbuddy_report().unwrap().unwrap();
    assert_eq!(report.inconsistencies(), Vec::<String>::new());
    assert_eq!(report.free_leaves, 0, "{report:?}");
}

#[test]
fn the_books_read_on_a_heap_of_a_few_leaves() {
    let gpu = Gpu::open(None).expect("a GPU adapter (install Mesa's lavapipe without a GPU)");
    for leaves in [1u64, 3, 8, 9] {
        let config = HeapConfig::new(leaves * 256)
            .strategy(Strategy::TBuddy)
            .watchdog(common::WATCHDOG);
        let heap = GpuHeap::with_config(&gpu.device, &gpu.queue, config).unwrap();
        let report = heap.tbuddy_report().unwrap().unwrap();
        assert_eq!(report.free_leaves, leaves, "{leaves} leaves: {report:?}");
        assert_eq!(
            report.inconsistencies(),
            Vec::<String>::new(),
            "{leaves} leaves"
        );
    }
}

/// A heap that can grow: fill its second segment with one-leaf blocks (each batch split
/// leaves pieces), free them all, and trim: the segment's pieces merge and it is released.
#[test]
fn a_segment_freed_in_pieces_is_trimmed() {
    let gpu = Gpu::open(None).expect("a GPU adapter (install Mesa's lavapipe without a GPU)");
    const SEGMENT: u64 = 1 << 20;
    let config = HeapConfig::new(2 * SEGMENT)
        .max_size(4 * SEGMENT)
        .max_segment_size(SEGMENT)
        .max_separate_bindings(4)
        .strategy(Strategy::TBuddy)
        .tbuddy(TBuddyParams { leaf_size: 256 })
        .watchdog(common::WATCHDOG);
    let mut heap = GpuHeap::with_config(&gpu.device, &gpu.queue, config).unwrap();
    heap.grow(SEGMENT).unwrap();
    assert_eq!(heap.committed_bytes(), 3 * SEGMENT);
    // Every leaf of the heap, then free them all.
    let n = (3 * SEGMENT / 256) as u32;
    let handles = common::storage(&gpu, "handles", n as u64 * 4);
    Kernel::new(&gpu, &heap, LEAVES, "take", &[common::RW]).run(
        &gpu,
        &heap,
        &[&handles],
        n.div_ceil(64),
    );
    let taken = common::read_words(&gpu, &handles, n as u64);
    assert!(taken.iter().all(|&h| h != 0), "the heap did not fill");
    Kernel::new(&gpu, &heap, LEAVES, "give", &[common::RW]).run(
        &gpu,
        &heap,
        &[&handles],
        n.div_ceil(64),
    );
    assert_eq!(heap.stats().unwrap().allocations_live, 0);
    assert_eq!(
        heap.trim().unwrap(),
        SEGMENT,
        "the freed segment was not released"
    );
    let report = heap.tbuddy_report().unwrap().unwrap();
    assert_eq!(report.inconsistencies(), Vec::<String>::new());
}

const LEAVES: &str = r#"
#include "alloc.wgsl"
@group(1) @binding(0) var<storage, read_write> handles: array<u32>;
@compute @workgroup_size(64)
fn take(@builtin(global_invocation_id) id: vec3<u32>) {
    if (id.x < arrayLength(&handles)) {
        handles[id.x] = malloc(256u);
    }
}
@compute @workgroup_size(64)
fn give(@builtin(global_invocation_id) id: vec3<u32>) {
    if (id.x < arrayLength(&handles)) {
        free(handles[id.x]);
    }
}
"#;
