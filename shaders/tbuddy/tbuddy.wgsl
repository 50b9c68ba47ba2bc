// The tree buddy allocator, TBuddy (Gelado & Garland, PPoPP 2019, section 4.1): blocks of
// 2^n leaves (TB_LEAF_UNITS 16-byte units each) for n up to TB_MAX_ORDER, on a static
// tree, with the paper's two-stage resource management: one bulk semaphore per order
// (batch size two) counts the available blocks of that order, and the available trees
// (available_tree.wgsl) say where they are.
//
// malloc of order n: reserve its leaves from the free count (none left: out of memory at
// once), then wait on the semaphore of n. With a unit, claim an available node of order n.
// Told to produce a batch instead (no block of order n is available or coming), or after
// waiting TB_PATIENCE rounds, take a block of order n + 1 the same way and split it: one half is published as
// available and signalled (the batch), the other is ours. Producing may climb several
// orders; the halves are published on the way down. free of order n: merge with the
// buddy while it is available (a try-take of the order's semaphore, then the buddy's bit),
// climbing an order each time; then publish the block and signal its semaphore.
//
// State (heap_meta, layout in src/tbuddy.rs): TB_FREE, the free leaves not reserved by a
// malloc in flight (tb_reserve); per order its semaphore at tb_sem(n); the allocated
// bitmap (a bit per node, set while the node is a live allocation) and the available tree,
// both indexed as an implicit binary tree (at_index).
// A node is available, allocated, or neither (split, inside a larger block, or past the
// heap's end); the paper's "partial" is the available trees' summaries.
//
// Invariants
//   - No two live blocks overlap: a block is handed out only by a claim that cleared its
//     available bit, or as the kept half of a block the splitter owns; halves of a split
//     are disjoint, and a merged block is owned only after both halves were taken.
//   - Each order's semaphore count equals its available nodes once no call is in flight:
//     every publish is followed by a signal of one unit, every claim or merge is preceded
//     by a take of one (given back if the node is not there).
//   - free finds the block's order from the allocated bitmaps: the one live node starting
//     at the handle's leaf (blocks are disjoint, so there is at most one). Clearing its bit
//     by atomicAnd decides between concurrent frees of one handle: the loser is an invalid
//     free and changes nothing.
//   - Merging is attempted before publishing and once after it (the buddy may have been
//     published in between by its own free). Atomics are relaxed, so two buddies freed at
//     once may both stay published unmerged: both remain allocatable, and the next free
//     beside them merges them; nothing is lost.
//   - Growth: blocks never cross a segment (TB_MAX_ORDER fits one), so the committed range
//     is covered by whole blocks (tb_cover); grow publishes those of the new range, trim
//     checks that the released range is available as exactly those blocks and takes them.
//
// Loops: malloc's loop makes at most TB_ROUNDS semaphore steps; the split and free's merge
// loops are bounded by the orders; tb_cover by its block count; at_claim by its rounds and
// a scan of one order's layer 0.

#include "../sync/bulk_semaphore.wgsl"
#include "available_tree.wgsl"

// Semaphore steps of one malloc, across all the orders it climbs.
const TB_ROUNDS: u32 = 256u;
// Rounds a malloc waits for someone else's split before it splits a larger block itself.
// A split yields one unit for waiters, which a newcomer's fast path may take first, so a
// waiter could otherwise wait as long as newcomers keep coming.
const TB_PATIENCE: u32 = 16u;

fn tb_sem(n: u32) -> u32 {
    return TB_SEM + 2u * n;
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

// Reserves `leaves` of the free leaves before a malloc searches (exact exhaustion: a heap
// with fewer free leaves fails at once, with HEAP_OUT_OF_MEMORY). A counter transiently
// past the heap (other failed reservations being given back) also means "not enough".
fn tb_reserve(leaves: u32) -> bool {
    let old = atomicSub(&heap_meta[TB_FREE], leaves);
    if (old < leaves || old > TB_LEAVES) {
        atomicAdd(&heap_meta[TB_FREE], leaves);
        return false;
    }
    heap_note_free_items(old - leaves);
    return true;
}

// Leaves before the committed end (all of them unless the heap can grow).
fn tb_live_leaves() -> u32 {
    return min(heap_committed_units() >> TB_LEAF_SHIFT, TB_LEAVES);
}

fn strategy_malloc(size_bytes: u32) -> HeapAlloc {
    let want = tb_order_for(size_bytes);
    if (!tb_reserve(1u << want)) {
        return HeapAlloc(HEAP_NULL, 0u, HEAP_OUT_OF_MEMORY);
    }
    var level = want; // the order whose semaphore this call waits on
    var wait = bsem_new_wait();
    var status = HEAP_CONTENTION;
    for (var round = 0u; round < TB_ROUNDS; round++) {
        // One unit per batch for the waiters: of the batch's two blocks, the producer
        // keeps one.
        var r = bsem_step(tb_sem(level), 1u, 1u, &wait);
        if (r == BSEM_PENDING && wait.waited >= TB_PATIENCE) {
            bsem_abandon(tb_sem(level), 1u, &wait);
            if (bsem_help(tb_sem(level))) {
                r = BSEM_ALLOCATE;
            }
        }
        if (r == BSEM_PENDING) {
            continue;
        }
        if (r == BSEM_ALLOCATE) {
            // A batch of `level` is ours to produce: from a block of level + 1.
            if (level == TB_MAX_ORDER) {
                bsem_signal(tb_sem(level), 0u, 1u); // nothing larger to split
                status = HEAP_OUT_OF_MEMORY;
                break;
            }
            level += 1u;
            wait = bsem_new_wait();
            continue;
        }
        let got = at_claim(level, bsem_ticket);
        if (got == AT_NONE) {
            bsem_signal(tb_sem(level), 1u, 0u); // the unit goes back; give up (contention)
            break;
        }
        // Split down to `want` inside the loop, so that lanes of this subgroup waiting for
        // the halves see them in their next round: each lower half is the batch of its
        // order, each upper half is split further or kept.
        var node = got;
        for (var k = level; k > want; k--) {
            at_publish(k - 1u, 2u * node);
            bsem_signal(tb_sem(k - 1u), 1u, 1u);
            node = 2u * node + 1u;
        }
        let bit = tb_alloc_bit(want, node);
        atomicOr(&heap_meta[bit.x], bit.y);
        let unit = (node << want) * TB_LEAF_UNITS;
        return HeapAlloc(heap_handle_of(unit), TB_LEAF_UNITS << want, HEAP_OK);
    }
    bsem_abandon(tb_sem(level), 1u, &wait);
    // Retire the batches registered on the way up: none of them will be produced.
    for (var k = want; k < level; k++) {
        bsem_signal(tb_sem(k), 0u, 1u);
    }
    atomicAdd(&heap_meta[TB_FREE], 1u << want);
    return HeapAlloc(HEAP_NULL, 0u, status);
}

fn strategy_free(ptr: u32) -> HeapFree {
    let unit = heap_unit_of(ptr);
    let leaf = unit >> TB_LEAF_SHIFT;
    if ((unit & (TB_LEAF_UNITS - 1u)) != 0u || leaf >= tb_live_leaves()) {
        return HeapFree(0u, HEAP_INVALID_FREE);
    }
    // The order of the live block that starts at `leaf`: its bit in the allocated bitmaps.
    for (var n = 0u; n <= TB_MAX_ORDER; n++) {
        if ((leaf & ((1u << n) - 1u)) != 0u || (leaf >> n) >= (TB_LEAVES >> n)) {
            break; // no block of order n or above starts here
        }
        let bit = tb_alloc_bit(n, leaf >> n);
        if ((atomicLoad(&heap_meta[bit.x]) & bit.y) != 0u) {
            let old = atomicAnd(&heap_meta[bit.x], ~bit.y);
            if ((old & bit.y) == 0u) {
                break; // a concurrent free of the same handle won
            }
            tb_release(n, leaf >> n);
            atomicAdd(&heap_meta[TB_FREE], 1u << n);
            return HeapFree(TB_LEAF_UNITS << n, HEAP_OK);
        }
    }
    return HeapFree(0u, HEAP_INVALID_FREE);
}

// Whether node v of order n has a buddy that can merge with it.
fn tb_has_buddy(n: u32, v: u32) -> bool {
    return n < TB_MAX_ORDER && (v ^ 1u) < (TB_LEAVES >> n);
}

// Takes v's buddy if it is available (semaphore unit first, then its bit).
fn tb_take(n: u32, v: u32) -> bool {
    if (!bsem_try_take(tb_sem(n), 1u)) {
        return false;
    }
    if (at_try_take(n, v)) {
        return true;
    }
    bsem_signal(tb_sem(n), 1u, 0u);
    return false;
}

// Returns the owned block v of order n: merged with available buddies, then published.
fn tb_release(order: u32, node: u32) {
    var n = order;
    var v = node;
    // Each pass climbs an order, or publishes and then either ends or takes v back once
    // to merge it with a buddy published meanwhile; the last pass only publishes.
    let rounds = 2u * (TB_MAX_ORDER + 1u);
    for (var round = 0u; round < rounds; round++) {
        if (tb_has_buddy(n, v) && tb_take(n, v ^ 1u)) {
            v >>= 1u;
            n += 1u;
            continue;
        }
        at_publish(n, v);
        bsem_signal(tb_sem(n), 1u, 0u);
        if (round + 1u < rounds && tb_has_buddy(n, v) && at_is_set(n, v ^ 1u) && tb_take(n, v)) {
            continue; // v is ours again: the next pass merges it, or publishes it again
        }
        return;
    }
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
            at_publish(n, v);
            bsem_signal(tb_sem(n), 1u, 0u);
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

fn strategy_init(i: u32) {
    let leaves = tb_live_leaves();
    tb_cover(0u, leaves, TB_COVER_PUBLISH);
    atomicAdd(&heap_meta[TB_FREE], leaves);
}

// Growth hooks (alloc.wgsl): segment-aligned ranges, covered by whole blocks.
fn strategy_grow(from_units: u32, to_units: u32) {
    let a = from_units >> TB_LEAF_SHIFT;
    let b = min(to_units >> TB_LEAF_SHIFT, TB_LEAVES);
    tb_cover(a, b, TB_COVER_PUBLISH);
    atomicAdd(&heap_meta[TB_FREE], b - a);
}

fn strategy_trim_check(i: u32, from_units: u32, to_units: u32) -> bool {
    return tb_cover(to_units >> TB_LEAF_SHIFT, min(from_units >> TB_LEAF_SHIFT, TB_LEAVES), TB_COVER_CHECK);
}

fn strategy_trim(from_units: u32, to_units: u32) {
    let a = to_units >> TB_LEAF_SHIFT;
    let b = min(from_units >> TB_LEAF_SHIFT, TB_LEAVES);
    tb_cover(a, b, TB_COVER_TAKE);
    atomicSub(&heap_meta[TB_FREE], b - a);
}
