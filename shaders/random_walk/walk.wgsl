// What the random-walk strategies share: the free count and its reservations, the word
// where their per-page state starts, and the optional step instrumentation.
//
// heap_meta layout after the statistics (STAT_WORDS); the shards begin where every
// strategy's state does (STRATEGY_STATE, src/layout/mod.rs), past unused words:
//   WALK_ROTOR       picks the shard a malloc takes from first (walk_home)
//   WALK_STEPS..+1   64-bit total of walk steps       (GPU_HEAP_COUNT_STEPS builds only)
//   WALK_WALKS..+1   64-bit count of finished walks   (GPU_HEAP_COUNT_STEPS builds only)
//   WALK_SHARD..     the free count, split into WALK_SHARDS shards WALK_SHARD_STRIDE words
//                    apart (one cache line each): free pages (units for rw-malloc) not
//                    reserved by a malloc in flight
//   WALK_STATE..     the strategy's flags or bitmaps
//
// A step is one read of the walk's state: one flag for RW, one 32-page bitmap word for
// RW-BM, CoRW and RW_malloc (Pham & Tu count steps the same way for TAS and WAS).
// heap_walk_steps counts the steps of the calling invocation's last malloc (one register
// add per step; RW-BM's try at its subgroup's word, which instrumented builds leave out,
// is not a step), and only instrumented builds (HeapConfig::count_steps, #define
// GPU_HEAP_COUNT_STEPS) add it to the counters above.
//
// The free count (the progress rule's exact exhaustion): malloc takes what it needs from
// the count before it walks, so a walk only starts when enough free state exists, and
// exhaustion is an immediate HEAP_OUT_OF_MEMORY. free gives its items back after it
// cleared them. The page walks split the count into shards because every free and every
// malloc changes it, and one word would take a million same-address atomics per million
// calls, one after another; RW_malloc keeps one shard (walk_reserve says why). A free adds
// to the shard its item hashes to; a malloc takes from the shard walk_home picks and, if
// that one is short, from every other shard it finds non-empty (walk_take). Taking is
// "take what is there": an atomicSub of the whole want, and the part the shard did not
// have added back, so a shard never shows more than it has. While nothing is freed, a
// shard read below zero (wrapped past the heap's items) or at zero holds nothing and
// stays so, and a malloc that found every shard so is right: a heap that only allocates
// runs out exactly when it is full. The count a take saw seeds its walk (walk_seed).
//
// Growth (core/growth.wgsl): the state is sized for the reserved maximum (RWBM_PAGES,
// RWM_UNITS); walks, sweeps and free's range check cover only the committed items
// (walk_live_items). Invariant of the bitmaps: the bits of items at or past the committed
// count inside the word that holds it are set ("does not exist"); words wholly past it
// are zero and never read by a walk. Grow clears the first kind and sets those of the new
// boundary word; trim, after checking the range free, does the reverse; the free count
// moves by the items committed or released.
//
// Loops: walk_take, walk_note_free and the shard helpers visit each of the WALK_SHARDS
// shards at most once per pass (walk_take and walk_free_remove make two).

// WALK_ROTOR, WALK_SHARD, WALK_SHARDS (a power of two, at most 32), WALK_SHARD_STRIDE,
// WALK_STEPS and WALK_WALKS (64-bit counters of the instrumented build) and WALK_STATE
// (the flags or bitmaps) are heap_meta words and counts the host declares
// (src/random_walk/mod.rs) and generates.
const WALK_NONE: u32 = 0xffffffffu;

var<private> heap_walk_steps: u32 = 0u;

fn walk_shard(k: u32) -> u32 {
    return WALK_SHARD + (k & (WALK_SHARDS - 1u)) * WALK_SHARD_STRIDE;
}

// Shard k's count as a load sees it: zero for a shard read below zero (wrapped past
// `total`, the most a shard can hold), which holds nothing.
fn walk_shard_count(k: u32, total: u32) -> u32 {
    let seen = atomicLoad(&heap_meta[walk_shard(k)]);
    return select(seen, 0u, seen > total);
}

// What a take got, and the count of its first shard before it.
struct WalkTake {
    got: u32,
    before: u32,
}

// Takes up to `want` items from shard k ("take what is there"). `total` is the most a
// shard can hold: a value above it is a shard read below zero.
fn walk_take_from(k: u32, want: u32, total: u32) -> WalkTake {
    let shard = walk_shard(k);
    let before = atomicSub(&heap_meta[shard], want);
    let got = select(min(before, want), 0u, before > total);
    if (got < want) {
        atomicAdd(&heap_meta[shard], want - got);
    }
    return WalkTake(got, before);
}

// Takes up to `want` items from the free count: from shard `home` first, then, if that
// one was short, from each other shard, in order after `home`, that one pass of loads
// shows non-empty. walk_seed(home, its `before`) then seeds the walk.
fn walk_take(want: u32, total: u32, home: u32) -> WalkTake {
    var take = walk_take_from(home, want, total);
    if (take.got > 0u) {
        walk_note_free(take.before - take.got, total);
    }
    if (take.got < want && WALK_SHARDS > 1u) {
        var open = 0u;
        for (var k = 0u; k < WALK_SHARDS; k++) {
            open |= select(0u, 1u << k, walk_shard_count(k, total) != 0u);
        }
        for (var i = 1u; i < WALK_SHARDS && take.got < want; i++) {
            let k = (home + i) & (WALK_SHARDS - 1u);
            if ((open & (1u << k)) != 0u) {
                take.got += walk_take_from(k, want - take.got, total).got;
            }
        }
    }
    return take;
}

// Growth's low watermark (core/growth.wgsl), after a take left `left` items in its home
// shard: the home shard times the shards is the estimate, and one under the watermark is
// checked against the sum of every shard before it counts.
fn walk_note_free(left: u32, total: u32) {
#ifdef GPU_HEAP_GROWABLE
    var free_items = min(left, 0xffffffffu / WALK_SHARDS) * WALK_SHARDS;
    if (WALK_SHARDS > 1u && free_items < atomicLoad(&heap_meta[HEAP_WATERMARK])) {
        free_items = 0u;
        for (var k = 0u; k < WALK_SHARDS; k++) {
            free_items += walk_shard_count(k, total);
        }
    }
    heap_note_free_items(free_items);
#endif
}

// The workgroup's share of the rotor, which picks the shard a malloc takes from first:
// the workgroup's first reservation takes one rotor ticket for all of it and publishes it
// (with the top bit set, so that zero means "not yet"), and every reservation takes a
// workgroup-local ticket. The rotor, one word for the whole dispatch, thus sees about one
// atomic per workgroup instead of one per subgroup. A workgroup whose memory was not
// zeroed costs spread, never a page. These are the library's only workgroup variables,
// and the reason malloc is for compute shaders only.
var<workgroup> walk_wg_tickets: atomic<u32>;
var<workgroup> walk_wg_rotor: atomic<u32>;

// The shard a reservation takes from first: the workgroup's rotor ticket mixed, plus a
// workgroup-local ticket. A reservation that finds the workgroup's ticket not yet
// published takes a rotor ticket of its own. With one shard, always that one.
fn walk_home() -> u32 {
    if (WALK_SHARDS == 1u) {
        return 0u;
    }
    let local = atomicAdd(&walk_wg_tickets, 1u);
    var rotor = 0u;
    if (local != 0u) {
        rotor = atomicLoad(&walk_wg_rotor);
    }
    if (rotor == 0u) {
        rotor = atomicAdd(&heap_meta[WALK_ROTOR], 1u) | 0x80000000u;
        if (local == 0u) {
            atomicStore(&walk_wg_rotor, rotor);
        }
    }
    return (heap_hash(rotor) + local) & (WALK_SHARDS - 1u);
}

// The seed of a walk that took from shard `home`, whose count was `before`: unique among
// takes in flight, because a shard's count hands each take its own value. With one shard
// it is the count itself, as Pham & Tu's counter; after everything was freed, the count,
// and so each round's seeds, come back.
fn walk_seed(home: u32, before: u32) -> u32 {
    return before ^ (home * 0x9e3779b9u);
}

// Lane `rank`'s ticket of a reservation seeded `seed`: nonzero, and consecutive among the
// lanes of a subgroup, so that their low five bits differ.
fn walk_ticket(seed: u32, rank: u32) -> u32 {
    return (seed - rank) | 0x80000000u;
}

// Reserves `n` of `total` items, all or none; returns a ticket (nonzero), or 0 if there
// were not enough (what it took goes back to the first shard). Exact for n = 1, and with
// one shard for any n (RW_malloc): with more shards, two reservations of several items
// that each took part of what is left could both fail.
fn walk_reserve(n: u32, total: u32) -> u32 {
    let home = walk_home();
    let take = walk_take(n, total, home);
    if (take.got < n) {
        if (take.got > 0u) {
            atomicAdd(&heap_meta[walk_shard(home)], take.got);
        }
        return 0u;
    }
    return walk_ticket(walk_seed(home, take.before), 0u);
}

// Sets the free count to `items`, spread evenly over the shards (init, one invocation).
fn walk_free_set(items: u32) {
    for (var k = 0u; k < WALK_SHARDS; k++) {
        atomicStore(&heap_meta[walk_shard(k)], walk_share(items, k));
    }
}

// Shard k's part of `items` spread evenly.
fn walk_share(items: u32, k: u32) -> u32 {
    return items / WALK_SHARDS + select(0u, 1u, k < items % WALK_SHARDS);
}

// Adds `items` to the free count, spread over the shards (growth, one invocation).
fn walk_free_add(items: u32) {
    for (var k = 0u; k < WALK_SHARDS; k++) {
        atomicAdd(&heap_meta[walk_shard(k)], walk_share(items, k));
    }
}

// Takes `items` out of the free count, evenly where the shards allow (trim, one invocation,
// between dispatches: no reservation is in flight, so the shards hold every free item of
// the range it removes): first each shard's share, then what is left from any shard.
fn walk_free_remove(items: u32) {
    var left = items;
    for (var round = 0u; round < 2u; round++) {
        for (var k = 0u; k < WALK_SHARDS; k++) {
            let want = select(left, walk_share(items, k), round == 0u);
            let here = min(min(atomicLoad(&heap_meta[walk_shard(k)]), want), left);
            atomicSub(&heap_meta[walk_shard(k)], here);
            left -= here;
        }
    }
}

// Items (pages or units of 16 << shift bytes) committed now, of `total` reserved.
fn walk_live_items(total: u32, shift: u32) -> u32 {
#ifdef GPU_HEAP_GROWABLE
    return min(heap_committed_units() >> shift, total);
#else
    return total;
#endif
}

// The item (page, or unit of 16 << shift bytes) that `ptr` starts, or WALK_NONE if `ptr`
// is not the start of a committed item: what every free checks first.
fn walk_item_of(ptr: u32, total: u32, shift: u32) -> u32 {
    let unit = heap_unit_of(ptr);
    if ((unit >> shift) >= walk_live_items(total, shift) || (unit & ((1u << shift) - 1u)) != 0u) {
        return WALK_NONE;
    }
    return unit >> shift;
}

// Init of a bitmap at heap_meta[bitmap] (which the host zeroed) over `items` live items:
// all of them free, and the items past them in the last word set ("does not exist").
fn walk_bitmap_init(bitmap: u32, items: u32) {
    walk_free_set(items);
    let tail = items & 31u;
    if (tail != 0u) {
        atomicStore(&heap_meta[bitmap + (items >> 5u)], ~((1u << tail) - 1u));
    }
}

// Growth of a bitmap at heap_meta[bitmap]: items [from, to) join. The boundary word of
// `from` had them set; the boundary word of `to` (zero before, unless it is the same word)
// gets its items past `to` set.
fn walk_bitmap_grow(bitmap: u32, old_end: u32, to: u32) {
    if ((to & 31u) != 0u) {
        let t = to >> 5u;
        atomicOr(&heap_meta[bitmap + t], heap_bits_in(t, to, (t + 1u) << 5u));
    }
    if ((old_end & 31u) != 0u) {
        let f = old_end >> 5u;
        atomicAnd(&heap_meta[bitmap + f], ~heap_bits_in(f, old_end, to));
    }
    walk_free_add(to - old_end);
}

// Trim check: whether word i of those covering [to, from) has no used item in the range.
fn walk_bitmap_free(bitmap: u32, i: u32, old_end: u32, to: u32) -> bool {
    let w = (to >> 5u) + i;
    return (atomicLoad(&heap_meta[bitmap + w]) & heap_bits_in(w, to, old_end)) == 0u;
}

// Trim after a clean check: items [to, from) leave. The boundary word of `to` gets its
// items past `to` set; the old boundary word of `from`, if now wholly past the end, is
// cleared (its items below `from` are free: checked).
fn walk_bitmap_trim(bitmap: u32, old_end: u32, to: u32) {
    let t = to >> 5u;
    if ((to & 31u) != 0u) {
        atomicOr(&heap_meta[bitmap + t], heap_bits_in(t, to, (t + 1u) << 5u));
    }
    let f = old_end >> 5u;
    if ((old_end & 31u) != 0u && (f != t || (to & 31u) == 0u)) {
        atomicStore(&heap_meta[bitmap + f], 0u);
    }
    walk_free_remove(old_end - to);
}

// Gives `n` items back to the free count, to the shard that `key` (the item, or a
// ticket) hashes to. Where subgroups exist, the lanes of a subgroup that give items back
// together add them with one atomic, to the shard of its first lane's key.
fn walk_unreserve(n: u32, key: u32) {
#ifdef GPU_HEAP_SUBGROUPS
    let sum = subgroupAdd(n);
    if (subgroupExclusiveAdd(1u) == 0u) {
        atomicAdd(&heap_meta[walk_shard(heap_hash(key))], sum);
    }
#else
    atomicAdd(&heap_meta[walk_shard(heap_hash(key))], n);
#endif
}

// The seed of the calling lane's subgroup's joint reservation (its own ticket where it
// reserved alone): the lanes of a subgroup start their walks at the word it picks, so that
// their pages land together and their frees touch few words.
var<private> walk_group_ticket: u32 = 0u;

// Reserves one item of `total` for each calling lane: its ticket, or 0 if there was none
// for it, as walk_reserve(1u, total). Where subgroups exist, the lanes of a subgroup reserve
// together: the first lane takes up to their number of items (walk_take), which go to the
// first lanes by rank. A subgroup that finds fewer than it has lanes therefore takes every
// item it saw, and its other lanes fail only where every shard was empty. As in
// rw_malloc's aggregation, this relies on the lanes meeting again after the leader's
// branch before the broadcast (structured control flow, no loop in between).
fn walk_reserve_one(total: u32) -> u32 {
#ifdef GPU_HEAP_SUBGROUPS
    let rank = subgroupExclusiveAdd(1u);
    let lanes = subgroupAdd(1u);
    var seed = 0u;
    var got = 0u;
    if (rank == 0u) {
        let home = walk_home();
        let take = walk_take(lanes, total, home);
        got = take.got;
        seed = walk_seed(home, take.before);
    }
    seed = subgroupBroadcastFirst(seed);
    got = subgroupBroadcastFirst(got);
    walk_group_ticket = seed;
    if (rank >= got) {
        return 0u;
    }
    return walk_ticket(seed, rank);
#else
    let ticket = walk_reserve(1u, total);
    walk_group_ticket = ticket;
    return ticket;
#endif
}

// Called once per walk that ran (a reservation was held), with heap_walk_steps final.
fn walk_finish() {
#ifdef GPU_HEAP_COUNT_STEPS
    heap_count(WALK_STEPS, heap_walk_steps);
    heap_count(WALK_WALKS, 1u);
#endif
}
