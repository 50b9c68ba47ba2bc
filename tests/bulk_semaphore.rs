//! Stress test of the bulk semaphore (shaders/sync/bulk_semaphore.wgsl) on the default
//! adapter: many invocations wait for 1..4 units at a time, produce batches when told to,
//! and signal units back, in the same dispatch. Afterwards no unit may be lost or created
//! (C equals every unit ever produced, once all are given back), the expected and reserved
//! counters are back at zero, and every wait is accounted for.

mod common;

use std::time::Duration;

use gpu_heap::{read_buffer, submit_and_wait, Composer, Gpu};
use wgpu::util::DeviceExt;

const KERNEL: &str = r#"
#include "core/hash.wgsl"
#include "sync/bulk_semaphore.wgsl"

// heap_meta is this kernel's own: the semaphore module uses it, not declares it.
// Words: [0, 1] the semaphore, [2] units produced, [3] waits that got units, [4] waits
// that produced a batch, [5] waits that ran out of rounds, [6] units held at the end of
// the wait phase (must be given back), [7] unit accounting errors seen by a thread.
@group(0) @binding(0) var<storage, read_write> heap_meta: array<atomic<u32>>;

struct Params {
    threads: u32,
    rounds: u32,
    batch: u32,
    seed: u32,
}
@group(0) @binding(1) var<uniform> params: Params;

const SEM: u32 = 0u;
const STEPS: u32 = 4096u;

@compute @workgroup_size(64)
fn stress(@builtin(global_invocation_id) id: vec3<u32>) {
    if (id.x >= params.threads) {
        return;
    }
    var rng = gpu_heap_hash(id.x ^ params.seed) | 1u;
    var held = 0u;
    for (var round = 0u; round < params.rounds; round++) {
        rng = gpu_heap_rng_next(rng);
        let n = 1u + (rng % min(4u, params.batch));
        if (((rng >> 9u) & 1u) == 1u && held > 0u) {
            // Give some units back.
            let r = min(held, n);
            gpu_heap_bsem_signal(SEM, r, 0u);
            held -= r;
            continue;
        }
        var st = gpu_heap_bsem_new_wait();
        var done = false;
        for (var step = 0u; step < STEPS; step++) {
            let r = gpu_heap_bsem_step(SEM, n, params.batch, &st, false);
            if (r == GPU_HEAP_BSEM_GOT) {
                held += n;
                atomicAdd(&heap_meta[3], 1u);
                done = true;
                break;
            }
            if (r == GPU_HEAP_BSEM_ALLOCATE) {
                // Produce a batch: keep n units, signal the rest and retire the batch.
                atomicAdd(&heap_meta[2], params.batch);
                held += n;
                gpu_heap_bsem_signal(SEM, params.batch - n, 1u);
                atomicAdd(&heap_meta[4], 1u);
                done = true;
                break;
            }
        }
        if (!done) {
            gpu_heap_bsem_abandon(SEM, n, &st);
            atomicAdd(&heap_meta[5], 1u);
        }
    }
    atomicAdd(&heap_meta[6], held);
    gpu_heap_bsem_signal(SEM, held, 0u);
}
"#;

struct Outcome {
    count: i32,
    expected_reserved: u32,
    produced: u32,
    got: u32,
    batches: u32,
    gave_up: u32,
}

fn run(gpu: &Gpu, threads: u32, rounds: u32, batch: u32, dispatches: u32) -> Outcome {
    let composed = Composer::new()
        .compose_str("bulk_semaphore_stress.wgsl", KERNEL)
        .unwrap();
    composed.validate().unwrap();
    let device = &gpu.device;
    let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
        label: Some("bulk semaphore stress"),
        source: wgpu::ShaderSource::Wgsl(composed.source().into()),
    });
    let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
        label: Some("bulk semaphore stress"),
        layout: None,
        module: &module,
        entry_point: Some("stress"),
        compilation_options: Default::default(),
        cache: None,
    });
    let words = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("semaphore words"),
        size: 64,
        usage: wgpu::BufferUsages::STORAGE
            | wgpu::BufferUsages::COPY_SRC
            | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    let mut encoder = device.create_command_encoder(&Default::default());
    encoder.clear_buffer(&words, 0, None);
    submit_and_wait(
        device,
        &gpu.queue,
        encoder,
        Duration::from_secs(10),
        "clear",
    )
    .unwrap();
    for d in 0..dispatches {
        let params = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some("params"),
            contents: bytemuck::cast_slice(&[threads, rounds, batch, 0x9e37 + d]),
            usage: wgpu::BufferUsages::UNIFORM,
        });
        let group = device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: None,
            layout: &pipeline.get_bind_group_layout(0),
            entries: &[
                wgpu::BindGroupEntry {
                    binding: 0,
                    resource: words.as_entire_binding(),
                },
                wgpu::BindGroupEntry {
                    binding: 1,
                    resource: params.as_entire_binding(),
                },
            ],
        });
        let mut encoder = device.create_command_encoder(&Default::default());
        {
            let mut pass = encoder.begin_compute_pass(&Default::default());
            pass.set_pipeline(&pipeline);
            pass.set_bind_group(0, &group, &[]);
            pass.dispatch_workgroups(threads.div_ceil(64), 1, 1);
        }
        submit_and_wait(
            device,
            &gpu.queue,
            encoder,
            Duration::from_secs(300),
            "bulk semaphore stress (hung: a wait is not bounded)",
        )
        .unwrap();
    }
    let bytes = read_buffer(device, &gpu.queue, &words, 0, 32, Duration::from_secs(10)).unwrap();
    let w: Vec<u32> = bytemuck::pod_collect_to_vec(&bytes);
    Outcome {
        count: w[0] as i32,
        expected_reserved: w[1],
        produced: w[2],
        got: w[3],
        batches: w[4],
        gave_up: w[5],
    }
}

fn check(threads: u32, rounds: u32, batch: u32, dispatches: u32) {
    let gpu = common::gpu();
    let o = run(gpu, threads, rounds, batch, dispatches);
    eprintln!(
        "threads {threads} rounds {rounds} batch {batch}: C {} produced {} got {} batches {} gave up {}",
        o.count, o.produced, o.got, o.batches, o.gave_up
    );
    // Every unit produced is back in C: none lost, none made up.
    assert_eq!(o.count as i64, o.produced as i64, "units lost or created");
    assert_eq!(
        o.produced,
        o.batches * batch,
        "produced units are whole batches"
    );
    assert_eq!(
        o.expected_reserved,
        0,
        "expected/reserved word not back at zero: E {} R {}",
        o.expected_reserved >> 20,
        o.expected_reserved & 0xfffff
    );
    assert!(o.got + o.batches > 0);
    // Bounded waits may give up, but must be the rare exception.
    let waits = o.got + o.batches + o.gave_up;
    assert!(
        (o.gave_up as u64) * 100 <= waits as u64,
        "{} of {waits} waits gave up",
        o.gave_up
    );
}

#[test]
fn heavy_contention_small_batches() {
    check(16_384, 32, 4, 2);
}

#[test]
fn page_sized_batches() {
    check(16_384, 32, 512, 1);
}

#[test]
fn batch_of_one_is_a_counting_semaphore_with_producers() {
    check(8_192, 32, 1, 1);
}
