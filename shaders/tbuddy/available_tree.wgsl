// The tree buddy's available tree: which nodes are available, per order, summarised so
// that a malloc finds one in a few loads (the role of the paper's "partial" nodes,
// Gelado & Garland, PPoPP 2019, section 4.1, kept per order so that a descent never
// enters a subtree holding only smaller blocks).
//
// Provides, for order n and node v:
//   at_publish(n, v)             mark v available (its bit, then the summaries above it)
//   at_publish_run(n, v, count)  the same for an aligned run of nodes, a word at a time
//   at_try_take(n, v) -> bool    clear v's bit if it is set: true if this call cleared it
//   at_is_set(n, v) -> bool      whether v is available now
//   at_claim(n, seed, descents, scan_words) -> u32
//                                clear the bit of some available node and return it, or
//                                AT_NONE; the caller holds a semaphore unit of order n, so
//                                one exists, though its bits may not be visible yet (the
//                                publisher's atomics on other words are relaxed)
//
// Layout (src/tbuddy.rs): node v of order n is index 2^(B - n) + v (B = TB_TREE_SHIFT);
// layer 0 has a bit per index, and bit i of layer j + 1 says that word i of layer j may be
// non-zero (at_layer_base(j) is generated). Order n's indices in layer j are the range
// [2^(m - 5j), 2^(m - 5j + 1)) with m = B - n, so its top layer, floor(m / 5), holds them
// in part of word 0: the descent starts there, masked to that range.
//
// Invariants
//   - A node's layer-0 bit is set exactly while it is available; only atomicOr sets it and
//     only atomicAnd clears it, and a clear counts as a take only if its old value had the
//     bit, so no node is taken twice.
//   - Summaries may say "non-zero" of a word that is zero (a take never clears them; a
//     descent that meets such a word clears the summary bit and then reads the word again,
//     setting the bit back if it has filled meanwhile; a claim that empties a word does
//     the same at once). Publishing sets the bit and then the summaries, so a published
//     node is reachable from the top once at_publish returns, unless a repair races with
//     it; at_claim's last-resort scan of layer 0 looks for what summaries hide.
//
// Loops: a descent visits each layer once (at most 7) and tries at most 32 bits of the
// layer-0 word it reaches; at_claim makes at most `descents` descents and then scans at
// most `scan_words` words of layer 0.

const AT_NONE: u32 = 0xffffffffu;

fn at_index(n: u32, v: u32) -> u32 {
    return (1u << (TB_TREE_SHIFT - n)) + v;
}

// Each atomic of a publish or a repair is issued only once the previous one has returned
// (the next step branches on its old value): atomics on different words are relaxed, and
// a summary bit set before the bit it leads to could be cleared by a repair that does not
// see that bit yet, hiding it.
fn at_publish(n: u32, v: u32) {
    at_lead_to(at_index(n, v), 0u, (TB_TREE_SHIFT - n) / 5u);
}

// Sets the bit of index `i` of layer `first` and the summary bits above it up to layer
// `last`, stopping at the first that was already set: the layers above it already lead here.
fn at_lead_to(index: u32, first: u32, last: u32) {
    var i = index;
    for (var j = first; j <= last; j++) {
        let bit = 1u << (i & 31u);
        let old = atomicOr(&heap_meta[at_layer_base(j) + (i >> 5u)], bit);
        if ((old & bit) != 0u) {
            return;
        }
        i >>= 5u;
    }
}

// Marks the `count` nodes from `first` available: a word of layer 0 at a time, and each
// word's summaries once.
fn at_publish_run(n: u32, first: u32, count: u32) {
    let start = at_index(n, first);
    let top = (TB_TREE_SHIFT - n) / 5u;
    var done = 0u;
    for (var k = 0u; k < (count >> 5u) + 2u && done < count; k++) {
        let i0 = start + done;
        let take = min(32u - (i0 & 31u), count - done);
        let bits = select((1u << take) - 1u, 0xffffffffu, take == 32u) << (i0 & 31u);
        let old0 = atomicOr(&heap_meta[at_layer_base(0u) + (i0 >> 5u)], bits);
        // (Unless old0 had all of them, which a publish never sees: the summaries are
        // written after this atomic returns.)
        if ((old0 & bits) != bits) {
            at_lead_to(i0 >> 5u, 1u, top);
        }
        done += take;
    }
}

fn at_try_take(n: u32, v: u32) -> bool {
    let i = at_index(n, v);
    let bit = 1u << (i & 31u);
    let old = atomicAnd(&heap_meta[at_layer_base(0u) + (i >> 5u)], ~bit);
    return (old & bit) != 0u;
}

fn at_is_set(n: u32, v: u32) -> bool {
    let i = at_index(n, v);
    return (atomicLoad(&heap_meta[at_layer_base(0u) + (i >> 5u)]) & (1u << (i & 31u))) != 0u;
}

// A set bit of `word` (not zero), searched from a random position so that concurrent
// claimants spread over the word.
fn at_pick(word: u32, r: u32) -> u32 {
    let shift = r & 31u;
    let rotated = (word >> shift) | (word << ((32u - shift) & 31u));
    return (firstTrailingBit(rotated) + shift) & 31u;
}

// Word i of layer j is empty: clear its summary bit in layer j + 1, then read the word
// again, and set the bit back if a publish filled it meanwhile.
fn at_repair(j: u32, i: u32) {
    let bit = 1u << (i & 31u);
    let above = at_layer_base(j + 1u) + (i >> 5u);
    let old = atomicAnd(&heap_meta[above], ~bit);
    if ((old & bit) != 0u && atomicLoad(&heap_meta[at_layer_base(j) + i]) != 0u) {
        atomicOr(&heap_meta[above], bit);
    }
}

fn at_claim(n: u32, seed: u32, descents: u32, scan_words: u32) -> u32 {
    let m = TB_TREE_SHIFT - n;
    let top = m / 5u;
    // Order n's indices in the top layer: [2^r, 2^(r + 1)) of word 0, r = m - 5 * top.
    let r = m - 5u * top;
    let mask = heap_bits_in(0u, 1u << r, 2u << r);
    var rng = heap_hash(seed ^ (n << 26u)) | 1u;
    for (var round = 0u; round < descents; round++) {
        var i = 0u; // word index in layer j
        for (var step = 0u; step <= top; step++) {
            let j = top - step;
            let w = at_layer_base(j) + i;
            var word = atomicLoad(&heap_meta[w]);
            if (j == top) {
                word &= mask;
            }
            if (word == 0u) {
                if (j < top) {
                    at_repair(j, i);
                }
                break;
            }
            rng = heap_rng_next(rng);
            if (j == 0u) {
                // Claim a bit of this word; one another claimant took first leaves the
                // others, which the atomic's old value shows, to try next.
                var left = word;
                for (var t = 0u; t < 32u && left != 0u; t++) {
                    let b = at_pick(left, rng);
                    let old = atomicAnd(&heap_meta[w], ~(1u << b));
                    if ((old & (1u << b)) != 0u) {
                        if (old == (1u << b) && top > 0u) {
                            at_repair(0u, i); // emptied it: keep descents away
                        }
                        return i * 32u + b - (1u << m);
                    }
                    left = old & ~(1u << b);
                    if (j == top) {
                        left &= mask;
                    }
                    rng = heap_rng_next(rng);
                }
                break; // the word emptied: descend again
            }
            i = i * 32u + at_pick(word, rng);
        }
    }
    // The summaries hid it, or claimants kept taking what this one saw: scan the order's
    // words of layer 0 (one masked word for the orders whose range is smaller), from a
    // random start; what summaries hide is found again once a publish or a repair in its
    // word sets the summary bit.
    let lo = 1u << m;
    let hi = 2u << m;
    let first = lo >> 5u;
    let words = ((hi + 31u) >> 5u) - first;
    let start = rng % words;
    for (var k = 0u; k < min(words, scan_words); k++) {
        let w = first + (start + k) % words;
        let word = atomicLoad(&heap_meta[at_layer_base(0u) + w]) & heap_bits_in(w, lo, hi);
        if (word != 0u) {
            let b = firstTrailingBit(word);
            let old = atomicAnd(&heap_meta[at_layer_base(0u) + w], ~(1u << b));
            if ((old & (1u << b)) != 0u) {
                return w * 32u + b - lo;
            }
        }
    }
    return AT_NONE;
}
