//! The tree buddy beyond the conformance suite: memory that batch splits scattered or frees
//! left in pieces comes back together for a larger malloc (frees publish blocks at their
//! order; a malloc that finds none large enough sweeps), on trees of one region and of many,
//! and the books read on the smallest heaps and across a trim.

mod common;

use common::Kernel;
use gpu_heap::{Gpu, GpuHeap, HeapConfig, Strategy, TBuddyParams};

/// One invocation each. small_then_whole: malloc and free one leaf (the malloc splits a
/// top block into batches), then malloc a top block; writes the statuses and the last
/// handle. top_in_pieces, on a heap of two top blocks: malloc one top block and the other
/// as 64 pieces of 1/64 (in that order, or pieces first if out[4] is set), free the
/// pieces, malloc a top block again; writes the statuses and how many pieces it got.
const KERNEL: &str = r#"
#include "alloc.wgsl"
@group(1) @binding(0) var<storage, read_write> out: array<u32>;
@compute @workgroup_size(1)
fn small_then_whole() {
    let p = malloc(16u);
    out[0] = heap_status;
    free(p);
    out[1] = heap_status;
    let q = malloc(HEAP_MAX_ALLOC);
    out[2] = heap_status;
    out[3] = q;
}
var<private> pieces: array<u32, 64>;
@compute @workgroup_size(1)
fn top_in_pieces() {
    let pieces_first = out[4] != 0u;
    if (!pieces_first) {
        malloc(HEAP_MAX_ALLOC);
        out[0] = heap_status;
    }
    var served = 0u;
    for (var i = 0u; i < 64u; i++) {
        pieces[i] = malloc(HEAP_MAX_ALLOC / 64u);
        served += u32(heap_status == HEAP_OK);
    }
    out[1] = served;
    if (pieces_first) {
        malloc(HEAP_MAX_ALLOC);
        out[0] = heap_status;
    }
    var freed = HEAP_OK;
    for (var i = 0u; i < 64u; i++) {
        free(pieces[i]);
        freed = max(freed, heap_status);
    }
    out[2] = freed;
    malloc(HEAP_MAX_ALLOC);
    out[3] = heap_status;
}
"#;

#[test]
fn a_batch_split_comes_back_together() {
    let gpu = common::gpu();
    // 512 leaves of 256 B: one block of order 9, which a malloc of one leaf splits into
    // a batch of 512 leaves.
    let config = HeapConfig::new(512 * 256)
        .strategy(Strategy::TBuddy)
        .tbuddy(TBuddyParams { leaf_size: 256 })
        .watchdog(common::WATCHDOG);
    let heap = GpuHeap::with_config(&gpu.device, &gpu.queue, config).unwrap();
    assert_eq!(heap.layout().max_alloc, 512 * 256);
    let out = common::storage(gpu, "out", 16);
    let words = run_on(gpu, &heap, KERNEL, "small_then_whole", &out, 1);
    assert_eq!(&words[..3], &[gpu_heap::HEAP_OK; 3], "statuses {words:?}");
    assert_ne!(words[3], 0);
    assert_books(&heap, 0);
}

/// A heap of `leaves` leaves of `leaf` bytes, its largest block `top` bytes.
fn tbuddy_heap(gpu: &Gpu, leaves: u64, leaf: u32, top: u64) -> GpuHeap {
    let config = HeapConfig::new(leaves * leaf as u64)
        .max_segment_size(top)
        .strategy(Strategy::TBuddy)
        .tbuddy(TBuddyParams { leaf_size: leaf })
        .watchdog(common::WATCHDOG);
    let heap = GpuHeap::with_config(&gpu.device, &gpu.queue, config).unwrap();
    assert_eq!(heap.layout().max_alloc as u64, top);
    heap
}

/// Runs `entry` of `kernel` over `workgroups` workgroups with `buffer` at group 1 and
/// reads back its first 4 words.
fn run_on(
    gpu: &Gpu,
    heap: &GpuHeap,
    kernel: &str,
    entry: &str,
    buffer: &wgpu::Buffer,
    workgroups: u32,
) -> Vec<u32> {
    Kernel::new(gpu, heap, kernel, entry, &[common::RW]).run(gpu, heap, &[buffer], workgroups);
    common::read_words(gpu, buffer, 4)
}

/// The books balance and the free count holds `free_leaves` leaves.
fn assert_books(heap: &GpuHeap, free_leaves: u64) {
    let report = heap.tbuddy_report().unwrap().unwrap();
    assert_eq!(report.inconsistencies(), Vec::<String>::new());
    assert_eq!(report.free_leaves, free_leaves, "{}", report.summary());
}

/// The books balance and every leaf is free again.
fn assert_all_free(heap: &GpuHeap, leaves: u64) {
    assert_eq!(heap.stats().unwrap().allocations_live, 0);
    assert_books(heap, leaves);
}

/// A heap of `leaf_count` leaves of 256 B, every leaf allocated and then freed one by
/// one: it holds nothing but available leaves (frees publish blocks at their order).
fn heap_freed_in_leaves(gpu: &Gpu, leaf_count: u32) -> GpuHeap {
    let heap = tbuddy_heap(gpu, leaf_count as u64, 256, leaf_count as u64 * 256);
    let handles = common::storage(gpu, "handles", leaf_count as u64 * 4);
    for entry in ["take", "give"] {
        Kernel::new(gpu, &heap, LEAVES, entry, &[common::RW]).run(
            gpu,
            &heap,
            &[&handles],
            leaf_count / 64,
        );
        if entry == "take" {
            let taken = common::read_words(gpu, &handles, leaf_count as u64);
            assert!(taken.iter().all(|&h| h != 0), "the heap did not fill");
        }
    }
    assert_all_free(&heap, leaf_count as u64);
    heap
}

/// Every leaf of a heap of 2^18 leaves (two sweep regions) allocated and freed: the heap
/// then holds nothing but leaves, and one malloc of the whole heap merges them all.
#[test]
fn a_heap_freed_in_leaves_serves_the_whole_heap() {
    let gpu = common::gpu();
    let heap = heap_freed_in_leaves(gpu, 1 << 18);
    let out = common::storage(gpu, "out", 16);
    let words = run_on(gpu, &heap, KERNEL, "small_then_whole", &out, 1);
    assert_eq!(&words[..3], &[gpu_heap::HEAP_OK; 3], "statuses {words:?}");
    assert_books(&heap, 0);
}

/// Writes `summary[0]` into the first `summary[1]` words of layer 1 of the available tree.
const SUMMARIES: &str = r#"
#include "alloc.wgsl"
@group(1) @binding(0) var<storage, read_write> summary: array<u32>;
@compute @workgroup_size(1)
fn write_layer_1() {
    for (var w = 0u; w < summary[1]; w++) {
        atomicStore(&gpu_heap_meta[gpu_heap_sb_layer_base(GPU_HEAP_AT_BITMAP, 1u) + w], summary[0]);
    }
}
"#;

/// The books count available blocks that descents cannot reach, under a summary bit that
/// is clear (what the race of a set and a repair once left: BENCHMARKS.md, "Hidden
/// summaries"), and call them an inconsistency; summary bits over empty words are only
/// stale, which the books allow.
#[test]
fn the_books_see_blocks_that_summaries_hide() {
    let gpu = common::gpu();
    // 2^12 leaves, all freed one by one: order 0 (tree indices 2^12 to 2^13, under layers
    // 1 and 2) holds every leaf.
    const LEAF_COUNT: u32 = 1 << 12;
    let heap = heap_freed_in_leaves(gpu, LEAF_COUNT);
    // Layer 1 has a bit per word of layer 0: 2^13 / 1024 words. Cleared, it hides every
    // leaf; all set, it is stale over the other orders' empty words.
    let layer_1_words = (2 * LEAF_COUNT) / 1024;
    for (value, hidden) in [(0u32, LEAF_COUNT as u64), (u32::MAX, 0)] {
        let summary = common::storage_from(gpu, "summary", &[value, layer_1_words]);
        Kernel::new(gpu, &heap, SUMMARIES, "write_layer_1", &[common::RW]).run(
            gpu,
            &heap,
            &[&summary],
            1,
        );
        let report = heap.tbuddy_report().unwrap().unwrap();
        assert_eq!(report.orders[0].available, LEAF_COUNT as u64);
        assert_eq!(report.orders[0].unreachable, hidden, "{}", report.summary());
        let problems = report.inconsistencies();
        assert_eq!(problems.is_empty(), hidden == 0, "{problems:?}");
    }
}

/// Trees of 2^24 leaves, 128 sweep regions, two blocks of the largest order: the leftovers
/// of a batch split for one leaf, or one top block in pieces of 2^17 leaves beside a live top
/// block (either one), come back together for a malloc of the largest order.
#[test]
fn a_top_block_forms_again_on_a_tree_of_many_regions() {
    let gpu = common::gpu();
    const LEAF_COUNT: u64 = 1 << 24;
    let heap = tbuddy_heap(gpu, LEAF_COUNT, 16, LEAF_COUNT * 8);
    let out = common::storage(gpu, "out", 16);
    let words = run_on(gpu, &heap, KERNEL, "small_then_whole", &out, 1);
    assert_eq!(
        &words[..3],
        &[gpu_heap::HEAP_OK; 3],
        "leftovers: statuses {words:?}"
    );
    for pieces_first in 0..2u32 {
        let heap = tbuddy_heap(gpu, LEAF_COUNT, 16, LEAF_COUNT * 8);
        let out = common::storage_from(gpu, "out", &[0, 0, 0, 0, pieces_first]);
        let words = run_on(gpu, &heap, KERNEL, "top_in_pieces", &out, 1);
        let ok = gpu_heap::HEAP_OK;
        assert_eq!(
            words,
            [ok, 64, ok, ok],
            "pieces first {pieces_first}: statuses, pieces"
        );
        assert_books(&heap, 0);
    }
}

/// A tree of 2^24 leaves and blocks of at most 2^20: the whole heap allocated as blocks
/// of 2^17 leaves and freed, then 512 mallocs at once of half a top block. Exactly 32 fit;
/// the others must be out of memory, none a contention failure (waiting while others
/// sweep must not run out of rounds).
#[test]
fn crowded_large_mallocs_after_the_heap_was_freed_in_pieces() {
    let gpu = common::gpu();
    const LEAF_COUNT: u64 = 1 << 24;
    let heap = tbuddy_heap(gpu, LEAF_COUNT, 16, (1 << 20) * 16);
    let out = common::storage(gpu, "out", 16);
    run_on(gpu, &heap, CROWD, "pieces", &out, 1);
    let words = run_on(gpu, &heap, CROWD, "halves", &out, 8);
    assert_eq!(
        words,
        [32, 480, 0, 0],
        "ok, out of memory, contention, piece failures"
    );
    let report = heap.tbuddy_report().unwrap().unwrap();
    assert_eq!(report.inconsistencies(), Vec::<String>::new());
}

/// pieces: one invocation allocates the heap as 128 blocks of 2^17 leaves of 16 B and
/// frees them (counting failures in out[3]); halves: each invocation mallocs half a top
/// block and counts its status (out[0] OK, out[1] out of memory, out[2] contention).
const CROWD: &str = r#"
#include "alloc.wgsl"
@group(1) @binding(0) var<storage, read_write> out: array<atomic<u32>>;
var<private> blocks: array<u32, 128>;
@compute @workgroup_size(1)
fn pieces() {
    for (var i = 0u; i < 128u; i++) {
        blocks[i] = malloc(2097152u);
        if (heap_status != HEAP_OK) {
            atomicAdd(&out[3], 1u);
        }
    }
    for (var i = 0u; i < 128u; i++) {
        free(blocks[i]);
    }
}
@compute @workgroup_size(64)
fn halves() {
    malloc(HEAP_MAX_ALLOC / 2u);
    atomicAdd(&out[heap_status], 1u);
}
"#;

#[test]
fn the_books_read_on_a_heap_of_a_few_leaves() {
    let gpu = common::gpu();
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
    let gpu = common::gpu();
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
    let handles = common::storage(gpu, "handles", n as u64 * 4);
    Kernel::new(gpu, &heap, LEAVES, "take", &[common::RW]).run(
        gpu,
        &heap,
        &[&handles],
        n.div_ceil(64),
    );
    let taken = common::read_words(gpu, &handles, n as u64);
    assert!(taken.iter().all(|&h| h != 0), "the heap did not fill");
    Kernel::new(gpu, &heap, LEAVES, "give", &[common::RW]).run(
        gpu,
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

/// A heap grown by 16 bytes, less than a leaf: its last segment holds no leaf, and the
/// trim that releases it merges an empty range. Before it, leaves freed in two places
/// leave pairs to merge beside the range. The books balance after the trim.
#[test]
fn a_segment_without_a_whole_leaf_is_trimmed() {
    let gpu = common::gpu();
    const SEGMENT: u64 = 2 << 20;
    let config = HeapConfig::new(SEGMENT)
        .max_size(SEGMENT + 16)
        .max_segment_size(SEGMENT)
        .strategy(Strategy::TBuddy)
        .tbuddy(TBuddyParams { leaf_size: 256 })
        .watchdog(common::WATCHDOG);
    let mut heap = GpuHeap::with_config(&gpu.device, &gpu.queue, config).unwrap();
    heap.grow(16).unwrap();
    let n = (SEGMENT / 256) as u32;
    let handles = common::storage(gpu, "handles", n as u64 * 4);
    Kernel::new(gpu, &heap, LEAVES, "take", &[common::RW]).run(gpu, &heap, &[&handles], n / 64);
    let taken = common::read_words(gpu, &handles, n as u64);
    assert!(taken.iter().all(|&h| h != 0), "the heap did not fill");
    // Free the leaves at 0..2 and 8..24 of the heap (a handle is its unit + 1, a leaf 16
    // units); "give" skips the zeros.
    let freed: Vec<u32> = (taken.iter())
        .map(|&h| {
            let leaf = (h - 1) >> 4;
            if leaf < 2 || (8..24).contains(&leaf) {
                h
            } else {
                0
            }
        })
        .collect();
    let to_free = common::storage_from(gpu, "to free", &freed);
    Kernel::new(gpu, &heap, LEAVES, "give", &[common::RW]).run(gpu, &heap, &[&to_free], n / 64);
    assert_eq!(heap.trim().unwrap(), 16);
    assert_books(&heap, 18);
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
    if (id.x < arrayLength(&handles) && handles[id.x] != 0u) {
        free(handles[id.x]);
    }
}
"#;
