// The tbuddy strategy: the tree buddy allocator (tbuddy.wgsl) on its own, every malloc a
// marked block of a power-of-two number of leaves. No loops here.

#include "tbuddy.wgsl"

fn strategy_malloc(size_bytes: u32) -> HeapAlloc {
    return tb_malloc(size_bytes, true);
}

fn strategy_free(ptr: u32) -> HeapFree {
    return tb_free(ptr);
}

fn strategy_init(i: u32) {
    tb_init();
}

fn strategy_grow(from_units: u32, to_units: u32) {
    tb_grow(from_units, to_units);
}

fn strategy_trim_check(i: u32, from_units: u32, to_units: u32) -> bool {
    return tb_trim_check(from_units, to_units);
}

fn strategy_trim(from_units: u32, to_units: u32) {
    tb_trim(from_units, to_units);
}
