#include "alloc.wgsl"

@compute @workgroup_size(1)
fn main() {
    let p = malloc(16u);
    // heap_store wants a u32 value: this is a type error that naga's validator reports.
    heap_store(p, 0u, 1.5);
}
