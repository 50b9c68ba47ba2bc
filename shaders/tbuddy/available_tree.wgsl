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
//   at_claim_together(n, seed) -> u32
//                                the lanes of a subgroup claim nodes of one word with one
//                                atomic (where subgroups exist), else AT_NONE
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

#ifdef GPU_HEAP_SUBGROUPS
// A word of layer 0 in the range of order m = TB_TREE_SHIFT - n that the summaries say may
// hold available nodes, or SB_NONE: a descent that takes nothing, steered by `key` instead
// of a random number (at layer j, the first set bit from digit j - 1 of key, five bits a
// digit). Subgroups whose keys (their tickets over 32: consecutive) differ reach different
// words where those hold nodes, where random descents would meet on the same words.
fn at_word_for(m: u32, key: u32) -> u32 {
    let top = sb_top(m);
    let top_lo = (1u << m) >> (5u * top);
    var i = top_lo >> 5u;
    let mask = heap_bits_in(i, top_lo, top_lo + (1u << (m - 5u * top)));
    for (var j = top; j > 0u; j--) {
        var word = atomicLoad(&heap_meta[sb_layer_base(AT_BITMAP, j) + i]);
        if (j == top) {
            word &= mask;
        }
        if (word == 0u) {
            return SB_NONE;
        }
        i = i * 32u + sb_pick(word, key >> (5u * (j - 1u)));
    }
    return i;
}

// The lanes of a subgroup here with the order of its first one, each holding a unit of
// order n, claim nodes of one word: the first lane finds a word with available nodes
// (at_word_for, from its ticket), and one atomicAnd takes a bit of it for each lane by rank,
// each lane reading its own bit in the old value. Their blocks then lie together, so that
// their frees share words (tb_free_together). Returns the lane's node, or AT_NONE (a
// lane of another order, of a rank past the word's bits, or whose bit another claimant
// took first), which then claims alone.
fn at_claim_together(n: u32, seed: u32) -> u32 {
    let first = subgroupExclusiveAdd(1u) == 0u;
    let same = n == subgroupBroadcastFirst(n);
    let rank = subgroupExclusiveAdd(u32(same));
    let m = TB_TREE_SHIFT - n;
    let lo = 1u << m;
    var word = 0u;
    var bits = 0u;
    if (first) {
        word = at_word_for(m, seed >> 5u);
        if (word != SB_NONE) {
            bits = atomicLoad(&heap_meta[sb_layer_base(AT_BITMAP, 0u) + word])
                & heap_bits_in(word, lo, lo + (1u << m));
        }
    }
    word = subgroupBroadcastFirst(word);
    bits = subgroupBroadcastFirst(bits);
    let wants = same && rank < countOneBits(bits);
    var bit = 0u;
    if (wants) {
        bit = 1u << heap_nth_bit(bits, rank);
    }
    let mask = subgroupOr(bit);
    var old = 0u;
    if (first && mask != 0u) {
        old = atomicAnd(&heap_meta[sb_layer_base(AT_BITMAP, 0u) + word], ~mask);
    }
    old = subgroupBroadcastFirst(old);
    if (wants && (old & bit) != 0u) {
        return (word << 5u) + firstTrailingBit(bit) - lo;
    }
    return AT_NONE;
}
#endif

fn at_is_set(n: u32, v: u32) -> bool {
    return sb_is_set(AT_BITMAP, at_index(n, v));
}

fn at_claim(n: u32, seed: u32, descents: u32, scan_words: u32) -> u32 {
    let m = TB_TREE_SHIFT - n;
    return sb_search(AT_BITMAP, 1u << m, m, seed ^ (n << 26u), descents, scan_words, true);
}
