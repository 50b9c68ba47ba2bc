// The tree buddy's available tree: which nodes are available, per order, summarised so
// that a malloc finds one in a few loads (the role of the paper's "partial" nodes,
// Gelado & Garland, PPoPP 2019, section 4.1, kept per order so that a descent never
// enters a subtree holding only smaller blocks).
//
// Provides, for order n and node v:
//   at_publish(n, v)             mark v available (its bit, then the summaries above it)
//   at_publish_freed(n, v)       the same for a freed block (sb_set_joining: mallocs of the
//                                same dispatch may find it only once its word's summaries
//                                are set by whoever filled the word)
//   at_publish_run(n, v, count)  the same for an aligned run of nodes, a word at a time
//   at_try_take(n, v) -> bool    clear v's bit if it is set: true if this call cleared it
//   at_is_set(n, v) -> bool      whether v is available now
//   at_claim(n, seed, descents, scan_words) -> u32
//                                clear the bit of some available node and return it, or
//                                AT_NONE; the caller holds a semaphore unit of order n, so
//                                one exists, though its bits may not be visible yet (the
//                                publisher's atomics on other words are relaxed)
//
// Layout (src/tbuddy.rs): summary bitmap AT_BITMAP (core/summary_bitmap.wgsl, which says
// how it is searched and why it is safe); node v of order n is index 2^(B - n) + v
// (B = TB_TREE_SHIFT), so order n's nodes are the range [2^m, 2^(m + 1)), m = B - n. A
// node's bit is set exactly while it is available.
//
// Loops: those of summary_bitmap.wgsl.

#include "../core/summary_bitmap.wgsl"

const AT_NONE: u32 = SB_NONE;
const AT_BITMAP: u32 = 0u;

fn at_index(n: u32, v: u32) -> u32 {
    return (1u << (TB_TREE_SHIFT - n)) + v;
}

fn at_publish(n: u32, v: u32) {
    sb_set(AT_BITMAP, at_index(n, v), sb_top(TB_TREE_SHIFT - n));
}

fn at_publish_freed(n: u32, v: u32) {
    sb_set_joining(AT_BITMAP, at_index(n, v), sb_top(TB_TREE_SHIFT - n));
}

fn at_publish_run(n: u32, first: u32, count: u32) {
    sb_set_run(AT_BITMAP, at_index(n, first), count, sb_top(TB_TREE_SHIFT - n));
}

fn at_try_take(n: u32, v: u32) -> bool {
    return sb_try_clear(AT_BITMAP, at_index(n, v));
}

fn at_is_set(n: u32, v: u32) -> bool {
    return sb_is_set(AT_BITMAP, at_index(n, v));
}

fn at_claim(n: u32, seed: u32, descents: u32, scan_words: u32) -> u32 {
    let m = TB_TREE_SHIFT - n;
    return sb_search(AT_BITMAP, 1u << m, m, seed ^ (n << 26u), descents, scan_words, true);
}
