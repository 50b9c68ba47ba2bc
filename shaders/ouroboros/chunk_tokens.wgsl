// The storage of the chunk-based front end's token sets (chunk_based.wgsl): where class k's
// chunk tokens lie, behind a few ct_* functions so that one front end runs on the standard
// queue (ouro-c-s) and on the virtualized ones (ouro-c-va, ouro-c-vl; ICS 2020 sections 4.2
// with 5.1 and 5.2).
//
// Provides, for class k and a token position pos (u32, compared modulo 2^32):
//   ct_insert(k, c) -> bool     place chunk c's token (c + 1), record its position in
//                               OURO_CB_POS + c; false if no place could be had
//   ct_remove(k, pos, v) -> bool  take token v (chunk + 1) out of position pos (one CAS;
//                               false if it is no longer there)
//   ct_load(k, pos) -> u32      the token at pos, OQ_EMPTY (nothing there yet) or OQ_SKIP
//                               (removed, or behind the queue's front)
//   ct_walk_start(k), ct_walk_len(k, f)   where a walk starts and how many positions it reads
//   ct_passable(k, pos, v, back)  whether the scan hint may move past pos
//   ct_hint_passed(k, pos)      after a walker moved the hint past pos: undo it if a
//                               token landed there meanwhile
//   ct_should_move(k, pos, back, full_at_front)  whether a walker that met a live token at
//                               pos takes it out (to put it back at the back if its chunk
//                               has free pages): virtualized, one old enough to be moved;
//                               standard, a full chunk's token first met at the front
//
// Standard queue (ouro-c-s): a ring in heap_meta used as a set. Insertions take a slot at
// the insertion cursor and move on past live tokens (then moving the cursor past the slot
// they took); removal clears the slot (OQ_EMPTY), so slots are reused; the ring has twice
// as many slots as the class can own chunks. A walk covers the live part from the scan
// hint to the cursor, at most one lap; a token that lands behind the hint pulls it back
// (ct_pull_hint, by its inserter or by the walker that moved the hint over it).
//
// Virtualized queues: a log of positions that only grow. An insertion takes a fresh
// position at the back counter (descriptor word 3) and writes its token there once; a
// removal replaces the token with OQ_SKIP, so every position is written once and removed
// once, and is never reused. Positions live in queue chunks of OURO_QC_ITEMS words taken
// from the chunk pool (ouro_queue_info(k) in their chunk info; OURO_QC_START + c their first
// position, OURO_QC_COUNT + c = A << 16 | B: A positions written, B tokens in it not yet
// removed). A queue chunk is drained when A = OURO_QC_ITEMS and B = 0, and chunks leave the
// queue in position order only, through its front:
//   - VAQ (ouro-c-va): positions map to chunk-pointer slots as in queues/vaq.wgsl
//     (ouro_vaq_base, two words per slot, the first used); descriptor word 5 is the front
//     position (a multiple of OURO_QC_ITEMS). Whoever drains a chunk moves the front past
//     every drained chunk at it; the winner of each front move clears the pointer and
//     returns that chunk to the pool.
//   - VLQ (ouro-c-vl): the linked chunks, front/back/old pointers and counts of
//     queues/vlq.wgsl (vl_finish) and queues/vlq_links.wgsl (vl_find, vl_link_next);
//     drained chunks are freed only once the `old` pointer, OURO_VL_TRAIL chunks behind
//     front, leaves them (the paper's safety distance). A reader finds a position's chunk
//     by following links from the front, at most CT_HOPS of them; a token's removal first
//     tries the queue chunk its placer recorded (OURO_CB_QC + c, chunk + 1), so that a
//     token any distance behind the front can be removed: one chunk that keeps a page
//     pins the front at its token, and on a large heap more than CT_HOPS chunks of other
//     tokens can follow it, each of whose chunks could otherwise never be retired.
// The scan hint (word 2) starts walks; it moves past removed positions at its front and
// never behind the front of the queue, and an insertion that lands behind it pulls it back
// (atomicMin), so a token is never left where no walk reaches it. Live tokens more than
// OURO_CB_MOVE positions behind the back are moved to the back by the walker that meets them
// (remove, then requeue through the token-state protocol, as a DEQUEUE-mode remover does),
// so the live part of the log stays about one walk (OURO_CB_SPAN) long, the front keeps
// moving, and drained queue chunks return to the pool.
//
// Invariants (virtualized)
//   - Every position below the queue's front was written and removed: the front passes
//     drained chunks only, in order. So positions behind it read as OQ_SKIP.
//   - A reader validates what it read: the chunk must still be a queue chunk starting at the
//     position's chunk start after the read (chunk info and start are changed before a chunk
//     is reused: ouro_chunk_free clears the info, a new queue chunk gets a new start, and
//     positions are never reused), otherwise the read counts as OQ_SKIP. Removal CASes the
//     exact token value after such a validation; a queue chunk is freed only when all its
//     positions are removed and the front passed it (VLQ: and `old` after OURO_VL_TRAIL
//     more chunks). What is left is the window of a VAQ remover stalled between its
//     validation and its CAS while the whole chunk is drained, released and reused for user
//     data holding the token's value: as with the paper's safety distance, a heuristic.
//   - VAQ: a position is inserted only if it lies within the pointer array's span from the
//     front (ouro_vaq_mask + 1 slots, sized for four walks in src/ouroboros/), so a lap
//     never reaches a chunk still in use; an insertion beyond it fails.
//
// Positions are u32 and compared by difference, except in the hint's atomicMin (an
// insertion pulling it back) and atomicMax (a walk lifting it to the front): within a few
// positions of the 2^32 wrap those two can leave the hint on the wrong side, and a token
// placed then is out of the walks' reach (its chunk is still found through the index, and
// the token removed where it lies) until it is moved or its chunk is freed again. A class
// needs about 4 billion token placements to get there.
//
// Failure: no queue chunk (the heap is full) or a VAQ position beyond the span makes
// ct_insert return false (VAQ: counted by cause, OQ_FAIL_NO_MEMORY, OQ_FAIL_MAKE_WAIT,
// OQ_FAIL_SPAN); the caller (cb_enqueue) then leaves the chunk without a token, as
// the standard ring does when an insertion cannot find a slot; walkers still find its free
// pages through the index (chunk_based.wgsl). VL: a position whose queue chunk the
// heap could not give is void (queues/vlq_links.wgsl), in no chunk, and reads as removed
// (ct_lookup), so the log's front still passes it. VA: a position that could not be
// written keeps its queue chunk from draining (queues/vaq.wgsl marks such laps dead).
//
// Known gap (virtualized storage): a remover checks a position's queue chunk, then CASes the
// token out; if in between every position of that chunk is removed and the chunk is freed
// and reused for user data holding exactly the token's value, the CAS writes OQ_SKIP into
// user memory. VL's trailing `old` pointer makes this need a stall of OURO_VL_TRAIL chunks;
// VA has no such distance. A reader count per queue chunk would close it.
//
// Loops, all bounded: standard: one lap of the ring per insertion, 4 weak CAS per slot,
// 64 CAS attempts each to move the cursor and to pull the hint back (a token left outside
// the live part when they all fail is out of the walks' reach, not of the index's, until
// the hint comes back to it or its chunk is retired).
// Virtualized: 64 weak CAS for a fresh position; VQ_PTR_WAIT rounds for a VAQ pointer,
// OURO_QC_ITEMS exchanges to zero a chunk; CT_HOPS links followed per VLQ lookup (vl_find's
// VL_ROUNDS for insertions, each with up to OURO_MAKE_WAIT rounds of waiting for a link
// being made: vlq.wgsl); CT_FRONT_STEPS front moves per drain.

const CT_HOPS: u32 = 64u;
const CT_FRONT_STEPS: u32 = 64u;
const CT_BEHIND: u32 = 0xfffffffeu;

#ifndef OURO_VIRTUAL_QUEUES
// ---- standard ring -------------------------------------------------------------------

fn ct_insert(k: u32, c: u32) -> bool {
    let pos = oq_reserve_back(k, 1u);
    let laps = ouro_ring_mask(k) + 1u;
    for (var i = 0u; i < laps; i++) {
        let slot = oq_slot(k, pos + i);
        for (var weak = 0u; weak < 4u; weak++) {
            let x = atomicCompareExchangeWeak(&heap_meta[slot], OQ_EMPTY, c + 1u);
            if (x.exchanged) {
                atomicStore(&heap_meta[OURO_CB_POS + c], pos + i);
                if (i > 0u) {
                    ct_extend_back(k, pos + i);
                }
                ct_pull_hint(k, pos + i);
                return true;
            }
            if (x.old_value != OQ_EMPTY) {
                break; // a live token: next slot
            }
        }
    }
    return false;
}

fn ct_remove(k: u32, pos: u32, v: u32) -> bool {
    return atomicCompareExchangeWeak(&heap_meta[oq_slot(k, pos)], v, OQ_EMPTY).exchanged;
}

fn ct_load(k: u32, pos: u32) -> u32 {
    return atomicLoad(&heap_meta[oq_slot(k, pos)]);
}

fn ct_walk_start(k: u32) -> u32 {
    return atomicLoad(&heap_meta[ouro_queue_meta(k) + OQ_FRONT]);
}

// The live part [f, back), at most one lap. Every token lies in it: insertions land at
// their reserved position or, having moved on past live tokens, extend back over the slot
// they took (ct_extend_back); the hint never passes back, and is pulled back to tokens
// that land behind it. (A walker that finds nothing, with a promised page hidden for a
// moment, would otherwise read the whole ring: 2^21 slots on an 8 GiB heap.)
fn ct_walk_len(k: u32, f: u32) -> u32 {
    return min(atomicLoad(&heap_meta[ouro_queue_meta(k) + OQ_BACK]) - f, ouro_ring_mask(k) + 1u);
}

// An insertion that moved on past live tokens to position w moves back past w, so that w
// is in the live part even if the tokens it passed are removed (and the hint moves over
// their slots) before back gets there by itself. Bounded; compared by difference.
fn ct_extend_back(k: u32, w: u32) {
    let back = ouro_queue_meta(k) + OQ_BACK;
    for (var attempt = 0u; attempt < 64u; attempt++) {
        let b = atomicLoad(&heap_meta[back]);
        if (b - w - 1u < 0x80000000u) {
            return; // w is below back already
        }
        if (atomicCompareExchangeWeak(&heap_meta[back], b, w + 1u).exchanged) {
            return;
        }
    }
}

// A front walker moved the hint past pos, which it had read empty: if a token landed
// there meanwhile, its insertion may have looked at the hint before the move (or before
// an older move that this one repeated, the hint having been pulled back to pos), so the
// walker pulls it back itself. The same pair as ouro_c_free and a remover's: an atomic
// read-modify-write, then a load of another word.
fn ct_hint_passed(k: u32, pos: u32) {
    if (ct_load(k, pos) != OQ_EMPTY) {
        ct_pull_hint(k, pos);
    }
}

// An insertion whose reserved slot the scan hint passed while it was empty pulls the hint
// back to it, so walks, which start at the hint, reach the token. Compared by difference,
// so right across the 2^32 wrap (the hint trails back by less than a lap); bounded: a
// failed CAS means the hint moved, and it is checked again.
fn ct_pull_hint(k: u32, pos: u32) {
    let hint = ouro_queue_meta(k) + OQ_FRONT;
    for (var attempt = 0u; attempt < 64u; attempt++) {
        let h = atomicLoad(&heap_meta[hint]);
        if (h - pos - 1u >= 0x80000000u) {
            return; // pos is at or after the hint
        }
        if (atomicCompareExchangeWeak(&heap_meta[hint], h, pos).exchanged) {
            return;
        }
    }
}

fn ct_passable(k: u32, pos: u32, v: u32, back: u32) -> bool {
    return v == OQ_EMPTY;
}

// The token of a full chunk (count zero, or below it for a moment, not retired) that the
// front walker meets first is taken out. The claimer that took that chunk's last page
// normally removes it, but its removal CAS misses if the token was taken out and placed
// again elsewhere since the claimer read it (a claimer that sees the count at one while
// other walkers' decrements hide the rest removes it, and the undo that brings the count
// back from zero requeues it). Nobody else removes such a token, and the hint cannot pass
// it: it would hold the hint for good, and walks would grow with the live part behind it.
fn ct_should_move(k: u32, pos: u32, back: u32, full_at_front: bool) -> bool {
    return full_at_front;
}

#else
// ---- virtualized log -------------------------------------------------------------------

#include "../queues/queue_chunk_count.wgsl"

fn ct_chunk_start(pos: u32) -> u32 {
    return pos & ~(OURO_QC_ITEMS - 1u);
}

// Whether queue chunk qc still holds class k's positions starting at `start`.
fn ct_valid(k: u32, qc: u32, start: u32) -> bool {
    return atomicLoad(&heap_meta[OURO_CHUNK_INFO + qc]) == ouro_queue_info(k)
        && atomicLoad(&heap_meta[OURO_QC_START + qc]) == start;
}

#ifdef OURO_QUEUE_VA
// VAQ: the front position, and a position's chunk through the pointer array.
fn ct_front(k: u32) -> u32 {
    return atomicLoad(&heap_meta[ouro_queue_meta(k) + CT_FRONT]);
}

fn ct_span(k: u32) -> u32 {
    return OURO_QC_ITEMS * (ouro_vaq_mask(k) + 1u);
}

// The chunk holding pos for a reader: CT_BEHIND if pos is behind the front, OURO_NO_CHUNK if
// its chunk is not installed (yet).
fn ct_lookup(k: u32, pos: u32) -> u32 {
    let d = pos - ct_front(k);
    if (d >= 0x80000000u) {
        return CT_BEHIND;
    }
    if (d >= ct_span(k)) {
        return OURO_NO_CHUNK;
    }
    let p = atomicLoad(&heap_meta[vq_ptr_word(k, pos)]);
    if (p == 0u || !ct_valid(k, p - 1u, ct_chunk_start(pos))) {
        return OURO_NO_CHUNK;
    }
    return p - 1u;
}

// A fresh queue chunk for the positions from `start`, published in pointer word pw (or the
// one someone else published first). A chunk that loses the race was never published and
// holds OQ_EMPTY throughout: it goes back to the pool as such, so that the next queue chunk
// made from it is not emptied again.
fn ct_install(k: u32, pw: u32, start: u32) -> u32 {
    let c = ouro_queue_chunk_new(k, start, false);
    if (c == OURO_NO_CHUNK) {
        return OURO_NO_CHUNK;
    }
    for (var attempt = 0u; attempt < 64u; attempt++) {
        let x = atomicCompareExchangeWeak(&heap_meta[pw], 0u, c + 1u);
        if (x.exchanged) {
            return c;
        }
        if (x.old_value != 0u) {
            break;
        }
    }
    ouro_queue_chunk_free_drained(c);
    return OURO_NO_CHUNK; // the caller looks at the pointer again
}

// The chunk for an insertion at pos. The inserter of a chunk's first position also installs
// the next chunk ahead of need (section 5.1, as queues/vaq.wgsl does for pages), so that
// insertions rarely find their chunk missing: emptying one takes its maker OURO_QC_ITEMS
// exchanges, and every inserter that waited out its wait would make one too.
fn ct_chunk_for_insert(k: u32, pos: u32) -> u32 {
    let c = ct_chunk_at(k, pos);
    let start = ct_chunk_start(pos);
    let next = start + OURO_QC_ITEMS;
    if (c != OURO_NO_CHUNK && pos == start && next - ct_front(k) < ct_span(k)) {
        let pw = vq_ptr_word(k, next);
        if (atomicLoad(&heap_meta[pw]) == 0u) {
            _ = ct_install(k, pw, next);
        }
    }
    return c;
}

// The chunk holding pos, for its inserter: waits VQ_PTR_WAIT rounds for its pointer (the
// inserter of the chunk's first position installs it at once, others after the wait).
fn ct_chunk_at(k: u32, pos: u32) -> u32 {
    if (pos - ct_front(k) >= ct_span(k)) {
        oq_failed(OQ_FAIL_SPAN); // beyond the pointer array's lap (or behind the front)
        return OURO_NO_CHUNK;
    }
    let pw = vq_ptr_word(k, pos);
    let start = ct_chunk_start(pos);
    for (var round = 0u; round < VQ_PTR_WAIT; round++) {
        let p = atomicLoad(&heap_meta[pw]);
        if (p != 0u) {
            if (atomicLoad(&heap_meta[OURO_QC_START + p - 1u]) == start) {
                return p - 1u;
            }
            continue; // the previous lap's chunk, being released by the front's mover
        }
        if (pos == start || round >= VQ_PTR_WAIT / 2u) {
            let c = ct_install(k, pw, start);
            if (c != OURO_NO_CHUNK) {
                return c;
            }
            if (atomicLoad(&heap_meta[pw]) == 0u) {
                oq_failed(OQ_FAIL_NO_MEMORY); // the heap has no chunk for it
                return OURO_NO_CHUNK;
            }
        }
    }
    oq_failed(OQ_FAIL_MAKE_WAIT);
    return OURO_NO_CHUNK;
}

// Moves the front past drained chunks; the winner of each move releases the chunk.
fn ct_advance(k: u32) {
    let word = ouro_queue_meta(k) + CT_FRONT;
    for (var step = 0u; step < CT_FRONT_STEPS; step++) {
        let f = atomicLoad(&heap_meta[word]);
        let pw = vq_ptr_word(k, f);
        let p = atomicLoad(&heap_meta[pw]);
        if (p == 0u || atomicLoad(&heap_meta[OURO_QC_START + p - 1u]) != f) {
            return;
        }
        if (atomicLoad(&heap_meta[OURO_QC_COUNT + p - 1u]) != QC_DRAINED) {
            return;
        }
        let x = atomicCompareExchangeWeak(&heap_meta[word], f, f + OURO_QC_ITEMS);
        if (x.exchanged) {
            atomicStore(&heap_meta[pw], 0u);
            ouro_chunk_free(p - 1u);
        }
    }
}

fn ct_finish(k: u32, qc: u32, add: u32, sub: u32) {
    if (qc_count_change(qc, add, sub) == QC_DRAINED) {
        ct_advance(k);
    }
}

// The front position (one word: no torn read; `h` is the linked queue's fallback).
fn ct_front_position(k: u32, h: u32) -> u32 {
    return ct_front(k);
}

// The pointer array finds any position's chunk at once: nothing to record.
fn ct_record_chunk(c: u32, qc: u32) {}

fn ct_token_chunk(k: u32, pos: u32, v: u32) -> u32 {
    return ct_lookup(k, pos);
}

#endif

#ifdef OURO_QUEUE_VL
// VLQ: a reader follows links from the front chunk (no linking, no waiting).
fn ct_lookup(k: u32, pos: u32) -> u32 {
    let front = ouro_queue_meta(k) + VL_FRONT;
    var f = atomicLoad(&heap_meta[front]);
    if (f == 0u) {
        return OURO_NO_CHUNK; // nothing inserted yet
    }
    var c = f - 1u;
    let start = ct_chunk_start(pos);
    var prev = OURO_NO_CHUNK; // OURO_NO_CHUNK: c is the chunk the front named
    var prev_start = 0u;
    for (var hop = 0u; hop < CT_HOPS; hop++) {
        let s = atomicLoad(&heap_meta[OURO_QC_START + c]);
        if (s == start) {
            return c;
        }
        if (start - s >= 0x80000000u) {
            // Behind the front, or in a void range before a successor (vlq.wgsl): both read
            // as removed. Otherwise a recycled chunk on the way: look again later.
            if (prev == OURO_NO_CHUNK) {
                // The front chunk counts only if the front still names it once its start is
                // read: else it may have been drained, freed and relinked in between, its
                // start a later one. Then start again from the new front.
                let again = atomicLoad(&heap_meta[front]);
                if (again == f) {
                    return CT_BEHIND;
                }
                if (again == 0u) {
                    return OURO_NO_CHUNK;
                }
                f = again;
                c = f - 1u;
                continue;
            }
            if (vl_still(k, c, s) && vl_next(prev) == c + 1u && vl_still(k, prev, prev_start)) {
                return CT_BEHIND;
            }
            return OURO_NO_CHUNK;
        }
        let n = vl_next(c);
        if (n == 0u) {
            return OURO_NO_CHUNK;
        }
        prev = c;
        prev_start = s;
        c = n - 1u;
    }
    return OURO_NO_CHUNK;
}

fn ct_chunk_for_insert(k: u32, pos: u32) -> u32 {
    var cursor = OURO_NO_CHUNK;
    var gap_end = 0u;
    let c = vl_find(k, pos, true, &cursor, &gap_end);
    if (c == VL_VOID) {
        return OURO_NO_CHUNK; // a void position needs no token
    }
    if (c != OURO_NO_CHUNK && (pos & (OURO_QC_ITEMS - 1u)) == 0u) {
        // Section 5.2: the inserter of a chunk's first position links the next one ahead
        // of need.
        vl_link_next(k, c, pos);
    }
    return c;
}

fn ct_finish(k: u32, qc: u32, add: u32, sub: u32) {
    vl_finish(k, qc, add, sub);
}

// The front chunk's start, or `h` where the front moved while it was read (its chunk may
// then have been freed and relinked at the back, with a later start).
fn ct_front_position(k: u32, h: u32) -> u32 {
    let front = ouro_queue_meta(k) + VL_FRONT;
    let f = atomicLoad(&heap_meta[front]);
    if (f == 0u) {
        return 0u;
    }
    let s = atomicLoad(&heap_meta[OURO_QC_START + f - 1u]);
    if (atomicLoad(&heap_meta[front]) != f) {
        return h;
    }
    return s;
}

// The queue chunk qc that holds chunk c's token, recorded by its placer before the
// position (OURO_CB_QC + c, chunk + 1).
fn ct_record_chunk(c: u32, qc: u32) {
    atomicStore(&heap_meta[OURO_CB_QC + c], qc + 1u);
}

// The queue chunk holding token v at pos, for its removal: the recorded one if it still
// holds pos (checked as a lookup's chunk is), else the walk from the front. A record and a
// position read from two placements of the token fail the check and fall back to the walk;
// a removal that still misses fails as one that found its token moved.
fn ct_token_chunk(k: u32, pos: u32, v: u32) -> u32 {
    let qc = atomicLoad(&heap_meta[OURO_CB_QC + v - 1u]) - 1u;
    if (qc < OURO_CHUNKS && ct_valid(k, qc, ct_chunk_start(pos))) {
        return qc;
    }
    return ct_lookup(k, pos);
}
#endif

fn ct_insert(k: u32, c: u32) -> bool {
    let pos = oq_reserve_back(k, 1u);
    let qc = ct_chunk_for_insert(k, pos);
    if (qc == OURO_NO_CHUNK) {
        return false;
    }
    let seg = ouro_qc_segment(qc);
    let w = ouro_qc_word(qc, pos);
    // A fresh position: nobody else writes it before its token is there.
    for (var attempt = 0u; attempt < 64u; attempt++) {
        let x = heap_atomic_cas(seg, w, OQ_EMPTY, c + 1u);
        if (x.y == 1u) {
            ct_record_chunk(c, qc);
            atomicStore(&heap_meta[OURO_CB_POS + c], pos);
            ct_finish(k, qc, QC_ONE_FINISHED + 1u, 0u);
            // A walk may have moved the hint past this position while it was empty.
            ct_hint_back_to(k, pos);
            return true;
        }
        if (x.x != OQ_EMPTY) {
            break;
        }
    }
    return false;
}

fn ct_remove(k: u32, pos: u32, v: u32) -> bool {
    let qc = ct_token_chunk(k, pos, v);
    if (qc >= CT_BEHIND) {
        return false;
    }
    let x = heap_atomic_cas(ouro_qc_segment(qc), ouro_qc_word(qc, pos), v, OQ_SKIP);
    if (x.y == 1u) {
        ct_finish(k, qc, 0u, 1u);
        return true;
    }
    return false;
}

fn ct_load(k: u32, pos: u32) -> u32 {
    let qc = ct_lookup(k, pos);
    if (qc == CT_BEHIND) {
        return OQ_SKIP;
    }
    if (qc == OURO_NO_CHUNK) {
        return OQ_EMPTY;
    }
    let v = heap_atomic_load(ouro_qc_segment(qc), ouro_qc_word(qc, pos));
    if (!ct_valid(k, qc, ct_chunk_start(pos))) {
        return OQ_SKIP; // released meanwhile: every position of it was removed
    }
    return v;
}

// An insertion pulls the hint back with atomicMin, but one that lands after a walker read
// its position empty (more than OURO_CB_MOVE positions late: ct_passable) and before the
// walker's CAS moved the hint past it finds the hint still at pos and changes nothing; the
// walker then looks again and pulls the hint back itself, as the ring's does, with the
// insertion's atomicMin (one atomic that other walkers cannot make fail). A token left
// behind the hint is out of the walks' reach, and front, which waits for its removal,
// stops: the log then grows by a chunk per chunk of traffic. The same pair as the ring's:
// the hint's CAS, then a load (through the log's links: chunk_based.wgsl's assumption).
fn ct_hint_passed(k: u32, pos: u32) {
    let v = ct_load(k, pos);
    if (v != OQ_EMPTY && v != OQ_SKIP) {
        ct_hint_back_to(k, pos);
    }
}

// Moves the walks' hint back to pos if it is past it: one atomic, which no walker's move of
// the hint can make fail (the ring's ct_pull_hint, a bounded CAS loop, can).
fn ct_hint_back_to(k: u32, pos: u32) {
    atomicMin(&heap_meta[ouro_queue_meta(k) + OQ_FRONT], pos);
}

// Walks start at the hint, or at the front if the hint lags behind it.
fn ct_walk_start(k: u32) -> u32 {
    let hint = ouro_queue_meta(k) + OQ_FRONT;
    let h = atomicLoad(&heap_meta[hint]);
    let f = ct_front_position(k, h);
    if (f - h < 0x80000000u && f != h) {
        atomicMax(&heap_meta[hint], f);
        return f;
    }
    return h;
}

fn ct_walk_len(k: u32, f: u32) -> u32 {
    let back = atomicLoad(&heap_meta[ouro_queue_meta(k) + OQ_BACK]);
    let n = back - f;
    if (n >= 0x80000000u) {
        return 0u;
    }
    return min(n, OURO_CB_SPAN);
}

// Removed positions, and positions still empty long after they were reserved (an insertion
// that failed; one that is merely late pulls the hint back when it lands).
fn ct_passable(k: u32, pos: u32, v: u32, back: u32) -> bool {
    return v == OQ_SKIP || (v == OQ_EMPTY && back - pos > OURO_CB_MOVE);
}

// Old tokens are moved; a full chunk's token that a claimer missed (see the standard
// ring's) is among them once it is old, and is not put back.
fn ct_should_move(k: u32, pos: u32, back: u32, full_at_front: bool) -> bool {
    return back - pos > OURO_CB_MOVE;
}
#endif
