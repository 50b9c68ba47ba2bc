//! The machinery under the test cases: a heap with the benchmark kernels, the buffers they
//! use, and passes timed with GPU timestamps (or the wall clock where the adapter has none).

use std::time::{Duration, Instant};

use bytemuck::{Pod, Zeroable};

use crate::{Error, Result};
use gpu_heap::Failures;
use gpu_heap::GpuHeap;
use gpu_heap::{buffer_group, buffer_group_layout, read_buffer, submit_and_wait, Gpu};
use gpu_heap::{HeapConfig, Strategy};

/// Mirrors `BenchParams` in shaders/bench/kernels.wgsl.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, Pod, Zeroable)]
pub(crate) struct Params {
    pub threads: u32,
    pub size_lo: u32,
    pub size_hi: u32,
    pub seed: u32,
    pub flat_stride: u32,
    pub scan_len: u32,
    pub pad: [u32; 2],
}

impl Params {
    pub fn new(threads: u32, size_lo: u32, size_hi: u32) -> Self {
        Params {
            threads,
            size_lo,
            size_hi,
            seed: 0x5eed_1234,
            ..Params::default()
        }
    }
}

/// Indices into the tally buffer (see kernels.wgsl).
pub(crate) const TALLY_BAD_WORDS: usize = 0;
pub(crate) const TALLY_NULLS: usize = 1;
const TALLY_SCAN_TOTAL: usize = 2;
const TALLY_WORDS: u64 = 4;
/// Elements per block of the baseline's prefix sum (SCAN_BLOCK in kernels.wgsl).
const SCAN_BLOCK: u32 = 256;
const WORKGROUP: u32 = 256;
const MAX_GROUPS_X: u32 = 65_535;

/// How a pass was timed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Timer {
    /// GPU timestamps at the start and end of the compute pass.
    Gpu,
    /// Host wall clock around submit and wait (the adapter lacks timestamp queries).
    Wall,
}

impl Timer {
    /// How passes on `device` are timed.
    pub fn of(device: &wgpu::Device) -> Timer {
        if device.features().contains(wgpu::Features::TIMESTAMP_QUERY) {
            Timer::Gpu
        } else {
            Timer::Wall
        }
    }
}

/// The kernels a test case can run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kernel {
    Malloc,
    MallocSubgroup,
    Free,
    Write,
    FlatWrite,
    WorkgenMalloc,
    WorkgenCount,
    WorkgenWrite,
    /// Figure 5's bulk and counting semaphores (bump heaps only).
    SemBulk,
    SemCounting,
}

impl Kernel {
    fn entry(self) -> &'static str {
        match self {
            Kernel::Malloc => "bench_malloc",
            Kernel::MallocSubgroup => "bench_malloc_subgroup",
            Kernel::Free => "bench_free",
            Kernel::Write => "bench_write",
            Kernel::FlatWrite => "flat_write",
            Kernel::WorkgenMalloc => "workgen_malloc",
            Kernel::WorkgenCount => "workgen_count",
            Kernel::WorkgenWrite => "workgen_write",
            Kernel::SemBulk => "sem_bulk",
            Kernel::SemCounting => "sem_counting",
        }
    }
}

/// Buffer capacities of one engine.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Capacity {
    /// Invocations (handles) per pass.
    pub threads: u32,
    /// Bytes of the contiguous baseline buffer.
    pub flat_bytes: u64,
}

/// A heap of one configuration with the benchmark pipelines built against it.
pub(crate) struct Engine {
    pub heap: GpuHeap,
    pub init_ms: f64,
    device: wgpu::Device,
    queue: wgpu::Queue,
    capacity: Capacity,
    params: wgpu::Buffer,
    ptrs: wgpu::Buffer,
    tally: wgpu::Buffer,
    offsets: wgpu::Buffer,
    flat: wgpu::Buffer,
    group_layout: wgpu::BindGroupLayout,
    group: wgpu::BindGroup,
    pipelines: Vec<(Kernel, wgpu::ComputePipeline)>,
    scan: [wgpu::ComputePipeline; 3],
    timestamps: Option<(wgpu::QuerySet, wgpu::Buffer)>,
    period_ns: f64,
    watchdog: Duration,
}

impl Engine {
    pub fn new(gpu: &Gpu, config: HeapConfig, capacity: Capacity) -> Result<Self> {
        let watchdog = config.watchdog;
        let config = config.bind_group_index(0);
        let started = Instant::now();
        let heap = GpuHeap::with_config(&gpu.device, &gpu.queue, config)?;
        let init_ms = started.elapsed().as_secs_f64() * 1e3;
        let device = gpu.device.clone();
        let buffer = |label: &str, size: u64, usage: wgpu::BufferUsages| {
            device.create_buffer(&wgpu::BufferDescriptor {
                label: Some(label),
                size: size.max(16),
                usage,
                mapped_at_creation: false,
            })
        };
        let storage = wgpu::BufferUsages::STORAGE
            | wgpu::BufferUsages::COPY_SRC
            | wgpu::BufferUsages::COPY_DST;
        let threads = capacity.threads as u64;
        let params = buffer(
            "bench params",
            std::mem::size_of::<Params>() as u64,
            wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
        );
        let ptrs = buffer("bench ptrs", threads * 4, storage);
        let tally = buffer("bench tally", TALLY_WORDS * 4, storage);
        let blocks = threads.div_ceil(SCAN_BLOCK as u64);
        let offsets = buffer("bench offsets", (threads + blocks) * 4, storage);
        let flat = buffer("bench flat", capacity.flat_bytes, storage);
        let rw = wgpu::BufferBindingType::Storage { read_only: false };
        let group_layout = buffer_group_layout(
            &device,
            "bench",
            &[wgpu::BufferBindingType::Uniform, rw, rw, rw, rw],
        );
        let subgroups = device.features().contains(wgpu::Features::SUBGROUP);
        let module = crate::kernels::module(&heap, crate::kernels::bench_file(subgroups))?;
        let others = [(1, &group_layout)];
        let mut pipelines = Vec::new();
        for kernel in [
            Kernel::Malloc,
            Kernel::MallocSubgroup,
            Kernel::Free,
            Kernel::Write,
            Kernel::FlatWrite,
            Kernel::WorkgenMalloc,
            Kernel::WorkgenCount,
            Kernel::WorkgenWrite,
            Kernel::SemBulk,
            Kernel::SemCounting,
        ] {
            if kernel == Kernel::MallocSubgroup && !subgroups {
                continue;
            }
            let semaphores = matches!(kernel, Kernel::SemBulk | Kernel::SemCounting);
            if semaphores && heap.layout().compiled() != Strategy::Bump {
                continue;
            }
            let entry = kernel.entry();
            pipelines.push((
                kernel,
                heap.compute_pipeline(entry, &module, entry, &others)?,
            ));
        }
        let scan = [
            heap.compute_pipeline("scan_blocks", &module, "scan_blocks", &others)?,
            heap.compute_pipeline("scan_sums", &module, "scan_sums", &others)?,
            heap.compute_pipeline("scan_add", &module, "scan_add", &others)?,
        ];
        let timestamps = (Timer::of(&device) == Timer::Gpu).then(|| {
            let set = device.create_query_set(&wgpu::QuerySetDescriptor {
                label: Some("bench timestamps"),
                ty: wgpu::QueryType::Timestamp,
                count: 2,
            });
            let resolve = buffer(
                "bench timestamps",
                16,
                wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC,
            );
            (set, resolve)
        });
        let group = buffer_group(
            &device,
            "bench",
            &group_layout,
            &[&params, &ptrs, &tally, &flat, &offsets],
        );
        Ok(Engine {
            period_ns: gpu.queue.get_timestamp_period() as f64,
            heap,
            init_ms,
            queue: gpu.queue.clone(),
            device,
            capacity,
            params,
            ptrs,
            tally,
            offsets,
            flat,
            group_layout,
            group,
            pipelines,
            scan,
            timestamps,
            watchdog,
        })
    }

    pub fn has(&self, kernel: Kernel) -> bool {
        self.pipelines.iter().any(|(k, _)| *k == kernel)
    }

    fn pipeline(&self, kernel: Kernel) -> Result<&wgpu::ComputePipeline> {
        self.pipelines
            .iter()
            .find(|(k, _)| *k == kernel)
            .map(|(_, p)| p)
            .ok_or_else(|| Error::InvalidOptions(format!("{kernel:?} needs subgroups")))
    }

    fn check_threads(&self, params: &Params) -> Result<()> {
        if params.threads > self.capacity.threads {
            return Err(Error::InvalidOptions(format!(
                "{} threads exceed the benchmark's {} handle slots",
                params.threads, self.capacity.threads
            )));
        }
        Ok(())
    }

    /// Runs `kernel` over `params.threads` invocations; returns the pass's time in ms.
    pub fn run(&self, kernel: Kernel, params: Params) -> Result<f64> {
        self.check_threads(&params)?;
        let pipeline = self.pipeline(kernel)?;
        let groups = params.threads.div_ceil(WORKGROUP).max(1);
        let dims = (groups.min(MAX_GROUPS_X), groups.div_ceil(MAX_GROUPS_X));
        self.timed(&params, kernel.entry(), &self.group, |pass| {
            pass.set_pipeline(pipeline);
            pass.dispatch_workgroups(dims.0, dims.1, 1);
        })
    }

    /// The baseline's prefix sum over the counts in `offsets` (ms); the total lands in
    /// the tally, for [`Self::scan_total`].
    pub fn scan(&self, params: Params) -> Result<f64> {
        self.check_threads(&params)?;
        let params = Params {
            scan_len: params.threads,
            ..params
        };
        let blocks = params.threads.div_ceil(SCAN_BLOCK).max(1);
        self.timed(&params, "baseline scan", &self.group, |pass| {
            pass.set_pipeline(&self.scan[0]);
            pass.dispatch_workgroups(blocks, 1, 1);
            pass.set_pipeline(&self.scan[1]);
            pass.dispatch_workgroups(1, 1, 1);
            pass.set_pipeline(&self.scan[2]);
            pass.dispatch_workgroups(blocks, 1, 1);
        })
    }

    /// The total of the last scan, in 16-byte units.
    pub fn scan_total(&self) -> Result<u64> {
        Ok(self.tally()?[TALLY_SCAN_TOTAL] as u64)
    }

    /// The baseline's last step: writes into `output` at the scanned offsets.
    pub fn workgen_write(&self, params: Params, output: &wgpu::Buffer) -> Result<f64> {
        let group = buffer_group(
            &self.device,
            "bench baseline",
            &self.group_layout,
            &[&self.params, &self.ptrs, &self.tally, output, &self.offsets],
        );
        let pipeline = self.pipeline(Kernel::WorkgenWrite)?;
        let groups = params.threads.div_ceil(WORKGROUP).max(1);
        self.timed(&params, "baseline write", &group, |pass| {
            pass.set_pipeline(pipeline);
            pass.dispatch_workgroups(groups.min(MAX_GROUPS_X), groups.div_ceil(MAX_GROUPS_X), 1);
        })
    }

    pub fn device(&self) -> &wgpu::Device {
        &self.device
    }

    fn timed(
        &self,
        params: &Params,
        what: &str,
        group: &wgpu::BindGroup,
        record: impl FnOnce(&mut wgpu::ComputePass<'_>),
    ) -> Result<f64> {
        self.queue
            .write_buffer(&self.params, 0, bytemuck::bytes_of(params));
        let mut encoder = self.device.create_command_encoder(&Default::default());
        {
            let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some(what),
                timestamp_writes: self.timestamps.as_ref().map(|(set, _)| {
                    wgpu::ComputePassTimestampWrites {
                        query_set: set,
                        beginning_of_pass_write_index: Some(0),
                        end_of_pass_write_index: Some(1),
                    }
                }),
            });
            pass.set_bind_group(0, self.heap.bind_group(), &[]);
            pass.set_bind_group(1, group, &[]);
            record(&mut pass);
        }
        if let Some((set, resolve)) = &self.timestamps {
            encoder.resolve_query_set(set, 0..2, resolve, 0);
        }
        let started = Instant::now();
        submit_and_wait(&self.device, &self.queue, encoder, self.watchdog, what)?;
        let wall_ms = started.elapsed().as_secs_f64() * 1e3;
        match &self.timestamps {
            None => Ok(wall_ms),
            Some((_, resolve)) => {
                let bytes = self.read(resolve, 16)?;
                let t: [u64; 2] = bytemuck::pod_read_unaligned(&bytes);
                Ok(t[1].saturating_sub(t[0]) as f64 * self.period_ns / 1e6)
            }
        }
    }

    fn read(&self, buffer: &wgpu::Buffer, size: u64) -> Result<Vec<u8>> {
        Ok(read_buffer(
            &self.device,
            &self.queue,
            buffer,
            0,
            size,
            self.watchdog,
        )?)
    }

    pub fn tally(&self) -> Result<Vec<u32>> {
        Ok(bytemuck::pod_collect_to_vec(
            &self.read(&self.tally, TALLY_WORDS * 4)?,
        ))
    }

    pub fn clear_tally(&self) {
        self.queue
            .write_buffer(&self.tally, 0, &[0u8; TALLY_WORDS as usize * 4]);
    }

    /// The handles of the first `threads` invocations.
    pub fn handles(&self, threads: u32) -> Result<Vec<u32>> {
        Ok(bytemuck::pod_collect_to_vec(
            &self.read(&self.ptrs, threads.max(1) as u64 * 4)?,
        ))
    }

    pub fn failures(&self) -> Result<Failures> {
        Ok(self.heap.stats()?.failures)
    }

    /// Frees everything (heap reset) and clears the handles.
    pub fn reset(&self) -> Result<()> {
        let mut encoder = self.device.create_command_encoder(&Default::default());
        encoder.clear_buffer(&self.ptrs, 0, None);
        submit_and_wait(
            &self.device,
            &self.queue,
            encoder,
            self.watchdog,
            "bench clear",
        )?;
        Ok(self.heap.reset()?)
    }

    pub fn flat_bytes(&self) -> u64 {
        self.flat.size()
    }
}
