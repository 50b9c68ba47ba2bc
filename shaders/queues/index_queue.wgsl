// The standard array index queue (Ouroboros, ICS 2020, section 3.3, Algorithm 1): a ring
// buffer of u32 items in heap_meta with front and back counters. Its fill count is kept by
// the caller (a bulk semaphore for the size classes, a plain counter for the chunk pool),
// so this module only moves items in and out of positions the caller is entitled to.
//
// Provides, for queue q (descriptor words at ouro_queue_meta(q), ring from the generated
// ouro_ring_base(q) / ouro_ring_mask(q)):
//   oq_enqueue(q, item) -> bool        put one item at a new back position
//   oq_reserve_back(q, k) -> u32       k consecutive back positions for oq_put_at
//   oq_put_at(q, pos, item) -> bool    write item into a reserved position
//   oq_dequeue(q) -> u32               item at a new front position, or OQ_EMPTY
//
// Slot values: OQ_EMPTY (0) is the deletion marker, so the zero-filled ring the host makes
// is an empty queue; items are never 0 (callers store handles or chunk + 1); OQ_SKIP marks a
// position whose dequeuer gave up waiting.
//
// Invariants
//   - The caller takes a unit of the fill count before it dequeues and signals it after it
//     enqueues, so a dequeuer's position has been, or is being, given an item.
//   - Ring capacity (a power of two, positions are u32 counters that wrap with it) is at
//     least the number of items the queue can ever hold (src/ouroboros/ sizes it), so an
//     enqueuer does not meet a previous lap's item, except behind a dequeuer stalled for a
//     whole lap; it then waits, bounded.
//   - A dequeuer that waits OQ_SLOT_WAIT rounds for its slot marks it OQ_SKIP with a CAS
//     from OQ_EMPTY (if the item arrived meanwhile, the CAS fails and it takes the item) and
//     reports failure; the caller gives its fill-count unit back. The enqueuer that later
//     finds OQ_SKIP clears it and moves its item to a fresh back position, so both counters
//     advance by one wasted position and no item is lost.
//
// Loops, all bounded: OQ_SLOT_WAIT rounds per slot; OQ_MOVES fresh positions per item. An
// enqueue that exhausts them fails, which needs a dequeuer stalled for a whole lap of the
// ring; the caller keeps the item (a page goes to the spill, ouroboros/spill.wgsl).

// OQ_EMPTY, OQ_SKIP and OQ_VOID (a position whose enqueuer abandoned it, VAQ only,
// queues/vaq.wgsl: its dequeuer consumes it without an item) are declared on the host
// (src/ouroboros/shared.rs), like every descriptor word and failure cause below.
// Both bounds are generous because abandoned positions feed on themselves: a producer
// fills its batch's positions one by one, so a dequeuer whose position lies late in a batch
// of 512 waits long; an abandoned position sends its malloc to a fresh one further ahead,
// front runs ahead of back, and until back catches up every enqueue meets abandoned
// positions. Tight bounds let that feedback fail whole bursts of frees.
const OQ_SLOT_WAIT: u32 = 32768u;
const OQ_MOVES: u32 = 64u;

// Why an enqueue failed, counted per cause at OURO_ENQUEUE_FAILS + cause (every queue of the
// heap; src/ouroboros/report.rs reads them): the heap had no chunk for queue storage, the
// wait for a queue chunk another invocation was making ran out, a virtualized queue's
// search for the position's chunk ran out of rounds, the slot wait ran out, or the item
// met OQ_MOVES abandoned positions; or a VAQ chunk-token log's position lay beyond its
// pointer array's span (ouroboros/chunk_tokens.wgsl). (OQ_FAIL_NO_MEMORY, OQ_FAIL_MAKE_WAIT,
// OQ_FAIL_SEARCH, OQ_FAIL_SLOT_WAIT, OQ_FAIL_MOVES, OQ_FAIL_SPAN.)

fn oq_failed(cause: u32) -> bool {
    atomicAdd(&heap_meta[OURO_ENQUEUE_FAILS + cause], 1u);
    return false;
}

// Queue descriptor, OQ_WORDS words: [0, 1] bulk semaphore (or [0] fill count), OQ_FRONT
// and OQ_BACK the positions, OQ_CLASS_CHUNKS chunks owned by the class, [5..7] the front
// end's and the virtualized queues' words (CT_FRONT, VL_FRONT, VL_BACK, VL_OLD),
// OQ_FILLING batches being filled, OQ_SPREAD the chunk-based malloc's spread counter. The
// semaphore, the front, the back and the spread counter each open a 128-byte line of their
// own (src/ouroboros/shared.rs says why).

fn ouro_queue_meta(q: u32) -> u32 {
    return OURO_QUEUE_META + q * OQ_WORDS;
}

fn oq_slot(q: u32, pos: u32) -> u32 {
    return ouro_ring_base(q) + (pos & ouro_ring_mask(q));
}

fn oq_reserve_back(q: u32, k: u32) -> u32 {
    return atomicAdd(&heap_meta[ouro_queue_meta(q) + OQ_BACK], k);
}

fn oq_put_at(q: u32, first_pos: u32, item: u32) -> bool {
    var pos = first_pos;
    for (var moves = 0u; moves < OQ_MOVES; moves++) {
        let slot = oq_slot(q, pos);
        var moved = false;
        for (var round = 0u; round < OQ_SLOT_WAIT; round++) {
            let x = atomicCompareExchangeWeak(&heap_meta[slot], OQ_EMPTY, item);
            if (x.exchanged) {
                return true;
            }
            if (x.old_value == OQ_SKIP) {
                // Our dequeuer gave up on this position: clear it for the next lap and go on.
                atomicCompareExchangeWeak(&heap_meta[slot], OQ_SKIP, OQ_EMPTY);
                moved = true;
                break;
            }
            // OQ_EMPTY (a spurious weak-CAS failure) or a previous lap's item: try again.
        }
        if (!moved) {
            return oq_failed(OQ_FAIL_SLOT_WAIT);
        }
        pos = oq_reserve_back(q, 1u);
    }
    return oq_failed(OQ_FAIL_MOVES);
}

fn oq_enqueue(q: u32, item: u32) -> bool {
    return oq_put_at(q, oq_reserve_back(q, 1u), item);
}

fn oq_dequeue(q: u32) -> u32 {
    let pos = atomicAdd(&heap_meta[ouro_queue_meta(q) + OQ_FRONT], 1u);
    let slot = oq_slot(q, pos);
    for (var round = 0u; round < OQ_SLOT_WAIT; round++) {
        let v = atomicLoad(&heap_meta[slot]);
        if (v != OQ_EMPTY && v != OQ_SKIP) {
            // Only this position's dequeuer clears it in this lap.
            return atomicExchange(&heap_meta[slot], OQ_EMPTY);
        }
    }
    // Give up on the position; weak CAS may fail spuriously, so retry a few times.
    for (var attempt = 0u; attempt < 16u; attempt++) {
        let x = atomicCompareExchangeWeak(&heap_meta[slot], OQ_EMPTY, OQ_SKIP);
        if (x.exchanged) {
            return OQ_EMPTY;
        }
        if (x.old_value != OQ_EMPTY && x.old_value != OQ_SKIP) {
            return atomicExchange(&heap_meta[slot], OQ_EMPTY); // it arrived just now
        }
    }
    return OQ_EMPTY;
}
