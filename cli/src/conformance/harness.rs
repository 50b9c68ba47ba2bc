//! The machinery the scenarios share: a heap, the conformance kernels, the slot and tally
//! buffers, dispatch under the watchdog, and host-side checks of what the GPU handed out.

use std::cell::{Cell, OnceCell};
use std::time::Duration;

use bytemuck::{Pod, Zeroable};

use crate::Result;
use gpu_heap::GpuHeap;
use gpu_heap::HeapConfig;
use gpu_heap::HeapStats;
use gpu_heap::UNIT_BYTES;
use gpu_heap::{buffer_group, buffer_group_layout, read_buffer, submit_and_wait, Gpu};

/// Mirrors `Params` in cli/shaders/conformance/kernels.wgsl.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, Pod, Zeroable)]
pub(crate) struct Params {
    pub slots: u32,
    pub size_min: u32,
    pub size_max: u32,
    pub seed: u32,
    pub malloc_permille: u32,
    pub free_permille: u32,
    pub round: u32,
    /// alloc_pass leaves the slots below this one alone.
    pub first: u32,
    /// Slots per invocation (0 counts as 1): invocation i owns slots i * K .. i * K + K - 1.
    pub per_invocation: u32,
    pub pad: [u32; 3],
}

/// Mirrors `Slot` in cli/shaders/conformance/kernels.wgsl.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, Pod, Zeroable)]
pub(crate) struct Slot {
    pub handle: u32,
    pub size: u32,
    pub tag: u32,
    pub pad: u32,
}

/// Indices into the tally buffer (see kernels.wgsl).
pub(crate) const TALLY_OK: usize = 0;
pub(crate) const TALLY_NULL: usize = 1;
pub(crate) const TALLY_CORRUPTED: usize = 2;
pub(crate) const TALLY_FREE_FAILED: usize = 3;
/// How long a driver may take to compile one of the kernels (lavapipe compiles on the
/// first dispatch, for minutes with the Ouroboros strategies).
const COMPILE_BUDGET: std::time::Duration = std::time::Duration::from_secs(900);
pub(crate) const TALLY_BAD_INPUT: usize = 16;
/// free_at_once's frees that succeeded, then those reported invalid.
pub(crate) const TALLY_FREE_AT_ONCE: usize = TALLY_BAD_INPUT + 9;
const TALLY_WORDS: usize = 32;
/// Invocations of a one-dimensional dispatch of 64-wide workgroups.
pub(crate) const MAX_SLOTS: u32 = 65_535 * 64;

/// One kernel entry point, compiled (and warmed up) before its first dispatch. Only the
/// passes a scenario dispatches are compiled: a driver inlines the allocator at each of a
/// kernel's malloc and free call sites, and the first compile of one Ouroboros kernel can
/// take a driver minutes.
struct Pass {
    entry: &'static str,
    pipeline: OnceCell<wgpu::ComputePipeline>,
}

impl Pass {
    fn new(entry: &'static str) -> Self {
        Pass {
            entry,
            pipeline: OnceCell::new(),
        }
    }
}

pub(crate) struct Harness {
    pub heap: GpuHeap,
    device: wgpu::Device,
    queue: wgpu::Queue,
    params: wgpu::Buffer,
    slots: wgpu::Buffer,
    tally: wgpu::Buffer,
    group: wgpu::BindGroup,
    layout: wgpu::BindGroupLayout,
    module: wgpu::ShaderModule,
    alloc: Pass,
    verify: Pass,
    free: Pass,
    round_trip: Pass,
    bad_input: Pass,
    free_at_once: Pass,
    pub slot_count: u32,
    per_invocation: u32,
    watchdog: Duration,
    /// The heap's statistics when the conformance checks last counted them.
    counted: Cell<HeapStats>,
}

/// What the host found in a snapshot of the slots.
#[derive(Debug, Default)]
pub(crate) struct Placement {
    pub live: u64,
    /// Pairs of live allocations that share bytes.
    pub overlaps: u64,
    /// Allocations outside the heap or across a segment boundary.
    pub misplaced: u64,
}

impl Harness {
    pub fn new(gpu: &Gpu, config: HeapConfig, slot_count: u32) -> Result<Self> {
        Self::with_slots_per_invocation(gpu, config, slot_count, 1)
    }

    /// A harness whose invocations own `per_invocation` slots each (the kernels' K, which
    /// every dispatch writes into its `Params`).
    pub fn with_slots_per_invocation(
        gpu: &Gpu,
        config: HeapConfig,
        slot_count: u32,
        per_invocation: u32,
    ) -> Result<Self> {
        let per_invocation = per_invocation.max(1);
        assert!(
            slot_count.div_ceil(per_invocation) <= MAX_SLOTS,
            "at most {MAX_SLOTS} conformance invocations"
        );
        let watchdog = config.watchdog;
        let heap = GpuHeap::with_config(&gpu.device, &gpu.queue, config.bind_group_index(0))?;
        let device = gpu.device.clone();
        let usage = wgpu::BufferUsages::COPY_SRC | wgpu::BufferUsages::COPY_DST;
        let buffer = |label, size, usage| {
            device.create_buffer(&wgpu::BufferDescriptor {
                label: Some(label),
                size,
                usage,
                mapped_at_creation: false,
            })
        };
        let params = buffer(
            "conformance params",
            std::mem::size_of::<Params>() as u64,
            wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
        );
        let slots = buffer(
            "conformance slots",
            (slot_count.max(1) as u64) * std::mem::size_of::<Slot>() as u64,
            wgpu::BufferUsages::STORAGE | usage,
        );
        let tally = buffer(
            "conformance tally",
            TALLY_WORDS as u64 * 4,
            wgpu::BufferUsages::STORAGE | usage,
        );
        let storage = wgpu::BufferBindingType::Storage { read_only: false };
        let layout = buffer_group_layout(
            &device,
            "conformance",
            &[wgpu::BufferBindingType::Uniform, storage, storage],
        );
        let group = buffer_group(&device, "conformance", &layout, &[&params, &slots, &tally]);
        let module = crate::kernels::module(&heap, "conformance/kernels.wgsl")?;
        Ok(Harness {
            alloc: Pass::new("alloc_pass"),
            verify: Pass::new("verify_pass"),
            free: Pass::new("free_pass"),
            round_trip: Pass::new("round_trip_pass"),
            bad_input: Pass::new("bad_input"),
            free_at_once: Pass::new("free_at_once"),
            layout,
            module,
            heap,
            queue: gpu.queue.clone(),
            device,
            params,
            slots,
            tally,
            group,
            slot_count,
            per_invocation,
            watchdog,
            counted: Cell::new(HeapStats::default()),
        })
    }

    fn dispatch(
        &self,
        pass: &Pass,
        mut params: Params,
        invocations: u32,
        what: &str,
    ) -> Result<()> {
        // A pass is compiled before its first dispatch, outside that dispatch's watchdog
        // (lavapipe compiles on the first dispatch).
        let pipeline = match pass.pipeline.get() {
            Some(p) => p,
            None => {
                let p = self.heap.compute_pipeline(
                    pass.entry,
                    &self.module,
                    pass.entry,
                    &[(1, &self.layout)],
                )?;
                self.heap.warm_up(&p, &[(1, &self.group)], COMPILE_BUDGET)?;
                pass.pipeline.get_or_init(|| p)
            }
        };
        params.per_invocation = self.per_invocation;
        self.queue
            .write_buffer(&self.params, 0, bytemuck::bytes_of(&params));
        let mut encoder = self.device.create_command_encoder(&Default::default());
        {
            let mut compute = encoder.begin_compute_pass(&Default::default());
            compute.set_pipeline(pipeline);
            compute.set_bind_group(0, self.heap.bind_group(), &[]);
            compute.set_bind_group(1, &self.group, &[]);
            // The kernels index slots by global_invocation_id.x alone; Harness::new keeps
            // invocations within one dimension's 65,535 workgroups.
            compute.dispatch_workgroups(invocations.div_ceil(64), 1, 1);
        }
        Ok(submit_and_wait(
            &self.device,
            &self.queue,
            encoder,
            self.watchdog,
            what,
        )?)
    }

    /// Resets the heap (everything freed, statistics zeroed).
    pub fn reset(&self) -> Result<()> {
        self.heap.reset()?;
        self.counted.set(HeapStats::default());
        Ok(())
    }

    /// Marks `stats` as counted; returns what was counted before.
    pub fn count(&self, stats: HeapStats) -> HeapStats {
        self.counted.replace(stats)
    }

    /// Empty slots allocate with probability `params.malloc_permille` and fill a pattern.
    pub fn alloc(&self, params: Params) -> Result<()> {
        self.dispatch(
            &self.alloc,
            params,
            self.invocations(),
            "conformance alloc_pass",
        )
    }

    /// Live slots verify their pattern.
    pub fn verify(&self, params: Params) -> Result<()> {
        self.dispatch(
            &self.verify,
            params,
            self.invocations(),
            "conformance verify_pass",
        )
    }

    /// Live slots verify, then free with probability `params.free_permille`.
    pub fn free(&self, params: Params) -> Result<()> {
        self.dispatch(
            &self.free,
            params,
            self.invocations(),
            "conformance free_pass",
        )
    }

    /// Each invocation chosen with `params.malloc_permille` per round makes K round trips
    /// (malloc, write, verify, free) within this one dispatch; the slots are left alone.
    pub fn round_trip(&self, params: Params) -> Result<()> {
        self.dispatch(
            &self.round_trip,
            params,
            self.invocations(),
            "conformance round_trip_pass",
        )
    }

    /// Invocations of a pass over every slot.
    fn invocations(&self) -> u32 {
        self.slot_count.div_ceil(self.per_invocation)
    }

    pub fn bad_input(&self) -> Result<()> {
        self.dispatch(
            &self.bad_input,
            Params::default(),
            1,
            "conformance bad_input",
        )
    }

    /// 64 invocations free one allocation at once; the tally counts the frees that
    /// succeeded and those reported invalid ([`TALLY_FREE_AT_ONCE`]).
    pub fn free_at_once(&self) -> Result<()> {
        self.dispatch(
            &self.free_at_once,
            Params::default(),
            64,
            "conformance free_at_once",
        )
    }

    pub fn tally(&self) -> Result<Vec<u32>> {
        let bytes = read_buffer(
            &self.device,
            &self.queue,
            &self.tally,
            0,
            TALLY_WORDS as u64 * 4,
            self.watchdog,
        )?;
        Ok(bytemuck::pod_collect_to_vec(&bytes))
    }

    pub fn clear_tally(&self) {
        self.queue
            .write_buffer(&self.tally, 0, &[0u8; TALLY_WORDS * 4]);
    }

    pub fn slots(&self) -> Result<Vec<Slot>> {
        let size = self.slot_count as u64 * std::mem::size_of::<Slot>() as u64;
        let bytes = read_buffer(
            &self.device,
            &self.queue,
            &self.slots,
            0,
            size,
            self.watchdog,
        )?;
        Ok(bytemuck::pod_collect_to_vec(&bytes))
    }

    /// Checks the live slots: inside the heap, inside one segment, no two sharing a byte.
    pub fn placement(&self) -> Result<Placement> {
        let layout = self.heap.layout();
        let segment_units = 1u64 << layout.segment_shift;
        let units = layout.units() as u64;
        let mut spans: Vec<(u64, u64)> = self
            .slots()?
            .iter()
            .filter(|s| s.handle != 0)
            .map(|s| {
                let start = s.handle as u64 - 1;
                (start, start + (s.size as u64).div_ceil(UNIT_BYTES).max(1))
            })
            .collect();
        spans.sort_unstable();
        let mut p = Placement {
            live: spans.len() as u64,
            ..Placement::default()
        };
        for &(start, end) in &spans {
            if end > units || start / segment_units != (end - 1) / segment_units {
                p.misplaced += 1;
            }
        }
        // Sorted by start: an overlap shows as a start below the furthest end so far.
        let mut furthest = 0;
        for &(start, end) in &spans {
            if start < furthest {
                p.overlaps += 1;
            }
            furthest = furthest.max(end);
        }
        Ok(p)
    }
}
