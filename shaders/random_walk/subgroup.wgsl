// Subgroup helpers of the random walks: ballot masks (vec4<u32>: lane i is bit i % 32 of
// component i / 32, so subgroups of up to 128 lanes are covered), and atomics shared by the
// lanes of a subgroup that hit the same word (sg_atomic_and, sg_atomic_add: one atomic per
// word and subgroup where neighbouring lanes free neighbouring memory). Included only in
// builds for devices with wgpu::Features::SUBGROUP. Loops: sg_nth_set_bit runs 4 x 5
// iterations at most, sg_atomic_and SG_AND_GROUPS rounds.

fn sg_count(mask: vec4<u32>) -> u32 {
    let c = countOneBits(mask);
    return c.x + c.y + c.z + c.w;
}

// The lowest lane of a mask, or WALK_NONE for an empty mask.
fn sg_first(mask: vec4<u32>) -> u32 {
    for (var c = 0u; c < 4u; c++) {
        if (mask[c] != 0u) {
            return 32u * c + firstTrailingBit(mask[c]);
        }
    }
    return WALK_NONE;
}

// The lane of the set bit of rank k (0-based) in a mask, by halving within the word
// (population counts, no loop over single bits), or WALK_NONE if there are not k + 1.
fn sg_nth_set_bit(mask: vec4<u32>, k: u32) -> u32 {
    var rank = k;
    for (var c = 0u; c < 4u; c++) {
        let word = mask[c];
        let count = countOneBits(word);
        if (rank < count) {
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
            return 32u * c + pos;
        }
        rank -= count;
    }
    return WALK_NONE;
}

// Word groups sg_atomic_and forms before the remaining lanes do their own atomics.
const SG_AND_GROUPS: u32 = 2u;

// atomicAnd(&heap_meta[word], ~bits) for every lane with `take_part`, returning to each lane the
// word's value before its bits were cleared. The lanes of a subgroup that name the same word
// with pairwise disjoint bits share one atomic (for the first SG_AND_GROUPS such words; the
// other lanes do their own). A shared atomic clears their bits together, so each lane reads
// its own bits of the old value exactly as it would alone; lanes whose bits overlap (the
// same pointer freed twice at once) all do their own, so exactly one of them sees its bits
// set. Every lane that called the caller must reach this call (subgroup operations among
// the take_part lanes). Loop: SG_AND_GROUPS rounds.
fn sg_atomic_and(word: u32, bits: u32, take_part: bool) -> u32 {
    var pending = take_part;
    var old = 0u;
    for (var round = 0u; round < SG_AND_GROUPS; round++) {
        let w = subgroupMin(select(WALK_NONE, word, pending));
        if (w == WALK_NONE) {
            break;
        }
        let mine = pending && word == w;
        let group_bits = subgroupOr(select(0u, bits, mine));
        let bit_sum = subgroupAdd(select(0u, countOneBits(bits), mine));
        if (bit_sum != countOneBits(group_bits)) {
            break;
        }
        let rank = subgroupExclusiveAdd(select(0u, 1u, mine));
        var got = 0u;
        if (mine && rank == 0u) {
            got = atomicAnd(&heap_meta[w], ~group_bits);
        }
        // Only the lane that did the atomic contributes.
        got = subgroupOr(got);
        if (mine) {
            old = got;
            pending = false;
        }
    }
    if (pending) {
        old = atomicAnd(&heap_meta[word], ~bits);
    }
    return old;
}

// atomicAdd(&heap_meta[word], n) for the sum of every lane's n, by one lane of the subgroup.
// Every lane that called the caller must reach this call.
fn sg_atomic_add(word: u32, n: u32) {
    let total = subgroupAdd(n);
    if (subgroupExclusiveAdd(1u) == 0u && total != 0u) {
        atomicAdd(&heap_meta[word], total);
    }
}
