// RW: the basic random walk (Pham & Tu, section 3, Algorithm 1), with a count of free pages
// added for the progress rule (walk.wgsl).
//
// State: one u32 flag per page at heap_meta[RW_FLAGS + page]: 0 free, 1 in use.
// The heap is RWBM_PAGES pages of RWBM_PAGE_UNITS units (a power of two, so no page
// crosses a segment boundary); a malloc of up to one page takes one page.
// Each step reads the flag of a uniformly random page and, if it is free, claims it with
// one atomicExchange; the expected number of steps is the paper's equation (2).
//
// Invariants
//   - zero flags = the free count + reservations not yet turned into a page (as for RW-BM).
//   - A page is claimed by the exchange that turns its flag from 0 to 1: one winner.
//   - free's exchange to 0 returns the old flag; 0 means the page was not in use: that is
//     HEAP_INVALID_FREE, and the exchange changed nothing.
//
// Growth: walks, sweeps and free cover the committed pages only (walk.wgsl).
//
// Loops, all bounded: the trim check reads 32 flags; RW_RANDOM_STEPS random flags (enough for the
// paper's 0.5 %-free scenario, where a step succeeds with probability 1/200); then one sweep of
// every flag from a random start. A reserved malloc that finds nothing (frees and claims racing
// past its sweep) returns its reservation and fails with HEAP_CONTENTION.

#include "walk.wgsl"

const RW_FLAGS: u32 = WALK_STATE;
const RW_RANDOM_STEPS: u32 = 4096u;

// The flag is read first, so that steps on used pages (most of them in a full heap) cost a
// load, not a read-modify-write.
fn rw_try(page: u32) -> bool {
    heap_walk_steps += 1u;
    return atomicLoad(&heap_meta[RW_FLAGS + page]) == 0u
        && atomicExchange(&heap_meta[RW_FLAGS + page], 1u) == 0u;
}

fn rw_handle(page: u32) -> HeapAlloc {
    return HeapAlloc(heap_handle_of(page << RWBM_PAGE_SHIFT), RWBM_PAGE_UNITS, HEAP_OK);
}

fn strategy_malloc(size_bytes: u32) -> HeapAlloc {
    heap_walk_steps = 0u;
    let ticket = walk_reserve_one(RWBM_PAGES);
    if (ticket == 0u) {
        return HeapAlloc(HEAP_NULL, 0u, HEAP_OUT_OF_MEMORY);
    }
    let pages = walk_live_items(RWBM_PAGES, RWBM_PAGE_SHIFT);
    var rng = heap_hash(ticket) | 1u;
    for (var step = 0u; step < RW_RANDOM_STEPS; step++) {
        rng = heap_rng_next(rng);
        // xorshift's low bits are as good as its high ones; the hash spreads small heaps.
        let page = heap_hash(rng) % pages;
        if (rw_try(page)) {
            walk_finish();
            return rw_handle(page);
        }
    }
    let start = rng % pages;
    for (var i = 0u; i < pages; i++) {
        var page = start + i;
        if (page >= pages) {
            page -= pages;
        }
        if (rw_try(page)) {
            walk_finish();
            return rw_handle(page);
        }
    }
    walk_finish();
    walk_unreserve(1u, ticket);
    return HeapAlloc(HEAP_NULL, 0u, HEAP_CONTENTION);
}

fn strategy_free(ptr: u32) -> HeapFree {
    let page = walk_item_of(ptr, RWBM_PAGES, RWBM_PAGE_SHIFT);
    if (page == WALK_NONE) {
        return HeapFree(0u, HEAP_INVALID_FREE);
    }
    if (atomicExchange(&heap_meta[RW_FLAGS + page], 0u) == 0u) {
        return HeapFree(0u, HEAP_INVALID_FREE);
    }
    walk_unreserve(1u, page);
    return HeapFree(RWBM_PAGE_UNITS, HEAP_OK);
}

// The host zeroes heap_meta (all flags free); one invocation sets the counter (committed
// pages only, for a heap that can grow).
fn strategy_init(i: u32) {
    walk_free_set(walk_live_items(RWBM_PAGES, RWBM_PAGE_SHIFT));
}

// Growth hooks (alloc.wgsl). Flags past the committed pages are zero and never visited
// (walks and free are bounded by the committed count), so growth only moves the counter.
fn strategy_grow(from_units: u32, to_units: u32) {
    let to = min(to_units >> RWBM_PAGE_SHIFT, RWBM_PAGES);
    walk_free_add(to - (from_units >> RWBM_PAGE_SHIFT));
}

// Invocation i checks the flags of 32 pages (the host plans one per 32).
fn strategy_trim_check(i: u32, from_units: u32, to_units: u32) -> bool {
    let old_end = min(from_units >> RWBM_PAGE_SHIFT, RWBM_PAGES);
    let to = to_units >> RWBM_PAGE_SHIFT;
    let base = ((to >> 5u) + i) << 5u;
    var free = true;
    for (var k = 0u; k < 32u; k++) {
        let page = base + k;
        if (page >= to && page < old_end && atomicLoad(&heap_meta[RW_FLAGS + page]) != 0u) {
            free = false;
        }
    }
    return free;
}

fn strategy_trim(from_units: u32, to_units: u32) {
    let old_end = min(from_units >> RWBM_PAGE_SHIFT, RWBM_PAGES);
    walk_free_remove(old_end - (to_units >> RWBM_PAGE_SHIFT));
}

// For the TAS tool: marks `page` used without a malloc (the tool sets the free count:
// walk_free_set).
fn walk_prefill(page: u32) {
    atomicStore(&heap_meta[RW_FLAGS + page], 1u);
}
