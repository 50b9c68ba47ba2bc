// Bitmap words: which bits of a word of a bitmap hold a range of items.
//
// Provides heap_bits_in(w, lo, hi): the bits of word w (items 32w .. 32w + 31) that hold
// items [lo, hi); 0 if none. Used by the random walks' growth hooks and the tree buddy's
// searches and merges. No loops.

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
