//! Basic, churn and exhaustion: the life of allocations on a heap with room, under mixed
//! traffic, and on a heap too small for the demand.

use super::checks::{expect_all_freed, Checks};
use super::harness::{Harness, Params, TALLY_NULL, TALLY_OK};
use super::{all, heap_config, size_ladder, Options};
use gpu_heap::Failures;
use gpu_heap::Gpu;
use gpu_heap::HeapLayout;
use gpu_heap::{HeapConfig, SegmentBinding, Strategy};

pub(super) fn basic(
    gpu: &Gpu,
    strategy: Strategy,
    options: &Options,
    checks: &mut Checks,
) -> crate::Result<()> {
    let h = Harness::new(gpu, heap_config(strategy, options), options.slots)?;
    let layout = h.heap.layout().clone();
    for size in size_ladder(layout.max_alloc) {
        let granted = layout.granted_bytes(size);
        // Fill at most half the heap and write at most 16 MiB per size.
        let n = (options.slots as u64)
            .min(layout.capacity_for(size) / 2)
            .min(((16 << 20) / granted).max(64))
            .max(1) as u32;
        let phase = format!("size {size}");
        h.clear_tally();
        let p = all(n, size, size, size);
        h.alloc(p)?;
        h.verify(p)?;
        let (tally, live) = checks.placement_and_tally(&h, &phase)?;
        checks.equal(&format!("{phase}: successful mallocs"), tally[TALLY_OK], n);
        checks.equal(&format!("{phase}: live slots"), live, n as u64);
        let stats = h.heap.stats()?;
        checks.equal(
            &format!("{phase}: live allocations"),
            stats.allocations_live,
            n as u64,
        );
        checks.equal(
            &format!("{phase}: live bytes"),
            stats.bytes_live,
            n as u64 * granted,
        );
        h.free(p)?;
        let stats = h.heap.stats()?;
        checks.equal(
            &format!("{phase}: failures"),
            stats.failures,
            Failures::default(),
        );
        expect_all_freed(&h, strategy, checks, &phase)?;
        h.reset()?;
    }
    Ok(())
}

pub(super) fn churn(
    gpu: &Gpu,
    strategy: Strategy,
    options: &Options,
    checks: &mut Checks,
) -> crate::Result<()> {
    let h = Harness::new(gpu, heap_config(strategy, options), options.slots)?;
    let max = h.heap.layout().max_alloc.min(4096);
    h.clear_tally();
    for round in 0..options.churn_rounds {
        let p = Params {
            round,
            malloc_permille: 600,
            free_permille: 400,
            ..all(options.slots, 4, max, 0x5eed)
        };
        h.free(p)?;
        h.alloc(p)?;
        h.verify(p)?;
        checks.placement_and_tally(&h, &format!("round {round}"))?;
    }
    h.free(all(options.slots, 4, max, 0x5eed))?;
    let tally = h.tally()?;
    checks.equal("NULLs from malloc", tally[TALLY_NULL], 0);
    checks.expect(tally[TALLY_OK] > 0, || "churn made no allocation".into());
    let stats = h.heap.stats()?;
    checks.equal("failures", stats.failures, Failures::default());
    expect_all_freed(&h, strategy, checks, "final free")
}

pub(super) fn exhaustion(
    gpu: &Gpu,
    strategy: Strategy,
    options: &Options,
    checks: &mut Checks,
) -> crate::Result<()> {
    // A small heap of four segments, bound separately: every allocation races for the last
    // free memory, blocks meet segment boundaries, and the fallback binding is exercised.
    let config = HeapConfig::new(1 << 20)
        .strategy(strategy)
        .max_segment_size(256 << 10)
        .segment_binding(SegmentBinding::Separate)
        .watchdog(options.watchdog);
    let config = crate::with_pages(config, options.page_size.min(4096), options.unit_size);
    let layout_probe = HeapLayout::for_device(&config, &gpu.device)?;
    let size = super::filling::filling_size(strategy, layout_probe.max_alloc);
    let capacity = layout_probe.capacity_for(size);
    let n = (capacity + capacity / 2) as u32;
    let h = Harness::new(gpu, config, n)?;
    let segments = h.heap.layout().segment_count() as u64;
    checks.equal("segments", segments, 4);
    for pass in ["first fill", "second fill"] {
        let before = h.heap.stats()?.failures;
        h.clear_tally();
        let p = all(n, size, size, 7);
        h.alloc(p)?;
        h.verify(p)?;
        let (tally, _) = checks.placement_and_tally(&h, pass)?;
        let ok = tally[TALLY_OK] as u64;
        checks.expect(
            super::filling::filled_enough(strategy, ok, capacity, segments),
            || {
                format!(
                    "{pass}: {ok} successful mallocs of a capacity of {capacity} ({:?} packing)",
                    strategy.packing()
                )
            },
        );
        let failures = h.heap.stats()?.failures.since(&before);
        checks.equal(
            &format!("{pass}: NULLs counted as out of memory"),
            failures.out_of_memory,
            n as u64 - ok,
        );
        checks.equal(
            &format!("{pass}: contention failures"),
            failures.contention,
            0,
        );
        h.free(p)?;
        // The second fill runs on the freed heap: full capacity must come back.
        expect_all_freed(&h, strategy, checks, pass)?;
    }
    Ok(())
}
