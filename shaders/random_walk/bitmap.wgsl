// The bitmap of used bits that RW-BM and CoRW walk (Pham & Tu, section 4.1): bit b of word
// w is set <=> page 32 w + b is in use or does not exist.
//
// Provides: rwbm_claim_in_word (claim a zero bit of one word), rwbm_sweep (the bounded
// fallback: every word once), rwbm_handle, and the strategy_free and growth hooks that
// both strategies share (init and trim: bitmap_hooks.wgsl), plus walk_prefill for the TAS
// tool.
//
// Invariants
//   - zero bits = the free count + reservations not yet turned into a page: malloc reserves
//     before it claims a bit, free clears its bit before it returns the reservation, so a
//     malloc holding a reservation always has a zero bit to find (walk.wgsl).
//   - A page is claimed by the atomicOr that flips its bit from 0 to 1: one winner.
//   - free's atomicAnd returns the old word; a clear bit means the page was not in use,
//     which is HEAP_INVALID_FREE, and the And changed nothing.
//   - Bits past the last page are set by init and never cleared (free rejects those pages),
//     so no walk can claim a page that does not exist. A heap that can grow applies this to
//     the committed pages (walk.wgsl: the boundary word's bits past them are set, walks and
//     sweeps cover only the committed words, rwbm_live_words).
//
//   - The summary (RWBM_SUMMARY, one bit per bitmap word, RWBM_SUMMARY_WORDS words) is a
//     hint: bit set <=> the word was seen full. The claim that fills a word sets its bit,
//     a free from a full word clears it. These two atomics are not ordered against the
//     word's own (relaxed atomics), so a bit may be stale either way; the summary is only
//     used to skip words in the first sweep, and a plain sweep follows it, so a stale bit
//     costs steps, never a page.
//
// Loops: rwbm_claim_in_word makes at most 32 claim attempts (each failure sets one more bit
// of its local copy); the summarised sweep reads each summary word once and tries each word
// it does not mark full once; the plain sweep visits each of the committed words (at most
// RWBM_BITMAP_WORDS) once.

#include "walk.wgsl"
#include "bitmap_hooks.wgsl"

const RWBM_BITMAP: u32 = WALK_STATE;
const RWBM_SUMMARY: u32 = WALK_STATE + RWBM_BITMAP_WORDS;

// Tries to claim a zero bit of bitmap word w. Returns the page index, or WALK_NONE.
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
            if ((old | mask) == 0xffffffffu) {
                atomicOr(&heap_meta[RWBM_SUMMARY + (w >> 5u)], 1u << (w & 31u));
            }
            return (w << 5u) + bit;
        }
        used = old | mask;
    }
    return WALK_NONE;
}

// Bitmap words of the committed pages (all of them unless the heap can grow).
fn rwbm_live_words() -> u32 {
    return (walk_live_items(RWBM_PAGES, RWBM_PAGE_SHIFT) + 31u) >> 5u;
}

// The fallback after the random steps: first every summary word once, from the one that
// holds `start`, trying the words it does not mark full; then, if the hints were stale,
// every word once. Each word or summary word read is a step. `words`: rwbm_live_words().
fn rwbm_sweep(start: u32, spread: u32, words: u32) -> u32 {
    let first = start >> 5u;
    let summary_words = (words + 31u) >> 5u;
    for (var i = 0u; i < summary_words; i++) {
        var s = first + i;
        if (s >= summary_words) {
            s -= summary_words;
        }
        heap_walk_steps += 1u;
        var open = ~atomicLoad(&heap_meta[RWBM_SUMMARY + s]);
        let words_here = min(32u, words - (s << 5u));
        if (words_here < 32u) {
            open &= (1u << words_here) - 1u;
        }
        for (var k = 0u; k < 32u && open != 0u; k++) {
            let w = (s << 5u) + firstTrailingBit(open);
            open &= open - 1u;
            heap_walk_steps += 1u;
            let page = rwbm_claim_in_word(w, spread);
            if (page != WALK_NONE) {
                return page;
            }
        }
    }
    for (var i = 0u; i < words; i++) {
        var w = start + i;
        if (w >= words) {
            w -= words;
        }
        heap_walk_steps += 1u;
        let page = rwbm_claim_in_word(w, spread);
        if (page != WALK_NONE) {
            return page;
        }
    }
    return WALK_NONE;
}

fn rwbm_handle(page: u32) -> HeapAlloc {
    return HeapAlloc(heap_handle_of(page << RWBM_PAGE_SHIFT), RWBM_PAGE_UNITS, HEAP_OK);
}

fn strategy_free(ptr: u32) -> HeapFree {
    let page = walk_item_of(ptr, RWBM_PAGES, RWBM_PAGE_SHIFT);
    if (page == WALK_NONE) {
        return HeapFree(0u, HEAP_INVALID_FREE);
    }
    let mask = 1u << (page & 31u);
    let w = page >> 5u;
    let old = rwbm_clear(w, mask);
    if ((old & mask) == 0u) {
        return HeapFree(0u, HEAP_INVALID_FREE);
    }
    if (old == 0xffffffffu) {
        atomicAnd(&heap_meta[RWBM_SUMMARY + (w >> 5u)], ~(1u << (w & 31u)));
    }
    walk_unreserve(1u, w);
    return HeapFree(RWBM_PAGE_UNITS, HEAP_OK);
}

// Clears `mask` (one bit) in bitmap word w and returns the word before. RW-BM places a
// subgroup's pages in one word (rw_bm.wgsl), so its frees share the word's atomic
// (heap_clear_bit); CoRW's pages are spread over the words its lanes read, so it makes one
// atomic per free.
fn rwbm_clear(w: u32, mask: u32) -> u32 {
#ifdef GPU_HEAP_RW_BM
    return heap_clear_bit(RWBM_BITMAP + w, mask);
#else
    return atomicAnd(&heap_meta[RWBM_BITMAP + w], ~mask);
#endif
}

// Growth hooks (alloc.wgsl, walk.wgsl). The summary bit of the old boundary word is
// cleared: that word now has free pages (the summary is a hint either way).
fn strategy_grow(from_units: u32, to_units: u32) {
    let old_end = from_units >> RWBM_PAGE_SHIFT;
    let to = min(to_units >> RWBM_PAGE_SHIFT, RWBM_PAGES);
    walk_bitmap_grow(RWBM_BITMAP, old_end, to);
    let f = old_end >> 5u;
    atomicAnd(&heap_meta[RWBM_SUMMARY + (f >> 5u)], ~(1u << (f & 31u)));
}

// For the TAS tool: marks `page` used without a malloc (the tool sets the free count:
// walk_free_set).
fn walk_prefill(page: u32) {
    let w = page >> 5u;
    let mask = 1u << (page & 31u);
    if ((atomicOr(&heap_meta[RWBM_BITMAP + w], mask) | mask) == 0xffffffffu) {
        atomicOr(&heap_meta[RWBM_SUMMARY + (w >> 5u)], 1u << (w & 31u));
    }
}
