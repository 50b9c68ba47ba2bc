//! The random-walk family beyond the conformance suite: divergent callers (only some lanes
//! of a subgroup malloc), CoRW's fallback on a device without subgroups,
//! and RW_malloc's aggregation (TAS and utilisation are tested with the tools, in cli/).

mod common;

use std::time::Duration;

use gpu_heap::{GpuHeap, HeapConfig, RandomWalkParams, Strategy};

const KERNEL: &str = r#"
#include "alloc.wgsl"

struct Params { n: u32, mode: u32, seed: u32, size: u32 }
@group(1) @binding(0) var<uniform> prm: Params;
// Per invocation: handle, size, status.
@group(1) @binding(1) var<storage, read_write> out: array<u32>;
// [0] corrupted allocations, [1] frees that failed.
@group(1) @binding(2) var<storage, read_write> bad: array<atomic<u32>>;

// Which invocations call malloc: the caller's control flow diverges inside subgroups.
fn wants(i: u32) -> bool {
    switch prm.mode {
        case 0u: { return (i & 1u) == 1u; }                        // odd lanes
        case 1u: { return (i % 8u) < 3u; }                         // 3 lanes of every 8
        case 2u: { return gpu_heap_hash(i ^ prm.seed) % 3u == 0u; }    // data-dependent
        case 3u: { return (i & 31u) == 7u; }                       // one lane in 32
        default: { return true; }
    }
}

fn word(i: u32, k: u32) -> u32 {
    return gpu_heap_hash(i ^ (k * 0x9e3779b9u) ^ prm.seed);
}

@compute @workgroup_size(64)
fn alloc_some(@builtin(global_invocation_id) id: vec3<u32>) {
    let i = id.x;
    if (i >= prm.n) {
        return;
    }
    out[3u * i] = 0u;
    out[3u * i + 1u] = 0u;
    out[3u * i + 2u] = 0u;
    if (wants(i)) {
        // Small sizes of several units, so RW_malloc aggregates unequal requests (or the
        // size the host asks for).
        var size = 4u + gpu_heap_hash(i * 7u ^ prm.seed) % 120u;
        if (prm.size != 0u) {
            size = prm.size;
        }
        let p = malloc(size);
        out[3u * i] = p;
        out[3u * i + 1u] = size;
        out[3u * i + 2u] = heap_status;
        if (p != 0u) {
            for (var k = 0u; k < (size + 3u) / 4u; k++) {
                heap_store(p, k, word(i, k));
            }
        }
    }
}

@compute @workgroup_size(64)
fn check_and_free(@builtin(global_invocation_id) id: vec3<u32>) {
    let i = id.x;
    if (i >= prm.n || out[3u * i] == 0u) {
        return;
    }
    let p = out[3u * i];
    let size = out[3u * i + 1u];
    var ok = true;
    for (var k = 0u; k < (size + 3u) / 4u; k++) {
        if (heap_load(p, k) != word(i, k)) {
            ok = false;
        }
    }
    if (!ok) {
        atomicAdd(&bad[0], 1u);
    }
    free(p);
    if (heap_status != HEAP_OK) {
        atomicAdd(&bad[1], 1u);
    }
}
"#;

/// Runs the divergent kernel on `device` for every mode; returns problems found.
fn divergent(device: &wgpu::Device, queue: &wgpu::Queue, strategy: Strategy) -> Vec<String> {
    let config = HeapConfig::new(32 << 20)
        .strategy(strategy)
        .random_walk(RandomWalkParams {
            page_size: 128,
            ..Default::default()
        })
        .watchdog(Duration::from_secs(300));
    divergent_with(device, queue, config, 8192, 0, &[0, 1, 2, 3])
}

/// The divergent kernel on a heap of `config`: `n` invocations, the lanes of each mode
/// (0 odd, 1 three of every eight, 2 hashed, 3 one in 32, 4 all) ask for `size` bytes each
/// (0: small mixed sizes).
fn divergent_with(
    device: &wgpu::Device,
    queue: &wgpu::Queue,
    config: HeapConfig,
    n: u32,
    size: u32,
    modes: &[u32],
) -> Vec<String> {
    let strategy = config.strategy;
    let heap = GpuHeap::with_config(device, queue, config).expect("heap");
    let module = heap
        .create_shader_module("divergent", KERNEL)
        .expect("kernel");
    let buffer = |label, size, usage| {
        device.create_buffer(&wgpu::BufferDescriptor {
            label: Some(label),
            size,
            usage,
            mapped_at_creation: false,
        })
    };
    let copy = wgpu::BufferUsages::COPY_SRC | wgpu::BufferUsages::COPY_DST;
    let params = buffer(
        "params",
        16,
        wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
    );
    let out = buffer("out", n as u64 * 12, wgpu::BufferUsages::STORAGE | copy);
    let bad = buffer("bad", 16, wgpu::BufferUsages::STORAGE | copy);
    let storage = wgpu::BufferBindingType::Storage { read_only: false };
    let kinds = [wgpu::BufferBindingType::Uniform, storage, storage];
    let layout = gpu_heap::buffer_group_layout(device, "divergent", &kinds);
    let group = gpu_heap::buffer_group(device, "divergent", &layout, &[&params, &out, &bad]);
    let pipeline = |entry: &str| {
        heap.compute_pipeline(entry, &module, entry, &[(1, &layout)])
            .expect("pipeline")
    };
    let (alloc, check) = (pipeline("alloc_some"), pipeline("check_and_free"));
    let run = |p: &wgpu::ComputePipeline| {
        let mut encoder = device.create_command_encoder(&Default::default());
        {
            let mut pass = encoder.begin_compute_pass(&Default::default());
            pass.set_pipeline(p);
            pass.set_bind_group(0, heap.bind_group(), &[]);
            pass.set_bind_group(1, &group, &[]);
            pass.dispatch_workgroups(n.div_ceil(64), 1, 1);
        }
        gpu_heap::submit_and_wait(device, queue, encoder, Duration::from_secs(300), "kernel")
            .expect("dispatch");
    };
    let mut problems = Vec::new();
    for &mode in modes {
        let what = format!("{strategy} mode {mode}");
        queue.write_buffer(
            &params,
            0,
            bytemuck::cast_slice(&[n, mode, 0x1234 + mode, size]),
        );
        queue.write_buffer(&bad, 0, &[0u8; 16]);
        run(&alloc);
        let words: Vec<u32> = bytemuck::pod_collect_to_vec(
            &gpu_heap::read_buffer(
                device,
                queue,
                &out,
                0,
                n as u64 * 12,
                Duration::from_secs(300),
            )
            .expect("readback"),
        );
        // The same predicate on the host.
        let wanted = (0..n)
            .filter(|&i| match mode {
                0 => i & 1 == 1,
                1 => i % 8 < 3,
                2 => true, // data-dependent: checked through the statuses below
                3 => i & 31 == 7,
                _ => true,
            })
            .count();
        let mut spans: Vec<(u64, u64)> = Vec::new();
        let mut nulls = 0;
        for i in 0..n as usize {
            let (p, size, status) = (words[3 * i], words[3 * i + 1], words[3 * i + 2]);
            if p == 0 {
                if size != 0 || status != 0 {
                    nulls += 1;
                }
                continue;
            }
            let start = p as u64 - 1;
            spans.push((start, start + (size as u64).div_ceil(16)));
        }
        if mode != 2 && spans.len() != wanted {
            problems.push(format!(
                "{what}: {} allocations, {wanted} lanes asked",
                spans.len()
            ));
        }
        if nulls > 0 {
            problems.push(format!("{what}: {nulls} mallocs returned NULL"));
        }
        spans.sort_unstable();
        let overlaps = spans.windows(2).filter(|w| w[1].0 < w[0].1).count();
        if overlaps > 0 {
            problems.push(format!("{what}: {overlaps} overlapping allocations"));
        }
        let stats = heap.stats().expect("stats");
        if stats.allocations_live != spans.len() as u64 {
            problems.push(format!(
                "{what}: {} live in the statistics, {} handed out",
                stats.allocations_live,
                spans.len()
            ));
        }
        run(&check);
        let bad: Vec<u32> = bytemuck::pod_collect_to_vec(
            &gpu_heap::read_buffer(device, queue, &bad, 0, 16, Duration::from_secs(300))
                .expect("readback"),
        );
        if bad[0] != 0 || bad[1] != 0 {
            problems.push(format!(
                "{what}: {} corrupted, {} failed frees",
                bad[0], bad[1]
            ));
        }
        let stats = heap.stats().expect("stats");
        if (stats.allocations_live, stats.bytes_live) != (0, 0) || stats.failures.total() != 0 {
            problems.push(format!("{what}: after freeing all: {stats:?}"));
        }
        heap.reset().expect("reset");
    }
    problems
}

fn check_divergent(strategy: Strategy) {
    let gpu = common::gpu();
    let problems = divergent(&gpu.device, &gpu.queue, strategy);
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn corw_with_divergent_callers() {
    check_divergent(Strategy::Corw);
}

#[test]
fn rw_malloc_with_divergent_callers() {
    check_divergent(Strategy::RwMalloc);
}

/// RW_malloc with units so large that a subgroup's small requests add up to more than the
/// longest run a claim covers (RWM_MAX_UNITS, 16 units of 64 KiB here): a subgroup of 32
/// lanes asking 8 units each sums to 256. The leader must not walk for that sum; before it
/// was refused, its claim covered only the first words of the run, and on an NVIDIA H100
/// lanes received pieces that other walks handed out again. (Lavapipe's subgroups of 8 sum
/// to 64 units at most, which an aligned claim still covers.)
#[test]
fn rw_malloc_aggregate_longer_than_a_claim() {
    let gpu = common::gpu();
    let config = HeapConfig::new(64 << 20)
        .strategy(Strategy::RwMalloc)
        .random_walk(RandomWalkParams {
            unit_size: 64 << 10,
            ..Default::default()
        })
        .watchdog(Duration::from_secs(300));
    let problems = divergent_with(&gpu.device, &gpu.queue, config, 64, 8 << 16, &[4, 2]);
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn rw_bm_and_rw_with_divergent_callers() {
    check_divergent(Strategy::RwBm);
    check_divergent(Strategy::Rw);
}

/// On a device without subgroups, CoRW is planned and compiled as RW-BM, and RW_malloc
/// walks per invocation; both still pass the divergent kernel.
#[test]
fn without_subgroups_corw_runs_as_rw_bm() {
    let gpu = common::gpu();
    let (device, queue) = pollster::block_on(gpu.adapter.request_device(&wgpu::DeviceDescriptor {
        label: Some("no subgroups"),
        required_limits: gpu.adapter.limits(),
        ..Default::default()
    }))
    .expect("a device without features");
    assert!(!device.features().contains(wgpu::Features::SUBGROUP));
    let heap = GpuHeap::with_config(
        &device,
        &queue,
        HeapConfig::new(1 << 20).strategy(Strategy::Corw),
    )
    .expect("heap");
    assert_eq!(heap.layout().strategy, Strategy::Corw);
    assert_eq!(heap.layout().compiled(), Strategy::RwBm);
    let mut problems = divergent(&device, &queue, Strategy::Corw);
    problems.extend(divergent(&device, &queue, Strategy::RwMalloc));
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    if gpu.device.features().contains(wgpu::Features::SUBGROUP) {
        let heap = GpuHeap::with_config(
            &gpu.device,
            &gpu.queue,
            HeapConfig::new(1 << 20).strategy(Strategy::Corw),
        )
        .expect("heap");
        assert_eq!(heap.layout().compiled(), Strategy::Corw);
    }
}

/// Where subgroups exist, RW_malloc serves the small requests of a subgroup with one walk.
#[test]
fn rw_malloc_aggregates_small_requests() {
    let gpu = common::gpu();
    let heap = GpuHeap::with_config(
        &gpu.device,
        &gpu.queue,
        HeapConfig::new(4 << 20)
            .strategy(Strategy::RwMalloc)
            .count_steps(true),
    )
    .unwrap();
    let module = heap
        .create_shader_module(
            "aggregate",
            "#include \"alloc.wgsl\"\n\
             @compute @workgroup_size(64)\n\
             fn main(@builtin(global_invocation_id) id: vec3<u32>) {\n\
                 let p = malloc(16u + (id.x % 3u) * 16u);\n\
                 if (p != 0u) { heap_store(p, 0u, id.x); }\n\
             }",
        )
        .unwrap();
    let pipeline = heap
        .compute_pipeline("aggregate", &module, "main", &[])
        .unwrap();
    let n = 8192u32;
    let mut encoder = gpu.device.create_command_encoder(&Default::default());
    {
        let mut pass = encoder.begin_compute_pass(&Default::default());
        pass.set_pipeline(&pipeline);
        pass.set_bind_group(0, heap.bind_group(), &[]);
        pass.dispatch_workgroups(n / 64, 1, 1);
    }
    gpu_heap::submit_and_wait(
        &gpu.device,
        &gpu.queue,
        encoder,
        Duration::from_secs(300),
        "aggregate",
    )
    .unwrap();
    let stats = heap.stats().unwrap();
    assert_eq!(stats.allocations_live, n as u64);
    assert_eq!(stats.failures.total(), 0);
    // 1, 2 and 3 units in turn: 16 KiB per 1024 invocations.
    assert_eq!(
        stats.bytes_live,
        (n as u64 / 3) * 96 + [0, 16, 48][n as usize % 3]
    );
    let walks = heap.walk_steps().unwrap().unwrap().walks;
    if gpu.device.features().contains(wgpu::Features::SUBGROUP) {
        assert!(walks * 2 <= n as u64, "{walks} walks for {n} small mallocs");
    } else {
        assert_eq!(walks, n as u64);
    }
}
