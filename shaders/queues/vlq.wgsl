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
// [3] back position, [5] front chunk + 1, [6] back chunk + 1, [7] old chunk + 1;
// ouro_vaq_base(q) + 0: chunks between old and front. Per chunk c used as a queue chunk:
// OURO_QC_START + c its first virtual position, OURO_QC_NEXT + c the next chunk + 1,
// OURO_QC_COUNT + c = A << 16 | B: A positions finished by enqueuers (written, or found
// abandoned), B items in it not yet dequeued. The items are the chunk's OURO_QC_ITEMS words,
// accessed through the heap's atomic segment views.
//
// Invariants
//   - Front and back only move past a chunk whose positions are all finished (back: A
//     full; front: A full and B zero, Algorithm 6), so an operation that holds position pos
//     finds its chunk at or after front. Back can lag behind front, and a pointer's chunk
//     can be recycled under it: a queue chunk's info names its queue (ouro_queue_info), and
//     a search that meets a chunk not of its queue or past pos starts again from front (an
//     enqueue) or old (vl_find).
//   - Chunks are linked in position order: a chunk's successor starts OURO_QC_ITEMS later.
//     The first enqueuer of a chunk's first position links it; others wait VQ_PTR_WAIT
//     rounds for the link and then try to link it themselves. One linker per chunk: the
//     invocation whose CAS claims the empty link word (VL_LINKING) takes and zeroes the
//     successor and publishes it, or clears the claim if the heap has none; everyone else
//     waits for the word (vl_await_next).
//   - old stays OURO_VL_TRAIL chunks behind front; only the chunk it leaves is freed.
//   - Abandoned positions (a dequeuer that waited out its slot) are marked OQ_SKIP and
//     finished by their enqueuer, as in the standard queue.
//
// Loops, all bounded: VL_ROUNDS rounds of traversal or waiting per search, OURO_QC_ITEMS
// exchanges to zero a chunk, 64 CAS attempts to claim a link word and OURO_MAKE_WAIT rounds
// of waiting for a link being made, OQ_SLOT_WAIT rounds per slot, OQ_MOVES positions per
// item, VL_ROUNDS steps of pointer moving, VL_RELEASE_TRIES attempts to move old, and
// VL_ROUNDS steps of back's catch-up (vl_catch_up_back).
// A search that runs out fails; the caller reports it. Known gap: the failed enqueue's
// position is never finished, so front and back can never pass its chunk and every chunk
// linked after it stays in the queue (queues/vaq.wgsl solves the same case with dead laps;
// a linked queue would need a chunk-less marker for a whole range of positions).

// Rounds of one search (walking or waiting), and steps of one pointer move. A search from
// back may walk as many chunks as the queue has positions reserved ahead of it: with 1M
// invocations, about 2000 producers of 511 pages reserve 500 chunks' worth at once. A
// search that runs out costs more than its own page: its position is never finished, so
// front stops at its chunk for good (the known gap above). The bound is therefore set
// high enough that searches of a full-heap fill at that scale do not run out.
const VL_ROUNDS: u32 = 32768u;
const VL_A_ONE: u32 = 0x10000u;

// Publishes `c` in `word` if it still holds 0; returns the chunk + 1 that won.
fn vl_publish(word: u32, c: u32) -> u32 {
    for (var attempt = 0u; attempt < 64u; attempt++) {
        let x = atomicCompareExchangeWeak(&heap_meta[word], 0u, c + 1u);
        if (x.exchanged) {
            return c + 1u;
        }
        if (x.old_value != 0u) {
            return x.old_value;
        }
    }
    return 0u;
}

// Descriptor words of the three chunk pointers (chunk + 1; 0 before the first enqueue).
const VL_FRONT: u32 = 5u;
const VL_BACK: u32 = 6u;
const VL_OLD: u32 = 7u;

// The chunk that pointer `which` (VL_FRONT, VL_BACK or VL_OLD) names, creating the queue's
// first chunk if there is none yet.
fn vl_pointer_chunk(q: u32, which: u32) -> u32 {
    let d = ouro_queue_meta(q);
    let p = atomicLoad(&heap_meta[d + which]);
    if (p != 0u) {
        return p - 1u;
    }
    // Not initialised: old is the authoritative first chunk; front and back follow it.
    var first = atomicLoad(&heap_meta[d + VL_OLD]);
    if (first == 0u) {
        let c = ouro_queue_chunk_new(q, 0u, true);
        if (c == OURO_NO_CHUNK) {
            return c;
        }
        first = vl_publish(d + VL_OLD, c);
        if (first != c + 1u) {
            ouro_chunk_free(c);
        }
        if (first == 0u) {
            return OURO_NO_CHUNK;
        }
    }
    vl_publish(d + VL_FRONT, first - 1u);
    vl_publish(d + VL_BACK, first - 1u);
    return atomicLoad(&heap_meta[d + which]) - 1u;
}

// OURO_QC_NEXT + c while one invocation links c's successor (vl_link_next).
const VL_LINKING: u32 = 0xffffffffu;

// The successor of chunk c + 1; 0 if it has none yet (or it is being linked).
fn vl_next(c: u32) -> u32 {
    let n = atomicLoad(&heap_meta[OURO_QC_NEXT + c]);
    return select(n, 0u, n == VL_LINKING);
}

// Links a successor to chunk c (which starts at s) if it has none: returns next + 1, 0 if
// the heap has no chunk for it, or VL_LINKING if another invocation is linking it.
//
// One linker per chunk: it claims the link word (VL_LINKING), and only it takes a chunk.
// Without the claim every searcher that waits out its patience takes and zeroes a chunk
// of its own, and all but one give theirs back. With thousands of searchers on a GPU that
// can empty the pool for a moment (the VAQ's installs claim their word for the same
// reason: vaq.wgsl), and a link that fails for want of memory leaves its enqueue's
// position unfinished for good (the known gap in the header).
fn vl_link_next(q: u32, c: u32, s: u32) -> u32 {
    let word = OURO_QC_NEXT + c;
    for (var attempt = 0u; attempt < 64u; attempt++) {
        let x = atomicCompareExchangeWeak(&heap_meta[word], 0u, VL_LINKING);
        if (x.exchanged) {
            let nc = ouro_queue_chunk_new(q, s + OURO_QC_ITEMS, true);
            if (nc == OURO_NO_CHUNK) {
                atomicStore(&heap_meta[word], 0u);
                return 0u;
            }
            atomicStore(&heap_meta[word], nc + 1u);
            return nc + 1u;
        }
        if (x.old_value != 0u) {
            return x.old_value;
        }
    }
    return VL_LINKING; // only spurious CAS failures: as good as a link in progress
}

// c's successor + 1, linking it if it is missing and waiting (OURO_MAKE_WAIT rounds) while
// another invocation links it; 0 if the heap has no chunk for it, VL_LINKING if the wait
// runs out.
fn vl_await_next(q: u32, c: u32, s: u32) -> u32 {
    for (var round = 0u; round < OURO_MAKE_WAIT; round++) {
        // Waiters read; only an empty word is worth a CAS.
        let raw = atomicLoad(&heap_meta[OURO_QC_NEXT + c]);
        if (raw == VL_LINKING) {
            continue;
        }
        if (raw != 0u) {
            return raw;
        }
        let n = vl_link_next(q, c, s);
        if (n != VL_LINKING) {
            return n;
        }
    }
    return VL_LINKING;
}

// A failed search: OURO_NO_CHUNK, its cause counted for enqueues (back).
fn vl_failed(back: bool, cause: u32) -> u32 {
    if (back) {
        oq_failed(cause);
    }
    return OURO_NO_CHUNK;
}

// The chunk that holds position pos, searched from the front (dequeue) or back (enqueue)
// pointer; links successors that are missing.
//
// A pointer can be stale: back may lag behind front (see vl_catch_up_back) long enough for
// `old` to free its chunk, which is then reused, by this queue at a later position, by
// another queue, or for pages. A search that meets a chunk that is not this queue's or that
// starts after pos starts again from an older pointer: back, then front, then old. That
// is sound because no pending operation's position lies behind front (front passes only
// chunks whose positions are all finished and whose items are all taken), and every chunk
// from old on is alive and linked in order. A stale back is also repaired to front, and
// vl_catch_up_back moves it on from there.
//
// `cursor` is the chunk where the caller's previous search ended (OURO_NO_CHUNK: none), and
// is set to this one's. An invocation that puts a run of positions (a producer's batch)
// starts each search there: searching each of 511 positions from back walks so far, with
// many producers at once, that searches run out of rounds. A
// cursor is checked like a pointer: a chunk not of this queue, or starting after pos, sends
// the search to back.
fn vl_find(q: u32, pos: u32, back: bool, cursor: ptr<function, u32>) -> u32 {
    // NIR inlines every call, so each helper is called from one place in this loop.
    let d = ouro_queue_meta(q);
    var ptr = select(VL_FRONT, VL_BACK, back);
    var c = *cursor;
    var from_cursor = c != OURO_NO_CHUNK;
    var direct = false; // c is what pointer `ptr` named, not a chunk reached by a link
    var waited = 0u;
    for (var round = 0u; round < VL_ROUNDS; round++) {
        if (c == OURO_NO_CHUNK) {
            c = vl_pointer_chunk(q, ptr);
            if (c == OURO_NO_CHUNK) {
                return vl_failed(back, OQ_FAIL_NO_MEMORY);
            }
            direct = true;
        }
        let s = atomicLoad(&heap_meta[OURO_QC_START + c]);
        let ours = atomicLoad(&heap_meta[OURO_CHUNK_INFO + c]) == ouro_queue_info(q);
        if (ours && pos - s < OURO_QC_ITEMS) {
            *cursor = c;
            return c;
        }
        if (!ours || pos - s >= 0x80000000u) {
            if (from_cursor) {
                from_cursor = false; // the pointers as usual
            } else if (ptr == VL_BACK) {
                if (direct) {
                    let f = atomicLoad(&heap_meta[d + VL_FRONT]);
                    if (f != 0u) {
                        atomicCompareExchangeWeak(&heap_meta[d + VL_BACK], c + 1u, f);
                    }
                }
                ptr = VL_FRONT;
            } else {
                ptr = VL_OLD;
            }
            c = OURO_NO_CHUNK;
            continue;
        }
        var n = vl_next(c);
        if (n == 0u) {
            // No successor yet: the enqueuer of its first position links it; others wait,
            // then link one themselves.
            waited += 1u;
            if (pos == s + OURO_QC_ITEMS || waited >= VQ_PTR_WAIT) {
                n = vl_await_next(q, c, s);
                if (n == 0u) {
                    return vl_failed(back, OQ_FAIL_NO_MEMORY);
                }
                if (n == VL_LINKING) {
                    return vl_failed(back, OQ_FAIL_MAKE_WAIT);
                }
            }
        }
        if (n != 0u) {
            // waited is not reset: one search waits VQ_PTR_WAIT rounds for links in all, then
            // links what it needs itself. Waiting that long for each of several missing links
            // (many enqueuers far ahead of back on a GPU with ~270k threads in flight) would
            // use up VL_ROUNDS and fail the enqueue.
            c = n - 1u;
            direct = false;
        }
    }
    return vl_failed(back, OQ_FAIL_SEARCH);
}

// Algorithm 6: moves the front (back = false) or back pointer from chunk c past every
// finished chunk; front moves let old follow at OURO_VL_TRAIL chunks and free what it leaves.
fn vl_advance(q: u32, c0: u32, back: bool) {
    let d = ouro_queue_meta(q);
    var word = d + VL_FRONT;
    var done = OURO_QC_ITEMS * VL_A_ONE;
    if (back) {
        word = d + VL_BACK;
    }
    var c = c0;
    for (var step = 0u; step < VL_ROUNDS; step++) {
        // A finished chunk needs its successor before the pointer can move on: link it if
        // nobody has yet (usually the first enqueuer of the chunk did, see vl_put_at).
        let n = vl_await_next(q, c, atomicLoad(&heap_meta[OURO_QC_START + c]));
        if (n == 0u || n == VL_LINKING) {
            return;
        }
        let x = atomicCompareExchangeWeak(&heap_meta[word], c + 1u, n);
        if (!x.exchanged) {
            if (x.old_value == c + 1u) {
                continue; // spurious failure
            }
            return;
        }
        if (!back) {
            // A drained chunk is finished for enqueuers too: if back still points at it (the
            // fill and the drain were one step), move back along as well.
            atomicCompareExchangeWeak(&heap_meta[d + VL_BACK], c + 1u, n);
            if (atomicAdd(&heap_meta[ouro_vaq_base(q)], 1u) >= OURO_VL_TRAIL) {
                vl_release_old(q);
            }
        }
        c = n - 1u;
        let cnt = atomicLoad(&heap_meta[OURO_QC_COUNT + c]);
        if ((back && (cnt >> 16u) != OURO_QC_ITEMS) || (!back && cnt != done)) {
            return;
        }
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
        if (o != 0u) {
            on = vl_next(o - 1u);
        }
        if (on == 0u) {
            atomicAdd(&heap_meta[behind], 1u);
            return;
        }
        if (atomicCompareExchangeWeak(&heap_meta[d + VL_OLD], o, on).exchanged) {
            ouro_chunk_free(o - 1u);
        } else {
            atomicAdd(&heap_meta[behind], 1u);
        }
    }
}

// Records a finished position of chunk c (enqueue: +A and +B if an item was written;
// dequeue: -B) and moves the pointers when the chunk is complete.
fn vl_finish(q: u32, c: u32, delta_add: u32, delta_sub: u32) {
    var after: u32;
    if (delta_add != 0u) {
        after = atomicAdd(&heap_meta[OURO_QC_COUNT + c], delta_add) + delta_add;
    } else {
        after = atomicSub(&heap_meta[OURO_QC_COUNT + c], delta_sub) - delta_sub;
    }
    // The enqueue that fills the chunk moves back; the last consumer moves front. Both can
    // fall to one call: an enqueuer that finishes the last position by finding it abandoned
    // (OQ_SKIP, so no item) fills and drains the chunk at once, and then moves both (front's
    // drag of back alone misses back when front is still behind this chunk).
    let drained = after == OURO_QC_ITEMS * VL_A_ONE;
    let filled = delta_add != 0u && (after >> 16u) == OURO_QC_ITEMS;
    // One call site of vl_advance, which links chunks: NIR inlines every call, and a
    // second copy adds much to a cold compile. The bounds
    // are not constant, so that the loop is not unrolled into two copies: back (i = 0) if
    // filled, then front (i = 1) if drained.
    for (var i = select(1u, 0u, filled); i < select(1u, 2u, drained); i++) {
        vl_advance(q, c, i == 0u);
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
        if (b == 0u || f == 0u) {
            return;
        }
        if (atomicLoad(&heap_meta[OURO_CHUNK_INFO + b - 1u]) != ouro_queue_info(q)) {
            atomicCompareExchangeWeak(&heap_meta[d + VL_BACK], b, f);
            continue;
        }
        let bs = atomicLoad(&heap_meta[OURO_QC_START + b - 1u]);
        let fs = atomicLoad(&heap_meta[OURO_QC_START + f - 1u]);
        let behind = bitcast<i32>(fs - bs) > 0;
        let filled = (atomicLoad(&heap_meta[OURO_QC_COUNT + b - 1u]) >> 16u) == OURO_QC_ITEMS;
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

fn vl_put_at(q: u32, first_pos: u32, item: u32, cursor: ptr<function, u32>) -> bool {
    var pos = first_pos;
    for (var moves = 0u; moves < OQ_MOVES; moves++) {
        let c = vl_find(q, pos, true, cursor);
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
        if (outcome == 0u) {
            return oq_failed(OQ_FAIL_SLOT_WAIT);
        }
        // Written: one more finished position and one more item; abandoned: finished only.
        vl_finish(q, c, VL_A_ONE + select(0u, 1u, outcome == 1u), 0u);
        if (outcome == 1u) {
            return true;
        }
        pos = oq_reserve_back(q, 1u);
    }
    return oq_failed(OQ_FAIL_MOVES);
}

fn vl_dequeue(q: u32) -> u32 {
    let pos = atomicAdd(&heap_meta[ouro_queue_meta(q) + 2u], 1u);
    var cursor = OURO_NO_CHUNK;
    let c = vl_find(q, pos, false, &cursor);
    if (c == OURO_NO_CHUNK) {
        ouro_count(OURO_EV_STRANDED);
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
