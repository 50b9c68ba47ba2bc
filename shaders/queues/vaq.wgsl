// The virtualized array-hierarchy queue, VAQ (Ouroboros, ICS 2020, section 5.1): an index
// queue whose ring is not reserved up front but made of queue chunks taken from the chunk
// pool while they hold items, and returned to it once drained. A small array of chunk
// pointers in heap_meta maps position pos to chunk slot (pos / OURO_QC_ITEMS) mod the array
// length; the item sits at word pos mod OURO_QC_ITEMS of that chunk, read and written
// through the heap's atomic segment views (heap_atomic_*).
//
// State: the queue descriptor (queues/index_queue.wgsl: [2] front, [3] back) and, per
// pointer slot, two words at ouro_vaq_base(q) + 2 s: chunk + 1 (0: none), and
// lap << VQ_COUNT_BITS | consumed: the lap the slot serves (pos / positions per lap) and
// how many of its positions that lap has consumed.
//
// Invariants
//   - A position is consumed exactly once: by its dequeuer taking the item, or by the
//     enqueuer that finds OQ_SKIP (its dequeuer gave up) and moves on. The consumer of the
//     last of a chunk's OURO_QC_ITEMS positions moves the slot to the next lap, clears the
//     pointer and returns the chunk to the pool, so a chunk is released only once nobody
//     will touch it.
//   - A chunk is installed only for the lap its slot serves, checked before and after the
//     install: an install for a lap already released (an enqueuer placing the next chunk
//     ahead of need after others filled and drained it) would leave a chunk that no
//     position will ever consume, lost to the heap; such an install is undone.
//   - The pointer array spans at least twice the items the queue can hold
//     (src/ouroboros.rs), so the next lap never reaches a chunk still in use.
//   - A queue chunk is zeroed (all OQ_EMPTY) before its pointer is published. The enqueuer
//     of a chunk's first position installs it at once, and the next one ahead of need;
//     others wait VQ_PTR_WAIT rounds for the pointer, then install one themselves (the
//     loser of the CAS returns its chunk).
//
// Loops, all bounded: VQ_PTR_WAIT rounds for a pointer, 64 CAS attempts to publish (or
// take back) a pointer, OURO_QC_ITEMS stores to zero a chunk, OQ_SLOT_WAIT rounds per
// slot, OQ_MOVES positions per item. If no queue chunk can be had (the heap is full), the
// enqueue fails: the caller reports it (a free then keeps its page out of circulation and
// reports HEAP_OUT_OF_MEMORY). Its position is then never consumed, so its slot never
// completes that lap: its chunk (if one is installed later) stays in the queue, and a
// later lap cannot install there (those enqueues fail too) instead of starting from a
// count that is off, which would release a chunk still in use.


fn vq_ptr_word(q: u32, pos: u32) -> u32 {
    return ouro_vaq_base(q) + 2u * ((pos >> OURO_QC_SHIFT) & ouro_vaq_mask(q));
}

fn vq_segment(chunk: u32) -> u32 {
    return (chunk << OURO_CHUNK_SHIFT) >> HEAP_SEGMENT_SHIFT;
}

fn vq_word(chunk: u32, i: u32) -> u32 {
    return (((chunk << OURO_CHUNK_SHIFT) & HEAP_SEGMENT_MASK) << 2u) + i;
}

// Bits of a slot's consumed count: enough for OURO_QC_ITEMS; the lap sits above them.
const VQ_COUNT_BITS: u32 = OURO_QC_SHIFT + 1u;

fn vq_lap_shift(q: u32) -> u32 {
    return OURO_QC_SHIFT + countOneBits(ouro_vaq_mask(q));
}

// The lap of position pos (positions wrap at 2^32, and laps with them).
fn vq_lap(q: u32, pos: u32) -> u32 {
    return pos >> vq_lap_shift(q);
}

// Whether pointer slot pw still serves lap `lap` (the previous one is released, this one not).
fn vq_serves(pw: u32, lap: u32) -> bool {
    return (atomicLoad(&heap_meta[pw + 1u]) >> VQ_COUNT_BITS) == lap;
}

// A fresh, zeroed queue chunk published at pointer word pw for lap `lap`; or the one
// someone else published first; OURO_NO_CHUNK if the heap has none or the lap is over.
fn vq_install(q: u32, pw: u32, lap: u32) -> u32 {
    if (!vq_serves(pw, lap)) {
        return OURO_NO_CHUNK;
    }
    let c = ouro_chunk_alloc();
    if (c == OURO_NO_CHUNK) {
        let p = atomicLoad(&heap_meta[pw]);
        if (p != 0u) {
            return p - 1u;
        }
        return OURO_NO_CHUNK;
    }
    atomicStore(&heap_meta[OURO_CHUNK_INFO + c], ouro_queue_info(q));
    let seg = vq_segment(c);
    let base = vq_word(c, 0u);
    for (var i = 0u; i < OURO_QC_ITEMS; i++) {
        heap_atomic_store(seg, base + i, OQ_EMPTY);
    }
    for (var attempt = 0u; attempt < 64u; attempt++) {
        let x = atomicCompareExchangeWeak(&heap_meta[pw], 0u, c + 1u);
        if (x.exchanged) {
            if (vq_serves(pw, lap)) {
                return c;
            }
            // The lap was released between the check and the install: nobody of this lap
            // needs the chunk, and the next lap is a whole array away. Take it back.
            for (var undo = 0u; undo < 64u; undo++) {
                if (atomicCompareExchangeWeak(&heap_meta[pw], c + 1u, 0u).exchanged) {
                    break;
                }
            }
            break;
        }
        if (x.old_value != 0u) {
            ouro_chunk_free(c);
            return x.old_value - 1u;
        }
    }
    if (atomicLoad(&heap_meta[pw]) != c + 1u) {
        ouro_chunk_free(c);
    }
    return OURO_NO_CHUNK;
}

// The queue chunk of position pos, installing it if it is missing.
fn vq_chunk(q: u32, pos: u32) -> u32 {
    let pw = vq_ptr_word(q, pos);
    let first = (pos & (OURO_QC_ITEMS - 1u)) == 0u;
    for (var round = 0u; round < VQ_PTR_WAIT; round++) {
        let p = atomicLoad(&heap_meta[pw]);
        if (p != 0u) {
            return p - 1u;
        }
        if (first || round == VQ_PTR_WAIT - 1u) {
            return vq_install(q, pw, vq_lap(q, pos));
        }
    }
    return OURO_NO_CHUNK;
}

// Position pos of chunk c is consumed; the last one releases the chunk.
fn vq_consumed(q: u32, pos: u32, c: u32) {
    let pw = vq_ptr_word(q, pos);
    let count_mask = (1u << VQ_COUNT_BITS) - 1u;
    if ((atomicAdd(&heap_meta[pw + 1u], 1u) & count_mask) == OURO_QC_ITEMS - 1u) {
        // The slot serves the next lap from now on (its lap numbers wrap with positions).
        let next = (vq_lap(q, pos) + 1u) & (0xffffffffu >> vq_lap_shift(q));
        atomicStore(&heap_meta[pw + 1u], next << VQ_COUNT_BITS);
        atomicStore(&heap_meta[pw], 0u);
        ouro_chunk_free(c);
    }
}

fn vq_put_at(q: u32, first_pos: u32, item: u32) -> bool {
    var pos = first_pos;
    for (var moves = 0u; moves < OQ_MOVES; moves++) {
        let c = vq_chunk(q, pos);
        if (c == OURO_NO_CHUNK) {
            return false;
        }
        if ((pos & (OURO_QC_ITEMS - 1u)) == 0u) {
            // Section 5.1: the enqueuer of a chunk's first position places the next chunk
            // ahead of need, so the threads that reach it do not wait for its pointer.
            vq_chunk(q, pos + OURO_QC_ITEMS);
        }
        let seg = vq_segment(c);
        let w = vq_word(c, pos & (OURO_QC_ITEMS - 1u));
        var moved = false;
        for (var round = 0u; round < OQ_SLOT_WAIT; round++) {
            let x = heap_atomic_cas(seg, w, OQ_EMPTY, item);
            if (x.y == 1u) {
                return true;
            }
            if (x.x == OQ_SKIP) {
                heap_atomic_store(seg, w, OQ_EMPTY);
                vq_consumed(q, pos, c);
                moved = true;
                break;
            }
        }
        if (!moved) {
            return false;
        }
        pos = oq_reserve_back(q, 1u);
    }
    return false;
}

fn vq_dequeue(q: u32) -> u32 {
    let pos = atomicAdd(&heap_meta[ouro_queue_meta(q) + 2u], 1u);
    let c = vq_chunk(q, pos);
    if (c == OURO_NO_CHUNK) {
        return OQ_EMPTY;
    }
    let seg = vq_segment(c);
    let w = vq_word(c, pos & (OURO_QC_ITEMS - 1u));
    for (var round = 0u; round < OQ_SLOT_WAIT; round++) {
        let v = heap_atomic_load(seg, w);
        if (v != OQ_EMPTY && v != OQ_SKIP) {
            let item = heap_atomic_exchange(seg, w, OQ_EMPTY);
            vq_consumed(q, pos, c);
            return item;
        }
    }
    for (var attempt = 0u; attempt < 64u; attempt++) {
        let x = heap_atomic_cas(seg, w, OQ_EMPTY, OQ_SKIP);
        if (x.y == 1u) {
            return OQ_EMPTY; // the enqueuer consumes the position when it finds OQ_SKIP
        }
        if (x.x != OQ_EMPTY && x.x != OQ_SKIP) {
            let item = heap_atomic_exchange(seg, w, OQ_EMPTY);
            vq_consumed(q, pos, c);
            return item;
        }
    }
    return OQ_EMPTY;
}
