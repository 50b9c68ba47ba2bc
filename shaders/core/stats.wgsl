// The statistics block at the start of heap_meta, and the status codes it counts.
//
// Provides heap_count (64-bit counters), heap_count_failure and the live-counter updates.
// The layout is declared once, on the host: `RawStats` in src/stats.rs, from which
// src/meta.rs generates STAT_* (word offsets) and the HEAP_* status codes into the
// generated configuration. Each failure counter is 64 bits at STAT_FAILURES + 2 * status.
//
// Invariants: a 64-bit counter is exact once the dispatch that updates it has finished
// (a reader during a dispatch may see a carry not yet propagated). Live counters are
// u32: units reach 64 GiB, allocations 2^32 - 1. All atomics are relaxed; nothing here
// orders other memory. No loops.

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
