// The probe side of a join whose output size is unknown before it runs: probe row i
// matches matches_of(i) rows of the build side (a skewed count: most rows match a few,
// some "heavy hitter" keys match hundreds), and writes its output, pairs (i, j), into one
// heap allocation of exactly that size. Rows record their allocation in `rows`; a row
// whose malloc failed for lack of memory stays undone and counts itself in `failed`, so
// the host can grow the heap (GpuHeap::maintain) and run this kernel again: rows already
// done skip. Failed rows also add up what they asked for, so the host can grow by the real
// demand instead of a guess (as vello's bump allocators record demand when they fail).
#include "alloc.wgsl"

struct Row {
    handle: u32,
    count: u32,
    done: u32,
    pad: u32,
}

@group(1) @binding(0) var<storage, read_write> rows: array<Row>;
@group(1) @binding(1) var<storage, read_write> counters: array<atomic<u32>>;

const COUNTER_FAILED: u32 = 0u;
const COUNTER_WRONG: u32 = 1u;
const COUNTER_PAIRS: u32 = 2u;
const COUNTER_DEMAND: u32 = 3u; // bytes the failed mallocs asked for

// A 32-bit integer mix (any good one will do): spreads the rows' matches.
fn mix32(x: u32) -> u32 {
    var h = x ^ (x >> 16u);
    h *= 0x7feb352du;
    h ^= h >> 15u;
    h *= 0x846ca68bu;
    return h ^ (h >> 16u);
}

// Matches of probe row i: 0..15, and 256..511 for one row in 64.
fn matches_of(i: u32) -> u32 {
    let h = mix32(i ^ 0x6a09e667u);
    if ((h & 63u) == 0u) {
        return 256u + ((h >> 6u) & 255u);
    }
    return (h >> 6u) & 15u;
}

// The build-side row of match k of probe row i (stands in for the hash-table lookup).
fn build_row(i: u32, k: u32) -> u32 {
    return mix32(i * 0x9e3779b9u + k);
}

@compute @workgroup_size(64)
fn probe(@builtin(global_invocation_id) id: vec3<u32>) {
    let i = id.x;
    if (i >= arrayLength(&rows) || rows[i].done != 0u) {
        return;
    }
    let n = matches_of(i);
    if (n == 0u) {
        rows[i].done = 1u;
        return;
    }
    let out = malloc(n * 8u);
    if (out == 0u) {
        // Out of memory (heap_status says so): the heap recorded the pressure; try again
        // after the host grows it.
        atomicAdd(&counters[COUNTER_FAILED], 1u);
        atomicAdd(&counters[COUNTER_DEMAND], n * 8u);
        return;
    }
    for (var k = 0u; k < n; k++) {
        heap_store(out, 2u * k, i);
        heap_store(out, 2u * k + 1u, build_row(i, k));
    }
    rows[i] = Row(out, n, 1u, 0u);
}

// Checks every output pair and counts them.
@compute @workgroup_size(64)
fn verify(@builtin(global_invocation_id) id: vec3<u32>) {
    let i = id.x;
    if (i >= arrayLength(&rows)) {
        return;
    }
    let row = rows[i];
    let n = matches_of(i);
    if (row.done == 0u || row.count != select(n, 0u, n == 0u)) {
        atomicAdd(&counters[COUNTER_WRONG], 1u);
        return;
    }
    for (var k = 0u; k < row.count; k++) {
        if (heap_load(row.handle, 2u * k) != i || heap_load(row.handle, 2u * k + 1u) != build_row(i, k)) {
            atomicAdd(&counters[COUNTER_WRONG], 1u);
            return;
        }
    }
    atomicAdd(&counters[COUNTER_PAIRS], row.count);
}
