// CoRW: the collaborative random walk (Pham & Tu, section 4.2, Algorithm 3) over the RW-BM
// bitmap (bitmap.wgsl). The invocations of a subgroup that call malloc together pool the
// free bits they read, so a lane whose word was full is handed a bit another lane saw, and
// no lane walks much longer than its neighbours (WAS close to TAS).
//
// Selected only where the device has wgpu::Features::SUBGROUP; elsewhere the host plans
// corw as RW-BM (src/random_walk/mod.rs). Uses subgroupBallot, subgroupExclusiveAdd and
// subgroupShuffle, without an `enable` line (naga 30 rejects `enable subgroups;`).
//
// One round: every lane holding a reservation reads one random bitmap word (a step), also
// lanes already served: they produce bits for the others, as in the paper, so a subgroup
// needs about as many rounds as its average lane would alone and WAS equals TAS (lanes
// that read only while still in need would leave WAS well above TAS). Then passes hand
// bits out: in each pass the k-th lane still needing a page (in lane order) receives,
// through subgroupShuffle, the lowest remaining free bit of the k-th lane that still has
// one, and tries to claim it with one atomicOr; the giving lanes drop that bit.
//
// Divergence and correctness: only the lanes that called malloc are active, and every
// subgroup operation sees those lanes (ballots are of `need`/`has` among them, ranks are
// exclusive sums among them). Ownership never travels through the subgroup: a received
// bit is only a candidate, and the receiving lane claims it itself with atomicOr, exactly
// as RW-BM does. So if a backend runs divergent lanes in smaller groups than expected, or
// a shuffle returns an undefined value from an inactive lane, a candidate can only be
// wrong, never shared: the claim fails (or claims another genuinely free page) and the
// lane keeps walking. The bits past the last page are set, so any index below
// 32 RWBM_BITMAP_WORDS is safe to try; larger ones are ignored.
// Invariants of the bitmap and the free count: bitmap.wgsl and walk.wgsl.
//
// Loops, all bounded: CORW_ROUNDS rounds; in each, at most CORW_PASSES passes (a pass
// serves at least one lane or drops at least one bit per giving lane); subgroup.wgsl's. Lanes still
// without a page then sweep the bitmap on their own (bitmap.wgsl), without subgroup
// operations; if that fails they return their reservation: HEAP_CONTENTION.

#include "bitmap.wgsl"
#include "../core/subgroup.wgsl"

const CORW_ROUNDS: u32 = 64u;
const CORW_PASSES: u32 = 32u;

fn strategy_malloc(size_bytes: u32) -> HeapAlloc {
    heap_walk_steps = 0u;
    let ticket = walk_reserve_one(RWBM_PAGES);
    // Lanes without a reservation still go through the rounds (as lanes that need
    // nothing), so that every round's subgroup operations see the same lanes.
    var need = ticket != 0u;
    var page = WALK_NONE;
    let words = rwbm_live_words();
    var rng = heap_hash(ticket) | 1u;
    for (var round = 0u; round < CORW_ROUNDS; round++) {
        if (sg_count(subgroupBallot(need)) == 0u) {
            break; // the same for every lane that executed the ballot
        }
        var word = 0u;
        var free_bits = 0u;
        if (ticket != 0u) {
            rng = heap_rng_next(rng);
            word = rng % words;
            heap_walk_steps += 1u;
            free_bits = ~atomicLoad(&heap_meta[RWBM_BITMAP + word]);
        }
        for (var turn = 0u; turn < CORW_PASSES; turn++) {
            let has = free_bits != 0u;
            let needers = sg_count(subgroupBallot(need));
            let has_mask = subgroupBallot(has);
            let givers = sg_count(has_mask);
            if (needers == 0u || givers == 0u) {
                break;
            }
            let need_rank = subgroupExclusiveAdd(select(0u, 1u, need));
            let has_rank = subgroupExclusiveAdd(select(0u, 1u, has));
            var offer = WALK_NONE;
            if (has) {
                offer = (word << 5u) | firstTrailingBit(free_bits);
            }
            // Every lane shuffles (a lane receiving nothing reads lane 0's offer and
            // ignores it): the shuffle stays in the control flow all lanes share.
            var source = 0u;
            let receives = need && need_rank < givers;
            if (receives) {
                source = sg_nth_set_bit(has_mask, need_rank);
            }
            let candidate = subgroupShuffle(offer, source);
            if (has && has_rank < needers) {
                free_bits &= free_bits - 1u; // given away: drop the lowest bit
            }
            if (receives && candidate < RWBM_BITMAP_WORDS * 32u) {
                let mask = 1u << (candidate & 31u);
                let old = atomicOr(&heap_meta[RWBM_BITMAP + (candidate >> 5u)], mask);
                if ((old & mask) == 0u) {
                    page = candidate;
                    need = false;
                }
            }
        }
    }
    if (ticket == 0u) {
        return HeapAlloc(HEAP_NULL, 0u, HEAP_OUT_OF_MEMORY);
    }
    if (need) {
        page = rwbm_sweep(rng % words, rng >> 8u, words);
    }
    walk_finish();
    if (page != WALK_NONE) {
        return rwbm_handle(page);
    }
    walk_unreserve(1u, ticket);
    return HeapAlloc(HEAP_NULL, 0u, HEAP_CONTENTION);
}
