//! The survey's test cases: which cells each test has, and how one cell is measured.

use std::collections::BTreeMap;
use std::time::Instant;

use super::engine::{Capacity, Engine, Kernel, Params, TALLY_BAD_WORDS, TALLY_NULLS};
use super::{Options, Record, Report, Test, Timing};
use crate::error::{Error, Result};
use crate::gpu::Gpu;
use crate::layout::UNIT_BYTES;
use crate::stats::Failures;
use crate::{HeapConfig, Strategy};

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
        // The cells of the accumulate table in DESIGN.md.
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
    let size = if cell.test == Test::OutOfMemory {
        options.oom_heap_size
    } else {
        options.heap_size
    };
    // Init measures the heap the strategy is configured with by default.
    let page = if cell.strategy.has_fixed_pages() && cell.test != Test::Init {
        cell.size_hi.max(16).next_power_of_two()
    } else {
        HeapConfig::new(size).page_size
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
                .page_size(key.page)
                .watchdog(options.watchdog);
            if options.growable && key.strategy.supports_growth() {
                config = config.max_size(key.size * 2);
            }
            let built = match Engine::new(gpu, config, capacity) {
                Err(e @ (Error::TooLarge { .. } | Error::InvalidConfig(_))) => Err(e.to_string()),
                other => Ok(other?),
            };
            engine = Some((key, built));
        }
        let record = match &engine.as_ref().expect("built above").1 {
            Ok(e) => measure(e, cell, options)?,
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

/// Failure counters that survive the resets between rounds of strategies without reuse.
struct FailureLog {
    total: Failures,
    since: Failures,
}

impl FailureLog {
    fn new(e: &Engine) -> Result<Self> {
        Ok(FailureLog {
            total: Failures::default(),
            since: e.failures()?,
        })
    }

    fn note(&mut self, e: &Engine) -> Result<()> {
        let now = e.failures()?;
        self.total += now.since(&self.since);
        self.since = now;
        Ok(())
    }

    /// Ends a round that freed what it allocated: a strategy whose free releases nothing
    /// gets its memory back by a reset (the count survives it).
    fn end_round(&mut self, e: &Engine, strategy: Strategy) -> Result<()> {
        if strategy.reuses_memory() {
            return Ok(());
        }
        self.note(e)?;
        e.reset()?;
        self.since = e.failures()?;
        Ok(())
    }
}

fn finish(e: &Engine, record: &mut Record, failures: Failures, corrupted: u64) -> Result<()> {
    record.failures = failures;
    record.corrupted = corrupted;
    record.failed = failures.total() > 0 || corrupted > 0;
    record.malloc_ms = record.malloc.map(|t| t.median);
    record.free_ms = record.free.map(|t| t.median);
    if record.failed && record.note.is_none() {
        record.note = audit_note(e, "at the end")?;
    }
    Ok(())
}

/// Whether a cell that started at `started` has used up its budget (`Options::cell_budget`).
fn over_budget(options: &Options, started: Instant) -> bool {
    options.cell_budget.is_some_and(|b| started.elapsed() >= b)
}

/// Says in a cell's `note` that it ran `ran` of its `planned` rounds.
fn note_cut(note: &mut Option<String>, options: &Options, ran: u32, planned: u32, what: &str) {
    if ran >= planned {
        return;
    }
    let budget = options.cell_budget.map_or(0.0, |b| b.as_secs_f64());
    let cut = format!("{ran} of {planned} {what}: the cell ran past its budget of {budget} s");
    *note = Some(match note.take() {
        Some(note) => format!("{cut}; {note}"),
        None => cut,
    });
}

/// Where an Ouroboros heap's memory is (`None` for other strategies): its chunks by use and
/// its failed enqueues by cause say why mallocs found none.
fn audit_note(e: &Engine, when: &str) -> Result<Option<String>> {
    Ok(e.heap
        .ouroboros_report()?
        .map(|report| format!("heap {when}: {}", report.summary())))
}

fn measure(e: &Engine, cell: &Cell, options: &Options) -> Result<Record> {
    let mut record = cell.record(options.rounds);
    let params = Params::new(cell.threads, cell.size_lo, cell.size_hi);
    let max_alloc = e.heap.layout().max_alloc;
    if cell.size_hi > max_alloc {
        record.note = Some(format!(
            "over the strategy's largest malloc of {max_alloc} bytes on this heap"
        ));
        return Ok(record);
    }
    e.reset()?;
    e.clear_tally();
    match cell.test {
        Test::Alloc | Test::Mixed | Test::Scaling => survey(e, cell, params, options, record),
        Test::Subgroup if !e.has(Kernel::MallocSubgroup) => {
            record.note = Some("the adapter lacks subgroups".into());
            Ok(record)
        }
        Test::Subgroup => survey(e, cell, params, options, record),
        Test::Accumulate => accumulate(e, params, options, record),
        Test::Fragmentation => fragmentation(e, params, options, record),
        Test::OutOfMemory => out_of_memory(e, params, record),
        Test::WorkGeneration => work_generation(e, params, options, record),
        Test::Write => write(e, params, options, record),
        Test::Init => init(e, options, record),
    }
}

/// The survey's protocol: malloc (timed), write and verify, free (timed), per round.
fn survey(
    e: &Engine,
    cell: &Cell,
    params: Params,
    options: &Options,
    mut record: Record,
) -> Result<Record> {
    let malloc = if cell.test == Test::Subgroup {
        Kernel::MallocSubgroup
    } else {
        Kernel::Malloc
    };
    let mut log = FailureLog::new(e)?;
    let (mut mallocs, mut frees) = (Vec::new(), Vec::new());
    let started = Instant::now();
    for round in 0..=options.rounds {
        let m = e.run(malloc, params)?;
        e.run(Kernel::Write, params)?;
        let f = e.run(Kernel::Free, params)?;
        if round > 0 {
            mallocs.push(m);
            frees.push(f);
        }
        log.end_round(e, cell.strategy)?;
        if round > 0 && over_budget(options, started) {
            break;
        }
    }
    log.note(e)?;
    record.set_rounds(mallocs, frees);
    let corrupted = e.tally()?[TALLY_BAD_WORDS] as u64;
    finish(e, &mut record, log.total, corrupted)?;
    note_cut(
        &mut record.note,
        options,
        record.rounds,
        options.rounds,
        "timed rounds",
    );
    Ok(record)
}

/// Rounds of malloc without free, stacking up on the heap; no warm-up (every round takes
/// fresh memory, which is the point).
fn accumulate(e: &Engine, params: Params, options: &Options, mut record: Record) -> Result<Record> {
    let log = FailureLog::new(e)?;
    let mut mallocs = Vec::new();
    let started = Instant::now();
    for _ in 0..options.rounds {
        mallocs.push(e.run(Kernel::Malloc, params)?);
        e.run(Kernel::Write, params)?;
        if over_budget(options, started) {
            break;
        }
    }
    let failures = e.failures()?.since(&log.since);
    record.set_rounds(mallocs, Vec::new());
    let corrupted = e.tally()?[TALLY_BAD_WORDS] as u64;
    finish(e, &mut record, failures, corrupted)?;
    note_cut(
        &mut record.note,
        options,
        record.rounds,
        options.rounds,
        "rounds",
    );
    Ok(record)
}

/// Bytes between the lowest start and the highest end of the live allocations.
fn address_range(handles: &[u32], size: u32) -> u64 {
    let units = (size as u64).div_ceil(UNIT_BYTES);
    let live = handles.iter().filter(|&&h| h != 0).map(|&h| h as u64 - 1);
    let (lo, hi) = live.fold((u64::MAX, 0), |(lo, hi), u| (lo.min(u), hi.max(u + units)));
    if lo == u64::MAX {
        0
    } else {
        (hi - lo) * UNIT_BYTES
    }
}

fn fragmentation(
    e: &Engine,
    params: Params,
    options: &Options,
    mut record: Record,
) -> Result<Record> {
    let log = FailureLog::new(e)?;
    let size = params.size_hi;
    e.run(Kernel::Malloc, params)?;
    e.run(Kernel::Write, params)?;
    let first = address_range(&e.handles(params.threads)?, size);
    let planned = fragmentation_rounds(options.quick);
    let started = Instant::now();
    let mut rounds = 0;
    while rounds < planned {
        e.run(Kernel::Free, params)?;
        e.run(Kernel::Malloc, params)?;
        e.run(Kernel::Write, params)?;
        rounds += 1;
        if over_budget(options, started) {
            break;
        }
    }
    let after = address_range(&e.handles(params.threads)?, size);
    let ideal = params.threads as u64 * e.heap.layout().granted_bytes(size);
    e.run(Kernel::Free, params)?;
    record.extra = BTreeMap::from([
        ("range_bytes".into(), first as f64),
        ("range_bytes_after_rounds".into(), after as f64),
        ("rounds_between".into(), rounds as f64),
        ("ideal_bytes".into(), ideal as f64),
    ]);
    let failures = e.failures()?.since(&log.since);
    let corrupted = e.tally()?[TALLY_BAD_WORDS] as u64;
    finish(e, &mut record, failures, corrupted)?;
    if !e.heap.config().strategy.reuses_memory() {
        record.note = Some("free releases nothing: the rounds run out of memory".into());
    }
    note_cut(
        &mut record.note,
        options,
        rounds,
        planned,
        "rounds of free and malloc",
    );
    Ok(record)
}

fn out_of_memory(e: &Engine, params: Params, mut record: Record) -> Result<Record> {
    let heap_bytes = e.heap.layout().bytes;
    let per_round = params.threads as u64 * params.size_hi as u64;
    let theoretical = heap_bytes / per_round;
    // Bounded: a correct heap fails by round `theoretical + 1`.
    let mut rounds = 0u64;
    let mut nulls = 0;
    while rounds <= theoretical {
        e.clear_tally();
        e.run(Kernel::Malloc, params)?;
        nulls = e.tally()?[TALLY_NULLS];
        if nulls > 0 {
            break;
        }
        rounds += 1;
    }
    let failures = e.failures()?;
    record.extra = BTreeMap::from([
        ("rounds".into(), rounds as f64),
        ("theoretical_rounds".into(), theoretical as f64),
        (
            "utilisation".into(),
            rounds as f64 / theoretical.max(1) as f64,
        ),
        (
            "bytes_in_last_round".into(),
            (params.threads - nulls) as f64 * params.size_hi as f64,
        ),
    ]);
    // Running out is the point here: only failures other than out-of-memory mark the cell.
    record.failures = failures;
    record.failed = failures.total() > failures.out_of_memory || rounds > theoretical;
    // Utilisation below 1 is the question here, so every Ouroboros cell gets the audit.
    record.note = if rounds > theoretical {
        Some("handed out more than the heap holds".into())
    } else {
        audit_note(e, "when it ran out")?
    };
    Ok(record)
}

fn work_generation(
    e: &Engine,
    params: Params,
    options: &Options,
    mut record: Record,
) -> Result<Record> {
    let mut log = FailureLog::new(e)?;
    let mut mallocs = Vec::new();
    for round in 0..=options.rounds {
        let m = e.run(Kernel::WorkgenMalloc, params)?;
        e.run(Kernel::Free, params)?;
        if round > 0 {
            mallocs.push(m);
        }
        log.end_round(e, e.heap.config().strategy)?;
    }
    log.note(e)?;
    let failures = log.total;
    record.set_rounds(mallocs, Vec::new());

    // The baseline: count, scan, read the total back, allocate, write.
    let limits = e.device().limits();
    let binding = limits
        .max_storage_buffer_binding_size
        .min(limits.max_buffer_size);
    let mut steps: BTreeMap<&str, Vec<f64>> = BTreeMap::new();
    for round in 0..=options.rounds {
        let count = e.run(Kernel::WorkgenCount, params)?;
        let scan = e.scan(params)?;
        let started = Instant::now();
        let total = e.scan_total()? * UNIT_BYTES;
        let readback = started.elapsed().as_secs_f64() * 1e3;
        if total > binding {
            record.note = Some(format!(
                "baseline: {total} bytes of output exceed one storage binding ({binding})"
            ));
            break;
        }
        let started = Instant::now();
        let output = e.device().create_buffer(&wgpu::BufferDescriptor {
            label: Some("baseline output"),
            size: total.max(16),
            usage: wgpu::BufferUsages::STORAGE,
            mapped_at_creation: false,
        });
        let alloc = started.elapsed().as_secs_f64() * 1e3;
        let write = e.workgen_write(params, &output)?;
        if round > 0 {
            for (k, v) in [
                ("count", count),
                ("scan", scan),
                ("readback", readback),
                ("alloc", alloc),
                ("write", write),
                ("total", count + scan + readback + alloc + write),
            ] {
                steps.entry(k).or_default().push(v);
            }
        }
    }
    for (k, v) in steps {
        if let Some(t) = Timing::of(&v) {
            record.extra.insert(format!("baseline_{k}_ms"), t.median);
        }
    }
    finish(e, &mut record, failures, 0)?;
    Ok(record)
}

fn write(e: &Engine, params: Params, options: &Options, mut record: Record) -> Result<Record> {
    let log = FailureLog::new(e)?;
    let stride_bytes = (params.size_hi as u64).next_multiple_of(UNIT_BYTES);
    let flat = Params {
        flat_stride: (stride_bytes / 4) as u32,
        ..params
    };
    let fits = params.threads as u64 * stride_bytes <= e.flat_bytes();
    e.run(Kernel::Malloc, params)?;
    let (mut writes, mut baseline) = (Vec::new(), Vec::new());
    for round in 0..=options.rounds {
        let w = e.run(Kernel::Write, params)?;
        let b = if fits {
            Some(e.run(Kernel::FlatWrite, flat)?)
        } else {
            None
        };
        if round > 0 {
            writes.push(w);
            baseline.extend(b);
        }
    }
    e.run(Kernel::Free, params)?;
    if let Some(t) = Timing::of(&writes) {
        record.extra.insert("write_ms".into(), t.median);
    }
    match Timing::of(&baseline) {
        Some(t) => {
            record.extra.insert("baseline_ms".into(), t.median);
        }
        None => record.note = Some("the baseline buffer exceeds one storage binding".into()),
    }
    let failures = e.failures()?.since(&log.since);
    let corrupted = e.tally()?[TALLY_BAD_WORDS] as u64;
    finish(e, &mut record, failures, corrupted)?;
    Ok(record)
}

fn init(e: &Engine, options: &Options, mut record: Record) -> Result<Record> {
    let mut resets = Vec::new();
    for _ in 0..options.rounds.max(1) {
        let started = Instant::now();
        e.reset()?;
        resets.push(started.elapsed().as_secs_f64() * 1e3);
    }
    record.extra.insert("create_ms".into(), e.init_ms);
    if let Some(t) = Timing::of(&resets) {
        record.extra.insert("reset_ms".into(), t.median);
    }
    record
        .extra
        .insert("heap_bytes".into(), e.heap.layout().bytes as f64);
    finish(e, &mut record, Failures::default(), 0)?;
    Ok(record)
}
