// Ouroboros chunk manager (ICS 2020 section 3.2; Winter's thesis chapter 5): the heap is
// OURO_CHUNKS equal chunks of OURO_CHUNK_UNITS units (8 KiB by default, a power of two, so
// no chunk crosses a segment). Chunks are handed out in O(1), first from the pool of
// returned chunks (an index queue, OURO_POOL), then from fresh memory (a bump counter).
//
// State (heap_meta):
//   OURO_FRESH                    chunks handed out from fresh memory so far (may sit above
//                                 the end, ouro_chunk_end(), for a moment while a failed
//                                 bump is undone, and for good after a run that straddled it)
//                                 The memory of every chunk from OURO_FRESH on is zero
//                                 (OQ_EMPTY throughout): wgpu zero-fills new segments, and a
//                                 reset of a heap with virtualized queues clears the
//                                 segments (StrategyPlan::reset_clears_segments); a trim
//                                 lowers OURO_FRESH only to segments it then drops.
//   ouro_queue_meta(OURO_POOL)    the pool's fill count ([0]) and ring counters
//   OURO_CHUNK_INFO + c           what chunk c holds: 0 free or inside a multi-chunk run,
//                                 OURO_INFO_EMPTIED free and all OQ_EMPTY (a drained
//                                 queue chunk), class + 1 for a page chunk or the first
//                                 chunk of a run, OURO_INFO_QUEUE | q a queue chunk of q
//   ouro_queue_meta(k) + OQ_CLASS_CHUNKS   chunks class k owns, at most ouro_chunk_limit(k)
//
// The end: fresh chunks are handed out below ouro_chunk_end(), OURO_CHUNKS (every table is
// sized for it, the reserved maximum) unless the heap can grow; then the committed chunks,
// heap_committed_units() >> OURO_CHUNK_SHIFT, one value for a whole dispatch (the host
// changes it between dispatches only). A segment holds a whole number of chunks, so the
// committed end is a chunk boundary (the last, shorter segment of a reserved maximum is
// never followed by another). Between dispatches OURO_FRESH may exceed the end by less than
// the largest run (a straddling run, below), never with a chunk at or past the end handed
// out; growth.wgsl lowers it to the old end when the heap grows, so the chunks from there
// on are handed out exactly once.
//
// Multi-chunk runs (the "stacked instances with larger chunks" of section 3.1) serve the
// classes above one chunk: a run of 2^j chunks, aligned to its length, bumped from fresh
// memory. Alignment keeps a run inside one segment (segments hold a power-of-two number of
// chunks at least as large as the largest run, and the committed end is a segment
// boundary); the chunks skipped to align it go to the pool, so none is lost. Runs never
// return to the pool: their class queue keeps them.
//
// Pressure (core/growth.wgsl): a bump of fresh memory reports the fresh chunks it left
// (heap_note_free_items, in chunks: HeapLayout::item_units is OURO_CHUNK_UNITS). Chunks in
// the pool and free pages in the class queues are not counted, so the signal is raised
// when fresh memory runs low even if recycled memory is plentiful: an early signal, never a
// late one. Only the rare fresh bumps pay for it; a heap that cannot grow compiles none.
//
// Loops, all bounded: ouro_chunk_alloc makes at most OURO_POOL_TRIES pool dequeues and one
// fresh bump; ouro_run_alloc makes at most OURO_RUN_ATTEMPTS bump attempts (each
// failure means another invocation bumped a different amount in between) and returns at
// most 2 * run - 1 skipped chunks per attempt to the pool; ouro_queue_chunk_ready (the
// setup of a virtualized queue's chunk) makes at most OURO_QC_ITEMS exchanges.

const OURO_NO_CHUNK: u32 = 0xffffffffu;
const OURO_CHUNK_CONTENDED: u32 = 0xfffffffeu;
const OURO_RUN_ATTEMPTS: u32 = 64u;
// Tries at the pool before a chunk allocation reports that the heap has none: under heavy
// churn a pool dequeue can meet a late enqueuer and give up, and with fresh memory spent a
// single miss would make a queue install fail while the pool holds plenty of chunks.
const OURO_POOL_TRIES: u32 = 4u;

// The end of fresh memory in chunks: the reserved maximum, or the committed chunks of a
// heap that can grow (constant during a dispatch; no load in heaps that cannot grow).
fn ouro_chunk_end() -> u32 {
#ifdef GPU_HEAP_GROWABLE
    return min(heap_committed_units() >> OURO_CHUNK_SHIFT, OURO_CHUNKS);
#else
    return OURO_CHUNKS;
#endif
}

// A chunk from the pool or fresh memory, and whether it came from fresh memory (zero
// throughout, per OURO_FRESH's rule above).
struct OuroChunk {
    index: u32,
    fresh: bool,
}

fn ouro_chunk_alloc() -> u32 {
    return ouro_chunk_take().index;
}

fn ouro_chunk_take() -> OuroChunk {
    let pool = ouro_queue_meta(OURO_POOL);
    let end = ouro_chunk_end();
    for (var attempt = 0u; attempt < OURO_POOL_TRIES; attempt++) {
        if (bsem_try_take(pool, 1u)) {
            let v = oq_dequeue(OURO_POOL);
            if (v != OQ_EMPTY) {
                return OuroChunk(v - 1u, false);
            }
            // The slot's enqueuer is late; it will move the chunk elsewhere. Give the unit
            // back; fresh memory, else another try at the pool.
            bsem_signal(pool, 1u, 0u);
        } else if (attempt > 0u) {
            break;
        }
        if (attempt == 0u) {
            // Failures only happen once the counter is at or above the end, and undoing
            // them never takes it below, so successful bumps hand out each chunk once.
            let f = atomicAdd(&heap_meta[OURO_FRESH], 1u);
            if (f < end) {
#ifdef GPU_HEAP_GROWABLE
                heap_note_free_items(end - f - 1u);
#endif
                return OuroChunk(f, true);
            }
            atomicSub(&heap_meta[OURO_FRESH], 1u);
        }
    }
    return OuroChunk(OURO_NO_CHUNK, false);
}

// Returns a chunk to the pool. False if the pool's ring could not take it (counted by the
// caller as contention; see queues/index_queue.wgsl for when that can happen).
fn ouro_chunk_free(chunk: u32) -> bool {
    return ouro_chunk_pool(chunk, 0u);
}

// Returns a drained queue chunk of a virtualized page queue to the pool, marked as all
// OQ_EMPTY, so that the queue chunk made from it next skips its zeroing
// (ouro_queue_chunk_ready). Only for a chunk whose every position was consumed and whose
// consumers emptied their words: each did so with an exchange and consumed the position
// only once that had taken effect, so the chunk holds OQ_EMPTY throughout by the time it
// drains. (A chunk-token log's consumers leave OQ_SKIP: its chunks take ouro_chunk_free.)
fn ouro_queue_chunk_free_drained(chunk: u32) -> bool {
    return ouro_chunk_pool(chunk, OURO_INFO_EMPTIED);
}

// The info reset must take effect before the chunk is in the pool: a relaxed reset can
// land after the next owner's stamp and leave a page chunk marked free; its queued pages
// then no longer pass cq_holds_item, and the free of the page its producer kept fails the
// info check. Hence ouro_stamp.
fn ouro_chunk_pool(chunk: u32, info: u32) -> bool {
    if (ouro_stamp(OURO_CHUNK_INFO + chunk, info) && oq_enqueue(OURO_POOL, chunk + 1u)) {
        bsem_signal(ouro_queue_meta(OURO_POOL), 1u, 0u);
        return true;
    }
    return false;
}

// `run` (a power of two) contiguous chunks aligned to `run`, from fresh memory.
//
// Wait-free bumps, no CAS: a CAS loop on OURO_FRESH starves under the thousands of
// concurrent invocations of a real GPU. Each attempt is one atomicAdd of `run`. An aligned
// result is the run. A misaligned one (another class bumped a different amount meanwhile)
// goes to the pool with the padding bumped to realign the counter, and the next attempt
// starts aligned unless someone bumps in between. Chunks at or past the end
// (ouro_chunk_end) are never handed out: an attempt that starts past the end undoes its
// add (so the counter never falls below the end again once it reached it, as in
// ouro_chunk_alloc), one that straddles the end keeps the counter above it and gives the
// chunks below the end to the pool (strategy_grow later lowers the counter to the old
// end: growth.wgsl).
fn ouro_run_alloc(run: u32) -> u32 {
    if (run == 1u) {
        return ouro_chunk_alloc();
    }
    let limit = ouro_chunk_end();
    for (var attempt = 0u; attempt < OURO_RUN_ATTEMPTS; attempt++) {
        let f = atomicAdd(&heap_meta[OURO_FRESH], run);
        if (f >= limit) {
            atomicSub(&heap_meta[OURO_FRESH], run);
            return OURO_NO_CHUNK;
        }
        let end = min(f + run, limit);
        if ((f & (run - 1u)) == 0u && f + run <= limit) {
#ifdef GPU_HEAP_GROWABLE
            heap_note_free_items(limit - f - run);
#endif
            return f;
        }
        ouro_pool_range(f, end);
        if (f + run >= limit) {
            return OURO_NO_CHUNK;
        }
        // Realign: bump the padding to the next multiple of run and pool it too.
        let pad = (run - ((f + run) & (run - 1u))) & (run - 1u);
        if (pad > 0u) {
            let g = atomicAdd(&heap_meta[OURO_FRESH], pad);
            if (g >= limit) {
                atomicSub(&heap_meta[OURO_FRESH], pad);
                return OURO_NO_CHUNK;
            }
            ouro_pool_range(g, min(g + pad, limit));
            if (g + pad >= limit) {
                return OURO_NO_CHUNK;
            }
        }
    }
    return OURO_CHUNK_CONTENDED;
}

// Gives fresh chunks [lo, hi) (fewer than 2 * the largest run) to the pool.
fn ouro_pool_range(lo: u32, hi: u32) {
    for (var c = lo; c < hi; c++) {
        ouro_chunk_free(c);
    }
}

// Whether class k keeps its queue (of pages, or of chunk tokens) in queue chunks taken from
// the heap: the classes up to one chunk on virtualized queues.
fn ouro_queue_in_heap(k: u32) -> bool {
#ifdef OURO_VIRTUAL_QUEUES
    return k < OURO_BASE_CLASSES;
#else
    return false;
#endif
}

// Whether class k's producers must leave the remaining chunks to queue chunks: the chunks
// of classes whose queues live in the heap hold at most all chunks but OURO_QUEUE_RESERVE
// (ouro_reserve_take says why).
fn ouro_queue_reserve_reached(k: u32) -> bool {
    return ouro_takes_reserve(k, atomicLoad(&heap_meta[OURO_HELD_CHUNKS]), ouro_run_chunks(k));
}

// Whether `run` more chunks of class k, on top of `held` chunks held by classes
// (OURO_HELD_CHUNKS), would take from the queue reserve. Only classes whose queues live in
// the heap are held to it.
fn ouro_takes_reserve(k: u32, held: u32, run: u32) -> bool {
    return ouro_queue_in_heap(k) && held + run + OURO_QUEUE_RESERVE > ouro_chunk_end();
}

// Takes a ticket for class k's next chunk or run (`run` chunks) on OURO_HELD_CHUNKS before
// the class takes memory; false, with nothing taken, where it would come out of the queue
// reserve. Heaps whose queues live in the heap keep the last OURO_QUEUE_RESERVE chunks for
// queue chunks: frees need queue storage, and once every chunk held pages, every free of
// such a class would go to the spill (page-based) or find no place for its chunk's token
// (chunk-based). A ticket, not a look at the free chunks: the many producers of one
// dispatch would see the same free chunks and take the reserve together. So the reserve is
// exact, and so is HeapLayout::capacity_for. Runs of the classes above a chunk are counted
// but not limited: their queues are standard ones.
fn ouro_reserve_take(k: u32, run: u32) -> bool {
    if (OURO_QUEUE_RESERVE == 0u) {
        return true;
    }
    let held = atomicAdd(&heap_meta[OURO_HELD_CHUNKS], run);
    if (ouro_takes_reserve(k, held, run)) {
        atomicSub(&heap_meta[OURO_HELD_CHUNKS], run);
        return false;
    }
    return true;
}

// Gives back a ticket of ouro_reserve_take: the class did not get its memory, or (chunk-based)
// the chunk went back to the pool.
fn ouro_reserve_give(run: u32) {
    if (OURO_QUEUE_RESERVE > 0u) {
        atomicSub(&heap_meta[OURO_HELD_CHUNKS], run);
    }
}

// Chunks that ouro_chunk_alloc could hand out now: fresh ones below the end and pooled
// ones (a snapshot; OURO_FRESH may sit above the end for a moment, see the header).
fn ouro_free_chunks() -> i32 {
    let fresh = i32(ouro_chunk_end()) - i32(atomicLoad(&heap_meta[OURO_FRESH]));
    return max(fresh, 0) + max(bsem_count(ouro_queue_meta(OURO_POOL)), 0);
}

// Batches being filled: a producer has its chunk and has not yet signalled the pages. A
// malloc whose own production found no memory waits on (bounded) while this is nonzero:
// with thousands of invocations the producers' fills run alongside the waits, and a wait
// that ended while the last chunks were still being filled would report out of memory
// with pages on their way.
fn ouro_fill_begin(k: u32) {
    atomicAdd(&heap_meta[ouro_queue_meta(k) + OQ_FILLING], 1u);
}

fn ouro_fill_end(k: u32) {
    atomicSub(&heap_meta[ouro_queue_meta(k) + OQ_FILLING], 1u);
}

fn ouro_batches_filling(k: u32) -> bool {
    return atomicLoad(&heap_meta[ouro_queue_meta(k) + OQ_FILLING]) != 0u;
}

// Whether class k has pages in its queue (semaphore count) or on their way (batches being
// filled). A malloc whose own production found no memory waits on for them. (Batches
// merely registered with the semaphore do not count: on a full heap, mallocs registering
// batches that fail keep that count above zero, and the mallocs waiting on it would run
// out of rounds and report contention.)
fn ouro_pages_coming(k: u32) -> bool {
    return ouro_batches_filling(k) || bsem_count(ouro_queue_meta(k)) > 0;
}

// Sets heap_meta[word] to value; 1 if it held value already, else 0. A sum of these gates
// a publication that must come after the writes (ouro_queue_chunk_ready below;
// chunk_based.wgsl's cb_produce, before it places a new chunk's token).
fn ouro_settle(word: u32, value: u32) -> u32 {
    return u32(atomicExchange(&heap_meta[word], value) == value);
}

// Sets the info word `word` (OURO_CHUNK_INFO + c) to value; true once that has taken
// effect, and always true (no info word ever holds 0xffffffff), so a caller that publishes
// the chunk only if it is waits for the write: what depends on an exchange's old value
// waits for it, the assumption of ouro_settle. (A 0/1 result, as ouro_settle's, would let
// a compiler fold the test away.)
fn ouro_stamp(word: u32, value: u32) -> bool {
    return atomicExchange(&heap_meta[word], value) != 0xffffffffu;
}

#ifdef OURO_VIRTUAL_QUEUES
// Where item pos (modulo OURO_QC_ITEMS) of queue chunk c lives: the chunk's segment, and
// the word in that segment's view (a chunk never crosses a segment).
fn ouro_qc_segment(c: u32) -> u32 {
    return (c << OURO_CHUNK_SHIFT) >> HEAP_SEGMENT_SHIFT;
}

fn ouro_qc_word(c: u32, pos: u32) -> u32 {
    return (((c << OURO_CHUNK_SHIFT) & HEAP_SEGMENT_MASK) << 2u) + (pos & (OURO_QC_ITEMS - 1u));
}

// Setting up a queue chunk before it is published (queues/vaq.wgsl, queues/vlq.wgsl,
// chunk_tokens.wgsl). WGSL's atomics are relaxed: a plain store may take effect after a
// later store of the same invocation to another word, so a chunk published right after its
// setup may be used before the setup lands. Inserters that wait for a fresh chunk's link
// write as soon as it is published, and a late store of its zeroing loop can then empty
// what they wrote: the positions count as written but hold OQ_EMPTY, their tokens are
// lost, and the chunk can never drain. So the setup is made of exchanges, and the caller
// publishes only under a condition computed from every old
// value they return: an exchange yields its old value once it has taken effect, and what
// depends on that value waits for it (an assumption beyond WGSL's memory model, of the
// same kind as chunk_based.wgsl's).

// Empties item word w of a queue chunk in segment seg, a word that only the caller writes
// now and that holds OQ_SKIP or an item, never OQ_EMPTY; true once that has taken effect,
// and always true. Its caller then finishes the position, which can release the chunk to
// the pool: only if this is true, so the write cannot land in the chunk's next life (as a
// plain store could, erasing an item or a user's data written there later).
fn ouro_qc_clear(seg: u32, w: u32) -> bool {
    return heap_atomic_exchange(seg, w, OQ_EMPTY) != OQ_EMPTY;
}

// Stamps chunk c as a queue chunk of queue q and empties every item word (OQ_EMPTY) unless
// it is known to hold OQ_EMPTY throughout: fresh (OURO_FRESH's rule) or pooled emptied
// (ouro_queue_chunk_free_drained); true once that and the ouro_settle calls summed in
// `settled` have taken effect, and always true: a caller publishes c only if it is.
// heap_atomic_fill (generated for the heap's bindings, src/layout/codegen.rs, which says
// why) keeps 4 exchanges in flight, one invocation for the chunk's OURO_QC_ITEMS words: the
// price of the guarantee, which a queue's chunks made one after another (a linked queue's)
// pay in series, so the chunks known to be empty skip it. Bounded: OURO_QC_ITEMS exchanges.
fn ouro_queue_chunk_ready(c: OuroChunk, q: u32, settled: u32) -> bool {
    let was = atomicExchange(&heap_meta[OURO_CHUNK_INFO + c.index], ouro_queue_info(q));
    // One expression for every case, so that no compiler can fold the result to a
    // constant in any and drop its dependence on the exchanges' old values.
    let n = select(OURO_QC_ITEMS, 0u, c.fresh || was == OURO_INFO_EMPTIED);
    let same = settled
        + heap_atomic_fill(ouro_qc_segment(c.index), ouro_qc_word(c.index, 0u), n, OQ_EMPTY);
    return same <= n + settled;
}

#ifdef OURO_QUEUE_CHUNK_WORDS
// A fresh queue chunk of queue q for the positions from `start`: info, first position and
// count set (and, with `linked`, an empty next link), all taken effect, so the caller may
// publish it; OURO_NO_CHUNK if the pool and fresh memory have none.
fn ouro_queue_chunk_new(q: u32, start: u32, linked: bool) -> u32 {
    let chunk = ouro_chunk_take();
    let c = chunk.index;
    if (c == OURO_NO_CHUNK) {
        return c;
    }
    var settled = ouro_settle(OURO_QC_START + c, start);
    settled += ouro_settle(OURO_QC_COUNT + c, 0u);
    if (linked) {
        settled += ouro_settle(OURO_QC_NEXT + c, 0u);
    }
    if (!ouro_queue_chunk_ready(chunk, q, settled)) {
        ouro_chunk_free(c);
        return OURO_NO_CHUNK;
    }
    return c;
}
#endif
#endif

// The chunks a class owns (its queue descriptor's OQ_CLASS_CHUNKS word), bounded by
// ouro_chunk_limit(k). A producer counts its chunk before it has one: true if the class may
// own one more; otherwise the count is undone and the production ends (ouro_production_failed).
fn ouro_class_chunk_take(k: u32, qm: u32, retire: u32) -> bool {
    if (atomicAdd(&heap_meta[qm + OQ_CLASS_CHUNKS], 1u) >= ouro_chunk_limit(k)) {
        ouro_production_failed(qm, retire);
        return false;
    }
    return true;
}

// Whether a producer of class k would get a chunk as things stand: the heap has a free
// chunk and the class may take one (ouro_class_may_take). Loads only; the takes above
// decide.
fn ouro_chunk_in_sight(k: u32, qm: u32) -> bool {
    return ouro_free_chunks() > 0 && ouro_class_may_take(k, qm);
}

// Whether class k may take one more chunk as things stand: it is under its limit and the
// queue reserve is not reached. Loads only.
fn ouro_class_may_take(k: u32, qm: u32) -> bool {
    return !ouro_queue_reserve_reached(k)
        && atomicLoad(&heap_meta[qm + OQ_CLASS_CHUNKS]) < ouro_chunk_limit(k);
}

// A chunk leaves its class (returned to the pool, or never taken).
fn ouro_class_chunk_give(qm: u32) {
    atomicSub(&heap_meta[qm + OQ_CLASS_CHUNKS], 1u);
}

// Ends a production that counted a chunk and got none: the count back, the semaphore
// signalled with no items (`retire` as for ouro_p_produce).
fn ouro_production_failed(qm: u32, retire: u32) {
    ouro_class_chunk_give(qm);
    bsem_signal(qm, 0u, retire);
}
