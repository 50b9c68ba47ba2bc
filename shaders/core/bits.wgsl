// Bitmap words: which bits of a word of a bitmap hold a range of items.
//
// Provides heap_bits_in(w, lo, hi): the bits of word w (items 32w .. 32w + 31) that hold
// items [lo, hi); 0 if none. Used by the random walks' growth hooks and the tree buddy's
// searches and merges. heap_nth_bit(word, k): the position of the set bit of rank k; used
// where lanes share out the bits one atomic claimed (UAlloc, the subgroup ballots of the
// random walks). Loops: heap_nth_bit halves the word 5 times.

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
