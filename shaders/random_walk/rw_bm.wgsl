// RW-BM: the random walk over a bitmap of used bits (Pham & Tu, section 4.1, Algorithm 2),
// with a count of free pages added for the progress rule (walk.wgsl).
//
// The heap is RWBM_PAGES pages of RWBM_PAGE_UNITS units (a power of two, so no page
// crosses a segment boundary). A malloc of up to one page (HEAP_MAX_ALLOC) takes one page.
// Each step reads one random word of 32 used bits and claims a zero bit of it if it has
// one; the expected number of steps is the paper's equation (4) with w = 32. Our one
// departure: before its walk, the lanes of a subgroup claim a bit each of one word, the
// one their joint reservation's seed picks (rwbm_claim_first, one atomicOr where subgroups
// exist), so that on a heap with room a subgroup's pages share a word and its frees clear
// them with one atomic (rwbm_clear) where they would touch 32 words. The instrumented
// build (GPU_HEAP_COUNT_STEPS) leaves that try out, so that TAS measures the paper's walk.
// Invariants: see bitmap.wgsl.
//
// Loops, all bounded: the subgroup's word, RWBM_RANDOM_STEPS random words; then the
// summary-guided sweep and, if its hints were stale, a plain sweep of every word
// (bitmap.wgsl). If a reserved malloc still finds nothing (frees and claims racing past the
// sweep), it returns the reservation and fails with HEAP_CONTENTION.
// The lock map of the paper is not used: it serves CoRW's sharing, and one atomicOr per
// claim already decides a page's owner.

#include "bitmap.wgsl"

const RWBM_RANDOM_STEPS: u32 = 64u;

fn strategy_malloc(size_bytes: u32) -> HeapAlloc {
    heap_walk_steps = 0u;
    let ticket = walk_reserve_one(RWBM_PAGES);
    if (ticket == 0u) {
        return HeapAlloc(HEAP_NULL, 0u, HEAP_OUT_OF_MEMORY);
    }
    let words = rwbm_live_words();
#ifndef GPU_HEAP_COUNT_STEPS
    // First the subgroup's word, a bit for each lane.
    let first = rwbm_claim_first(heap_hash(walk_group_ticket) % words, ticket);
    if (first != WALK_NONE) {
        return rwbm_handle(first);
    }
#endif
    var rng = heap_hash(ticket) | 1u;
    for (var step = 0u; step < RWBM_RANDOM_STEPS; step++) {
        rng = heap_rng_next(rng);
        heap_walk_steps += 1u;
        let page = rwbm_claim_in_word(rng % words, rng >> 8u);
        if (page != WALK_NONE) {
            walk_finish();
            return rwbm_handle(page);
        }
    }
    let page = rwbm_sweep(rng % words, rng >> 8u, words);
    walk_finish();
    if (page != WALK_NONE) {
        return rwbm_handle(page);
    }
    walk_unreserve(1u, ticket);
    return HeapAlloc(HEAP_NULL, 0u, HEAP_CONTENTION);
}

// The subgroup's word w: every lane wants bit `ticket & 31` (the tickets of a subgroup are
// consecutive: walk_ticket). Where subgroups exist, the lanes read the word, and the first
// lane sets the wanted bits that were clear with one atomicOr, each lane reading its own
// bit in the old value. The read comes first: on a word that is not in the cache, a lone
// atomicOr is slower than a read and then the atomicOr (BENCHMARKS.md). Lanes of rank 32
// and up, lanes whose bit was taken, and all of them if two lanes want one bit (tickets
// that are not consecutive among the lanes here), try the word alone (rwbm_claim_in_word).
// Returns the page, or WALK_NONE.
fn rwbm_claim_first(w: u32, ticket: u32) -> u32 {
#ifdef GPU_HEAP_SUBGROUPS
    let mask = 1u << (ticket & 31u);
    let used = atomicLoad(&heap_meta[RWBM_BITMAP + w]);
    let joins = subgroupExclusiveAdd(1u) < 32u && (used & mask) == 0u;
    let want = subgroupOr(select(0u, mask, joins));
    let together = countOneBits(want) == subgroupAdd(u32(joins));
    var old = 0u;
    if (together && want != 0u && subgroupExclusiveAdd(1u) == 0u) {
        old = atomicOr(&heap_meta[RWBM_BITMAP + w], want);
        if ((old | want) == 0xffffffffu && (want & ~old) != 0u) {
            atomicOr(&heap_meta[RWBM_SUMMARY + (w >> 5u)], 1u << (w & 31u));
        }
    }
    old = subgroupBroadcastFirst(old);
    if (together && joins && (old & mask) == 0u) {
        return (w << 5u) + (ticket & 31u);
    }
#endif
    return rwbm_claim_in_word(w, ticket);
}
