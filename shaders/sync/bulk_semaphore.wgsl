// The bulk semaphore (Gelado & Garland, PPoPP 2019, section 3.3; used by Ouroboros as its
// queues' access primitive, ICS 2020 section 3.4, Algorithm 2), in portable 32-bit WGSL.
//
// Provides, for a semaphore at word `s` of heap_meta (two words):
//   bsem_try_take(s, n) -> bool        take n units if C >= n (the fast path)
//   bsem_step(s, n, batch, st, look_first) -> u32
//                                      one round of wait(n, batch): BSEM_GOT, BSEM_ALLOCATE
//                                      (the caller must produce a batch now) or BSEM_PENDING;
//                                      `look_first`: read C before a take
//   bsem_abandon(s, n, st)             leave a wait that ran out of rounds (drops a reservation)
//   bsem_help(s) -> bool               register a batch unconditionally: the caller produces it
//   bsem_signal(s, n, batches)         add n units to C and retire `batches` expected batches
//   bsem_count(s) -> i32               C, for readers and tests
//   bsem_ticket                        C before the calling invocation's last successful
//                                      take: distinct among concurrent takers, a seed for
//                                      where the taker looks for its unit
//
// The three counters of the paper and their packing (no 64-bit atomics in portable WGSL):
//   word s + 0   C, the units available now, as an i32 in a u32 (the fast path's atomicSub
//                may drive it below zero for a moment before it gives the units back)
//   word s + 1   E << 20 | R: E (12 bits) the batches being produced, R (20 bits) the units
//                reserved by waiting invocations
// E counts batches, not units: every semaphore has one fixed batch size (the pages of one
// chunk), so E * batch is the paper's expected count, and 12 bits allow 4095 batches in
// production at once per semaphore, 20 bits about a million waiters.
//
// Why two words are enough (the correctness argument):
//   - Only C carries units. It changes only by atomicSub(n) of a taker (undone by an
//     atomicAdd(n) when the taker finds fewer than n) and by atomicAdd(n) in signal. Each is
//     one atomic on one word, so every unit signalled is taken at most once and no unit
//     appears from nowhere: after a dispatch, C = initial + signalled - taken, exactly.
//   - E and R share one word, so each of their updates (an atomicAdd/atomicSub checked
//     against the old value it returns and undone if it lost, or a single CAS attempt) is
//     atomic with respect to both; no invocation retries a CAS until it wins. Every E
//     increment is matched by exactly one signal (or undo) that retires it, every R
//     increment by exactly one decrement, so E = R = 0 once all calls have returned.
//   - E and R only decide WHO produces a batch and who waits. The decision reads C and then
//     updates word 1, so C may move in between. A stale C can make an invocation produce a
//     batch that was not needed (the units still enter C: nothing lost) or reserve and wait
//     for units that do not come; that wait is bounded (BSEM_WAIT_ROUNDS, extended while
//     batches are in production, but only while one of them retires at least every
//     BSEM_STALL_ROUNDS rounds: a producer may not be scheduled at all) and then turns its
//     reservation into a batch of its own (it helps).
//   - Saturation: a reservation is made only if R has room (checked by its CAS). An E
//     increment past E_MAX is undone at once by the invocation that made it (it sees E in
//     the old value); until then E's overflow has left the word (modulo 2^32), which only
//     skews who produces. R never carries into E.
//
// Progress rule (docs/architecture.md): nothing here loops. bsem_step does one bounded
// piece of work per call; the caller drives it from its own bounded loop and puts its batch
// production inside the same loop, so that invocations of one SIMD group that wait (lanes
// still in the loop) do not block the lane producing the batch (see docs/architecture.md: a
// spin loop whose critical section sits outside the loop hangs, one with it inside
// completes).
//
// Orderings: all WGSL atomics are relaxed. Producers write the units' storage (queue slots)
// before they signal; consumers still wait, bounded, for a slot's content (queues/).

const BSEM_GOT: u32 = 0u;
const BSEM_ALLOCATE: u32 = 1u;
const BSEM_PENDING: u32 = 2u;

// BSEM_R_BITS is declared on the host (src/ouroboros/shared.rs), which reads the word back.
#include "../generated/shared.wgsl"
const BSEM_R_MASK: u32 = 0xfffffu;
const BSEM_E_ONE: u32 = 0x100000u;
const BSEM_E_MAX: u32 = 0xfffu;
// Rounds a reserved invocation waits for someone else's batch before producing its own.
const BSEM_WAIT_ROUNDS: u32 = 64u;
// Windows of this many rounds: a waiter that saw E >= f in every reading of a whole window
// (its first window also covers its first BSEM_WAIT_ROUNDS rounds) takes f batches as
// stalled and may force one batch more, kept only if the E it replaces is <= f (and below
// E_MAX). Waiters' windows are their own, so while a stall lasts each waiter keeps at most
// one forced batch per window, and only while E has not risen past its floor: a producer
// that is never scheduled costs a few batches, not every waiter's rounds. Callers that
// give up waiting sooner (the tree buddy and UAlloc help after 32 rounds) never reach it;
// it bounds the trust of those that wait longer (the semaphores benchmark, the tests).
const BSEM_STALL_ROUNDS: u32 = 1024u;

const BSEM_FRESH: u32 = 0u;
const BSEM_RESERVED: u32 = 1u;

// The per-call state of one wait: whether it holds a reservation, and how many rounds it
// has waited in all (never reset, so the switch to helping cannot be postponed forever).
struct BsemWait {
    phase: u32,
    waited: u32,
    low: u32,   // least E read in the current window
    floor: u32, // least E read in the last whole window (0 until one ends)
}

fn bsem_new_wait() -> BsemWait {
    return BsemWait(BSEM_FRESH, 0u, BSEM_E_MAX, 0u);
}

fn bsem_seen(st: ptr<function, BsemWait>, word: u32) {
    (*st).low = min((*st).low, word >> BSEM_R_BITS);
}

// One round waited; at the end of a window its least E becomes the floor.
fn bsem_waited(st: ptr<function, BsemWait>) {
    (*st).waited += 1u;
    let past = (*st).waited - min((*st).waited, BSEM_WAIT_ROUNDS);
    if (past > 0u && past % BSEM_STALL_ROUNDS == 0u) {
        (*st).floor = (*st).low;
        (*st).low = BSEM_E_MAX;
    }
}

fn bsem_count(s: u32) -> i32 {
    return bitcast<i32>(atomicLoad(&heap_meta[s]));
}

var<private> bsem_ticket: u32 = 0u;

// Algorithm 2, lines 2-6: take n units if there are n; otherwise give them back.
fn bsem_try_take(s: u32, n: u32) -> bool {
    let old = bitcast<i32>(atomicSub(&heap_meta[s], n));
    if (old >= i32(n)) {
        bsem_ticket = u32(old);
        return true;
    }
    atomicAdd(&heap_meta[s], n);
    return false;
}

fn bsem_signal(s: u32, n: u32, batches: u32) {
    // C first: between the two updates the expected availability is over-estimated, which at
    // worst makes someone reserve and wait (bounded) instead of producing a batch.
    if (n > 0u) {
        atomicAdd(&heap_meta[s], n);
    }
    if (batches > 0u) {
        atomicSub(&heap_meta[s + 1u], batches * BSEM_E_ONE);
    }
}

// Algorithm 2, lines 8-16, one attempt: register a batch to produce when the expected
// availability C + E * batch - R is below n, else try to reserve n units to wait for.
//
// No CAS retried until it wins: with thousands of invocations on one word, an invocation
// can lose every CAS of the caller's bounded loop. Registering a batch is an atomicAdd
// whose returned old value linearizes the decision (the invocation re-checks against the
// E and R it replaced and undoes its add if it lost the race). A
// reservation is a single CAS attempt; a lost one is a round of waiting (bsem_step counts
// it), so after BSEM_WAIT_ROUNDS such rounds the invocation produces a batch instead.
fn bsem_decide(s: u32, n: u32, batch: u32, st: ptr<function, BsemWait>) -> u32 {
    let c = bsem_count(s);
    let seen = atomicLoad(&heap_meta[s + 1u]);
    bsem_seen(st, seen);
    let seen_avail = c + i32((seen >> BSEM_R_BITS) * batch) - i32(seen & BSEM_R_MASK);
    // After BSEM_WAIT_ROUNDS rounds of waiting in all, stop waiting and produce a batch,
    // unless batches are being produced (E > floor: E above what has stayed in production
    // for a whole BSEM_STALL_ROUNDS window, whose producers may never run). Forcing a batch then
    // only over-produces, the more so where producers are slow to place a chunk's pages
    // (virtualized queues): nearly every waiting malloc would force one.
    let forced = (*st).waited >= BSEM_WAIT_ROUNDS && (seen >> BSEM_R_BITS) <= (*st).floor;
    if (seen_avail < i32(n) || forced) {
        return bsem_register_batch(s, n, batch, c, forced, (*st).floor);
    }
    if (c >= i32(n)) {
        return BSEM_PENDING; // units are there: take them next round
    }
    // A reservation is one CAS attempt: if it loses, this round is over and counts as
    // waited (bsem_step), so a starved reserver ends up producing after BSEM_WAIT_ROUNDS.
    // (Reserving by atomicAdd makes reservations succeed far more often under contention,
    // and the resulting waits and helping make the chunk-based front end lose many more
    // mallocs to contention.)
    let r = seen & BSEM_R_MASK;
    if (r + n <= BSEM_R_MASK) {
        let x = atomicCompareExchangeWeak(&heap_meta[s + 1u], seen, seen + n);
        if (x.exchanged) {
            (*st).phase = BSEM_RESERVED;
        }
    }
    return BSEM_PENDING;
}

// E += 1 by atomicAdd. E is the top field, so an add past E_MAX only carries out of the
// word (arithmetic is modulo 2^32) and the undo restores it; R is never touched. The batch
// is kept if the E and R it replaced still call for it, judged with the caller's reading of
// C, as a CAS of word 1 alone would have; a `forced` one also if it is the only batch in
// production (the E it replaced is 0). The check of E in bsem_decide is a load, and many
// long waiters pass it at once when the last batch ends; judged by the E each one
// replaced, only the first keeps a forced batch, instead of hundreds filling at once
// with pages a virtualized queue cannot store.
fn bsem_register_batch(s: u32, n: u32, batch: u32, c: i32, forced: bool, floor: u32) -> u32 {
    let old = atomicAdd(&heap_meta[s + 1u], BSEM_E_ONE);
    let e = old >> BSEM_R_BITS;
    let avail = c + i32(e * batch) - i32(old & BSEM_R_MASK);
    if (e < BSEM_E_MAX && ((forced && e <= floor) || avail < i32(n))) {
        return BSEM_ALLOCATE;
    }
    atomicSub(&heap_meta[s + 1u], BSEM_E_ONE);
    return BSEM_PENDING;
}

// Algorithm 2, line 17: a reserved wait ends when n units are there, or when the
// reservations outnumber what is there and expected (someone must produce more).
fn bsem_wait_over(s: u32, n: u32, batch: u32) -> bool {
    let w = atomicLoad(&heap_meta[s + 1u]);
    let c = bsem_count(s);
    return c >= i32(n) || i32(w & BSEM_R_MASK) >= c + i32((w >> BSEM_R_BITS) * batch);
}

// One round of wait(n, batch). BSEM_GOT: n units are taken. BSEM_ALLOCATE: the caller must
// produce one batch now and then call bsem_signal(s, units it adds, 1), keeping n units for
// itself, or bsem_signal(s, 0, 1) if it cannot produce it. BSEM_PENDING: call again.
//
// `look_first`: read C before a take, and take only if it shows n units. A take that finds
// too few is two atomics on the semaphore's busiest word (the subtraction and its undo);
// where hundreds of thousands of waiters share a semaphore whose C stays at zero (the tree
// buddy's orders on a nearly full heap), those pairs can hold up the producers' signals
// until the waits run out. Where units are plentiful the look is one more round trip before
// each take, so each caller chooses (BENCHMARKS.md, "Crowded waits in the tree buddy").
fn bsem_step(s: u32, n: u32, batch: u32, st: ptr<function, BsemWait>, look_first: bool) -> u32 {
    if ((*st).phase == BSEM_RESERVED) {
        if (bsem_wait_over(s, n, batch)) {
            atomicSub(&heap_meta[s + 1u], n); // our own reservation: cannot underflow
            (*st).phase = BSEM_FRESH;
        } else {
            bsem_waited(st);
            if ((*st).waited < BSEM_WAIT_ROUNDS) {
                return BSEM_PENDING;
            }
            let now = atomicLoad(&heap_meta[s + 1u]);
            bsem_seen(st, now);
            if ((now >> BSEM_R_BITS) > (*st).floor) {
                return BSEM_PENDING; // (batches in production beyond the stalled ones)
            }
            // Waited long enough: help. Our reservation becomes a batch we produce, in one
            // atomicAdd (R >= n holds our own n, so the subtraction borrows nothing), kept
            // only if no other batch is in production beyond the stalled ones (as a forced
            // one: bsem_register_batch) and E was below its cap.
            let old = atomicAdd(&heap_meta[s + 1u], BSEM_E_ONE - n);
            let e = old >> BSEM_R_BITS;
            if (e <= (*st).floor && e < BSEM_E_MAX) {
                (*st).phase = BSEM_FRESH;
                return BSEM_ALLOCATE;
            }
            atomicSub(&heap_meta[s + 1u], BSEM_E_ONE - n);
            return BSEM_PENDING;
        }
    }
    if ((!look_first || bsem_count(s) >= i32(n)) && bsem_try_take(s, n)) {
        return BSEM_GOT;
    }
    let r = bsem_decide(s, n, batch, st);
    if (r == BSEM_PENDING) {
        // Every round that ends pending counts: rounds without a reservation (units seen
        // but taken by others, E at its cap), and rounds that end a reservation and make a
        // new one (with thousands of waiters, reservations can outnumber what is expected
        // and be dropped and retaken round after round). So every kind of waiting ends in
        // helping after BSEM_WAIT_ROUNDS rounds.
        bsem_waited(st);
    }
    return r;
}

// For a caller whose units keep eluding it (it took them, but the storage behind them was
// not there to be found): register one batch to produce, whatever C says, unless E is at
// its cap. True: produce it and signal as after BSEM_ALLOCATE.
fn bsem_help(s: u32) -> bool {
    let old = atomicAdd(&heap_meta[s + 1u], BSEM_E_ONE);
    if ((old >> BSEM_R_BITS) < BSEM_E_MAX) {
        return true;
    }
    atomicSub(&heap_meta[s + 1u], BSEM_E_ONE);
    return false;
}

// Leaves a wait that ran out of rounds without units: drops its reservation, if any.
fn bsem_abandon(s: u32, n: u32, st: ptr<function, BsemWait>) {
    if ((*st).phase == BSEM_RESERVED) {
        atomicSub(&heap_meta[s + 1u], n);
        (*st).phase = BSEM_FRESH;
    }
}
