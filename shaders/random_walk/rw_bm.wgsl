// RW-BM: the random walk over a bitmap of used bits (Pham & Tu, "random walk" paper,
// section 4.1, Algorithm 2), with a reservation counter added for the progress rule.
//
// State (in heap_meta):
//   RWBM_FREE                  pages not reserved: a counter that malloc decrements first
//   RWBM_BITMAP + w, w < words bit b set <=> page 32 w + b is in use (or does not exist)
//
// The heap is RWBM_PAGES pages of RWBM_PAGE_UNITS units (a power of two, so no page
// crosses a segment boundary). A malloc of up to one page (HEAP_MAX_ALLOC) takes one page.
//
// Invariants
//   - zero bits = RWBM_FREE + reservations not yet turned into a page. malloc reserves
//     before it claims a bit, free clears its bit before it returns the reservation, so a
//     malloc holding a reservation always has a zero bit to find. This makes exhaustion an
//     exact, immediate HEAP_OUT_OF_MEMORY instead of a walk that cannot end, and the
//     reservation's old value is a ticket unique among concurrent callers: it seeds the walk.
//   - A failed reservation is given back, so the counter is exact after every dispatch;
//     during one, a malloc racing both a free and another failed reservation at the very
//     end of the heap may see out-of-memory although the freed page is about to be counted.
//   - A page is claimed by the atomicOr that flips its bit from 0 to 1: one winner.
//   - free's atomicAnd returns the old word; a clear bit means the page was not in use,
//     which is HEAP_INVALID_FREE, and the And changed nothing.
//
// Loops, all bounded: RWBM_RANDOM_STEPS random words; then one sweep of every word from a
// random start; inside a word, at most 32 claim attempts (each failed attempt sets one
// more bit in the local copy). If a reserved malloc still finds nothing (frees and claims
// racing past it), it returns the reservation and fails with HEAP_CONTENTION.

const RWBM_FREE: u32 = STAT_WORDS;
const RWBM_BITMAP: u32 = STAT_WORDS + 16u;
const RWBM_RANDOM_STEPS: u32 = 64u;

// Tries to claim a zero bit of bitmap word w. Returns the page index, or 0xffffffff.
// `spread` rotates the choice among zero bits, so lanes that picked the same word try
// different bits first.
fn rwbm_claim_in_word(w: u32, spread: u32) -> u32 {
    var used = atomicLoad(&heap_meta[RWBM_BITMAP + w]);
    for (var attempt = 0u; attempt < 32u && used != 0xffffffffu; attempt++) {
        let r = spread & 31u;
        let rotated = ~((used >> r) | (used << ((32u - r) & 31u)));
        let bit = (firstTrailingBit(rotated) + r) & 31u;
        let mask = 1u << bit;
        let old = atomicOr(&heap_meta[RWBM_BITMAP + w], mask);
        if ((old & mask) == 0u) {
            return (w << 5u) + bit;
        }
        used = old | mask;
    }
    return 0xffffffffu;
}

fn rwbm_handle(page: u32) -> HeapAlloc {
    return HeapAlloc(heap_handle_of(page << RWBM_PAGE_SHIFT), RWBM_PAGE_UNITS, HEAP_OK);
}

fn strategy_malloc(size_bytes: u32) -> HeapAlloc {
    let ticket = atomicSub(&heap_meta[RWBM_FREE], 1u);
    if (ticket == 0u || ticket > RWBM_PAGES) {
        // Nothing to reserve (the counter was 0, or transiently below 0 while other
        // failed reservations are being given back).
        atomicAdd(&heap_meta[RWBM_FREE], 1u);
        return HeapAlloc(HEAP_NULL, 0u, HEAP_OUT_OF_MEMORY);
    }
    var rng = heap_hash(ticket) | 1u;
    for (var step = 0u; step < RWBM_RANDOM_STEPS; step++) {
        rng = heap_rng_next(rng);
        let page = rwbm_claim_in_word(rng % RWBM_BITMAP_WORDS, rng >> 8u);
        if (page != 0xffffffffu) {
            return rwbm_handle(page);
        }
    }
    let start = rng % RWBM_BITMAP_WORDS;
    for (var i = 0u; i < RWBM_BITMAP_WORDS; i++) {
        var w = start + i;
        if (w >= RWBM_BITMAP_WORDS) {
            w -= RWBM_BITMAP_WORDS;
        }
        let page = rwbm_claim_in_word(w, rng >> 8u);
        if (page != 0xffffffffu) {
            return rwbm_handle(page);
        }
    }
    atomicAdd(&heap_meta[RWBM_FREE], 1u);
    return HeapAlloc(HEAP_NULL, 0u, HEAP_CONTENTION);
}

fn strategy_free(ptr: u32) -> HeapFree {
    let unit = heap_unit_of(ptr);
    if (unit >= RWBM_PAGES * RWBM_PAGE_UNITS || (unit & (RWBM_PAGE_UNITS - 1u)) != 0u) {
        return HeapFree(0u, HEAP_INVALID_FREE);
    }
    let page = unit >> RWBM_PAGE_SHIFT;
    let mask = 1u << (page & 31u);
    let old = atomicAnd(&heap_meta[RWBM_BITMAP + (page >> 5u)], ~mask);
    if ((old & mask) == 0u) {
        return HeapFree(0u, HEAP_INVALID_FREE);
    }
    atomicAdd(&heap_meta[RWBM_FREE], 1u);
    return HeapFree(RWBM_PAGE_UNITS, HEAP_OK);
}

// The host zeroes heap_meta; one invocation (STRATEGY_INIT_INVOCATIONS = 1, from the host)
// then sets the counter and marks the bits past the last page as used, so no walk can claim
// a page that does not exist.
fn strategy_init(i: u32) {
    atomicStore(&heap_meta[RWBM_FREE], RWBM_PAGES);
    let tail = RWBM_PAGES & 31u;
    if (tail != 0u) {
        atomicStore(&heap_meta[RWBM_BITMAP + RWBM_BITMAP_WORDS - 1u], ~((1u << tail) - 1u));
    }
}
