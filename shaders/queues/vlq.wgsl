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
//   - Chunks are linked in position order: a chunk's successor starts OURO_QC_ITEMS later,
//     or later still after a void range (below). The first enqueuer of a chunk's first
//     position links its successor; others wait VQ_PTR_WAIT rounds for the link and then
//     try to link it themselves. One linker per chunk: the invocation whose CAS claims the
//     link word (VL_LINKING) takes and zeroes the successor and publishes it, or puts the
//     word back if the heap has none; everyone else waits for the word.
//   - Void ranges: an operation whose position needs a chunk that the heap cannot give
//     records, in the link word of the chunk before (VL_STARVED with a count of chunk
//     spans), that the positions up to its own are void, and gives up. In the paper a
//     failed enqueue leaves its position unfinished, and front can never pass its chunk:
//     every chunk linked after it stays in the queue for good. A void position belongs to
//     no chunk, so there is nothing to finish; the successor is linked after the range, and
//     operations holding positions in it move to fresh ones (enqueues at the back, dequeues
//     at the front, whose counters skip the range). The range is claimed with a CAS on the
//     same word the linker claims, so a position is void or in a chunk, never both.
//   - old stays OURO_VL_TRAIL chunks behind front; only the chunk it leaves is freed.
//   - Abandoned positions (a dequeuer that waited out its slot) are marked OQ_SKIP and
//     finished by their enqueuer, as in the standard queue.
//
// Loops, all bounded: VL_ROUNDS rounds of traversal or waiting per search, OURO_QC_ITEMS
// exchanges to zero a chunk, 64 CAS attempts to claim a link word, OURO_MAKE_WAIT rounds
// of waiting for a link being made (per search round, and per pointer move), OQ_SLOT_WAIT
// rounds per slot, OQ_MOVES positions per operation, VL_ROUNDS steps of pointer moving,
// VL_RELEASE_TRIES attempts to move old, and VL_ROUNDS steps of back's catch-up
// (vl_catch_up_back). A search that runs out of rounds fails and leaves its position
// unfinished; the caller counts it (OQ_FAIL_SEARCH for enqueues, OURO_EV_STRANDED for
// dequeues) and conformance asserts that no enqueue's does.

// Rounds of one search (walking, or waiting for a link), and steps of one pointer move. A
// search from back may walk as many chunks as the queue has positions reserved ahead of it:
// with 1M invocations, about 2000 producers of 511 pages reserve 500 chunks' worth at once.
// A search that runs out leaves its position unfinished, which holds front at its chunk
// for good; the bound is set high enough that searches of a full-heap fill at that scale do
// not run out (conformance asserts that none does).
const VL_ROUNDS: u32 = 32768u;
const VL_A_ONE: u32 = 0x10000u;

// Link words: OURO_QC_NEXT + c for chunk c's successor, and VL_OLD before the queue has a
// chunk (it links the first one, as the successor of a chunk that ends at position 0).
//   0                 no successor yet
//   chunk + 1         the successor (1 to OURO_CHUNKS)
//   VL_LINKING        one invocation is linking it
//   VL_STARVED | g    no successor, and the g * OURO_QC_ITEMS positions after the chunk are
//                     void: operations that held them needed the successor when the heap
//                     had no chunk for it. The successor, once linked, starts after them.
const VL_LINKING: u32 = 0xffffffffu;
const VL_STARVED: u32 = 0x80000000u;
const VL_GAP: u32 = 0x7fffffffu;

// vl_find's answer for a void position (besides a chunk, or OURO_NO_CHUNK for a failure).
const VL_VOID: u32 = 0xfffffffdu;

fn vl_is_chunk(raw: u32) -> bool {
    return raw != 0u && raw <= OURO_CHUNKS;
}

// The void chunk spans that link word value w records.
fn vl_gap(w: u32) -> u32 {
    return select(0u, w & VL_GAP, w >= VL_STARVED && w != VL_LINKING);
}

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

// Descriptor words of the three chunk pointers (chunk + 1; 0 before the first chunk; old's
// word links the first chunk and holds link word values until then).
const VL_FRONT: u32 = 5u;
const VL_BACK: u32 = 6u;
const VL_OLD: u32 = 7u;

// The chunk that pointer `which` (VL_FRONT, VL_BACK or VL_OLD) names, publishing front and
// back from old the first time; OURO_NO_CHUNK while the queue has no chunk (vl_find links
// the first one).
fn vl_pointer_chunk(q: u32, which: u32) -> u32 {
    let d = ouro_queue_meta(q);
    let p = atomicLoad(&heap_meta[d + which]);
    if (vl_is_chunk(p)) {
        return p - 1u;
    }
    let first = atomicLoad(&heap_meta[d + VL_OLD]);
    if (!vl_is_chunk(first)) {
        return OURO_NO_CHUNK;
    }
    vl_publish(d + VL_FRONT, first - 1u);
    vl_publish(d + VL_BACK, first - 1u);
    return atomicLoad(&heap_meta[d + which]) - 1u;
}

// The successor + 1 of chunk c, or 0 if it has none yet (or it is being linked).
fn vl_next(c: u32) -> u32 {
    let n = atomicLoad(&heap_meta[OURO_QC_NEXT + c]);
    return select(0u, n, vl_is_chunk(n));
}

// Links a successor at link word `word` of a chunk whose positions end at `end`, if it has
// none: returns next + 1; 0 if the heap has no chunk for it; VL_LINKING if another
// invocation is linking it. `need` > 0: the caller holds a position in the need-th chunk
// span after `end`, and a failed link records that span as void (VL_STARVED), so the
// position needs no finishing; with no free chunk in sight it records that without trying.
//
// One linker per word: it claims the word (VL_LINKING), and only it takes a chunk.
// Without the claim every searcher that waits out its patience takes and zeroes a chunk
// of its own, and all but one give theirs back; with thousands of searchers on a GPU that
// can empty the pool for a moment (the VAQ's installs claim their word for the same
// reason: vaq.wgsl).
fn vl_link(q: u32, word: u32, end: u32, need: u32) -> u32 {
    for (var attempt = 0u; attempt < 64u; attempt++) {
        let w = atomicLoad(&heap_meta[word]);
        if (vl_is_chunk(w) || w == VL_LINKING) {
            return w;
        }
        let g = vl_gap(w);
        let claim = select(w, VL_STARVED | need, need > g);
        let record_only = need > g && ouro_free_chunks() <= 0;
        if (atomicCompareExchangeWeak(&heap_meta[word], w, select(VL_LINKING, claim, record_only)).exchanged) {
            if (record_only) {
                return 0u;
            }
            let nc = ouro_queue_chunk_new(q, end + g * OURO_QC_ITEMS, true);
            atomicStore(&heap_meta[word], select(nc + 1u, claim, nc == OURO_NO_CHUNK));
            return select(nc + 1u, 0u, nc == OURO_NO_CHUNK);
        }
    }
    return VL_LINKING; // only spurious CAS failures: as good as a link in progress
}

fn vl_link_next(q: u32, c: u32, s: u32) -> u32 {
    return vl_link(q, OURO_QC_NEXT + c, s + OURO_QC_ITEMS, 0u);
}

// c's successor + 1, linking it if it is missing and waiting (OURO_MAKE_WAIT rounds) while
// another invocation links it; 0 if the heap has no chunk for it, VL_LINKING if the wait
// runs out.
fn vl_await_next(q: u32, c: u32, s: u32) -> u32 {
    for (var round = 0u; round < OURO_MAKE_WAIT; round++) {
        // Waiters read; only a word with no link is worth a CAS.
        let raw = atomicLoad(&heap_meta[OURO_QC_NEXT + c]);
        if (raw == VL_LINKING) {
            continue;
        }
        if (vl_is_chunk(raw)) {
            return raw;
        }
        let n = vl_link_next(q, c, s);
        if (n != VL_LINKING) {
            return n;
        }
    }
    return VL_LINKING;
}

// A failed search: OURO_NO_CHUNK, its cause counted (enqueues); a dequeue whose search ran
// out leaves its position unconsumed (OURO_EV_STRANDED).
fn vl_failed(back: bool, cause: u32) -> u32 {
    if (back) {
        oq_failed(cause);
    } else if (cause == OQ_FAIL_SEARCH) {
        ouro_count(OURO_EV_STRANDED);
    }
    return OURO_NO_CHUNK;
}

// Whether chunk c is still this queue's queue chunk starting at s (what a reader checks
// after reading words of it: a chunk that was freed and reused meanwhile has another info
// or start).
fn vl_still(q: u32, c: u32, s: u32) -> bool {
    return atomicLoad(&heap_meta[OURO_CHUNK_INFO + c]) == ouro_queue_info(q)
        && atomicLoad(&heap_meta[OURO_QC_START + c]) == s;
}

// The chunk that holds position pos, searched from the front (dequeue) or back (enqueue)
// pointer; links successors that are missing. VL_VOID if pos is void (*gap_end: the first
// position after its void range), OURO_NO_CHUNK if the search failed; a search that finds
// no chunk to link makes pos void before it fails (vl_link), so only a search that runs
// out of rounds leaves its position unfinished.
//
// A pointer can be stale: back may lag behind front (see vl_catch_up_back) long enough for
// `old` to free its chunk, which is then reused, by this queue at a later position, by
// another queue, or for pages. A search that meets a chunk that is not this queue's or that
// starts after pos starts again from an older pointer: back, then front, then old. That
// is sound because no pending operation's position lies behind front (front passes only
// chunks whose positions are all finished and whose items are all taken, void ranges lie
// between chunks), and every chunk from old on is alive and linked in order. So a position
// held by its caller that lies before old's chunk is void, and so is one that lies between
// a chunk and the successor its link names.
//
// `cursor` is the chunk where the caller's previous search ended (OURO_NO_CHUNK: none), and
// is set to this one's. An invocation that puts a run of positions (a producer's batch)
// starts each search there: searching each of 511 positions from back walks so far, with
// many producers at once, that searches run out of rounds. A cursor is checked like a
// pointer: a chunk not of this queue, or starting after pos, sends the search to back.
fn vl_find(q: u32, pos: u32, back: bool, cursor: ptr<function, u32>, gap_end: ptr<function, u32>) -> u32 {
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
            direct = true;
        }
        // With no chunk yet, old's word links the first one.
        var word = d + VL_OLD;
        var end = 0u;
        var s = 0u;
        if (c != OURO_NO_CHUNK) {
            s = atomicLoad(&heap_meta[OURO_QC_START + c]);
            let ours = atomicLoad(&heap_meta[OURO_CHUNK_INFO + c]) == ouro_queue_info(q);
            if (ours && pos - s < OURO_QC_ITEMS) {
                *cursor = c;
                return c;
            }
            if (!ours || pos - s >= 0x80000000u) {
                if (ours && direct && ptr == VL_OLD
                    && atomicLoad(&heap_meta[d + VL_OLD]) == c + 1u) {
                    *gap_end = s; // behind old
                    return VL_VOID;
                }
                if (from_cursor) {
                    from_cursor = false; // the pointers as usual
                } else if (ptr == VL_BACK) {
                    if (direct && !ours) {
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
            word = OURO_QC_NEXT + c;
            end = s + OURO_QC_ITEMS;
        }
        // pos lies at or after `end`: in the successor, or in a void range before it.
        let w = atomicLoad(&heap_meta[word]);
        if (vl_is_chunk(w)) {
            if (c == OURO_NO_CHUNK) {
                continue; // the first chunk, found through the pointers
            }
            let n = w - 1u;
            let sn = atomicLoad(&heap_meta[OURO_QC_START + n]);
            // A start read from a chunk in an earlier use lies before `end`, so a successor
            // that starts after pos, while both chunks still hold, means a void range.
            if (pos - end < sn - end && sn - end < 0x80000000u && vl_still(q, n, sn)
                && atomicLoad(&heap_meta[word]) == w && vl_still(q, c, s)) {
                *gap_end = sn;
                return VL_VOID;
            }
            c = n;
            direct = false;
            continue;
        }
        let need = (pos - end) / OURO_QC_ITEMS + 1u;
        if (need <= vl_gap(w)) {
            if (c != OURO_NO_CHUNK && !vl_still(q, c, s)) {
                c = OURO_NO_CHUNK;
                continue;
            }
            // Void, and no successor yet: with no chunk to be had, a fresh position past the
            // range would only make it longer, so the operation ends here.
            if (ouro_free_chunks() <= 0) {
                return vl_failed(back, OQ_FAIL_NO_MEMORY);
            }
            *gap_end = end + vl_gap(w) * OURO_QC_ITEMS;
            return VL_VOID;
        }
        if (w == VL_LINKING) {
            // Being linked: wait for the linker (its zeroing of a chunk takes thousands of
            // atomics), up to OURO_MAKE_WAIT loads, apart from the search's rounds. An
            // enqueuer far ahead of back waits for a chain of links, one after another.
            for (var spin = 0u; spin < OURO_MAKE_WAIT; spin++) {
                if (atomicLoad(&heap_meta[word]) != VL_LINKING) {
                    break;
                }
            }
            continue;
        }
        // No successor yet: the operation at its first position (and the queue's first
        // chunk's) links it at once; others wait VQ_PTR_WAIT rounds in all, then link it
        // themselves. Waiting that long for each of several missing links (many enqueuers
        // far ahead of back on a GPU with ~270k threads in flight) would use up VL_ROUNDS.
        waited += 1u;
        if (c == OURO_NO_CHUNK || pos == end || waited >= VQ_PTR_WAIT) {
            if (vl_link(q, word, end, need) == 0u) {
                return vl_failed(back, OQ_FAIL_NO_MEMORY); // pos is void now
            }
        }
    }
    return vl_failed(back, OQ_FAIL_SEARCH);
}

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
        let finished = select(cnt == OURO_QC_ITEMS * VL_A_ONE, (cnt >> 16u) == OURO_QC_ITEMS, back);
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
    // (OQ_SKIP, so no item) fills and drains the chunk at once. The first position finished
    // in a chunk moves front too: the chunk before it may have drained while it had no
    // successor, and nobody else would move front past that one.
    let drained = after == OURO_QC_ITEMS * VL_A_ONE;
    let filled = delta_add != 0u && (after >> 16u) == OURO_QC_ITEMS;
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
            vl_skip_void(d + 3u, pos, gap_end);
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
        vl_finish(q, c, VL_A_ONE + select(0u, 1u, outcome == 1u), 0u);
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
            vl_skip_void(d + 2u, pos, gap_end);
        }
        pos = atomicAdd(&heap_meta[d + 2u], 1u);
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
