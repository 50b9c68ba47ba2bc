// The spill: free pages that their class queue could not take.
//
// Provides ouro_spill(unit, k), which parks a free page of class k, and ouro_unspill(k, whole),
// which hands one back. In the paper (ICS 2020, sections 4-5) a free always enqueues its
// page; a virtualized queue keeps its items in queue chunks taken from the heap, so on a
// heap full of pages an enqueue can find no memory, and a bounded wait (a standard queue's
// slot, a VAQ or VLQ chunk being made, a VLQ search) can run out. The page then has
// nowhere to go in the paper's design, and a free that fails loses it for good. Here it
// goes to a record that needs no new memory, sized with the heap: one bit per 16-byte unit,
// set at the page's first unit, and counts per chunk and per class that let mallocs find
// the bits. So a free of a live page never fails, whatever the heap's state; mallocs of
// the class take spilled pages before they wait on the queue (page_based.wgsl).
//
// State (heap_meta):
//   OURO_SPILL_BITS + (unit >> 5)  bit (unit & 31): the page starting at `unit` is spilled
//   OURO_SPILL_COUNT + c           spilled pages in chunk c (i32)
//   OURO_SPILLED + k               spilled pages of class k (i32)
//   OURO_SPILL_CURSOR + k          the chunk where class k's next search starts (a hint)
//
// Invariants
//   - A page of a page chunk is in exactly one place: out with a user (its live bit), in its
//     class queue, or spilled (its spill bit). A spilled page's live bit is clear, so a
//     second free of it is an invalid free.
//   - The bits are the truth: exactly one malloc takes a spilled page, the one whose
//     atomicAnd clears its bit. The counts follow the bits (a spill sets the bit, then
//     counts; an unspill clears it, then uncounts), so during a dispatch they may be off by
//     the calls in flight, and below zero for a moment; between dispatches they are exact.
//   - Page chunks keep their class for good (page_based.wgsl), so a chunk's spilled pages
//     are all of the class its info names.
//
// Loops, all bounded: ouro_unspill looks at OURO_SPILL_CHUNKS chunks from the cursor (every
// chunk of the heap once, for a malloc about to report out of memory), in
// each at most ouro_spill_words() words (only where the chunk counts spilled pages), and
// in each word at most 32 claims (a failed claim means another malloc took that bit);
// ouro_spill_purge clears one chunk's words.

const OURO_SPILL_CHUNKS: u32 = 64u;
const OURO_NO_UNIT: u32 = 0xffffffffu;

fn ouro_spill(unit: u32, k: u32) {
    atomicOr(&heap_meta[OURO_SPILL_BITS + (unit >> 5u)], 1u << (unit & 31u));
    atomicAdd(&heap_meta[OURO_SPILL_COUNT + (unit >> OURO_CHUNK_SHIFT)], 1u);
    atomicAdd(&heap_meta[OURO_SPILLED + k], 1u);
}

fn ouro_spilled(k: u32) -> bool {
    return bitcast<i32>(atomicLoad(&heap_meta[OURO_SPILLED + k])) > 0;
}

// Chunk c's spill words start at word (c << OURO_CHUNK_SHIFT) >> 5; there are
// ouro_spill_words() of them, and `mask` selects c's bits in each (all of the word, unless
// chunks are smaller than 32 units and share a word).
fn ouro_spill_words() -> u32 {
    return max(OURO_CHUNK_UNITS >> 5u, 1u);
}

fn ouro_spill_mask(c: u32) -> u32 {
    let first_unit = c << OURO_CHUNK_SHIFT;
    return (0xffffffffu >> (32u - min(OURO_CHUNK_UNITS, 32u))) << (first_unit & 31u);
}

// Takes chunk c of class k out of the spill (a trim, nothing else running: growth.wgsl).
fn ouro_spill_purge(c: u32, k: u32) {
    let spilled = atomicExchange(&heap_meta[OURO_SPILL_COUNT + c], 0u);
    atomicSub(&heap_meta[OURO_SPILLED + k], spilled);
    let first_word = (c << OURO_CHUNK_SHIFT) >> 5u;
    for (var i = 0u; i < ouro_spill_words(); i++) {
        atomicAnd(&heap_meta[OURO_SPILL_BITS + first_word + i], ~ouro_spill_mask(c));
    }
}

// Claims one set bit of spill word w under `mask` (ouro_spill_mask); returns its bit
// index, or 32 if none was left.
fn ouro_spill_claim(w: u32, mask: u32) -> u32 {
    var v = atomicLoad(&heap_meta[OURO_SPILL_BITS + w]) & mask;
    for (var attempt = 0u; attempt < 32u && v != 0u; attempt++) {
        let bit = v & (~v + 1u);
        let old = atomicAnd(&heap_meta[OURO_SPILL_BITS + w], ~bit);
        if ((old & bit) != 0u) {
            return firstTrailingBit(bit);
        }
        v = old & ~bit & mask;
    }
    return 32u;
}

// A spilled page of class k (its first unit), or OURO_NO_UNIT if the search found none.
// `whole`: look at every chunk, not only OURO_SPILL_CHUNKS from the cursor, for a malloc
// about to report out of memory: the class's spilled pages may all lie outside the window.
// Such a search stops early once the class counts no spilled page (others took them), so
// mallocs that lose to others on a full heap do not each read every chunk.
fn ouro_unspill(k: u32, whole: bool) -> u32 {
    let end = ouro_chunk_end();
    if (end == 0u) {
        return OURO_NO_UNIT;
    }
    let start = atomicLoad(&heap_meta[OURO_SPILL_CURSOR + k]) % end;
    let window = select(min(OURO_SPILL_CHUNKS, end), end, whole);
    for (var step = 0u; step < window; step++) {
        if (whole && step % OURO_SPILL_CHUNKS == OURO_SPILL_CHUNKS - 1u && !ouro_spilled(k)) {
            return OURO_NO_UNIT;
        }
        let c = (start + step) % end;
        if (bitcast<i32>(atomicLoad(&heap_meta[OURO_SPILL_COUNT + c])) <= 0
            || atomicLoad(&heap_meta[OURO_CHUNK_INFO + c]) != k + 1u) {
            continue;
        }
        let first_word = (c << OURO_CHUNK_SHIFT) >> 5u;
        for (var i = 0u; i < ouro_spill_words(); i++) {
            let bit = ouro_spill_claim(first_word + i, ouro_spill_mask(c));
            if (bit < 32u) {
                atomicSub(&heap_meta[OURO_SPILL_COUNT + c], 1u);
                atomicSub(&heap_meta[OURO_SPILLED + k], 1u);
                if (step > 0u) {
                    atomicStore(&heap_meta[OURO_SPILL_CURSOR + k], c);
                }
                return ((first_word + i) << 5u) | bit;
            }
        }
    }
    if (!whole) {
        atomicStore(&heap_meta[OURO_SPILL_CURSOR + k], (start + window) % end);
    }
    return OURO_NO_UNIT;
}
