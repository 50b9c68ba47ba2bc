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
// Layout (u32 words from HEAP_GROWTH; keep in sync with src/growth.rs, GROWTH_*):
//   +0  committed units (written by the host; HEAP_UNITS for heaps that cannot grow)
//   +1  resize from: committed units before the grow or trim being applied
//   +2  resize to: committed units after it
//   +3  low watermark, in the strategy's free-count items (pages, RW_malloc units,
//       16-byte units for bump, fresh chunks for Ouroboros); 0 = off
//   +4  pressure flags, set by the device, read and cleared by GpuHeap::maintain:
//         bit 0 (HEAP_PRESSURE_OOM)  a malloc failed for lack of memory
//         bit 1 (HEAP_PRESSURE_LOW)  a malloc left the free count under the watermark
//   +5  trim check: set to 1 by any invocation of gpu_heap_trim_check that found the
//       range to release still in use
//   +6  invocations of the trim check (host-written)
//   +7  reserved
//
// Heaps that cannot grow (GPU_HEAP_GROWABLE undefined) compile none of the loads on the
// success path: heap_committed_units() is the constant HEAP_UNITS and the watermark check
// is empty; only a failed malloc touches the growth block (HEAP_PRESSURE_OOM).
// No loops.

const HEAP_COMMITTED: u32 = HEAP_GROWTH;
const HEAP_RESIZE_FROM: u32 = HEAP_GROWTH + 1u;
const HEAP_RESIZE_TO: u32 = HEAP_GROWTH + 2u;
const HEAP_WATERMARK: u32 = HEAP_GROWTH + 3u;
const HEAP_PRESSURE: u32 = HEAP_GROWTH + 4u;
const HEAP_TRIM_BUSY: u32 = HEAP_GROWTH + 5u;
const HEAP_TRIM_INVOCATIONS: u32 = HEAP_GROWTH + 6u;

const HEAP_PRESSURE_OOM: u32 = 1u;
const HEAP_PRESSURE_LOW: u32 = 2u;

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
