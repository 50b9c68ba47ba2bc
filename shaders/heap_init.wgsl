// The heap's host-driven passes, all run between the user's dispatches.
//
// gpu_heap_init: runs after the host has zeroed heap_meta (clear_buffer) and written the
// growth block, and lets the strategy set up its state. Dispatched with
// ceil(STRATEGY_INIT_INVOCATIONS / 64) workgroups.
// gpu_heap_grow, gpu_heap_trim_check, gpu_heap_trim: the growth hooks (alloc.wgsl's
// header states their contract; core/growth.wgsl the words they read). The host writes
// HEAP_RESIZE_FROM / HEAP_RESIZE_TO (and HEAP_COMMITTED) first; grow and trim run as one
// invocation, the check over HEAP_TRIM_INVOCATIONS shares. Compiled only into heaps that
// can grow (GPU_HEAP_GROWABLE), so strategies without the hooks still build this file.
// Loops: the trim check's grid-stride loop (below).
#include "alloc.wgsl"

@compute @workgroup_size(64)
fn gpu_heap_init(@builtin(global_invocation_id) id: vec3<u32>) {
    if (id.x < STRATEGY_INIT_INVOCATIONS) {
        strategy_init(id.x);
    }
}

// Only heaps that can grow have them: strategies without growth hooks compile this file too.
#ifdef GPU_HEAP_GROWABLE
@compute @workgroup_size(64)
fn gpu_heap_grow(@builtin(global_invocation_id) id: vec3<u32>) {
    if (id.x == 0u) {
        strategy_grow(atomicLoad(&heap_meta[HEAP_RESIZE_FROM]), atomicLoad(&heap_meta[HEAP_RESIZE_TO]));
    }
}

// Each invocation checks shares id.x, id.x + stride, ... below HEAP_TRIM_INVOCATIONS (the
// host caps the dispatch at 65,535 workgroups): a loop of at most ceil(n / stride) steps.
@compute @workgroup_size(64)
fn gpu_heap_trim_check(
    @builtin(global_invocation_id) id: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
) {
    let n = atomicLoad(&heap_meta[HEAP_TRIM_INVOCATIONS]);
    let old_end = atomicLoad(&heap_meta[HEAP_RESIZE_FROM]);
    let to = atomicLoad(&heap_meta[HEAP_RESIZE_TO]);
    let stride = groups.x * 64u;
    for (var i = id.x; i < n; i += stride) {
        if (!strategy_trim_check(i, old_end, to)) {
            atomicOr(&heap_meta[HEAP_TRIM_BUSY], 1u);
        }
    }
}

@compute @workgroup_size(64)
fn gpu_heap_trim(@builtin(global_invocation_id) id: vec3<u32>) {
    if (id.x == 0u) {
        strategy_trim(atomicLoad(&heap_meta[HEAP_RESIZE_FROM]), atomicLoad(&heap_meta[HEAP_RESIZE_TO]));
    }
}
#endif
