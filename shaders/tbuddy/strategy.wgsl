// The tbuddy strategy: the tree buddy allocator (tbuddy.wgsl) on its own, every malloc a
// marked block of a power-of-two number of leaves; init and growth are the tree buddy's
// (hooks.wgsl). No loops here.

#include "tbuddy.wgsl"
#include "hooks.wgsl"

fn strategy_malloc(size_bytes: u32) -> HeapAlloc {
    return tb_malloc(size_bytes, true, true, false);
}

fn strategy_free(ptr: u32) -> HeapFree {
    return tb_free(ptr);
}
