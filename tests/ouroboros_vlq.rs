//! The linked-chunk queue (VLQ) recovers when its back pointer falls behind front.
//!
//! On a GPU, back's moves race: a front move drags back along with a CAS that expects back
//! at the chunk front leaves, and a drag delayed past the next front move leaves back behind
//! front for good. Old then frees back's chunk and every enqueue fails (seen on the H200 as
//! P-VL frees failing with out of memory by the hundred thousand). lavapipe does not delay
//! invocations that way, so this test puts back where such a late drag leaves it (at the
//! oldest retained chunk, behind front) and checks that the queue keeps working for more
//! than OURO_VL_TRAIL chunks of traffic, after which that chunk has been freed.

use std::time::Duration;

use gpu_heap::{read_buffer, submit_and_wait, Gpu, GpuHeap, HeapConfig, Strategy};

const KERNEL: &str = r#"
#include "alloc.wgsl"

// [0] failed enqueues, [1] dequeues that found no item, [2] 1 when done,
// [3] 1 if the set-up left back behind front
@group(1) @binding(0) var<storage, read_write> out: array<atomic<u32>>;

// One chunk's worth of items in, then out, on the 16-byte class's queue.
fn lap() {
    for (var i = 0u; i < OURO_QC_ITEMS; i++) {
        if (!cq_enqueue(0u, i + 1u)) {
            atomicAdd(&out[0], 1u);
        }
    }
    for (var i = 0u; i < OURO_QC_ITEMS; i++) {
        if (cq_dequeue(0u) == OQ_EMPTY) {
            atomicAdd(&out[1], 1u);
        }
    }
}

@compute @workgroup_size(1)
fn lagging_back() {
    let d = ouro_queue_meta(0u);
    for (var r = 0u; r < 4u; r++) {
        lap();
    }
    // A late drag: back at the oldest chunk still kept, behind front.
    let old = atomicLoad(&heap_meta[d + 7u]);
    atomicStore(&heap_meta[d + 6u], old);
    let fs = atomicLoad(&heap_meta[OURO_QC_START + atomicLoad(&heap_meta[d + 5u]) - 1u]);
    let bs = atomicLoad(&heap_meta[OURO_QC_START + old - 1u]);
    if (bitcast<i32>(fs - bs) > 0) {
        atomicStore(&out[3], 1u);
    }
    for (var r = 0u; r < OURO_VL_TRAIL + 4u; r++) {
        lap();
    }
    atomicStore(&out[2], 1u);
}
"#;

#[test]
fn ouro_p_vl_back_behind_front_recovers() {
    let gpu = Gpu::open(None).expect("a GPU adapter (install Mesa's lavapipe without a GPU)");
    let (device, queue) = (&gpu.device, &gpu.queue);
    // 1024 chunks: OURO_VL_TRAIL is 8.
    let heap = GpuHeap::with_config(
        device,
        queue,
        HeapConfig::new(8 << 20)
            .strategy(Strategy::OuroPVL)
            .watchdog(Duration::from_secs(300)), // cold llvmpipe compiles: see conformance.rs
    )
    .unwrap();
    let module = heap.create_shader_module("vlq.wgsl", KERNEL).unwrap();
    let out = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("out"),
        size: 16,
        usage: wgpu::BufferUsages::STORAGE
            | wgpu::BufferUsages::COPY_SRC
            | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    let layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
        label: None,
        entries: &[wgpu::BindGroupLayoutEntry {
            binding: 0,
            visibility: wgpu::ShaderStages::COMPUTE,
            ty: wgpu::BindingType::Buffer {
                ty: wgpu::BufferBindingType::Storage { read_only: false },
                has_dynamic_offset: false,
                min_binding_size: None,
            },
            count: None,
        }],
    });
    let group = device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: None,
        layout: &layout,
        entries: &[wgpu::BindGroupEntry {
            binding: 0,
            resource: out.as_entire_binding(),
        }],
    });
    let pipeline = heap
        .compute_pipeline("lagging_back", &module, "lagging_back", &[(1, &layout)])
        .unwrap();
    let mut encoder = device.create_command_encoder(&Default::default());
    encoder.clear_buffer(&out, 0, None);
    {
        let mut pass = encoder.begin_compute_pass(&Default::default());
        pass.set_pipeline(&pipeline);
        pass.set_bind_group(heap.bind_group_index(), heap.bind_group(), &[]);
        pass.set_bind_group(1, &group, &[]);
        pass.dispatch_workgroups(1, 1, 1);
    }
    submit_and_wait(device, queue, encoder, Duration::from_secs(300), "vlq").unwrap();
    let bytes = read_buffer(device, queue, &out, 0, 16, Duration::from_secs(10)).unwrap();
    let t: Vec<u32> = bytemuck::pod_collect_to_vec(&bytes);
    assert_eq!(t[2], 1, "the kernel ran to its end");
    assert_eq!(t[3], 1, "the set-up left back behind front");
    assert_eq!(t[0], 0, "failed enqueues");
    assert_eq!(t[1], 0, "dequeues without an item");
}
