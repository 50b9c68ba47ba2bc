// RW_malloc: allocations of any size as runs of consecutive free units, found by random
// walks over a bitmap of used bits (Pham & Tu, section 4.3), with small requests of a
// subgroup aggregated into one run.
//
// Geometry (from the host, src/random_walk/mod.rs): RWM_UNITS units of
// 16 << RWM_UNIT_SHIFT bytes; RWM_WORDS words per bitmap; a segment holds RWM_SEGMENT_WORDS
// whole words (32 units each), so a run that starts and ends in one segment's words never
// crosses a segment boundary. A malloc of s bytes takes ceil(s / unit) units, at most
// RWM_MAX_UNITS.
//
// State (heap_meta, after walk.wgsl's words): three bitmaps of RWM_WORDS words each:
//   RWM_USED   bit u set <=> unit u is in use, claimed by a malloc in progress, or past the end
//   RWM_START  bit u set <=> an allocation starts at unit u (what free checks and clears)
//   RWM_END    bit u set <=> an allocation ends at unit u (how free finds its length)
//
// Invariants
//   - Live allocations are disjoint runs of used bits, each with exactly one start and one
//     end bit, so the first end bit at or after a start bit is that allocation's end.
//   - malloc reserves its units in the free count first (walk.wgsl; one shard, so that exhaustion
//     is exact for runs of any length), then claims the run's used bits word by word with atomicOr;
//     if a word's old value shows a bit already set, it clears the bits it set itself (they were
//     zero before, so no one else owns them) and those of the earlier words (wholly its own), so a
//     claim is all or nothing. Only then does it set the end bit and, last, the start bit.
//   - free clears the start bit first (one winner: a second free of the same pointer, or a
//     free of a pointer that is not a start, sees it clear: HEAP_INVALID_FREE), then the end
//     bit, then the used bits, and returns the units to the free count last.
//   - Ordering: WGSL atomics are relaxed, and an atomic whose result is unused may be
//     performed after later ones (NVIDIA issues those as reductions, without waiting). So
//     each step of free that others rely on uses the result of the step before: the used
//     bits are cleared only once the end bit's clear has returned (a branch on it), and
//     the units are counted free with the number the used bits' clears returned. A malloc
//     that claims those units then sets its end bit after the old one was cleared;
//     otherwise the old clear could land later and erase the new bit, and the next free of
//     that block would run on to another block's end bit (lost frees, and live bytes
//     below zero). Claims and marks run after atomics whose results they branch on.
//   - Placement: a walk's window starts at a random word, but a run starts where the free
//     stretch containing that word begins (a bounded look back), i.e. right after used
//     memory, so runs pack against each other instead of leaving short gaps.
//   - Aggregation: where subgroups exist, the lanes of a subgroup asking for at most
//     RWM_AGGREGATE_UNITS units each sum their requests (subgroupExclusiveAdd / subgroupAdd);
//     the lowest such lane reserves and claims one run for the sum and shares its start
//     (subgroupShuffle); each lane marks its own piece's end and start bits, so pieces are
//     freed one by one. Only lanes that called malloc take part (ballots of active lanes).
//     If the shared run fails, every lane falls back to its own walk. Unlike CoRW (where a
//     shared value is only a candidate), a lane here uses the leader's run without an atomic
//     of its own, so this relies on the lanes that took part in the ballot reading the
//     leader's values after it wrote them (they reconverge after the leader's branch). A tag
//     hashed from the start and the sum guards against reading unwritten registers, and a
//     lane that finds its start bit already set does not use the piece (HEAP_CONTENTION);
//     a stale but well-formed value from the leader's previous call is not detectable.
//   - Neighbours: the lanes of a subgroup asking for more than RWM_AGGREGATE_UNITS units
//     reserve their sum in one reservation (the lowest lane; shared and tagged as above)
//     and then claim their own runs, each first at its piece of one block of the sum's size
//     (all or nothing per lane, as every claim). Each lane that finds no run gives its own
//     units back, so the free count stays exact as long as every lane reads the leader's
//     ticket after it was written (the assumption above: a stale but well-formed ticket
//     would count units free that are not); if the sum cannot be reserved, each lane
//     reserves its own units.
//   - Free units fragmented into runs too short for a request: a reserved malloc whose
//     sweep reaches its end without a run it could claim returns HEAP_OUT_OF_MEMORY and
//     gives its reservation back. A claim lost in the sweep does not end it (the winner
//     took that memory; the sweep goes on after it), so a lost race is never a failure
//     (a cap on lost claims per sweep would fail mallocs with HEAP_CONTENTION in the round
//     that fills the heap).
//
// Loops, all bounded: a neighbour's block piece first (one check and one claim of one
// run's words), then RWM_RANDOM_STEPS random steps, each a grid slot (at most RWM_MAX_WORDS
// words, two of them) and a window of ceil(n / 32) + 1 words after a look back of at most
// ceil(n / 32) words; then a sweep of every committed word once from a random start (a lost
// claim resumes it at the word after the run's first word, or the next word, so it
// restarts fewer times than it has words); claims and releases visit at most RWM_MAX_WORDS
// words; free's search for the end bit reads at most RWM_MAX_WORDS words; run_in_word
// loops 6 times.

#include "walk.wgsl"
#include "bitmap_hooks.wgsl"
#ifdef GPU_HEAP_SUBGROUPS
#include "../core/subgroup.wgsl"
#endif

const RWM_USED: u32 = WALK_STATE;
const RWM_START: u32 = WALK_STATE + RWM_WORDS;
const RWM_END: u32 = WALK_STATE + 2u * RWM_WORDS;
const RWM_MAX_WORDS: u32 = RWM_MAX_UNITS / 32u + 2u;
const RWM_RANDOM_STEPS: u32 = 32u;
const RWM_AGGREGATE_UNITS: u32 = 8u;

// Bits lo .. lo + count - 1 (1 <= count, lo + count <= 32).
fn rwm_mask(lo: u32, count: u32) -> u32 {
    if (count >= 32u) {
        return 0xffffffffu;
    }
    return ((1u << count) - 1u) << lo;
}

// Clears used bits [start, start + n) (bits this invocation owns). Returns how many of them
// were set: what may be counted free again, a value that exists only once the clears are
// done (see the ordering invariant).
fn rwm_release(start: u32, n: u32) -> u32 {
    var u = start;
    var left = n;
    var released = 0u;
    for (var i = 0u; i < RWM_MAX_WORDS && left > 0u; i++) {
        let take = min(32u - (u & 31u), left);
        let mask = rwm_mask(u & 31u, take);
        released += countOneBits(atomicAnd(&heap_meta[RWM_USED + (u >> 5u)], ~mask) & mask);
        u += take;
        left -= take;
    }
    return released;
}

// Whether used bits [start, start + n) are all clear (a read-only check before a claim).
fn rwm_is_free(start: u32, n: u32) -> bool {
    var u = start;
    var left = n;
    for (var i = 0u; i < RWM_MAX_WORDS && left > 0u; i++) {
        let take = min(32u - (u & 31u), left);
        heap_walk_steps += 1u;
        if ((atomicLoad(&heap_meta[RWM_USED + (u >> 5u)]) & rwm_mask(u & 31u, take)) != 0u) {
            return false;
        }
        u += take;
        left -= take;
    }
    return left == 0u;
}

// Claims used bits [start, start + n): all of them, or none (see the invariants). A run
// longer than RWM_MAX_UNITS is never claimed.
fn rwm_claim(start: u32, n: u32) -> bool {
    var u = start;
    var left = n;
    for (var i = 0u; i < RWM_MAX_WORDS && left > 0u; i++) {
        let take = min(32u - (u & 31u), left);
        let mask = rwm_mask(u & 31u, take);
        let old = atomicOr(&heap_meta[RWM_USED + (u >> 5u)], mask);
        if ((old & mask) != 0u) {
            atomicAnd(&heap_meta[RWM_USED + (u >> 5u)], ~(mask & ~old));
            _ = rwm_release(start, u - start);
            return false;
        }
        u += take;
        left -= take;
    }
    if (left > 0u) {
        _ = rwm_release(start, u - start);
        return false;
    }
    return true;
}

// The lowest bit position where `free` has n (1..31) consecutive set bits, or WALK_NONE.
fn rwm_run_in_word(free: u32, n: u32) -> u32 {
    var m = free;
    var have = 1u;
    for (var i = 0u; i < 6u && have < n; i++) {
        let s = min(have, n - have);
        m &= m >> s;
        have += s;
    }
    return firstTrailingBit(m); // 0xffffffff (WALK_NONE) when m == 0
}

// Scans `count` words from w0 (wrapping) for a run of n free units inside one segment.
// Returns the run's first unit, or WALK_NONE.
// With `tight`, a window whose look back ran out inside a free stretch is given up: a run
// placed there would leave a gap behind it (random steps then rely on the grid slots).
// `words`: the committed words (rwm_live_words), where the scan wraps.
fn rwm_scan(w0: u32, count: u32, n: u32, tight: bool, words: u32) -> u32 {
    var run_start = 0u;
    var run_len = 0u;
    // If w0 starts inside a free stretch, look back to where the stretch begins (at most
    // the run's length, never into the previous segment), so that runs are placed right
    // after used memory: random starts inside free stretches would otherwise leave gaps
    // too short for anything.
    if ((atomicLoad(&heap_meta[RWM_USED + w0]) & 1u) == 0u && w0 % RWM_SEGMENT_WORDS != 0u) {
        var b = w0;
        var bounded = false;
        for (var k = 0u; k < (n + 31u) / 32u; k++) {
            b -= 1u;
            heap_walk_steps += 1u;
            let used = atomicLoad(&heap_meta[RWM_USED + b]);
            run_len += countLeadingZeros(used);
            if (used != 0u || b % RWM_SEGMENT_WORDS == 0u) {
                bounded = true;
                break;
            }
        }
        if (tight && !bounded) {
            return WALK_NONE;
        }
        run_start = (w0 << 5u) - run_len;
    }
    for (var i = 0u; i < count; i++) {
        var w = w0 + i;
        if (w >= words) {
            w -= words;
        }
        if (w % RWM_SEGMENT_WORDS == 0u && i > 0u) {
            run_len = 0u; // a new segment (word 0 too, so runs never wrap)
        }
        heap_walk_steps += 1u;
        let used = atomicLoad(&heap_meta[RWM_USED + w]);
        if (used == 0u) {
            if (run_len == 0u) {
                run_start = w << 5u;
            }
            run_len += 32u;
            if (run_len >= n) {
                return run_start;
            }
            continue;
        }
        if (run_len > 0u && run_len + firstTrailingBit(used) >= n) {
            return run_start;
        }
        if (n < 32u) {
            let p = rwm_run_in_word(~used, n);
            if (p != WALK_NONE) {
                return (w << 5u) + p;
            }
        }
        run_len = countLeadingZeros(used);
        run_start = (w << 5u) + 32u - run_len;
    }
    return WALK_NONE;
}

// The slot of the `size`-unit grid of the segment that holds unit r (below `units`, the
// committed units), and where that segment's committed units end: runs, or blocks of
// runs, of one size then tile a segment exactly.
struct RwmSlot {
    start: u32,
    end: u32,
}

fn rwm_grid_slot(r: u32, size: u32, units: u32) -> RwmSlot {
    let segment_units = RWM_SEGMENT_WORDS * 32u;
    let base = r - r % segment_units;
    return RwmSlot(base + ((r - base) / size) * size, min(base + segment_units, units));
}

// Finds and claims a run of n units (the caller holds a reservation of n). Returns its
// first unit, or WALK_NONE after a sweep that found no run it could claim (what is free is
// too fragmented, or was taken by others while it swept: out of memory).
fn rwm_walk(n: u32, seed: u32) -> u32 {
    var rng = heap_hash(seed) | 1u;
    let units = walk_live_items(RWM_UNITS, RWM_UNIT_SHIFT);
    let words = (units + 31u) >> 5u;
    let window = min((n + 31u) / 32u + 1u, words);
    for (var step = 0u; step < RWM_RANDOM_STEPS; step++) {
        rng = heap_rng_next(rng);
        // First the slot of the n-unit grid of the segment that holds a random unit: runs of
        // one size then tile a segment exactly (random placement without a grid jams well
        // short of a full heap, the discrete parking problem).
        let grid = rwm_grid_slot(rng % units, n, units);
        var slot = grid.start;
        for (var probe = 0u; probe < 2u; probe++) {
            if (slot + n <= grid.end && rwm_is_free(slot, n) && rwm_claim(slot, n)) {
                return slot;
            }
            slot += n; // the neighbouring slot
        }
        let s = rwm_scan((slot - 2u * n) >> 5u, window, n, true, words);
        if (s != WALK_NONE && rwm_claim(s, n)) {
            return s;
        }
    }
    var w = rng % words;
    var left = words;
    // Every restart shortens what is left of the sweep by at least one word.
    for (var restart = 0u; restart < words && left > 0u; restart++) {
        let s = rwm_scan(w, left, n, false, words);
        if (s == WALK_NONE) {
            return WALK_NONE;
        }
        if (rwm_claim(s, n)) {
            return s;
        }
        // Resume at the word after the run's first word. A run that the scan's look back
        // found (at most ceil(n / 32) words) starts before w, almost a lap ahead by this
        // count: then resume at the next word instead of ending the sweep.
        var d = (s >> 5u) + words - w;
        if (d >= words) {
            d -= words;
        }
        let behind = d + (n + 31u) / 32u >= words;
        let skip = select(min(d + 1u, left), 1u, behind);
        left -= skip;
        w += skip;
        if (w >= words) {
            w -= words;
        }
    }
    return WALK_NONE;
}

fn rwm_units_for(size_bytes: u32) -> u32 {
    return ((size_bytes - 1u) >> (RWM_UNIT_SHIFT + 4u)) + 1u;
}

fn rwm_alloc(start: u32, n: u32) -> HeapAlloc {
    return HeapAlloc(heap_handle_of(start << RWM_UNIT_SHIFT), n << RWM_UNIT_SHIFT, HEAP_OK);
}

// Marks a claimed run [start, start + n) as an allocation: end bit, then start bit.
// Returns false if the start bit was already set (see the aggregation invariant).
// On false, an end bit that this call set is cleared again: it would end another block.
fn rwm_mark(start: u32, n: u32) -> bool {
    let end = start + n - 1u;
    let end_bit = 1u << (end & 31u);
    let old_end = atomicOr(&heap_meta[RWM_END + (end >> 5u)], end_bit);
    let bit = 1u << (start & 31u);
    let old = atomicOr(&heap_meta[RWM_START + (start >> 5u)], bit);
    if ((old & bit) != 0u) {
        if ((old_end & end_bit) == 0u) {
            atomicAnd(&heap_meta[RWM_END + (end >> 5u)], ~end_bit);
        }
        return false;
    }
    return true;
}

// Places a run of n units for a lane that holds a reservation of n (`ticket`): first at
// `hint`, if that is not WALK_NONE and the run there is free, else by its own walk. The
// read-only check before the claim, as the walk's: a claim that fails has set bits of the
// run's first words for a moment, which a sweep passing them reads as used.
fn rwm_place(n: u32, ticket: u32, hint: u32) -> HeapAlloc {
    var s = WALK_NONE;
    if (hint != WALK_NONE && rwm_is_free(hint, n) && rwm_claim(hint, n)) {
        s = hint;
    } else {
        s = rwm_walk(n, ticket);
        walk_finish();
    }
    if (s == WALK_NONE) {
        walk_unreserve(n, ticket);
        return HeapAlloc(HEAP_NULL, 0u, HEAP_OUT_OF_MEMORY);
    }
    _ = rwm_mark(s, n);
    return rwm_alloc(s, n);
}

// One lane's own reservation and walk for n units.
fn rwm_malloc_lane(n: u32) -> HeapAlloc {
    let ticket = walk_reserve(n, RWM_UNITS);
    if (ticket == 0u) {
        return HeapAlloc(HEAP_NULL, 0u, HEAP_OUT_OF_MEMORY);
    }
    return rwm_place(n, ticket, WALK_NONE);
}

// Where the piece at `offset` of a block of `total` units starts: the block is the slot of
// the total-unit grid (rwm_grid_slot) at a unit picked by `seed`. WALK_NONE if the piece's
// n units would pass the segment's end or the committed units.
fn rwm_block_piece(seed: u32, total: u32, offset: u32, n: u32) -> u32 {
    let units = walk_live_items(RWM_UNITS, RWM_UNIT_SHIFT);
    let grid = rwm_grid_slot(heap_hash(seed) % units, total, units);
    let s = grid.start + offset;
    if (s + n > grid.end) {
        return WALK_NONE;
    }
    return s;
}

#ifdef GPU_HEAP_SUBGROUPS
// The leader lane's `value`, and whether its tag matches: the leader hashes its value with
// `total`, which every lane computed, so a lane that reads the leader's registers before
// the leader has written them (possible only if a backend does not reconverge the lanes
// after the leader's branch) sees a mismatch. A stale but well-formed value from the
// leader's previous call is not detectable.
struct RwmShared {
    value: u32,
    tagged: bool,
}

fn rwm_from_leader(value: u32, total: u32, leader: u32) -> RwmShared {
    let got = subgroupShuffle(value, leader);
    let tag = subgroupShuffle(heap_hash(value ^ total ^ 0x5bd1e995u), leader);
    return RwmShared(got, tag == heap_hash(got ^ total ^ 0x5bd1e995u));
}
#endif

fn strategy_malloc(size_bytes: u32) -> HeapAlloc {
    heap_walk_steps = 0u;
    let n = rwm_units_for(size_bytes);
#ifdef GPU_HEAP_SUBGROUPS
    let small = n <= RWM_AGGREGATE_UNITS;
    let small_mask = subgroupBallot(small);
    if (sg_count(small_mask) > 1u) {
        // Uniform among the lanes that called malloc: the ballot is the same for all.
        let want = select(0u, n, small);
        let offset = subgroupExclusiveAdd(want);
        let total = subgroupAdd(want);
        // A sum past the longest run a claim covers walks lane by lane (only with large
        // units: 32 lanes of RWM_AGGREGATE_UNITS units each).
        let leader = small && offset == 0u && total <= RWM_MAX_UNITS;
        var base = WALK_NONE;
        if (leader) {
            let ticket = walk_reserve(total, RWM_UNITS);
            if (ticket != 0u) {
                let s = rwm_walk(total, ticket);
                walk_finish();
                if (s != WALK_NONE) {
                    base = s;
                } else {
                    walk_unreserve(total, ticket);
                }
            }
        }
        // The leader's start; a lane whose tag does not match walks on its own instead.
        let run = rwm_from_leader(base, total, sg_first(small_mask));
        if (small && run.tagged && run.value < RWM_UNITS && offset + n <= total) {
            let got = run.value;
            if (rwm_mark(got + offset, n)) {
                return rwm_alloc(got + offset, n);
            }
            return HeapAlloc(HEAP_NULL, 0u, HEAP_CONTENTION);
        }
    }
    // Larger requests: the subgroup's larger lanes reserve together, and each first tries
    // its piece of one block (rwm_block_piece), so that their runs lie side by side and
    // their frees touch a few lines of the bitmaps instead of a line each. A lane whose
    // piece is taken walks on its own with its part of the reservation.
    let large = n > RWM_AGGREGATE_UNITS;
    let large_mask = subgroupBallot(large);
    if (sg_count(large_mask) > 1u) {
        let want = select(0u, n, large);
        let offset = subgroupExclusiveAdd(want);
        let total = subgroupAdd(want);
        var ticket = 0u;
        if (large && offset == 0u) {
            ticket = walk_reserve(total, RWM_UNITS);
        }
        // Without the reservation (too few units free for all of them, or a tag that does
        // not match), each lane reserves on its own below.
        let from_leader = rwm_from_leader(ticket, total, sg_first(large_mask));
        if (large && from_leader.tagged && from_leader.value != 0u) {
            let group_ticket = from_leader.value;
            return rwm_place(n, walk_ticket(group_ticket, offset),
                rwm_block_piece(group_ticket, total, offset, n));
        }
    }
#endif
    return rwm_malloc_lane(n);
}

fn strategy_free(ptr: u32) -> HeapFree {
    let u = walk_item_of(ptr, RWM_UNITS, RWM_UNIT_SHIFT);
    if (u == WALK_NONE) {
        return HeapFree(0u, HEAP_INVALID_FREE);
    }
    let bit = 1u << (u & 31u);
    let old = atomicAnd(&heap_meta[RWM_START + (u >> 5u)], ~bit);
    if ((old & bit) == 0u) {
        return HeapFree(0u, HEAP_INVALID_FREE);
    }
    var end = WALK_NONE;
    for (var i = 0u; i < RWM_MAX_WORDS; i++) {
        let w = (u >> 5u) + i;
        if (w >= RWM_WORDS) {
            break;
        }
        var ends = atomicLoad(&heap_meta[RWM_END + w]);
        if (i == 0u) {
            ends &= ~((1u << (u & 31u)) - 1u); // at or after u
        }
        if (ends != 0u) {
            end = (w << 5u) + firstTrailingBit(ends);
            break;
        }
    }
    if (end == WALK_NONE || end - u >= RWM_MAX_UNITS) {
        // Not a finished allocation (its end bit is not visible yet): leave it as it was.
        atomicOr(&heap_meta[RWM_START + (u >> 5u)], bit);
        return HeapFree(0u, HEAP_INVALID_FREE);
    }
    let end_bit = 1u << (end & 31u);
    if ((atomicAnd(&heap_meta[RWM_END + (end >> 5u)], ~end_bit) & end_bit) == 0u) {
        // Cleared by someone else since the search: only a free of an overlapping block can.
        return HeapFree(0u, HEAP_INVALID_FREE);
    }
    let released = rwm_release(u, end - u + 1u);
    walk_unreserve(released, u);
    return HeapFree(released << RWM_UNIT_SHIFT, HEAP_OK);
}

// Growth hooks (alloc.wgsl, walk.wgsl), on the used bitmap. Start and end bits of a range
// with no used bit are zero (free clears them first), so they need nothing.
fn strategy_grow(from_units: u32, to_units: u32) {
    walk_bitmap_grow(RWM_USED, from_units >> RWM_UNIT_SHIFT,
        min(to_units >> RWM_UNIT_SHIFT, RWM_UNITS));
}

// For the TAS tool: marks unit `u` used without a malloc.
fn walk_prefill(u: u32) {
    atomicOr(&heap_meta[RWM_USED + (u >> 5u)], 1u << (u & 31u));
}
