// The bulk semaphore (Gelado & Garland, PPoPP 2019, section 3.3; used by Ouroboros as its
// queues' access primitive, ICS 2020 section 3.4, Algorithm 2), in portable 32-bit WGSL.
//
// Provides, for a semaphore at word `s` of heap_meta (two words):
//   bsem_try_take(s, n) -> bool        take n units if C >= n (the fast path)
//   bsem_step(s, n, batch, st) -> u32  one round of wait(n, batch): BSEM_GOT, BSEM_ALLOCATE
//                                      (the caller must produce a batch now) or BSEM_PENDING
//   bsem_abandon(s, n, st)             leave a wait that ran out of rounds (drops a reservation)
//   bsem_signal(s, n, batches)         add n units to C and retire `batches` expected batches
//   bsem_count(s) -> i32               C, for readers and tests
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
//   - E and R share one word, so each of their updates (a CAS, or an atomicAdd/atomicSub of
//     a field that the same invocation incremented earlier and that cannot underflow) is
//     atomic with respect to both. Every E increment is matched by exactly one signal that
//     retires it, every R increment by exactly one decrement, so E = R = 0 once all calls
//     have returned.
//   - E and R only decide WHO produces a batch and who waits. The decision reads C and then
//     CASes word 1, so C may move in between. A stale C can make an invocation produce a
//     batch that was not needed (the units still enter C: nothing lost) or reserve and wait
//     for units that do not come; that wait is bounded (BSEM_WAIT_ROUNDS) and then turns its
//     reservation into a batch of its own (it helps), so it cannot wait forever.
//   - Saturation: an increment that would overflow a field is not made (the caller retries
//     in its next round), so the fields never wrap into each other.
//
// Progress rule (DESIGN.md): nothing here loops. bsem_step does one bounded piece of work
// per call; the caller drives it from its own bounded loop and puts its batch production
// inside the same loop, so that invocations of one SIMD group that wait (lanes still in the
// loop) do not block the lane producing the batch (see DESIGN.md: a spin loop whose
// critical section sits outside the loop hangs, one with it inside completes).
//
// Orderings: all WGSL atomics are relaxed. Producers write the units' storage (queue slots)
// before they signal; consumers still wait, bounded, for a slot's content (queues/).

const BSEM_GOT: u32 = 0u;
const BSEM_ALLOCATE: u32 = 1u;
const BSEM_PENDING: u32 = 2u;

const BSEM_R_BITS: u32 = 20u;
const BSEM_R_MASK: u32 = 0xfffffu;
const BSEM_E_ONE: u32 = 0x100000u;
const BSEM_E_MAX: u32 = 0xfffu;
// Rounds a reserved invocation waits for someone else's batch before producing its own.
const BSEM_WAIT_ROUNDS: u32 = 64u;

const BSEM_FRESH: u32 = 0u;
const BSEM_RESERVED: u32 = 1u;

// The per-call state of one wait: whether it holds a reservation, and how many rounds it
// has waited in all (never reset, so the switch to helping cannot be postponed forever).
struct BsemWait {
    phase: u32,
    waited: u32,
}

fn bsem_new_wait() -> BsemWait {
    return BsemWait(BSEM_FRESH, 0u);
}

fn bsem_count(s: u32) -> i32 {
    return bitcast<i32>(atomicLoad(&heap_meta[s]));
}

// Algorithm 2, lines 2-6: take n units if there are n; otherwise give them back.
fn bsem_try_take(s: u32, n: u32) -> bool {
    let old = bitcast<i32>(atomicSub(&heap_meta[s], n));
    if (old >= i32(n)) {
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

// Algorithm 2, lines 8-16, one CAS attempt: register a batch to produce when the expected
// availability C + E * batch - R is below n, else reserve n units to wait for.
fn bsem_decide(s: u32, n: u32, batch: u32, st: ptr<function, BsemWait>) -> u32 {
    let old = atomicLoad(&heap_meta[s + 1u]);
    let c = bsem_count(s);
    let e = old >> BSEM_R_BITS;
    let r = old & BSEM_R_MASK;
    let avail = c + i32(e * batch) - i32(r);
    // After BSEM_WAIT_ROUNDS rounds of waiting in all (waits that end because units seemed
    // to arrive, only to be taken by others, add up), stop waiting: produce a batch.
    if (avail < i32(n) || (*st).waited >= BSEM_WAIT_ROUNDS) {
        if (e < BSEM_E_MAX) {
            let x = atomicCompareExchangeWeak(&heap_meta[s + 1u], old, old + BSEM_E_ONE);
            if (x.exchanged) {
                return BSEM_ALLOCATE;
            }
        }
        return BSEM_PENDING;
    }
    if (c >= i32(n)) {
        return BSEM_PENDING; // units are there: take them next round
    }
    if (r + n <= BSEM_R_MASK) {
        let x = atomicCompareExchangeWeak(&heap_meta[s + 1u], old, old + n);
        if (x.exchanged) {
            (*st).phase = BSEM_RESERVED;
        }
    }
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
fn bsem_step(s: u32, n: u32, batch: u32, st: ptr<function, BsemWait>) -> u32 {
    if ((*st).phase == BSEM_RESERVED) {
        if (bsem_wait_over(s, n, batch)) {
            atomicSub(&heap_meta[s + 1u], n); // our own reservation: cannot underflow
            (*st).phase = BSEM_FRESH;
        } else {
            (*st).waited += 1u;
            if ((*st).waited < BSEM_WAIT_ROUNDS) {
                return BSEM_PENDING;
            }
            // Waited long enough: help. Our reservation becomes a batch we produce.
            let old = atomicLoad(&heap_meta[s + 1u]);
            if ((old >> BSEM_R_BITS) < BSEM_E_MAX) {
                let x = atomicCompareExchangeWeak(&heap_meta[s + 1u], old, old - n + BSEM_E_ONE);
                if (x.exchanged) {
                    (*st).phase = BSEM_FRESH;
                    return BSEM_ALLOCATE;
                }
            }
            return BSEM_PENDING;
        }
    }
    if (bsem_try_take(s, n)) {
        return BSEM_GOT;
    }
    return bsem_decide(s, n, batch, st);
}

// Leaves a wait that ran out of rounds without units: drops its reservation, if any.
fn bsem_abandon(s: u32, n: u32, st: ptr<function, BsemWait>) {
    if ((*st).phase == BSEM_RESERVED) {
        atomicSub(&heap_meta[s + 1u], n);
        (*st).phase = BSEM_FRESH;
    }
}
