//! The conformance suite: scenarios that any strategy must pass on any adapter.
//!
//! Every scenario writes a pattern over every allocation and verifies it, checks on the host
//! that no two live allocations share a byte and that none leaves the heap or its segment,
//! and compares the heap's statistics with what the kernels saw. Every dispatch runs under
//! the watchdog, so a hang fails the scenario instead of stalling the run.

mod bad_input;
mod checks;
mod filling;
mod growth;
pub(crate) mod harness;
mod lifecycle;
mod scale;

use std::time::{Duration, Instant};

use checks::Checks;
use harness::Params;

use crate::Error;
use gpu_heap::Failures;
use gpu_heap::Gpu;
use gpu_heap::{HeapConfig, OuroborosReport, Strategy};

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
    /// audited phase ([`gpu_heap::GpuHeap::ouroboros_report`]).
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

/// Runs one scenario. GPU errors, watchdog timeouts included, fail the scenario with the
/// error as its problem; after a timeout `hung` is set and the device should not be used
/// again.
pub fn run(gpu: &Gpu, strategy: Strategy, scenario: Scenario, options: &Options) -> ScenarioResult {
    let start = Instant::now();
    let mut checks = Checks::default();
    let outcome = match scenario {
        Scenario::Basic => lifecycle::basic(gpu, strategy, options, &mut checks),
        Scenario::Churn => lifecycle::churn(gpu, strategy, options, &mut checks),
        Scenario::Exhaustion => lifecycle::exhaustion(gpu, strategy, options, &mut checks),
        Scenario::DeviceBadInput => {
            bad_input::device_bad_input(gpu, strategy, options, &mut checks)
        }
        Scenario::HostBadInput => bad_input::host_bad_input(gpu, strategy, options, &mut checks),
        Scenario::Utilisation => filling::utilisation(gpu, strategy, options, &mut checks),
        Scenario::Growth => growth::growth(gpu, strategy, options, &mut checks),
        Scenario::Scale => scale::scale(gpu, strategy, options, &mut checks),
        Scenario::FreeAll => filling::free_all(gpu, strategy, options, &mut checks),
        Scenario::RoundTrip => scale::round_trip(gpu, strategy, options, &mut checks),
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
            result.hung = matches!(e, Error::Heap(gpu_heap::Error::Timeout { .. }));
            result.problems.push(e.to_string());
        }
    }
    result
}

fn heap_config(strategy: Strategy, options: &Options) -> HeapConfig {
    let mut c = HeapConfig::new(options.heap_size)
        .strategy(strategy)
        .watchdog(options.watchdog);
    c = crate::with_pages(c, options.page_size, options.unit_size);
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
