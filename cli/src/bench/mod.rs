//! The benchmark suite: the test cases of Winter et al.'s survey of GPU allocators ("Are
//! dynamic memory managers on GPUs slow?"), for every strategy and the bump reference in one
//! run, timed with GPU timestamps around the timed pass only.
//!
//! Every timed cell runs one warm-up round and then [`Options::rounds`] rounds, and reports
//! the median, minimum and maximum. Every round counts NULLs by cause (the heap's failure
//! counters) and verifies what it wrote; a cell with failures or corrupted words is marked
//! `failed` in the JSON, the CSV and the plots.
//!
//! Strategies with fixed pages (rw-bm and its kin) get, per cell, a heap whose page is the
//! cell's largest request rounded up to a power of two: they cannot serve larger requests,
//! and smaller pages would make every request NULL.

mod cases;
mod engine;
pub mod grow;
mod output;
mod reference;
mod slow;

use std::time::Duration;

pub use engine::Timer;
pub use output::{write_csv, write_plots};
pub use reference::comparison;
pub use slow::{slow_cells, slow_counts, slow_summary, SlowCell, SLOW_FACTOR};

use gpu_heap::Failures;
use gpu_heap::Strategy;
use gpu_heap::{AdapterDescription, Gpu, Statistics};

/// One test case of the survey.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Test {
    /// N threads malloc one size (timed), write and verify, free (timed); the survey's
    /// protocol, where each round frees what the last allocated.
    Alloc,
    /// As `alloc` without free: rounds stack up on the heap (fresh memory every round).
    Accumulate,
    /// One invocation per subgroup allocates (the survey's warp-based test).
    Subgroup,
    /// Each thread draws its size uniformly from [4, hi].
    Mixed,
    /// 2^0 to 2^20 threads for a few sizes.
    Scaling,
    /// The address range spanned by N allocations, once and after rounds of free/malloc.
    Fragmentation,
    /// Rounds of N allocations on a fixed heap until one fails: utilisation reached.
    OutOfMemory,
    /// Figure 7 of Gelado & Garland (PPoPP 2019): one dispatch whose mallocs ask for
    /// exactly the heap (2^20 threads and a heap of 2^20 times the size up to 512 B, then
    /// a 512 MiB heap and fewer threads), from 8 B to 128 KiB: the allocation rate and the
    /// fraction that failed. A fresh heap every round.
    Exhaust,
    /// Figure 5 of Gelado & Garland: N threads each take one unit from batches of 512, with
    /// the bulk semaphore and with a counting semaphore whose batches one producer at a
    /// time makes (one atomicAdd per batch, the paper's upper limit). Bump heaps only.
    Semaphores,
    /// Each thread produces output of a random size: malloc and write, against a prefix-sum
    /// baseline (count, scan, read the total back, allocate the output, write).
    WorkGeneration,
    /// Each thread writes and reads its allocation, against the same writes into one
    /// contiguous buffer.
    Write,
    /// Time to create a heap (buffers, shader compilation, init pass) and to reset it.
    Init,
}

impl Test {
    pub const ALL: &'static [Test] = &[
        Test::Alloc,
        Test::Accumulate,
        Test::Subgroup,
        Test::Mixed,
        Test::Scaling,
        Test::Fragmentation,
        Test::OutOfMemory,
        Test::Exhaust,
        Test::Semaphores,
        Test::WorkGeneration,
        Test::Write,
        Test::Init,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Test::Alloc => "alloc",
            Test::Accumulate => "accumulate",
            Test::Subgroup => "subgroup",
            Test::Mixed => "mixed",
            Test::Scaling => "scaling",
            Test::Fragmentation => "fragmentation",
            Test::OutOfMemory => "out-of-memory",
            Test::Exhaust => "exhaust",
            Test::Semaphores => "semaphores",
            Test::WorkGeneration => "work-generation",
            Test::Write => "write",
            Test::Init => "init",
        }
    }
}

impl std::str::FromStr for Test {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Test::ALL
            .iter()
            .copied()
            .find(|t| t.name() == s)
            .ok_or_else(|| {
                let names: Vec<_> = Test::ALL.iter().map(|t| t.name()).collect();
                format!("unknown test \"{s}\"; known: {}", names.join(", "))
            })
    }
}

/// What to run.
#[derive(Clone, Debug)]
pub struct Options {
    pub tests: Vec<Test>,
    pub strategies: Vec<Strategy>,
    /// Heap size of every test but out-of-memory.
    pub heap_size: u64,
    /// The fixed heap of the out-of-memory test (the survey: 2 GiB).
    pub oom_heap_size: u64,
    /// Timed rounds per cell (after one warm-up round); the survey's protocol uses 5.
    pub rounds: u32,
    /// The small version: few sizes and thread counts, small heaps.
    pub quick: bool,
    /// Per-dispatch watchdog.
    pub watchdog: Duration,
    /// Only cells with these thread counts (all when empty).
    pub only_threads: Vec<u32>,
    /// Only cells whose size (or upper end of the size range) is one of these (all when
    /// empty).
    pub only_sizes: Vec<u32>,
    /// Heaps that can grow: `heap_size` committed, twice as much reserved
    /// (`HeapConfig::max_size`): measures what the runtime committed limit costs.
    pub growable: bool,
    /// Wall time after which a cell runs no more rounds: cells of the survey's protocol
    /// (alloc, subgroup, mixed, scaling) and accumulate stop their timed rounds (after at
    /// least one), fragmentation its rounds of free and malloc; the other tests run in
    /// full. Such a cell's `rounds` (or `rounds_between`) counts what ran, and its note
    /// says it was cut. `None`: every cell runs in full.
    pub cell_budget: Option<Duration>,
    /// Build every selected cell's heap and pipelines and measure nothing: a process that
    /// runs first, so that the timed one loads its pipelines from the driver's cache
    /// (BENCHMARKS.md, Method: on NVIDIA, pipelines a process has just compiled can run
    /// slower for a while). Its records say so in their note.
    pub compile_only: bool,
    /// After every round of the alloc-like tests and accumulate, read the books of ualloc,
    /// tbuddy and Ouroboros (`GpuHeap::ualloc_report`, `GpuHeap::tbuddy_report`,
    /// `GpuHeap::ouroboros_report`) into the cell's `extra` (`r{round}_` counts: the
    /// classes' semaphores and their bins' free blocks, bins, hidden, unreachable and empty
    /// bins, the tree buddy's unreachable blocks, Ouroboros's malloc events, failed
    /// enqueues, queue chunks and pooled chunks) and note any inconsistency; the random
    /// walks have none to read.
    pub books: bool,
    /// What the heaps count (`HeapConfig::statistics`): failures only by default, so that
    /// the cells time the allocator; `Statistics::Full`, every heap's default, measures
    /// what full statistics cost.
    pub statistics: Statistics,
}

impl Options {
    /// The full suite with the survey's parameters on an 8 GiB heap.
    pub fn full() -> Self {
        Options {
            tests: Test::ALL.to_vec(),
            strategies: Strategy::ALL.to_vec(),
            heap_size: 8 << 30,
            oom_heap_size: 2 << 30,
            rounds: 5,
            quick: false,
            watchdog: Duration::from_secs(60),
            only_threads: Vec::new(),
            only_sizes: Vec::new(),
            growable: false,
            cell_budget: None,
            compile_only: false,
            books: false,
            statistics: Statistics::FailuresOnly,
        }
    }

    /// Everything, small: about a minute on lavapipe.
    pub fn quick() -> Self {
        Options {
            heap_size: 64 << 20,
            oom_heap_size: 8 << 20,
            quick: true,
            // llvmpipe compiles inside the first dispatch, up to ~100 s for the largest
            // Ouroboros kernels on a cold shader cache.
            watchdog: Duration::from_secs(300),
            ..Options::full()
        }
    }
}

/// Median, minimum and maximum of a cell's rounds, in milliseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Timing {
    pub median: f64,
    pub min: f64,
    pub max: f64,
}

impl Timing {
    pub fn of(samples: &[f64]) -> Option<Timing> {
        if samples.is_empty() {
            return None;
        }
        let mut s = samples.to_vec();
        s.sort_by(f64::total_cmp);
        let mid = s.len() / 2;
        let median = if s.len() % 2 == 1 {
            s[mid]
        } else {
            (s[mid - 1] + s[mid]) / 2.0
        };
        Some(Timing {
            median,
            min: s[0],
            max: s[s.len() - 1],
        })
    }
}

/// One cell of one test for one strategy.
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct Record {
    pub test: String,
    pub strategy: String,
    pub threads: u32,
    /// The request size (the lower end where sizes are drawn from a range).
    pub size: u32,
    /// The upper end of the size range (mixed sizes, work generation).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub size_hi: Option<u32>,
    /// Median malloc pass time.
    pub malloc_ms: Option<f64>,
    /// Median free pass time.
    pub free_ms: Option<f64>,
    pub malloc: Option<Timing>,
    pub free: Option<Timing>,
    /// Every timed round's malloc pass time, in the order the rounds ran (the first rounds
    /// after a pipeline compile can be slower: BENCHMARKS.md, Method). Empty in results
    /// written before 2026-11-25.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub malloc_rounds_ms: Vec<f64>,
    /// Every timed round's free pass time, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub free_rounds_ms: Vec<f64>,
    /// Failed calls by cause over all rounds of the cell.
    pub failures: Failures,
    /// Words that read back wrong.
    pub corrupted: u64,
    /// True when anything failed or was corrupted: the times are not comparable.
    pub failed: bool,
    pub rounds: u32,
    /// Test-specific results (write and baseline times, address ranges, utilisation).
    pub extra: std::collections::BTreeMap<String, f64>,
    /// Why a cell was skipped or what limited it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// A whole run.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct Report {
    pub adapter: AdapterDescription,
    pub date: String,
    pub timer: Timer,
    pub heap_size: u64,
    pub rounds: u32,
    pub quick: bool,
    /// Heaps that can grow (see [`Options::growable`]).
    pub growable: bool,
    /// Heaps with full statistics (see [`Options::statistics`]); false in files older than
    /// the option.
    #[serde(default)]
    pub full_statistics: bool,
    pub results: Vec<Record>,
    /// Cells of the run not in `results` yet: nonzero only in the reports that
    /// [`Progress::Finished`] hands out while the run goes on (their results are in the
    /// order the cells finished, not yet in the order of the options).
    #[serde(default)]
    pub unfinished: usize,
}

impl Record {
    /// Keeps every timed round's malloc and free time, in order, with their summaries and
    /// the number of rounds (one malloc time each).
    pub(crate) fn set_rounds(&mut self, mallocs: Vec<f64>, frees: Vec<f64>) {
        self.rounds = mallocs.len() as u32;
        self.malloc = Timing::of(&mallocs);
        self.free = Timing::of(&frees);
        self.malloc_rounds_ms = mallocs;
        self.free_rounds_ms = frees;
    }

    /// What names the cell: test, strategy, threads and sizes (one record per cell in a
    /// report).
    pub fn cell(&self) -> (&str, &str, u32, u32, Option<u32>) {
        (
            &self.test,
            &self.strategy,
            self.threads,
            self.size,
            self.size_hi,
        )
    }
}

impl Report {
    /// Adds the results of `other`, a later part or rerun of the same run: a cell that both
    /// hold keeps `other`'s record, in the place of the earlier one. Refuses a report whose
    /// times do not compare with these (another adapter, timer, heap size, round count,
    /// growable heaps against fixed ones, or full statistics against failures only).
    /// `unfinished` adds up, so it can count cells that `other` measured again.
    pub fn merge(&mut self, other: Report) -> crate::Result<()> {
        let setup = |r: &Report| {
            format!(
                "{} ({:?} timer, {} B heap{}{}, {} rounds)",
                r.adapter.name,
                r.timer,
                r.heap_size,
                if r.growable { ", growable" } else { "" },
                if r.full_statistics {
                    ", full statistics"
                } else {
                    ""
                },
                r.rounds
            )
        };
        let key = |r: &Report| {
            (
                r.adapter.clone(),
                r.timer,
                r.heap_size,
                r.rounds,
                r.growable,
                r.full_statistics,
            )
        };
        if key(self) != key(&other) {
            return Err(crate::Error::IncomparableResults(format!(
                "{} against {}",
                setup(&other),
                setup(self)
            )));
        }
        for record in other.results {
            match self.results.iter_mut().find(|r| r.cell() == record.cell()) {
                Some(earlier) => *earlier = record,
                None => self.results.push(record),
            }
        }
        self.unfinished += other.unfinished;
        Ok(())
    }
}

/// What [`run`] reports while it runs.
#[derive(Clone, Copy, Debug)]
pub enum Progress<'a> {
    /// Cell `done + 1` of `total`, named `what`, starts.
    Starting {
        done: usize,
        total: usize,
        what: &'a str,
    },
    /// A cell finished: its record, and the report of every cell finished so far (so that a
    /// run cut short keeps what it measured).
    Finished {
        record: &'a Record,
        report: &'a Report,
    },
}

/// Runs the suite on `gpu`, calling `progress` before and after each cell.
pub fn run(
    gpu: &Gpu,
    options: &Options,
    progress: impl FnMut(Progress<'_>),
) -> crate::Result<Report> {
    cases::run(gpu, options, progress)
}
