// The growth block: what a heap that grows without copying (HeapConfig::max_size) keeps at
// the end of heap_meta, and the pressure signal its strategies raise.
//
// The handle space is reserved up front: the layout, the bindings and every strategy's
// state are sized for the maximum (HEAP_UNITS units, HEAP_SEGMENTS segments), and only the
// first segments are committed (real buffers; the others are bound to a placeholder). The
// committed count is runtime state, changed by the host between dispatches only, so every
// malloc and free of one dispatch sees one value. Growth never moves a byte: handles stay
// valid across grow() and trim(). (The idea follows CUDA's virtual memory management:
// reserve an address range, map physical memory into it as needed.)
//
// The block's words are declared on the host (src/meta.rs, generated into the
// configuration as HEAP_COMMITTED and the names below):
//   HEAP_COMMITTED         committed units (written by the host; HEAP_UNITS for heaps that
//                          cannot grow)
//   HEAP_RESIZE_FROM, _TO  committed units before and after the grow or trim being applied
//   HEAP_WATERMARK         low watermark, in the strategy's free-count items (pages,
//                          RW_malloc units, 16-byte units for bump, fresh chunks for
//                          Ouroboros); 0 = off
//   HEAP_PRESSURE          flags set by the device, read and cleared by GpuHeap::maintain:
//                          HEAP_PRESSURE_OOM (a malloc failed for lack of memory) and
//                          HEAP_PRESSURE_LOW (a malloc left the free count under the
//                          watermark)
//   HEAP_TRIM_BUSY         set to 1 by any invocation of gpu_heap_trim_check that found the
//                          range to release still in use
//   HEAP_TRIM_INVOCATIONS  invocations of the trim check (host-written)
//
// Heaps that cannot grow (GPU_HEAP_GROWABLE undefined) compile none of the loads on the
// success path: heap_committed_units() is the constant HEAP_UNITS and the watermark check
// is empty; only a failed malloc touches the growth block (HEAP_PRESSURE_OOM).
// No loops.

// Units of user memory committed now; allocations must lie below it.
fn heap_committed_units() -> u32 {
#ifdef GPU_HEAP_GROWABLE
    return atomicLoad(&heap_meta[HEAP_COMMITTED]);
#else
    return HEAP_UNITS;
#endif
}

// Raises pressure flags (in every heap: out-of-memory is raised on the failure path only,
// so a heap that cannot grow still tells maintain() it ran out). A load first, so that a
// flood of failing mallocs reads a cached word instead of queueing read-modify-writes.
fn heap_note_pressure(bits: u32) {
    if ((atomicLoad(&heap_meta[HEAP_PRESSURE]) & bits) != bits) {
        atomicOr(&heap_meta[HEAP_PRESSURE], bits);
    }
}

// A malloc left `free_items` free (in the strategy's items): under the watermark, raise
// HEAP_PRESSURE_LOW.
fn heap_note_free_items(free_items: u32) {
#ifdef GPU_HEAP_GROWABLE
    if (free_items < atomicLoad(&heap_meta[HEAP_WATERMARK])) {
        heap_note_pressure(HEAP_PRESSURE_LOW);
    }
#endif
}
