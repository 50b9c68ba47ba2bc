// Helpers over subgroup ballot masks (vec4<u32>: lane i is bit i % 32 of component i / 32,
// so subgroups of up to 128 lanes are covered), for the strategies whose lanes work
// together (the random walks, Ouroboros's chunk-based mallocs). Included only in builds
// for devices with wgpu::Features::SUBGROUP. Loops: sg_nth_set_bit and sg_lowest look at 4
// words and halve one 5 times; sg_ballot_same makes 8 ballots.

const SG_NONE: u32 = 0xffffffffu;

fn sg_count(mask: vec4<u32>) -> u32 {
    let c = countOneBits(mask);
    return c.x + c.y + c.z + c.w;
}

// The lowest lane of a mask, or SG_NONE for an empty mask.
fn sg_first(mask: vec4<u32>) -> u32 {
    for (var c = 0u; c < 4u; c++) {
        if (mask[c] != 0u) {
            return 32u * c + firstTrailingBit(mask[c]);
        }
    }
    return SG_NONE;
}

// The lane of the set bit of rank k (0-based) in a mask (heap_nth_bit within its word), or
// SG_NONE if there are not k + 1.
fn sg_nth_set_bit(mask: vec4<u32>, k: u32) -> u32 {
    var rank = k;
    for (var c = 0u; c < 4u; c++) {
        let word = mask[c];
        let count = countOneBits(word);
        if (rank < count) {
            return 32u * c + heap_nth_bit(word, rank);
        }
        rank -= count;
    }
    return SG_NONE;
}

// Whether `lane` is in the mask (false for SG_NONE). Without a branch, so that lanes meeting
// at a ballot before it meet at one after it (ouro_c_malloc).
fn sg_has(mask: vec4<u32>, lane: u32) -> bool {
    return (lane < 128u) & ((mask[min(lane >> 5u, 3u)] & (1u << (lane & 31u))) != 0u);
}

// The lowest n lanes of a mask (all of them if it has no more than n).
fn sg_lowest(mask: vec4<u32>, n: u32) -> vec4<u32> {
    var low = vec4<u32>(0u);
    var left = n;
    for (var c = 0u; c < 4u; c++) {
        low[c] = heap_lowest_bits(mask[c], left);
        left -= countOneBits(low[c]);
    }
    return low;
}

// The lanes for which `on` holds and whose `key` (below 128) is this lane's: one ballot and
// one per bit of a key. A lane that hands something to others names itself as their key and
// learns exactly which of them took it, whatever other lanes meet them at these ballots.
fn sg_ballot_same(on: bool, key: u32) -> vec4<u32> {
    var lanes = subgroupBallot(on);
    for (var b = 0u; b < 7u; b++) {
        let one = ((key >> b) & 1u) != 0u;
        let ones = subgroupBallot(on & one);
        lanes &= select(~ones, ones, one);
    }
    return lanes;
}
