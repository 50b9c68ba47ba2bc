//! Growing without copying against growing by copying, in the manner of figures 2-4 of
//! NVIDIA's "Introducing low-level GPU virtual memory management" (time per doubling step,
//! and memory needed, as a vector grows).
//!
//! Methods, each doubling from the initial size up to the maximum:
//! - `commit`: a [`GpuHeap`] reserved for the maximum ([`HeapConfig::max_size`]); each step
//!   is [`GpuHeap::grow_to`] (new segment buffers, the strategy's grow pass, a new bind
//!   group) plus one dispatch through the new bind group, so the new memory is usable
//!   (wgpu zero-fills fresh buffers on their first use, and that cost is in the step).
//!   Nothing is copied; the peak is the committed size plus the metadata.
//! - `copy`: one storage buffer; each step creates a buffer twice the size, copies the old
//!   one into it with `copy_buffer_to_buffer`, dispatches once through it and drops the old
//!   one. The peak during a step is the old plus the new buffer. It stops where the next
//!   buffer would exceed the device's `max_buffer_size` (a noted row).
//!
//! Both keep a counter in their first word that every step's dispatch increments, and the
//! last step checks it: live data survives every step (by staying put, or by the copy).
//! Times are wall clock on the host from the start of a step until its dispatch has
//! finished; median, minimum and maximum over the rounds.

mod plot;

use std::time::{Duration, Instant};

pub use plot::plot;

use crate::{Error, Result};
use gpu_heap::{read_buffer, submit_and_wait, AdapterDescription, Gpu};
use gpu_heap::{GpuHeap, HeapConfig, Statistics, Strategy};

/// Parameters of a grow benchmark.
#[derive(Clone, Debug)]
pub struct GrowOptions {
    pub initial: u64,
    pub max: u64,
    /// Strategies of the `commit` method (the copy method has none).
    pub strategies: Vec<Strategy>,
    pub page_size: u32,
    pub rounds: u32,
    pub watchdog: Duration,
}

impl Default for GrowOptions {
    fn default() -> Self {
        GrowOptions {
            initial: 64 << 20,
            max: 1 << 30,
            strategies: vec![Strategy::Bump, Strategy::RwBm],
            page_size: 256,
            rounds: 3,
            watchdog: Duration::from_secs(120),
        }
    }
}

/// One doubling step of one method.
#[derive(Clone, Debug, serde::Serialize)]
pub struct GrowStep {
    /// `commit` or `copy`.
    pub method: String,
    /// The heap's strategy (`commit` only).
    pub strategy: Option<String>,
    pub step: u32,
    pub from_bytes: u64,
    pub to_bytes: u64,
    /// Median over the rounds; `None` for a step that could not run (see `note`).
    pub ms: Option<f64>,
    pub ms_min: Option<f64>,
    pub ms_max: Option<f64>,
    /// `commit`: median ms of `grow_to` alone (buffers, grow pass, bind group), without
    /// the first dispatch's zero-fill of the new buffers.
    pub grow_ms: Option<f64>,
    /// Bytes of GPU memory held at the step's peak (buffers the method holds at once).
    pub peak_bytes: u64,
    /// Bytes held after the step.
    pub resident_bytes: u64,
    /// Bytes of existing data copied by the step.
    pub copied_bytes: u64,
    pub note: Option<String>,
}

/// A grow benchmark's results.
#[derive(Clone, Debug, serde::Serialize)]
pub struct GrowReport {
    pub adapter: AdapterDescription,
    pub date: String,
    pub initial_bytes: u64,
    pub max_bytes: u64,
    pub rounds: u32,
    /// Segment size of each strategy's heap.
    pub segment_bytes: Vec<(String, u64)>,
    /// Time to create each strategy's heap (reserve + initial commit + init pass), median ms.
    pub reserve_ms: Vec<(String, f64)>,
    pub results: Vec<GrowStep>,
}

fn stats(times: &mut [f64]) -> (Option<f64>, Option<f64>, Option<f64>) {
    if times.is_empty() {
        return (None, None, None);
    }
    times.sort_by(f64::total_cmp);
    (
        Some(times[times.len() / 2]),
        times.first().copied(),
        times.last().copied(),
    )
}

/// Runs both methods.
pub fn run(gpu: &Gpu, options: &GrowOptions) -> Result<GrowReport> {
    if options.initial == 0 || options.max < options.initial {
        return Err(Error::InvalidOptions(format!(
            "grow-bench needs 0 < initial <= max (got {} and {})",
            options.initial, options.max
        )));
    }
    let mut results = Vec::new();
    let mut segment_bytes = Vec::new();
    let mut reserve_ms = Vec::new();
    for &strategy in &options.strategies {
        let (steps, segment, reserve) = commit_method(gpu, strategy, options)?;
        results.extend(steps);
        segment_bytes.push((strategy.to_string(), segment));
        reserve_ms.push((strategy.to_string(), reserve));
    }
    results.extend(copy_method(gpu, options)?);
    Ok(GrowReport {
        adapter: gpu.describe(),
        date: chrono::Utc::now().format("%Y-%m-%d").to_string(),
        initial_bytes: options.initial,
        max_bytes: options.max,
        rounds: options.rounds,
        segment_bytes,
        reserve_ms,
        results,
    })
}

const HEAP_TOUCH: &str = r#"
#include "alloc.wgsl"
@compute @workgroup_size(1)
fn touch() {
    heap_store(1u, 0u, heap_load(1u, 0u) + 1u);
}
"#;

fn commit_method(
    gpu: &Gpu,
    strategy: Strategy,
    options: &GrowOptions,
) -> Result<(Vec<GrowStep>, u64, f64)> {
    let mut times: Vec<Vec<f64>> = Vec::new();
    let mut grow_times: Vec<Vec<f64>> = Vec::new();
    let mut sizes: Vec<(u64, u64, u64)> = Vec::new();
    let mut reserve = Vec::new();
    let mut segment = 0;
    for _ in 0..options.rounds.max(1) {
        let config = HeapConfig::new(options.initial)
            .max_size(options.max)
            .strategy(strategy)
            .statistics(Statistics::FailuresOnly)
            .watchdog(options.watchdog);
        let config = crate::with_pages(config, options.page_size, 16);
        let t = Instant::now();
        let mut heap = GpuHeap::with_config(&gpu.device, &gpu.queue, config)?;
        reserve.push(t.elapsed().as_secs_f64() * 1e3);
        segment = heap.layout().segment_sizes[0];
        let module = heap.create_shader_module("grow-bench touch", HEAP_TOUCH)?;
        let pipeline = heap.compute_pipeline("grow-bench touch", &module, "touch", &[])?;
        let touch = |heap: &GpuHeap| {
            let mut encoder = gpu.device.create_command_encoder(&Default::default());
            {
                let mut pass = encoder.begin_compute_pass(&Default::default());
                pass.set_pipeline(&pipeline);
                pass.set_bind_group(heap.bind_group_index(), heap.bind_group(), &[]);
                pass.dispatch_workgroups(1, 1, 1);
            }
            submit_and_wait(
                &gpu.device,
                &gpu.queue,
                encoder,
                options.watchdog,
                "grow-bench touch",
            )
        };
        touch(&heap)?;
        let mut touches = 1u32;
        let mut step = 0;
        while heap.committed_bytes() * 2 <= heap.max_bytes() {
            let from = heap.committed_bytes();
            let t = Instant::now();
            heap.grow_to(from * 2)?;
            let grow_ms = t.elapsed().as_secs_f64() * 1e3;
            touch(&heap)?;
            let ms = t.elapsed().as_secs_f64() * 1e3;
            touches += 1;
            if times.len() <= step {
                times.push(Vec::new());
                grow_times.push(Vec::new());
                sizes.push((from, heap.committed_bytes(), heap.allocated_bytes()));
            }
            times[step].push(ms);
            grow_times[step].push(grow_ms);
            step += 1;
        }
        let word = read_buffer(
            &gpu.device,
            &gpu.queue,
            &heap.segment_buffers()[0],
            0,
            4,
            options.watchdog,
        )?;
        let got = u32::from_le_bytes([word[0], word[1], word[2], word[3]]);
        if got != touches {
            return Err(Error::Gpu {
                what: format!("grow-bench commit ({strategy})"),
                message: format!("live data lost: counter {got}, expected {touches}"),
            });
        }
    }
    let steps = times
        .iter_mut()
        .zip(&sizes)
        .zip(grow_times.iter_mut())
        .enumerate()
        .map(|(i, ((t, &(from, to, held)), g))| {
            let (ms, ms_min, ms_max) = stats(t);
            let (grow_ms, _, _) = stats(g);
            GrowStep {
                method: "commit".into(),
                strategy: Some(strategy.to_string()),
                step: i as u32,
                from_bytes: from,
                to_bytes: to,
                ms,
                ms_min,
                ms_max,
                grow_ms,
                peak_bytes: held,
                resident_bytes: held,
                copied_bytes: 0,
                note: None,
            }
        })
        .collect();
    let (reserve_median, _, _) = stats(&mut reserve);
    Ok((steps, segment, reserve_median.unwrap_or(0.0)))
}

const BUFFER_TOUCH: &str = r#"
@group(0) @binding(0) var<storage, read_write> data: array<u32>;
@compute @workgroup_size(1)
fn touch() {
    data[0] = data[0] + 1u;
}
"#;

fn copy_method(gpu: &Gpu, options: &GrowOptions) -> Result<Vec<GrowStep>> {
    let device = &gpu.device;
    let limits = device.limits();
    let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
        label: Some("grow-bench copy touch"),
        source: wgpu::ShaderSource::Wgsl(BUFFER_TOUCH.into()),
    });
    let layout = gpu_heap::buffer_group_layout(
        device,
        "grow-bench copy",
        &[wgpu::BufferBindingType::Storage { read_only: false }],
    );
    let pipeline_layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
        label: Some("grow-bench copy"),
        bind_group_layouts: &[Some(&layout)],
        immediate_size: 0,
    });
    let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
        label: Some("grow-bench copy touch"),
        layout: Some(&pipeline_layout),
        module: &module,
        entry_point: Some("touch"),
        compilation_options: Default::default(),
        cache: None,
    });
    let create = |size: u64| {
        gpu_heap::storage_buffer(device, "grow-bench copy", size).map_err(crate::Error::from)
    };
    let touch = |encoder: &mut wgpu::CommandEncoder, buffer: &wgpu::Buffer| {
        let binding = buffer.size().min(limits.max_storage_buffer_binding_size) / 4 * 4;
        let group = device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("grow-bench copy"),
            layout: &layout,
            entries: &[wgpu::BindGroupEntry {
                binding: 0,
                resource: wgpu::BindingResource::Buffer(wgpu::BufferBinding {
                    buffer,
                    offset: 0,
                    size: wgpu::BufferSize::new(binding),
                }),
            }],
        });
        let mut pass = encoder.begin_compute_pass(&Default::default());
        pass.set_pipeline(&pipeline);
        pass.set_bind_group(0, &group, &[]);
        pass.dispatch_workgroups(1, 1, 1);
    };
    let mut times: Vec<Vec<f64>> = Vec::new();
    let mut blocked = None;
    for _ in 0..options.rounds.max(1) {
        let mut size = options.initial.next_multiple_of(4);
        let mut buffer = create(size)?;
        let mut encoder = device.create_command_encoder(&Default::default());
        touch(&mut encoder, &buffer);
        submit_and_wait(
            device,
            &gpu.queue,
            encoder,
            options.watchdog,
            "grow-bench copy",
        )?;
        let mut touches = 1u32;
        let mut step = 0;
        while size * 2 <= options.max {
            if size * 2 > limits.max_buffer_size {
                blocked = Some((step, size));
                break;
            }
            let t = Instant::now();
            let bigger = create(size * 2)?;
            let mut encoder = device.create_command_encoder(&Default::default());
            encoder.copy_buffer_to_buffer(&buffer, 0, &bigger, 0, size);
            touch(&mut encoder, &bigger);
            submit_and_wait(
                device,
                &gpu.queue,
                encoder,
                options.watchdog,
                "grow-bench copy",
            )?;
            buffer = bigger; // the old buffer is dropped here
            let ms = t.elapsed().as_secs_f64() * 1e3;
            touches += 1;
            size *= 2;
            if times.len() <= step {
                times.push(Vec::new());
            }
            times[step].push(ms);
            step += 1;
        }
        let word = read_buffer(device, &gpu.queue, &buffer, 0, 4, options.watchdog)?;
        let got = u32::from_le_bytes([word[0], word[1], word[2], word[3]]);
        if got != touches {
            return Err(Error::Gpu {
                what: "grow-bench copy".into(),
                message: format!("data lost: counter {got}, expected {touches}"),
            });
        }
    }
    let mut steps: Vec<GrowStep> = times
        .iter_mut()
        .enumerate()
        .map(|(i, t)| {
            let from = options.initial.next_multiple_of(4) << i;
            let (ms, ms_min, ms_max) = stats(t);
            GrowStep {
                method: "copy".into(),
                strategy: None,
                step: i as u32,
                from_bytes: from,
                to_bytes: 2 * from,
                ms,
                ms_min,
                ms_max,
                grow_ms: None,
                peak_bytes: 3 * from,
                resident_bytes: 2 * from,
                copied_bytes: from,
                note: None,
            }
        })
        .collect();
    if let Some((step, size)) = blocked {
        steps.push(GrowStep {
            method: "copy".into(),
            strategy: None,
            step: step as u32,
            from_bytes: size,
            to_bytes: 2 * size,
            ms: None,
            ms_min: None,
            ms_max: None,
            grow_ms: None,
            peak_bytes: 3 * size,
            resident_bytes: 2 * size,
            copied_bytes: size,
            note: Some(format!(
                "a buffer of {} bytes exceeds the device's max_buffer_size ({})",
                2 * size,
                limits.max_buffer_size
            )),
        });
    }
    Ok(steps)
}
