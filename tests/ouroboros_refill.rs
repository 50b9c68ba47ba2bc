//! The chunk-based Ouroboros variants refill a full heap after a hashed subset of its blocks
//! is freed: every chunk keeps some blocks live, so no chunk goes back to the pool, and the
//! freed pages are the only memory left. Each must be found again (through the class's
//! index of chunks with free pages, with many claimants on few pages), so the refill, which
//! asks for a few more blocks than were freed, gets exactly as many as were freed.

mod common;

use common::Kernel;
use gpu_heap::{GpuHeap, HeapConfig, Strategy};

/// held[i]: slot i's block (HEAP_NULL when empty), whose first word holds i while live.
/// params[0]: the phase (0 fill every slot, 1 free the slots whose hash is odd, 2 fill the
/// empty slots, 3 free everything). out[0]: NULL mallocs; out[1]: frees that failed;
/// out[2]: blocks that lost their slot number (handed out twice); out[3]: frees made.
const KERNEL: &str = r#"
#include "alloc.wgsl"
@group(1) @binding(0) var<storage, read_write> held: array<u32>;
@group(1) @binding(1) var<storage, read_write> out: array<atomic<u32>>;
@group(1) @binding(2) var<storage, read_write> params: array<u32>;
@compute @workgroup_size(64)
fn phase(@builtin(global_invocation_id) id: vec3<u32>) {
    let i = id.x;
    if (i >= arrayLength(&held)) {
        return;
    }
    let p = held[i];
    let step = params[0];
    if (step == 1u || step == 3u) {
        if (p == HEAP_NULL || (step == 1u && (gpu_heap_hash(i * 0x9e3779b9u) & 1u) == 0u)) {
            return;
        }
        if (heap_load(p, 0u) != i) {
            atomicAdd(&out[2], 1u);
        }
        free(p);
        if (heap_status != HEAP_OK) {
            atomicAdd(&out[1], 1u);
        }
        atomicAdd(&out[3], 1u);
        held[i] = HEAP_NULL;
        return;
    }
    if (p != HEAP_NULL) {
        return;
    }
    let q = malloc(16u);
    if (q == HEAP_NULL) {
        atomicAdd(&out[0], 1u);
    } else {
        heap_store(q, 0u, i);
    }
    held[i] = q;
}
"#;

fn refill(strategy: Strategy) {
    let gpu = common::gpu();
    let heap = GpuHeap::with_config(
        &gpu.device,
        &gpu.queue,
        HeapConfig::new(2 << 20)
            .strategy(strategy)
            .watchdog(common::WATCHDOG),
    )
    .unwrap();
    let capacity = heap.layout().capacity_for(16) as u32;
    let slots = (capacity + 1).next_multiple_of(64);
    let held = common::storage_from(gpu, "held", &vec![0; slots as usize]);
    let out = common::storage(gpu, "out", 16);
    let params = common::storage(gpu, "params", 16);
    let kernel = Kernel::new(gpu, &heap, KERNEL, "phase", &[common::RW; 3]);
    let run = |step: u32| {
        gpu.queue.write_buffer(&params, 0, &step.to_le_bytes());
        kernel.run(gpu, &heap, &[&held, &out, &params], slots / 64);
        common::read_words(gpu, &out, 4)
    };
    // For the message of a count that fails: the failures by cause and the books.
    let books = || {
        format!(
            "failures {:?}; the books: {:?}",
            heap.stats().unwrap().failures,
            heap.ouroboros_report().unwrap()
        )
    };
    // Fill: every block of the heap, and the slots past its capacity come back NULL.
    let filled = run(0);
    assert_eq!(
        filled[0],
        slots - capacity,
        "{strategy:?}: NULLs filling the heap; {}",
        books()
    );
    let live = heap.stats().unwrap().allocations_live;
    assert_eq!(live, capacity as u64, "{strategy:?}: live after the fill");
    // A hashed half of the blocks, spread over every chunk.
    let freed = run(1)[3];
    assert!(freed > capacity / 3, "{strategy:?}: only {freed} freed");
    assert_eq!(heap.stats().unwrap().allocations_live, live - freed as u64);
    // Refill: the empty slots ask for more blocks than were freed (the slots past the
    // capacity too); exactly `freed` must succeed.
    let refilled = run(2);
    let nulls = refilled[0] - filled[0];
    assert_eq!(
        nulls,
        slots - capacity,
        "{strategy:?}: NULLs refilling {freed} freed blocks; {}",
        books()
    );
    assert_eq!(heap.stats().unwrap().allocations_live, live);
    let done = run(3);
    assert_eq!(
        done[1..3],
        [0, 0],
        "{strategy:?}: failed frees, blocks handed out twice"
    );
    assert_eq!(heap.stats().unwrap().allocations_live, 0, "{strategy:?}");
}

#[test]
fn chunk_based_variants_find_every_freed_page_of_a_full_heap() {
    for strategy in [Strategy::OuroCS, Strategy::OuroCVA, Strategy::OuroCVL] {
        refill(strategy);
    }
}
