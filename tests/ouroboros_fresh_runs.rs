//! The page-based Ouroboros variants' fresh runs (shaders/ouroboros/fresh_runs.wgsl): mallocs
//! that find no page queued take the pages of their class's fresh run, and the heap's books
//! account for the pages the run has left; mallocs that find pages queued take those first,
//! so the run is left as it was; a heap that can grow keeps the paper's path and no run.

mod common;

use common::Kernel;
use gpu_heap::{Gpu, GpuHeap, HeapConfig, Strategy};

/// Mallocs per dispatch: more than the 512 pages of 16 B in the first run's one chunk.
const THREADS: u32 = 640;

/// One dispatch of THREADS mallocs of 16 B: no NULL, no failure, no two alike.
fn alloc(gpu: &Gpu, heap: &GpuHeap, handles: &wgpu::Buffer) {
    Kernel::new(gpu, heap, common::PATTERN_KERNEL, "alloc", &[common::RW]).run(
        gpu,
        heap,
        &[handles],
        THREADS / 64,
    );
    let mut got = common::read_words(gpu, handles, THREADS as u64);
    assert!(got.iter().all(|&h| h != 0), "a NULL handle");
    got.sort_unstable();
    got.dedup();
    assert_eq!(got.len(), THREADS as usize, "two mallocs got the same page");
    assert_eq!(heap.stats().unwrap().failures.total(), 0, "failed calls");
}

/// Checks every block's pattern and frees it.
fn check_and_free(gpu: &Gpu, heap: &GpuHeap, handles: &wgpu::Buffer) {
    Kernel::new(gpu, heap, common::PATTERN_KERNEL, "check", &[common::RW]).run(
        gpu,
        heap,
        &[handles],
        THREADS / 64,
    );
    let bad = common::read_words(gpu, handles, THREADS as u64);
    assert!(bad.iter().all(|&b| b == 0), "corrupted words: {bad:?}");
    assert_eq!(heap.stats().unwrap().failures.total(), 0, "failed frees");
}

fn heap(gpu: &Gpu, strategy: Strategy, growable: bool) -> GpuHeap {
    let mut config = HeapConfig::new(8 << 20)
        .strategy(strategy)
        .watchdog(common::WATCHDOG);
    if growable {
        config = config.max_size(16 << 20);
    }
    GpuHeap::with_config(&gpu.device, &gpu.queue, config).unwrap()
}

#[test]
fn page_based_mallocs_take_queued_pages_before_the_fresh_run() {
    let gpu = common::gpu();
    for strategy in [Strategy::OuroPS, Strategy::OuroPVA, Strategy::OuroPVL] {
        let heap = heap(gpu, strategy, false);
        let handles = common::storage(gpu, "handles", THREADS as u64 * 4);
        let class = |heap: &GpuHeap| {
            let report = heap.ouroboros_report().unwrap().expect("an Ouroboros heap");
            assert_eq!(
                report.unaccounted_units(),
                Some(0),
                "{strategy:?}: {report:?}"
            );
            report.classes[0].clone()
        };

        alloc(gpu, &heap, &handles);
        let first = class(&heap);
        assert_eq!(first.live_pages, THREADS as u64, "{strategy:?}");
        assert_eq!(first.queued, 0, "{strategy:?}: no page was ever freed");
        // The pages came from runs: what they left is free, and the class owns nothing else.
        assert!(
            first.fresh > 0,
            "{strategy:?}: no fresh run left: {first:?}"
        );
        assert_eq!(
            first.chunks as u64 * 512,
            first.live_pages + first.fresh,
            "{strategy:?}: {first:?}"
        );

        check_and_free(gpu, &heap, &handles);
        let freed = class(&heap);
        assert_eq!(freed.live_pages, 0, "{strategy:?}");
        assert_eq!(
            freed.queued, THREADS as i32,
            "{strategy:?}: frees go to the queue"
        );
        assert_eq!(
            freed.fresh, first.fresh,
            "{strategy:?}: frees left the run alone"
        );

        // As many mallocs as pages queued: every one takes a queued page.
        alloc(gpu, &heap, &handles);
        let again = class(&heap);
        assert_eq!(again.queued, 0, "{strategy:?}: {again:?}");
        assert_eq!(
            again.fresh, first.fresh,
            "{strategy:?}: the run was taken from"
        );
        assert_eq!(again.chunks, first.chunks, "{strategy:?}");
        check_and_free(gpu, &heap, &handles);
        assert_eq!(heap.stats().unwrap().allocations_live, 0, "{strategy:?}");
    }
}

#[test]
fn a_heap_that_can_grow_keeps_no_fresh_run() {
    let gpu = common::gpu();
    let heap = heap(gpu, Strategy::OuroPS, true);
    let handles = common::storage(gpu, "handles", THREADS as u64 * 4);
    alloc(gpu, &heap, &handles);
    let report = heap.ouroboros_report().unwrap().expect("an Ouroboros heap");
    assert_eq!(report.unaccounted_units(), Some(0), "{report:?}");
    let class = &report.classes[0];
    assert_eq!(class.fresh, 0, "{class:?}");
    assert_eq!(class.live_pages, THREADS as u64);
    check_and_free(gpu, &heap, &handles);
    assert_eq!(heap.stats().unwrap().allocations_live, 0);
}
