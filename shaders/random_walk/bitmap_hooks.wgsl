// The init and trim hooks of the walks whose state opens with a bitmap of used items
// (RW-BM and CoRW: pages; RW_malloc: units): WALK_ITEMS items of 16 << WALK_ITEM_SHIFT
// bytes, a bit each, at WALK_STATE. The growth hook is each strategy's own (RW-BM clears
// a summary bit, RW_malloc has nothing more to do).
//
// Invariants: those of walk.wgsl's bitmap functions, which these hooks call with the
// committed items only. Loops: walk_bitmap_free's (walk.wgsl).

// The host zeroes heap_meta; one invocation (STRATEGY_INIT_INVOCATIONS = 1) sets the free
// count and marks the items past the committed ones as used.
fn strategy_init(i: u32) {
    walk_bitmap_init(WALK_STATE, walk_live_items(WALK_ITEMS, WALK_ITEM_SHIFT));
}

fn strategy_trim_check(i: u32, from_units: u32, to_units: u32) -> bool {
    let old_end = min(from_units >> WALK_ITEM_SHIFT, WALK_ITEMS);
    return walk_bitmap_free(WALK_STATE, i, old_end, to_units >> WALK_ITEM_SHIFT);
}

fn strategy_trim(from_units: u32, to_units: u32) {
    let old_end = min(from_units >> WALK_ITEM_SHIFT, WALK_ITEMS);
    walk_bitmap_trim(WALK_STATE, old_end, to_units >> WALK_ITEM_SHIFT);
}
