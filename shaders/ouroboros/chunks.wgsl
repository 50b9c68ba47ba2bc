// Ouroboros chunk manager (ICS 2020 section 3.2; Winter's thesis chapter 5): the heap is
// OURO_CHUNKS equal chunks of OURO_CHUNK_UNITS units (8 KiB by default, a power of two, so
// no chunk crosses a segment). Chunks are handed out in O(1), first from the pool of
// returned chunks (an index queue, OURO_POOL), then from fresh memory (a bump counter).
//
// State (heap_meta):
//   OURO_FRESH                    chunks handed out from fresh memory so far (may sit above
//                                 OURO_CHUNKS for a moment while a failed bump is undone)
//   ouro_queue_meta(OURO_POOL)    the pool's fill count ([0]) and ring counters
//   OURO_CHUNK_INFO + c           what chunk c holds: 0 free or inside a multi-chunk run,
//                                 class + 1 for a page chunk or the first chunk of a run
//
// Multi-chunk runs (the "stacked instances with larger chunks" of section 3.1) serve the
// classes above one chunk: a run of 2^j chunks, aligned to its length, bumped from fresh
// memory. Alignment keeps a run inside one segment (segments hold a power-of-two number of
// chunks at least as large as the largest run); the chunks skipped to align it go to the
// pool, so none is lost. Runs never return to the pool: their class queue keeps them.
//
// Loops, all bounded: ouro_run_alloc makes at most OURO_RUN_ATTEMPTS CAS attempts (each
// failure means another invocation moved the counter) and returns at most run - 1 skipped
// chunks to the pool.

const OURO_NO_CHUNK: u32 = 0xffffffffu;
const OURO_CHUNK_CONTENDED: u32 = 0xfffffffeu;
const OURO_RUN_ATTEMPTS: u32 = 256u;

fn ouro_chunk_alloc() -> u32 {
    let pool = ouro_queue_meta(OURO_POOL);
    if (bsem_try_take(pool, 1u)) {
        let v = oq_dequeue(OURO_POOL);
        if (v != OQ_EMPTY) {
            return v - 1u;
        }
        // The slot's enqueuer is late; it will move the chunk elsewhere. Give the unit back
        // and take fresh memory instead.
        bsem_signal(pool, 1u, 0u);
    }
    // Failures only happen once the counter is at or above OURO_CHUNKS, and undoing them
    // never takes it below, so successful bumps hand out each chunk once.
    let f = atomicAdd(&heap_meta[OURO_FRESH], 1u);
    if (f < OURO_CHUNKS) {
        return f;
    }
    atomicSub(&heap_meta[OURO_FRESH], 1u);
    return OURO_NO_CHUNK;
}

// Returns a chunk to the pool. False if the pool's ring could not take it (counted by the
// caller as contention; see queues/index_queue.wgsl for when that can happen).
fn ouro_chunk_free(chunk: u32) -> bool {
    atomicStore(&heap_meta[OURO_CHUNK_INFO + chunk], 0u);
    if (oq_enqueue(OURO_POOL, chunk + 1u)) {
        bsem_signal(ouro_queue_meta(OURO_POOL), 1u, 0u);
        return true;
    }
    return false;
}

// `run` (a power of two) contiguous chunks aligned to `run`, from fresh memory.
fn ouro_run_alloc(run: u32) -> u32 {
    if (run == 1u) {
        return ouro_chunk_alloc();
    }
    for (var attempt = 0u; attempt < OURO_RUN_ATTEMPTS; attempt++) {
        let f = atomicLoad(&heap_meta[OURO_FRESH]);
        let start = (f + run - 1u) & ~(run - 1u);
        if (f >= OURO_CHUNKS || start + run > OURO_CHUNKS) {
            return OURO_NO_CHUNK;
        }
        let x = atomicCompareExchangeWeak(&heap_meta[OURO_FRESH], f, start + run);
        if (x.exchanged) {
            for (var c = f; c < start; c++) {
                ouro_chunk_free(c);
            }
            return start;
        }
    }
    return OURO_CHUNK_CONTENDED;
}
