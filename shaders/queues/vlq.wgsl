// The virtualized linked-chunk queue, VLQ (Ouroboros, ICS 2020, section 5.2, Algorithm 6):
// an index queue made of queue chunks from the chunk pool, linked by next pointers, with
// three chunk pointers per queue: front (dequeues start their search there), back
// (enqueues start there) and old, which lags behind front and returns drained chunks to the
// pool once they are more than OURO_VL_TRAIL chunks behind it (the paper's safety distance
// t: a reader that found a chunk through a stale pointer is given time to finish with it).
// The host sets t from the heap (chunks / 128, from 8 to 256 chunks: on a large heap, 256
// chunks of 2048 items outlast the ~270k threads an H200 keeps resident; it is a heuristic,
// as in the paper, not a proof).
//
// State (heap_meta): queue descriptor (queues/index_queue.wgsl) [2] front position,
// [3] back position, [5] front chunk + 1, [6] back chunk + 1, [7] old chunk + 1 (before
// the queue's first chunk, the link word that links it); ouro_vaq_base(q) + 0: chunks
// between old and front. Per chunk c used as a queue chunk: OURO_QC_START + c its first
// virtual position, OURO_QC_NEXT + c the link word to its successor (VL_LINKING below),
// OURO_QC_COUNT + c its count of finished positions and items
// (queues/queue_chunk_count.wgsl). The items are the chunk's OURO_QC_ITEMS words, accessed
// through the heap's atomic segment views.
//
// Invariants
//   - Front and back only move past a chunk whose positions are all finished (back: A
//     full; front: A full and B zero, Algorithm 6), so an operation that holds position pos
//     finds its chunk at or after front. Back can lag behind front, and a pointer's chunk
//     can be recycled under it: a queue chunk's info names its queue (ouro_queue_info), and
//     a search that meets a chunk not of its queue or past pos starts again from front (an
//     enqueue) or old (vl_find).
//   - Chunks are linked in position order, with void ranges between some of them
//     (queues/vlq_links.wgsl, where the links, the void ranges and the search are).
//   - old stays OURO_VL_TRAIL chunks behind front; only the chunk it leaves is freed.
//   - Abandoned positions (a dequeuer that waited out its slot) are marked OQ_SKIP and
//     finished by their enqueuer, as in the standard queue.
//
// Loops, all bounded: the search's (queues/vlq_links.wgsl), OURO_MAKE_WAIT rounds of
// waiting for a link being made per pointer move, OQ_SLOT_WAIT rounds per slot, OQ_MOVES
// positions per operation, VL_ROUNDS steps of pointer moving, VL_RELEASE_TRIES attempts to
// move old, VL_ROUNDS steps of back's catch-up (vl_catch_up_back), and 4 attempts to skip
// a void range. A search that runs out of rounds fails and leaves its position
// unfinished; the caller counts it (OQ_FAIL_SEARCH for enqueues, OURO_EV_STRANDED for
// dequeues) and conformance asserts that no enqueue's does.

#include "queue_chunk_count.wgsl"
#include "vlq_links.wgsl"


// Moves a position counter that lies in the void range [pos, end) to its end, so that the
// next reservations skip it. Bounded: 4 attempts.
fn vl_skip_void(word: u32, pos: u32, end: u32) {
    for (var attempt = 0u; attempt < 4u; attempt++) {
        let x = atomicLoad(&heap_meta[word]);
        if (x - pos >= end - pos) {
            return;
        }
        if (atomicCompareExchangeWeak(&heap_meta[word], x, end).exchanged) {
            return;
        }
    }
}

// Algorithm 6: moves the front (back = false) or back pointer on past every finished chunk
// at it; front moves let old follow at OURO_VL_TRAIL chunks and free what it leaves. It
// starts at the pointer, not at the chunk whose finish called it: a chunk that finished
// before its successor was linked (the heap had no chunk for it), or before the pointer
// reached it, is then passed by whoever calls next.
fn vl_advance(q: u32, back: bool) {
    let d = ouro_queue_meta(q);
    let word = d + select(VL_FRONT, VL_BACK, back);
    for (var step = 0u; step < VL_ROUNDS; step++) {
        let p = atomicLoad(&heap_meta[word]);
        if (!vl_is_chunk(p)) {
            return;
        }
        let c = p - 1u;
        let cnt = atomicLoad(&heap_meta[OURO_QC_COUNT + c]);
        let finished = select(cnt == QC_DRAINED, qc_filled(cnt), back);
        if (!finished || atomicLoad(&heap_meta[OURO_CHUNK_INFO + c]) != ouro_queue_info(q)) {
            return;
        }
        // A finished chunk needs its successor before the pointer can move on: link it if
        // nobody has yet (usually the first enqueuer of the chunk did, see vl_put_at).
        let n = vl_await_next(q, c, atomicLoad(&heap_meta[OURO_QC_START + c]));
        if (n == 0u || n == VL_LINKING) {
            return;
        }
        if (atomicCompareExchangeWeak(&heap_meta[word], p, n).exchanged && !back) {
            // A drained chunk is finished for enqueuers too: if back still points at it (the
            // fill and the drain were one step), move back along as well.
            atomicCompareExchangeWeak(&heap_meta[d + VL_BACK], p, n);
            if (atomicAdd(&heap_meta[ouro_vaq_base(q)], 1u) >= OURO_VL_TRAIL) {
                vl_release_old(q);
            }
        }
        // Moved, by this call or another, or a spurious failure: the next step reads again.
    }
}

// Moves old on while it is more than OURO_VL_TRAIL chunks behind front, freeing the chunks
// it leaves. Front moves run concurrently, and a mover whose CAS on old loses to another
// must try again: with one attempt per mover, every lost race would leave old one chunk
// further behind for good, and the queue would keep chunks the pages need. Each attempt
// first takes one chunk off the count of chunks behind front, and gives it back unless its
// CAS moved old: concurrent movers then never move old more often than front moved ahead
// of the trail (checking the count with a load would let two movers both take the last
// chunk it allows). Bounded by VL_RELEASE_TRIES attempts.
const VL_RELEASE_TRIES: u32 = 16u;

fn vl_release_old(q: u32) {
    let d = ouro_queue_meta(q);
    let behind = ouro_vaq_base(q);
    for (var attempt = 0u; attempt < VL_RELEASE_TRIES; attempt++) {
        if (atomicSub(&heap_meta[behind], 1u) <= OURO_VL_TRAIL) {
            atomicAdd(&heap_meta[behind], 1u);
            return;
        }
        let o = atomicLoad(&heap_meta[d + VL_OLD]);
        var on = 0u;
        if (vl_is_chunk(o)) {
            on = vl_next(o - 1u);
        }
        if (on == 0u) {
            atomicAdd(&heap_meta[behind], 1u);
            return;
        }
        if (atomicCompareExchangeWeak(&heap_meta[d + VL_OLD], o, on).exchanged) {
            // A drained chunk of a page queue holds only OQ_EMPTY (each dequeuer emptied its
            // word); a chunk-token log's holds OQ_SKIP where its tokens were removed
            // (chunk_tokens.wgsl), so it goes back to be zeroed when next made a queue chunk.
#ifdef OURO_CHUNK_BASED
            ouro_chunk_free(o - 1u);
#else
            ouro_queue_chunk_free_drained(o - 1u);
#endif
        } else {
            atomicAdd(&heap_meta[behind], 1u);
        }
    }
}

// Records a finished position of chunk c (enqueue: +A and +B if an item was written;
// dequeue: -B) and moves the pointers when the chunk is complete.
fn vl_finish(q: u32, c: u32, delta_add: u32, delta_sub: u32) {
    let after = qc_count_change(c, delta_add, delta_sub);
    // The enqueue that fills the chunk moves back; the last consumer moves front. Both can
    // fall to one call: an enqueuer that finishes the last position by finding it abandoned
    // (OQ_SKIP, so no item) fills and drains the chunk at once. The first position finished
    // in a chunk moves front too: the chunk before it may have drained while it had no
    // successor, and nobody else would move front past that one.
    let drained = after == QC_DRAINED;
    let filled = delta_add != 0u && qc_filled(after);
    let first = delta_add != 0u && (after >> 16u) == 1u;
    // One call site of vl_advance, which links chunks: NIR inlines every call, and a
    // second copy adds much to a cold compile. The bounds are not constant, so that the
    // loop is not unrolled into two copies: back (i = 0) if filled, then front (i = 1).
    for (var i = select(1u, 0u, filled); i < select(1u, 2u, drained || first); i++) {
        vl_advance(q, i == 0u);
    }
    if (filled || drained) {
        vl_catch_up_back(q);
    }
}

// Moves back past every chunk that is filled or behind front. Needed because back's moves
// race: a front move drags back along with a CAS that expects back at the chunk front
// leaves; if that drag is delayed past the next front move (the next one's drag then fails,
// as back is not there yet), the late drag leaves back behind front, where no filler's or
// front's CAS will ever find it, and old frees its chunk after OURO_VL_TRAIL more moves.
// Enqueues would then search from a recycled chunk (vl_find recovers by searching from
// front, at the cost of a longer walk). Called after every move, it repairs such a lag
// long before old gets there, and sets a back that names a chunk no longer this queue's
// to front. Bounded by VL_ROUNDS steps; no linking (chunks behind
// front and filled chunks already have successors, or the walk stops).
fn vl_catch_up_back(q: u32) {
    let d = ouro_queue_meta(q);
    for (var step = 0u; step < VL_ROUNDS; step++) {
        let b = atomicLoad(&heap_meta[d + VL_BACK]);
        let f = atomicLoad(&heap_meta[d + VL_FRONT]);
        if (!vl_is_chunk(b) || !vl_is_chunk(f)) {
            return;
        }
        if (atomicLoad(&heap_meta[OURO_CHUNK_INFO + b - 1u]) != ouro_queue_info(q)) {
            atomicCompareExchangeWeak(&heap_meta[d + VL_BACK], b, f);
            continue;
        }
        let bs = atomicLoad(&heap_meta[OURO_QC_START + b - 1u]);
        let fs = atomicLoad(&heap_meta[OURO_QC_START + f - 1u]);
        let behind = bitcast<i32>(fs - bs) > 0;
        let filled = qc_filled(atomicLoad(&heap_meta[OURO_QC_COUNT + b - 1u]));
        if (!behind && !filled) {
            return;
        }
        let n = vl_next(b - 1u);
        if (n == 0u) {
            return;
        }
        // Whoever wins, the next step reads back again.
        atomicCompareExchangeWeak(&heap_meta[d + VL_BACK], b, n);
    }
}

// Puts item at position first_pos, or at fresh positions when that one is void or its
// dequeuer abandoned it (at most OQ_MOVES positions). Every position it takes is finished
// before it returns, unless a search runs out of rounds (vl_find).
fn vl_put_at(q: u32, first_pos: u32, item: u32, cursor: ptr<function, u32>) -> bool {
    let d = ouro_queue_meta(q);
    var pos = first_pos;
    var gap_end = 0u;
    for (var moves = 0u; moves < OQ_MOVES; moves++) {
        if (moves > 0u) {
            pos = oq_reserve_back(q, 1u);
        }
        let c = vl_find(q, pos, true, cursor, &gap_end);
        if (c == VL_VOID) {
            vl_skip_void(d + OQ_BACK, pos, gap_end);
            continue;
        }
        if (c == OURO_NO_CHUNK) {
            return false;
        }
        // The enqueuer of a chunk's first position links its successor ahead of need, so
        // later enqueuers and the pointer moves rarely wait for a link (section 5.2).
        if ((pos & (OURO_QC_ITEMS - 1u)) == 0u) {
            vl_link_next(q, c, pos);
        }
        let seg = ouro_qc_segment(c);
        let w = ouro_qc_word(c, pos);
        var outcome = 0u; // 0 waited out, 1 written, 2 found abandoned
        for (var round = 0u; round < OQ_SLOT_WAIT; round++) {
            let x = heap_atomic_cas(seg, w, OQ_EMPTY, item);
            if (x.y == 1u) {
                outcome = 1u;
                break;
            }
            // Found abandoned: the word holds OQ_SKIP, so the clear is always true.
            if (x.x == OQ_SKIP && ouro_qc_clear(seg, w)) {
                outcome = 2u;
                break;
            }
        }
        // Written: one more finished position and one more item; abandoned, or the slot
        // never became writable (content the chunk's zeroing had not yet replaced, which
        // no dequeuer takes as an item): finished only.
        vl_finish(q, c, QC_ONE_FINISHED + select(0u, 1u, outcome == 1u), 0u);
        if (outcome == 0u) {
            return oq_failed(OQ_FAIL_SLOT_WAIT);
        }
        if (outcome == 1u) {
            return true;
        }
    }
    return oq_failed(OQ_FAIL_MOVES);
}

fn vl_dequeue(q: u32) -> u32 {
    let d = ouro_queue_meta(q);
    var pos = 0u;
    var cursor = OURO_NO_CHUNK;
    var gap_end = 0u;
    var c = VL_VOID;
    // A void position holds no item and needs no finishing: the dequeue takes the next.
    for (var moves = 0u; moves < OQ_MOVES && c == VL_VOID; moves++) {
        if (moves > 0u) {
            vl_skip_void(d + OQ_FRONT, pos, gap_end);
        }
        pos = atomicAdd(&heap_meta[d + OQ_FRONT], 1u);
        c = vl_find(q, pos, false, &cursor, &gap_end);
    }
    if (c == VL_VOID || c == OURO_NO_CHUNK) {
        return OQ_EMPTY;
    }
    let seg = ouro_qc_segment(c);
    let w = ouro_qc_word(c, pos);
    var item = OQ_EMPTY;
    for (var round = 0u; round < OQ_SLOT_WAIT; round++) {
        if (cq_holds_item(q, heap_atomic_load(seg, w))) {
            item = heap_atomic_exchange(seg, w, OQ_EMPTY);
            break;
        }
    }
    var seen = OQ_EMPTY;
    for (var attempt = 0u; attempt < 64u && item == OQ_EMPTY; attempt++) {
        let x = heap_atomic_cas(seg, w, OQ_EMPTY, OQ_SKIP);
        if (x.y == 1u) {
            return OQ_EMPTY; // its enqueuer finishes the position when it finds OQ_SKIP
        }
        seen = x.x;
        if (cq_holds_item(q, x.x)) {
            item = heap_atomic_exchange(seg, w, OQ_EMPTY);
        }
    }
    if (item != OQ_EMPTY) {
        vl_finish(q, c, 0u, 1u);
    } else {
        cq_gave_up_on(seen);
    }
    return item;
}
