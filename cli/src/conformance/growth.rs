//! Growth without copying: allocate until out of memory, grow, keep allocating, free, trim;
//! with both segment binding schemes.

use super::checks::{expect_all_freed, Checks};
use super::harness::{Harness, TALLY_NULL, TALLY_OK};
use super::{all, Options};
use gpu_heap::Gpu;
use gpu_heap::HeapLayout;
use gpu_heap::{HeapConfig, SegmentBinding, Strategy};

pub(super) fn growth(
    gpu: &Gpu,
    strategy: Strategy,
    options: &Options,
    checks: &mut Checks,
) -> crate::Result<()> {
    let arrays = gpu
        .device
        .features()
        .contains(gpu_heap::BINDING_ARRAY_FEATURES);
    let mut bindings = vec![SegmentBinding::Separate];
    if arrays {
        bindings.push(SegmentBinding::BindingArray);
    }
    for binding in bindings {
        growth_with(gpu, strategy, options, checks, binding)?;
    }
    Ok(())
}

/// The growth scenario on one binding scheme: 2 MiB committed of 8 MiB reserved, in
/// segments of 1 MiB.
pub(super) fn growth_with(
    gpu: &Gpu,
    strategy: Strategy,
    options: &Options,
    checks: &mut Checks,
    binding: SegmentBinding,
) -> crate::Result<()> {
    use gpu_heap::GrowthPolicy;
    const SEGMENT: u64 = 1 << 20;
    let config = HeapConfig::new(2 * SEGMENT)
        .max_size(8 * SEGMENT)
        .strategy(strategy)
        .max_segment_size(SEGMENT)
        .segment_binding(binding)
        .max_separate_bindings(8)
        .watchdog(options.watchdog);
    let config = crate::with_pages(config, options.page_size.min(4096), options.unit_size);
    let layout = HeapLayout::for_device(&config, &gpu.device)?;
    let tag = format!("{binding:?}");
    checks.equal(
        &format!("{tag}: reserved segments"),
        layout.segment_count(),
        8,
    );
    checks.equal(
        &format!("{tag}: initial segments"),
        layout.initial_segments,
        2,
    );
    let size = super::filling::filling_size(strategy, layout.max_alloc);
    let granted = layout.granted_bytes(size);
    // Allocations that fit in the first k segments (blocks never cross one).
    let capacity = |k: u32| -> u64 {
        layout.segment_sizes[..k as usize]
            .iter()
            .map(|s| s / granted)
            .sum()
    };
    let slots = (capacity(8) * 3 / 4) as u32;
    let mut h = Harness::new(gpu, config, slots)?;
    let p = all(slots, size, size, 0x6e0);
    let in_committed = |h: &Harness, checks: &mut Checks, phase: &str| -> crate::Result<()> {
        let committed = h.heap.committed_bytes() / gpu_heap::UNIT_BYTES;
        let outside = h
            .slots()?
            .iter()
            .filter(|s| s.handle != 0)
            .filter(|s| s.handle as u64 - 1 + (s.size as u64).div_ceil(16) > committed)
            .count();
        checks.equal(
            &format!("{phase}: allocations outside the committed segments"),
            outside,
            0,
        );
        Ok(())
    };
    let enough =
        |ok, expected, segments| super::filling::filled_enough(strategy, ok, expected, segments);

    // 1. Fill the initial 2 MiB: the rest of the slots get NULL for lack of memory.
    let policy = GrowthPolicy::default().factor(2.0);
    h.heap.maintain(&policy)?; // arms the watermark
    h.clear_tally();
    h.alloc(p)?;
    h.verify(p)?;
    let phase = format!("{tag}, initial fill");
    let (tally, live_a) = checks.placement_and_tally(&h, &phase)?;
    let ok_a = tally[TALLY_OK] as u64;
    checks.expect(enough(ok_a, capacity(2), 2), || {
        format!("{phase}: {ok_a} allocations, capacity {}", capacity(2))
    });
    checks.equal(
        &format!("{phase}: NULLs"),
        tally[TALLY_NULL] as u64,
        slots as u64 - ok_a,
    );
    in_committed(&h, checks, &phase)?;

    // 2. maintain sees the out-of-memory pressure and doubles the heap.
    let report = h.heap.maintain(&policy)?;
    checks.expect(report.out_of_memory, || {
        format!("{tag}: maintain did not see the failed mallocs: {report:?}")
    });
    checks.equal(
        &format!("{tag}: committed after maintain"),
        report.committed_after,
        4 * SEGMENT,
    );
    let report = h.heap.maintain(&policy)?;
    checks.expect(!report.out_of_memory && !report.grew(), || {
        format!("{tag}: pressure not cleared by maintain: {report:?}")
    });

    // 3. Keep allocating (empty slots only); the first allocations keep their patterns.
    h.clear_tally();
    h.alloc(p)?;
    h.verify(p)?;
    let phase = format!("{tag}, after growing to 4 MiB");
    let (tally, live_b) = checks.placement_and_tally(&h, &phase)?;
    let ok_b = tally[TALLY_OK] as u64;
    checks.expect(enough(live_b, capacity(4), 4), || {
        format!(
            "{phase}: {live_b} live allocations, capacity {}",
            capacity(4)
        )
    });
    checks.equal(&format!("{phase}: live"), live_b, live_a + ok_b);
    in_committed(&h, checks, &phase)?;

    // 4. Grow explicitly to the maximum: every slot gets its allocation.
    let committed = h.heap.grow_to(8 * SEGMENT)?;
    checks.equal(
        &format!("{tag}: committed after grow_to"),
        committed,
        8 * SEGMENT,
    );
    match h.heap.grow(1) {
        Err(gpu_heap::Error::GrowBeyondMax { .. }) => {}
        other => checks.problems.push(format!(
            "{tag}: growing past the maximum: expected GrowBeyondMax, got {other:?}"
        )),
    }
    h.clear_tally();
    h.alloc(p)?;
    h.verify(p)?;
    let phase = format!("{tag}, at the maximum");
    let (tally, live_c) = checks.placement_and_tally(&h, &phase)?;
    checks.equal(&format!("{phase}: live slots"), live_c, slots as u64);
    checks.equal(&format!("{phase}: NULLs"), tally[TALLY_NULL], 0);
    in_committed(&h, checks, &phase)?;
    let stats = h.heap.stats()?;
    checks.equal(
        &format!("{phase}: contention"),
        stats.failures.contention,
        0,
    );
    checks.equal(
        &format!("{phase}: live allocations counted"),
        stats.allocations_live,
        slots as u64,
    );

    // 5. Trim refuses to go below the initial size, and releases nothing while full.
    match h.heap.trim_to(SEGMENT) {
        Err(gpu_heap::Error::TrimBelowInitial { .. }) => {}
        other => checks.problems.push(format!(
            "{tag}: trimming below the initial size: expected TrimBelowInitial, got {other:?}"
        )),
    }
    let released = h.heap.trim()?;
    if strategy.is_ouroboros() {
        // Ouroboros hands out fresh chunks in order: the live runs fill the first 3/4 of
        // the heap, and the segments past them were never handed out.
        let used = (slots as u64 * granted).next_multiple_of(SEGMENT);
        checks.equal(
            &format!("{tag}: released while in use"),
            released,
            8 * SEGMENT - used,
        );
    } else {
        // Strategies that place blocks anywhere release exactly the segments past the last
        // live block (for the random walks, whose slots fill 3/4 of the heap at random
        // places, none); one that never reuses memory releases only past its head, which
        // may lie further on.
        let end = h
            .slots()?
            .iter()
            .filter(|s| s.handle != 0)
            .map(|s| (s.handle as u64 - 1) * gpu_heap::UNIT_BYTES + granted)
            .max()
            .unwrap_or(0);
        let past_last = 8 * SEGMENT - end.next_multiple_of(SEGMENT);
        if strategy.reuses_memory() {
            checks.equal(
                &format!("{tag}: released while in use"),
                released,
                past_last,
            );
        } else {
            checks.expect(released <= past_last, || {
                format!("{tag}: released {released} bytes while in use, past the last block {past_last}")
            });
        }
    }
    // What stays committed keeps every live allocation and its pattern.
    h.verify(p)?;
    in_committed(&h, checks, &format!("{tag}, after the trim while in use"))?;

    // 6. Free everything and trim back to the initial size.
    h.free(p)?;
    expect_all_freed(&h, strategy, checks, &tag)?;
    let released = h.heap.trim()? + released;
    checks.equal(&format!("{tag}: released by trim"), released, 6 * SEGMENT);
    checks.equal(
        &format!("{tag}: committed after trim"),
        h.heap.committed_bytes(),
        2 * SEGMENT,
    );

    // 7. The trimmed heap allocates from what is left, and only there.
    h.clear_tally();
    let p2 = all(slots, size, size, 0x6e1);
    h.alloc(p2)?;
    h.verify(p2)?;
    let phase = format!("{tag}, after trim");
    let (tally, _) = checks.placement_and_tally(&h, &phase)?;
    let ok = tally[TALLY_OK] as u64;
    checks.expect(enough(ok, capacity(2), 2), || {
        format!("{phase}: {ok} allocations, capacity {}", capacity(2))
    });
    in_committed(&h, checks, &phase)?;
    h.free(p2)?;
    expect_all_freed(&h, strategy, checks, &phase)
}
