// The VLQ's chain of queue chunks (queues/vlq.wgsl): link words, linking a successor, void
// ranges, and the search for the chunk that holds a position (vl_find). Ouroboros, ICS
// 2020, section 5.2; void ranges are ours.
//
// Invariants
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
//   - A reader validates what it read from a chunk that may have been freed and reused
//     meanwhile (vl_still): its info names this queue and its start is unchanged.
//
// Loops, all bounded: VL_ROUNDS rounds of traversal or waiting per search, each with at
// most OURO_MAKE_WAIT loads of waiting for a link being made; OURO_QC_ITEMS exchanges to
// zero a chunk; 64 CAS attempts to claim or publish a word. A search that runs out of
// rounds fails and leaves its position unfinished (see queues/vlq.wgsl).

// Rounds of one search (walking, or waiting for a link), and steps of one pointer move. A
// search from back may walk as many chunks as the queue has positions reserved ahead of it:
// with 1M invocations, about 2000 producers of 511 pages reserve 500 chunks' worth at once.
// A search that runs out leaves its position unfinished, which holds front at its chunk
// for good; the bound is set high enough that searches of a full-heap fill at that scale do
// not run out (conformance asserts that none does).
const VL_ROUNDS: u32 = 32768u;

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
// (VL_FRONT, VL_BACK, VL_OLD: declared on the host, src/ouroboros/shared.rs.)

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

// vl_find's answer for a void position (besides a chunk, or OURO_NO_CHUNK for a failure).
const VL_VOID: u32 = 0xfffffffdu;

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
            // Being linked: wait for the linker (its zeroing of a chunk not pooled emptied
            // takes thousands of atomics), up to OURO_MAKE_WAIT loads, apart from the
            // search's rounds. An enqueuer far ahead of back waits for a chain of links,
            // one after another.
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
