// Bitmap words: which bits of a word of a bitmap hold a range of items.
//
// Provides heap_bits_in(w, lo, hi): the bits of word w (items 32w .. 32w + 31) that hold
// items [lo, hi); 0 if none. Used by the random walks' growth hooks and the tree buddy's
// searches and merges. heap_nth_bit(word, k): the position of the set bit of rank k; used
// where lanes share out the bits one atomic claimed (UAlloc, the subgroup ballots of the
// random walks, Ouroboros's chunk-based mallocs); heap_lowest_bits(word, n) the bits such
// a claim picks. heap_clear_bit(i, bit): a free's clear of its one bit in metadata word i,
// shared with the lanes of its subgroup that clear bits of the same word (RW-BM, UAlloc).
// Loops: heap_nth_bit halves the word 5 times.

fn heap_bits_in(w: u32, lo: u32, hi: u32) -> u32 {
    let a = max(lo, w << 5u);
    let b = min(hi, (w << 5u) + 32u);
    if (a >= b) {
        return 0u;
    }
    if (b - a == 32u) {
        return 0xffffffffu;
    }
    return ((1u << (b - a)) - 1u) << (a & 31u);
}

// The position of the set bit of rank k (0-based) in `word`, which has more than k set
// bits: by halving (population counts, no loop over single bits).
fn heap_nth_bit(word: u32, k: u32) -> u32 {
    var rank = k;
    var x = word;
    var pos = 0u;
    for (var width = 16u; width > 0u; width >>= 1u) {
        let low = countOneBits(x & ((1u << width) - 1u));
        if (rank >= low) {
            rank -= low;
            x >>= width;
            pos += width;
        }
    }
    return pos;
}

// The lowest n set bits of `word` (all of them if it has no more than n).
fn heap_lowest_bits(word: u32, n: u32) -> u32 {
    if (countOneBits(word) <= n) {
        return word;
    }
    return word & ((1u << heap_nth_bit(word, n)) - 1u);
}

// Clears `bit` (one bit) in heap_meta[i] and returns the word before, from which the caller
// tells a live block (its bit was set) from a double free. Where subgroups exist, the
// lanes of a subgroup that clear bits of the same word as its first active lane clear them
// with one atomicAnd and each reads its own bit in the one old value: strategies that
// place a subgroup's blocks in one word then free them with one atomic where they would
// queue 32 on that word. If two of those lanes clear the same bit (a double free, which
// each must see alone) every lane makes its own atomicAnd.
fn heap_clear_bit(i: u32, bit: u32) -> u32 {
#ifdef GPU_HEAP_SUBGROUPS
    let same = i == subgroupBroadcastFirst(i);
    let joint = subgroupOr(select(0u, bit, same));
    let together = countOneBits(joint) == subgroupAdd(u32(same));
    var old = 0u;
    if (together && subgroupExclusiveAdd(1u) == 0u) {
        old = atomicAnd(&heap_meta[i], ~joint);
    }
    old = subgroupBroadcastFirst(old);
    if (together && same) {
        return old;
    }
#endif
    return atomicAnd(&heap_meta[i], ~bit);
}
