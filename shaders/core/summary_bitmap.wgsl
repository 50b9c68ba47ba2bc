// Summary bitmaps: sets of indices in heap_meta that a claimant searches in a few loads,
// for the tree buddy's available nodes (one range per order), UAlloc's bins with free
// blocks and the chunk-based Ouroboros's chunks with free pages (one range per size class).
//
// Provides, for bitmap t (the host numbers them and generates sb_layer_base(t, j)):
//   sb_set(t, i, top)               set index i, then the summaries above it up to `top`
//   sb_set_joining(t, i, top)       the same, but for a set that finders follow only later
//                                   (frees): none above a word that had another bit
//   sb_set_joining_bits(t, w, bits, top)
//                                   the same for the indices of `bits` in word w of layer
//                                   0, with one atomic
//   sb_set_run(t, i, count, top)    the same for `count` indices from i, a word at a time
//   sb_try_clear(t, i) -> bool      clear i if it is set: true if this call cleared it
//   sb_is_set(t, i) -> bool
//   sb_range_may_hold(t, lo, m) -> bool
//                                   whether [lo, lo + 2^m) may hold a set index (its top bits)
//   sb_search(t, lo, m, seed, descents, scan_words, take) -> u32
//                                   some set index of the range [lo, lo + 2^m), cleared
//                                   by this call if `take`: its offset from lo, or SB_NONE
//   sb_repair(t, j, i, top)         word i of layer j was seen empty: fix its summary bit
//
// Layout: layer 0 of bitmap t has a bit per index; bit i of layer j + 1 says that word i of
// layer j may be non-zero. A range is [k * 2^m, (k + 1) * 2^m): in layer j = m / 5 (its top
// layer, sb_top(m)) it is 2^(m - 5j) <= 16 aligned bits of one word, where descents start.
//
// Invariants
//   - An index's layer-0 bit is set only by atomicOr and cleared only by atomicAnd, and a
//     clear counts as a take only if its old value had the bit: no index is taken twice.
//   - Summaries may say "non-zero" of a word that is zero (a take never clears them; a
//     search that met such a word, or emptied one with its claim, repairs the last it
//     saw once its descents are done: it clears the summary bit and then reads the word
//     again, setting the bit back if it has filled meanwhile).
//   - A set index is reachable from the top once its set has returned, but for a repair
//     in flight above it, which sets back what it cleared once it has read the word below:
//     a set climbs until its atomicOr finds its bit already set (whoever set that bit
//     climbed from there), and a repair that clears a summary bit reads the word below
//     again and, if it is not empty, sets the bit back the same way, up the layers.
//     sb_set_joining that finds its word holding another index leaves the summaries to
//     the set that filled the word, which climbs (or has): its index is reachable once
//     that set has returned. sb_search's last-resort scan of layer 0 finds what is hidden
//     meanwhile.
//   - Each step of a set or a repair is an atomic read-modify-write, issued only once the
//     previous one has returned (the next step branches on what it returned), so that of
//     a set and a repair of the same summary one sees the other's write. A plain load
//     there may be performed ahead of the atomic before it (WGSL's atomics are relaxed, and
//     a compiler may hoist a load above the branch on that atomic's result); then both can
//     miss, the repair leaves the summary clear over the set's bit, and every index under
//     it is hidden from descents (BENCHMARKS.md, "Hidden summaries"). So a set never looks
//     before its atomicOr, and a repair reads the word below with atomicOr(word, 0).
//
// Loops: a descent visits each layer once (at most 7) and tries at most 32 bits of the
// layer-0 word it reaches; sb_search makes at most `descents` descents and then scans at
// most `scan_words` words of layer 0; a set or a repair climbs each layer at most once;
// sb_set_run writes count / 32 + 2 words at most.

const SB_NONE: u32 = 0xffffffffu;

// The top layer of a range of 2^m indices.
fn sb_top(m: u32) -> u32 {
    return m / 5u;
}

// Sets the bit of index `index` of layer `first` and the summary bits above it up to
// layer `last`, stopping at the first that was already set: the layers above it already
// lead here.
fn sb_lead_to(t: u32, index: u32, first: u32, last: u32) {
    var i = index;
    for (var j = first; j <= last; j++) {
        let bit = 1u << (i & 31u);
        let word = sb_layer_base(t, j) + (i >> 5u);
        if ((atomicOr(&heap_meta[word], bit) & bit) != 0u) {
            return;
        }
        i >>= 5u;
    }
}

fn sb_set(t: u32, i: u32, top: u32) {
    sb_lead_to(t, i, 0u, top);
}

// Spares the atomic on the summary word above, which the sets of all the word's neighbours
// hit, wherever the word was not empty; until the set that filled it has climbed, a descent
// may miss i. So it is for frees, whose blocks mallocs of later dispatches take.
fn sb_set_joining(t: u32, i: u32, top: u32) {
    sb_set_joining_bits(t, i >> 5u, 1u << (i & 31u), top);
}

// sb_set_joining for the indices of `bits` in word `w` of layer 0, with one atomic.
fn sb_set_joining_bits(t: u32, w: u32, bits: u32, top: u32) {
    if (atomicOr(&heap_meta[sb_layer_base(t, 0u) + w], bits) == 0u) {
        sb_lead_to(t, w, 1u, top);
    }
}

fn sb_set_run(t: u32, first: u32, count: u32, top: u32) {
    var done = 0u;
    for (var k = 0u; k < (count >> 5u) + 2u && done < count; k++) {
        let i0 = first + done;
        let take = min(32u - (i0 & 31u), count - done);
        let bits = select((1u << take) - 1u, 0xffffffffu, take == 32u) << (i0 & 31u);
        // (Unless the word had all of them, which a set never sees: the summaries are
        // written after this atomic returns.)
        if ((atomicOr(&heap_meta[sb_layer_base(t, 0u) + (i0 >> 5u)], bits) & bits) != bits) {
            sb_lead_to(t, i0 >> 5u, 1u, top);
        }
        done += take;
    }
}

fn sb_try_clear(t: u32, i: u32) -> bool {
    let bit = 1u << (i & 31u);
    let old = atomicAnd(&heap_meta[sb_layer_base(t, 0u) + (i >> 5u)], ~bit);
    return (old & bit) != 0u;
}

fn sb_is_set(t: u32, i: u32) -> bool {
    return (atomicLoad(&heap_meta[sb_layer_base(t, 0u) + (i >> 5u)]) & (1u << (i & 31u))) != 0u;
}

// Whether the range [lo, lo + 2^m) may hold a set index: its bits of the top layer. False
// means none is set, but for sets still climbing and repairs in flight above a set index
// (a repair clears a summary bit before it reads the word below; see Invariants).
fn sb_range_may_hold(t: u32, lo: u32, m: u32) -> bool {
    let range = sb_top_of(lo, m);
    return (atomicLoad(&heap_meta[sb_layer_base(t, sb_top(m)) + range.x]) & range.y) != 0u;
}

// The range [lo, lo + 2^m) in its top layer: the word (x) and its bits there (y, 2^r
// aligned bits of that word).
fn sb_top_of(lo: u32, m: u32) -> vec2<u32> {
    let top = sb_top(m);
    let top_lo = lo >> (5u * top);
    let top_word = top_lo >> 5u;
    return vec2<u32>(top_word, heap_bits_in(top_word, top_lo, top_lo + (1u << (m - 5u * top))));
}

// A set bit of `word` (not zero), searched from a random position so that concurrent
// claimants spread over the word.
fn sb_pick(word: u32, r: u32) -> u32 {
    let shift = r & 31u;
    let rotated = (word >> shift) | (word << ((32u - shift) & 31u));
    return (firstTrailingBit(rotated) + shift) & 31u;
}

fn sb_repair(t: u32, j: u32, i: u32, top: u32) {
    let bit = 1u << (i & 31u);
    let above = sb_layer_base(t, j + 1u) + (i >> 5u);
    let old = atomicAnd(&heap_meta[above], ~bit);
    // The bit goes back as a set puts it, up the layers: the clear may have emptied the
    // word above, whose own summary bit a repair may have cleared since.
    if ((old & bit) != 0u && atomicOr(&heap_meta[sb_layer_base(t, j) + i], 0u) != 0u) {
        sb_lead_to(t, i, j + 1u, top);
    }
}

fn sb_search(t: u32, lo: u32, m: u32, seed: u32, descents: u32, scan_words: u32, take: bool) -> u32 {
    let top = sb_top(m);
    let top_of = sb_top_of(lo, m);
    let top_word = top_of.x;
    let mask = top_of.y;
    var rng = heap_hash(seed) | 1u;
    // One repair per search, after the descents: the repair's climbing restore is then
    // inlined once per search site, and a kernel's code stays small enough to run fast
    // (BENCHMARKS.md, "The fix on the H100, and a kernel's code size"). A word left
    // unrepaired costs later descents a step.
    var empty_layer = SB_NONE; // word empty_word of this layer was seen empty
    var empty_word = 0u;
    var found = SB_NONE;
    for (var round = 0u; round < descents && found == SB_NONE; round++) {
        var i = top_word; // word index in layer j
        for (var step = 0u; step <= top; step++) {
            let j = top - step;
            let w = sb_layer_base(t, j) + i;
            var word = atomicLoad(&heap_meta[w]);
            if (j == top) {
                word &= mask;
            }
            if (word == 0u) {
                if (j < top) {
                    empty_layer = j;
                    empty_word = i;
                }
                break;
            }
            rng = heap_rng_next(rng);
            if (j == 0u && !take) {
                found = i * 32u + sb_pick(word, rng) - lo;
                break;
            }
            if (j == 0u) {
                // Claim a bit of this word; one another claimant took first leaves the
                // others, which the atomic's old value shows, to try next.
                var left = word;
                for (var k = 0u; k < 32u && left != 0u; k++) {
                    let b = sb_pick(left, rng);
                    let old = atomicAnd(&heap_meta[w], ~(1u << b));
                    if ((old & (1u << b)) != 0u) {
                        found = i * 32u + b - lo;
                        if (old == (1u << b) && top > 0u) {
                            empty_layer = 0u; // emptied it: keep descents away
                            empty_word = i;
                        }
                        break;
                    }
                    left = old & ~(1u << b);
                    if (j == top) {
                        left &= mask;
                    }
                    rng = heap_rng_next(rng);
                }
                break; // claimed (the descents end), or the word emptied: descend again
            }
            i = i * 32u + sb_pick(word, rng);
        }
    }
    if (empty_layer != SB_NONE) {
        sb_repair(t, empty_layer, empty_word, top);
    }
    if (found != SB_NONE) {
        return found;
    }
    // The summaries hid it, or claimants kept taking what this one saw: scan the range's
    // words of layer 0 (one masked word for a range smaller than a word), from a random
    // start; what summaries hide is found again once a set or a repair in its word sets
    // the summary bit.
    let hi = lo + (1u << m);
    let first = lo >> 5u;
    let words = ((hi + 31u) >> 5u) - first;
    let start = rng % words;
    for (var k = 0u; k < min(words, scan_words); k++) {
        let w = first + (start + k) % words;
        let word = atomicLoad(&heap_meta[sb_layer_base(t, 0u) + w]) & heap_bits_in(w, lo, hi);
        if (word != 0u && !take) {
            return w * 32u + sb_pick(word, rng) - lo;
        }
        if (word != 0u) {
            let b = firstTrailingBit(word);
            let old = atomicAnd(&heap_meta[sb_layer_base(t, 0u) + w], ~(1u << b));
            if ((old & (1u << b)) != 0u) {
                return w * 32u + b - lo;
            }
        }
    }
    return SB_NONE;
}
