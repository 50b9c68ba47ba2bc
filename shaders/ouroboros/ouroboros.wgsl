// Ouroboros (Winter, Mlakar, Parger, Steinberger, ICS 2020), the strategy entry points:
// size classes, the live bitmap, and the dispatch to the page-based front end (and, with
// OURO_CHUNK_BASED, the chunk-based one for the classes up to one chunk; the classes of
// multi-chunk runs are page-based in every variant: one page per run).
//
// Size classes k = 0 .. OURO_CLASSES - 1: pages of OURO_MIN_PAGE_UNITS << k units up to one
// chunk (OURO_BASE_CLASSES classes, ten for 16 B .. 8 KiB), then runs of 2, 4, .. chunks
// (one page per run) up to HEAP_MAX_ALLOC. Queue q = k belongs to class k; queue
// OURO_POOL is the chunk pool. Larger requests are rejected by alloc.wgsl as
// HEAP_INVALID_REQUEST.
//
// The live bitmap (one bit per 16-byte unit, set at the first unit of each page out with a
// user) makes double and interior frees detectable: free clears the bit with one atomicAnd
// and reports HEAP_INVALID_FREE if it was already clear.
//
// Growth (a heap with HeapConfig::max_size): every table is sized for the reserved
// maximum (OURO_CHUNKS), fresh chunks come from below the committed end (chunks.wgsl), and
// growth.wgsl provides the grow and trim hooks (compiled into heaps that can grow only).
//
// Loops: none here; see the included modules.
// Queue chunks (virtualized queues): items per chunk, rounds to wait for a chunk pointer or
// link before making one, rounds to wait for one that another invocation is making, and
// the chunk-info mark of a queue chunk.
const OURO_QC_ITEMS: u32 = OURO_CHUNK_UNITS * 4u;
const OURO_QC_SHIFT: u32 = OURO_CHUNK_SHIFT + 2u;
const VQ_PTR_WAIT: u32 = 256u;
// Longer than the maker's own bound: OURO_POOL_TRIES pool dequeues of up to OQ_SLOT_WAIT
// rounds each, then OURO_QC_ITEMS exchanges. A waiter that gave up on a chunk still being
// made would leave its position unconsumed, which blocks a VAQ slot or a VLQ for good.
const OURO_MAKE_WAIT: u32 = (OURO_POOL_TRIES + 1u) * OQ_SLOT_WAIT;

// The chunk info of a queue chunk of queue q. Stamping the queue makes a reader that reached
// a chunk through a stale pointer tell a chunk recycled into another queue, whose positions
// may cover the same numbers, from its own.
fn ouro_queue_info(q: u32) -> u32 {
    return OURO_INFO_QUEUE | q;
}

#include "../sync/bulk_semaphore.wgsl"
#include "../queues/index_queue.wgsl"
#include "chunks.wgsl"
#include "spill.wgsl"
#ifdef OURO_QUEUE_VA
#include "../queues/vaq.wgsl"
#endif
#ifdef OURO_QUEUE_VL
#include "../queues/vlq.wgsl"
#endif
// Fresh runs: page-based variants (OURO_FRESH_RUNS: the layout has their counters) in heaps
// that cannot grow (a trim would have to end the runs in its range).
#ifdef OURO_FRESH_RUNS
#ifndef GPU_HEAP_GROWABLE
#define OURO_FRESH_PAGES
#include "fresh_runs.wgsl"
#endif
#endif
#include "page_based.wgsl"
#ifdef OURO_CHUNK_BASED
#include "../core/summary_bitmap.wgsl"
#include "chunk_tokens.wgsl"
#ifdef GPU_HEAP_SUBGROUPS
#include "../core/subgroup.wgsl"
#endif
#include "chunk_based.wgsl"
#endif
#ifdef GPU_HEAP_GROWABLE
#include "growth.wgsl"
#endif

// The class queues of pages: standard index queues, or (OURO_QUEUE_VA, OURO_QUEUE_VL)
// virtualized ones for the classes up to one chunk. Classes of multi-chunk runs and the
// chunk pool always use standard queues: they are small, and the pool cannot borrow its own
// chunks. In the chunk-based variants the classes up to one chunk keep chunk tokens instead
// (chunk_tokens.wgsl), so every queue of pages is a standard one (and the compiler drops
// the virtualized page paths).
fn cq_virtual(k: u32) -> bool {
#ifdef OURO_CHUNK_BASED
    return false;
#else
#ifdef OURO_VIRTUAL_QUEUES
    return k < OURO_BASE_CLASSES;
#else
    return false;
#endif
#endif
}

fn cq_reserve_back(k: u32, n: u32) -> u32 {
    return oq_reserve_back(k, n);
}

// `cursor` (OURO_NO_CHUNK at first) carries a linked queue's search from one put of a run
// of positions to the next (queues/vlq.wgsl, vl_find); the other queues ignore it.
fn cq_put_at(k: u32, pos: u32, item: u32, cursor: ptr<function, u32>) -> bool {
#ifdef OURO_QUEUE_VA
    if (cq_virtual(k)) {
        return vq_put_at(k, pos, item);
    }
#endif
#ifdef OURO_QUEUE_VL
    if (cq_virtual(k)) {
        return vl_put_at(k, pos, item, cursor);
    }
#endif
    return oq_put_at(k, pos, item);
}

// Whether class k's queue can abandon reserved positions (OQ_VOID): the page VAQ.
fn cq_abandons(k: u32) -> bool {
#ifdef OURO_QUEUE_VA
    return cq_virtual(k);
#else
    return false;
#endif
}

// Whether reserved positions [first, first + n) of class k's queue have queue storage,
// installing VAQ queue chunks that are missing (never marking a lap dead). Only for
// queues that can abandon positions (cq_abandons); true for the others.
fn cq_storage(k: u32, first: u32, n: u32) -> bool {
#ifdef OURO_QUEUE_VA
    if (cq_virtual(k)) {
        return vq_storage(k, first) && vq_storage(k, first + n - 1u);
    }
#endif
    return true;
}

// Whether word v of a virtualized page queue of class k is an item a dequeuer may take: the
// handle of a page start in a chunk of class k, or OQ_VOID. Anything else is not yet
// written, or is what the chunk held before it became a queue chunk: its zeroing stores
// and the pointer that publishes it are relaxed atomics to different addresses, so a
// reader may see the pointer first, and taking old content as an item hands out pages at
// wrong handles. A reader that sees such a word
// waits on, as for an empty one. OQ_VOID counts only in queues whose producers abandon
// positions (cq_abandons): elsewhere it is old content too.
fn cq_holds_item(k: u32, v: u32) -> bool {
    if (v == OQ_VOID) {
        return cq_abandons(k);
    }
    let unit = heap_unit_of(v);
    let chunk = unit >> OURO_CHUNK_SHIFT;
    return v != OQ_EMPTY && chunk < OURO_CHUNKS
        && atomicLoad(&heap_meta[OURO_CHUNK_INFO + chunk]) == k + 1u
        && (unit & (ouro_page_units(k) - 1u)) == 0u;
}

// A dequeuer gives up on a position whose word v never became an item. If v is neither
// empty nor OQ_SKIP, it is old content not yet zeroed, and the item written there later
// will never be dequeued: its page leaves circulation. Counted (OURO_STALE_DEQUEUES) so
// that the loss shows in the report.
fn cq_gave_up_on(v: u32) {
    if (v != OQ_EMPTY && v != OQ_SKIP) {
        atomicAdd(&heap_meta[OURO_STALE_DEQUEUES], 1u);
    }
}

// Events of mallocs of either front end, counted at OURO_PAGE_EVENTS + event for the
// report (src/ouroboros/report.rs): they say why mallocs found no page while pages were
// queued. A miss took a unit but found no page for it (page-based: the dequeue found no
// item; chunk-based: the walk found no chunk to claim from), and its unit goes back; a
// stranded dequeue also left its position unconsumed, so the item put there is never
// dequeued while its unit stays in the count; a malloc out of rounds spent OURO_ROUNDS
// waiting; a malloc that reported out of memory while its class semaphore still held
// units; and a malloc out of rounds whose last production the semaphore could not register
// (ouro_help_last).
// (OURO_EV_MISSED, OURO_EV_STRANDED, OURO_EV_OUT_OF_ROUNDS, OURO_EV_OOM_WITH_PAGES,
// OURO_EV_UNREGISTERED: declared on the host, src/ouroboros/shared.rs.)

fn ouro_count(event: u32) {
    atomicAdd(&heap_meta[OURO_PAGE_EVENTS + event], 1u);
}

// A malloc out of rounds makes one last production whether or not the semaphore registers
// it; returns the batches its signal retires (bsem_signal): 1, or 0 for an unregistered
// one. bsem_help refuses only with E at its cap, BSEM_E_MAX batches in production; an
// unregistered batch is then missing from the others' expectation while it is filled, which
// at worst makes one of them produce another. (Skipping that production would fail the
// malloc for contention while its class is far from exhausted.)
fn ouro_help_last(qm: u32) -> u32 {
    if (bsem_help(qm)) {
        return 1u;
    }
    ouro_count(OURO_EV_UNREGISTERED);
    return 0u;
}

fn cq_enqueue(k: u32, item: u32) -> bool {
    var cursor = OURO_NO_CHUNK;
    return cq_put_at(k, cq_reserve_back(k, 1u), item, &cursor);
}

fn cq_dequeue(k: u32) -> u32 {
#ifdef OURO_QUEUE_VA
    if (cq_virtual(k)) {
        return vq_dequeue(k);
    }
#endif
#ifdef OURO_QUEUE_VL
    if (cq_virtual(k)) {
        return vl_dequeue(k);
    }
#endif
    return oq_dequeue(k);
}

fn ouro_page_units(k: u32) -> u32 {
    if (k < OURO_BASE_CLASSES) {
        return OURO_MIN_PAGE_UNITS << k;
    }
    return OURO_CHUNK_UNITS << (k - OURO_BASE_CLASSES + 1u);
}

// Units (pages) per batch: the pages of one chunk, or one run.
fn ouro_batch(k: u32) -> u32 {
    if (k < OURO_BASE_CLASSES) {
        return OURO_CHUNK_UNITS / (OURO_MIN_PAGE_UNITS << k);
    }
    return 1u;
}

fn ouro_run_chunks(k: u32) -> u32 {
    if (k < OURO_BASE_CLASSES) {
        return 1u;
    }
    return 1u << (k - OURO_BASE_CLASSES + 1u);
}

fn ouro_class_of(size_bytes: u32) -> u32 {
    let u = max(heap_units_for(size_bytes), OURO_MIN_PAGE_UNITS);
    return (32u - countLeadingZeros(u - 1u)) - OURO_MIN_PAGE_SHIFT;
}

fn ouro_grant(unit: u32, units: u32) -> HeapAlloc {
    atomicOr(&heap_meta[OURO_LIVE_BITS + (unit >> 5u)], 1u << (unit & 31u));
    return HeapAlloc(heap_handle_of(unit), units, HEAP_OK);
}

fn strategy_malloc(size_bytes: u32) -> HeapAlloc {
    let k = ouro_class_of(size_bytes);
    var a: HeapAlloc;
#ifdef OURO_CHUNK_BASED
    if (k < OURO_BASE_CLASSES) {
        a = ouro_c_malloc(k);
    } else {
        a = ouro_p_malloc(k);
    }
#else
    a = ouro_p_malloc(k);
#endif
    if (a.status == HEAP_OUT_OF_MEMORY && bsem_count(ouro_queue_meta(k)) > 0) {
        ouro_count(OURO_EV_OOM_WITH_PAGES);
    }
    return a;
}

fn strategy_free(ptr: u32) -> HeapFree {
    let unit = heap_unit_of(ptr);
    let chunk = unit >> OURO_CHUNK_SHIFT;
    if (chunk >= OURO_CHUNKS) {
        return HeapFree(0u, HEAP_INVALID_FREE);
    }
    let info = atomicLoad(&heap_meta[OURO_CHUNK_INFO + chunk]);
    if (info == 0u) {
        return HeapFree(0u, HEAP_INVALID_FREE);
    }
    let k = info - 1u;
    if (k >= OURO_CLASSES) {
        return HeapFree(0u, HEAP_INVALID_FREE); // a queue chunk, or an emptied one pooled
    }
    if ((unit & (ouro_page_units(k) - 1u)) != 0u) {
        return HeapFree(0u, HEAP_INVALID_FREE);
    }
    let mask = 1u << (unit & 31u);
    let old = atomicAnd(&heap_meta[OURO_LIVE_BITS + (unit >> 5u)], ~mask);
    if ((old & mask) == 0u) {
        return HeapFree(0u, HEAP_INVALID_FREE);
    }
#ifdef OURO_CHUNK_BASED
    if (k < OURO_BASE_CLASSES) {
        return ouro_c_free(unit, k);
    }
#endif
    return ouro_p_free(unit, k);
}

// All state starts at zero (the host clears heap_meta): empty queues, semaphores at zero,
// no fresh chunk used. The chunk-based front end marks every chunk's count as retired
// (STRATEGY_INIT_INVOCATIONS = min(OURO_CHUNKS, 2^20) invocations, each taking every
// STRATEGY_INIT_INVOCATIONS-th chunk: at most 8 per invocation on a 64 GiB heap).
fn strategy_init(i: u32) {
#ifdef OURO_CHUNK_BASED
    for (var c = i; c < OURO_CHUNKS; c += STRATEGY_INIT_INVOCATIONS) {
        atomicStore(&heap_meta[OURO_CB_COUNT + c], bitcast<u32>(OURO_CB_RETIRED));
    }
#endif
}
