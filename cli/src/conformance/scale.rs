//! GPU scale: many workgroups holding blocks across dispatches (scale), and mallocs and
//! frees in one dispatch (round-trip).

use super::checks::{expect_all_freed, Checks};
use super::harness::{Harness, Params, TALLY_NULL, TALLY_OK};
use super::{
    all, harness, heap_config, lanes, Options, ROUND_TRIPS, SCALE_DEEP_PER_INVOCATION,
    SCALE_MAX_SIZE, SCALE_PER_INVOCATION,
};
use gpu_heap::Failures;
use gpu_heap::Gpu;
use gpu_heap::HeapLayout;
use gpu_heap::{HeapConfig, Strategy};

/// The invocations of the GPU-scale scenarios: [`Options::workgroups`] of 64.
pub(super) fn gpu_scale_invocations(options: &Options) -> u32 {
    (options.workgroups * 64).min(harness::MAX_SLOTS)
}

pub(super) fn scale(
    gpu: &Gpu,
    strategy: Strategy,
    options: &Options,
    checks: &mut Checks,
) -> crate::Result<()> {
    let invocations = gpu_scale_invocations(options);
    scale_with(
        gpu,
        strategy,
        options,
        checks,
        invocations,
        SCALE_PER_INVOCATION,
    )?;
    // Fewer invocations, each holding many blocks.
    let few = (invocations / 16).max(64);
    scale_with(
        gpu,
        strategy,
        options,
        checks,
        few,
        SCALE_DEEP_PER_INVOCATION,
    )
}

/// The heap of a run of `slots` blocks of up to [`SCALE_MAX_SIZE`] bytes, and the largest
/// size it serves up to that. A NULL must mean a bug, not a heap too small for the run: the
/// heap holds every slot at the largest size twice over (bump never reuses a block), larger
/// than `options.heap_size` where that is too small.
pub(super) fn heap_for_slots(
    gpu: &Gpu,
    strategy: Strategy,
    options: &Options,
    slots: u32,
) -> crate::Result<(HeapConfig, u32)> {
    let config = heap_config(strategy, options);
    let planned = HeapLayout::for_device(&config, &gpu.device)?;
    let max = planned.max_alloc.min(SCALE_MAX_SIZE);
    let demand = (2 * slots as u64 * planned.granted_bytes(max)).next_power_of_two();
    if demand <= options.heap_size {
        return Ok((config, max));
    }
    let options = Options {
        heap_size: demand,
        ..options.clone()
    };
    Ok((heap_config(strategy, &options), max))
}

/// Runs a phase's dispatches on a cleared tally and checks it: placement, no NULL, and
/// with every lane allocating, a successful malloc for every slot. Returns the tally and
/// the live slots.
pub(super) fn no_null_phase(
    h: &Harness,
    checks: &mut Checks,
    phase: &str,
    p: Params,
    dispatches: impl FnOnce(&Harness) -> crate::Result<()>,
) -> crate::Result<(Vec<u32>, u64)> {
    h.clear_tally();
    dispatches(h)?;
    let (tally, live) = checks.placement_and_tally(h, phase)?;
    checks.equal(&format!("{phase}: NULLs"), tally[TALLY_NULL], 0);
    if p.malloc_permille == 1000 {
        checks.equal(
            &format!("{phase}: successful mallocs"),
            tally[TALLY_OK],
            p.slots,
        );
    }
    Ok((tally, live))
}

/// The scale scenario's phases with `invocations` invocations holding `per` blocks each.
pub(super) fn scale_with(
    gpu: &Gpu,
    strategy: Strategy,
    options: &Options,
    checks: &mut Checks,
    invocations: u32,
    per: u32,
) -> crate::Result<()> {
    let n = invocations * per;
    let (config, max) = heap_for_slots(gpu, strategy, options, n)?;
    let h = Harness::with_slots_per_invocation(gpu, config, n, per)?;
    let layout = h.heap.layout().clone();
    // What the slots hold must agree with the heap's live counters, byte for byte.
    let live_agrees = |h: &Harness, checks: &mut Checks, phase: &str| -> crate::Result<()> {
        let slots = h.slots()?;
        let live: Vec<_> = slots.iter().filter(|s| s.handle != 0).collect();
        let bytes: u64 = live.iter().map(|s| layout.granted_bytes(s.size)).sum();
        let stats = h.heap.stats()?;
        if strategy.reuses_memory() {
            checks.equal(
                &format!("{phase}: live allocations and bytes counted"),
                (stats.allocations_live, stats.bytes_live),
                (live.len() as u64, bytes),
            );
        }
        checks.equal(
            &format!("{phase}: failures"),
            stats.failures,
            Failures::default(),
        );
        Ok(())
    };
    let phases: [(&str, Params); 3] = [
        // Every lane of every subgroup asks for 16 B at once.
        ("every lane, 16 B", all(n, 16, 16, 0x5ca1e)),
        // A hashed half of the lanes: subgroups with arbitrary holes.
        ("hashed lanes, 16 B", lanes(500, all(n, 16, 16, 0x5ca1f))),
        (
            "hashed lanes, 4 B to 256 B",
            lanes(700, all(n, 4, max, 0x5ca20)),
        ),
    ];
    for (phase, p) in phases {
        let phase = &format!("{invocations} x {per}, {phase}");
        let (tally, live) = no_null_phase(&h, checks, phase, p, |h| {
            h.alloc(p)?;
            h.verify(p)
        })?;
        checks.equal(
            &format!("{phase}: live slots"),
            live,
            tally[TALLY_OK] as u64,
        );
        live_agrees(&h, checks, phase)?;
        // A hashed half of the blocks is freed; the others stay live across the dispatches
        // that follow, and the same lanes allocate into the freed slots again.
        let half = Params {
            free_permille: 500,
            ..p
        };
        h.free(half)?;
        let phase = format!("{phase}, half freed");
        checks.placement_and_tally(&h, &phase)?;
        live_agrees(&h, checks, &phase)?;
        let again = Params { round: 1, ..p };
        h.alloc(again)?;
        h.verify(again)?;
        let (tally, _) = checks.placement_and_tally(&h, &format!("{phase}, refilled"))?;
        checks.equal(&format!("{phase}, refilled: NULLs"), tally[TALLY_NULL], 0);
        live_agrees(&h, checks, &format!("{phase}, refilled"))?;
        h.free(p)?;
        expect_all_freed(&h, strategy, checks, &phase)?;
        h.reset()?;
    }
    Ok(())
}

pub(super) fn round_trip(
    gpu: &Gpu,
    strategy: Strategy,
    options: &Options,
    checks: &mut Checks,
) -> crate::Result<()> {
    let n = gpu_scale_invocations(options) * ROUND_TRIPS;
    let (config, max) = heap_for_slots(gpu, strategy, options, n)?;
    let h = Harness::with_slots_per_invocation(gpu, config, n, ROUND_TRIPS)?;
    let phases: [(&str, Params); 2] = [
        ("every lane, 16 B", all(n, 16, 16, 0x7219)),
        (
            "hashed lanes, 4 B to 256 B",
            lanes(600, all(n, 4, max, 0x721a)),
        ),
    ];
    for (phase, p) in phases {
        let phase = &format!("{} x {ROUND_TRIPS} round trips, {phase}", n / ROUND_TRIPS);
        let (tally, _) = no_null_phase(&h, checks, phase, p, |h| h.round_trip(p))?;
        let stats = h.heap.stats()?;
        let ok = tally[TALLY_OK] as u64;
        checks.equal(
            &format!("{phase}: malloc and free calls counted"),
            (stats.malloc_calls, stats.free_calls),
            (ok + tally[TALLY_NULL] as u64, ok),
        );
        checks.equal(
            &format!("{phase}: failures"),
            stats.failures,
            Failures::default(),
        );
        expect_all_freed(&h, strategy, checks, phase)?;
        h.reset()?;
    }
    Ok(())
}
