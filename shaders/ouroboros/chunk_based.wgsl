// Ouroboros, chunk-based front end (ICS 2020 section 4.2, Algorithms 4 and 5), on the
// standard queue (ouro-c-s) or, through the ct_* functions of chunk_tokens.wgsl (where the
// tokens lie, how they are placed, read and removed), on virtualized queues (ouro-c-va,
// ouro-c-vl; section 5): the class queue holds tokens of chunks that have free pages; a
// bulk semaphore counts the free pages on them. malloc waits on the semaphore for one
// page, then finds a chunk whose count it can decrement and claims a page through the
// chunk's bitmask. The paper's walkers find it by walking the queue from the front; with a
// million of them each passes the removed positions and full chunks of the others, so a
// fill costs time quadratic in its size. Ours look chunks up in an index of chunks with
// free pages (a summary bitmap per class, core/summary_bitmap.wgsl); one walk in eight
// first reads a few positions of the queue from the front, which keeps the queue moving
// (cb_find). Whoever takes a chunk's last page removes its token (the paper's DEQUEUE
// mode); whoever raises a chunk's count from zero or below to above it (a free, or a
// walker undoing its decrement: the paper's RE_ENQUEUE case) puts a token back. A free
// that makes every page of the chunk free takes the chunk's pages out of the semaphore,
// removes its token and returns the chunk to the pool, so it can serve any class. Where
// subgroups exist a subgroup's mallocs of one class, and its frees of one bitmask word, go
// together (ouro_c_malloc, ouro_c_free).
//
// State per chunk c (heap_meta): OURO_CB_COUNT + c free pages not yet claimed (i32;
// OURO_CB_RETIRED, plus walkers' momentary decrements, while c is not a chunk-based page
// chunk: set for every chunk by the init pass and restored when a chunk is retired),
// OURO_CB_QUEUED + c its token state (none, queued or being placed, retired),
// OURO_CB_POS + c the position of its token (linked logs: OURO_CB_QC + c the queue chunk
// that holds it, + 1; chunk_tokens.wgsl), OURO_CB_BITS + c * OURO_CB_WORDS the bitmask
// (bit set = page free); and c's bit in class k's range of the index (cb_index_of).
//
// Queue use differs from the page-based front end: the queue is a set of tokens with a scan
// hint (front) and an insertion cursor (back), and tokens are removed where they lie.
// Standard ring: the cursor may lap the hint; an insertion that meets a live token moves on
// to the next slot; the ring has twice as many slots as the chunks the class can own
// (src/ouroboros/), so at least half of its slots are free at any time. Virtualized: a
// log whose positions only grow, old tokens moved to its back by walkers (chunk_tokens.wgsl).
// OURO_CB_POS + c holds the position of c's token in either.
//
// Invariants
//   - A page's bit is set before its count unit exists and cleared only by the invocation
//     that decremented the count, so a successful decrement always has a set bit to find;
//     a claim that reads the words while frees set bits in words it has passed can still
//     miss it, and then gives its unit back (cb_find).
//   - A chunk has at most one token, and none while it is retired: the token state moves
//     NONE -> QUEUED only by the invocation that then places the token, and retirement takes
//     it to RETIRED, from NONE or by removing the token. (Without this, a free that finds the
//     count at zero can place its token after a concurrent retirement; in lockstep SIMD
//     execution that happens whenever the lanes of one group free a whole small-batch
//     chunk. Such tokens are never removed and fill the ring, and the insertions that then
//     fail hide chunks with free pages, so mallocs fail for contention.)
//   - Only the invocation whose removal CAS took a token out moves its state on (to NONE,
//     or to RETIRED for the retirer). A walker that takes out a token it does not claim
//     from (an old one, virtualized; a full chunk's at the front, standard: ct_should_move)
//     is such a remover: it resets the state to NONE and requeues through cb_requeue, so a
//     moved token is placed at the back under the same rules; a retirer whose removal
//     misses a token being moved undoes the retirement, as for a token being placed.
//   - A token of a chunk that was returned to the pool and reused may still be read by a
//     walker that loaded it just before; the walker checks the chunk's class after its
//     decrement and undoes it if the chunk changed hands. The same check covers index bits.
//   - The index may show chunks without free pages (a walker that finds one hides it), but
//     a chunk of class k with free pages is shown: whoever raises its count from zero or
//     below, or makes it (cb_produce), sets its bit afterwards (cb_requeue, which every raise
//     reaches), and a walker that clears the bit looks at the count again afterwards
//     (cb_hide).
//
// Assumed, beyond WGSL's relaxed atomics: a read-modify-write is not reordered with a later
// load of another word by the same invocation. A remover (state -> none, then load the
// count) and a free (count + 1, then load the state) rely on it to never both miss each
// other; if both did, the chunk would keep free pages without a token until its next
// first free (helping keeps mallocs going meanwhile). It holds on x86, whose locked
// instructions are full barriers; on a GPU it is an assumption. And, as for queue chunks
// (ouroboros/chunks.wgsl): an exchange yields its old value once it has taken effect, and
// what depends on that value waits for it; cb_produce places a new chunk's token only
// after its bitmask is written.
//
// Loops, all bounded: OURO_ROUNDS rounds of the semaphore wait and OURO_FILL_PATIENCE more
// while pages it was promised are hidden or chunks are being filled; a walk of at most
// CB_FRONT_STEPS positions and CB_INDEX_LOOKUPS index lookups (summary_bitmap.wgsl bounds
// each); two reads of each of OURO_CB_WORDS words of bitmask with 32 claim attempts each;
// one insertion per placement (its bounds: chunk_tokens.wgsl); two passes of cb_requeue;
// two passes of retirement and requeue per free, with at most OURO_CB_SETTLE reads of a
// count that is in a retirement and OURO_CB_SETTLE takes of a retiring chunk's units. A
// malloc whose walks miss OURO_CB_HELP_MISSES times, or that runs out of rounds, produces
// a chunk itself (bsem_help); one that finds no memory while the class has free pages or
// chunks being filled waits on for those pages, and one that finds nothing coming goes dry
// for at most OURO_DRY_ROUNDS rounds, as in page_based.wgsl. It fails with
// HEAP_OUT_OF_MEMORY once dry with nothing coming, or when its rounds are spent and its
// last production (registered or not: ouro_help_last) finds no memory. With subgroups, a
// lane may wait through the rounds of up to CB_GROUP_TURNS lanes serving it before its
// own; a subgroup's frees group by word in at most one iteration per lane (128).

const OURO_CB_RETIRED: i32 = -16777216;
const OURO_CB_NONE: u32 = 0xffffffffu;
// Token states (OURO_CB_QUEUED + c). A chunk has at most one token: only the invocation that
// moves the state from NONE to QUEUED (or cb_produce, which owns a chunk fresh from the
// pool) places one, and only the one that removes it moves the state back. RETIRED is set
// by retirement and kept while the chunk is in the pool, so that a late requeue from the
// chunk's previous life cannot claim it (cb_produce resets it).
const OURO_CB_TOKEN_NONE: u32 = 0u;
const OURO_CB_TOKEN_QUEUED: u32 = 1u;
const OURO_CB_TOKEN_RETIRED: u32 = 2u;
// Failed walks (the semaphore promised a page, the walk found none) before a malloc stops
// taking units and produces a chunk itself.
const OURO_CB_HELP_MISSES: u32 = 8u;

// Whether adding n to a chunk count that was `old` raises it from zero or below (a full
// chunk, or one a walker's decrement holds below zero) to above: the adder then shows the
// chunk and puts its token back (FIRST_FREE, RE_ENQUEUE).
fn cb_raises(old: i32, n: u32) -> bool {
    return old <= 0 && old + i32(n) > 0;
}

// Pages `bits` of bitmask word `word` (a heap_meta index) of chunk c become free: their
// bits first, then the count, whose old value it returns (a free, or pages given back).
fn cb_free_pages(c: u32, word: u32, bits: u32) -> i32 {
    atomicOr(&heap_meta[word], bits);
    return bitcast<i32>(atomicAdd(&heap_meta[OURO_CB_COUNT + c], countOneBits(bits)));
}

fn cb_words(k: u32) -> u32 {
    return (ouro_batch(k) + 31u) / 32u;
}

// The index of chunks with free pages: summary bitmap CB_INDEX, class k's range from
// k << OURO_CB_INDEX_SHIFT, an index per chunk.
const CB_INDEX: u32 = 0u;

fn cb_index_of(k: u32, c: u32) -> u32 {
    return (k << OURO_CB_INDEX_SHIFT) + c;
}

fn cb_show(k: u32, c: u32) {
    sb_set(CB_INDEX, cb_index_of(k, c), sb_top(OURO_CB_INDEX_SHIFT));
}

// A walker found no page of class k to take on c: clear c's index bit, then read again and
// set it back if c is in k with a free page by then. The reads are atomics (atomicOr with
// 0) issued once the clear has returned: plain loads could be performed ahead of it, miss
// a free that raised the count and set the bit just before the clear, and leave c hidden
// with free pages (summary_bitmap.wgsl). A clear that found the bit clear needs no read:
// whoever raises the count sets the bit after it.
fn cb_hide(k: u32, c: u32) {
    if (sb_try_clear(CB_INDEX, cb_index_of(k, c))
        && atomicOr(&heap_meta[OURO_CHUNK_INFO + c], 0u) == k + 1u
        && bitcast<i32>(atomicOr(&heap_meta[OURO_CB_COUNT + c], 0u)) > 0) {
        cb_show(k, c);
    }
}

// Places a token for chunk c (whose token state the caller set to queued) through the
// token storage (chunk_tokens.wgsl). If no place can be had (standard ring: racing
// insertions filled a lap; virtualized: no queue chunk), the state goes back to none so
// that a later free tries again.
fn cb_enqueue(k: u32, c: u32) -> bool {
    if (ct_insert(k, c)) {
        return true;
    }
    atomicStore(&heap_meta[OURO_CB_QUEUED + c], OURO_CB_TOKEN_NONE);
    return false;
}

// Shows c in class k's index and puts a token for it in the queue of class k unless one is
// there or being placed, or the chunk is being retired (OURO_CB_TOKEN_RETIRED). The caller
// saw c's count leave zero while c was in class k, but it may have been slow: meanwhile c
// can have been retired and handed to another class. So the class is checked after the
// token state is claimed; if c moved, the claim is dropped and the token, if c's count
// calls for one, is placed in the queue of the class c is in now (the same as a
// DEQUEUE-mode remover does). Two passes at most: the second starts from the class that
// was just read. True if it placed the token in the queue of class k.
fn cb_requeue(k: u32, c: u32) -> bool {
    var cls = k;
    for (var attempt = 0u; attempt < 2u; attempt++) {
        // The index first: the caller saw free pages on c, which walkers can take with or
        // without a token.
        cb_show(cls, c);
        if (atomicLoad(&heap_meta[OURO_CB_QUEUED + c]) != OURO_CB_TOKEN_NONE) {
            return false;
        }
        let x = atomicCompareExchangeWeak(&heap_meta[OURO_CB_QUEUED + c], OURO_CB_TOKEN_NONE, OURO_CB_TOKEN_QUEUED);
        if (!x.exchanged) {
            if (x.old_value != OURO_CB_TOKEN_NONE) {
                return false;
            }
            continue; // a spurious weak-CAS failure: try again
        }
        let owner = atomicLoad(&heap_meta[OURO_CHUNK_INFO + c]);
        if (owner == cls + 1u) {
            return cb_enqueue(cls, c) && cls == k;
        }
        // c changed hands: release our claim (a read-modify-write, so that the count load
        // stays after it; only our own claim, never a state someone else set), then
        // requeue for the new owner if it has free pages on c.
        atomicCompareExchangeWeak(&heap_meta[OURO_CB_QUEUED + c], OURO_CB_TOKEN_QUEUED, OURO_CB_TOKEN_NONE);
        if (owner == 0u || owner - 1u >= OURO_BASE_CLASSES || bitcast<i32>(atomicLoad(&heap_meta[OURO_CB_COUNT + c])) <= 0) {
            return false;
        }
        cls = owner - 1u;
    }
    return false;
}

// Claims up to n set bits of one word of chunk c's bitmask (the caller holds n count units
// for them): the word and the bits it claimed, or no bits.
// Each word is read twice at most: a page freed into a word already read can be found on
// the second pass.
fn cb_claim_bits(k: u32, c: u32, spread: u32, n: u32) -> vec2<u32> {
    let words = cb_words(k);
    let base = OURO_CB_BITS + c * OURO_CB_WORDS;
    for (var i = 0u; i < 2u * words; i++) {
        let w = (spread + i) % words;
        var free_bits = atomicLoad(&heap_meta[base + w]);
        for (var attempt = 0u; attempt < 32u && free_bits != 0u; attempt++) {
            let pick = heap_lowest_bits(free_bits, n);
            let old = atomicAnd(&heap_meta[base + w], ~pick);
            if ((old & pick) != 0u) {
                return vec2<u32>(w, old & pick);
            }
            free_bits = old & ~pick;
        }
    }
    return vec2<u32>(0u, 0u);
}

// Pages that the first lane of a subgroup's group found for the others, beyond its own
// (cb_find with want > 1): chunk, bitmask word and bits, or no bits.
var<private> cb_found_more: vec3<u32> = vec3<u32>(0u, 0u, 0u);

// The caller removed c's token (a DEQUEUE-mode claimer, or a walker moving an old token):
// the token state goes back to none, and the token is put back (at the back) if c has
// free pages.
fn cb_token_removed(c: u32) -> bool {
    // An exchange, not a store: the load below must not move before it.
    atomicExchange(&heap_meta[OURO_CB_QUEUED + c], OURO_CB_TOKEN_NONE);
    return bitcast<i32>(atomicLoad(&heap_meta[OURO_CB_COUNT + c])) > 0;
}

// One walk in this many first reads up to CB_FRONT_STEPS positions of the token set from the
// scan hint; then every walk makes up to CB_INDEX_LOOKUPS lookups in the index (cb_find).
const CB_FRONT_WALKERS: u32 = 8u;
const CB_FRONT_STEPS: u32 = 32u;
const CB_INDEX_LOOKUPS: u32 = 8u;

// Finds a chunk of class k with a free page and claims one (the caller holds a unit of the
// class semaphore for it).
// Walks look chunks up in the index of chunks with free pages, a few loads each. Reading
// the token set instead costs a load per position, a fill leaves most positions between
// the hint and the back removed, and a dispatch lasts as long as its longest walk. One walk
// in CB_FRONT_WALKERS first reads a few positions from the scan hint f (the paper's walk,
// cut short): it moves the hint past removed positions at the front (never past back,
// where insertions land) and takes out the tokens the storage says to (ct_should_move), so
// the queue keeps moving. A chunk whose count reads zero or less is passed without the
// decrement: passing a chunk is always allowed, and this keeps walkers off the atomics of
// chunks that are full. A looked-up chunk that shows no page is hidden (cb_hide).
// (NIR inlines every call: cb_requeue, which inlines an insertion, has one call site in
// the loop, taken at the end of an iteration that needs it; so do ct_remove and cb_hide.)
//
// `want`: semaphore units the caller holds for itself and for other lanes (ouro_c_malloc);
// it takes up to that many of one chunk's count and claims pages for them in one bitmask word,
// its own and the others' (cb_found_more), and gives back the count it could not use.
fn cb_find(k: u32, spread: u32, want: u32) -> u32 {
    let qm = ouro_queue_meta(k);
    let pick = heap_hash(spread ^ 0x9e3779b9u);
    let reads_tokens = pick % CB_FRONT_WALKERS == 0u;
    // Where the token set starts and ends: read (and, virtualized, the hint lifted to the
    // front) only by the walks that read it.
    var f = 0u;
    var back = 0u;
    var steps = 0u;
    if (reads_tokens) {
        f = ct_walk_start(k);
        back = atomicLoad(&heap_meta[qm + OQ_BACK]);
        steps = min(ct_walk_len(k, f), CB_FRONT_STEPS);
    }
    var leading_empty = true;
    for (var i = 0u; i < steps + CB_INDEX_LOOKUPS; i++) {
        let from_tokens = i < steps;
        var c = 0u;
        var pos = 0u;
        var at_front = false;
        if (from_tokens) {
            pos = f + i;
            let v = ct_load(k, pos);
            if (ct_passable(k, pos, v, back)) {
                if (leading_empty && back - pos - 1u < 0x80000000u) {
                    // Move the scan hint past empty (removed) positions at the front, never
                    // past back: insertions land at back or after it, and walks read
                    // [hint, back), so a hint past them would hide every new token.
                    if (atomicCompareExchangeWeak(&heap_meta[qm + OQ_FRONT], pos, pos + 1u).exchanged) {
                        ct_hint_passed(k, pos);
                    }
                }
                continue;
            }
            at_front = leading_empty;
            leading_empty = false;
            if (v == OQ_EMPTY || v == OQ_SKIP || v > OURO_CHUNKS) {
                continue; // a token still being written (virtualized log)
            }
            c = v - 1u;
        } else {
            let found = sb_search(CB_INDEX, k << OURO_CB_INDEX_SHIFT, OURO_CB_INDEX_SHIFT,
                spread + i * 0x632be5abu, 4u, 0u, false);
            if (found == SB_NONE) {
                break; // nothing in the index: a miss (ouro_c_malloc)
            }
            c = found;
            // Where c's token is, if it has one: the removal below checks that it is there.
            pos = atomicLoad(&heap_meta[OURO_CB_POS + c]);
        }
        var requeue_class = OURO_CB_NONE;
        var found = OURO_CB_NONE;
        let count = bitcast<i32>(atomicLoad(&heap_meta[OURO_CB_COUNT + c]));
        // A token is taken out by a walker that does not claim its chunk's last page when
        // the storage says so (ct_should_move): an old one near the front of a virtualized
        // log, so the front can pass its position, and on the standard ring the token of a
        // full chunk that the front walker meets first. Put back below like a DEQUEUE-mode
        // removal if its chunk has free pages. Walks through the index leave tokens where
        // they are.
        var remove = from_tokens && ct_should_move(k, pos, back,
            at_front && count <= 0 && count > OURO_CB_RETIRED / 2);
        if (!remove && count > 0) {
            let t = min(want, u32(count));
            let old = bitcast<i32>(atomicSub(&heap_meta[OURO_CB_COUNT + c], t));
            var used = 0u;
            if (old >= 1 && atomicLoad(&heap_meta[OURO_CHUNK_INFO + c]) == k + 1u) {
                // DEQUEUE mode (old <= t): we take the last free pages; the token goes out
                // below, and back in if frees arrived meanwhile.
                remove = old <= i32(t);
                let claim = cb_claim_bits(k, c, spread, min(u32(old), t));
                // Our pages' bits can be in a word the claim read before a free set them
                // (each word is read twice; with many claimants it can still miss): the
                // count units without a page are given back below.
                if (claim.y != 0u) {
                    let first = firstTrailingBit(claim.y);
                    found = (claim.x << 5u) + first;
                    cb_found_more = vec3<u32>(c, claim.x, claim.y & ~(1u << first));
                    used = countOneBits(claim.y);
                }
            }
            if (used < t) {
                // Undo what we do not use: nothing to take here, the chunk changed hands, or
                // fewer pages than units. If the undo raises the count from zero or below,
                // our decrement may have made a claimer think it took the last page (it then
                // removed the token) or a free think it was not the first: the token is ours
                // to put back (RE_ENQUEUE), into the queue of the chunk's current class.
                let back_count = bitcast<i32>(atomicAdd(&heap_meta[OURO_CB_COUNT + c], t - used));
                let owner = atomicLoad(&heap_meta[OURO_CHUNK_INFO + c]);
                if (cb_raises(back_count, t - used) && owner != 0u
                    && owner - 1u < OURO_BASE_CLASSES) {
                    requeue_class = owner - 1u;
                }
            }
        }
        if (!from_tokens && (found == OURO_CB_NONE || remove)) {
            cb_hide(k, c); // full, retired, another class's, or its last page is ours
        }
        // One call site each for the removal and the requeue (NIR inlines them).
        if (remove && ct_remove(k, pos, c + 1u) && cb_token_removed(c)) {
            requeue_class = k;
        }
        if (requeue_class != OURO_CB_NONE) {
            cb_requeue(requeue_class, c);
        }
        if (found != OURO_CB_NONE) {
            return (c << OURO_CHUNK_SHIFT) + found * ouro_page_units(k);
        }
    }
    return OURO_CB_NONE;
}

// Chunk c leaves its class for the pool: the class's count and the reserve ticket
// (ouro_reserve_take) go back with it.
fn cb_chunk_leaves(qm: u32, c: u32) {
    ouro_class_chunk_give(qm);
    ouro_reserve_give(1u);
    ouro_chunk_free(c);
}

// A new chunk for class k: pages 0 to keep - 1 for the caller (page 0) and the other lanes
// of its piece (ouro_c_malloc), the others free in its bitmask with a token in the queue
// (none if keep is the whole chunk).
// `retire`: the batches its signals retire (as for ouro_p_produce; 0 for a chunk made
// without the semaphore's word: a subgroup's, or a last production).
fn cb_produce(k: u32, retire: u32, keep: u32) -> HeapAlloc {
    let qm = ouro_queue_meta(k);
    let batch = ouro_batch(k);
    // Filling from the start where a chunk is in sight: the class's chunk count, the
    // reserve and the pool are atomics on words every producer hits, and a malloc that
    // meanwhile finds no pages and none being filled spends its rounds, or reports out of
    // memory, while this chunk's pages are on their way. Not where none is (a full heap, a
    // class at its limit, the queue reserve reached): failing producers would keep the
    // filling count up, so that mallocs with nothing coming never go dry and repeat their
    // failing productions round after round (page_based.wgsl's VAQ producer, too, begins
    // only once it has seen a chunk for its class).
    let early = ouro_chunk_in_sight(k, qm);
    if (early) {
        ouro_fill_begin(k);
    }
    var c = OURO_NO_CHUNK;
    if (ouro_class_chunk_take(k, qm, retire)) {
        if (ouro_reserve_take(k, 1u)) {
            c = ouro_chunk_alloc();
            if (c == OURO_NO_CHUNK) {
                ouro_reserve_give(1u);
            }
        }
        if (c == OURO_NO_CHUNK) {
            ouro_production_failed(qm, retire);
        }
    }
    if (c == OURO_NO_CHUNK) {
        if (early) {
            ouro_fill_end(k);
        }
        return HeapAlloc(HEAP_NULL, 0u, HEAP_OUT_OF_MEMORY);
    }
    if (!early) {
        ouro_fill_begin(k);
    }
    let words = cb_words(k);
    let base = OURO_CB_BITS + c * OURO_CB_WORDS;
    // Exchanges (ouro_settle), and the token placed below only under a condition on their
    // old values (`settled`, as ouro_queue_chunk_ready does for queue chunks). c's bitmask
    // from its previous life says every page is free; had a relaxed store here taken
    // effect after the token was placed, a walker that found the token could have claimed
    // page 0, which is ours. At most OURO_CB_WORDS exchanges.
    var settled = 0u;
    for (var w = 0u; w < words; w++) {
        settled += ouro_settle(base + w, cb_free_bits(w, batch) & ~cb_free_bits(w, keep));
    }
    // Relative, never a store: a walker that read this chunk's token in its previous life
    // may be between its decrement and its undo; an add keeps that pair balanced. Every
    // chunk's count is OURO_CB_RETIRED while it is not a chunk-based page chunk (set by the
    // init pass, restored by retirement).
    let left = batch - keep;
    let was = bitcast<i32>(atomicAdd(&heap_meta[OURO_CB_COUNT + c], left - bitcast<u32>(OURO_CB_RETIRED)));
    if (left > 0u) {
        atomicStore(&heap_meta[OURO_CB_QUEUED + c], OURO_CB_TOKEN_QUEUED);
        // ct_insert, not cb_enqueue: on failure the state must go straight from queued to
        // retired below. Through none, a late requeue from c's previous life could claim
        // the pooled chunk and later clear the state of c's next life while its token is
        // in the queue, letting a second token in.
        // settled <= words always holds; the condition keeps the insertion after the
        // exchanges.
        if (settled > words || !ct_insert(k, c)) {
            // No place for the token (a virtualized queue found no queue chunk: the heap is
            // full). Undo and report out of memory, as a page-based producer whose queue
            // takes nothing does. Nobody can have claimed a page of c: it has no token, and
            // a walker holding a token of c's previous life finds c's class unset (it is
            // set below, once the token is placed) and undoes its decrement.
            atomicSub(&heap_meta[OURO_CB_COUNT + c], left - bitcast<u32>(OURO_CB_RETIRED));
            atomicStore(&heap_meta[OURO_CB_QUEUED + c], OURO_CB_TOKEN_RETIRED);
            cb_chunk_leaves(qm, c);
            bsem_signal(qm, 0u, retire);
            ouro_fill_end(k);
            return HeapAlloc(HEAP_NULL, 0u, HEAP_OUT_OF_MEMORY);
        }
    } else {
        // Every page is the caller's piece's: no token and no index bit until a first free
        // (a late requeue of c's previous life that claims this state finds the class unset
        // and drops its claim; a free that meanwhile saw it claimed leaves c without a
        // token, shown in the index all the same).
        atomicStore(&heap_meta[OURO_CB_QUEUED + c], OURO_CB_TOKEN_NONE);
    }
    // Shown only once the count and the class have taken effect: a walker that finds the
    // bit reads both, and one that read them old would hide c for good. The stamp also
    // waits for the exchanges, so a chunk with no token is found (after its first free)
    // with its bitmask of this life. (`settled <= words` and the stamp are always true and
    // `was` is always below zero, the retired count: the conditions wait for the atomics
    // without changing the outcome.)
    let stamped = settled <= words && ouro_stamp(OURO_CHUNK_INFO + c, k + 1u);
    if (left > 0u && stamped && was < 0) {
        cb_show(k, c);
    }
    bsem_signal(qm, left, retire);
    ouro_fill_end(k);
    if (keep > 1u) {
        cb_made = c; // for the other lanes of the piece
    }
    return ouro_grant(c << OURO_CHUNK_SHIFT, ouro_page_units(k));
}

// The chunk this invocation made for the other lanes of its piece (cb_produce with
// keep > 1), or OURO_NO_CHUNK.
var<private> cb_made: u32 = OURO_NO_CHUNK;

// The bits of bitmask word w that pages 0 to n - 1 have.
fn cb_free_bits(w: u32, n: u32) -> u32 {
    let first = w << 5u;
    if (n <= first) {
        return 0u;
    }
    if (n - first >= 32u) {
        return 0xffffffffu;
    }
    return (1u << (n - first)) - 1u;
}

// Turns in which a subgroup's lanes that took their units together are served together
// (ouro_c_malloc): each serves at least its first lane. A group's tag has 3 bits for its turn.
const CB_GROUP_TURNS: u32 = 4u;
const_assert CB_GROUP_TURNS < 8u;

#ifdef GPU_HEAP_SUBGROUPS
// This invocation's chunk-based mallocs so far, which with a lane and a turn name a group of
// the hand-over (cb_group_tag).
var<private> cb_calls: u32 = 0u;

// The tag of the group formed at `turn` behind lane `first` in its malloc number `calls`. A
// lane forms one group per malloc and turn, so lanes that meet with equal tags formed their
// group together (a lane would have to fall 2^22 mallocs behind another of its subgroup to
// mistake a later group of it for its own).
fn cb_group_tag(calls: u32, first: u32, turn: u32) -> u32 {
    return (calls << 10u) | (first << 3u) | turn;
}

// What a serving lane has for the lanes it serves, in one vector: its group's tag, then the
// chunk, bitmask word and bits it claimed for them (`took`), or the chunk it made for its
// piece (OURO_CB_NONE, no bits).
fn cb_offer(tag: u32, took: bool) -> vec4<u32> {
    return select(vec4<u32>(tag, cb_made, OURO_CB_NONE, 0u), vec4<u32>(tag, cb_found_more), took);
}

// Pages a serving lane had for lanes that did not take them (they met it elsewhere, or
// not at all): back to chunk c as if freed, bits set first, then the count. A raise of the
// count from zero or below shows c in the index (the token follows with the chunk's next
// first free; mallocs find it through the index meanwhile). `signal`: the pages were never
// counted by the semaphore (a fresh chunk's), so their units are signalled too; pages the
// group took units for are not, since the lanes they were for still hold those units.
// Never retires c: a chunk left whole here stays with its class.
fn cb_give_back(k: u32, c: u32, word: u32, bits: u32, signal: bool) {
    if (bits == 0u) {
        return;
    }
    let n = countOneBits(bits);
    if (cb_raises(cb_free_pages(c, OURO_CB_BITS + c * OURO_CB_WORDS + word, bits), n)) {
        cb_show(k, c);
    }
    if (signal) {
        bsem_signal(ouro_queue_meta(k), n, 0u);
    }
}
#endif

// malloc of class k. With subgroups, the lanes of a subgroup that malloc the class of its
// first active lane begin together (the collective primitives of UAlloc, the bulk
// semaphore paper's allocator, section 4.2.2, applied to Ouroboros's chunks):
//   - one take of all their units; then the first lane takes as many of one chunk's count
//     as it can use and claims their pages in one bitmask word (cb_find with want > 1),
//     and the others take those pages by rank; lanes it did not serve regroup behind the
//     first of them, for up to CB_GROUP_TURNS turns;
//   - or, if the semaphore shows no units at all, a fresh chunk for each piece of up to a
//     chunk's pages worth of lanes, made at once by the piece's first lane without the
//     semaphore's word (an unregistered production, as ouro_help_last's), whose pages 0 to
//     n - 1 go to the piece's lanes by rank. (With a few units, too few for all, each lane
//     goes on alone: pieces would make chunks while the class has free pages.)
// A million mallocs that each wait on one semaphore word while chunks are made, and then
// each decrement a chunk's count and claim a bit, spend their time queued on those words
// (BENCHMARKS.md); a subgroup's are one take and one claim, or a few productions. A lane
// left without a page goes on alone (holding its unit if the group took them), as does
// every lane without subgroups.
//
// Where lanes split and meet again is up to the device (WGSL and Vulkan promise no
// reconvergence). This assumes only that lanes which run one subgroup operation together
// run the next one together when no branch lies between (and, as UAlloc's collective, that
// the three operations that form a group run together); a lane that misses the others
// anywhere else loses a page or a unit to no one:
//   - the group is the lanes that meet its first lane right after its take, in the same
//     malloc (its tag: the first lane's malloc count, lane and turn, cb_group_tag, and its
//     class come with what it found), as ballots keyed by first lane show; it gives back
//     the units it took for the others;
//   - a lane takes a page only from its serving lane, met at the shuffle with its group's
//     tag, and the serving lane gives back the pages of the lanes that did not take them
//     from it, as the ballots keyed by serving lane after the shuffle show (sg_ballot_same).
// Between each shuffle and its ballots no branch lies: `&` on booleans, not `&&`, which
// compiles to a branch, and selects.
fn ouro_c_malloc(k: u32) -> HeapAlloc {
    let qm = ouro_queue_meta(k);
    var held = 0u; // units of the semaphore this lane holds for itself (and its group)
    var make = 0u; // makes a chunk at once, keeping this many pages for its piece
    var alone = true; // runs the rounds itself
    var seed = 0u;
#ifdef GPU_HEAP_SUBGROUPS
    cb_calls += 1u;
    let lead = subgroupBroadcastFirst(vec2<u32>(k, cb_calls));
    let same = k == lead.x;
    var same_mask = subgroupBallot(same);
    var lanes = sg_count(same_mask);
    var rank = subgroupExclusiveAdd(select(0u, 1u, same));
    var grouped = same && lanes > 1u;
    var took = false;
    var empty = false;
    var first_seed = 0u;
    let leader = sg_first(same_mask);
    var tag = cb_group_tag(lead.y, leader, 0u);
    if (grouped && rank == 0u) {
        took = bsem_try_take(qm, lanes);
        empty = !took && bsem_count(qm) <= 0;
        first_seed = atomicAdd(&heap_meta[qm + OQ_SPREAD], lanes);
    }
    // The group narrows to the lanes that meet its first lane here, in this malloc of theirs
    // (its tag and class come with what it found); the units it took for lanes not there go
    // back. From the ballot of the lanes here to the ballots of who joined, no branch (`&`,
    // not `&&`, which compiles to one).
    let here = subgroupBallot(true);
    let told = subgroupShuffle(vec3<u32>((k << 2u) | (u32(empty) << 1u) | u32(took), first_seed, tag), leader);
    let joins = grouped & sg_has(here, leader) & (told.z == tag) & ((told.x >> 2u) == k);
    let joined = sg_ballot_same(joins, leader);
    grouped = joins & sg_has(joined, leader);
    if (grouped && rank == 0u && took) {
        let absent = lanes - sg_count(same_mask & joined);
        if (absent > 0u) {
            bsem_signal(qm, absent, 0u);
        }
    }
    rank -= sg_count(sg_lowest(same_mask, rank) & ~joined);
    same_mask &= joined;
    lanes = sg_count(same_mask);
    took = grouped && (told.x & 1u) != 0u;
    empty = grouped && (told.x & 2u) != 0u;
    seed = told.y + rank;
    // The lane whose rounds serve this one: the group's first if it took the units, else
    // the first of its piece.
    var order = rank;
    if (took) {
        held = select(1u, lanes, rank == 0u);
        alone = rank == 0u;
    } else if (empty) {
        order = rank % min(ouro_batch(k), lanes);
        alone = order == 0u;
        make = select(0u, min(ouro_batch(k), lanes - rank), alone);
    } else {
        grouped = false;
    }
#endif
    if (held == 0u && make == 0u && alone) {
        seed = atomicAdd(&heap_meta[qm + OQ_SPREAD], 1u);
    }
    var a = HeapAlloc(HEAP_NULL, 0u, HEAP_OUT_OF_MEMORY);
    // Turns around one call site of the rounds (NIR inlines them, with a token insertion):
    // in each, the lanes still grouped are served by their first lane's rounds; then (or
    // after a piece's chunk that was not made) every lane left runs its own.
    for (var turn = 0u; turn <= CB_GROUP_TURNS; turn++) {
        if (alone) {
            cb_made = OURO_NO_CHUNK;
            cb_found_more = vec3<u32>(0u, 0u, 0u);
            a = ouro_c_rounds(k, held, make, heap_hash(seed));
        }
#ifdef GPU_HEAP_SUBGROUPS
        if (grouped) {
            // From the lane that served this one: a fresh chunk (pages by order within the
            // piece) or the pages it claimed for its group (by order after its own). From
            // the ballot of the lanes here to the ballots of what they took, no branch
            // (which page is whose is worked out after them: heap_nth_bit branches).
            let first = sg_nth_set_bit(same_mask, rank - order);
            let met_here = subgroupBallot(true);
            let offer = subgroupShuffle(cb_offer(tag, took), first);
            let has_page = select(offer.y < OURO_CHUNKS, order - 1u < countOneBits(offer.w), took);
            var served = sg_has(met_here, first) & (offer.x == tag) & (order > 0u) & has_page;
#ifdef GPU_HEAP_TEST_REFUSE_HAND_OVER
            // Tests only (tests/ouroboros_refill.rs): a hashed half of the lanes refuse what
            // their serving lane has for them, as lanes that met it elsewhere would, so that
            // the give-back and the lanes going on without it run.
            served = served & ((heap_hash(seed ^ turn) & 1u) != 0u);
#endif
            let taken = sg_ballot_same(served, first);
            let pu = ouro_page_units(k);
            let page = select(order, (offer.z << 5u) + heap_nth_bit(offer.w, order - 1u), took);
            let mine = select(OURO_CB_NONE, (offer.y << OURO_CHUNK_SHIFT) + page * pu, served);
            if (order == 0u) {
                // Serving lane (`first` is itself): give back what its lanes did not take.
                var n = countOneBits(cb_found_more.z);
                if (!took) {
                    n = select(0u, make - 1u, cb_made < OURO_CHUNKS);
                }
                let lanes_served = sg_lowest(same_mask, rank + 1u + n) & ~sg_lowest(same_mask, rank + 1u);
                if (any((lanes_served & ~taken) != vec4<u32>(0u))) {
                    var left_bits = 0u;
                    for (var i = 1u; i <= n; i++) {
                        if (!sg_has(taken, sg_nth_set_bit(same_mask, rank + i))) {
                            if (took) {
                                left_bits |= 1u << heap_nth_bit(cb_found_more.z, i - 1u);
                            } else {
                                cb_give_back(k, cb_made, i >> 5u, 1u << (i & 31u), true);
                            }
                        }
                    }
                    if (took) {
                        cb_give_back(k, cb_found_more.x, cb_found_more.y, left_bits, false);
                    }
                }
                break;
            }
            if (mine != OURO_CB_NONE) {
                return ouro_grant(mine, pu);
            }
            // Not served: each holds its unit if the group took them.
            alone = true;
            held = u32(took);
            make = 0u;
            grouped = false;
            if (took && turn + 1u < CB_GROUP_TURNS) {
                // The lanes of class k meeting here regroup behind the first of them.
                let again_lead = subgroupBroadcastFirst(vec2<u32>(k, cb_calls));
                let again = k == again_lead.x;
                same_mask = subgroupBallot(again);
                rank = subgroupExclusiveAdd(select(0u, 1u, again));
                order = rank;
                tag = cb_group_tag(again_lead.y, sg_first(same_mask), turn + 1u);
                grouped = again && sg_count(same_mask) > 1u;
                if (grouped) {
                    held = select(1u, sg_count(same_mask), rank == 0u);
                    alone = rank == 0u;
                }
            }
            if (!took) {
                seed = atomicAdd(&heap_meta[qm + OQ_SPREAD], 1u);
            }
            continue;
        }
#endif
        break;
    }
    return a;
}

// The rounds of one malloc of class k on the semaphore (the header says how they end):
// `held` > 0, it begins with that many units taken, one its own and the others for lanes of
// its group (cb_find's `want`); `make` > 0, it begins by making a chunk, keeping that many
// pages (cb_produce).
fn ouro_c_rounds(k: u32, held: u32, make: u32, seed: u32) -> HeapAlloc {
    let qm = ouro_queue_meta(k);
    let batch = ouro_batch(k);
    var st = bsem_new_wait();
    var spread = seed;
    var misses = 0u;
    var round = 0u;
    var patience = 0u;
    // Rounds since our production found no memory while no pages were coming (0: none).
    var dry = 0u;
    var first = true;
    loop {
        let last = round + 1u == OURO_ROUNDS;
        var produce = false;
        var retire = 1u;
        var keep = 1u;
        var waiting_on_pages = false;
        var r = BSEM_PENDING;
        var want = 1u;
        if (first && make > 0u) {
            produce = true;
            retire = 0u;
            keep = make;
        } else if (first && held > 0u) {
            r = BSEM_GOT;
            want = held;
        } else {
            r = ouro_take_step(qm, batch, &st, dry);
        }
        first = false;
        if (r == BSEM_GOT) {
            let unit = cb_find(k, spread, want);
            if (unit != OURO_CB_NONE) {
                return ouro_grant(unit, ouro_page_units(k));
            }
            waiting_on_pages = true;
            // The page the unit stands for is out of sight (a walker's momentary decrement
            // hides it, or its token is still being placed): give the unit back; after a
            // few such misses, help instead of waiting on (the progress rule).
            bsem_signal(qm, 1u, 0u);
            ouro_count(OURO_EV_MISSED);
            spread += 1u;
            misses += 1u;
            produce = dry == 0u && misses >= OURO_CB_HELP_MISSES && bsem_help(qm);
        } else if (r == BSEM_ALLOCATE) {
            produce = true;
        }
        if (last) {
            // Out of rounds: one last production (or out of memory).
            if (ouro_rounds_spent(dry)) {
                return HeapAlloc(HEAP_NULL, 0u, HEAP_OUT_OF_MEMORY);
            }
            if (!produce) {
                bsem_abandon(qm, 1u, &st);
                retire = ouro_help_last(qm);
                produce = true;
            }
        }
        // One call site of cb_produce (NIR inlines it, with a whole token insertion).
        if (produce) {
            let a = cb_produce(k, retire, keep);
            if (last || a.status != HEAP_OUT_OF_MEMORY) {
                return a;
            }
        }
        // No memory for a chunk of our own, but the class has free pages or others are
        // filling chunks: wait on for those pages (free pages count, not only chunks being
        // filled: a one-dispatch fill otherwise returns NULLs while as many pages are
        // free). With nothing coming, the malloc goes dry (ouro_dry_next).
        dry = ouro_dry_next(k, produce, dry);
        if (dry == OURO_DRY_OUT) {
            return HeapAlloc(HEAP_NULL, 0u, HEAP_OUT_OF_MEMORY);
        }
        // A round that missed a page the semaphore promised (it exists, hidden for a moment
        // by other walkers' decrements), or that waited while chunks of the class are being
        // filled, counts against OURO_FILL_PATIENCE first: such pages are there or on their
        // way, and a malloc that spent its rounds on them would return NULL with pages free.
        waiting_on_pages = waiting_on_pages || (r == BSEM_PENDING && ouro_batches_filling(k));
        if (waiting_on_pages && patience < OURO_FILL_PATIENCE) {
            patience += 1u;
        } else {
            round += 1u;
        }
    }
    return HeapAlloc(HEAP_NULL, 0u, HEAP_CONTENTION); // not reached: the last round returns
}

// Outcomes of cb_retire.
const CB_KEPT: u32 = 0u; // a page was taken meanwhile, or the units are not there: c stays
const CB_RETIRED: u32 = 1u;
const CB_UNDONE: u32 = 2u; // c's token was still being placed: undone, c stays

// Rounds a token placer waits for a chunk's count to leave a retirement or a walker's
// decrement before it decides whether the chunk is all free (cb_all_free).
const OURO_CB_SETTLE: u32 = 64u;

// Every page of c is free: take them out of the semaphore, retire the chunk, remove its
// token and return it to the pool (Algorithm 4, line 30). A step that fails undoes the ones
// before.
//
// The semaphore may lack the chunk's units for a moment: the other frees of c add to c's
// count before they signal, and concurrent retirements' takes dip the count while they
// check it. So a take that fails is retried (OURO_CB_SETTLE times) while every page of c
// is still free: with one take deciding, chunks whose pages are all free can stay with
// their class.
//
// `own`: units of c's pages that the caller (the free that made the count whole) holds
// and has not signalled: the take is the rest, so a retiring free makes two atomics fewer
// on the semaphore's busiest word, and a chunk of one page none. Given back (signalled)
// unless c is retired.
fn cb_retire(k: u32, c: u32, own: u32) -> u32 {
    let qm = ouro_queue_meta(k);
    let batch = ouro_batch(k);
    var taken = false;
    for (var round = 0u; round < OURO_CB_SETTLE && !taken; round++) {
        if (bitcast<i32>(atomicLoad(&heap_meta[OURO_CB_COUNT + c])) != i32(batch)) {
            break;
        }
        taken = own == batch || bsem_try_take(qm, batch - own);
    }
    if (!taken) {
        bsem_signal(qm, own, 0u);
        return CB_KEPT;
    }
    let x = atomicCompareExchangeWeak(&heap_meta[OURO_CB_COUNT + c], batch, bitcast<u32>(OURO_CB_RETIRED));
    if (!x.exchanged) {
        bsem_signal(qm, batch, 0u);
        return CB_KEPT;
    }
    // Take the token state to retired: straight from "no token" (then no requeue can start:
    // cb_requeue only claims "no token"), or by removing the token where it was placed. A
    // token still being placed (its position not yet recorded) cannot be removed: the
    // retirement is undone, and its placer looks again (ouro_c_free).
    let q = atomicCompareExchangeWeak(&heap_meta[OURO_CB_QUEUED + c], OURO_CB_TOKEN_NONE, OURO_CB_TOKEN_RETIRED);
    var token_gone = q.exchanged;
    if (!token_gone && q.old_value == OURO_CB_TOKEN_QUEUED) {
        let pos = atomicLoad(&heap_meta[OURO_CB_POS + c]);
        if (ct_remove(k, pos, c + 1u)) {
            atomicStore(&heap_meta[OURO_CB_QUEUED + c], OURO_CB_TOKEN_RETIRED);
            token_gone = true;
        }
    }
    if (token_gone) {
        cb_chunk_leaves(qm, c);
        return CB_RETIRED;
    }
    let back = bitcast<i32>(atomicAdd(&heap_meta[OURO_CB_COUNT + c], batch - bitcast<u32>(OURO_CB_RETIRED)));
    bsem_signal(qm, batch, 0u);
    // Shown once the undo has taken effect (`back` is always below zero, the retired count:
    // the condition waits for the atomic). A show that took effect before it could be
    // cleared by a walker that then read the retired count and left c hidden for good;
    // this one comes after. The caller requeues c.
    if (back < 0) {
        cb_show(k, c);
    }
    return CB_UNDONE;
}

// Whether every page of c is free, once c's count is out of a retirement or a walker's
// decrement (waits a bounded number of rounds for that; false if it does not end).
fn cb_all_free(c: u32, batch: u32) -> bool {
    for (var round = 0u; round < OURO_CB_SETTLE; round++) {
        // A read-modify-write, so that it stays after the token placement before it.
        let n = bitcast<i32>(atomicOr(&heap_meta[OURO_CB_COUNT + c], 0u));
        if (n >= 0) {
            return n == i32(batch);
        }
    }
    return false;
}

// The pages of one bitmask word that the lanes of a subgroup free together: for the first
// lane of each word, how many and their bits; (0, 0) for the others. Lanes that free pages
// of the word of the first lane still looking join it, one word per iteration, so a
// subgroup's frees of the pages it got together (ouro_c_malloc) cost one atomic on the
// word and one on the chunk's count, where they would queue one each per lane. Every
// subgroup operation is among the lanes that meet at it, so lanes that do not reconverge
// only free in smaller groups. Without subgroups: (1, bit). At most one iteration per lane
// of a subgroup (128).
fn cb_free_together(word: u32, bit: u32) -> vec2<u32> {
#ifdef GPU_HEAP_SUBGROUPS
    for (var i = 0u; i < 128u; i++) {
        if (word == subgroupBroadcastFirst(word)) {
            let n = subgroupAdd(1u);
            let bits = subgroupOr(bit);
            if (subgroupExclusiveAdd(1u) == 0u) {
                return vec2<u32>(n, bits);
            }
            return vec2<u32>(0u, 0u);
        }
    }
#endif
    return vec2<u32>(1u, bit);
}

// Signals the n units of a free of class k that does not retire its chunk. With subgroups,
// the lanes doing so for the class of the first of them signal together: one atomic on the
// semaphore's count where there would be one per lane.
fn cb_signal_frees(qm: u32, k: u32, n: u32) {
#ifdef GPU_HEAP_SUBGROUPS
    if (k == subgroupBroadcastFirst(k)) {
        let all = subgroupAdd(n);
        if (subgroupExclusiveAdd(1u) == 0u) {
            bsem_signal(qm, all, 0u);
        }
        return;
    }
#endif
    bsem_signal(qm, n, 0u);
}

fn ouro_c_free(unit: u32, k: u32) -> HeapFree {
    let qm = ouro_queue_meta(k);
    let pu = ouro_page_units(k);
    let batch = ouro_batch(k);
    let c = unit >> OURO_CHUNK_SHIFT;
    let page = (unit & (OURO_CHUNK_UNITS - 1u)) / pu;
    let word = OURO_CB_BITS + c * OURO_CB_WORDS + (page >> 5u);
    let pages = cb_free_together(word, 1u << (page & 31u));
    if (pages.x == 0u) {
        return HeapFree(pu, HEAP_OK); // freed by the first lane of its word
    }
    let n = pages.x;
    let old = cb_free_pages(c, word, pages.y);
    // The free that makes the count whole retires the chunk, with its units (cb_retire);
    // the one that raises it from zero (FIRST_FREE) puts its token back. (From zero or
    // below: a walker's momentary decrement can hold it below zero, and its undo then no
    // longer raises it from zero when n > 1.)
    var retire = old + i32(n) == i32(batch);
    var requeue = cb_raises(old, n);
    var own = n;
    if (!retire) {
        cb_signal_frees(qm, k, n);
        own = 0u;
    }
    // Two passes, one call site each of cb_retire and cb_requeue (NIR inlines them). On a
    // GPU the first and the last free of a chunk often run side by side; a retirement that
    // finds the token still being placed is undone, so the placer, once its token is in,
    // retires the chunk if every page is free by then (without this, chunks of a heap
    // filled with small blocks and emptied again stay with their class).
    for (var step = 0u; step < 2u; step++) {
        if (retire) {
            let r = cb_retire(k, c, own);
            own = 0u; // retired with c, or given back
            if (r == CB_RETIRED) {
                break;
            }
            // Undone: a remover may have seen the retired count and left the token out.
            requeue = requeue || r == CB_UNDONE;
        }
        if (!requeue) {
            break;
        }
        requeue = false;
        retire = cb_requeue(k, c) && cb_all_free(c, batch);
    }
    return HeapFree(pu, HEAP_OK);
}
