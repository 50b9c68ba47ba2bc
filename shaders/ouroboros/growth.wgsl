// Ouroboros growth hooks (alloc.wgsl states the contract, core/growth.wgsl the words): a
// heap reserved for HEAP_UNITS units, of which the first segments are committed. The idea
// is the CUDA virtual memory one (reserve an address range, map memory into it); no paper
// section covers it for Ouroboros, whose heap is fixed.
//
// Provides strategy_grow, strategy_trim_check and strategy_trim. Included by
// ouroboros.wgsl in heaps that can grow only (GPU_HEAP_GROWABLE).
//
// What growth needs here: every table (chunk info, live bits, rings, chunk limits, the
// chunk-based front end's per-chunk words, the linked queues' per-chunk words) is planned
// for the reserved maximum (src/ouroboros/ plans for HeapLayout::bytes, the maximum), and
// the chunk manager hands out fresh chunks below the committed end only (chunks.wgsl,
// ouro_chunk_end). So growing only has to make the chunks from the old end on fresh:
// OURO_FRESH may sit above the old end (a run that straddled it, chunks.wgsl), while no
// chunk at or past that end was ever handed out; lowering it to the old end hands each of
// them out exactly once.
//
// The trim rule. Memory in [to, from) may be released when nothing can hand it out again
// and nothing lives there. In Ouroboros, memory is referenced from four places: live
// allocations (live bits), class queues (free pages of page chunks and runs, which stay in
// their class for good), the chunk pool (returned chunks, and chunks skipped to align a
// run), and queue chunks of the virtualized queues (heap memory holding queue items). The
// check passes for chunk c of the range when:
//   - c was never handed out (c >= OURO_FRESH), or
//   - no live bit is set in c, and c's info is 0 (free: in the pool, inside a run whose
//     first chunk is checked on its own, or lost), or the class of a page chunk or run
//     whose free pages sit in a standard index queue (the page-based front end's queues;
//     the runs' queues in every variant).
// It fails for a queue chunk (OURO_INFO_QUEUE), and for a page chunk of a class whose queue
// is virtualized (ouro-p-va, ouro-p-vl) or chunk-based (ouro-c-s, ouro-c-va, ouro-c-vl,
// classes up to a chunk; the last two also keep their token queues in queue chunks):
// their queues keep items in heap memory or tokens with per-chunk counts that cannot be
// purged in place. (A chunk-based chunk whose pages are all free normally went back to the
// pool at its last free. One whose retirement gave up there, its semaphore units not yet
// signalled by the other frees, is retired by the check: with nothing else running the
// units are there, and the chunk passes once it is in the pool.)
// A run never crosses a segment and trims release whole segments, so a run that overlaps
// [to, from) starts inside it and its first chunk is checked. The live bits cover every
// allocation (set at the first unit of each page out with a user).
//
// After a clean check the trim (one invocation, nothing else running) purges: it clears the
// info of the range's chunks and their spilled pages (spill.wgsl), lowers each owning
// class's chunk count (queue meta word 4) and the chunks held by classes (OURO_HELD_CHUNKS,
// heaps with a queue reserve), compacts that class's ring without the range's pages and
// takes them out of its semaphore, does the same for the pool, and lowers OURO_FRESH to
// `to`: every chunk from there on is then unreferenced, and will be handed out fresh again
// after a later grow.
//
// A standard queue between dispatches: every item lies at a position in [front, back)
// (queues/index_queue.wgsl: an item is put at a reserved back position, and one whose
// position a dequeuer gave up on moves to a new back position or is lost), and the
// semaphore count C equals the items in the ring. Compaction keeps the order, writes the
// kept items to [front, front + kept), clears the rest (skip marks included) and sets back
// to front + kept.
//
// Loops, all bounded: the check scans one chunk's live words (OURO_CHUNK_UNITS / 32 + 1);
// the trim scans the range's chunks once (and each page chunk's spill words), then each
// affected ring over
// min(back - front, capacity) positions, the pool's the same way. The cost of a trim is
// therefore linear in the free pages of the classes that owned chunks in the range (a
// ring of 16-byte pages can hold millions: a slow single invocation, but one between
// dispatches and under the host's watchdog).

// Whether a live bit is set in units [lo, hi).
fn ouro_live_in(lo: u32, hi: u32) -> bool {
    if (hi <= lo) {
        return false;
    }
    let first = lo >> 5u;
    let last = (hi - 1u) >> 5u;
    for (var w = first; w <= last; w++) {
        var mask = 0xffffffffu;
        if (w == first) {
            mask &= 0xffffffffu << (lo & 31u);
        }
        if (w == last) {
            mask &= 0xffffffffu >> (31u - ((hi - 1u) & 31u));
        }
        if ((atomicLoad(&heap_meta[OURO_LIVE_BITS + w]) & mask) != 0u) {
            return true;
        }
    }
    return false;
}

// Whether queue q is a standard index queue holding pages or chunks as FIFO items (not a
// virtualized queue, not the chunk-based front end's token set).
fn ouro_purgeable(k: u32) -> bool {
    if (k >= OURO_CLASSES) {
        return false;
    }
    if (k < OURO_BASE_CLASSES) {
#ifdef OURO_CHUNK_BASED
        return false;
#else
        return !cq_virtual(k);
#endif
    }
    return true;
}

fn strategy_grow(from_units: u32, to_units: u32) {
    let old_end = from_units >> OURO_CHUNK_SHIFT;
    if (atomicLoad(&heap_meta[OURO_FRESH]) > old_end) {
        atomicStore(&heap_meta[OURO_FRESH], old_end);
    }
}

// Invocation i checks chunk (to >> OURO_CHUNK_SHIFT) + i (HeapLayout::trim_check_invocations
// plans one per chunk of the range).
fn strategy_trim_check(i: u32, from_units: u32, to_units: u32) -> bool {
    let c = (to_units >> OURO_CHUNK_SHIFT) + i;
    if (c >= min(atomicLoad(&heap_meta[OURO_FRESH]), OURO_CHUNKS)) {
        return true; // never handed out
    }
    // c lies below the old end (the host plans ceil(from / chunk) - to / chunk checks), so
    // first < from_units; no sum that could wrap on a 64 GiB heap.
    let first = c << OURO_CHUNK_SHIFT;
    if (ouro_live_in(first, first + min(OURO_CHUNK_UNITS, from_units - first))) {
        return false;
    }
    let info = atomicLoad(&heap_meta[OURO_CHUNK_INFO + c]);
#ifdef OURO_CHUNK_BASED
    if (info != 0u && info - 1u < OURO_BASE_CLASSES) {
        // No live page: every page is free, so a retirement that gave up at the last free
        // succeeds now (see the header).
        return cb_retire(info - 1u, c, 0u) == CB_RETIRED;
    }
#endif
    return info == 0u || info == OURO_INFO_EMPTIED || ouro_purgeable(info - 1u);
}

// Compacts standard queue q (see the header), dropping items at or past `to_units` (class
// queues hold handles, unit + 1; the pool holds chunk + 1). Returns the items dropped.
fn ouro_compact(q: u32, to_units: u32) -> u32 {
    let qm = ouro_queue_meta(q);
    let front = atomicLoad(&heap_meta[qm + OQ_FRONT]);
    let n = min(atomicLoad(&heap_meta[qm + OQ_BACK]) - front, ouro_ring_mask(q) + 1u);
    var kept = 0u;
    var dropped = 0u;
    for (var i = 0u; i < n; i++) {
        let slot = oq_slot(q, front + i);
        let v = atomicExchange(&heap_meta[slot], OQ_EMPTY);
        if (v == OQ_EMPTY || v == OQ_SKIP) {
            continue;
        }
        var unit = v - 1u;
        if (q == OURO_POOL) {
            unit = (v - 1u) << OURO_CHUNK_SHIFT;
        }
        if (unit < to_units) {
            atomicStore(&heap_meta[oq_slot(q, front + kept)], v);
            kept += 1u;
        } else {
            dropped += 1u;
        }
    }
    atomicStore(&heap_meta[qm + OQ_BACK], front + kept);
    if (dropped > 0u) {
        atomicSub(&heap_meta[qm], dropped);
    }
    return dropped;
}

fn strategy_trim(from_units: u32, to_units: u32) {
    let to_chunk = to_units >> OURO_CHUNK_SHIFT;
    let fresh = atomicLoad(&heap_meta[OURO_FRESH]);
    if (fresh <= to_chunk) {
        return; // nothing in the range was ever handed out
    }
    // Classes owning chunks (page chunks or runs) in the range: at most 28 classes
    // (log2 of HEAP_MAX_ALLOC / 16 + 1), so one mask word holds them.
    var classes = 0u;
    var old_end = from_units >> OURO_CHUNK_SHIFT;
    if ((from_units & (OURO_CHUNK_UNITS - 1u)) != 0u) {
        old_end += 1u; // a short last segment: its partial chunk (never handed out)
    }
    let stop = min(min(fresh, old_end), OURO_CHUNKS);
    for (var c = to_chunk; c < stop; c++) {
        let info = atomicLoad(&heap_meta[OURO_CHUNK_INFO + c]);
        if (info != 0u && info - 1u < OURO_CLASSES) {
            let k = info - 1u;
            classes |= 1u << k;
            ouro_spill_purge(c, k); // its spilled pages leave with it
            ouro_class_chunk_give(ouro_queue_meta(k));
            ouro_reserve_give(ouro_run_chunks(k));
        }
        atomicStore(&heap_meta[OURO_CHUNK_INFO + c], 0u);
    }
    for (var k = 0u; k < OURO_CLASSES; k++) {
        if ((classes & (1u << k)) != 0u) {
            ouro_compact(k, to_units);
        }
    }
    ouro_compact(OURO_POOL, to_units);
    atomicStore(&heap_meta[OURO_FRESH], to_chunk);
}
