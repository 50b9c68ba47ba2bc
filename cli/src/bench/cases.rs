//! The survey's test cases: which cells each test has, and the run over them (how one cell
//! is measured: `measure`).

mod measure;

use super::engine::{Capacity, Engine};
use super::{Options, Record, Report, Test};
use crate::{Error, Result};
use gpu_heap::Gpu;
use gpu_heap::UNIT_BYTES;
use gpu_heap::{HeapConfig, Statistics, Strategy};

/// One measurement: a test, a strategy, a thread count and a size (or size range).
#[derive(Clone, Copy, Debug)]
struct Cell {
    test: Test,
    strategy: Strategy,
    threads: u32,
    size_lo: u32,
    size_hi: u32,
}

impl Cell {
    fn label(&self) -> String {
        let size = if self.size_hi > self.size_lo {
            format!("{}..{} B", self.size_lo, self.size_hi)
        } else {
            format!("{} B", self.size_lo)
        };
        format!(
            "{} {} {} x {size}",
            self.test.name(),
            self.strategy,
            self.threads
        )
    }

    fn record(&self, rounds: u32) -> Record {
        Record {
            test: self.test.name().into(),
            strategy: self.strategy.name().into(),
            threads: self.threads,
            size: self.size_lo,
            size_hi: (self.size_hi > self.size_lo).then_some(self.size_hi),
            rounds,
            ..Record::default()
        }
    }
}

/// Powers of two from 4 B to 8 KiB, and the midpoints between them.
fn size_ladder() -> Vec<u32> {
    let mut sizes = Vec::new();
    let mut s = 4;
    while s <= 8192 {
        sizes.push(s);
        if s < 8192 {
            sizes.push(s + s / 2);
        }
        s *= 2;
    }
    sizes
}

fn powers_of_two(from: u32, to: u32) -> Vec<u32> {
    (from.trailing_zeros()..=to.trailing_zeros())
        .map(|e| 1 << e)
        .collect()
}

/// The cells of `test`, as (threads, size_lo, size_hi).
fn grid(test: Test, quick: bool) -> Vec<(u32, u32, u32)> {
    let fixed = |threads: &[u32], sizes: &[u32]| -> Vec<(u32, u32, u32)> {
        threads
            .iter()
            .flat_map(|&t| sizes.iter().map(move |&s| (t, s, s)))
            .collect()
    };
    let ranges = |threads: &[u32], his: &[u32]| -> Vec<(u32, u32, u32)> {
        threads
            .iter()
            .flat_map(|&t| his.iter().map(move |&hi| (t, 4, hi)))
            .collect()
    };
    let pow2_sizes = powers_of_two(4, 8192);
    match (test, quick) {
        (Test::Alloc, false) => fixed(&[10_000, 100_000, 1_000_000], &size_ladder()),
        (Test::Alloc, true) => fixed(&[1000], &[16, 1024]),
        // The cells of the peers' accumulate table (BENCHMARKS.md).
        (Test::Accumulate, false) => vec![
            (10_000, 16, 16),
            (100_000, 16, 16),
            (100_000, 1024, 1024),
            (100_000, 8192, 8192),
            (1_000_000, 16, 16),
            (1_000_000, 256, 256),
        ],
        (Test::Accumulate, true) => fixed(&[1000], &[16]),
        (Test::Subgroup, false) => fixed(&[10_000, 100_000], &pow2_sizes),
        (Test::Subgroup, true) => fixed(&[1000], &[16]),
        (Test::Mixed, false) => ranges(&[100_000], &pow2_sizes[1..]),
        (Test::Mixed, true) => ranges(&[1000], &[64, 1024]),
        (Test::Scaling, false) => {
            let threads = powers_of_two(1, 1 << 20);
            fixed(&threads, &[16, 64, 512, 8192])
        }
        (Test::Scaling, true) => fixed(&[1, 16, 256, 1024], &[16]),
        (Test::Fragmentation, false) => fixed(&[100_000], &pow2_sizes),
        (Test::Fragmentation, true) => fixed(&[1000], &[16, 1024]),
        (Test::OutOfMemory, false) => fixed(&[100_000], &powers_of_two(16, 8192)),
        (Test::OutOfMemory, true) => fixed(&[1000], &[16, 1024]),
        (Test::Exhaust, false) => powers_of_two(8, 128 << 10)
            .into_iter()
            .map(|s| ((1 << 20).min(EXHAUST_HEAP / s), s, s))
            .collect(),
        (Test::Exhaust, true) => fixed(&[1024], &[16, 1024]),
        // The size is the batch (the paper's Figure 5 uses 512, UAlloc's).
        (Test::Semaphores, false) => {
            fixed(&(0..=6).map(|e| 256 << (2 * e)).collect::<Vec<_>>(), &[512])
        }
        (Test::Semaphores, true) => fixed(&[1000], &[512]),
        (Test::WorkGeneration, false) => {
            let threads: Vec<u32> = (0..=10).map(|e| 1 << (2 * e)).collect();
            ranges(&threads, &[64, 4096])
        }
        (Test::WorkGeneration, true) => ranges(&[1, 64, 1024], &[64, 4096]),
        (Test::Write, false) => fixed(&[100_000], &pow2_sizes),
        (Test::Write, true) => fixed(&[1000], &[16, 1024]),
        (Test::Init, _) => vec![(0, 0, 0)],
    }
}

/// The cells of `test` that the options select.
fn selected(test: Test, options: &Options) -> Vec<(u32, u32, u32)> {
    grid(test, options.quick)
        .into_iter()
        .filter(|&(t, _, hi)| {
            test == Test::Init
                || (options.only_threads.is_empty() || options.only_threads.contains(&t))
                    && (options.only_sizes.is_empty() || options.only_sizes.contains(&hi))
        })
        .collect()
}

/// The exhaust test's largest heap (the paper's 512 MB pool).
const EXHAUST_HEAP: u32 = 512 << 20;

/// Rounds of free/malloc between the fragmentation test's two measurements.
fn fragmentation_rounds(quick: bool) -> u32 {
    if quick {
        5
    } else {
        100
    }
}

/// The heap a cell runs on: strategies with fixed pages get pages of the cell's largest
/// request (rounded up to a power of two, at least 16 B).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct HeapKey {
    strategy: Strategy,
    size: u64,
    page: u32,
}

fn heap_key(cell: &Cell, options: &Options) -> HeapKey {
    let size = match cell.test {
        Test::OutOfMemory => options.oom_heap_size,
        // Exactly what the cell's mallocs ask for.
        Test::Exhaust => cell.threads as u64 * cell.size_hi as u64,
        _ => options.heap_size,
    };
    // Init measures the heap the strategy is configured with by default.
    let page = if cell.strategy.has_fixed_pages() && cell.test != Test::Init {
        cell.size_hi.max(16).next_power_of_two()
    } else {
        HeapConfig::new(size).random_walk.page_size
    };
    HeapKey {
        strategy: cell.strategy,
        size,
        page,
    }
}

fn capacity(options: &Options, limits: &wgpu::Limits) -> Capacity {
    let mut threads = 1;
    let mut flat: u64 = 16;
    for &test in &options.tests {
        for (t, _, hi) in selected(test, options) {
            threads = threads.max(t);
            if test == Test::Write {
                flat = flat.max(t as u64 * (hi as u64).next_multiple_of(UNIT_BYTES));
            }
        }
    }
    let binding = limits
        .max_storage_buffer_binding_size
        .min(limits.max_buffer_size);
    Capacity {
        threads,
        flat_bytes: flat.min(binding),
    }
}

pub(super) fn run(
    gpu: &Gpu,
    options: &Options,
    mut progress: impl FnMut(super::Progress<'_>),
) -> Result<Report> {
    let mut cells = Vec::new();
    for &strategy in &options.strategies {
        for &test in &options.tests {
            for (threads, size_lo, size_hi) in selected(test, options) {
                cells.push(Cell {
                    test,
                    strategy,
                    threads,
                    size_lo,
                    size_hi,
                });
            }
        }
    }
    // Cells that share a heap run back to back, so each heap is built once; results are
    // reported in the order of the options.
    let mut order: Vec<usize> = (0..cells.len()).collect();
    order.sort_by_key(|&i| {
        let c = &cells[i];
        let k = heap_key(c, options);
        (
            options.strategies.iter().position(|s| *s == c.strategy),
            k.size,
            k.page,
        )
    });
    let capacity = capacity(options, &gpu.device.limits());
    // A heap this device cannot hold (say, a flag per 16-byte page of 8 GiB) is not an
    // error of the run: its cells say why they have no numbers.
    let mut engine: Option<(HeapKey, std::result::Result<Engine, String>)> = None;
    // Records in the order cells finish, with their index in `cells`.
    let mut finished: Vec<usize> = Vec::with_capacity(cells.len());
    let mut report = Report {
        adapter: gpu.describe(),
        date: chrono::Utc::now().format("%Y-%m-%d").to_string(),
        timer: super::Timer::of(&gpu.device),
        heap_size: options.heap_size,
        rounds: options.rounds,
        quick: options.quick,
        growable: options.growable,
        full_statistics: options.statistics == Statistics::Full,
        results: Vec::new(),
        unfinished: cells.len(),
    };
    for (done, &i) in order.iter().enumerate() {
        let cell = &cells[i];
        progress(super::Progress::Starting {
            done,
            total: cells.len(),
            what: &cell.label(),
        });
        let key = heap_key(cell, options);
        if engine.as_ref().map(|(k, _)| *k) != Some(key) {
            drop(engine.take()); // release the old heap's memory before building the next
            let mut config = HeapConfig::new(key.size)
                .strategy(key.strategy)
                .statistics(options.statistics)
                .watchdog(options.watchdog);
            config = crate::with_pages(config, key.page, 16);
            if options.growable && key.strategy.supports_growth() {
                config = config.max_size(key.size * 2);
            }
            let built = match Engine::new(gpu, config, capacity) {
                Err(
                    e @ (Error::Heap(
                        gpu_heap::Error::TooLarge { .. } | gpu_heap::Error::InvalidConfig(_),
                    )
                    | Error::InvalidOptions(_)),
                ) => Err(e.to_string()),
                other => Ok(other?),
            };
            engine = Some((key, built));
        }
        let record = match &engine.as_ref().expect("built above").1 {
            Ok(_) if options.compile_only => Record {
                note: Some("pipelines built, nothing measured".into()),
                ..cell.record(0)
            },
            Ok(e) => measure::measure(e, cell, options)?,
            Err(why) => Record {
                note: Some(format!("no heap: {why}")),
                ..cell.record(options.rounds)
            },
        };
        report.results.push(record);
        finished.push(i);
        report.unfinished = cells.len() - report.results.len();
        progress(super::Progress::Finished {
            record: report.results.last().expect("pushed above"),
            report: &report,
        });
    }
    progress(super::Progress::Starting {
        done: cells.len(),
        total: cells.len(),
        what: "done",
    });
    // Back to the order of the options.
    let mut by_cell: Vec<(usize, Record)> = finished.into_iter().zip(report.results).collect();
    by_cell.sort_by_key(|(i, _)| *i);
    report.results = by_cell.into_iter().map(|(_, r)| r).collect();
    Ok(report)
}
