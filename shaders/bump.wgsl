// The bump allocator: the speed reference. One atomicAdd per malloc, no reuse.
//
// State: heap_meta[BUMP_HEAD] counts the units handed out (and past the end, units asked
// for after the heap filled up).
//
// Invariants
//   - Blocks are disjoint: each is [old head, old head + units) of one atomicAdd.
//   - No block crosses a segment boundary: a block that would is abandoned and the request
//     retried once; the retry starts past the boundary, because the head already is.
//   - The head never wraps: it only grows past HEAP_UNITS by what failing requests add, and
//     every failing request clamps it back to HEAP_UNITS with atomicMin (any value at or
//     past the end means "full", and every successful block ends at or below HEAP_UNITS,
//     so the clamp can hide nothing). The overshoot is therefore bounded by what requests
//     in flight at one moment add: the host caps bump heaps at 2^31 units (32 GiB) and
//     blocks at 64 KiB (2^12 units), so wrapping would need 2^19 requests in flight at
//     once, more than any current GPU keeps resident.
//   - Growth (core/growth.wgsl): the limit is heap_committed_units() (HEAP_UNITS unless the
//     heap can grow), constant during a dispatch. Between dispatches the head is at or below
//     the limit (every failing request clamps it), so raising the limit makes
//     [head, new limit) allocatable with no other change, and lowering it is safe exactly
//     when the head is at or below the new limit (the trim check); memory below the head
//     never comes back without a reset, so bump trims only segments past its head.
//   - free cannot tell live blocks from freed ones (there is no per-block state); it
//     rejects handles outside what was handed out, and otherwise releases nothing, so
//     live units stay counted until reset. Double frees are not detected.
//
// Loops: one, at most BUMP_ATTEMPTS = 2 iterations; failing both is HEAP_CONTENTION.

// BUMP_HEAD, the head's heap_meta word, is declared by the host (src/bump.rs).
const BUMP_ATTEMPTS: u32 = 2u;

// One atomicAdd on the common path: no load first, because a load of the head is one more
// access to the single most contended word of the heap.
fn strategy_malloc(size_bytes: u32) -> HeapAlloc {
    let units = heap_units_for(size_bytes);
    let limit = heap_committed_units();
    for (var attempt = 0u; attempt < BUMP_ATTEMPTS; attempt++) {
        let start = atomicAdd(&heap_meta[BUMP_HEAD], units);
        if (start > limit - units) {
            atomicMin(&heap_meta[BUMP_HEAD], limit);
            return HeapAlloc(HEAP_NULL, 0u, HEAP_OUT_OF_MEMORY);
        }
#ifdef GPU_HEAP_GROWABLE
        heap_note_free_items(limit - start - units);
#endif
        let last = start + units - 1u;
        if ((start >> HEAP_SEGMENT_SHIFT) == (last >> HEAP_SEGMENT_SHIFT)) {
            return HeapAlloc(heap_handle_of(start), units, HEAP_OK);
        }
    }
    return HeapAlloc(HEAP_NULL, 0u, HEAP_CONTENTION);
}

fn strategy_free(ptr: u32) -> HeapFree {
    let unit = heap_unit_of(ptr);
    if (unit >= min(atomicLoad(&heap_meta[BUMP_HEAD]), heap_committed_units())) {
        return HeapFree(0u, HEAP_INVALID_FREE);
    }
    return HeapFree(0u, HEAP_OK);
}

fn strategy_init(i: u32) {}

// Growth hooks (alloc.wgsl): the limit is the committed count itself.
fn strategy_grow(from_units: u32, to_units: u32) {}

fn strategy_trim_check(i: u32, from_units: u32, to_units: u32) -> bool {
    return atomicLoad(&heap_meta[BUMP_HEAD]) <= to_units;
}

fn strategy_trim(from_units: u32, to_units: u32) {}
