// gpu-heap: the one file user shaders include, in compute shaders (the random walks keep
// workgroup variables).
//
// Provides
//   malloc(size_bytes: u32) -> u32   a handle to at least `size_bytes` bytes, 16-byte aligned;
//                                    0 (NULL) on failure, with the cause in `heap_status`
//   free(ptr: u32)                   releases an allocation; free(0) does nothing
//   heap_load(ptr, word) -> u32      user data access, word = 32-bit word index inside the
//   heap_store(ptr, word, value)     allocation; the segment layout stays hidden
//   heap_status                      status of the last malloc/free of this invocation
//
// Invariants
//   - Every failure is counted by cause in the statistics block (core/stats.wgsl). With full
//     statistics (GPU_HEAP_FULL_STATISTICS, the default) calls, live allocations and 16-byte
//     units and the peak of live units are counted too; without, a successful call touches
//     no statistics word at all. Live counters change only by what a call takes or
//     releases: they never wrap, and after every allocation is freed both read zero (for
//     bump, whose free releases nothing, after a reset).
//   - malloc(0) and sizes above HEAP_MAX_ALLOC return NULL with HEAP_INVALID_REQUEST.
//   - free of something that is not a live allocation is counted as HEAP_INVALID_FREE
//     wherever the strategy can tell, and then changes nothing.
//
// The strategy (exactly one) is included through generated/strategy.wgsl, and the generated
// configuration declares the heap's bindings; each strategy's entry file provides
// strategy_malloc, strategy_free and strategy_init with the signatures used below.
//
// Growth hooks (a heap with HeapConfig::max_size above its size; see core/growth.wgsl).
// Every strategy whose Strategy::supports_growth() is true provides, besides the three
// above:
//   strategy_grow(from_units, to_units)         one invocation, between dispatches: the
//       committed units rose from `from` to `to` (both segment-aligned, HEAP_COMMITTED
//       already reads `to`); make [from, to) allocatable without touching live state
//       (raise limits and free counters, clear "does not exist" marks).
//   strategy_trim_check(i, from_units, to_units) -> bool   invocation i of the count the
//       host plans (HeapLayout::trim_check_invocations); true if its share of [to, from)
//       holds no live allocation. Any false cancels the trim.
//   strategy_trim(from_units, to_units)         one invocation, after a clean check: take
//       [to, from) out of use (lower limits and counters, mark it as not existing), so
//       that no later malloc returns it; the host then drops the segments.
// And the strategy must bound its walks and checks by heap_committed_units() (not by
// HEAP_UNITS, which is the reserved maximum), raise heap_note_free_items() where its free
// count drops, and keep its state sized for HEAP_UNITS. malloc below raises
// HEAP_PRESSURE_OOM for every HEAP_OUT_OF_MEMORY.
// During a trim check HEAP_COMMITTED still reads `from`; no malloc or free runs during any
// hook. The entry points calling them (heap_init.wgsl) exist only in growable builds.
// To add a strategy: its entry file provides the functions above, and on the host it is a
// line of the registry in src/strategy.rs, planned by its family's StrategyPlan (which
// names the entry file, the init and trim-check invocation counts and the free count's
// item size); docs/architecture.md has the recipe.
// Strategies without the hooks: Strategy::supports_growth() false, and planning a heap
// that can grow returns Error::GrowthUnsupported.
//
// Loops: none here; each strategy module states how its loops are bounded.

#include "generated/shared.wgsl"
#include "generated/config.wgsl"
#include "core/hash.wgsl"
#include "core/bits.wgsl"
#include "core/stats.wgsl"
#include "core/growth.wgsl"
#include "core/heap.wgsl"

// The strategy's entry file, named by its family on the host (src/strategy.rs).
#include "generated/strategy.wgsl"

var<private> heap_status: u32 = HEAP_OK;

fn malloc(size_bytes: u32) -> u32 {
#ifdef GPU_HEAP_FULL_STATISTICS
    heap_count(STAT_MALLOC_CALLS, 1u);
#endif
    if (size_bytes == 0u || size_bytes > HEAP_MAX_ALLOC) {
        heap_status = HEAP_INVALID_REQUEST;
        heap_count_failure(HEAP_INVALID_REQUEST);
        return HEAP_NULL;
    }
    let r = strategy_malloc(size_bytes);
    heap_status = r.status;
    if (r.status == HEAP_OK) {
#ifdef GPU_HEAP_FULL_STATISTICS
        heap_note_malloc(r.units);
#endif
        return r.handle;
    }
    heap_count_failure(r.status);
    if (r.status == HEAP_OUT_OF_MEMORY) {
        heap_note_pressure(HEAP_PRESSURE_OOM);
    }
    return HEAP_NULL;
}

fn free(ptr: u32) {
    if (ptr == HEAP_NULL) {
        heap_status = HEAP_OK;
        return;
    }
#ifdef GPU_HEAP_FULL_STATISTICS
    heap_count(STAT_FREE_CALLS, 1u);
#endif
    let r = strategy_free(ptr);
    heap_status = r.status;
    if (r.status != HEAP_OK) {
        heap_count_failure(r.status);
        return;
    }
#ifdef GPU_HEAP_FULL_STATISTICS
    // A free that releases nothing (bump: memory comes back only by a reset) leaves the live
    // counters alone, so they keep agreeing with each other and never wrap.
    if (r.units != 0u) {
        heap_note_free(r.units);
    }
#endif
}
