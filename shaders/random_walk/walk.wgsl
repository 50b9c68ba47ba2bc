// What the random-walk strategies share: the reservation counter, the word where their
// per-page state starts, and the optional step instrumentation.
//
// heap_meta layout after the statistics (STAT_WORDS):
//   WALK_FREE        free pages (units for rw-malloc) not reserved by a malloc in flight
//   WALK_STEPS..+1   64-bit total of walk steps       (GPU_HEAP_COUNT_STEPS builds only)
//   WALK_WALKS..+1   64-bit count of finished walks   (GPU_HEAP_COUNT_STEPS builds only)
//   WALK_STATE..     the strategy's flags or bitmaps
// Keep in sync with src/random_walk.rs (WALK_* there).
//
// A step is one read of the walk's state: one flag for RW, one 32-page bitmap word for
// RW-BM, CoRW and RW_malloc (Pham & Tu count steps the same way for TAS and WAS).
// heap_walk_steps counts the steps of the calling invocation's last malloc; it is always
// maintained (one register add per step), and only instrumented builds
// (HeapConfig::count_steps, #define GPU_HEAP_COUNT_STEPS) add it to the counters above.
//
// The reservation counter (the progress rule's exact exhaustion): malloc subtracts what it
// needs before it walks, so a walk only starts when enough free state exists, and
// exhaustion is an immediate HEAP_OUT_OF_MEMORY. The old value is a ticket that is unique
// among concurrent reservations; it seeds the walk. No loops here.

const WALK_FREE: u32 = STAT_WORDS;
const WALK_STEPS: u32 = STAT_WORDS + 8u;
const WALK_WALKS: u32 = STAT_WORDS + 10u;
const WALK_STATE: u32 = STAT_WORDS + 16u;
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
    return old;
}

fn walk_unreserve(n: u32) {
    atomicAdd(&heap_meta[WALK_FREE], n);
}

// Called once per walk that ran (a reservation was held), with heap_walk_steps final.
fn walk_finish() {
#ifdef GPU_HEAP_COUNT_STEPS
    heap_count(WALK_STEPS, heap_walk_steps);
    heap_count(WALK_WALKS, 1u);
#endif
}
