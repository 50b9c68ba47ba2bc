// Ouroboros, page-based front end (ICS 2020 section 4.1, Algorithm 3): one queue per size
// class holds the handles of free pages; a bulk semaphore is its fill count. malloc waits on
// the semaphore for one page; when pages run out, one invocation per missing batch takes a
// chunk from the chunk manager, keeps its first page and enqueues the others (a batch is
// the pages of one chunk). free enqueues the page and signals one unit. Page chunks keep
// their class for the heap's lifetime, as in the paper. Unlike the paper, in heaps that
// cannot grow a malloc of a class up to one chunk that finds no page queued first takes the
// next page of the class's fresh run (fresh_runs.wgsl); it produces batches only where
// the run has none for it (no memory for a run, or its rounds ran out).
//
// Invariants
//   - A page is in exactly one place: its class queue, out with a user (live bit set), the
//     part of a fresh run not yet handed out (fresh_runs.wgsl), or the spill (spill.wgsl),
//     where frees and producers put the pages the queue could not take (no memory for a
//     virtualized queue's chunk, or a bounded wait ran out). So a free never fails and no
//     page leaves circulation.
//   - The class queue never holds more than OURO_CHUNK_LIMIT(k) * batch pages, its ring's
//     capacity: a class takes a new chunk only under that limit (ouro_chunk_limit(k)), so
//     enqueue never finds the ring full. Past the limit malloc reports out of memory.
//   - The producer writes the pages into the ring before it signals them.
//   - Pages of classes on virtualized queues never hold the last OURO_QUEUE_RESERVE chunks
//     (ouro_reserve_take), so their frees find queue chunks in the heap while the
//     queues are not longer than the reserve holds.
//
// Loops, all bounded: OURO_ROUNDS rounds of the semaphore wait (bulk_semaphore.wgsl) and
// OURO_FILL_PATIENCE more while batches of the class are being filled, the
// producer's batch - 1 enqueues (at most one chunk's pages), and the queue's slot waits.
// A malloc that misses OURO_P_HELP_MISSES pages it was promised, or runs out of rounds,
// produces a batch itself (bsem_help). A production that finds no memory while pages of
// the class are queued or being filled (ouro_pages_coming) goes back to
// waiting for them, within the same rounds; one that finds nothing coming makes the
// malloc dry: it only takes pages that turn up, and reports HEAP_OUT_OF_MEMORY after
// OURO_DRY_ROUNDS rounds (within the same rounds) if still nothing is coming, or when its
// rounds are spent. A production that reports HEAP_CONTENTION (fresh memory was contended
// for a run: ouro_run_alloc) ends the malloc with it. Otherwise a malloc fails only when
// its rounds are spent and its last production (registered or not: ouro_help_last) finds
// no memory: HEAP_OUT_OF_MEMORY.

const OURO_ROUNDS: u32 = 1024u;
// Rounds of waiting on batches being filled, in addition to OURO_ROUNDS.
const OURO_FILL_PATIENCE: u32 = 16384u;
// Units taken whose page was not in its slot in time, before a malloc produces a batch
// itself instead of taking more.
const OURO_P_HELP_MISSES: u32 = 8u;
// Rounds a malloc whose production found no memory, with no pages coming, still takes
// pages that turn up before it reports out of memory (ouro_dry_next says why).
const OURO_DRY_ROUNDS: u32 = 64u;
// ouro_dry_next's value for a malloc out of memory now.
const OURO_DRY_OUT: u32 = 0xffffffffu;

// A malloc's count of dry rounds (0: not dry) after a round in which it went on waiting;
// `starved`: the round's production found no memory. OURO_DRY_OUT: out of memory now.
// A starved malloc with nothing coming for its class (no pages counted, no batch being
// filled) goes dry: OURO_DRY_ROUNDS more rounds of taking pages that turn up
// (ouro_take_step), then out of memory. One look is not enough: units being signalled or
// briefly taken by another's fast path, and batches whose producers have not got their
// chunk yet, are out of its sight. Both front ends (ouro_p_malloc, chunk_based.wgsl's
// ouro_c_malloc).
fn ouro_dry_next(k: u32, starved: bool, dry: u32) -> u32 {
    if (starved && dry == 0u && !ouro_pages_coming(k)) {
        return 1u;
    }
    if (dry == 0u) {
        return 0u;
    }
    if (dry >= OURO_DRY_ROUNDS && !ouro_pages_coming(k)) {
        return OURO_DRY_OUT;
    }
    return dry + 1u;
}

// A malloc that has run out of rounds (counted): true if it is out of memory now, for it is
// dry: its production found no memory, and the pages that turned up since went to others.
// (Judged by the class instead, pages still coming would make it contention.)
fn ouro_rounds_spent(dry: u32) -> bool {
    ouro_count(OURO_EV_OUT_OF_ROUNDS);
    return dry > 0u;
}

// One round's take of a unit of class semaphore qm: a step of the wait (bulk_semaphore.wgsl),
// which may tell the caller to produce; once dry, only a unit that is there, with no
// reservation and no production. BSEM_GOT, BSEM_ALLOCATE or BSEM_PENDING.
fn ouro_take_step(qm: u32, batch: u32, st: ptr<function, BsemWait>, dry: u32) -> u32 {
    if (dry == 0u) {
        return bsem_step(qm, 1u, batch, st, false);
    }
    if (bsem_count(qm) > 0 && bsem_try_take(qm, 1u)) {
        return BSEM_GOT;
    }
    return BSEM_PENDING;
}

// Produces a batch for class k (the semaphore told this invocation to): a chunk or run,
// its first page for the caller, the rest into the queue.
//
// On a VAQ (cq_abandons) the producer reserves its queue positions first and takes a chunk
// only if the queue has storage for all of them (cq_storage), or if the heap still has
// more free chunks than the queue reserve (the storage wait ran out: not a lack of memory);
// if it takes none, it abandons the positions (OQ_VOID), so the queue drains past them.
// Pages whose positions find no queue chunk go to the spill (spill.wgsl), where mallocs
// find them by a search instead of a dequeue. The linked queue does not secure storage
// first: marking abandoned positions in its queue chunks would slow it and fail frees
// under mixed traffic (BENCHMARKS.md).
//
// `retire`: the batches its signals retire, 1 for a batch registered with the semaphore,
// 0 for an unregistered one (ouro_help_last).
fn ouro_p_produce(k: u32, retire: u32) -> HeapAlloc {
    let qm = ouro_queue_meta(k);
    let batch = ouro_batch(k);
    if (!ouro_class_chunk_take(k, qm, retire)) {
        return HeapAlloc(HEAP_NULL, 0u, HEAP_OUT_OF_MEMORY);
    }
    let positions_first = batch > 1u && cq_abandons(k);
    if (positions_first && (ouro_queue_reserve_reached(k) || ouro_free_chunks() <= 0)) {
        // Plainly no chunk for the pages: fail before reserving positions, which would
        // only be abandoned (batch - 1 positions that every dequeuer must walk past).
        ouro_production_failed(qm, retire);
        return HeapAlloc(HEAP_NULL, 0u, HEAP_OUT_OF_MEMORY);
    }
    var pos = 0u;
    var chunk = OURO_NO_CHUNK;
    if (positions_first) {
        // Filling from here on, before its storage and chunk are secured: while it waits for
        // a queue chunk being set up, dry mallocs must see pages on their way
        // (ouro_pages_coming), or they report out of memory. Only here: it has just seen
        // free chunks, where a producer that fails on a full heap would keep the count up.
        ouro_fill_begin(k);
        pos = cq_reserve_back(k, batch - 1u);
        // Without storage only when a wait for it ran out while the heap has chunks: that
        // is no lack of memory, so the batch is made, and the pages whose positions have
        // no storage go to the spill.
        if (cq_storage(k, pos, batch - 1u) || ouro_free_chunks() > i32(OURO_QUEUE_RESERVE)) {
            chunk = ouro_page_chunk_alloc(k);
        }
    } else {
        chunk = ouro_page_chunk_alloc(k);
    }
    let got = chunk < OURO_CHUNK_CONTENDED;
    var stamped = false;
    if (got) {
        if (!positions_first) {
            ouro_fill_begin(k);
        }
        // The class stamp takes effect before any page is queued: a dequeuer takes a page
        // only from a chunk stamped with its class (cq_holds_item), and gives up after
        // OQ_SLOT_WAIT rounds. The pages go in only if `stamped` (always, once it has).
        stamped = ouro_stamp(OURO_CHUNK_INFO + chunk, k + 1u);
        if (!positions_first && batch > 1u) {
            pos = cq_reserve_back(k, batch - 1u);
        }
    }
    let first = chunk << OURO_CHUNK_SHIFT;
    let pu = ouro_page_units(k);
    var added = 0u;
    if (got || positions_first) {
        // One loop (one inlined enqueue) for pages and for abandoned positions.
        var cursor = OURO_NO_CHUNK;
        for (var i = 1u; i < batch; i++) {
            var item = OQ_VOID;
            if (stamped) {
                item = heap_handle_of(first + i * pu);
            }
            if (cq_put_at(k, pos + i - 1u, item, &cursor)) {
                added += u32(stamped);
            } else if (stamped) {
                ouro_spill(first + i * pu, k); // the queue could not take it (spill.wgsl)
            }
        }
    }
    if (!got) {
        if (positions_first) {
            ouro_fill_end(k);
        }
        ouro_production_failed(qm, retire);
        if (chunk == OURO_CHUNK_CONTENDED) {
            return HeapAlloc(HEAP_NULL, 0u, HEAP_CONTENTION);
        }
        return HeapAlloc(HEAP_NULL, 0u, HEAP_OUT_OF_MEMORY);
    }
    bsem_signal(qm, added, retire);
    ouro_fill_end(k);
    return ouro_grant(first, pu);
}

// A chunk (or run) for class k's pages, within the queue reserve (ouro_reserve_take). Page
// chunks keep their class for good, so their tickets are given back only by a trim
// (growth.wgsl).
fn ouro_page_chunk_alloc(k: u32) -> u32 {
    let run = ouro_run_chunks(k);
    if (!ouro_reserve_take(k, run)) {
        return OURO_NO_CHUNK;
    }
    let chunk = ouro_run_alloc(run);
    if (chunk >= OURO_CHUNK_CONTENDED) {
        ouro_reserve_give(run);
    }
    return chunk;
}

// malloc's wait on the class semaphore, with the productions it is told to make or helps
// with (the header says how it ends). Every production goes through one call of
// ouro_p_produce: shaders are inlined whole, and each further call site of that
// queue-heavy function makes a virtualized heap's pipelines much slower to compile.
// Spilled pages first (spill.wgsl): they are outside the semaphore's count, and taking one
// needs no queue. A malloc that found none and then ran out of memory looks once more, at
// every chunk, and reports out of memory only if that search found none either.
// (One call site each: every call is inlined, and compile time grows with each.)
fn ouro_p_malloc(k: u32) -> HeapAlloc {
    var a = HeapAlloc(HEAP_NULL, 0u, HEAP_OUT_OF_MEMORY);
    for (var look = 0u; look < 2u; look++) {
        if (ouro_spilled(k)) {
            let unit = ouro_unspill(k, look == 1u);
            if (unit != OURO_NO_UNIT) {
                return ouro_grant(unit, ouro_page_units(k));
            }
        }
        if (look == 1u) {
            break;
        }
        a = ouro_p_malloc_queued(k);
        if (a.status != HEAP_OUT_OF_MEMORY) {
            return a;
        }
    }
    return a;
}

fn ouro_p_malloc_queued(k: u32) -> HeapAlloc {
    let qm = ouro_queue_meta(k);
    let batch = ouro_batch(k);
    var st = bsem_new_wait();
    var misses = 0u;
    var round = 0u;
    var patience = 0u;
    // Rounds since our production found no memory while no pages were coming (0: none).
    var dry = 0u;
    // Whether the malloc holds a unit it took before the loop.
    var unit = false;
#ifdef OURO_FRESH_PAGES
    // A unit of a queued page if there is one (the wait's first take, which the loop would
    // make), else a page of the class's fresh run (fresh_runs.wgsl).
    if (k < OURO_BASE_CLASSES) {
        unit = bsem_try_take(qm, 1u);
        if (!unit) {
            let a = ouro_fresh_take(k);
            if (a.status == HEAP_OK) {
                return a;
            }
        }
    }
#endif
    loop {
        // Out of rounds: one last production, if this malloc may make one.
        let last = round >= OURO_ROUNDS;
        var r = BSEM_PENDING;
        var produce = false;
        var retire = 1u;
        if (last) {
            bsem_abandon(qm, 1u, &st);
            if (ouro_rounds_spent(dry)) {
                return HeapAlloc(HEAP_NULL, 0u, HEAP_OUT_OF_MEMORY);
            }
            retire = ouro_help_last(qm);
            produce = true;
        } else if (unit) {
            r = BSEM_GOT;
            unit = false;
        } else {
            r = ouro_take_step(qm, batch, &st, dry);
        }
        if (r == BSEM_GOT) {
            let v = cq_dequeue(k);
            if (v != OQ_EMPTY) {
                return ouro_grant(heap_unit_of(v), ouro_page_units(k));
            }
            // Gave up on a late slot: its page moves elsewhere; give the unit back. After a
            // few such misses, help instead of waiting on (the progress rule),
            // unless batches are being filled: their pages are on their way, and helping
            // then only over-produces (on virtualized queues that takes the queue chunks
            // the pages need).
            bsem_signal(qm, 1u, 0u);
            ouro_count(OURO_EV_MISSED);
            misses += 1u;
            produce = dry == 0u && misses >= OURO_P_HELP_MISSES && !ouro_batches_filling(k)
                && bsem_help(qm);
        } else if (r == BSEM_ALLOCATE) {
            produce = true;
        }
        if (produce) {
            let a = ouro_p_produce(k, retire);
            if (last || a.status != HEAP_OUT_OF_MEMORY) {
                return a;
            }
        }
        // No memory for a batch of our own, but pages are queued or others are filling
        // batches: wait on. (It may have been told to produce only because the waiters
        // outnumbered the queued pages; returning NULL then stops a fill short of a full
        // heap. It waits only while pages are coming, not whenever memory is left: that
        // over-produces under mixed traffic.)
        // With nothing coming, the malloc goes dry (ouro_dry_next).
        dry = ouro_dry_next(k, produce, dry);
        if (dry == OURO_DRY_OUT) {
            return HeapAlloc(HEAP_NULL, 0u, HEAP_OUT_OF_MEMORY);
        }
        // A round of waiting while batches of the class are being filled does not count
        // against OURO_ROUNDS (up to OURO_FILL_PATIENCE such rounds): their pages are on
        // their way, and a malloc that ran out of rounds would produce a batch of its own.
        if (r == BSEM_PENDING && patience < OURO_FILL_PATIENCE && ouro_batches_filling(k)) {
            patience += 1u;
        } else {
            round += 1u;
        }
    }
    return HeapAlloc(HEAP_NULL, 0u, HEAP_CONTENTION); // not reached: the loop returns
}

// Pages are returned to their class queue, or, where the queue cannot take them (no memory
// for a queue chunk, or a bounded wait ran out), to the spill: a free of a live page never
// fails. While the class has spilled pages its frees go straight there: the queue has just
// failed, and each failing enqueue spends its whole bounded wait. Mallocs take spilled
// pages first, so the queue is used again once they have drained the spill. Validation
// (chunk, class, alignment, live bit) happened in strategy_free.
// A virtualized queue also spills once the heap's free chunks are down to half the queue
// reserve: its next queue chunk may then not be there, and an enqueue that finds none
// never finishes its position in a linked queue (queues/vlq.wgsl, the known gap), which
// keeps that queue's front from releasing drained chunks.
fn ouro_p_free(unit: u32, k: u32) -> HeapFree {
    let spill = ouro_spilled(k)
        || (cq_virtual(k) && ouro_free_chunks() <= i32(OURO_QUEUE_RESERVE / 2u));
    if (!spill && cq_enqueue(k, heap_handle_of(unit))) {
        bsem_signal(ouro_queue_meta(k), 1u, 0u);
    } else {
        ouro_spill(unit, k);
    }
    return HeapFree(ouro_page_units(k), HEAP_OK);
}
