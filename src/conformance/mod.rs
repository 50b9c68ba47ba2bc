//! The conformance suite: scenarios that any strategy must pass on any adapter.
//!
//! Every scenario writes a pattern over every allocation and verifies it, checks on the host
//! that no two live allocations share a byte and that none leaves the heap or its segment,
//! and compares the heap's statistics with what the kernels saw. Every dispatch runs under
//! the watchdog, so a hang fails the scenario instead of stalling the run.

pub(crate) mod harness;

use std::time::{Duration, Instant};

use harness::{
    Harness, Params, TALLY_BAD_INPUT, TALLY_CORRUPTED, TALLY_FREE_FAILED, TALLY_NULL, TALLY_OK,
};

use crate::error::Error;
use crate::gpu::Gpu;
use crate::layout::{DeviceCaps, HeapLayout};
use crate::stats::{Failures, HeapStats};
use crate::{GpuHeap, HeapConfig, OuroborosReport, SegmentBinding, Strategy};

/// One scenario of the suite.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Scenario {
    /// N invocations malloc, write, verify and free, for sizes from 4 B to the maximum.
    Basic,
    /// Rounds of random malloc/free with mixed sizes across dispatches.
    Churn,
    /// Allocate until NULL, free everything, and allocate the full capacity again.
    Exhaustion,
    /// malloc(0), oversized requests, free(0), invalid and double frees on the device.
    DeviceBadInput,
    /// Typed errors for bad heap configurations on the host.
    HostBadInput,
    /// The out-of-memory utilisation test of the Ouroboros paper (ICS 2020, section 6.1.3):
    /// allocate 16 B until NULL on a fixed heap of [`UTILISATION_HEAP`] bytes, in dispatches
    /// of [`UTILISATION_ROUND`] mallocs, and report the fraction of the heap handed out.
    /// Ouroboros variants must reach 98%. Then the same demand in one dispatch,
    /// whose utilisation is reported only.
    Utilisation,
    /// A heap that grows without copying: allocate until out of memory, grow (by
    /// `maintain` on the pressure signal, then explicitly) and keep allocating, verify every
    /// pattern, free, trim; with both segment binding schemes.
    Growth,
    /// GPU scale: [`Options::workgroups`] workgroups of 64 invocations, each holding
    /// [`SCALE_PER_INVOCATION`] allocations across dispatches, then a sixteenth of them
    /// holding [`SCALE_DEEP_PER_INVOCATION`] each. Every lane mallocs 16 B; then
    /// a hashed subset of lanes allocates, a hashed subset of blocks is freed, the same lanes
    /// allocate mixed sizes into the freed slots, and everything is freed. No NULL, no failed
    /// free, and the live counters agree with what the host sees after every dispatch. The
    /// heap holds twice what all slots take at [`SCALE_MAX_SIZE`] (larger than
    /// [`Options::heap_size`] where that is too small).
    Scale,
    /// A full heap freed at once: fill an 8 MiB heap of 4 segments with 16-byte mallocs in
    /// dispatches of [`UTILISATION_ROUND`] until NULL, free every block in one dispatch (no
    /// free may fail, the live counters must read zero), and fill and free it twice more the
    /// same way: each fill gets at least [`REFILL_FRACTION`] of the first.
    FreeAll,
    /// Mallocs and frees at the same time: [`Options::workgroups`] workgroups of 64
    /// invocations each make [`ROUND_TRIPS`] round trips in one dispatch (malloc, write,
    /// then verify and free the previous round's block), every lane at 16 B, then hashed
    /// lanes at mixed sizes. No NULL, no corruption, no failed free, every call counted, and
    /// the live counters read zero after the dispatch. The heap is sized as in
    /// [`Scenario::Scale`].
    RoundTrip,
}

/// The largest size the scale scenario asks for.
pub const SCALE_MAX_SIZE: u32 = 256;

/// Allocations each invocation holds in the scale scenario.
pub const SCALE_PER_INVOCATION: u32 = 4;

/// Allocations each invocation holds in the scale scenario's second part, on a sixteenth of
/// the invocations (at least 64).
pub const SCALE_DEEP_PER_INVOCATION: u32 = 256;

/// Round trips each invocation makes in the round-trip scenario.
pub const ROUND_TRIPS: u32 = 8;

/// Each later fill of the free-all scenario must reach this fraction of the first.
pub const REFILL_FRACTION: f64 = 0.95;

/// The heap of the utilisation scenario: 8 MiB, half a million 16-byte allocations.
pub const UTILISATION_HEAP: u64 = 8 << 20;

/// Mallocs per dispatch in the utilisation scenario's rounds (64 KiB of 16-byte blocks).
pub const UTILISATION_ROUND: u32 = 4096;

impl Scenario {
    pub const ALL: &'static [Scenario] = &[
        Scenario::Basic,
        Scenario::Churn,
        Scenario::Exhaustion,
        Scenario::DeviceBadInput,
        Scenario::HostBadInput,
        Scenario::Utilisation,
        Scenario::Growth,
        Scenario::Scale,
        Scenario::FreeAll,
        Scenario::RoundTrip,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Scenario::Basic => "basic",
            Scenario::Churn => "churn",
            Scenario::Exhaustion => "exhaustion",
            Scenario::DeviceBadInput => "device-bad-input",
            Scenario::HostBadInput => "host-bad-input",
            Scenario::Utilisation => "utilisation",
            Scenario::Growth => "growth",
            Scenario::Scale => "scale",
            Scenario::FreeAll => "free-all",
            Scenario::RoundTrip => "round-trip",
        }
    }
}

/// Parameters of a conformance run.
#[derive(Clone, Debug)]
pub struct Options {
    /// Heap size for every scenario but exhaustion (which uses a small heap of 4 segments).
    pub heap_size: u64,
    /// Caps segment sizes, to exercise several segments on a small heap.
    pub max_segment_size: Option<u64>,
    /// Page size of the page-based strategies (RW, RW-BM, CoRW).
    pub page_size: u32,
    /// RW_malloc's unit size.
    pub unit_size: u32,
    /// Invocations (slots) per dispatch.
    pub slots: u32,
    /// Rounds of the churn scenario.
    pub churn_rounds: u32,
    /// Workgroups (of 64 invocations) of the scale scenario: 1024 or more on a real GPU.
    pub workgroups: u32,
    /// Per-dispatch watchdog.
    pub watchdog: Duration,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            heap_size: 512 << 20,
            max_segment_size: None,
            page_size: 256,
            unit_size: 16,
            slots: 16_384,
            churn_rounds: 8,
            workgroups: 1024,
            watchdog: Duration::from_secs(60),
        }
    }
}

/// The outcome of one scenario for one strategy.
#[derive(Clone, Debug, serde::Serialize)]
pub struct ScenarioResult {
    pub strategy: Strategy,
    pub scenario: Scenario,
    pub passed: bool,
    /// malloc and free calls made.
    pub operations: u64,
    /// Failed calls by cause, from the heap's statistics.
    pub failures: Failures,
    /// Allocations whose pattern did not verify.
    pub corrupted: u64,
    /// Pairs of live allocations found sharing bytes.
    pub overlaps: u64,
    /// What went wrong, one line per failed check; empty when passed.
    pub problems: Vec<String>,
    /// The watchdog fired: the GPU work is presumed hung.
    pub hung: bool,
    /// Utilisation scenario: the fraction of the heap's bytes handed out as 16-byte
    /// allocations before the first NULL.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub utilisation: Option<f64>,
    /// Utilisation scenario: the same bytes over the heap plus its metadata buffer (queues,
    /// bitmaps, statistics), for strategies that keep state outside the heap.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub utilisation_with_meta: Option<f64>,
    /// Utilisation scenario: the same, when all the mallocs are made in one dispatch.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub burst_utilisation: Option<f64>,
    /// Ouroboros strategies: where the heap's chunks and pages were at the end of each
    /// audited phase ([`GpuHeap::ouroboros_report`]).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub ouroboros: Vec<PhaseReport>,
    pub seconds: f64,
}

/// An [`OuroborosReport`] taken at the end of a phase of a scenario.
#[derive(Clone, Debug, serde::Serialize)]
pub struct PhaseReport {
    pub phase: String,
    pub report: OuroborosReport,
}

/// Collects failed checks and the counters of a scenario.
#[derive(Default)]
struct Checks {
    problems: Vec<String>,
    corrupted: u64,
    overlaps: u64,
    operations: u64,
    failures: Failures,
    utilisation: Option<f64>,
    utilisation_with_meta: Option<f64>,
    burst_utilisation: Option<f64>,
    ouroboros: Vec<PhaseReport>,
}

impl Checks {
    fn expect(&mut self, ok: bool, what: impl FnOnce() -> String) {
        if !ok {
            self.problems.push(what());
        }
    }

    fn equal<T: PartialEq + std::fmt::Debug>(&mut self, what: &str, got: T, want: T) {
        self.expect(got == want, || {
            format!("{what}: got {got:?}, expected {want:?}")
        });
    }

    /// Adds a harness's verification tally and slot placement to the checks.
    /// Returns the tally and the number of live slots.
    fn placement_and_tally(&mut self, h: &Harness, phase: &str) -> crate::Result<(Vec<u32>, u64)> {
        let tally = h.tally()?;
        let p = h.placement()?;
        self.corrupted += tally[TALLY_CORRUPTED] as u64;
        self.overlaps += p.overlaps;
        self.equal(
            &format!("{phase}: corrupted allocations"),
            tally[TALLY_CORRUPTED],
            0,
        );
        self.equal(&format!("{phase}: overlapping allocations"), p.overlaps, 0);
        self.equal(
            &format!("{phase}: allocations outside heap or segment"),
            p.misplaced,
            0,
        );
        self.equal(
            &format!("{phase}: frees not OK"),
            tally[TALLY_FREE_FAILED],
            0,
        );
        Ok((tally, p.live))
    }

    /// Ends a phase: adds the calls and failures of the harness's heap since they were
    /// last counted, and audits the heap.
    fn finish(&mut self, h: &Harness, stats: &HeapStats, phase: &str) -> crate::Result<()> {
        let before = h.count(*stats);
        self.operations += stats.malloc_calls + stats.free_calls;
        self.operations -= before.malloc_calls + before.free_calls;
        self.failures += stats.failures.since(&before.failures);
        self.audit(&h.heap, phase)
    }

    /// Audits an Ouroboros heap between dispatches: no page may be unaccounted for and no
    /// queue chunk unreachable (either is memory the heap has lost for good).
    fn audit(&mut self, heap: &GpuHeap, phase: &str) -> crate::Result<()> {
        if let Some(report) = heap.ouroboros_report()? {
            if let Some(u) = report.unaccounted_units() {
                self.equal(&format!("{phase}: page units unaccounted for"), u, 0);
            }
            if let Some(u) = report.unreachable_queue_chunks {
                self.equal(&format!("{phase}: unreachable queue chunks"), u, 0);
            }
            self.ouroboros.push(PhaseReport {
                phase: phase.to_string(),
                report,
            });
        }
        Ok(())
    }
}

/// Runs one scenario. GPU errors, watchdog timeouts included, fail the scenario with the
/// error as its problem; after a timeout `hung` is set and the device should not be used
/// again.
pub fn run(gpu: &Gpu, strategy: Strategy, scenario: Scenario, options: &Options) -> ScenarioResult {
    let start = Instant::now();
    let mut checks = Checks::default();
    let outcome = match scenario {
        Scenario::Basic => basic(gpu, strategy, options, &mut checks),
        Scenario::Churn => churn(gpu, strategy, options, &mut checks),
        Scenario::Exhaustion => exhaustion(gpu, strategy, options, &mut checks),
        Scenario::DeviceBadInput => device_bad_input(gpu, strategy, options, &mut checks),
        Scenario::HostBadInput => host_bad_input(gpu, strategy, options, &mut checks),
        Scenario::Utilisation => utilisation(gpu, strategy, options, &mut checks),
        Scenario::Growth => growth(gpu, strategy, options, &mut checks),
        Scenario::Scale => scale(gpu, strategy, options, &mut checks),
        Scenario::FreeAll => free_all(gpu, strategy, options, &mut checks),
        Scenario::RoundTrip => round_trip(gpu, strategy, options, &mut checks),
    };
    let mut result = ScenarioResult {
        strategy,
        scenario,
        passed: false,
        operations: checks.operations,
        failures: checks.failures,
        corrupted: checks.corrupted,
        overlaps: checks.overlaps,
        problems: checks.problems,
        hung: false,
        utilisation: checks.utilisation,
        utilisation_with_meta: checks.utilisation_with_meta,
        burst_utilisation: checks.burst_utilisation,
        ouroboros: checks.ouroboros,
        seconds: start.elapsed().as_secs_f64(),
    };
    match outcome {
        Ok(()) => result.passed = result.problems.is_empty(),
        Err(e) => {
            result.hung = matches!(e, Error::Timeout { .. });
            result.problems.push(e.to_string());
        }
    }
    result
}

fn heap_config(strategy: Strategy, options: &Options) -> HeapConfig {
    let mut c = HeapConfig::new(options.heap_size)
        .strategy(strategy)
        .page_size(options.page_size)
        .unit_size(options.unit_size)
        .watchdog(options.watchdog);
    if let Some(max) = options.max_segment_size {
        c = c.max_segment_size(max);
    }
    c
}

/// 4 B, a few odd sizes, then powers of two up to the maximum, and the maximum.
fn size_ladder(max: u32) -> Vec<u32> {
    let mut sizes: Vec<u32> = [4, 12, 24, 100].into_iter().filter(|&s| s <= max).collect();
    let mut p = 16;
    while p <= max {
        sizes.push(p);
        p *= 2;
    }
    sizes.push(max);
    sizes.sort_unstable();
    sizes.dedup();
    sizes
}

/// `p` with only a hashed `permille` of the invocations allocating.
fn lanes(permille: u32, p: Params) -> Params {
    Params {
        malloc_permille: permille,
        ..p
    }
}

fn all(slots: u32, size_min: u32, size_max: u32, seed: u32) -> Params {
    Params {
        slots,
        size_min,
        size_max,
        seed,
        malloc_permille: 1000,
        free_permille: 1000,
        ..Params::default()
    }
}

fn basic(
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

fn churn(
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

/// After a free pass over every live slot: no free failed, no slot is left live, and the
/// live counters read exactly zero. Bump releases nothing on free: its counters must still
/// agree with each other, and read zero after the reset that gives its memory back.
fn expect_all_freed(
    h: &Harness,
    strategy: Strategy,
    checks: &mut Checks,
    what: &str,
) -> crate::Result<()> {
    let (_, live) = checks.placement_and_tally(h, &format!("{what}, after free"))?;
    checks.equal(&format!("{what}: live slots after free"), live, 0);
    let stats = h.heap.stats()?;
    checks.finish(h, &stats, &format!("{what}, after free"))?;
    if !strategy.reuses_memory() {
        checks.expect(
            (stats.allocations_live == 0) == (stats.bytes_live == 0)
                && stats.allocations_live <= stats.malloc_calls,
            || format!("{what}: bump's live counters disagree: {stats:?}"),
        );
        h.reset()?;
    }
    let stats = h.heap.stats()?;
    checks.equal(
        &format!("{what}: live allocations and bytes after freeing all"),
        (stats.allocations_live, stats.bytes_live),
        (0, 0),
    );
    Ok(())
}

fn exhaustion(
    gpu: &Gpu,
    strategy: Strategy,
    options: &Options,
    checks: &mut Checks,
) -> crate::Result<()> {
    // A small heap of four segments, bound separately: every allocation races for the last
    // free memory, blocks meet segment boundaries, and the fallback binding is exercised.
    let config = HeapConfig::new(1 << 20)
        .strategy(strategy)
        .page_size(options.page_size.min(4096))
        .max_segment_size(256 << 10)
        .segment_binding(SegmentBinding::Separate)
        .watchdog(options.watchdog);
    let layout_probe = HeapLayout::plan(&config, &DeviceCaps::of(&gpu.device))?;
    let size = match strategy {
        Strategy::Bump => 3000, // not a divisor of a segment: blocks meet its end
        _ => layout_probe.max_alloc,
    };
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
        if strategy == Strategy::Bump {
            // A block abandoned at a segment's end costs at most one block per boundary.
            checks.expect(ok <= capacity && ok + segments > capacity, || {
                format!(
                    "{pass}: {ok} allocations, expected {capacity} minus at most {} at segment ends",
                    segments - 1
                )
            });
        } else {
            checks.equal(&format!("{pass}: successful mallocs"), ok, capacity);
        }
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

fn device_bad_input(
    gpu: &Gpu,
    strategy: Strategy,
    options: &Options,
    checks: &mut Checks,
) -> crate::Result<()> {
    let h = Harness::new(gpu, heap_config(strategy, options), options.slots)?;
    h.clear_tally();
    h.bad_input()?;
    let tally = h.tally()?;
    let got = &tally[TALLY_BAD_INPUT..TALLY_BAD_INPUT + 9];
    // Statuses: 0 ok, 3 invalid request, 4 invalid free. Steps: malloc(0), malloc(max + 1),
    // malloc(u32::MAX), free(NULL), malloc(16), free(p + 1), free(u32::MAX), free(p), free(p).
    let (want, invalid_frees): ([u32; 9], u64) = if strategy == Strategy::Bump {
        // Bump rejects handles past its head (p + 1 is, on a fresh heap) but cannot tell a
        // freed block from a live one.
        ([3, 3, 3, 0, 0, 4, 4, 0, 0], 2)
    } else {
        ([3, 3, 3, 0, 0, 4, 4, 0, 4], 3)
    };
    checks.equal("statuses of the bad-input steps", got, &want[..]);
    checks.equal("corrupted by invalid frees", tally[TALLY_CORRUPTED], 0);
    let stats = h.heap.stats()?;
    checks.equal(
        "invalid requests counted",
        stats.failures.invalid_request,
        3,
    );
    checks.equal(
        "invalid frees counted",
        stats.failures.invalid_free,
        invalid_frees,
    );
    checks.equal(
        "malloc calls counted (free(0) is not a call)",
        (stats.malloc_calls, stats.free_calls),
        (4, 4),
    );
    if strategy.reuses_memory() {
        checks.equal("live after bad input", stats.allocations_live, 0);
    }
    checks.finish(&h, &stats, "bad input")?;
    // The heap still works: a full round of mallocs on the same heap.
    let size = h.heap.layout().max_alloc.min(256);
    h.clear_tally();
    let p = all(options.slots, size, size, 99);
    h.alloc(p)?;
    h.free(p)?;
    let tally = h.tally()?;
    checks.equal("mallocs after bad input", tally[TALLY_OK], options.slots);
    expect_all_freed(&h, strategy, checks, "round after bad input")
}

/// The heap that the utilisation and free-all scenarios fill with 16-byte blocks.
fn filled_heap(strategy: Strategy, options: &Options) -> HeapConfig {
    HeapConfig::new(UTILISATION_HEAP)
        .strategy(strategy)
        .page_size(options.page_size)
        .unit_size(options.unit_size)
        .watchdog(options.watchdog)
}

/// The layout of a heap to fill, and slots for more blocks of 16 bytes than it holds (the
/// last ones must see NULL).
fn fill_plan(gpu: &Gpu, config: &HeapConfig) -> crate::Result<(HeapLayout, u32)> {
    let layout = HeapLayout::plan(config, &DeviceCaps::of(&gpu.device))?;
    let n = (layout.bytes / 16 + layout.bytes / 256) as u32;
    Ok((layout, n))
}

fn utilisation(
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
    checks.burst_utilisation = Some(fraction(ok));
    Ok(())
}

/// The Ouroboros paper's out-of-memory protocol: dispatches of [`UTILISATION_ROUND`] mallocs
/// into the empty slots of `p`, one after the other, until one of them sees NULL. The
/// tally is cleared first.
fn fill_in_rounds(h: &Harness, p: Params) -> crate::Result<()> {
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
fn verify_and_free_filled(
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

fn free_all(
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

/// The invocations of the GPU-scale scenarios: [`Options::workgroups`] of 64.
fn gpu_scale_invocations(options: &Options) -> u32 {
    (options.workgroups * 64).min(harness::MAX_SLOTS)
}

fn scale(
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
fn heap_for_slots(
    gpu: &Gpu,
    strategy: Strategy,
    options: &Options,
    slots: u32,
) -> crate::Result<(HeapConfig, u32)> {
    let config = heap_config(strategy, options);
    let planned = HeapLayout::plan(&config, &DeviceCaps::of(&gpu.device))?;
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
fn no_null_phase(
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
fn scale_with(
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

fn round_trip(
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

fn host_bad_input(
    gpu: &Gpu,
    strategy: Strategy,
    options: &Options,
    checks: &mut Checks,
) -> crate::Result<()> {
    let (device, queue) = (&gpu.device, &gpu.queue);
    let base = heap_config(strategy, options);
    let mut expect =
        |what: &str, result: crate::Result<GpuHeap>, ok: fn(&Error) -> bool| match result {
            Err(e) if ok(&e) => {}
            Err(e) => checks.problems.push(format!("{what}: wrong error: {e}")),
            Ok(_) => checks.problems.push(format!("{what}: accepted")),
        };
    let mut zero = base.clone();
    zero.size = 0;
    expect(
        "zero size",
        GpuHeap::with_config(device, queue, zero),
        |e| matches!(e, Error::ZeroSize),
    );
    let mut huge = base.clone();
    huge.size = 1 << 40;
    expect(
        "1 TiB heap",
        GpuHeap::with_config(device, queue, huge),
        |e| matches!(e, Error::TooLarge { .. }),
    );
    let too_many = base
        .clone()
        .max_segment_size(1 << 20)
        .segment_binding(SegmentBinding::Separate)
        .max_separate_bindings(2);
    expect(
        "8 separate segments over a cap of 2",
        GpuHeap::with_config(
            device,
            queue,
            HeapConfig {
                size: 8 << 20,
                ..too_many
            },
        ),
        |e| matches!(e, Error::TooLarge { .. }),
    );
    if matches!(strategy, Strategy::RwBm | Strategy::Rw | Strategy::Corw) {
        expect(
            "page size 48",
            GpuHeap::with_config(device, queue, base.clone().page_size(48)),
            |e| matches!(e, Error::InvalidConfig(_)),
        );
    }
    if !strategy.supports_growth() {
        expect(
            "a growable heap of a strategy without growth hooks",
            GpuHeap::with_config(device, queue, base.clone().max_size(2 * base.size)),
            |e| matches!(e, Error::GrowthUnsupported { .. }),
        );
    }
    if strategy == Strategy::RwMalloc {
        expect(
            "unit size 48",
            GpuHeap::with_config(device, queue, base.clone().unit_size(48)),
            |e| matches!(e, Error::InvalidConfig(_)),
        );
        expect(
            "unit size 8",
            GpuHeap::with_config(device, queue, base.clone().unit_size(8)),
            |e| matches!(e, Error::InvalidConfig(_)),
        );
    }
    // A device without binding arrays, asked for a binding array of segments.
    let (bare, bare_queue) =
        pollster::block_on(gpu.adapter.request_device(&wgpu::DeviceDescriptor {
            label: Some("gpu-heap without binding arrays"),
            required_limits: gpu.adapter.limits(),
            ..Default::default()
        }))
        .map_err(|e| Error::Gpu {
            what: "requesting a device without features".into(),
            message: e.to_string(),
        })?;
    let arrays = base
        .clone()
        .max_segment_size(1 << 20)
        .segment_binding(SegmentBinding::BindingArray);
    expect(
        "binding array without the features",
        GpuHeap::with_config(
            &bare,
            &bare_queue,
            HeapConfig {
                size: 4 << 20,
                ..arrays
            },
        ),
        |e| matches!(e, Error::MissingFeatures { .. }),
    );
    Ok(())
}

fn growth(
    gpu: &Gpu,
    strategy: Strategy,
    options: &Options,
    checks: &mut Checks,
) -> crate::Result<()> {
    let arrays = gpu
        .device
        .features()
        .contains(crate::layout::BINDING_ARRAY_FEATURES);
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
fn growth_with(
    gpu: &Gpu,
    strategy: Strategy,
    options: &Options,
    checks: &mut Checks,
    binding: SegmentBinding,
) -> crate::Result<()> {
    use crate::growth::GrowthPolicy;
    const SEGMENT: u64 = 1 << 20;
    let config = HeapConfig::new(2 * SEGMENT)
        .max_size(8 * SEGMENT)
        .strategy(strategy)
        .page_size(options.page_size.min(4096))
        .unit_size(options.unit_size)
        .max_segment_size(SEGMENT)
        .segment_binding(binding)
        .max_separate_bindings(8)
        .watchdog(options.watchdog);
    let layout = HeapLayout::plan(&config, &DeviceCaps::of(&gpu.device))?;
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
    let size = match strategy {
        Strategy::Bump => 3000,
        Strategy::RwMalloc => 512,
        _ => layout.max_alloc,
    };
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
        let committed = h.heap.committed_bytes() / crate::layout::UNIT_BYTES;
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
    // How many of `expected` allocations a strategy must get: exact for pages, all but one
    // per segment boundary for bump, and within 10 % for RW_malloc's runs.
    let enough = |ok: u64, expected: u64, segments: u64| match strategy {
        Strategy::Bump => ok <= expected && ok + segments > expected,
        Strategy::RwMalloc => ok <= expected && ok * 10 >= expected * 9,
        _ => ok == expected,
    };

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
        Err(Error::GrowBeyondMax { .. }) => {}
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
        Err(Error::TrimBelowInitial { .. }) => {}
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
    } else if strategy != Strategy::Bump {
        // Slots fill 3/4 of the heap at random places: the last segment holds some.
        checks.equal(&format!("{tag}: released while in use"), released, 0);
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
