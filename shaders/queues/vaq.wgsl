// The virtualized array-hierarchy queue, VAQ (Ouroboros, ICS 2020, section 5.1): an index
// queue whose ring is not reserved up front but made of queue chunks taken from the chunk
// pool while they hold items, and returned to it once drained. A small array of chunk
// pointers in heap_meta maps position pos to chunk slot (pos / OURO_QC_ITEMS) mod the array
// length; the item sits at word pos mod OURO_QC_ITEMS of that chunk, read and written
// through the heap's atomic segment views (heap_atomic_*).
//
// State: the queue descriptor (queues/index_queue.wgsl: [2] front, [3] back) and, per
// pointer slot, two words at ouro_vaq_base(q) + 2 s: the pointer, tag << 24 | (chunk + 1)
// (0: none; tag: the low 8 bits of the lap it serves; chunk + 1 = VQ_DEAD + 1: that lap of
// the slot has no storage; VQ_BUSY + 1: its storage is being installed), and
// lap << VQ_COUNT_BITS | consumed: the lap the slot serves (pos / positions per lap) and
// how many of its positions that lap has consumed.
//
// Invariants
//   - A position is consumed exactly once: by its dequeuer taking the item, or by its
//     enqueuer when it finds OQ_SKIP (the dequeuer gave up) or a dead lap; that enqueuer
//     moves its item to a fresh position. The consumer of the last of a lap's OURO_QC_ITEMS
//     positions of a slot moves the slot to the next lap, clears the pointer and returns
//     the chunk to the pool, so a chunk is released only once nobody will touch it.
//   - A page producer may abandon reserved positions it has no pages for (item OQ_VOID,
//     ouroboros/page_based.wgsl): the word then reads OQ_VOID, and its dequeuer clears it
//     and consumes the position without an item; if the dequeuer gave up first (OQ_SKIP),
//     the producer consumes it. Either way the position is consumed once.
//   - Readers use a pointer only if its tag is their lap's: a position of a later lap never
//     reads or writes a chunk of an earlier one still draining (it waits, bounded).
//   - A chunk is installed only for the lap its slot serves, checked before and after the
//     installer claims the word: an install for a lap already released (an enqueuer placing
//     the next chunk ahead of need after others filled and drained it) would leave a chunk
//     that no position will ever consume, lost to the heap; such a claim is dropped.
//   - The pointer array spans at least twice the items the queue can hold
//     (src/ouroboros/), so the next lap never reaches a chunk still in use.
//   - A queue chunk is zeroed (all OQ_EMPTY), and that has taken effect, before its
//     pointer is published (ouro_queue_chunk_ready, ouroboros/chunks.wgsl; a drained
//     chunk goes back to the pool marked emptied, and needs no zeroing next time). One
//     invocation installs the storage of a slot's lap: the one whose CAS claims the empty
//     word (VQ_BUSY), and only it takes a chunk. The enqueuer of a chunk's first position
//     claims at once, and the next one ahead of need; others wait VQ_PTR_WAIT rounds for
//     the pointer before they try to claim, and wait on while the word is claimed. An
//     installer finishes in bounded steps: it publishes the chunk, VQ_DEAD, or (ahead of
//     need, or for a lap released meanwhile) 0 again.
//   - No storage: an install that finds no chunk in the heap publishes VQ_DEAD for its lap
//     (never an install ahead of need). No chunk is installed for that lap afterwards, so
//     nobody holds storage for it; its dequeuers go on to the next position (their units
//     stand for items put elsewhere) and its enqueuers consume their positions and move
//     on, so the slot completes the lap and serves the next one with a real chunk.
//     Without this, an enqueue that fails for lack of a chunk would leave its position
//     unconsumed, its slot would never complete that lap, and every later enqueue there
//     would fail.
//
// Loops, all bounded: OURO_MAKE_WAIT rounds for a pointer (of which VQ_PTR_WAIT before a
// waiter claims an empty word itself; an install ahead of need does not wait), 64 CAS
// attempts to claim a pointer word, OURO_QC_ITEMS exchanges to zero a chunk, OQ_SLOT_WAIT
// rounds per slot, OQ_MOVES positions per item (enqueue) and per unit (dequeue). An enqueue
// fails when its moves are spent (its positions kept landing on dead laps or abandoned
// slots), or when its slot still serves an earlier lap, or its pointer is still being
// installed, after the wait: the caller reports it (a free then keeps its page out of
// circulation and reports HEAP_OUT_OF_MEMORY). Those two waits, and a dequeue's, leave the
// position unconsumed, which blocks its slot for good; OURO_MAKE_WAIT exceeds an
// installer's own bound so that they do not end while the install is still under way.

fn vq_ptr_word(q: u32, pos: u32) -> u32 {
    return ouro_vaq_base(q) + 2u * ((pos >> OURO_QC_SHIFT) & ouro_vaq_mask(q));
}

// Bits of a slot's consumed count: enough for OURO_QC_ITEMS; the lap sits above them.
const VQ_COUNT_BITS: u32 = OURO_QC_SHIFT + 1u;
// A pointer word: the low 8 bits of its lap above VQ_TAG_SHIFT, chunk + 1 below (the host
// keeps chunk indices below VQ_BUSY), VQ_DEAD + 1 for a lap of the slot that has no
// storage, or VQ_BUSY + 1 while that lap's storage is being installed (vq_install).
const VQ_TAG_SHIFT: u32 = 24u;
// VQ_CHUNK_MASK, VQ_DEAD and VQ_BUSY are declared on the host (src/ouroboros/shared.rs).

fn vq_lap_shift(q: u32) -> u32 {
    return OURO_QC_SHIFT + countOneBits(ouro_vaq_mask(q));
}

// The lap of position pos (positions wrap at 2^32, and laps with them).
fn vq_lap(q: u32, pos: u32) -> u32 {
    return pos >> vq_lap_shift(q);
}

fn vq_tag(lap: u32) -> u32 {
    return (lap & 0xffu) << VQ_TAG_SHIFT;
}

// The pointer word naming `c` (a chunk, VQ_DEAD or VQ_BUSY) for lap `lap`.
fn vq_pointer(lap: u32, c: u32) -> u32 {
    return vq_tag(lap) | (c + 1u);
}

// What pointer word value p holds for lap `lap`: its chunk, VQ_DEAD, VQ_BUSY, or
// OURO_NO_CHUNK if it is empty or another lap's.
fn vq_target(p: u32, lap: u32) -> u32 {
    if (p == 0u || (p & ~VQ_CHUNK_MASK) != vq_tag(lap)) {
        return OURO_NO_CHUNK;
    }
    return (p & VQ_CHUNK_MASK) - 1u;
}

// Whether pointer slot pw still serves lap `lap` (the previous one is released, this one not).
fn vq_serves(pw: u32, lap: u32) -> bool {
    return (atomicLoad(&heap_meta[pw + 1u]) >> VQ_COUNT_BITS) == lap;
}

// Installs storage for lap `lap` at pointer word pw, if the word is empty and the slot
// serves that lap: claims the word (VQ_BUSY), then takes a chunk, zeroes it and publishes
// it. Returns what the word holds for this lap: the chunk, VQ_DEAD, VQ_BUSY (another
// invocation is installing it: wait), or OURO_NO_CHUNK (another lap's pointer is there, the
// lap is over or not yet begun here, or an install `ahead` of need found no chunk: it must
// not take a lap's storage away before anyone needs it). If the heap has no chunk, an
// install for a position that needs it publishes VQ_DEAD (this lap of the slot then has no
// storage: its positions are consumed by their enqueuers, which move on, instead of
// staying unfinished forever).
//
// One installer per slot and lap, chosen by the claim: otherwise every waiter that runs
// out of patience takes a chunk of its own and all but one give theirs back. The waiters
// of one queue chunk can number in the thousands while its installer zeroes its words, and
// their chunks can empty the pool for a moment, so mallocs fail with chunks to spare.
fn vq_install(q: u32, pw: u32, lap: u32, ahead: bool) -> u32 {
    if (!vq_serves(pw, lap)) {
        return OURO_NO_CHUNK;
    }
    let busy = vq_pointer(lap, VQ_BUSY);
    var claimed = false;
    for (var attempt = 0u; attempt < 64u && !claimed; attempt++) {
        let x = atomicCompareExchangeWeak(&heap_meta[pw], 0u, busy);
        if (!x.exchanged && x.old_value != 0u) {
            return vq_target(x.old_value, lap);
        }
        claimed = x.exchanged;
    }
    if (!claimed) {
        return OURO_NO_CHUNK;
    }
    // The word is ours until we store to it. Recheck the lap: it may have been released
    // between the check and the claim (an install ahead of need after others filled and
    // drained it); then nobody of this lap needs storage, and the next lap is a whole array
    // away.
    if (!vq_serves(pw, lap)) {
        atomicStore(&heap_meta[pw], 0u);
        return OURO_NO_CHUNK;
    }
    let chunk = ouro_chunk_take();
    let c = chunk.index;
    if (c == OURO_NO_CHUNK) {
        if (ahead) {
            atomicStore(&heap_meta[pw], 0u);
            return OURO_NO_CHUNK;
        }
        atomicStore(&heap_meta[pw], vq_pointer(lap, VQ_DEAD));
        return VQ_DEAD;
    }
    // Published only once its setup has taken effect (chunks.wgsl).
    if (!ouro_queue_chunk_ready(chunk, q, 0u)) {
        ouro_chunk_free(c);
        atomicStore(&heap_meta[pw], 0u);
        return OURO_NO_CHUNK;
    }
    atomicStore(&heap_meta[pw], vq_pointer(lap, c));
    return c;
}

// The queue chunk of position pos (VQ_DEAD: its lap of the slot has no storage), installing
// it if it is missing; OURO_NO_CHUNK if the slot still serves an earlier lap, or the
// pointer is still being installed, after the wait.
fn vq_chunk(q: u32, pos: u32, ahead: bool) -> u32 {
    let pw = vq_ptr_word(q, pos);
    let lap = vq_lap(q, pos);
    let first = (pos & (OURO_QC_ITEMS - 1u)) == 0u;
    for (var round = 0u; round < OURO_MAKE_WAIT; round++) {
        let p = atomicLoad(&heap_meta[pw]);
        var c = OURO_NO_CHUNK;
        if (p != 0u) {
            c = vq_target(p, lap); // another lap's chunk (wait for its release) or ours
            if (ahead && (c == OURO_NO_CHUNK || c == VQ_BUSY)) {
                // Ahead of need nobody waits: the caller's own item and its dequeuers do.
                return OURO_NO_CHUNK;
            }
        } else if (first || round >= VQ_PTR_WAIT - 1u) {
            c = vq_install(q, pw, lap, ahead);
            if (c == OURO_NO_CHUNK) {
                return c;
            }
        }
        if (c != OURO_NO_CHUNK && c != VQ_BUSY) {
            return c;
        }
    }
    return OURO_NO_CHUNK;
}

// Whether position pos has a queue chunk, installing one (never a dead lap) if its slot
// serves pos's lap and has none, or waiting for one being installed.
fn vq_storage(q: u32, pos: u32) -> bool {
    let pw = vq_ptr_word(q, pos);
    let lap = vq_lap(q, pos);
    for (var round = 0u; round < OURO_MAKE_WAIT; round++) {
        let p = atomicLoad(&heap_meta[pw]);
        var c = OURO_NO_CHUNK;
        if (p == 0u) {
            c = vq_install(q, pw, lap, true);
        } else {
            c = vq_target(p, lap);
        }
        if (c != VQ_BUSY) {
            return c < VQ_DEAD;
        }
    }
    return false;
}

// Position pos of chunk c (or of a dead lap) is consumed; the last one releases the slot.
fn vq_consumed(q: u32, pos: u32, c: u32) {
    let pw = vq_ptr_word(q, pos);
    let count_mask = (1u << VQ_COUNT_BITS) - 1u;
    if ((atomicAdd(&heap_meta[pw + 1u], 1u) & count_mask) == OURO_QC_ITEMS - 1u) {
        // The slot serves the next lap from now on (its lap numbers wrap with positions).
        let next = (vq_lap(q, pos) + 1u) & (0xffffffffu >> vq_lap_shift(q));
        atomicStore(&heap_meta[pw + 1u], next << VQ_COUNT_BITS);
        atomicStore(&heap_meta[pw], 0u);
        if (c != VQ_DEAD) {
            ouro_queue_chunk_free_drained(c);
        }
    }
}

// Puts item at reserved position first_pos, or at fresh ones if that position ends without
// it. item = OQ_VOID abandons the position instead: true once it is marked for its
// dequeuer or consumed.
fn vq_put_at(q: u32, first_pos: u32, item: u32) -> bool {
    var pos = first_pos;
    for (var moves = 0u; moves < OQ_MOVES; moves++) {
        let c = vq_chunk(q, pos, false);
        if (c == OURO_NO_CHUNK) {
            return oq_failed(OQ_FAIL_MAKE_WAIT);
        }
        if (c != VQ_DEAD) {
            if ((pos & (OURO_QC_ITEMS - 1u)) == 0u && item != OQ_VOID) {
                // Section 5.1: the enqueuer of a chunk's first position places the next
                // chunk ahead of need, so the threads that reach it do not wait for its
                // pointer.
                vq_chunk(q, pos + OURO_QC_ITEMS, true);
            }
            let seg = ouro_qc_segment(c);
            let w = ouro_qc_word(c, pos);
            var skipped = false;
            for (var round = 0u; round < OQ_SLOT_WAIT && !skipped; round++) {
                let x = heap_atomic_cas(seg, w, OQ_EMPTY, item);
                if (x.y == 1u) {
                    return true;
                }
                skipped = x.x == OQ_SKIP;
            }
            // The word holds OQ_SKIP, so the clear is always true.
            if (!skipped || !ouro_qc_clear(seg, w)) {
                return oq_failed(OQ_FAIL_SLOT_WAIT);
            }
        }
        // The position ends without an item (its dequeuer gave up, or its lap of the slot
        // has no storage): it is ours to consume; the item goes to a fresh position.
        vq_consumed(q, pos, c);
        if (item == OQ_VOID) {
            return true;
        }
        pos = oq_reserve_back(q, 1u);
    }
    return oq_failed(OQ_FAIL_MOVES);
}

// The item at a new front position. Positions without an item (a dead lap, or abandoned:
// OQ_VOID) carry no unit of the caller's semaphore, so the dequeuer goes on to the next
// front position with the unit it holds (at most OQ_MOVES of them) instead of reporting a
// miss: with abandoned batches of 511 positions, misses would make mallocs help produce
// more batches just when the heap is short of memory.
fn vq_dequeue(q: u32) -> u32 {
    for (var moves = 0u; moves < OQ_MOVES; moves++) {
        let pos = atomicAdd(&heap_meta[ouro_queue_meta(q) + OQ_FRONT], 1u);
        let c = vq_chunk(q, pos, false);
        if (c == VQ_DEAD) {
            continue; // consumed by its enqueuer
        }
        if (c == OURO_NO_CHUNK) {
            ouro_count(OURO_EV_STRANDED);
            return OQ_EMPTY;
        }
        let seg = ouro_qc_segment(c);
        let w = ouro_qc_word(c, pos);
        // Only a word that can be an item ends the wait (cq_holds_item): an empty one, the
        // chunk's earlier content, or OQ_SKIP does not.
        var v = OQ_EMPTY;
        var taken = false;
        for (var round = 0u; round < OQ_SLOT_WAIT && !taken; round++) {
            v = heap_atomic_load(seg, w);
            taken = cq_holds_item(q, v);
        }
        for (var attempt = 0u; attempt < 64u && !taken; attempt++) {
            let x = heap_atomic_cas(seg, w, OQ_EMPTY, OQ_SKIP);
            if (x.y == 1u) {
                return OQ_EMPTY; // the enqueuer consumes the position when it finds OQ_SKIP
            }
            v = x.x;
            taken = cq_holds_item(q, v);
        }
        if (!taken) {
            cq_gave_up_on(v);
            return OQ_EMPTY;
        }
        // An item, or OQ_VOID (the enqueuer abandoned the position): ours to consume. The
        // word holds it, so the clear is always true. (False would mean v was content from
        // before the chunk's setup: the position stays open, counted as stranded.)
        if (!ouro_qc_clear(seg, w)) {
            ouro_count(OURO_EV_STRANDED);
            return OQ_EMPTY;
        }
        vq_consumed(q, pos, c);
        if (v != OQ_VOID) {
            return v;
        }
    }
    return OQ_EMPTY;
}
