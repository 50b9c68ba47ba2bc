//! Full heaps: utilisation (fill with 16-byte blocks until NULL) and free-all (a full heap
//! freed in one dispatch, three times).

use super::checks::{expect_all_freed, Checks};
use super::harness::{Harness, Params, TALLY_NULL, TALLY_OK};
use super::{all, Options, REFILL_FRACTION, UTILISATION_HEAP, UTILISATION_ROUND};
use gpu_heap::Failures;
use gpu_heap::Gpu;
use gpu_heap::HeapLayout;
use gpu_heap::{HeapConfig, Packing, Strategy};

/// The heap that the utilisation and free-all scenarios fill with 16-byte blocks.
pub(super) fn filled_heap(strategy: Strategy, options: &Options) -> HeapConfig {
    let config = HeapConfig::new(UTILISATION_HEAP)
        .strategy(strategy)
        .watchdog(options.watchdog);
    crate::with_pages(config, options.page_size, options.unit_size)
}

/// The size a heap of segments is filled with: the largest malloc where blocks are slots, a
/// size that does not divide a segment where they are placed end to end (so that blocks
/// meet its end), and a run of 32 units where they are runs.
pub(super) fn filling_size(strategy: Strategy, max_alloc: u32) -> u32 {
    match strategy.packing() {
        Packing::EndToEnd => 3000,
        Packing::Runs => 512,
        _ => max_alloc,
    }
}

/// Whether `ok` successful mallocs fill a heap of `segments` segments whose capacity is
/// `capacity`: exactly for slots, less at most one per segment boundary end to end, and
/// within 10 % for runs (what the concurrent walks leave between runs).
pub(super) fn filled_enough(strategy: Strategy, ok: u64, capacity: u64, segments: u64) -> bool {
    ok <= capacity
        && match strategy.packing() {
            Packing::EndToEnd => ok + segments > capacity,
            Packing::Runs => ok * 10 >= capacity * 9,
            _ => ok == capacity,
        }
}

/// The layout of a heap to fill, and slots for more blocks of 16 bytes than it holds (the
/// last ones must see NULL).
pub(super) fn fill_plan(gpu: &Gpu, config: &HeapConfig) -> crate::Result<(HeapLayout, u32)> {
    let layout = HeapLayout::for_device(config, &gpu.device)?;
    let n = (layout.bytes / 16 + layout.bytes / 256) as u32;
    Ok((layout, n))
}

pub(super) fn utilisation(
    gpu: &Gpu,
    strategy: Strategy,
    options: &Options,
    checks: &mut Checks,
) -> crate::Result<()> {
    let config = filled_heap(strategy, options);
    let (layout, n) = fill_plan(gpu, &config)?;
    let (bytes, meta_bytes) = (layout.bytes, layout.meta_words * 4);
    let fraction = |ok: u32| (ok as u64 * 16) as f64 / bytes as f64;

    // The paper's protocol: dispatches of UTILISATION_ROUND mallocs of 16 B, one after the
    // other, until one of them sees NULL.
    let h = Harness::new(gpu, config.clone(), n)?;
    let p = all(n, 16, 16, 16);
    fill_in_rounds(&h, p)?;
    let ok = verify_and_free_filled(&h, p, strategy, "rounds", checks)?;
    // HeapLayout::capacity_for, as Strategy::packing qualifies it, is what a fill in rounds
    // gets; no fill gets more.
    let capacity = layout.capacity_for(16);
    let segments = layout.segment_count() as u64;
    checks.expect(
        filled_enough(strategy, ok as u64, capacity, segments),
        || {
            format!(
                "rounds: {ok} mallocs of 16 B, where capacity_for(16) is {capacity} ({:?} packing)",
                strategy.packing()
            )
        },
    );
    checks.utilisation = Some(fraction(ok));
    checks.utilisation_with_meta = Some((ok as u64 * 16) as f64 / (bytes + meta_bytes) as f64);
    // The paper reports 98.35% for Ouroboros; a NULL long before the heap is full is a bug
    // in any of its variants, chunk-based ones included.
    if strategy.is_ouroboros() {
        checks.expect(fraction(ok) >= 0.98, || {
            format!("utilisation {:.2}% is below 98%", fraction(ok) * 100.0)
        });
    }

    // The same demand in one dispatch: every invocation's malloc is in flight at once. A
    // measurement, not a requirement: virtualized queues take their queue chunks from the
    // heap, and when producers take every chunk for pages first, the pages they cannot queue
    // go to the spill, where only mallocs of their class find them.
    let h = Harness::new(gpu, config, n)?;
    h.clear_tally();
    let p = all(n, 16, 16, 16);
    h.alloc(p)?;
    let ok = verify_and_free_filled(&h, p, strategy, "one dispatch", checks)?;
    checks.expect(ok as u64 <= capacity, || {
        format!("one dispatch: {ok} mallocs of 16 B, above capacity_for(16), {capacity}")
    });
    checks.burst_utilisation = Some(fraction(ok));
    Ok(())
}

/// The Ouroboros paper's out-of-memory protocol: dispatches of [`UTILISATION_ROUND`] mallocs
/// into the empty slots of `p`, one after the other, until one of them sees NULL. The
/// tally is cleared first.
pub(super) fn fill_in_rounds(h: &Harness, p: Params) -> crate::Result<()> {
    h.clear_tally();
    let mut first = 0;
    while first < p.slots {
        let round = Params {
            first,
            slots: (first + UTILISATION_ROUND).min(p.slots),
            ..p
        };
        h.alloc(round)?;
        if h.tally()?[TALLY_NULL] > 0 {
            break;
        }
        first = round.slots;
    }
    Ok(())
}

/// Verifies a heap that the utilisation scenario filled until NULL, frees it and checks
/// what the statistics say. Returns the successful mallocs.
pub(super) fn verify_and_free_filled(
    h: &Harness,
    p: Params,
    strategy: Strategy,
    phase: &str,
    checks: &mut Checks,
) -> crate::Result<u32> {
    h.verify(p)?;
    let (tally, _) = checks.placement_and_tally(h, &format!("{phase}: fill"))?;
    checks.audit(&h.heap, &format!("{phase}: fill"))?;
    let stats = h.heap.stats()?;
    checks.expect(tally[TALLY_NULL] > 0, || {
        format!("{phase}: the heap never ran out")
    });
    checks.equal(
        &format!("{phase}: NULLs counted as out of memory"),
        stats.failures.out_of_memory,
        tally[TALLY_NULL] as u64,
    );
    // A free never fails, not even the one that frees a full heap's last block.
    h.free(p)?;
    expect_all_freed(h, strategy, checks, &format!("{phase}: free"))?;
    Ok(tally[TALLY_OK])
}

pub(super) fn free_all(
    gpu: &Gpu,
    strategy: Strategy,
    options: &Options,
    checks: &mut Checks,
) -> crate::Result<()> {
    let config = filled_heap(strategy, options).max_segment_size(UTILISATION_HEAP / 4);
    let (_, n) = fill_plan(gpu, &config)?;
    let h = Harness::new(gpu, config, n)?;
    checks.equal("segments", h.heap.layout().segment_count(), 4);
    let p = all(n, 16, 16, 0xf1);
    let mut fills = Vec::new();
    for fill in ["first fill", "second fill", "third fill"] {
        fill_in_rounds(&h, p)?;
        h.verify(p)?;
        let (tally, live) = checks.placement_and_tally(&h, fill)?;
        checks.expect(tally[TALLY_NULL] > 0, || {
            format!("{fill}: the heap never ran out")
        });
        checks.equal(&format!("{fill}: live slots"), live, tally[TALLY_OK] as u64);
        let stats = h.heap.stats()?;
        checks.equal(
            &format!("{fill}: live allocations counted"),
            stats.allocations_live,
            live,
        );
        checks.equal(
            &format!("{fill}: contention failures"),
            stats.failures.contention,
            0,
        );
        checks.audit(&h.heap, fill)?;
        fills.push(tally[TALLY_OK]);
        // Every block, in one dispatch.
        h.free(p)?;
        let after = h.heap.stats()?;
        checks.equal(
            &format!("{fill}: frees that failed, by cause"),
            after.failures.since(&stats.failures),
            Failures::default(),
        );
        expect_all_freed(&h, strategy, checks, fill)?;
    }
    // Nothing stays tied to the small size: the freed heap holds as many of the largest
    // blocks as an empty one. (Ouroboros: of one chunk; its classes above a chunk take runs
    // of chunks from fresh memory only, which three fills have spent. Virtualized queues
    // keep the queue chunks they grew into: the refill fraction. Page-based Ouroboros keeps
    // every chunk with its class: Strategy::reuses_across_sizes.)
    if strategy.reuses_across_sizes() {
        let layout = h.heap.layout();
        let mut size = filling_size(strategy, layout.max_alloc);
        if strategy.is_ouroboros() {
            size = size.min(h.heap.config().ouroboros.chunk_size);
        }
        let capacity = layout.capacity_for(size);
        let large = all(
            capacity.saturating_mul(2).min(n as u64) as u32,
            size,
            size,
            0xf2,
        );
        fill_in_rounds(&h, large)?;
        h.verify(large)?;
        let phase = "largest blocks after three fills";
        let (tally, _) = checks.placement_and_tally(&h, phase)?;
        let ok = tally[TALLY_OK] as u64;
        let enough = if strategy.needs_atomic_segments() {
            ok as f64 >= REFILL_FRACTION * capacity as f64
        } else {
            filled_enough(strategy, ok, capacity, layout.segment_count() as u64)
        };
        checks.expect(enough, || {
            format!("{phase}: {ok} mallocs of {size} B, of a capacity of {capacity}")
        });
        h.free(large)?;
        expect_all_freed(&h, strategy, checks, phase)?;
    }
    // Whatever a free-all left behind must not add up from one cycle to the next.
    let first = fills[0];
    for (i, &again) in fills.iter().enumerate().skip(1) {
        checks.expect(again as f64 >= REFILL_FRACTION * first as f64, || {
            format!(
                "fill {} got {again} blocks, {:.1}% of the first ({first}), below {:.0}%",
                i + 1,
                100.0 * again as f64 / first.max(1) as f64,
                100.0 * REFILL_FRACTION
            )
        });
    }
    Ok(())
}
