// The TAS tool's kernels (cli/src/tas.rs): prefill a page-based random-walk heap to
// an exact number of free pages, then let T invocations malloc once each and record their
// steps (gpu_heap_walk_steps, walk.wgsl), so the host can average them per thread (TAS) and
// take maxima per group of lanes (WAS), as Pham & Tu measure them (section 5.2).
//
// Prefill: page p is marked used iff tas_permute(p) < params.used, where tas_permute is a
// bijection of [0, 2^bits) (odd multiplications and xor-shifts modulo 2^bits), so exactly
// `used` pages are used, spread at random; invocation 0 sets the free count to the
// remaining free pages. The host creates the heap with 2^bits pages.
// Loops: none here (malloc's are bounded).
#include "alloc.wgsl"

struct TasParams {
    threads: u32,
    used: u32,
    seed: u32,
    bits: u32,
}

@group(1) @binding(0) var<uniform> params: TasParams;
// Per invocation: [2 i] steps, [2 i + 1] handle (0 if malloc failed).
@group(1) @binding(1) var<storage, read_write> out: array<u32>;

fn tas_permute(p: u32) -> u32 {
    let mask = (1u << params.bits) - 1u;
    var x = (p ^ params.seed) & mask;
    x = (x * 0x9e3779b1u + params.seed) & mask;
    x ^= x >> (params.bits / 2u + 1u);
    x = (x * 0x85ebca6bu) & mask;
    x ^= x >> (params.bits / 3u + 1u);
    x = (x * 0xc2b2ae35u + 0x165667b1u) & mask;
    x ^= x >> (params.bits / 2u);
    return x;
}

@compute @workgroup_size(64)
fn tas_prefill(@builtin(global_invocation_id) id: vec3<u32>) {
    let p = id.x + id.y * 65535u * 64u;
    let pages = 1u << params.bits;
    if (p == 0u) {
        gpu_heap_walk_free_set(pages - params.used);
    }
    if (p < pages && tas_permute(p) < params.used) {
        gpu_heap_walk_prefill(p);
    }
}

@compute @workgroup_size(64)
fn tas_measure(@builtin(global_invocation_id) id: vec3<u32>) {
    let i = id.x;
    if (i >= params.threads) {
        return;
    }
    let p = malloc(16u);
    out[2u * i] = gpu_heap_walk_steps;
    out[2u * i + 1u] = p;
}
