// The survey's warp-based allocation: one invocation per subgroup allocates (the first
// lane), the others hold NULL. Needs wgpu::Features::SUBGROUP; the host skips the test
// where the adapter lacks it. No loops.
#include "bench/kernels.wgsl"

@compute @workgroup_size(256)
fn bench_malloc_subgroup(
    @builtin(global_invocation_id) id: vec3<u32>,
    @builtin(num_workgroups) g: vec3<u32>,
    @builtin(subgroup_invocation_id) lane: u32,
) {
    let i = bench_invocation(id, g);
    if (i >= params.threads) {
        return;
    }
    if (lane != 0u) {
        ptrs[i] = HEAP_NULL;
        return;
    }
    let p = malloc(bench_size(i));
    ptrs[i] = p;
    if (p == HEAP_NULL) {
        atomicAdd(&tally[TALLY_NULLS], 1u);
    }
}
