// The heap's init pass: runs after the host has zeroed heap_meta (clear_buffer), and lets
// the strategy set up its state. Dispatched with ceil(STRATEGY_INIT_INVOCATIONS / 64)
// workgroups.
#include "alloc.wgsl"

@compute @workgroup_size(64)
fn gpu_heap_init(@builtin(global_invocation_id) id: vec3<u32>) {
    if (id.x < STRATEGY_INIT_INVOCATIONS) {
        strategy_init(id.x);
    }
}
