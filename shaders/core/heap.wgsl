// Handles and user-data access.
//
// A handle is (unit + 1), where unit is the index of a 16-byte unit of the heap, so 0 stays
// free for NULL, every allocation is 16-byte aligned, and u32 handles reach 64 GiB.
// Unit u lives in segment (u >> HEAP_SEGMENT_SHIFT) at unit (u & HEAP_SEGMENT_MASK); the
// generated configuration provides heap_segment_load/heap_segment_store over whichever
// binding scheme (binding array or separate bindings) the heap uses.
//
// Invariant relied on: strategies never hand out a block that crosses a segment boundary,
// so word offsets inside an allocation never leave its segment. Access past the end of an
// allocation is not checked (as in C); it stays inside the heap's buffers.
// No loops.

fn heap_unit_of(ptr: u32) -> u32 {
    return ptr - 1u;
}

fn heap_handle_of(unit: u32) -> u32 {
    return unit + 1u;
}

// Units (16 bytes each) needed for `size_bytes`; callers have checked size_bytes > 0.
fn heap_units_for(size_bytes: u32) -> u32 {
    return ((size_bytes - 1u) >> 4u) + 1u;
}

fn heap_load(ptr: u32, word: u32) -> u32 {
    let unit = heap_unit_of(ptr);
    return heap_segment_load(unit >> HEAP_SEGMENT_SHIFT, ((unit & HEAP_SEGMENT_MASK) << 2u) + word);
}

fn heap_store(ptr: u32, word: u32, value: u32) {
    let unit = heap_unit_of(ptr);
    heap_segment_store(unit >> HEAP_SEGMENT_SHIFT, ((unit & HEAP_SEGMENT_MASK) << 2u) + word, value);
}

struct HeapAlloc {
    handle: u32,
    units: u32,
    status: u32,
}

struct HeapFree {
    units: u32,
    status: u32,
}
