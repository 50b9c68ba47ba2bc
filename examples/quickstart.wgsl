// Each invocation builds a list of a length only it knows, in memory from the heap, sums
// it, writes the sum out and frees the list.
#include "alloc.wgsl"

@group(1) @binding(0) var<storage, read_write> sums: array<u32>;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    let i = id.x;
    if (i >= arrayLength(&sums)) {
        return;
    }
    let len = i % 50u + 1u;              // 1..50 words, decided on the GPU
    let list = malloc(len * 4u);
    if (list == 0u) {
        sums[i] = 0xffffffffu;           // heap_status says why (out of memory, ...)
        return;
    }
    for (var k = 0u; k < len; k++) {
        heap_store(list, k, i + k);
    }
    var sum = 0u;
    for (var k = 0u; k < len; k++) {
        sum += heap_load(list, k);
    }
    sums[i] = sum;
    free(list);
}
