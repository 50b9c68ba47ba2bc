//! Ouroboros under mixed traffic: in one dispatch, every invocation repeatedly mallocs,
//! writes a pattern over its block, verifies it and frees it, so enqueues and dequeues of
//! the same queues (and, for the virtualized variants, queue chunks being placed and
//! returned) race each other. A block handed to two invocations at once shows up as a
//! pattern mismatch. Afterwards nothing may be live and no call may have failed.

use std::time::Duration;

use gpu_heap::{read_buffer, submit_and_wait, Gpu, GpuHeap, HeapConfig, Strategy};

const KERNEL: &str = r#"
#include "alloc.wgsl"

// [0] successful mallocs, [1] NULLs, [2] corrupted blocks, [3] frees not OK
@group(1) @binding(0) var<storage, read_write> tally: array<atomic<u32>>;

const ROUNDS: u32 = 8u;

@compute @workgroup_size(64)
fn mixed(@builtin(global_invocation_id) id: vec3<u32>) {
    var rng = heap_hash(id.x * 0x9e3779b9u + 1u) | 1u;
    for (var round = 0u; round < ROUNDS; round++) {
        rng = heap_rng_next(rng);
        // Mostly small sizes, some up to 4 KiB: several classes share the dispatch.
        let size = 16u << ((rng >> 4u) % 9u);
        let p = malloc(size);
        if (p == 0u) {
            atomicAdd(&tally[1], 1u);
            continue;
        }
        atomicAdd(&tally[0], 1u);
        let words = min(size / 4u, 64u);
        let tag = id.x * 977u + round;
        for (var k = 0u; k < words; k++) {
            heap_store(p, k * (size / 4u / words), heap_hash(tag ^ k));
        }
        var bad = false;
        for (var k = 0u; k < words; k++) {
            if (heap_load(p, k * (size / 4u / words)) != heap_hash(tag ^ k)) {
                bad = true;
            }
        }
        if (bad) {
            atomicAdd(&tally[2], 1u);
        }
        free(p);
        if (heap_status != HEAP_OK) {
            atomicAdd(&tally[3], 1u);
        }
    }
}
"#;

fn check(strategy: Strategy) {
    let gpu = Gpu::open(None).expect("a GPU adapter (install Mesa's lavapipe without a GPU)");
    let (device, queue) = (&gpu.device, &gpu.queue);
    let heap = GpuHeap::with_config(
        device,
        queue,
        HeapConfig::new(64 << 20)
            .strategy(strategy)
            .max_segment_size(16 << 20)
            .watchdog(Duration::from_secs(60)),
    )
    .unwrap();
    let module = heap.create_shader_module("mixed.wgsl", KERNEL).unwrap();
    let tally = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("tally"),
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
            resource: tally.as_entire_binding(),
        }],
    });
    let pipeline = heap
        .compute_pipeline("mixed", &module, "mixed", &[(1, &layout)])
        .unwrap();
    let threads = 32_768u32;
    for _ in 0..2 {
        let mut encoder = device.create_command_encoder(&Default::default());
        encoder.clear_buffer(&tally, 0, None);
        {
            let mut pass = encoder.begin_compute_pass(&Default::default());
            pass.set_pipeline(&pipeline);
            pass.set_bind_group(heap.bind_group_index(), heap.bind_group(), &[]);
            pass.set_bind_group(1, &group, &[]);
            pass.dispatch_workgroups(threads / 64, 1, 1);
        }
        submit_and_wait(device, queue, encoder, Duration::from_secs(120), "mixed").unwrap();
        let bytes = read_buffer(device, queue, &tally, 0, 16, Duration::from_secs(10)).unwrap();
        let t: Vec<u32> = bytemuck::pod_collect_to_vec(&bytes);
        let stats = heap.stats().unwrap();
        eprintln!("{strategy}: tally {t:?}, {stats:?}");
        assert_eq!(t[0] + t[1], threads * 8, "every call accounted for");
        assert_eq!(t[2], 0, "blocks handed to two invocations at once");
        assert_eq!(t[1], 0, "NULLs from malloc");
        assert_eq!(t[3], 0, "frees not OK");
        assert_eq!((stats.allocations_live, stats.bytes_live), (0, 0));
        assert_eq!(stats.failures, Default::default());
    }
}

#[test]
fn ouro_p_s() {
    check(Strategy::OuroPS);
}

#[test]
fn ouro_p_va() {
    check(Strategy::OuroPVA);
}

#[test]
fn ouro_p_vl() {
    check(Strategy::OuroPVL);
}
