//! What the integration tests share: test kernels that see the heap's bind group and a few
//! buffers of their own at group 1, run under one watchdog.
#![allow(dead_code)] // each test crate uses a part

use std::time::Duration;

use gpu_heap::{Gpu, GpuHeap};
use wgpu::util::DeviceExt;

/// How long one dispatch or read-back of a test may take. llvmpipe compiles a pipeline
/// inside its first dispatch: with a cold shader cache the largest Ouroboros kernels take
/// about 100 s on an idle 2-core machine, and one took over 300 s with the machine shared
/// three ways. A hang still fails the test, just later.
pub const WATCHDOG: Duration = Duration::from_secs(600);

/// A GPU of the calling test's own, never dropped. The tests of a binary run on parallel
/// threads. When each dropped its device at the end, two of them dropping theirs at once now
/// and then hung the NVIDIA driver for good; one device shared by all threads instead trips
/// wgpu's bookkeeping of submissions (a thread's wait for its submission while another
/// thread submits panics in wgpu-core 30). So each test keeps a device to itself, and the
/// process's exit releases them.
pub fn gpu() -> &'static Gpu {
    Box::leak(Box::new(
        Gpu::open(None).expect("a GPU adapter (install Mesa's lavapipe without a GPU)"),
    ))
}

/// A test shader over one buffer of handles at group 1, binding 0: `alloc` (64 invocations a
/// workgroup) mallocs 16 B per invocation, keeps the handle and writes a pattern of the
/// invocation's index into the block's 4 words; `check` replaces each handle by the number
/// of its words that no longer hold the pattern, then frees the block. A test may append
/// entry points of its own.
pub const PATTERN_KERNEL: &str = r#"
#include "alloc.wgsl"

// [i] the handle of invocation i
@group(1) @binding(0) var<storage, read_write> handles: array<u32>;

@compute @workgroup_size(64)
fn alloc(@builtin(global_invocation_id) id: vec3<u32>) {
    let p = malloc(16u);
    handles[id.x] = p;
    if (p != 0u) {
        for (var w = 0u; w < 4u; w++) {
            heap_store(p, w, id.x * 4u + w + 1u);
        }
    }
}

@compute @workgroup_size(64)
fn check(@builtin(global_invocation_id) id: vec3<u32>) {
    let p = handles[id.x];
    var bad = 0u;
    for (var w = 0u; w < 4u; w++) {
        bad += u32(heap_load(p, w) != id.x * 4u + w + 1u);
    }
    free(p);
    handles[id.x] = bad;
}
"#;

/// The read-write storage binding of a test kernel's buffers.
pub const RW: wgpu::BufferBindingType = wgpu::BufferBindingType::Storage { read_only: false };

/// A storage buffer of `bytes` zeroed bytes that can be cleared and read back.
pub fn storage(gpu: &Gpu, label: &str, bytes: u64) -> wgpu::Buffer {
    gpu.device.create_buffer(&wgpu::BufferDescriptor {
        label: Some(label),
        size: bytes,
        usage: wgpu::BufferUsages::STORAGE
            | wgpu::BufferUsages::COPY_SRC
            | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    })
}

/// A storage buffer holding `words`, readable back.
pub fn storage_from(gpu: &Gpu, label: &str, words: &[u32]) -> wgpu::Buffer {
    gpu.device
        .create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some(label),
            contents: bytemuck::cast_slice(words),
            usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
        })
}

/// The first `count` words of `buffer`.
pub fn read_words(gpu: &Gpu, buffer: &wgpu::Buffer, count: u64) -> Vec<u32> {
    let bytes = gpu_heap::read_buffer(&gpu.device, &gpu.queue, buffer, 0, count * 4, WATCHDOG)
        .expect("read-back");
    bytemuck::pod_collect_to_vec(&bytes)
}

/// One entry point of a test shader (which includes alloc.wgsl), with its own buffers bound
/// whole at group 1, bindings 0, 1, ... of the given kinds.
pub struct Kernel {
    pipeline: wgpu::ComputePipeline,
    layout: wgpu::BindGroupLayout,
    label: String,
}

impl Kernel {
    pub fn new(
        gpu: &Gpu,
        heap: &GpuHeap,
        source: &str,
        entry: &str,
        kinds: &[wgpu::BufferBindingType],
    ) -> Kernel {
        let module = heap.create_shader_module(entry, source).unwrap();
        Kernel::from_module(gpu, heap, &module, entry, kinds)
    }

    /// As [`Kernel::new`], from a module made elsewhere (composed by another tool, say).
    pub fn from_module(
        gpu: &Gpu,
        heap: &GpuHeap,
        module: &wgpu::ShaderModule,
        entry: &str,
        kinds: &[wgpu::BufferBindingType],
    ) -> Kernel {
        let layout = gpu_heap::buffer_group_layout(&gpu.device, entry, kinds);
        let pipeline = heap
            .compute_pipeline(entry, module, entry, &[(1, &layout)])
            .unwrap();
        Kernel {
            pipeline,
            layout,
            label: entry.to_owned(),
        }
    }

    /// Runs `workgroups` workgroups over `buffers` and waits for them under the watchdog.
    pub fn run(&self, gpu: &Gpu, heap: &GpuHeap, buffers: &[&wgpu::Buffer], workgroups: u32) {
        let group = gpu_heap::buffer_group(&gpu.device, &self.label, &self.layout, buffers);
        let mut encoder = gpu.device.create_command_encoder(&Default::default());
        {
            let mut pass = encoder.begin_compute_pass(&Default::default());
            pass.set_pipeline(&self.pipeline);
            pass.set_bind_group(heap.bind_group_index(), heap.bind_group(), &[]);
            pass.set_bind_group(1, &group, &[]);
            pass.dispatch_workgroups(workgroups, 1, 1);
        }
        gpu_heap::submit_and_wait(&gpu.device, &gpu.queue, encoder, WATCHDOG, &self.label).unwrap();
    }
}

/// `name`'s value as a number, or `default` where it is not set: knobs for running a test
/// longer or more often on a GPU than the CI's defaults.
pub fn env_u32(name: &str, default: u32) -> u32 {
    std::env::var(name).map_or(default, |v| {
        v.parse()
            .unwrap_or_else(|_| panic!("{name} must be a number, not {v:?}"))
    })
}
