// What the random-walk strategies share: the reservation counter, the word where their
// per-page state starts, and the optional step instrumentation.
//
// heap_meta layout after the statistics (STAT_WORDS):
//   WALK_FREE        free pages (units for rw-malloc) not reserved by a malloc in flight
//   WALK_STEPS..+1   64-bit total of walk steps       (GPU_HEAP_COUNT_STEPS builds only)
//   WALK_WALKS..+1   64-bit count of finished walks   (GPU_HEAP_COUNT_STEPS builds only)
//   WALK_STATE..     the strategy's flags or bitmaps
//
// A step is one read of the walk's state: one flag for RW, one 32-page bitmap word for
// RW-BM, CoRW and RW_malloc (Pham & Tu count steps the same way for TAS and WAS).
// heap_walk_steps counts the steps of the calling invocation's last malloc (one register
// add per step; RW-BM's try at its subgroup's word, which instrumented builds leave out,
// is not a step), and only instrumented builds (HeapConfig::count_steps, #define
// GPU_HEAP_COUNT_STEPS) add it to the counters above.
//
// The reservation counter (the progress rule's exact exhaustion): malloc subtracts what it
// needs before it walks, so a walk only starts when enough free state exists, and
// exhaustion is an immediate HEAP_OUT_OF_MEMORY. The old value is a ticket that is unique
// among concurrent reservations; it seeds the walk.
//
// Growth (core/growth.wgsl): the state is sized for the reserved maximum (RWBM_PAGES,
// RWM_UNITS); walks, sweeps and free's range check cover only the committed items
// (walk_live_items). Invariant of the bitmaps: the bits of items at or past the committed
// count inside the word that holds it are set ("does not exist"); words wholly past it
// are zero and never read by a walk. Grow clears the first kind and sets those of the new
// boundary word; trim, after checking the range free, does the reverse; WALK_FREE moves
// by the items committed or released. No loops here.

// WALK_FREE (the free count), WALK_STEPS and WALK_WALKS (64-bit counters of the
// instrumented build) and WALK_STATE (the flags or bitmaps) are heap_meta words the host
// declares (src/random_walk/mod.rs) and generates.
const WALK_NONE: u32 = 0xffffffffu;

var<private> heap_walk_steps: u32 = 0u;

// Reserves `n` of `total`; returns the ticket (the counter before, >= n), or 0 if there was
// not enough (the counter is restored). A counter transiently "below zero" (wrapped past
// `total`) means other failed reservations are being given back: also not enough.
fn walk_reserve(n: u32, total: u32) -> u32 {
    let old = atomicSub(&heap_meta[WALK_FREE], n);
    if (old < n || old > total) {
        atomicAdd(&heap_meta[WALK_FREE], n);
        return 0u;
    }
    heap_note_free_items(old - n);
    return old;
}

// Items (pages or units of 16 << shift bytes) committed now, of `total` reserved.
fn walk_live_items(total: u32, shift: u32) -> u32 {
#ifdef GPU_HEAP_GROWABLE
    return min(heap_committed_units() >> shift, total);
#else
    return total;
#endif
}

// The item (page, or unit of 16 << shift bytes) that `ptr` starts, or WALK_NONE if `ptr`
// is not the start of a committed item: what every free checks first.
fn walk_item_of(ptr: u32, total: u32, shift: u32) -> u32 {
    let unit = heap_unit_of(ptr);
    if ((unit >> shift) >= walk_live_items(total, shift) || (unit & ((1u << shift) - 1u)) != 0u) {
        return WALK_NONE;
    }
    return unit >> shift;
}

// Init of a bitmap at heap_meta[bitmap] (which the host zeroed) over `items` live items:
// all of them free, and the items past them in the last word set ("does not exist").
fn walk_bitmap_init(bitmap: u32, items: u32) {
    atomicStore(&heap_meta[WALK_FREE], items);
    let tail = items & 31u;
    if (tail != 0u) {
        atomicStore(&heap_meta[bitmap + (items >> 5u)], ~((1u << tail) - 1u));
    }
}

// Growth of a bitmap at heap_meta[bitmap]: items [from, to) join. The boundary word of
// `from` had them set; the boundary word of `to` (zero before, unless it is the same word)
// gets its items past `to` set.
fn walk_bitmap_grow(bitmap: u32, old_end: u32, to: u32) {
    if ((to & 31u) != 0u) {
        let t = to >> 5u;
        atomicOr(&heap_meta[bitmap + t], heap_bits_in(t, to, (t + 1u) << 5u));
    }
    if ((old_end & 31u) != 0u) {
        let f = old_end >> 5u;
        atomicAnd(&heap_meta[bitmap + f], ~heap_bits_in(f, old_end, to));
    }
    atomicAdd(&heap_meta[WALK_FREE], to - old_end);
}

// Trim check: whether word i of those covering [to, from) has no used item in the range.
fn walk_bitmap_free(bitmap: u32, i: u32, old_end: u32, to: u32) -> bool {
    let w = (to >> 5u) + i;
    return (atomicLoad(&heap_meta[bitmap + w]) & heap_bits_in(w, to, old_end)) == 0u;
}

// Trim after a clean check: items [to, from) leave. The boundary word of `to` gets its
// items past `to` set; the old boundary word of `from`, if now wholly past the end, is
// cleared (its items below `from` are free: checked).
fn walk_bitmap_trim(bitmap: u32, old_end: u32, to: u32) {
    let t = to >> 5u;
    if ((to & 31u) != 0u) {
        atomicOr(&heap_meta[bitmap + t], heap_bits_in(t, to, (t + 1u) << 5u));
    }
    let f = old_end >> 5u;
    if ((old_end & 31u) != 0u && (f != t || (to & 31u) == 0u)) {
        atomicStore(&heap_meta[bitmap + f], 0u);
    }
    atomicSub(&heap_meta[WALK_FREE], old_end - to);
}

// Gives `n` items back to the free count. Where subgroups exist, the lanes of a subgroup
// that give items back together add them with one atomic: every free does this, and a
// million frees on one word would wait on each other.
fn walk_unreserve(n: u32) {
#ifdef GPU_HEAP_SUBGROUPS
    let sum = subgroupAdd(n);
    if (subgroupExclusiveAdd(1u) == 0u) {
        atomicAdd(&heap_meta[WALK_FREE], sum);
    }
#else
    atomicAdd(&heap_meta[WALK_FREE], n);
#endif
}

// The ticket of the calling lane's subgroup's joint reservation (its own where it reserved
// alone): the lanes of a subgroup start their walks at the word it picks, so that their
// pages land together and their frees touch few words.
var<private> walk_group_ticket: u32 = 0u;

// Reserves one item of `total` for each calling lane: its ticket, or 0 if there was none
// for it, as walk_reserve(1u, total). Where subgroups exist, the lanes of a subgroup reserve
// together with one atomicSub of their number: the count before it says how many items
// were there, the first that many lanes (by rank) get one each, with distinct tickets, and
// the leader gives back what it took beyond them. A subtraction that takes the count
// below zero therefore leaves no item behind, and another subgroup that reads the count
// meanwhile (below zero, or short by what is being given back) finds none where indeed
// none is left: a heap that only allocates still runs out exactly when it is full. As in
// rw_malloc's aggregation, this relies on the lanes meeting again after the leader's
// branch before the broadcast (structured control flow, no loop in between).
fn walk_reserve_one(total: u32) -> u32 {
#ifdef GPU_HEAP_SUBGROUPS
    let rank = subgroupExclusiveAdd(1u);
    let lanes = subgroupAdd(1u);
    var before = 0u;
    if (rank == 0u) {
        before = atomicSub(&heap_meta[WALK_FREE], lanes);
        // Wrapped past `total`: other reservations' give-backs are pending; none is here.
        let got = select(min(before, lanes), 0u, before > total);
        if (got < lanes) {
            atomicAdd(&heap_meta[WALK_FREE], lanes - got);
        }
        if (got > 0u) {
            heap_note_free_items(before - got);
        }
        before = select(before, 0u, got == 0u);
    }
    before = subgroupBroadcastFirst(before);
    walk_group_ticket = before;
    if (rank >= min(before, lanes)) {
        return 0u;
    }
    return before - rank;
#else
    let ticket = walk_reserve(1u, total);
    walk_group_ticket = ticket;
    return ticket;
#endif
}

// Called once per walk that ran (a reservation was held), with heap_walk_steps final.
fn walk_finish() {
#ifdef GPU_HEAP_COUNT_STEPS
    heap_count(WALK_STEPS, heap_walk_steps);
    heap_count(WALK_WALKS, 1u);
#endif
}
