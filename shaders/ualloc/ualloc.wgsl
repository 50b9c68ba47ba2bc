// UAlloc, the unaligned allocator of Gelado & Garland (PPoPP 2019, section 4.2), in front
// of the tree buddy (tbuddy/tbuddy.wgsl, section 4.1): the paper's allocator, malloc from
// one byte to a segment.
//
// malloc rounds the size up to a power of two. Up to half a leaf (UA_CLASSES classes of
// 16 B to 2 KiB) it takes a block from a bin of that class; above, a marked block of the
// tree buddy. A bin is a block of the tree buddy holding blocks of one class: one leaf
// (4 KiB: 256 blocks of 16 B, 128 of 32 B, 64 of 64 B) up to 64 B, and from 128 B as many
// leaves as hold 32 blocks, one bitmap word (ua_bin_order: 8 KiB of 256 B, 64 KiB of
// 2 KiB). The paper's bins are all 4 KiB; at 1 KiB such a bin holds 4 blocks, and a
// subgroup's 32 mallocs would make and give back 8 of them, each a tree buddy malloc and
// free, where a bin of one word serves the subgroup. A bin of several leaves needs a free
// block of its order: a malloc that cannot have one (on a heap cut up by smaller blocks,
// after merging, or with fewer free leaves) makes bins of one leaf, as the paper's, which
// waste nothing either (UA_ONE_LEAF in the state word). Merges run between passes of
// malloc, never inside its rounds (ua_malloc says why). A bin's state lives in heap_meta,
// not in the bin, so all of its bytes are blocks and no tail space is needed.
// Two-stage resource management as in the paper: one bulk semaphore per class counts the
// free blocks of the class's bins (a batch is one fresh bin: the producer takes a block
// from the tree buddy, keeps a block of its own and signals the others); then a bin with a
// free block is found in the class's summary bitmap (core/summary_bitmap.wgsl; where the
// paper walks a per-arena list of such bins), its free count is decremented, and a zero bit
// of its bitmap is set. A bin whose last block a free returns goes back to the tree buddy
// (one that a malloc's unused count leaves empty is only listed: ua_return_unused_count). A
// unit says a count exists, not that this malloc will win it: with thousands of holders
// searching, one can keep losing the counts it finds, so after UA_PATIENCE_HOLDING rounds
// without one it makes a bin of its own, keeps one count and gives its unit back.
//
// Where this departs from the paper, and why:
//   - Lists of bins with free blocks under RCU (4.2.1) need a grace period: a writer waits
//     for every reader of the list to leave, a wait on other invocations that WGSL cannot
//     bound (the progress rule). A bin's state word is instead the one word a reader
//     changes: the class and a live flag sit beside its free count, so a reader that
//     reaches a bin that was emptied, given back or reused for another class sees it in
//     the old value of its own atomic and undoes it. The summary bitmap of bins with free
//     blocks takes the list's place; the arenas (one per SM in the paper; WGSL has no SM
//     id) become where a malloc's search starts.
//   - The paper tells a UAlloc block from a TBuddy block by alignment (bin headers make
//     UAlloc blocks never page-aligned). Here the address's bin says it: its state word is
//     live while the bin belongs to UAlloc, and the hint words of a bin's other leaves
//     name its class, which the bin's own word confirms (ua_free); tree buddy blocks start
//     at a leaf whose state word is zero (the bins UAlloc takes are unmarked in the tree
//     buddy, so a free can never give one back to it while UAlloc holds it).
//   - The collective primitives of 4.2.2 are subgroup operations (ua_collective_take and
//     ua_collective_place, ua_release): the lanes of a subgroup that malloc one class take
//     their units with one atomic, then per bin's worth of lanes the counts of one bin (the
//     search takes its summary bit, one decrement takes them) or, with too few units, a
//     fresh bin, all bins at once; a found bin's blocks a bitmap word at a time, a fresh
//     bin's each lane by its rank. The lanes that free into one bin return their counts
//     with one atomic; those of one class signal once and give back the bins they emptied
//     together. These paths assume that the lanes which enter a branch leave it together
//     (as structured control flow reconverges on every driver we run on; Vulkan does not
//     promise it): a lane's outcome is told to the others by a subgroup operation after the
//     branch in which one lane acted for all.
//   - Nothing waits for a give-back: when the semaphore cannot spare an empty bin's blocks
//     (mallocs of the class wait for units, or bins of it are being made), the bin becomes
//     a candidate in summary bitmap UA_RETIRE, retried by later frees of its class and by
//     mallocs that find the tree buddy out of leaves; so does a bin that a malloc's unused
//     count or a decrement's undo leaves empty. A bin goes back as a block of its order;
//     the tree buddy merges blocks when a larger one is wanted.
//
// State (heap_meta, layout in src/ualloc.rs), after the tree buddy's: per class its
// semaphore (ua_sem); per bin, at its first leaf (`bin` below: bins are named by it), its
// state word (UA_STATE + bin: its free count, one-leaf flag, live flag and class, laid out
// below; zero for a leaf that starts no bin) and its bitmap (UA_BITMAP + 8 bin: a bit per
// block, set while handed out); per leaf a hint (UA_HINT + leaf: one more than the class of
// the bin whose other leaf it is, else zero); per class the range of summary bitmap UA_SETS
// of the bins that may have a free block; UA_CLAIM_FAILURES, UA_WAIT_FAILURES and
// UA_BIT_FAILURES, the mallocs that failed for contention by cause (no bin found for a
// unit, the wait ran out, no bit found for a count); UA_BIN_PRODUCERS, the calls making a
// bin now. Their leaves are reserved for a bin's worth of mallocs, and go back unused if
// the tree buddy has them only in pieces, so while the count is non-zero a malloc that
// finds every free leaf reserved and no block of its class is not out of memory yet: it
// waits in its rounds. A bin's leaves are never held between passes (a large block's are),
// so that the count covers every reservation made for a bin.
//
// Invariants
//   - Once no call is in flight, a class's semaphore count is the sum of its live bins'
//     free counts; a bin's free count is at most its zero bits. A malloc holding a unit
//     owns one free count somewhere; decrementing a live bin of its class turns it into
//     one zero bit of that bin, which it sets (blocks past the bin's are masked,
//     never set). free clears the bit, then increments the count, then signals.
//   - The state word changes by atomicAdd/atomicSub (a decrement is undone if the old
//     value was not a live bin of the class with a count above zero; a producer adds a
//     whole fresh state to a zero word), except the give-back: a compare-exchange from
//     "live, class c, all blocks free" to zero, after the bin's blocks were taken from the
//     semaphore. So no count is lost to a racing undo, and a bin is given back only when no
//     block of it is handed out or being claimed.
//   - A bin's bit in its class's summary bitmap is set when the bin gains its first free
//     block (fresh, or a free that raises the count from zero) and cleared when a
//     decrement takes the count to zero, a search meets a live bin with none, or a
//     subgroup's search takes the bit while it takes counts (ua_find_counts: set back if
//     counts are left after its decrement, or by its undo); every clear that found the
//     bit set is followed by a look at the count, made after the clear returned, setting
//     the bit back if it rose meanwhile. Every set comes after the atomic on the state
//     word that called for it has returned (its condition depends on that atomic's
//     result), so a search never meets a bit ahead of its bin's state. (An atomic issued
//     after another has returned sees what that one did, as core/summary_bitmap.wgsl also
//     assumes; WGSL has no fence for storage outside uniform control flow.)
//   - Hints are written when a bin is made and cleared when it is given back, with plain
//     stores, unordered with anything else: a free trusts only the bin's state word (a
//     live bin of the hinted class's order at the aligned place holds the leaf, whoever
//     wrote the hint), and a free whose leaf names no bin (a tree buddy block, or a hint
//     not visible yet) asks the tree buddy, then looks at every order (ua_bin_of) before it
//     calls the free invalid. Hints have words of their own, so a late one never lands on
//     a state word or a bitmap.
//
// Loops: malloc makes at most UA_PASSES passes, with a merge between two (tb_merge_for: at
// most two sweeps of every region and one more); a pass at most UA_ROUNDS rounds (the
// subgroup's collective attempt, a semaphore step, a search for a bin, or a wait for the
// calls making bins; a large malloc's two tries are its first two rounds); a bin search
// UA_SEARCH_TRIES tries; a bitmap claim at most UA_BIT_TRIES atomics, a subgroup's claim
// UA_GROUP_WORD_TRIES words, and its bins at most UA_GROUP_BINS; the give-back's
// compare-exchange at most 4 attempts, its take UA_TAKE_TRIES, its retries one per free
// and, for a malloc out of leaves, at most as many per class as the heap has leaves, each
// search scanning the class's range of layer 0 at most once; a bin's hints one store per
// leaf; a free's look at every order UA_MAX_BIN_ORDER + 1 loads; plus the tree buddy's and
// the summary bitmap's own.

#include "../tbuddy/tbuddy.wgsl"
// Init and growth: bins are tree buddy blocks, so the tree buddy's hooks cover UAlloc too.
#include "../tbuddy/hooks.wgsl"

// A bin's state word: free count << UA_COUNT_SHIFT | UA_ONE_LEAF (a bin of one leaf where
// its class's bins have several) | UA_LIVE | class (UA_CLASS_MASK), laid out on the host
// (src/ualloc.rs). The count has 27 bits: decrements that find no free block are undone,
// and until then they take the count below zero; however many are in flight, a wrapped
// count stays far above a bin's blocks, so no reader takes it for one. Counts move in
// multiples of UA_COUNT_ONE, so the bits below never change while a bin is live.
const UA_COUNT_ONE: u32 = 1u << UA_COUNT_SHIFT;
// A live bin of a class, whatever its size.
const UA_KEY_MASK: u32 = UA_LIVE | UA_CLASS_MASK;
// Summary bitmap 1 (bitmap 0 is the tree buddy's available tree).
const UA_SETS: u32 = 1u;
// Summary bitmap 2: per class, the empty bins whose give-back is still to be retried.
const UA_RETIRE: u32 = 2u;

fn ua_sem(c: u32) -> u32 {
    return UA_SEM + 2u * c;
}

// The tree buddy order of class c's bins: one leaf up to UA_WORD_BIN_CLASS (64 B and
// below), then as many leaves as hold 32 blocks (one bitmap word), fewer only where the
// tree buddy has no block that large. A bin of one leaf (order 0) serves a class of larger
// bins where no free block of their order can be had.
fn ua_bin_order(c: u32) -> u32 {
    return min(max(c, UA_WORD_BIN_CLASS) - UA_WORD_BIN_CLASS, UA_MAX_BIN_ORDER);
}

// The order of the live bin whose state word is `state`.
fn ua_order_of(state: u32) -> u32 {
    return select(ua_bin_order(state & UA_CLASS_MASK), 0u, (state & UA_ONE_LEAF) != 0u);
}

// Blocks of a bin of class c and order o.
fn ua_blocks_at(c: u32, o: u32) -> u32 {
    return (UA_LEAF_UNITS << o) >> c;
}

fn ua_blocks(c: u32) -> u32 {
    return ua_blocks_at(c, ua_bin_order(c));
}

fn ua_blocks_of(state: u32) -> u32 {
    return ua_blocks_at(state & UA_CLASS_MASK, ua_order_of(state));
}

// The state word of a live bin of class c and order o with `count` free blocks.
fn ua_state(c: u32, o: u32, count: u32) -> u32 {
    let one_leaf = select(0u, UA_ONE_LEAF, o != ua_bin_order(c));
    return (count << UA_COUNT_SHIFT) | one_leaf | UA_LIVE | c;
}

// Bitmap words a bin of class c uses (a bin of one leaf fits in its class's first), and
// the bits of a word that hold blocks in a bin of `blocks` blocks.
fn ua_bitmap_words(c: u32) -> u32 {
    return max(ua_blocks(c) >> 5u, 1u);
}

fn ua_word_mask(blocks: u32) -> u32 {
    return select((1u << blocks) - 1u, 0xffffffffu, blocks >= 32u);
}

fn ua_count(state: u32) -> u32 {
    return state >> UA_COUNT_SHIFT;
}

fn ua_set_index(c: u32, bin: u32) -> u32 {
    return (c << UA_SET_SHIFT) + bin;
}

// Lists bin `bin`, an empty bin of class c, for a later give-back (UA_RETIRE).
fn ua_list(c: u32, bin: u32) {
    sb_set(UA_RETIRE, ua_set_index(c, bin), sb_top(UA_SET_SHIFT));
}

// Whether a state word is a live bin of class c with a free block.
fn ua_has_free(state: u32, c: u32) -> bool {
    let count = ua_count(state);
    return (state & UA_KEY_MASK) == (UA_LIVE | c) && count > 0u
        && count <= ua_blocks_of(state);
}

// The class of a malloc of `units` 16-byte units: the smallest power of two that holds it.
fn ua_class_for(units: u32) -> u32 {
    return select(0u, 32u - countLeadingZeros(units - 1u), units > 1u);
}

// Takes one free count of bin `bin` of class c, which a search found without taking its
// bit: the bin's blocks, or 0 (and nothing changed) if the bin is not a live bin of c with
// a free block.
fn ua_take_count(bin: u32, c: u32) -> u32 {
    // A look first: a bin seen empty or not of the class costs no atomic. A stale look only
    // sends the caller to ua_hide, which reads the word again with an atomic.
    if (!ua_has_free(atomicLoad(&heap_meta[UA_STATE + bin]), c)) {
        return 0u;
    }
    let took = ua_take_counts(bin, c, 1u);
    if (took.x == 1u && ua_count(took.y) == 1u) {
        ua_hide(bin, c);
    }
    return select(0u, ua_blocks_of(took.y), took.x == 1u);
}

// Takes up to `k` free counts of bin `bin` of class c with one decrement: how many it took
// (0 if the bin is not a live bin of c with a free block) and the state it found. The
// excess is undone at once (ua_undo shows the bin again, or lists it for a give-back, if a
// free came meanwhile); showing or hiding the bin otherwise is the caller's. No look
// before the decrement: after a search that took the bin's bit (ua_find_counts), a plain
// load could be performed ahead of that take and miss the count of a free that set the
// bit, and the bin would stay hidden with free blocks (summary_bitmap.wgsl says why its
// steps are atomics). The decrement of a bin that is not c's is undone like any excess.
fn ua_take_counts(bin: u32, c: u32, k: u32) -> vec2<u32> {
    let old = atomicSub(&heap_meta[UA_STATE + bin], k * UA_COUNT_ONE);
    let count = ua_count(old);
    var have = min(count, k);
    if ((old & UA_KEY_MASK) != (UA_LIVE | c) || count > ua_blocks_of(old)) {
        have = 0u;
    }
    if (have < k) {
        ua_undo(bin, k - have);
    }
    return vec2<u32>(have, old);
}

// The bin has no free block of class c (or is not c's): clear its summary bit, then read
// its state again, setting the bit back if a free arrived meanwhile. The read is an atomic
// (atomicOr with 0) issued once the clear has returned: a plain load could be performed
// ahead of the clear (nothing orders relaxed atomics on two words otherwise), miss a free
// that raised the count and set the bit just before the clear, and leave the bin hidden
// with free blocks. A clear that found the bit clear needs no read: a free that comes
// later sets it after it, and a subgroup's search that took it decides after its own
// decrement (ua_find_counts).
fn ua_hide(bin: u32, c: u32) {
    if (sb_try_clear(UA_SETS, ua_set_index(c, bin))
        && ua_has_free(atomicOr(&heap_meta[UA_STATE + bin], 0u), c)) {
        sb_set(UA_SETS, ua_set_index(c, bin), sb_top(UA_SET_SHIFT));
    }
}

// Sets a zero bit of the bitmap of bin `bin` (class c, `blocks` blocks), of which the
// caller owns one (it took a count): the block's handle.
fn ua_claim_bit(bin: u32, c: u32, blocks: u32, seed: u32) -> u32 {
    // A try either reads the next word or loses a bit to another claimant, which then
    // holds it: a claimant loses at most (blocks - 1) races while no block comes back, and
    // reads each word at most once between two losses.
    const UA_BIT_TRIES = 4096u;
    let words = ua_bitmap_words(c);
    let mask = ua_word_mask(blocks);
    var rng = heap_hash(seed) | 1u;
    var w = rng % words;
    var seen = atomicLoad(&heap_meta[UA_BITMAP + UA_BITMAP_WORDS * bin + w]);
    for (var t = 0u; t < UA_BIT_TRIES; t++) {
        let free = ~seen & mask;
        if (free == 0u) {
            w = (w + 1u) % words;
            seen = atomicLoad(&heap_meta[UA_BITMAP + UA_BITMAP_WORDS * bin + w]);
            continue;
        }
        rng = heap_rng_next(rng);
        let b = sb_pick(free, rng);
        let old = atomicOr(&heap_meta[UA_BITMAP + UA_BITMAP_WORDS * bin + w], 1u << b);
        if ((old & (1u << b)) == 0u) {
            let unit = (bin << UA_LEAF_SHIFT) + ((w * 32u + b) << c);
            return heap_handle_of(unit);
        }
        seen = old;
    }
    return HEAP_NULL;
}

// Returns `n` free counts to bin `bin` of class c (blocks whose bits frees cleared): shows
// the bin again if it had none, signals the class's semaphore, and gives the bin back to
// the tree buddy if all its blocks are free.
fn ua_give_counts(bin: u32, c: u32, n: u32) {
    let emptied = ua_return_counts(bin, c, n);
    bsem_signal(ua_sem(c), n, 0u);
    if (emptied != TB_NO_ORDER) {
        ua_give_back(bin, c, emptied);
    }
}

// Adds `n` free counts to bin `bin` of class c and shows it again if it had none, or if a
// decrement being undone made it look so (that undo then shows it too: ua_undo). Returns
// the bin's order if all its blocks are free now, else TB_NO_ORDER. The caller signals the
// semaphore after it.
fn ua_return_counts(bin: u32, c: u32, n: u32) -> u32 {
    let old = atomicAdd(&heap_meta[UA_STATE + bin], n * UA_COUNT_ONE);
    let blocks = ua_blocks_of(old);
    if (ua_count(old) == 0u || ua_count(old) > blocks) {
        sb_set(UA_SETS, ua_set_index(c, bin), sb_top(UA_SET_SHIFT));
    }
    return select(TB_NO_ORDER, ua_order_of(old), ua_count(old) + n == blocks);
}

fn ua_give_count(bin: u32, c: u32) {
    ua_give_counts(bin, c, 1u);
}

// Returns the count of bin `bin` (class c) that a malloc holds and found no zero bit for.
// A bin this leaves with every block free is listed for a give-back, not given back here:
// a second copy of the give-back inlined into malloc's rounds (besides the retries of a
// malloc out of leaves) held registers that every malloc pays for (a kernel's registers
// set how many of its workgroups stay resident), for a case as rare as a failed claim. A
// later free of the class (each retries one candidate) or a malloc out of leaves gives the
// bin back.
fn ua_return_unused_count(bin: u32, c: u32) {
    let emptied = ua_return_counts(bin, c, 1u);
    bsem_signal(ua_sem(c), 1u, 0u);
    if (emptied != TB_NO_ORDER) {
        ua_list(c, bin);
    }
}

// Gives an empty bin back to the tree buddy: its blocks leave the semaphore first, then the
// state word goes from "all free" to zero (ua_retire), which fails if any count was taken
// meanwhile. While mallocs of the class wait for units or make bins the semaphore cannot
// spare the blocks (they may be the ones those mallocs will find); the bin then becomes a
// candidate in the class's range of UA_RETIRE, retried by later frees of the class and by
// any malloc that finds the tree buddy out of leaves (ua_retry_give_back,
// ua_retry_all_give_backs). o: the bin's order. Returns whether its take failed (then the
// bin is listed; it is also listed, returning false, when the retire's compare-exchange
// kept failing).
fn ua_give_back(bin: u32, c: u32, o: u32) -> bool {
    let s = ua_sem(c);
    let took = ua_take_for_give_back(c, ua_blocks_at(c, o));
    if (took) {
        let r = ua_retire(bin, c, o);
        if (r == UA_RETIRED) {
            tb_count_given(o, 1u);
            return false;
        }
        bsem_signal(s, ua_blocks_at(c, o), 0u);
        if (r == UA_IN_USE) {
            return false;
        }
    }
    ua_list(c, bin);
    return !took;
}

// Takes `n` units (empty bins' blocks, or what of them a release's own frees do not cover)
// from class c's semaphore for a give-back, unless mallocs of the class wait for units or
// make bins. Tried again while none does: the count can be short for a moment although the
// blocks are free, when a release elsewhere has added a free block to its bin but not yet
// signalled it, and another release took the unit of one of these blocks for its own bin
// meanwhile. Releases signal every unit they keep no bin for before they take
// (ua_release_class), so such a signal never waits on a take; it comes within a few
// instructions of its release, which is not a bound, so a bin whose take still fails is
// listed for a later give-back (a later free of its class, or a malloc that finds the tree
// buddy out of leaves).
fn ua_take_for_give_back(c: u32, n: u32) -> bool {
    const UA_TAKE_TRIES = 64u;
    let s = ua_sem(c);
    var took = false;
    var waited_for = false; // mallocs of the class wait for units or make bins
    for (var t = 0u; t < UA_TAKE_TRIES && !took && !waited_for; t++) {
        waited_for = atomicLoad(&heap_meta[s + 1u]) != 0u;
        took = !waited_for && (n == 0u || bsem_try_take(s, n));
    }
    return took;
}

// What ua_retire did with an empty bin whose blocks its caller took from the semaphore:
// retired it (the caller counts its block given back: tb_count_given), or not, because a
// count was taken (the bin is in use; the call that returns its last count gives it back or
// lists it) or the compare-exchange kept failing spuriously (the caller lists it); in both
// the caller signals the blocks back.
const UA_RETIRED: u32 = 0u;
const UA_IN_USE: u32 = 1u;
const UA_RETRY_LATER: u32 = 2u;

fn ua_retire(bin: u32, c: u32, o: u32) -> u32 {
    let full = ua_state(c, o, ua_blocks_at(c, o));
    for (var attempt = 0u; attempt < 4u; attempt++) {
        let r = atomicCompareExchangeWeak(&heap_meta[UA_STATE + bin], full, 0u);
        if (r.exchanged) {
            for (var i = 1u; i < (1u << o); i++) {
                atomicStore(&heap_meta[UA_HINT + bin + i], 0u);
            }
            sb_try_clear(UA_SETS, ua_set_index(c, bin));
            sb_try_clear(UA_RETIRE, ua_set_index(c, bin));
            at_publish_freed(o, bin >> o);
            return UA_RETIRED;
        }
        if (r.old_value != full) {
            return UA_IN_USE;
        }
    }
    return UA_RETRY_LATER;
}

// Every class's candidates, for a malloc that found the tree buddy out of leaves: a malloc of
// the whole heap needs every listed bin back (`tests/ualloc.rs` lists them all). A search
// whose descent finds none scans the class's range of layer 0 (summaries may stay set over
// words that takes and give-backs emptied), so a search that finds none means none is
// listed, but for lists and summary repairs in flight and for claims the scan lost to
// other searchers: windows, not bounds (a later malloc's retries find those). A class's
// retries end there, at the second give-back in a row whose take fails (mallocs of the
// class wait for units or make bins, or the count is short of the bin's blocks: the bin is
// listed again, and a search could find it again), or after as many as the heap has
// leaves.
fn ua_retry_all_give_backs(seed: u32) {
    let scan = max((1u << UA_SET_SHIFT) >> 5u, 1u);
    for (var c = 0u; c < UA_CLASSES; c++) {
        let lo = c << UA_SET_SHIFT;
        var failed = 0u; // give-backs in a row whose take failed
        var any = sb_range_may_hold(UA_RETIRE, lo, UA_SET_SHIFT);
        for (var k = 0u; k < TB_LEAVES && any && failed < 2u; k++) {
            let bin = sb_search(UA_RETIRE, lo, UA_SET_SHIFT, seed + c + k, 1u, scan, true);
            any = bin != SB_NONE;
            if (any && ua_retry_give_back_of(bin, c)) {
                failed += 1u;
            } else {
                failed = 0u;
            }
        }
    }
}

// Retries one give-back candidate of class c, if a search finds one: for a free of the
// class.
fn ua_retry_give_back(c: u32, seed: u32) {
    let bin = sb_search(UA_RETIRE, c << UA_SET_SHIFT, UA_SET_SHIFT, seed, 1u, 0u, true);
    if (bin != SB_NONE) {
        ua_retry_give_back_of(bin, c);
    }
}

// Gives back `bin`, a candidate of class c taken from UA_RETIRE, if it is still an empty
// bin of c (if not it is dropped: the call that returns its last count gives it back or
// lists it again). Returns whether its take failed, as ua_give_back.
fn ua_retry_give_back_of(bin: u32, c: u32) -> bool {
    // An atomic read once the take has returned (ua_hide says why not a load).
    let now = atomicOr(&heap_meta[UA_STATE + bin], 0u);
    let o = ua_order_of(now);
    return now == ua_state(c, o, ua_blocks_at(c, o)) && ua_give_back(bin, c, o);
}

// Makes `leaf`, a block of order o the caller took from the tree buddy, a fresh bin of
// class c with `kept` of its counts taken by its producer (so a fresh bin never looks
// empty to a give-back; the producer claims their bits like any holder of counts), shows
// it, and signals its other blocks, retiring `batches` batches of the semaphore. Returns
// the bin.
fn ua_fresh_bin(leaf: u32, c: u32, o: u32, kept: u32, batches: u32) -> u32 {
    let bin = heap_unit_of(leaf) >> UA_LEAF_SHIFT;
    let left = ua_blocks_at(c, o) - kept;
    // Its other leaves name its class, for frees (ua_free).
    for (var i = 1u; i < (1u << o); i++) {
        atomicStore(&heap_meta[UA_HINT + bin + i], c + 1u);
    }
    // The bin is shown only once its state word is live: the set depends on what the add
    // returned (whose live flag is clear: the leaf was not UAlloc's), so it cannot land
    // before the add, where a search would find a bin that is not yet live, hide it, and
    // leave it hidden with free blocks.
    let before = atomicAdd(&heap_meta[UA_STATE + bin], ua_state(c, o, left));
    if (left > 0u && (before & UA_LIVE) == 0u) {
        sb_set(UA_SETS, ua_set_index(c, bin), sb_top(UA_SET_SHIFT));
    }
    bsem_signal(ua_sem(c), left, batches);
    return bin;
}

// Finds a bin of class c with a free block and takes one count of it (the caller holds a
// unit of the class's semaphore): the bin and its blocks, or SB_NONE.
fn ua_find_bin(c: u32, seed: u32, last: bool) -> vec2<u32> {
    const UA_SEARCH_TRIES = 8u;
    let scan = select(0u, 65536u, last);
    for (var t = 0u; t < UA_SEARCH_TRIES; t++) {
        let bin = sb_search(UA_SETS, c << UA_SET_SHIFT, UA_SET_SHIFT, seed + t, 4u, scan, false);
        if (bin == SB_NONE) {
            continue;
        }
        let blocks = ua_take_count(bin, c);
        if (blocks != 0u) {
            return vec2<u32>(bin, blocks);
        }
        ua_hide(bin, c);
    }
    return vec2<u32>(SB_NONE, 0u);
}

// Gives back `n` counts a decrement took from a bin it could not use. Frees that came
// meanwhile saw the count below zero and may not have shown the bin: an undo that leaves
// free blocks shows it, and one that leaves every block free (a bin whose last free could
// not give it back) lists it for a give-back.
fn ua_undo(bin: u32, n: u32) {
    let now = atomicAdd(&heap_meta[UA_STATE + bin], n * UA_COUNT_ONE) + n * UA_COUNT_ONE;
    let k = now & UA_CLASS_MASK;
    if (k < UA_CLASSES && ua_has_free(now, k)) {
        sb_set(UA_SETS, ua_set_index(k, bin), sb_top(UA_SET_SHIFT));
        if (ua_count(now) == ua_blocks_of(now)) {
            ua_list(k, bin);
        }
    }
}

#ifdef GPU_HEAP_SUBGROUPS
// Finds a bin of class c with free blocks and takes up to `k` of its counts (the caller
// holds k units of the class's semaphore): the bin, how many it took and the bin's blocks,
// or SB_NONE and 0.
// Unlike ua_find_bin it claims the bin's summary bit while it takes (the search's take),
// so that the searchers of other subgroups, each wanting up to a bin's worth of counts,
// look elsewhere rather than lose the same bin's few counts to each other; the bin is
// shown again if counts are left, as after any clear (ua_hide).
fn ua_find_counts(c: u32, seed: u32, k: u32) -> vec3<u32> {
    const UA_SEARCH_TRIES = 8u;
    for (var t = 0u; t < UA_SEARCH_TRIES; t++) {
        let bin = sb_search(UA_SETS, c << UA_SET_SHIFT, UA_SET_SHIFT, seed + t, 4u, 0u, true);
        if (bin == SB_NONE) {
            continue;
        }
        // Its look is the one that follows the clear: a bin with no free block stays
        // hidden (a free that raises its count from zero or from below it shows it, and
        // so does the undo of a decrement that took it below zero, as of any taken short).
        let took = ua_take_counts(bin, c, k);
        if (took.x == k && ua_count(took.y) > k) {
            sb_set(UA_SETS, ua_set_index(c, bin), sb_top(UA_SET_SHIFT));
        }
        if (took.x > 0u) {
            return vec3<u32>(bin, took.x, ua_blocks_of(took.y));
        }
    }
    return vec3<u32>(SB_NONE, 0u, 0u);
}

// The collective first attempt of the lanes of a subgroup that malloc the class of its
// first active lane (the collective primitives of section 4.2.2 as subgroup operations),
// in two halves around ua_malloc's one call of the tree buddy. ua_collective_take: one
// take of their units from the semaphore, then per bin's worth of lanes one bin, found
// (the search takes its summary bit, one decrement its lanes' counts; a found bin of one
// bitmap word is claimed at once, one atomicOr for the lanes' blocks) or, with too few
// units, to be made fresh by the bin's first lane. ua_collective_place: the lanes learn
// their bin and claim their blocks, a found bin's a bitmap word per atomicOr, a fresh
// bin's the block of each lane's rank.
struct UaGroup {
    lead: u32, // the class of the first active lane
    same: bool, // this lane mallocs class `lead`
    took: bool, // the group took its units (else it makes its bins)
    rank: u32, // among the lanes of class `lead`
    bins: u32, // bins found or made at once
    make: u32, // this lane makes a fresh bin keeping `make` counts (0: it makes none)
    bin: u32, // the bin this lane found for its bin's worth of lanes, or SB_NONE
    have: u32, // the counts it took of that bin
    blocks: u32, // that bin's blocks
    got: u32, // the bits of that bin's one word it claimed for them
}

// Returns this lane's block, or HEAP_NULL with `counted` saying whether it holds a count
// of bin `bin` (ua_malloc claims its bit; nothing else is held then) and otherwise `held`
// whether it holds a semaphore unit (ua_malloc's rounds find its count).
struct UaCollective {
    handle: u32,
    held: bool,
    counted: bool,
    bin: u32,
    blocks: u32, // the bin's blocks, from the lane that found or made it
}

// Bins a subgroup finds or makes at once at most. A bin holds 32 blocks or more wherever
// the tree buddy has blocks of 64 KiB; on a smaller heap a bin of 2 KiB blocks may hold
// two, and a subgroup of 32 lanes then wants 16.
const UA_GROUP_BINS: u32 = 16u;

fn ua_collective_take(c: u32) -> UaGroup {
    let lead = subgroupBroadcastFirst(c);
    let same = c == lead;
    let rank = subgroupExclusiveAdd(select(0u, 1u, same));
    let k = subgroupAdd(select(0u, 1u, same));
    var took = false;
    if (same && rank == 0u) {
        took = bsem_try_take(ua_sem(c), k);
    }
    took = subgroupBroadcastFirst(u32(took)) != 0u;
    // The leader's take of k units set its ticket (bsem_ticket: the count before the take);
    // the k units are the counts from it down, so each lane takes the one of its rank as
    // its own ticket. Lanes that searched with the ticket they came in with (0 in a fresh
    // invocation) would all descend the same path, to the same bin, and lose its counts
    // to each other.
    let ticket = subgroupBroadcastFirst(bsem_ticket);
    if (same && took) {
        bsem_ticket = ticket - rank;
    }
    // Each bin's worth of lanes (`per`) shares one bin, which its first lane finds (the
    // units were there) or makes (too few: a collective acquire, where one malloc after
    // another would each wait on the semaphore), all bins at once. A found bitmap of several
    // words (classes of up to 64 B, a bin's worth beyond any subgroup) is claimed a word at
    // a time by the whole group, so the group then takes one bin; a bin of one word serves
    // a subgroup of up to 32 lanes alone.
    let per = ua_blocks(lead);
    let words = ua_bitmap_words(lead);
    let bins = select(min((k + per - 1u) / per, UA_GROUP_BINS), 1u, words > 1u);
    var g = UaGroup(lead, same, took, rank, bins, 0u, SB_NONE, 0u, 0u, 0u);
    if (same && rank % per == 0u && rank / per < bins) {
        let lanes = min(per, k - rank);
        if (!took) {
            g.make = lanes;
            return g;
        }
        let found = ua_find_counts(lead, bsem_ticket, lanes);
        g.bin = found.x;
        g.have = found.y;
        g.blocks = found.z;
        if (g.have > 0u && words == 1u) {
            let word = UA_BITMAP + UA_BITMAP_WORDS * g.bin;
            let free = ~atomicLoad(&heap_meta[word]) & ua_word_mask(g.blocks);
            let pick = heap_lowest_bits(free, g.have);
            if (pick != 0u) {
                g.got = pick & ~atomicOr(&heap_meta[word], pick);
            }
        }
    }
    return g;
}

// `fresh`: the bin this lane made for its group (g.make counts kept), or SB_NONE.
fn ua_collective_place(g: UaGroup, fresh: u32) -> UaCollective {
    const UA_GROUP_WORD_TRIES = 16u;
    let lead = g.lead;
    let per = ua_blocks(lead);
    let words = ua_bitmap_words(lead);
    var my_bin = g.bin;
    var my_have = g.have;
    var my_blocks = g.blocks;
    if (fresh != SB_NONE) {
        // A fresh bin of the collective round is of its class's order (ua_rounds).
        my_bin = fresh;
        my_have = g.make;
        my_blocks = per;
    }
    // The lanes learn their bin, whether they hold a count of it, and their block if the
    // found bin's claim got one, by reductions over each bin's first lane. Lanes left
    // without a count go on alone: holding a unit if the group took them, none if it made
    // bins.
    var out = UaCollective(HEAP_NULL, g.same && g.took, false, SB_NONE, 0u);
    for (var j = 0u; j < g.bins; j++) {
        let first = g.same && g.rank == j * per;
        let bin = subgroupMin(select(SB_NONE, my_bin, first));
        let have = subgroupMax(select(0u, my_have, first));
        let blocks = subgroupMax(select(0u, my_blocks, first));
        let got = subgroupOr(select(0u, g.got, first));
        let order = g.rank % per;
        if (g.same && g.rank / per == j && order < have) {
            out.bin = bin;
            out.blocks = blocks;
            out.counted = true;
            if (order < countOneBits(got)) {
                let b = heap_nth_bit(got, order);
                out.handle = heap_handle_of((bin << UA_LEAF_SHIFT) + (b << lead));
            }
        }
    }
    if (out.counted && !g.took) {
        // A fresh bin's blocks are all free but those that holders of its signalled counts
        // took once it was shown, so each of its lanes takes the block of its rank: one
        // atomicOr of its own bit, all lanes at once. A lane that lost its block claims
        // another alone (ua_malloc), with a seed of its own: these lanes took no unit, so
        // no ticket.
        bsem_ticket = heap_hash(out.bin) + g.rank;
        let q = g.rank % per;
        let bit = 1u << (q & 31u);
        let word = UA_BITMAP + UA_BITMAP_WORDS * out.bin + (q >> 5u);
        if ((atomicOr(&heap_meta[word], bit) & bit) == 0u) {
            out.handle = heap_handle_of((out.bin << UA_LEAF_SHIFT) + (q << lead));
        }
    }
    if (words == 1u || !g.took) {
        return out;
    }
    // The lanes holding a count of the group's one bin claim their blocks a word at a
    // time: the first of them sets as many free bits of the word as lanes wait, and each
    // waiting lane takes one of the bits that were indeed free.
    let mask = ua_word_mask(per); // several words: a bin of its class's order
    let base = UA_BITMAP + UA_BITMAP_WORDS * out.bin;
    let w0 = subgroupBroadcastFirst(heap_hash(out.bin ^ bsem_ticket) % words);
    for (var t = 0u; t < UA_GROUP_WORD_TRIES; t++) {
        let w = (w0 + t) % words;
        let waiting = out.counted && out.handle == HEAP_NULL;
        let need = subgroupAdd(select(0u, 1u, waiting));
        if (need == 0u) {
            break;
        }
        let order = subgroupExclusiveAdd(select(0u, 1u, waiting));
        var got = 0u;
        if (waiting && order == 0u) {
            let free = ~atomicLoad(&heap_meta[base + w]) & mask;
            let pick = heap_lowest_bits(free, need);
            if (pick != 0u) {
                got = pick & ~atomicOr(&heap_meta[base + w], pick);
            }
        }
        got = subgroupOr(got);
        if (waiting && order < countOneBits(got)) {
            let b = heap_nth_bit(got, order);
            out.handle = heap_handle_of((out.bin << UA_LEAF_SHIFT) + ((w * 32u + b) << lead));
        }
    }
    return out;
}
#endif

// malloc in passes: a pass's rounds (ua_rounds) ask the tree buddy for bins and blocks
// without merging; a pass that found what it needs only in pieces ends, and the next one
// starts after a merge for that order (tb_merge_for). The merges' loops, five deep, would
// hold more registers than all of malloc's other paths if they ran inside the rounds, and
// a kernel's registers set how many workgroups a multiprocessor keeps resident (see
// BENCHMARKS.md, Registers); between two passes nothing of the rounds is live.
fn ua_malloc(size_bytes: u32) -> HeapAlloc {
    // The first pass and two more after merging; the last makes bins of one leaf where it
    // still cannot have a bin of its class's order.
    const UA_PASSES = 3u;
    let units = heap_units_for(size_bytes);
    var result = HeapAlloc(HEAP_NULL, 0u, HEAP_CONTENTION);
    var merge = TB_NO_ORDER; // the order the last pass found only in pieces
    var merged = HEAP_OK; // what the merge for it reported
    // Leaves of this order reserved by a large malloc's tree buddy malloc that wanted a
    // merge, kept for the next (TB_MERGE_WANTED): given back between passes, they could go
    // to a malloc that cuts up the blocks the merge is to join.
    var held = TB_NO_ORDER;
    // A merge before every pass but the first, and one after the last if that still found
    // its block only in pieces (one call site: the merges are large once inlined).
    for (var p = 0u; p <= UA_PASSES && (p == 0u || merge != TB_NO_ORDER); p++) {
        if (p > 0u) {
            merged = tb_merge_for(merge, bsem_ticket ^ units ^ p);
        }
        if (p < UA_PASSES) {
            merge = TB_NO_ORDER;
            result = ua_rounds(size_bytes, units, p + 1u == UA_PASSES, &merge, &held);
        }
    }
    if (held != TB_NO_ORDER) {
        tb_unreserve(1u << held);
    }
    // The last pass failed with its block in pieces: out of memory if the merge after it
    // found no pair to merge, else a failure for contention (pairs left, or what it merged
    // taken by others), as the tree buddy's own malloc reports it.
    if (merge != TB_NO_ORDER && merged != HEAP_OUT_OF_MEMORY) {
        result.status = HEAP_CONTENTION;
        atomicAdd(&heap_meta[TB_MERGE_FAILURES], 1u);
    }
    return result;
}

// One pass of malloc: rounds of the subgroup's collective attempt, semaphore steps, bin
// searches and fresh bins, or a large malloc's block. Where the tree buddy has the block
// only in pieces, a pass other than the last ends with HEAP_OUT_OF_MEMORY and `merge` set
// to the order to merge for; the last sets it too, and fails.
fn ua_rounds(
    size_bytes: u32,
    units: u32,
    last: bool,
    merge: ptr<function, u32>,
    held: ptr<function, u32>,
) -> HeapAlloc {
    const UA_ROUNDS = 32768u;
    // Rounds a malloc waits for someone else's bin before it produces one itself.
    const UA_PATIENCE = 32u;
    // Rounds a malloc holding a unit searches for a count before it makes a bin of its
    // own (and again after as many more).
    const UA_PATIENCE_HOLDING = 256u;
    // Above half a leaf: a marked block of the tree buddy, in the first round, or in the
    // second if the first found no leaves (empty bins waiting to be given back may hold
    // them).
    let large = units > (UA_LEAF_UNITS >> 1u);
    let c = ua_class_for(min(units, UA_LEAF_UNITS >> 1u)); // a large malloc uses no class
    let s = ua_sem(c);
    var wait = bsem_new_wait();
    var status = HEAP_CONTENTION;
    var holding = false; // a unit of the semaphore is ours; its count is still to be found
    var counted = SB_NONE; // a bin of which this call holds a count; its bit is still to be set
    var counted_blocks = 0u; // that bin's blocks
    var retry = false; // the give-back candidates are to be retried at the next round's start
    var retried = false; // they were, after the tree buddy ran out
    // The tree buddy's free leaves were all reserved while other calls were making bins:
    // this call waits until they are done, leaves come back, or blocks of the class appear
    // (those calls are in this same loop, so a wait for them keeps the progress rule).
    var starved = false;
    // No bin of the class's order could be had (no free block of it, or not enough free
    // leaves): the bins this call makes are single leaves, which hold fewer blocks.
    var one_leaf = false;
    // The tree buddy and the class had nothing while no bin was counted as being made: one
    // more round before out of memory, since a maker that had just reserved the last
    // leaves may not have been counted yet.
    var confirmed = false;
    var misses = 0u; // rounds this call held a unit and found no bin with a count
    // The loop ends at the end of a round (a block claimed, the claim failed, a large
    // block's outcome, or out of memory), never by a return or break from inside it: a lane
    // that leaves the loop from inside can be left unscheduled while the other lanes of its
    // subgroup spin (docs/architecture.md, the progress rule), and a producer's fresh bin
    // is what they wait for. Each of the tree buddy's malloc, the give-back retries, the
    // bit claim and the count's return has one call site, here: each is large once inlined,
    // and drivers inline everything.
    var done = false; // `result` holds the outcome
    var stopped = false; // no leaf for a bin and no block left: `status` says why
    var result = HeapAlloc(HEAP_NULL, 0u, HEAP_CONTENTION);
    for (var round = 0u; round < UA_ROUNDS && !done && !stopped; round++) {
        if (retry) {
            retry = false;
            ua_retry_all_give_backs(bsem_ticket ^ units);
        }
        // The tree buddy order of what this call asks for: a bin, or a large block.
        let bin_order = select(ua_bin_order(c), 0u, one_leaf);
        let order = select(bin_order, tb_order_for(size_bytes), large);
        if (starved) {
            let leaves = 1u << order;
            if (atomicLoad(&heap_meta[UA_BIN_PRODUCERS]) != 0u
                && atomicLoad(&heap_meta[TB_FREE]) < leaves && bsem_count(s) <= 0) {
                continue;
            }
            starved = false;
        }
        var kept = 0u; // a fresh bin is wanted, keeping this many of its counts
        var producing = false; // this call is to make the semaphore's batch: a fresh bin
        var own_bin = false; // this call holds a unit and makes a bin of its own
        var bin = SB_NONE;
        var bin_blocks = 0u;
#ifdef GPU_HEAP_SUBGROUPS
        // The first round of a small malloc is the subgroup's collective attempt.
        let collective = round == 0u && !large;
        var group = UaGroup(0u, false, false, 0u, 0u, 0u, SB_NONE, 0u, 0u, 0u);
        if (collective) {
            group = ua_collective_take(c);
            kept = group.make;
        }
#else
        let collective = false;
#endif
        if (counted != SB_NONE) {
            bin = counted;
            bin_blocks = counted_blocks;
        } else if (!large && !collective) {
            if (!holding) {
                var r = bsem_step(s, 1u, ua_blocks(c) - 1u, &wait, false);
                if (r == BSEM_PENDING && wait.waited >= UA_PATIENCE) {
                    bsem_abandon(s, 1u, &wait);
                    if (bsem_help(s)) {
                        r = BSEM_ALLOCATE;
                    }
                }
                if (r == BSEM_PENDING) {
                    continue;
                }
                producing = r == BSEM_ALLOCATE;
                holding = !producing;
            }
            if (holding) {
                let found = ua_find_bin(c, bsem_ticket + round * 0x9e3779b9u, round + 1u == UA_ROUNDS);
                bin = found.x;
                bin_blocks = found.y;
                if (bin == SB_NONE) {
                    // The unit's count exists, but with thousands of holders searching,
                    // others can keep taking the counts this one finds: after
                    // UA_PATIENCE_HOLDING rounds it makes a bin of its own, keeps one of its
                    // counts and gives the unit back (the bin's other blocks and the unit go
                    // to the semaphore together, so the books stay balanced).
                    misses += 1u;
                    own_bin = misses % UA_PATIENCE_HOLDING == 0u;
                }
            }
            if (producing || own_bin) {
                // The block is claimed in this same round, so the loop never ends holding
                // a count of the new bin.
                kept = 1u;
            }
        }
        var leaf = HeapAlloc(HEAP_NULL, 0u, HEAP_CONTENTION);
        // A bin's maker, counted in UA_BIN_PRODUCERS from its reservation until its bin is
        // shown or its leaves are back (a merge wanted): while one is, a call that finds no
        // free leaf and no block of its class is not out of memory yet.
        var counted_maker = false;
        if (large || kept > 0u) {
            // Only a large malloc holds leaves, and always of its one order.
            var reserved = *held == order;
            if (!large) {
                // Counted only once reserved, so that calls out of leaves never wait for
                // each other; one that misses this count between the two atomics looks
                // again a round later (`confirmed`).
                reserved = tb_reserve(1u << order) != TB_NOT_RESERVED;
                counted_maker = reserved;
                if (reserved) {
                    atomicAdd(&heap_meta[UA_BIN_PRODUCERS], 1u);
                }
            }
            if (large || reserved) {
                let size = select((UA_LEAF_UNITS * 16u) << order, size_bytes, large);
                leaf = tb_malloc(size, large, false, reserved);
            } else {
                leaf = HeapAlloc(HEAP_NULL, 0u, HEAP_OUT_OF_MEMORY);
            }
            // A large block's leaves are held across the merge it wants (see ua_malloc); a
            // bin's go back at once: held by thousands of makers, they would take every
            // free leaf from the mallocs after them, and a bin of one leaf needs no merge.
            *held = select(TB_NO_ORDER, order, leaf.units == TB_MERGE_WANTED && large);
            if (!large && reserved && leaf.units == TB_MERGE_WANTED) {
                tb_unreserve(1u << order);
            }
        }
        // Out of leaves (not a merge wanted, which also says out of memory) while other
        // calls are making bins: they may give leaves back (a bin that needs a merge does)
        // or serve this call from their bins, so it waits for them (`starved`); they are
        // in this same loop, which keeps the progress rule.
        let producers = leaf.status == HEAP_OUT_OF_MEMORY && leaf.units != TB_MERGE_WANTED
            && atomicLoad(&heap_meta[UA_BIN_PRODUCERS]) != 0u;
        if (large) {
            if (leaf.status == HEAP_OUT_OF_MEMORY && !retried) {
                retried = true;
                retry = true;
            } else if (producers) {
                starved = true;
            } else if (leaf.status == HEAP_OUT_OF_MEMORY && leaf.units != TB_MERGE_WANTED
                && !confirmed) {
                confirmed = true;
            } else {
                if (leaf.units == TB_MERGE_WANTED) {
                    // Only in pieces: the next pass merges first (the last one fails).
                    *merge = *held;
                }
                if (*merge != TB_NO_ORDER && !last) {
                    status = HEAP_OUT_OF_MEMORY;
                    stopped = true;
                } else {
                    result = HeapAlloc(leaf.handle, select(0u, leaf.units, leaf.status == HEAP_OK), leaf.status);
                    done = true;
                }
            }
            continue;
        }
        var fresh = SB_NONE;
        if (kept > 0u && leaf.status == HEAP_OK) {
            fresh = ua_fresh_bin(leaf.handle, c, order, kept, select(0u, 1u, producing));
        }
        if (counted_maker) {
            // After the bin was shown and its blocks signalled, or its leaves given back.
            atomicSub(&heap_meta[UA_BIN_PRODUCERS], 1u);
        }
#ifdef GPU_HEAP_SUBGROUPS
        if (collective) {
            let out = ua_collective_place(group, fresh);
            if (out.handle != HEAP_NULL) {
                result = HeapAlloc(out.handle, 1u << c, HEAP_OK);
                done = true;
            } else if (out.counted) {
                // A count of the group's bin whose block the group's claims did not yield:
                // its bit is claimed in the next round.
                counted = out.bin;
                counted_blocks = out.blocks;
            }
            holding = out.held && !out.counted;
            continue;
        }
#endif
        if (fresh != SB_NONE) {
            if (own_bin) {
                bsem_signal(s, 1u, 0u);
            }
            bin = fresh;
            bin_blocks = ua_blocks_at(c, order);
        } else if (producing) {
            // No leaf for a bin: blocks of the class may still be free or coming; out of
            // memory only if none is.
            bsem_signal(s, 0u, 1u);
            wait = bsem_new_wait();
            let none = bsem_count(s) <= 0;
            if (none && order > 0u && leaf.units == TB_MERGE_WANTED && !last) {
                // The tree buddy has the leaves only in pieces: merge, then try again.
                *merge = order;
                status = HEAP_OUT_OF_MEMORY;
                stopped = true;
            } else if (none && order > 0u) {
                // A bin of several leaves needs a free block of its order, which a heap
                // cut up by smaller blocks may lack (or the tree buddy may not merge one
                // while others wait on the smaller order), and as many free leaves: bins of
                // one leaf will do.
                one_leaf = true;
            } else if (leaf.status == HEAP_OUT_OF_MEMORY && !retried) {
                // Empty bins waiting to be given back go back first (a malloc of another
                // class may need their leaves).
                retried = true;
                retry = true;
            } else if (producers && none) {
                starved = true;
            } else if (none && !confirmed) {
                confirmed = true;
            } else if (none) {
                // Out of memory unless blocks are there now: bins in production elsewhere
                // are as likely to find no leaf, and waiting for them with every other
                // malloc of a full heap only runs out the rounds.
                status = leaf.status;
                stopped = true;
            }
            continue;
        }
        if (bin == SB_NONE) {
            continue;
        }
        let handle = ua_claim_bit(bin, c, bin_blocks, bsem_ticket ^ round);
        if (handle != HEAP_NULL) {
            result = HeapAlloc(handle, 1u << c, HEAP_OK);
        } else {
            ua_return_unused_count(bin, c);
            atomicAdd(&heap_meta[UA_BIT_FAILURES], 1u);
        }
        done = true;
    }
    if (done) {
        return result;
    }
    if (holding) {
        bsem_signal(s, 1u, 0u);
        atomicAdd(&heap_meta[UA_CLAIM_FAILURES], 1u);
    } else if (status == HEAP_CONTENTION) {
        atomicAdd(&heap_meta[UA_WAIT_FAILURES], 1u);
    }
    bsem_abandon(s, 1u, &wait);
    return HeapAlloc(HEAP_NULL, 0u, status);
}

// The live bin of order k that would hold leaf `leaf`: its first leaf and state word, or
// SB_NONE. A bin of class c is an aligned block of 2^ua_bin_order(c) leaves whose first
// leaf's state word is live.
fn ua_bin_at(leaf: u32, k: u32) -> vec2<u32> {
    let head = leaf & ~((1u << k) - 1u);
    let state = atomicLoad(&heap_meta[UA_STATE + head]);
    if ((state & UA_LIVE) != 0u && ua_order_of(state) == k) {
        return vec2<u32>(head, state);
    }
    return vec2<u32>(SB_NONE, 0u);
}

// The live bin that holds leaf `leaf`, looked for at every order.
fn ua_bin_of(leaf: u32) -> vec2<u32> {
    var found = vec2<u32>(SB_NONE, 0u);
    for (var k = 0u; k <= UA_MAX_BIN_ORDER && found.x == SB_NONE; k++) {
        found = ua_bin_at(leaf, k);
    }
    return found;
}

fn ua_free(ptr: u32) -> HeapFree {
    let unit = heap_unit_of(ptr);
    let leaf = unit >> UA_LEAF_SHIFT;
    if (leaf >= tb_live_leaves()) {
        return HeapFree(0u, HEAP_INVALID_FREE);
    }
    // The bin that holds the leaf: the one it starts, or the one its hint names, checked
    // against that bin's state word. A leaf that names none is a tree buddy block's, or
    // one of a fresh bin whose hint is not visible yet: every order is looked at before
    // the free is called invalid. The two loads are independent.
    let state = atomicLoad(&heap_meta[UA_STATE + leaf]);
    let hint = atomicLoad(&heap_meta[UA_HINT + leaf]);
    var found = vec2<u32>(SB_NONE, 0u);
    if ((state & UA_LIVE) != 0u) {
        found = vec2<u32>(leaf, state);
    } else if (hint != 0u && hint <= UA_CLASSES) {
        found = ua_bin_at(leaf, ua_bin_order(hint - 1u));
    }
    if (found.x == SB_NONE) {
        let block = tb_free(ptr);
        if (block.status == HEAP_OK) {
            return block;
        }
        found = ua_bin_of(leaf);
        if (found.x == SB_NONE) {
            return block;
        }
    }
    let bin = found.x;
    let c = found.y & UA_CLASS_MASK;
    let offset = unit - (bin << UA_LEAF_SHIFT);
    if ((offset & ((1u << c) - 1u)) != 0u) {
        return HeapFree(0u, HEAP_INVALID_FREE);
    }
    let block = offset >> c;
    let bit = 1u << (block & 31u);
    // A subgroup's blocks of a bin lie in few words (ua_collective_place), so its frees
    // share their words' atomics.
    let old = heap_clear_bit(UA_BITMAP + UA_BITMAP_WORDS * bin + (block >> 5u), bit);
    if ((old & bit) == 0u) {
        return HeapFree(0u, HEAP_INVALID_FREE);
    }
#ifdef GPU_HEAP_SUBGROUPS
    ua_release(bin, c, unit);
#else
    ua_give_count(bin, c);
    ua_retry_give_back(c, unit);
#endif
    return HeapFree(1u << c, HEAP_OK);
}

#ifdef GPU_HEAP_SUBGROUPS
// The collective release of section 4.2.2, for the lanes of a subgroup that freed a block
// of bin `bin`, class c (each has cleared its bit): the lanes of the first one's bin
// return their counts with one atomic; the lanes of the first one's class give back the
// bins their frees left empty together: those bins' blocks leave the semaphore netted
// against the lanes' own units (all or none: if it cannot spare them all, every one
// becomes a candidate, as in ua_give_back), each bin's compare-exchange, then one signal
// for the units left over and the blocks of bins found in use, and one count of the
// leaves that went back. Every give-back and every free would otherwise be an atomic on
// the same two or three words as all others of the class (thousands of bins a dispatch
// at 256 B to 2 KiB). Lanes of other classes free alone.
fn ua_release(bin: u32, c: u32, unit: u32) {
    let same_bin = bin == subgroupBroadcastFirst(bin);
    let n = select(1u, subgroupAdd(select(0u, 1u, same_bin)), same_bin);
    let acts = !same_bin || subgroupExclusiveAdd(select(0u, 1u, same_bin)) == 0u;
    if (c != subgroupBroadcastFirst(c)) {
        if (acts) {
            ua_give_counts(bin, c, n);
        }
    } else {
        ua_release_class(bin, c, n, acts);
    }
    // One call site: the retry is large once inlined.
    if (acts) {
        ua_retry_give_back(c, unit);
    }
}

// ua_release for lanes all of class c; `n` and `acts` as there.
fn ua_release_class(bin: u32, c: u32, n: u32, acts: bool) {
    // The first lane acts for the class.
    let first = subgroupExclusiveAdd(1u) == 0u;
    var o = TB_NO_ORDER; // the order of this lane's bin if its frees emptied it
    if (acts) {
        o = ua_return_counts(bin, c, n);
    }
    let empty = o != TB_NO_ORDER;
    // The signals come after every lane's add has returned, so a malloc that takes one of
    // these units finds the count in its bin.
    let s = ua_sem(c);
    let freed = subgroupAdd(select(0u, n, acts));
    let mine = select(0u, ua_blocks_at(c, o), empty); // the blocks of this lane's empty bin
    let emptied = subgroupAdd(mine);
    var unsignalled = freed; // the first lane's: units these frees add to the semaphore
    if (emptied > 0u) {
        // The emptied bins' blocks leave the semaphore before the bins leave the class,
        // netted against these frees' own units: where those cover the blocks (a subgroup
        // that freed whole bins) the rest is signalled, else the difference is taken from
        // the count, one atomic on the word that every malloc and free of the class hits
        // where a signal and a take would be two. Either only while no malloc of the
        // class waits or holds units; otherwise the units are signalled and the bins stay
        // candidates for a later give-back. The units beyond the blocks are signalled
        // first: another release may be taking them (ua_take_for_give_back).
        let covered = min(freed, emptied);
        var took = false;
        if (first) {
            bsem_signal(s, freed - covered, 0u);
            unsignalled = covered;
            took = ua_take_for_give_back(c, emptied - covered);
            if (took) {
                unsignalled = 0u;
            }
        }
        took = subgroupBroadcastFirst(u32(took)) != 0u;
        var r = UA_RETRY_LATER;
        if (empty && took) {
            r = ua_retire(bin, c, o);
        }
        if (empty && r == UA_RETRY_LATER) {
            ua_list(c, bin);
        }
        // The bins that went back, counted per order: the class's, and single leaves.
        let retired = empty && r == UA_RETIRED;
        let gone = subgroupAdd(select(0u, 1u, retired));
        let gone_leaves = subgroupAdd(select(0u, 1u, retired && o != ua_bin_order(c)));
        if (took) {
            unsignalled += emptied - subgroupAdd(select(0u, mine, retired));
        }
        if (first && gone > gone_leaves) {
            tb_count_given(ua_bin_order(c), gone - gone_leaves);
        }
        if (first && gone_leaves > 0u) {
            tb_count_given(0u, gone_leaves);
        }
    }
    if (first) {
        bsem_signal(s, unsignalled, 0u);
    }
}
#endif

fn strategy_malloc(size_bytes: u32) -> HeapAlloc {
    return ua_malloc(size_bytes);
}

fn strategy_free(ptr: u32) -> HeapFree {
    return ua_free(ptr);
}
