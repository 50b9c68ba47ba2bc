//! How one cell is measured, test by test: rounds under the cell's time budget, failures
//! by cause, a record with the medians and the notes.

use std::collections::BTreeMap;
use std::time::Instant;

use super::super::engine::{Engine, Kernel, Params, TALLY_BAD_WORDS, TALLY_NULLS};
use super::super::{Options, Record, Test, Timing};
use super::{fragmentation_rounds, Cell};
use crate::Result;
use gpu_heap::Failures;
use gpu_heap::Strategy;
use gpu_heap::UNIT_BYTES;

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

/// The books of the default, the tree buddy and Ouroboros after round `round`
/// (`Options::books`): UAlloc's classes' semaphores against their bins' free blocks, the
/// bins, the bins that searches cannot see or reach, the tree buddy's available blocks that
/// descents cannot reach (under UAlloc or alone), Ouroboros's malloc events (counted with
/// full statistics), failed enqueues, queue chunks and pooled chunks, as `r{round}_` entries
/// of the record's `extra`; what does not add up goes into its note.
fn books(e: &Engine, options: &Options, round: u32, record: &mut Record) -> Result<()> {
    if !options.books {
        return Ok(());
    }
    let mut wrong = Vec::new();
    let extra = &mut record.extra;
    let mut put = |key: &str, value: f64| {
        extra.insert(format!("r{round}_{key}"), value);
    };
    if let Some(r) = e.heap.ualloc_report()? {
        let count: i64 = r.classes.iter().map(|c| c.count).sum();
        let free: u64 = r.classes.iter().map(|c| c.free_blocks).sum();
        let bins: u64 = r.classes.iter().map(|c| c.bins).sum();
        for (key, value) in [
            ("count", count as f64),
            ("free_blocks", free as f64),
            ("bins", bins as f64),
            ("hidden", r.hidden_bins as f64),
            ("unreachable", r.unreachable_bins as f64),
            ("empty", r.empty_bins as f64),
        ] {
            put(key, value);
        }
        wrong = r.inconsistencies();
    }
    if let Some(tree) = e.heap.tbuddy_report()? {
        let unreachable: u64 = tree.orders.iter().map(|o| o.unreachable).sum();
        put("tree_unreachable", unreachable as f64);
        wrong.extend(
            tree.inconsistencies()
                .into_iter()
                .map(|w| format!("tree: {w}")),
        );
    }
    if let Some(r) = e.heap.ouroboros_report()? {
        let ev = &r.page_events;
        for (key, value) in [
            ("ouro_missed", ev.missed as f64),
            ("ouro_stranded", ev.stranded as f64),
            ("ouro_out_of_rounds", ev.out_of_rounds as f64),
            ("ouro_unregistered", ev.unregistered as f64),
            ("ouro_failed_enqueues", r.enqueue_failures.total() as f64),
            ("ouro_queue_chunks", r.queue_chunks as f64),
            ("ouro_pooled", r.pooled as f64),
            (
                "ouro_placed",
                r.classes.iter().map(|c| c.placed as f64).sum::<f64>(),
            ),
        ] {
            put(key, value);
        }
        for (cause, n) in r.enqueue_failures.by_cause() {
            put(
                &format!("ouro_failed_{}", cause.replace(' ', "_")),
                n as f64,
            );
        }
        if let Some(n) = r.unreachable_index_chunks.filter(|&n| n > 0) {
            wrong.push(format!(
                "ouroboros: {n} chunks with free pages out of the index's reach"
            ));
        }
        if let Some(n) = r.unaccounted_units().filter(|&n| n != 0) {
            wrong.push(format!("ouroboros: {n} units unaccounted"));
        }
    }
    if !wrong.is_empty() {
        let books = format!("books after round {round}: {}", wrong.join("; "));
        record.note = joined(record.note.take(), Some(books));
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
    *note = joined(Some(cut), note.take());
}

/// Two notes as one, `first` first, or the one there is.
fn joined(first: Option<String>, then: Option<String>) -> Option<String> {
    match (first, then) {
        (Some(first), Some(then)) => Some(format!("{first}; {then}")),
        (first, then) => first.or(then),
    }
}

/// Where an Ouroboros heap's memory is (`None` for other strategies): its chunks by use and
/// its failed enqueues by cause say why mallocs found none.
fn audit_note(e: &Engine, when: &str) -> Result<Option<String>> {
    Ok(e.heap
        .ouroboros_report()?
        .map(|report| format!("heap {when}: {}", report.summary())))
}

pub(super) fn measure(e: &Engine, cell: &Cell, options: &Options) -> Result<Record> {
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
        Test::Exhaust => exhaust(e, params, options, record),
        Test::Semaphores if !e.has(Kernel::SemBulk) => {
            record.note = Some("runs on bump heaps only (--strategy bump)".into());
            Ok(record)
        }
        Test::Semaphores => semaphores(e, params, options, record),
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
        books(e, options, round, &mut record)?;
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
    for round in 0..options.rounds {
        mallocs.push(e.run(Kernel::Malloc, params)?);
        e.run(Kernel::Write, params)?;
        books(e, options, round, &mut record)?;
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

/// One dispatch of mallocs that ask for exactly the heap, on a fresh heap every round:
/// the rate (failed mallocs included, as the paper counts them) and the fraction that
/// failed. Running out is expected; only failures other than out of memory mark the cell.
fn exhaust(e: &Engine, params: Params, options: &Options, mut record: Record) -> Result<Record> {
    let mut mallocs = Vec::new();
    let mut nulls = Vec::new();
    let mut failures = Failures::default();
    let started = Instant::now();
    for round in 0..=options.rounds {
        e.reset()?;
        e.clear_tally();
        let before = e.failures()?;
        let m = e.run(Kernel::Malloc, params)?;
        let round_failures = e.failures()?.since(&before);
        failures += round_failures;
        if round_failures.contention > 0 && record.note.is_none() {
            // Where the blocks were once the dispatch had ended (the tree buddy's books,
            // under tbuddy and ualloc).
            record.note = e
                .heap
                .tbuddy_report()?
                .map(|books| format!("after the first round with contention: {}", books.summary()));
        }
        if round > 0 {
            mallocs.push(m);
            nulls.push(e.tally()?[TALLY_NULLS] as f64);
        }
        if round > 0 && over_budget(options, started) {
            break;
        }
    }
    record.set_rounds(mallocs, Vec::new());
    if let Some(t) = record.malloc {
        let failed = nulls.iter().sum::<f64>() / nulls.len() as f64 / params.threads as f64;
        record.extra = BTreeMap::from([
            (
                "rate_g_per_s".into(),
                params.threads as f64 / t.median / 1e6,
            ),
            ("failed_fraction".into(), failed),
        ]);
    }
    record.malloc_ms = record.malloc.map(|t| t.median);
    record.failures = failures;
    record.failed = failures.total() > failures.out_of_memory;
    Ok(record)
}

/// Figure 5: the bulk semaphore's pass and the counting semaphore's, each on a fresh heap,
/// per round. The malloc column is the bulk semaphore, the free column the counting one.
fn semaphores(e: &Engine, params: Params, options: &Options, mut record: Record) -> Result<Record> {
    let (mut bulk, mut counting) = (Vec::new(), Vec::new());
    let mut nulls = [0u32; 2];
    let started = Instant::now();
    for round in 0..=options.rounds {
        let mut pass = |kernel, k: usize| -> Result<f64> {
            e.reset()?;
            e.clear_tally();
            let t = e.run(kernel, params)?;
            nulls[k] += e.tally()?[TALLY_NULLS];
            Ok(t)
        };
        let (b, c) = (pass(Kernel::SemBulk, 0)?, pass(Kernel::SemCounting, 1)?);
        if round > 0 {
            bulk.push(b);
            counting.push(c);
        }
        if round > 0 && over_budget(options, started) {
            break;
        }
    }
    record.set_rounds(bulk, counting);
    let rate = |t: Option<Timing>| t.map_or(0.0, |t| params.threads as f64 / t.median / 1e6);
    record.extra = BTreeMap::from([
        ("bulk_g_per_s".into(), rate(record.malloc)),
        ("counting_g_per_s".into(), rate(record.free)),
        ("bulk_rounds_run_out".into(), nulls[0] as f64),
        ("counting_rounds_run_out".into(), nulls[1] as f64),
    ]);
    record.note = Some("malloc: bulk semaphore; free: counting semaphore".into());
    finish(e, &mut record, Failures::default(), 0)?;
    record.failed = nulls != [0, 0];
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
