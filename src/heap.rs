//! `GpuHeap`: owns the heap's buffers, its bind group, and its init pass.

use crate::config::HeapConfig;
use crate::error::{Error, Result};
use crate::flatten::{composer_for, flatten_layout};
use crate::gpu;
use crate::layout::{DeviceCaps, HeapBinding, HeapLayout};
use crate::meta::STAT_WORDS;
use crate::shader::{ComposedShader, Composer};
use crate::stats::{HeapStats, RawStats};

/// A device-side heap: storage buffers that compute shaders allocate from with `malloc`.
///
/// ```no_run
/// # fn main() -> gpu_heap::Result<()> {
/// let gpu = gpu_heap::Gpu::open(None)?;
/// let heap = gpu_heap::GpuHeap::new(&gpu.device, &gpu.queue, 64 << 20)?;
/// let module = heap.create_shader_module("mine", r#"
///     #include "alloc.wgsl"
///     @compute @workgroup_size(64)
///     fn main(@builtin(global_invocation_id) id: vec3<u32>) {
///         let p = malloc(16u);
///         if (p != 0u) { heap_store(p, 0u, id.x); free(p); }
///     }
/// "#)?;
/// # let _ = module;
/// println!("{:?}", heap.stats()?);
/// # Ok(()) }
/// ```
pub struct GpuHeap {
    pub(crate) device: wgpu::Device,
    pub(crate) queue: wgpu::Queue,
    pub(crate) config: HeapConfig,
    pub(crate) layout: HeapLayout,
    pub(crate) meta: wgpu::Buffer,
    /// The committed segments, in handle order (a prefix of the layout's segments).
    pub(crate) segments: Vec<wgpu::Buffer>,
    /// Bound in place of every segment not committed (heaps that can grow).
    pub(crate) placeholder: wgpu::Buffer,
    pub(crate) bind_group_layout: wgpu::BindGroupLayout,
    pub(crate) bind_group: wgpu::BindGroup,
    init: Option<wgpu::ComputePipeline>,
    /// gpu_heap_grow, gpu_heap_trim_check, gpu_heap_trim (heaps that can grow).
    pub(crate) resize: Option<crate::growth::ResizePipelines>,
    /// The low watermark as a fraction of the committed memory (growth block word 3).
    pub(crate) low_watermark: f64,
}

impl GpuHeap {
    /// A heap of `size` bytes with the default configuration ([`HeapConfig::new`]).
    pub fn new(device: &wgpu::Device, queue: &wgpu::Queue, size: u64) -> Result<Self> {
        Self::with_config(device, queue, HeapConfig::new(size))
    }

    /// A heap as `config` describes, initialised on the GPU before this returns.
    pub fn with_config(
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        config: HeapConfig,
    ) -> Result<Self> {
        let layout = HeapLayout::plan(&config, &DeviceCaps::of(device))?;
        if layout.compiled() != layout.strategy {
            log::warn!(
                "gpu-heap: {} needs subgroups, which this device lacks; the heap runs as {}",
                layout.strategy,
                layout.compiled()
            );
        }

        let meta = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("gpu-heap meta"),
            size: layout.meta_words * 4,
            usage: crate::gpu::STORAGE_USAGES,
            mapped_at_creation: false,
        });
        let segments: Vec<wgpu::Buffer> = (0..layout.initial_segments as usize)
            .map(|i| crate::growth::create_segment(device, i, layout.segment_sizes[i]))
            .collect::<Result<_>>()?;
        let placeholder = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("gpu-heap uncommitted segment"),
            size: 256,
            usage: crate::gpu::STORAGE_USAGES,
            mapped_at_creation: false,
        });

        let bind_group_layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("gpu-heap"),
            entries: &layout.bind_group_layout_entries(),
        });
        let bind_group = build_bind_group(
            device,
            &layout,
            &bind_group_layout,
            &meta,
            &segments,
            &placeholder,
        );

        let mut heap = GpuHeap {
            device: device.clone(),
            queue: queue.clone(),
            config,
            layout,
            meta,
            segments,
            placeholder,
            bind_group_layout,
            bind_group,
            init: None,
            resize: None,
            low_watermark: 0.0,
        };
        let init = heap.library_module("heap_init.wgsl")?;
        heap.init = Some(heap.compute_pipeline("gpu-heap init", &init, "gpu_heap_init", &[])?);
        if heap.layout.growable {
            heap.resize = Some(crate::growth::ResizePipelines::new(&heap, &init)?);
        }
        heap.reset()?;
        Ok(heap)
    }

    /// The planned geometry: segments, capacity, largest malloc.
    pub fn layout(&self) -> &HeapLayout {
        &self.layout
    }

    /// The configuration the heap was built from.
    pub fn config(&self) -> &HeapConfig {
        &self.config
    }

    /// The layout of the heap's bind group; put it at [`Self::bind_group_index`] in your
    /// pipeline layout.
    pub fn bind_group_layout(&self) -> &wgpu::BindGroupLayout {
        &self.bind_group_layout
    }

    /// The heap's bind group; set it at [`Self::bind_group_index`] before dispatching.
    ///
    /// [`Self::grow`], [`Self::trim`] and [`Self::maintain`] replace it (the new segments
    /// must be bound): fetch it again after any of them. Pipelines and shader modules stay
    /// valid (the bind group layout never changes).
    pub fn bind_group(&self) -> &wgpu::BindGroup {
        &self.bind_group
    }

    /// The `@group` index the heap's bindings are declared at.
    pub fn bind_group_index(&self) -> u32 {
        self.layout.bind_group_index
    }

    /// The buffer of allocator metadata (statistics first).
    pub fn meta_buffer(&self) -> &wgpu::Buffer {
        &self.meta
    }

    /// The storage buffers of user memory, in handle order: the committed segments (all of
    /// them unless the heap can grow).
    pub fn segment_buffers(&self) -> &[wgpu::Buffer] {
        &self.segments
    }

    /// A composer that resolves `#include "alloc.wgsl"` for this heap.
    pub fn composer(&self) -> Composer {
        composer_for(&self.layout)
    }

    /// Composes and validates `source` (shown as `name` in errors) against this heap.
    pub fn compose(&self, name: &str, source: &str) -> Result<ComposedShader> {
        let composed = self.composer().compose_str(name, source)?;
        composed.validate()?;
        Ok(composed)
    }

    /// Composes, validates and creates a shader module; errors point at original lines.
    pub fn create_shader_module(&self, name: &str, source: &str) -> Result<wgpu::ShaderModule> {
        let composed = self.compose(name, source)?;
        self.create_shader_module_from(name, &composed)
    }

    /// Creates a shader module from a shader composed with this heap's [`Self::composer`]
    /// (for instance one with sources of your own added); wgpu's validation error, if any,
    /// is returned instead of reaching the device's error handler.
    pub fn create_shader_module_from(
        &self,
        name: &str,
        composed: &ComposedShader,
    ) -> Result<wgpu::ShaderModule> {
        let scope = self.device.push_error_scope(wgpu::ErrorFilter::Validation);
        let module = self
            .device
            .create_shader_module(wgpu::ShaderModuleDescriptor {
                label: Some(name),
                source: wgpu::ShaderSource::Wgsl(composed.source().into()),
            });
        match pollster::block_on(scope.pop()) {
            None => Ok(module),
            Some(e) => Err(Error::Gpu {
                what: format!("creating shader module {name}"),
                message: e.to_string(),
            }),
        }
    }

    /// A pipeline layout with the heap at its index and `others` at theirs. An index of
    /// `others` that is the heap's, or that appears twice, is an error
    /// ([`Error::BindGroupIndexTaken`]), as is one at or above the device's
    /// `max_bind_groups` ([`Error::LimitTooLow`]): either would replace a layout silently.
    pub fn pipeline_layout(
        &self,
        others: &[(u32, &wgpu::BindGroupLayout)],
    ) -> Result<wgpu::PipelineLayout> {
        let heap_index = self.bind_group_index();
        for (k, &(index, _)) in others.iter().enumerate() {
            if index == heap_index || others[..k].iter().any(|&(i, _)| i == index) {
                return Err(Error::BindGroupIndexTaken { index, heap_index });
            }
            let max = self.device.limits().max_bind_groups;
            if index >= max {
                return Err(Error::LimitTooLow {
                    limit: "max_bind_groups",
                    have: max as u64,
                    needed: index as u64 + 1,
                });
            }
        }
        let len = others
            .iter()
            .map(|(i, _)| *i)
            .chain([heap_index])
            .max()
            .unwrap_or(0) as usize
            + 1;
        let mut layouts: Vec<Option<&wgpu::BindGroupLayout>> = vec![None; len];
        layouts[heap_index as usize] = Some(&self.bind_group_layout);
        for (i, l) in others {
            layouts[*i as usize] = Some(l);
        }
        Ok(self
            .device
            .create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
                label: Some("gpu-heap user"),
                bind_group_layouts: &layouts,
                immediate_size: 0,
            }))
    }

    /// Composes, validates and creates a module from a file of the built-in library.
    pub(crate) fn library_module(&self, library_file: &str) -> Result<wgpu::ShaderModule> {
        let composed = self.composer().compose_library(library_file)?;
        composed.validate()?;
        self.create_shader_module_from(library_file, &composed)
    }

    /// A compute pipeline for `entry` of `module`, with the heap's bind group layout at its
    /// index and `others` at theirs.
    pub fn compute_pipeline(
        &self,
        name: &str,
        module: &wgpu::ShaderModule,
        entry: &str,
        others: &[(u32, &wgpu::BindGroupLayout)],
    ) -> Result<wgpu::ComputePipeline> {
        let layout = self.pipeline_layout(others)?;
        let scope = self.device.push_error_scope(wgpu::ErrorFilter::Validation);
        let pipeline = self
            .device
            .create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                label: Some(name),
                layout: Some(&layout),
                module,
                entry_point: Some(entry),
                compilation_options: Default::default(),
                cache: None,
            });
        match pollster::block_on(scope.pop()) {
            None => Ok(pipeline),
            Some(e) => Err(Error::Gpu {
                what: format!("creating pipeline {name}"),
                message: e.to_string(),
            }),
        }
    }

    /// Compiles `pipeline` now rather than in its first real dispatch: some drivers compile a
    /// pipeline when it is first dispatched, not when it is created (lavapipe takes seconds,
    /// and up to minutes for the Ouroboros strategies' shaders), which would count against
    /// the first dispatch's own watchdog or timing. This dispatches it over zero
    /// workgroups, so nothing of it runs, and waits up to `timeout` for the driver.
    /// `others` are the pipeline's other bind groups with their indices; the heap's own is
    /// set here.
    ///
    /// ```
    /// use std::time::Duration;
    /// use gpu_heap::{Gpu, GpuHeap, HeapConfig};
    /// let gpu = Gpu::open(None)?;
    /// let heap = GpuHeap::with_config(&gpu.device, &gpu.queue, HeapConfig::new(1 << 20))?;
    /// let source = "#include \"alloc.wgsl\"
    /// @compute @workgroup_size(64) fn main() { free(malloc(16u)); }";
    /// let module = heap.create_shader_module("warm.wgsl", source)?;
    /// let pipeline = heap.compute_pipeline("warm", &module, "main", &[])?;
    /// heap.warm_up(&pipeline, &[], Duration::from_secs(600))?;
    /// assert_eq!(heap.stats()?.malloc_calls, 0); // nothing ran
    /// # Ok::<(), gpu_heap::Error>(())
    /// ```
    pub fn warm_up(
        &self,
        pipeline: &wgpu::ComputePipeline,
        others: &[(u32, &wgpu::BindGroup)],
        timeout: std::time::Duration,
    ) -> Result<()> {
        let mut encoder = self.device.create_command_encoder(&Default::default());
        {
            let mut pass = encoder.begin_compute_pass(&Default::default());
            pass.set_pipeline(pipeline);
            pass.set_bind_group(self.bind_group_index(), &self.bind_group, &[]);
            for &(index, group) in others {
                pass.set_bind_group(index, group, &[]);
            }
            pass.dispatch_workgroups(0, 1, 1);
        }
        gpu::submit_and_wait(&self.device, &self.queue, encoder, timeout, "warm-up")
    }

    /// Frees everything: zeroes the metadata and statistics and reruns the init pass.
    /// Handles from before the reset must not be used again. Ouroboros on virtualized
    /// queues (`ouro-p-va`, `ouro-p-vl`, `ouro-c-va`, `ouro-c-vl`) also zeroes the committed
    /// segments, a fill at the GPU's memory bandwidth: its queues count on memory they have
    /// not handed out being zero.
    pub fn reset(&self) -> Result<()> {
        let mut encoder = self.device.create_command_encoder(&Default::default());
        // Everything but the growth block, which write_buffer fills before this submission.
        encoder.clear_buffer(&self.meta, 0, Some(self.layout.growth_word * 4));
        if self.layout.reset_clears_segments() {
            for segment in &self.segments {
                encoder.clear_buffer(segment, 0, None);
            }
        }
        self.write_growth_block();
        let invocations = self.layout.init_invocations();
        if invocations > 0 {
            let mut pass = encoder.begin_compute_pass(&Default::default());
            pass.set_pipeline(self.init.as_ref().expect("built in with_config"));
            pass.set_bind_group(self.bind_group_index(), &self.bind_group, &[]);
            pass.dispatch_workgroups(invocations.div_ceil(64), 1, 1);
        }
        gpu::submit_and_wait(
            &self.device,
            &self.queue,
            encoder,
            self.config.watchdog,
            "heap init",
        )
    }

    /// Reads the statistics back (waits for submitted work first; all of it within the
    /// watchdog, [`HeapConfig::watchdog`](crate::HeapConfig::watchdog)).
    pub fn stats(&self) -> Result<HeapStats> {
        let bytes = gpu::read_buffer(
            &self.device,
            &self.queue,
            &self.meta,
            0,
            STAT_WORDS * 4,
            self.config.watchdog,
        )?;
        let raw: RawStats = bytemuck::pod_read_unaligned(&bytes);
        Ok(raw.into())
    }

    /// Reads `words` words of heap_meta from `word` (waits for submitted work first).
    pub(crate) fn read_meta(&self, word: u64, words: u64) -> Result<Vec<u32>> {
        let bytes = gpu::read_buffer(
            &self.device,
            &self.queue,
            &self.meta,
            word * 4,
            words * 4,
            self.config.watchdog,
        )?;
        Ok(bytemuck::pod_collect_to_vec(&bytes))
    }

    /// The self-contained WGSL of `alloc.wgsl` for this heap (see [`crate::flatten()`]).
    pub fn flatten(&self) -> Result<String> {
        flatten_layout(&self.layout, &self.config, false)
    }
}

/// The heap's bind group: `segments` (the committed ones) in order, `placeholder` in place
/// of every other segment of the layout.
pub(crate) fn build_bind_group(
    device: &wgpu::Device,
    layout: &HeapLayout,
    bind_group_layout: &wgpu::BindGroupLayout,
    meta: &wgpu::Buffer,
    segments: &[wgpu::Buffer],
    placeholder: &wgpu::Buffer,
) -> wgpu::BindGroup {
    let bound: Vec<&wgpu::Buffer> = (0..layout.segment_count() as usize)
        .map(|i| segments.get(i).unwrap_or(placeholder))
        .collect();
    let segment_bindings: Vec<wgpu::BufferBinding> =
        bound.iter().map(|b| b.as_entire_buffer_binding()).collect();
    let group_entries: Vec<wgpu::BindGroupEntry> = (0u32..)
        .zip(layout.bindings())
        .map(|(binding, b)| wgpu::BindGroupEntry {
            binding,
            resource: match b {
                HeapBinding::Meta => meta.as_entire_binding(),
                HeapBinding::SegmentArray { .. } => {
                    wgpu::BindingResource::BufferArray(&segment_bindings)
                }
                HeapBinding::Segment { index, .. } => bound[index as usize].as_entire_binding(),
            },
        })
        .collect();
    device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: Some("gpu-heap"),
        layout: bind_group_layout,
        entries: &group_entries,
    })
}
