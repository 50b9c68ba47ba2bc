// Ouroboros, page-based front end: fresh pages handed out in order from a run of chunks.
//
// Provides ouro_fresh_take(k), a page of class k from the class's current fresh run, for
// the base classes of the page-based variants in heaps that cannot grow (OURO_FRESH_RUNS).
// Not in the paper (ICS 2020, Algorithm 3), whose mallocs take every page through the class
// queue: a class whose queue is empty has one invocation per chunk enqueue that chunk's
// pages while every other malloc of the class polls the semaphore until they are signalled
// (BENCHMARKS.md, "ouro-p-s in accumulate mode: where the time goes"). Here a malloc that
// finds no page queued takes the next page of the run with one atomicAdd, as a bump
// allocator does, and nothing waits for a production. Frees still enqueue, so pages come
// back to the class queue as in the paper, and later mallocs take them from there.
//
// State (heap_meta):
//   ouro_queue_meta(k) + OQ_FRESH_RUN  the class's run: 0 none, OURO_FRESH_BUSY while an
//                                   invocation that found none installs one, otherwise
//                                   ((first chunk + 1) << OURO_FRESH_LOG_BITS) | log2(chunks)
//   OURO_FRESH_TAKEN + first        pages of the run starting at chunk `first` handed out or
//                                   asked for past its end (a run's counter, never reset)
//
// Invariants
//   - Page i of a run goes to the one malloc whose atomicAdd on the run's counter returned
//     i. A counter starts at zero (heap_meta is cleared) and belongs to its run for good:
//     runs take fresh memory only, which hands out each chunk once, and page chunks keep
//     their class for the heap's lifetime (page_based.wgsl), so a chunk starts a run at
//     most once, and a malloc that added to a run that was already spent gets a number
//     past its end and takes nothing.
//   - Every chunk of a run is stamped with its class before any of its pages goes out: the
//     taker of a page stamps the page's chunk unless it sees the stamp already there (the
//     same value, so the order of several takers' stamps does not matter). Frees check
//     the stamp (ouroboros.wgsl, strategy_free).
//   - Exactly one malloc installs the run that follows a spent one: the one whose add
//     returned the run's page count. A run is installed only from a run or from none, so
//     no two installs race: from none, the one malloc whose compare-exchange set
//     OURO_FRESH_BUSY installs.
//   - A run's chunks count as the class's (OQ_CLASS_CHUNKS, against ouro_chunk_limit(k), so
//     that its queue can take back every page) and as held chunks (the queue reserve of
//     virtualized queues), as the batches of ouro_p_produce do.
//   - Between dispatches a run's chunks that are not stamped hold only pages never handed
//     out; src/ouroboros/report.rs counts those chunks as the class's and the pages the
//     run has left as free pages.
//   - Runs double from one chunk up to 2^OURO_FRESH_MAX_LOG chunks, and a run takes at most
//     a sixteenth of the fresh chunks left, so a class holds few more fresh pages than it
//     uses while the heap fills, and one chunk at a time near its end. Pooled chunks are
//     left to the queue path.
//
// Loops, all bounded: ouro_fresh_take makes at most OURO_FRESH_ROUNDS rounds (a round is
// one load, and at most one add per run seen), then leaves the malloc to the queue path.
// ouro_fresh_claim makes at most OURO_FRESH_CLAIMS compare-exchanges.

const OURO_FRESH_MAX_LOG: u32 = 14u;
const OURO_FRESH_LOG_MASK: u32 = (1u << OURO_FRESH_LOG_BITS) - 1u;
const OURO_FRESH_BUSY: u32 = 0xffffffffu;
// Rounds of looking at the run word; at most a few installs happen while a malloc looks.
const OURO_FRESH_ROUNDS: u32 = 4096u;
// Compare-exchanges a run's claim of fresh memory makes before the install gives up.
const OURO_FRESH_CLAIMS: u32 = 8u;
const_assert OURO_FRESH_MAX_LOG < (1u << OURO_FRESH_LOG_BITS);
const_assert OURO_CHUNKS < (1u << (31u - OURO_FRESH_LOG_BITS));

// A page of class k from its fresh run, or HEAP_NULL where the class has no run and no
// fresh memory is in sight for one, or where the rounds ran out: the caller then takes the
// queue path (page_based.wgsl), which produces batches as the paper's does and decides what
// a malloc that finds nothing reports.
fn ouro_fresh_take(k: u32) -> HeapAlloc {
    let qm = ouro_queue_meta(k);
    let word = qm + OQ_FRESH_RUN;
    let pu = ouro_page_units(k);
    // The last run this malloc found spent: it adds to a run's counter once at most.
    var spent = 0u;
    for (var round = 0u; round < OURO_FRESH_ROUNDS; round++) {
        let run = atomicLoad(&heap_meta[word]);
        if (run == 0u) {
            if (!ouro_fresh_in_sight(k, qm)) {
                break;
            }
            if (atomicCompareExchangeWeak(&heap_meta[word], 0u, OURO_FRESH_BUSY).exchanged) {
                ouro_fresh_install(k, 0u);
            }
        } else if (run != OURO_FRESH_BUSY && run != spent) {
            let first = (run >> OURO_FRESH_LOG_BITS) - 1u;
            let pages = ouro_batch(k) << (run & OURO_FRESH_LOG_MASK);
            let i = atomicAdd(&heap_meta[OURO_FRESH_TAKEN + first], 1u);
            if (i < pages) {
                let unit = (first << OURO_CHUNK_SHIFT) + i * pu;
                let info = OURO_CHUNK_INFO + (unit >> OURO_CHUNK_SHIFT);
                // ouro_stamp is always true: the grant waits for the stamp to take effect.
                if (atomicLoad(&heap_meta[info]) == k + 1u || ouro_stamp(info, k + 1u)) {
                    return ouro_grant(unit, pu);
                }
            }
            spent = run;
            if (i == pages) {
                ouro_fresh_install(k, run);
            }
        }
    }
    return HeapAlloc(HEAP_NULL, 0u, HEAP_CONTENTION);
}

// Whether a run of class k could start now: fresh memory is left and the class may take a
// chunk (chunks.wgsl, ouro_class_may_take). Loads only; the install decides. (Pooled chunks
// do not count: runs take fresh memory only, and the queue path takes the pool's chunks one
// batch at a time.)
fn ouro_fresh_in_sight(k: u32, qm: u32) -> bool {
    return atomicLoad(&heap_meta[OURO_FRESH]) < ouro_chunk_end() && ouro_class_may_take(k, qm);
}

// Installs class k's next run after `spent` (0: the class had none, and the caller set
// OURO_FRESH_BUSY). Its length doubles that of the spent run, capped as the header says,
// from fresh memory only. Where the class may take no more chunks, fresh memory has no room
// for the run or its claim lost every compare-exchange, the run word goes to 0: mallocs then
// take the queue path, and the next one that sees fresh memory in sight starts a run again
// (at one chunk).
fn ouro_fresh_install(k: u32, spent: u32) {
    let qm = ouro_queue_meta(k);
    var log = 0u;
    if (spent != 0u) {
        log = min((spent & OURO_FRESH_LOG_MASK) + 1u, OURO_FRESH_MAX_LOG);
    }
    // A sixteenth of the fresh chunks left (at least one), and no more than the class may
    // still own: a run that the limit refuses would leave its last chunks to the queue path.
    let fresh_left = i32(ouro_chunk_end()) - bitcast<i32>(atomicLoad(&heap_meta[OURO_FRESH]));
    let limit = ouro_chunk_limit(k);
    let room = limit - min(atomicLoad(&heap_meta[qm + OQ_CLASS_CHUNKS]), limit);
    let cap = min(u32(max(fresh_left, 16)) >> 4u, max(room, 1u));
    log = min(log, 31u - countLeadingZeros(cap));
    let chunks = 1u << log;
    var first = OURO_NO_CHUNK;
    let owned = atomicAdd(&heap_meta[qm + OQ_CLASS_CHUNKS], chunks);
    if (owned + chunks <= limit && ouro_reserve_take(k, chunks)) {
        first = ouro_fresh_claim(chunks);
        if (first == OURO_NO_CHUNK) {
            ouro_reserve_give(chunks);
        }
    }
    var run = 0u;
    if (first != OURO_NO_CHUNK) {
        run = ((first + 1u) << OURO_FRESH_LOG_BITS) | log;
    } else {
        atomicSub(&heap_meta[qm + OQ_CLASS_CHUNKS], chunks);
    }
    atomicStore(&heap_meta[qm + OQ_FRESH_RUN], run);
}

// `n` contiguous fresh chunks (any alignment: pages never cross a chunk), or OURO_NO_CHUNK
// where fresh memory has fewer left or the claim lost OURO_FRESH_CLAIMS compare-exchanges in
// a row. A compare-exchange, unlike ouro_run_alloc's atomicAdd, never takes the counter past
// the end, so nothing is left over to pool; claims are rare (one per run), and a starved
// one only sends mallocs to the queue path until the next install.
fn ouro_fresh_claim(n: u32) -> u32 {
    let end = ouro_chunk_end();
    var f = atomicLoad(&heap_meta[OURO_FRESH]);
    for (var attempt = 0u; attempt < OURO_FRESH_CLAIMS; attempt++) {
        if (f >= end || end - f < n) {
            break;
        }
        let r = atomicCompareExchangeWeak(&heap_meta[OURO_FRESH], f, f + n);
        if (r.exchanged) {
            return f;
        }
        f = r.old_value;
    }
    return OURO_NO_CHUNK;
}
