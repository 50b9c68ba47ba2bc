//! Growth without copying: reserve the handle space up front, commit segments as needed.
//!
//! A heap planned with [`HeapConfig::max_size`](crate::HeapConfig::max_size) above its size
//! reserves everything that depends on the maximum: the segment stride, the number of
//! segment bindings (so the bind group layout, and every pipeline built on it, are fixed for
//! the heap's life) and each strategy's state (bitmaps sized for the maximum). Only the
//! first segments are committed, i.e. exist as buffers; the others are bound to a small
//! placeholder. [`GpuHeap::grow`] creates the next segments and runs the strategy's grow
//! hook (shaders/heap_init.wgsl, gpu_heap_grow), which makes the new memory allocatable
//! without touching live state; [`GpuHeap::trim`] checks trailing segments on the GPU, takes
//! the free ones out of use and drops their buffers. No byte of user memory ever moves, so
//! handles stay valid, and growing never needs the old and the new memory at once.
//!
//! The device raises a pressure flag when a malloc fails for lack of memory or leaves the
//! free count under a low watermark; [`GpuHeap::maintain`], called between dispatches, reads
//! and clears it and grows per a [`GrowthPolicy`].
//!
//! After grow, trim or a maintain that grew, fetch [`GpuHeap::bind_group`] again.

use crate::error::{Error, Result};
use crate::gpu;
use crate::heap::{build_bind_group, GpuHeap};
use crate::layout::UNIT_BYTES;

use crate::meta::{
    GROWTH_COMMITTED, GROWTH_PRESSURE, GROWTH_TRIM_BUSY, HEAP_PRESSURE_LOW, HEAP_PRESSURE_OOM,
};

/// The three host-driven passes of a heap that can grow.
pub(crate) struct ResizePipelines {
    grow: wgpu::ComputePipeline,
    trim_check: wgpu::ComputePipeline,
    trim: wgpu::ComputePipeline,
}

impl ResizePipelines {
    pub fn new(heap: &GpuHeap, module: &wgpu::ShaderModule) -> Result<Self> {
        Ok(ResizePipelines {
            grow: heap.compute_pipeline("gpu-heap grow", module, "gpu_heap_grow", &[])?,
            trim_check: heap.compute_pipeline(
                "gpu-heap trim check",
                module,
                "gpu_heap_trim_check",
                &[],
            )?,
            trim: heap.compute_pipeline("gpu-heap trim", module, "gpu_heap_trim", &[])?,
        })
    }
}

/// Creates one segment buffer; a buffer the device cannot create is an error, not a panic.
pub(crate) fn create_segment(
    device: &wgpu::Device,
    index: usize,
    size: u64,
) -> Result<wgpu::Buffer> {
    crate::gpu::storage_buffer(device, &format!("gpu-heap segment {index}"), size)
}

/// How [`GpuHeap::maintain`] grows a heap under pressure.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct GrowthPolicy {
    /// The committed size is multiplied by this (at least one more segment is committed).
    pub factor: f64,
    /// Commit at least this many more bytes when growing: the demand a kernel recorded
    /// for its failed mallocs, so that one step suffices (0: the factor alone).
    pub at_least: u64,
    /// Never grow past this many bytes (besides the reserved maximum); `None`: no cap.
    pub max_bytes: Option<u64>,
    /// Raise "low" pressure when a malloc leaves less than this fraction of the committed
    /// memory free (0 turns the watermark off; failed mallocs still raise pressure).
    pub low_watermark: f64,
}

impl Default for GrowthPolicy {
    /// Doubling, no cap, watermark at 1/8 of the committed memory.
    fn default() -> Self {
        GrowthPolicy {
            factor: 2.0,
            at_least: 0,
            max_bytes: None,
            low_watermark: 0.125,
        }
    }
}

impl GrowthPolicy {
    /// Sets the factor the committed size is multiplied by when growing.
    pub fn factor(mut self, factor: f64) -> Self {
        self.factor = factor;
        self
    }

    /// Sets the fewest bytes one growth commits.
    pub fn at_least(mut self, bytes: u64) -> Self {
        self.at_least = bytes;
        self
    }

    /// Caps the committed size (besides the reserved maximum).
    pub fn max_bytes(mut self, bytes: u64) -> Self {
        self.max_bytes = Some(bytes);
        self
    }

    /// Sets the free fraction under which a malloc raises "low" pressure (0: off).
    pub fn low_watermark(mut self, fraction: f64) -> Self {
        self.low_watermark = fraction;
        self
    }
}

/// What [`GpuHeap::maintain`] found and did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct MaintainReport {
    /// A malloc failed for lack of memory since the last maintain.
    pub out_of_memory: bool,
    /// A malloc left the free memory under the watermark since the last maintain.
    pub low: bool,
    /// Committed bytes before.
    pub committed_before: u64,
    /// Committed bytes after.
    pub committed_after: u64,
    /// Pressure was seen but the heap is at its maximum (or the policy's cap).
    pub at_limit: bool,
}

impl MaintainReport {
    /// Whether the heap grew (then fetch the bind group again).
    pub fn grew(&self) -> bool {
        self.committed_after > self.committed_before
    }
}

impl GpuHeap {
    /// Bytes of user memory committed now (the heap's size unless it can grow).
    pub fn committed_bytes(&self) -> u64 {
        self.layout.committed_bytes(self.segments.len() as u32)
    }

    /// The reserved maximum in bytes (the size unless the heap can grow).
    pub fn max_bytes(&self) -> u64 {
        self.layout.bytes
    }

    /// Bytes of GPU memory the heap holds now: committed segments, metadata, placeholder.
    pub fn allocated_bytes(&self) -> u64 {
        self.committed_bytes() + self.meta.size() + self.placeholder.size()
    }

    /// Commits at least `additional` more bytes (whole segments). See [`Self::grow_to`].
    pub fn grow(&mut self, additional: u64) -> Result<u64> {
        self.grow_to(self.committed_bytes().saturating_add(additional))
    }

    /// Commits segments until at least `bytes` are committed, and returns the committed
    /// size. Nothing moves: live allocations and handles stay valid. Waits for submitted
    /// work. Afterwards fetch [`Self::bind_group`] again (the new segments are bound
    /// there); pipelines stay valid.
    ///
    /// Errors: [`Error::GrowBeyondMax`] past the reserved maximum (or on a heap that cannot
    /// grow); [`Error::Gpu`] if the device cannot create a segment (the heap is then as
    /// before).
    pub fn grow_to(&mut self, bytes: u64) -> Result<u64> {
        let from_segments = self.segments.len() as u32;
        if bytes <= self.committed_bytes() {
            return Ok(self.committed_bytes());
        }
        if bytes > self.layout.bytes || !self.layout.growable {
            return Err(Error::GrowBeyondMax {
                requested: bytes,
                max: if self.layout.growable {
                    self.layout.bytes
                } else {
                    self.committed_bytes()
                },
            });
        }
        let mut to_segments = from_segments;
        while self.layout.committed_bytes(to_segments) < bytes {
            to_segments += 1;
        }
        let mut fresh = Vec::new();
        for i in from_segments..to_segments {
            fresh.push(create_segment(
                &self.device,
                i as usize,
                self.layout.segment_sizes[i as usize],
            )?);
        }
        let from = self.units_of(from_segments);
        let to = self.units_of(to_segments);
        self.segments.extend(fresh);
        self.write_growth_words(to, from, to);
        let resize = self
            .resize
            .as_ref()
            .expect("growable heaps build the resize passes");
        self.run_pass(&resize.grow, 1, "heap grow")?;
        self.rebind();
        Ok(self.committed_bytes())
    }

    /// Releases trailing segments that hold no live allocation, down to the initial size;
    /// returns the bytes released. See [`Self::trim_to`].
    pub fn trim(&mut self) -> Result<u64> {
        self.trim_to(self.layout.initial_bytes())
    }

    /// Releases trailing segments, last first, while they hold no live allocation and the
    /// committed size stays at or above `bytes`; returns the bytes released. Each segment
    /// is checked on the GPU (gpu_heap_trim_check), taken out of use (gpu_heap_trim) and
    /// its buffer dropped. Waits for submitted work; no dispatch of the heap may be in
    /// flight. Afterwards fetch [`Self::bind_group`] again.
    ///
    /// Errors: [`Error::TrimBelowInitial`] for `bytes` under the initial size.
    pub fn trim_to(&mut self, bytes: u64) -> Result<u64> {
        let initial = self.layout.initial_bytes();
        if bytes < initial {
            return Err(Error::TrimBelowInitial {
                requested: bytes,
                initial,
            });
        }
        let before = self.committed_bytes();
        while self.segments.len() as u32 > self.layout.initial_segments
            && self.layout.committed_bytes(self.segments.len() as u32 - 1) >= bytes
        {
            let n = self.segments.len() as u32;
            let (from, to) = (self.units_of(n), self.units_of(n - 1));
            let invocations = self.layout.trim_check_invocations(to as u64, from as u64);
            // Committed stays at `from` during the check; busy flag cleared, count set.
            self.write_growth_words(from, from, to);
            self.queue.write_buffer(
                &self.meta,
                (self.layout.growth_word + GROWTH_TRIM_BUSY) * 4,
                bytemuck::cast_slice(&[0u32, invocations]),
            );
            let resize = self
                .resize
                .as_ref()
                .expect("growable heaps build the resize passes");
            self.run_pass(&resize.trim_check, invocations, "heap trim check")?;
            let busy = self.read_meta(self.layout.growth_word + GROWTH_TRIM_BUSY, 1)?[0];
            if busy != 0 {
                break;
            }
            self.write_growth_words(to, from, to);
            let resize = self
                .resize
                .as_ref()
                .expect("growable heaps build the resize passes");
            self.run_pass(&resize.trim, 1, "heap trim")?;
            self.segments.pop();
        }
        let released = before - self.committed_bytes();
        if released > 0 {
            self.rebind();
        }
        Ok(released)
    }

    /// Between dispatches: reads and clears the device's pressure flags and, if any was
    /// raised, grows per `policy` (by `policy.factor` or `policy.at_least`, whichever is
    /// more, and at least one segment, up to the reserved maximum and `policy.max_bytes`). Also arms the low watermark for the
    /// committed size. If the report says the heap grew, fetch [`Self::bind_group`] again;
    /// a kernel whose mallocs failed for lack of memory can then be run again.
    pub fn maintain(&mut self, policy: &GrowthPolicy) -> Result<MaintainReport> {
        let pressure = self.read_meta(self.layout.growth_word + GROWTH_PRESSURE, 1)?[0];
        self.queue.write_buffer(
            &self.meta,
            (self.layout.growth_word + GROWTH_PRESSURE) * 4,
            bytemuck::bytes_of(&0u32),
        );
        self.low_watermark = policy.low_watermark.clamp(0.0, 1.0);
        let before = self.committed_bytes();
        let mut report = MaintainReport {
            out_of_memory: pressure & HEAP_PRESSURE_OOM != 0,
            low: pressure & HEAP_PRESSURE_LOW != 0,
            committed_before: before,
            committed_after: before,
            at_limit: false,
        };
        if pressure != 0 {
            let cap = policy
                .max_bytes
                .map_or(self.layout.bytes, |m| m.min(self.layout.bytes));
            let wanted = ((before as f64 * policy.factor.max(1.0)) as u64)
                .max(before.saturating_add(policy.at_least))
                .max(self.layout.committed_bytes(
                    (self.segments.len() + 1).min(self.layout.segment_count() as usize) as u32,
                ))
                .min(cap);
            if wanted > before && self.layout.growable {
                self.grow_to(wanted)?;
            } else {
                report.at_limit = true;
            }
        }
        // Arm the watermark for the (new) committed size.
        let n = self.segments.len() as u32;
        let units = self.units_of(n);
        self.write_growth_words(units, units, units);
        report.committed_after = self.committed_bytes();
        Ok(report)
    }

    /// Committed units of the first `segments` segments.
    fn units_of(&self, segments: u32) -> u32 {
        (self.layout.committed_bytes(segments) / UNIT_BYTES) as u32
    }

    /// The low watermark in the strategy's items for `units` committed.
    fn watermark_items(&self, units: u32) -> u32 {
        let items = units as u64 / self.layout.item_units();
        (items as f64 * self.low_watermark) as u32
    }

    /// Words 0..3 of the growth block: committed, resize from, resize to, watermark.
    fn write_growth_words(&self, committed: u32, from: u32, to: u32) {
        let words = [committed, from, to, self.watermark_items(committed)];
        self.queue.write_buffer(
            &self.meta,
            (self.layout.growth_word + GROWTH_COMMITTED) * 4,
            bytemuck::cast_slice(&words),
        );
    }

    /// The whole growth block as after a reset: no pressure, no resize in progress.
    pub(crate) fn write_growth_block(&self) {
        let units = self.units_of(self.segments.len() as u32);
        let words = [units, units, units, self.watermark_items(units), 0, 0, 0, 0];
        self.queue.write_buffer(
            &self.meta,
            self.layout.growth_word * 4,
            bytemuck::cast_slice(&words),
        );
    }

    fn run_pass(
        &self,
        pipeline: &wgpu::ComputePipeline,
        invocations: u32,
        what: &str,
    ) -> Result<()> {
        let mut encoder = self.device.create_command_encoder(&Default::default());
        {
            let mut pass = encoder.begin_compute_pass(&Default::default());
            pass.set_pipeline(pipeline);
            pass.set_bind_group(self.layout.bind_group_index, &self.bind_group, &[]);
            // The trim check strides over what one dispatch dimension cannot reach.
            pass.dispatch_workgroups(invocations.div_ceil(64).clamp(1, 65_535), 1, 1);
        }
        gpu::submit_and_wait(
            &self.device,
            &self.queue,
            encoder,
            self.config.watchdog,
            what,
        )
    }

    fn rebind(&mut self) {
        self.bind_group = build_bind_group(
            &self.device,
            &self.layout,
            &self.bind_group_layout,
            &self.meta,
            &self.segments,
            &self.placeholder,
        );
    }
}
