// The tree buddy allocator, TBuddy (Gelado & Garland, PPoPP 2019, section 4.1): blocks of
// 2^n leaves (TB_LEAF_UNITS 16-byte units each) for n up to TB_MAX_ORDER, on a static
// tree, with the paper's two-stage resource management: one bulk semaphore per order
// counts the available blocks of that order, and the available tree (available_tree.wgsl)
// says where they are.
//
// malloc of order n: reserve its leaves from the free count (none left: out of memory at
// once), then wait on the semaphore of n (a malloc of a user's block looks at the count
// before each take, so that a crowd of waiters does not hold up the signals). With a unit,
// find and claim an available node of order n. Told to produce a batch instead (none
// available or coming), or after waiting TB_PATIENCE rounds, take a block of a larger
// order the same way (the lowest of the next TB_BATCH_SHIFT orders with one available,
// else the last of them) and split it into blocks of n: keep one, publish the rest and
// signal them (the batch). Producing may climb several times; the batches are published on
// the way down. free of order n publishes the block at its order and signals its
// semaphore. Merging is on demand: a malloc that finds no block large enough although its
// leaves are reserved merges the available pairs of a region of leaves through every order
// (tb_sweep), region after region, before it reports out of memory; a malloc that waits
// after it swept sweeps a region in each round of its wait (the blocks it waits for come
// from merges); a trim merges its range first.
//
// Where this departs from the paper, and why:
//   - The paper's batch is the two halves of one split; ours is up to 2^TB_BATCH_SHIFT
//     blocks: with thousands of mallocs of one small order in flight, two blocks per
//     producer leave nearly all of them waiting on one semaphore word.
//   - The paper merges on free, climbing while the buddy is available. A program that
//     frees many blocks of one size and then allocates that size again (the common case
//     on a GPU: one kernel frees what the next one allocates) then pays twice: its frees
//     climb the tree through every order's semaphore, and its next mallocs split the
//     merged blocks again. Blocks stay at their order until a larger malloc needs them.
//   - Where subgroups exist, the lanes of a subgroup that hold units of one order claim
//     their user blocks (mark = true) in one word of the available tree with one atomic
//     (at_claim_together: the word from a descent steered by the subgroup's ticket, so
//     that subgroups spread over the words), and lanes freeing blocks whose allocated bits
//     share a word clear, publish and count them together (tb_free_together). A
//     subgroup's blocks then lie together, and its frees cost one atomic per word rather
//     than per lane; lanes left out of a joint claim or free do it alone.
//
// Provides tb_malloc(size_bytes, mark, merges, reserved), tb_merge_for(order, seed),
// tb_free(ptr), tb_init() and the growth hooks' work (tb_grow, tb_trim_check, tb_trim);
// tbuddy/strategy.wgsl makes them the tbuddy strategy, and UAlloc (ualloc/ualloc.wgsl)
// takes its bins and its large blocks from them. A block handed out with mark = false has
// no allocated bit, so no free reaches it as a live block: UAlloc's bins, which go back by
// at_publish and tb_count_given. With merges = false (a literal at UAlloc's call site) a
// malloc that would sweep returns NULL with TB_MERGE_WANTED instead, keeping its
// reservation of leaves for the caller's next call (reserved = true), and the compiler
// leaves the sweeps out of that call site; UAlloc merges with tb_merge_for between its
// passes, where its rounds hold no registers.
//
// State (heap_meta, layout in src/tbuddy.rs): TB_FREE, the free leaves not reserved by a
// malloc in flight (tb_reserve); TB_CLAIM_FAILURES, TB_WAIT_FAILURES and
// TB_MERGE_FAILURES, the mallocs that failed for contention by cause (a unit whose block
// was not found; the rounds ran out; the sweeps ran out with pairs left unmerged);
// per order its semaphore at tb_sem(n); the allocated bitmap (a bit per node, set while
// the node is a live allocation) and the available tree, both indexed as an implicit
// binary tree (at_index). A node is available, allocated, or neither (split, inside a
// larger block, or past the heap's end); the paper's "partial" is the tree's summaries.
//
// Invariants
//   - No two live blocks overlap: a block is handed out only by a claim that cleared its
//     available bit, or as the kept part of a block the splitter owns; the parts of a
//     split are disjoint, and a merged block is owned only after both halves were taken.
//   - Each order's semaphore count equals its available nodes once no call is in flight:
//     every publish is followed by a signal, every claim or merge is preceded by a take
//     (given back if the node is not there). A unit may be taken before its bit is
//     visible to the taker (atomics on different words are relaxed): the taker keeps the
//     unit and looks again in later rounds.
//   - free finds the block's order from the allocated bitmap: the one live node starting
//     at the handle's leaf (blocks are disjoint, so there is at most one). Clearing its bit
//     by atomicAnd decides between concurrent frees of one handle: the loser is an invalid
//     free and changes nothing.
//   - A merge takes both halves (semaphore unit, then bit) before it publishes the parent,
//     so a block is never both available and inside an available parent. Merges leave an
//     order alone while mallocs wait on it. A sweep or a trim merges only pairs whose parent
//     lies within its range of leaves, so it changes no block outside the range.
//   - Growth: blocks never cross a segment (TB_MAX_ORDER fits one), so the committed range
//     is covered by whole blocks (tb_cover); grow publishes those of the new range, trim
//     merges what is free in the released range, checks that it is available as exactly
//     those blocks, and takes them.
//
// Loops: malloc's loop makes at most TB_ROUNDS rounds (a semaphore step, sweeps, or a
// search for the block of a unit it holds), and TB_LAST_SCANS more while it holds one; a
// malloc sweeps at most two passes over the live leaves and one region more where it finds
// no block large enough, and as many regions again while it waits after that (tb_merge_for
// at most the two passes and one region); a sweep reads
// at most every word of its range in layers 1 and 0 of every order (tb_merge_pairs); the
// split and retire loops are bounded by the orders; tb_cover by its block count; at_claim
// by its descents and scanned words.

#include "../sync/bulk_semaphore.wgsl"
#include "available_tree.wgsl"

fn tb_sem(n: u32) -> u32 {
    return TB_SEM + 2u * n;
}

// Makes node v of order n available: its bit first, then its unit, so that a unit taken
// always has a bit behind it.
fn tb_give(n: u32, v: u32) {
    at_publish(n, v);
    bsem_signal(tb_sem(n), 1u, 0u);
}

fn tb_order_for(size_bytes: u32) -> u32 {
    let leaves = (heap_units_for(size_bytes) + TB_LEAF_UNITS - 1u) >> TB_LEAF_SHIFT;
    if (leaves <= 1u) {
        return 0u;
    }
    return 32u - countLeadingZeros(leaves - 1u);
}

// The word and bit of node v of order n in the allocated bitmap.
fn tb_alloc_bit(n: u32, v: u32) -> vec2<u32> {
    let i = at_index(n, v);
    return vec2<u32>(TB_ALLOC + (i >> 5u), 1u << (i & 31u));
}

const TB_NOT_RESERVED: u32 = 0xffffffffu;

// Reserves `leaves` of the free leaves before a malloc searches (exact exhaustion: a heap
// with fewer free leaves fails at once, with HEAP_OUT_OF_MEMORY). A counter transiently
// past the heap (other failed reservations being given back) also means "not enough".
// Returns the free count it reserved from (which differs between concurrent reservations,
// so it seeds the malloc's sweeps), or TB_NOT_RESERVED.
fn tb_reserve(leaves: u32) -> u32 {
    let old = atomicSub(&heap_meta[TB_FREE], leaves);
    if (old < leaves || old > TB_LEAVES) {
        tb_unreserve(leaves);
        return TB_NOT_RESERVED;
    }
    heap_note_free_items(old - leaves);
    return old;
}

// Gives back a reservation of `leaves` (tb_reserve) that no block took.
fn tb_unreserve(leaves: u32) {
    atomicAdd(&heap_meta[TB_FREE], leaves);
}

// Leaves before the committed end (all of them unless the heap can grow).
fn tb_live_leaves() -> u32 {
    return min(heap_committed_units() >> TB_LEAF_SHIFT, TB_LEAVES);
}

// Orders a batch spans: a malloc that finds no block of its order splits one of up to
// 2^12 times its size, publishing the other 4095 blocks for the waiters (see the header):
// with a million mallocs of one order, smaller batches leave thousands of producers, each
// a waiter on the order above, and a dispatch's time then hangs on how they interleave.
const TB_BATCH_SHIFT: u32 = 12u;

// A batch of order n is one block of a larger order, split into blocks of n: the producer
// keeps one and publishes the rest. The larger order is the lowest of the next
// TB_BATCH_SHIFT with a block available, else the last of them (tb_source); so the
// semaphore of n expects up to tb_batch(n) units per batch.
fn tb_batch(n: u32) -> u32 {
    return (1u << (min(n + TB_BATCH_SHIFT, TB_MAX_ORDER) - n)) - 1u;
}

fn tb_source(n: u32) -> u32 {
    let last = min(n + TB_BATCH_SHIFT, TB_MAX_ORDER);
    for (var k = n + 1u; k < last; k++) {
        if (bsem_count(tb_sem(k)) > 0) {
            return k;
        }
    }
    return last;
}

// Retires the batches registered at the orders of `path` (a bit per order): none of them
// will be produced.
fn tb_retire(path: u32) {
    var left = path;
    for (var i = 0u; i <= TB_MAX_ORDER && left != 0u; i++) {
        let k = firstTrailingBit(left);
        bsem_signal(tb_sem(k), 0u, 1u);
        left &= left - 1u;
    }
}

const TB_NO_ORDER: u32 = 0xffffffffu;

// Where a malloc that found the top empty waits instead: the lowest order in [want,
// TB_MAX_ORDER] with blocks available, else the highest with a batch in production besides
// one this call registered (in `path`); TB_NO_ORDER if there is none.
fn tb_order_in_supply(want: u32, path: u32) -> u32 {
    for (var k = want; k <= TB_MAX_ORDER; k++) {
        if (bsem_count(tb_sem(k)) > 0) {
            return k;
        }
    }
    for (var k = TB_MAX_ORDER; k > want; k--) {
        let own = (path >> (k - 1u)) & 1u;
        if ((atomicLoad(&heap_meta[tb_sem(k - 1u) + 1u]) >> BSEM_R_BITS) > own) {
            return k - 1u;
        }
    }
    return TB_NO_ORDER;
}

// Merges into their parents the buddy pairs of order n, both halves available, whose
// parents are nodes [p0, p1) of order n + 1. Reads only the words of layer 0 that layer 1
// says may hold available nodes (and repairs the summary bit of one found empty), from a
// start drawn from `seed`, so that sweepers of one range meet less. Returns the pairs it
// read available, merged or not: one it could not take is being merged by another sweep,
// or sits at an order that mallocs wait on, which merges leave alone (tb_take).
fn tb_merge_pairs(n: u32, p0: u32, p1: u32, seed: u32) -> u32 {
    let m = TB_TREE_SHIFT - n; // at least 1: n < TB_MAX_ORDER <= TB_TREE_SHIFT
    // Node v of order n is index 2^m + v (at_index), which can reach 2^32 in a tree of 2^31
    // leaves: positions are kept relative to the order's first word, `first`, where node v
    // is bit x = skew + v (skew is 2^m when the order's nodes share word 0, else 0).
    let first = (1u << m) >> 5u;
    let skew = (1u << m) & 31u;
    let x0 = skew + 2u * p0;
    let x1 = skew + 2u * p1; // the pairs are bits [x0, x1) from word `first` on
    let w0 = first + (x0 >> 5u);
    let w1 = first + ((x1 + 31u) >> 5u);
    let s0 = w0 >> 5u;
    let summaries = ((w1 + 31u) >> 5u) - s0; // their summary words in layer 1
    // Layer 1 summarises the order's words only where its range fills words (at_publish).
    let summarised = m >= 5u;
    let start = heap_hash(seed) % summaries; // (start + k) then never wraps around u32
    var seen = 0u;
    for (var k = 0u; k < summaries; k++) {
        let s = s0 + (start + k) % summaries;
        var words = heap_bits_in(s, w0, w1);
        if (summarised) {
            words &= atomicLoad(&heap_meta[sb_layer_base(AT_BITMAP, 1u) + s]);
        }
        for (var t = 0u; t < 32u && words != 0u; t++) {
            let w = s * 32u + firstTrailingBit(words);
            words &= words - 1u;
            let word = atomicLoad(&heap_meta[sb_layer_base(AT_BITMAP, 0u) + w]);
            if (word == 0u) {
                if (summarised) {
                    sb_repair(AT_BITMAP, 0u, w, sb_top(m));
                }
                continue;
            }
            // Both nodes of a pair available: bits 2i and 2i + 1 (x0 is even: skew is 0
            // or a power of two of at least 2, m being at least 1).
            let r = w - first;
            var pairs = word & (word >> 1u) & 0x55555555u & heap_bits_in(r, x0, x1);
            for (var u = 0u; u < 16u && pairs != 0u; u++) {
                let v = r * 32u + firstTrailingBit(pairs) - skew;
                pairs &= pairs - 1u;
                seen += 1u;
                if (!tb_take(n, v)) {
                    continue;
                }
                if (tb_take(n, v + 1u)) {
                    tb_give(n + 1u, v >> 1u);
                } else {
                    tb_give(n, v);
                }
            }
        }
    }
    return seen;
}

// Merges the available pairs of order n whose parents lie within leaves [a, b). Returns
// the pairs it read available (tb_merge_pairs).
fn tb_merge_within(n: u32, a: u32, b: u32, seed: u32) -> u32 {
    let p0 = (a + (2u << n) - 1u) >> (n + 1u);
    let p1 = b >> (n + 1u);
    if (p0 >= p1) {
        return 0u;
    }
    return tb_merge_pairs(n, p0, p1, seed ^ (n << 26u));
}

// Merges what is free in leaves [a, b) into whole blocks, order by order from 0 up; for
// the trim check, which runs with no malloc or free in flight.
fn tb_merge_leaves(a: u32, b: u32) {
    for (var n = 0u; n < TB_MAX_ORDER; n++) {
        tb_merge_within(n, a, b, 0u);
    }
}

// A sweep merges a region of 2^TB_SWEEP_SHIFT leaves (so that it reads at most about
// 2^(TB_SWEEP_SHIFT - 4) words of layer 1 and the words of layer 0 where nodes are
// available).
const TB_SWEEP_SHIFT: u32 = 17u;

// The sweep plan of a malloc of order `want`: it sweeps spans of max(2^want, a region)
// leaves, region by region, and after the last region of a span merges the span's orders
// above a region, so that a block of `want` forms in a span once its regions are swept.
// x: the span shift, y: regions per span, z: spans in the live leaves.
fn tb_sweep_plan(want: u32) -> vec3<u32> {
    let region = min(TB_SWEEP_SHIFT, TB_TREE_SHIFT);
    let span = max(want, region);
    let spans = ((tb_live_leaves() - 1u) >> span) + 1u;
    return vec3<u32>(span, 1u << (span - region), spans);
}

// Sweep `s` of a malloc (plan above): consecutive sweeps from the span that `seed` picks
// cover every live leaf once in plan.y * plan.z sweeps. Returns the pairs it read
// available.
fn tb_sweep(plan: vec3<u32>, seed: u32, s: u32) -> u32 {
    let region = plan.x - firstTrailingBit(plan.y);
    let span = (heap_hash(seed) % plan.z + s / plan.y) % plan.z;
    let step = s % plan.y;
    let start = span << plan.x;
    let a = start + (step << region);
    // Orders below a region merge within the region; after the span's last region, the
    // orders above it merge within the span.
    let top = select(region, plan.x, step + 1u == plan.y);
    var seen = 0u;
    for (var n = 0u; n < min(top, TB_MAX_ORDER); n++) {
        let low = n < region;
        let lo = select(start, a, low);
        let hi = select(start + (1u << plan.x), a + (1u << region), low);
        seen += tb_merge_within(n, lo, hi, seed);
    }
    return seen;
}

// Splits block `got` of order `level` down to `want`: at each order of the path, publishes
// all but the last block of the batch and keeps the last; returns the kept block.
fn tb_split_and_keep(want: u32, level: u32, got: u32, path_in: u32, mark: bool) -> HeapAlloc {
    var path = path_in;
    var node = got;
    var hi = level;
    for (var i = 0u; i <= TB_MAX_ORDER && path != 0u; i++) {
        let lo = firstLeadingBit(path);
        let count = 1u << (hi - lo);
        let first = node << (hi - lo);
        at_publish_run(lo, first, count - 1u);
        bsem_signal(tb_sem(lo), count - 1u, 1u);
        node = first + count - 1u;
        path &= ~(1u << lo);
        hi = lo;
    }
    if (mark) {
        let bit = tb_alloc_bit(want, node);
        atomicOr(&heap_meta[bit.x], bit.y);
    }
    let unit = (node << want) * TB_LEAF_UNITS;
    return HeapAlloc(heap_handle_of(unit), TB_LEAF_UNITS << want, HEAP_OK);
}

// What tb_malloc without merges returns in the units of a NULL where it would have merged;
// its reservation of leaves is then the caller's, to pass back (`reserved`) or give back
// (tb_unreserve).
const TB_MERGE_WANTED: u32 = 0xffffffffu;

// Merges region after region (tb_sweep) until a block of order `want` or larger is
// available, for a malloc without merges that found the heap in pieces: HEAP_OK then,
// HEAP_OUT_OF_MEMORY once a pass over every region and one more found no pair available,
// HEAP_CONTENTION once two passes and one more went by with pairs left. At most
// 2 * regions + 1 sweeps.
fn tb_merge_for(want: u32, seed: u32) -> u32 {
    let plan = tb_sweep_plan(want);
    let per_pass = plan.y * plan.z;
    var dry = 0u;
    var status = HEAP_CONTENTION;
    for (var k = 0u; k < 2u * per_pass + 1u && status == HEAP_CONTENTION; k++) {
        let pairs = tb_sweep(plan, seed, k);
        dry = select(0u, dry + 1u, pairs == 0u);
        if (tb_order_in_supply(want, 0u) != TB_NO_ORDER) {
            status = HEAP_OK;
        } else if (dry > per_pass) {
            status = HEAP_OUT_OF_MEMORY;
        }
    }
    return status;
}

// `reserved`: the caller holds the reservation of this malloc's leaves already (kept from
// an earlier call without merges that returned TB_MERGE_WANTED, which keeps it).
fn tb_malloc(size_bytes: u32, mark: bool, merges: bool, reserved: bool) -> HeapAlloc {
    // Rounds of one malloc, across all the orders it climbs. Generous: only mallocs that
    // wait behind thousands of others for the same order use many.
    const TB_ROUNDS = 32768u;
    // Descents per round while a malloc looks for its unit's block, and the words of layer
    // 0 it scans every 32nd round (available_tree.wgsl).
    const TB_CLAIM_DESCENTS = 4u;
    const TB_CLAIM_SCAN_WORDS = 256u;
    // Scans of the order's words (at most TB_LAST_SCAN_WORDS each, so that one malloc
    // cannot hold a dispatch for long) a malloc makes when its rounds ran out with a unit
    // (claimants racing for the bits it passes can make one scan miss).
    const TB_LAST_SCANS = 4u;
    const TB_LAST_SCAN_WORDS = 65536u;
    // Rounds a malloc waits for someone else's batch before it produces one itself: a
    // newcomer's fast path may take the units a waiter reserved, so a waiter could
    // otherwise wait as long as newcomers keep coming.
    const TB_PATIENCE = 32u;
    // Times a malloc that found the top empty goes back to wait on an order that has no
    // block, only batches registered by others, before it takes its leaves to be in pieces.
    const TB_BATCH_BACKS = 2u;
    let want = tb_order_for(size_bytes);
    var reserved_from = 0u;
    if (!reserved) {
        reserved_from = tb_reserve(1u << want);
    }
    if (reserved_from == TB_NOT_RESERVED) {
        return HeapAlloc(HEAP_NULL, 0u, HEAP_OUT_OF_MEMORY);
    }
    var level = want; // the order whose semaphore this call waits on
    var path = 0u; // the orders below `level` where this call registered a batch to produce
    var wait = bsem_new_wait();
    var status = HEAP_CONTENTION;
    var holding = false; // a unit of `level` is ours; its block is still to be found
    var sweeps = 0u; // regions tb_sweep merged, in all the rounds
    var dry = 0u; // the last sweeps in a row that found no pair available
    var merges_ran_out = false; // HEAP_CONTENTION after sweeping
    var wants_merge = false; // without merges: a merge was wanted
    var helped = 0u; // regions swept while waiting after sweeping (two passes and one more)
    var plan = vec3<u32>(0u); // tb_sweep_plan(want), once this malloc sweeps
    var per_pass = 0u; // the regions of a pass: plan.y * plan.z
    var batch_backs = 0u; // waits gone back to an order whose supply was batches alone
    let seed = heap_hash(bsem_ticket ^ size_bytes ^ heap_hash(reserved_from));
    // The loop ends at the end of a round (a block found, or out of memory), never by a
    // return or break from inside it: a lane that leaves the loop from inside can be left
    // unscheduled while the other lanes of its subgroup spin (docs/architecture.md, the
    // progress rule), so it splits, signals and retires its batches in a round that they
    // wait for.
    var found = false;
    var result = HeapAlloc(HEAP_NULL, 0u, HEAP_CONTENTION);
    // A user's block (marked) is wanted by one malloc per lane, so a whole dispatch can wait
    // on one order: its waits read the count before they take (bsem_step). UAlloc's bins
    // are wanted by a malloc per bin's worth of a subgroup that runs short (one per
    // subgroup where a bin holds 32 blocks or more), which the look only delays.
    let look_first = mark;
    // A call still holding a unit when its rounds run out makes TB_LAST_SCANS more, each
    // scanning all of the order's words (what the summaries hide), in this same loop: one
    // call site of at_claim and of tb_split_and_keep, which are large once inlined.
    for (var round = 0u;
         round < select(TB_ROUNDS, TB_ROUNDS + TB_LAST_SCANS, holding) && !found
             && !merges_ran_out && status == HEAP_CONTENTION;
         round++) {
        if (!holding) {
            var r = bsem_step(tb_sem(level), 1u, tb_batch(level), &wait, look_first);
            if (r == BSEM_PENDING && wait.waited >= TB_PATIENCE) {
                bsem_abandon(tb_sem(level), 1u, &wait);
                if (level > want && bsem_count(tb_sem(want)) > 0) {
                    // Others' batches arrived where this call started: take one of those
                    // instead of producing its own.
                    tb_retire(path);
                    path = 0u;
                    level = want;
                    wait = bsem_new_wait();
                    continue;
                }
                if (bsem_help(tb_sem(level))) {
                    r = BSEM_ALLOCATE;
                }
            }
            // Sweeps of this round (one call site of tb_sweep, which is large once inlined):
            // `helping` one region while this malloc waits, `until_supply` while it finds no
            // block large enough.
            var helping = false;
            var until_supply = false;
            if (r == BSEM_PENDING) {
                // A malloc that already found the heap in pieces waits for blocks that come
                // from merges: a region swept per round of its wait helps them along, and
                // keeps its rounds from running out while the sweepers work (a round that
                // only looks costs a few loads).
                helping = merges && sweeps > 0u && helped <= 2u * per_pass;
                if (!helping) {
                    continue;
                }
            }
            if (r == BSEM_ALLOCATE) {
                // A batch of `level` is ours to produce, from a block of a larger order.
                if (level < TB_MAX_ORDER) {
                    path |= 1u << level;
                    level = tb_source(level);
                    wait = bsem_new_wait();
                    continue;
                }
                // Nothing larger to split. The leaves are reserved, so blocks of the orders
                // in between are there or being split by others: wait at the highest such
                // order, retiring the batches registered from there up. Out of memory only
                // if none is.
                bsem_signal(tb_sem(level), 0u, 1u);
                let back = tb_order_in_supply(want, path);
                // A batch registered is supply only while its producer has a block to
                // split. Mallocs that all found the top empty register batches on their
                // way up and come back to wait on each other's, which none of them makes,
                // until their rounds run out; a producer with a block makes its batch in
                // the round it gets the block, so two such waits are enough to tell.
                let only_batches = back != TB_NO_ORDER && bsem_count(tb_sem(back)) <= 0;
                if (back != TB_NO_ORDER && (!only_batches || batch_backs < TB_BATCH_BACKS)) {
                    batch_backs += u32(only_batches);
                    let kept = path & ((1u << back) - 1u);
                    tb_retire(path & ~kept);
                    path = kept;
                    level = back;
                    wait = bsem_new_wait();
                    continue;
                }
                // The reserved leaves are all in blocks smaller than this one: merge region
                // after region (tb_sweep) until a block of `want` or larger is available,
                // then start over from `want`. The sweeps run inside this round, so that
                // waits between them do not spend the rounds. Out of memory once a pass
                // over every region and one more found no pair available (the one more:
                // mallocs sweeping at the same time merge what this one needs, and publish
                // it by the time it looks again); contention once two passes and one more
                // went by with pairs left (taken by other sweeps, or at orders that mallocs
                // wait on).
                tb_retire(path);
                path = 0u;
                if (!merges) {
                    status = HEAP_OUT_OF_MEMORY;
                    wants_merge = true;
                    continue;
                }
                if (sweeps == 0u) {
                    plan = tb_sweep_plan(want);
                    per_pass = plan.y * plan.z;
                }
                until_supply = true;
            }
            if (helping || until_supply) {
                var supply = false;
                let limit = select(1u, 2u * per_pass + 1u, until_supply);
                for (var k = 0u;
                     k < limit && !supply && !merges_ran_out && status == HEAP_CONTENTION;
                     k++) {
                    let s = select(sweeps, helped, helping);
                    let pairs = tb_sweep(plan, select(seed, ~seed, helping), s);
                    if (helping) {
                        helped += 1u;
                        continue;
                    }
                    sweeps += 1u;
                    dry = select(0u, dry + 1u, pairs == 0u);
                    if (dry > per_pass) {
                        status = HEAP_OUT_OF_MEMORY;
                    } else if (sweeps > 2u * per_pass) {
                        merges_ran_out = true;
                    } else {
                        supply = tb_order_in_supply(want, 0u) != TB_NO_ORDER;
                    }
                }
                if (until_supply) {
                    level = want;
                    wait = bsem_new_wait();
                }
                continue;
            }
            holding = true;
        }
        // The unit's block: its bit may not be visible yet (the publisher's atomics on other
        // words are relaxed), so look again in the next rounds rather than give up, with a
        // scan of some words now and then for what the summaries hide.
        var scan = select(0u, TB_CLAIM_SCAN_WORDS, (round & 31u) == 31u);
        if (round >= TB_ROUNDS) {
            scan = TB_LAST_SCAN_WORDS;
        }
        var got = AT_NONE;
#ifdef GPU_HEAP_SUBGROUPS
        if (mark) {
            got = at_claim_together(level, bsem_ticket + round);
        }
#endif
        if (got == AT_NONE) {
            got = at_claim(level, bsem_ticket + round, TB_CLAIM_DESCENTS, scan);
        }
        if (got != AT_NONE) {
            // Split inside the loop, so that lanes of this subgroup waiting for the batches
            // see them in their next round.
            result = tb_split_and_keep(want, level, got, path, mark);
            found = true;
        }
    }
    if (found) {
        return result;
    }
    if (holding) {
        // Out of rounds and last scans with a unit: it goes back.
        bsem_signal(tb_sem(level), 1u, 0u);
        atomicAdd(&heap_meta[TB_CLAIM_FAILURES], 1u);
    } else if (merges_ran_out) {
        atomicAdd(&heap_meta[TB_MERGE_FAILURES], 1u);
    } else if (status == HEAP_CONTENTION) {
        atomicAdd(&heap_meta[TB_WAIT_FAILURES], 1u);
    }
    bsem_abandon(tb_sem(level), 1u, &wait);
    tb_retire(path);
    // A merge wanted keeps the reservation for the caller's next call: given back, it could
    // go to a malloc that cuts up the very blocks the merge is to join.
    if (!wants_merge) {
        tb_unreserve(1u << want);
    }
    return HeapAlloc(HEAP_NULL, select(0u, TB_MERGE_WANTED, wants_merge), status);
}

fn tb_free(ptr: u32) -> HeapFree {
    let unit = heap_unit_of(ptr);
    let leaf = unit >> TB_LEAF_SHIFT;
    if ((unit & (TB_LEAF_UNITS - 1u)) != 0u || leaf >= tb_live_leaves()) {
        return HeapFree(0u, HEAP_INVALID_FREE);
    }
    // The order of the live block that starts at `leaf`: its bit in the allocated bitmaps.
    var order = TB_NO_ORDER;
    for (var n = 0u; n <= TB_MAX_ORDER; n++) {
        if ((leaf & ((1u << n) - 1u)) != 0u || (leaf >> n) >= (TB_LEAVES >> n)) {
            break; // no block of order n or above starts here
        }
        let bit = tb_alloc_bit(n, leaf >> n);
        if ((atomicLoad(&heap_meta[bit.x]) & bit.y) != 0u) {
            order = n;
            break;
        }
    }
#ifdef GPU_HEAP_SUBGROUPS
    if (tb_free_together(order, leaf)) {
        return HeapFree(TB_LEAF_UNITS << order, HEAP_OK);
    }
#endif
    if (order != TB_NO_ORDER) {
        // Clearing the bit decides between concurrent frees of one handle: the loser's old
        // value lacks it.
        let bit = tb_alloc_bit(order, leaf >> order);
        if ((atomicAnd(&heap_meta[bit.x], ~bit.y) & bit.y) != 0u) {
            tb_give_back(order, leaf >> order);
            return HeapFree(TB_LEAF_UNITS << order, HEAP_OK);
        }
    }
    return HeapFree(0u, HEAP_INVALID_FREE);
}

#ifdef GPU_HEAP_SUBGROUPS
// The lanes of a subgroup freeing blocks of the first one's order whose allocated bits
// share its word (malloc places a subgroup's blocks together: at_claim_together) free them
// together: one atomicAnd on the allocated word, each lane reading its own bit in the old
// value, one atomicOr publishing those that were live (their available bits share a word
// too: the same indices), and one count. Returns whether this lane's free is done; false
// for the others, and for all if two lanes free one block (each must see a double free
// alone), which then free alone.
fn tb_free_together(order: u32, leaf: u32) -> bool {
    let first = subgroupExclusiveAdd(1u) == 0u;
    let v = leaf >> min(order, 31u);
    let i = at_index(order, v);
    let same = order != TB_NO_ORDER && order == subgroupBroadcastFirst(order)
        && (i >> 5u) == subgroupBroadcastFirst(i >> 5u);
    let bit = select(0u, 1u << (i & 31u), same);
    let joint = subgroupOr(bit);
    let together = subgroupBroadcastFirst(u32(same)) != 0u
        && countOneBits(joint) == subgroupAdd(u32(same));
    if (!together) {
        return false;
    }
    var old = 0u;
    if (first) {
        old = atomicAnd(&heap_meta[TB_ALLOC + (i >> 5u)], ~joint);
    }
    old = subgroupBroadcastFirst(old);
    let live = subgroupOr(bit & old);
    if (first && live != 0u) {
        sb_set_joining_bits(AT_BITMAP, i >> 5u, live, sb_top(TB_TREE_SHIFT - order));
        tb_count_given(order, countOneBits(live));
    }
    return same && (bit & old) != 0u;
}
#endif

// Gives back block v of order n, no longer handed out: published at its order, without
// merging, and its leaves counted free. For tb_free; UAlloc gives its bins (blocks that
// tb_malloc handed out unmarked, which it tracks itself) back in the same two steps, the
// count for many bins at once.
fn tb_give_back(n: u32, v: u32) {
    at_publish_freed(n, v);
    tb_count_given(n, 1u);
}

// Counts `k` blocks of order n that were published (at_publish) as given back: their
// semaphore units and their leaves. One call for many blocks is one atomic on each of the
// two words every give-back touches (UAlloc's collective release).
fn tb_count_given(n: u32, k: u32) {
    bsem_signal(tb_sem(n), k, 0u);
    atomicAdd(&heap_meta[TB_FREE], k << n);
}

// Takes node v of order n for a merge if it is available (semaphore unit first, then its
// bit), unless mallocs wait on that order or a batch for them is in production: the unit
// is then theirs, and merging it away would only make someone split again. Callers look
// at v's bit first (a load of a word few others touch), so that a free whose buddy is in
// use does not touch the order's semaphore words, which every malloc of the order does.
fn tb_take(n: u32, v: u32) -> bool {
    if (atomicLoad(&heap_meta[tb_sem(n) + 1u]) != 0u || !bsem_try_take(tb_sem(n), 1u)) {
        return false;
    }
    if (at_try_take(n, v)) {
        return true;
    }
    bsem_signal(tb_sem(n), 1u, 0u);
    return false;
}

// Calls `publish` (true) or checks/takes (false) the blocks that cover leaves [a, b):
// whole blocks of the largest order the alignment of a and the length allow.
// Returns false if a check found a block not available.
fn tb_cover(a: u32, b: u32, mode: u32) -> bool {
    var at = a;
    // Blocks: at most TB_MAX_ORDER + 1 below the first top-order boundary, the top-order
    // ones, and at most TB_MAX_ORDER + 1 after them.
    let bound = 2u * (TB_MAX_ORDER + 1u) + ((b - a) >> TB_MAX_ORDER);
    for (var k = 0u; k < bound && at < b; k++) {
        var n = TB_MAX_ORDER;
        if (at != 0u) {
            n = min(n, countTrailingZeros(at));
        }
        n = min(n, 31u - countLeadingZeros(b - at));
        let v = at >> n;
        if (mode == TB_COVER_PUBLISH) {
            tb_give(n, v);
        } else if (mode == TB_COVER_CHECK) {
            if (!at_is_set(n, v)) {
                return false;
            }
        } else {
            at_try_take(n, v);
            atomicSub(&heap_meta[tb_sem(n)], 1u);
        }
        at += 1u << n;
    }
    return true;
}

const TB_COVER_PUBLISH: u32 = 0u;
const TB_COVER_CHECK: u32 = 1u;
const TB_COVER_TAKE: u32 = 2u;

fn tb_init() {
    let leaves = tb_live_leaves();
    tb_cover(0u, leaves, TB_COVER_PUBLISH);
    atomicAdd(&heap_meta[TB_FREE], leaves);
}

// The growth hooks' work (alloc.wgsl): segment-aligned ranges, covered by whole blocks.
fn tb_grow(from_units: u32, to_units: u32) {
    let a = from_units >> TB_LEAF_SHIFT;
    let b = min(to_units >> TB_LEAF_SHIFT, TB_LEAVES);
    tb_cover(a, b, TB_COVER_PUBLISH);
    atomicAdd(&heap_meta[TB_FREE], b - a);
}

// Merges what is free in the range first: blocks that came back in pieces would otherwise
// keep a free range from being trimmed.
fn tb_trim_check(from_units: u32, to_units: u32) -> bool {
    let a = to_units >> TB_LEAF_SHIFT;
    let b = min(from_units >> TB_LEAF_SHIFT, TB_LEAVES);
    tb_merge_leaves(a, b);
    return tb_cover(a, b, TB_COVER_CHECK);
}

fn tb_trim(from_units: u32, to_units: u32) {
    let a = to_units >> TB_LEAF_SHIFT;
    let b = min(from_units >> TB_LEAF_SHIFT, TB_LEAVES);
    tb_cover(a, b, TB_COVER_TAKE);
    atomicSub(&heap_meta[TB_FREE], b - a);
}
