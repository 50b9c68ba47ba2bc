// Status codes and the statistics block at the start of heap_meta.
//
// Layout (u32 words; keep in sync with `RawStats` in src/stats.rs, checked by a test):
//    0.. 1  malloc calls          (64-bit counter: low word, high word)
//    2.. 3  free calls            (free(0) is not a call)
//    4.. 5  out of memory
//    6.. 7  contention budget exhausted
//    8.. 9  invalid requests      (malloc(0), size over the maximum)
//   10..11  invalid frees
//   12      live allocations
//   13      live 16-byte units    (granted, so page rounding shows)
//   14      peak of live units
//   15      reserved
//
// Invariants: a 64-bit counter is exact once the dispatch that updates it has finished
// (a reader during a dispatch may see a carry not yet propagated). Live counters are
// u32: units reach 64 GiB, allocations 2^32 - 1. All atomics are relaxed; nothing here
// orders other memory. No loops.

const HEAP_NULL: u32 = 0u;

const HEAP_OK: u32 = 0u;
const HEAP_OUT_OF_MEMORY: u32 = 1u;
const HEAP_CONTENTION: u32 = 2u;
const HEAP_INVALID_REQUEST: u32 = 3u;
const HEAP_INVALID_FREE: u32 = 4u;

const STAT_MALLOC_CALLS: u32 = 0u;
const STAT_FREE_CALLS: u32 = 2u;
const STAT_FAILURES: u32 = 2u; // + 2 * status: 4 out of memory .. 10 invalid free
const STAT_LIVE_ALLOCATIONS: u32 = 12u;
const STAT_LIVE_UNITS: u32 = 13u;
const STAT_PEAK_UNITS: u32 = 14u;
const STAT_WORDS: u32 = 16u;

// Adds n to the 64-bit counter at `word`. The low word's old value tells whether this add
// wrapped it, and exactly one adder sees each wrap, so the carry is never lost or doubled.
fn heap_count(word: u32, n: u32) {
    let old = atomicAdd(&heap_meta[word], n);
    if (old > 0xffffffffu - n) {
        atomicAdd(&heap_meta[word + 1u], 1u);
    }
}

fn heap_count_failure(status: u32) {
    heap_count(STAT_FAILURES + 2u * status, 1u);
}

fn heap_note_malloc(units: u32) {
    atomicAdd(&heap_meta[STAT_LIVE_ALLOCATIONS], 1u);
    let live = atomicAdd(&heap_meta[STAT_LIVE_UNITS], units) + units;
    atomicMax(&heap_meta[STAT_PEAK_UNITS], live);
}

fn heap_note_free(units: u32) {
    atomicSub(&heap_meta[STAT_LIVE_ALLOCATIONS], 1u);
    atomicSub(&heap_meta[STAT_LIVE_UNITS], units);
}
