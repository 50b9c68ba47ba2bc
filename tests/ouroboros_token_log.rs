//! A chunk-based heap returns every chunk whose pages are all free, however far its token
//! lies behind the front of its class's token log.
//!
//! A token is placed when a chunk's first page comes back and removed when its last one
//! does, so the chunk can go back to the pool. One chunk that keeps a page pins the log's
//! front at its token while the other chunks' tokens pile up behind it: on a heap of 1 GiB
//! or more, a million invocations make that many. Here, with chunks of 64 bytes (16 tokens
//! a queue chunk), 2048 chunks of two 32-byte pages each place their tokens behind a
//! pinned one, then free their second pages: every one of them must leave the class.

mod common;

use common::Kernel;
use gpu_heap::{GpuHeap, HeapConfig, OuroborosParams, Strategy, UNIT_BYTES};

/// held[i]: slot i's block (HEAP_NULL when empty), whose first word holds i while live.
/// params[0]: the step; params[1]: the pinned chunk, slot 0's, whose block stays until step
/// 4. Step 0 fills every slot; 1 frees the pinned chunk's other page (its token is placed
/// first); 2 every other chunk's first page; 3 every other chunk's second page; 4
/// everything left. out[0]: NULL mallocs; out[1]: frees that failed;
/// out[2]: blocks that lost their slot number.
const KERNEL: &str = r#"
#include "alloc.wgsl"
@group(1) @binding(0) var<storage, read_write> held: array<u32>;
@group(1) @binding(1) var<storage, read_write> out: array<atomic<u32>>;
@group(1) @binding(2) var<storage, read_write> params: array<u32>;
@compute @workgroup_size(64)
fn run_step(@builtin(global_invocation_id) id: vec3<u32>) {
    let i = id.x;
    if (i >= arrayLength(&held)) {
        return;
    }
    let p = held[i];
    let s = params[0];
    if (s == 0u) {
        let q = malloc(32u);
        if (q == HEAP_NULL) {
            atomicAdd(&out[0], 1u);
        } else {
            heap_store(q, 0u, i);
        }
        held[i] = q;
        return;
    }
    if (p == HEAP_NULL) {
        return;
    }
    let unit = gpu_heap_unit_of(p);
    let pinned = (unit >> GPU_HEAP_OURO_CHUNK_SHIFT) == params[1];
    let first = (unit & (GPU_HEAP_OURO_CHUNK_UNITS - 1u)) == 0u;
    let go = (s == 1u && pinned && i != 0u) || (s == 2u && !pinned && first)
        || (s == 3u && !pinned) || s == 4u;
    if (!go) {
        return;
    }
    if (heap_load(p, 0u) != i) {
        atomicAdd(&out[2], 1u);
    }
    free(p);
    if (heap_status != HEAP_OK) {
        atomicAdd(&out[1], 1u);
    }
    held[i] = HEAP_NULL;
}
"#;

fn tokens_far_behind_a_pinned_front(strategy: Strategy) {
    let gpu = common::gpu();
    let params = OuroborosParams {
        chunk_size: 64,
        ..OuroborosParams::default()
    };
    let heap = GpuHeap::with_config(
        &gpu.device,
        &gpu.queue,
        HeapConfig::new(512 << 10)
            .strategy(strategy)
            .ouroboros(params)
            .watchdog(common::WATCHDOG),
    )
    .unwrap();
    // 4096 blocks of 32 bytes: 2048 chunks of the heap's 8192.
    let slots = 4096u32;
    let held = common::storage_from(gpu, "held", &vec![0; slots as usize]);
    let out = common::storage(gpu, "out", 16);
    let step_params = common::storage(gpu, "params", 16);
    let kernel = Kernel::new(gpu, &heap, KERNEL, "run_step", &[common::RW; 3]);
    let class_chunks = || {
        let report = heap.ouroboros_report().unwrap().unwrap();
        let class = report.classes.iter().find(|c| c.page_bytes == 32).unwrap();
        (class.chunks, format!("{report:?}"))
    };
    // The chunk of slot 0's block stays pinned.
    let mut pinned = 0u32;
    for step in 0..5u32 {
        let words = [step, pinned];
        gpu.queue
            .write_buffer(&step_params, 0, bytemuck::cast_slice(&words));
        kernel.run(gpu, &heap, &[&held, &out, &step_params], slots / 64);
        if step == 0 {
            let handle = common::read_words(gpu, &held, 1)[0];
            assert_ne!(handle, 0, "{strategy:?}: slot 0 got no block");
            pinned = (handle - 1) / (params.chunk_size / UNIT_BYTES as u32);
        }
        if step == 3 {
            let (chunks, books) = class_chunks();
            assert_eq!(
                chunks, 1,
                "{strategy:?}: chunks left in the class besides the pinned one; {books}"
            );
        }
    }
    let counts = common::read_words(gpu, &out, 3);
    assert_eq!(
        counts,
        [0, 0, 0],
        "{strategy:?}: NULL mallocs, failed frees, blocks handed out twice"
    );
    assert_eq!(heap.stats().unwrap().allocations_live, 0, "{strategy:?}");
    let (chunks, books) = class_chunks();
    assert_eq!(chunks, 0, "{strategy:?}: chunks left in the class; {books}");
}

#[test]
fn ouro_c_vl_returns_chunks_whose_tokens_lie_far_behind_the_front() {
    tokens_far_behind_a_pinned_front(Strategy::OuroCVL);
}
