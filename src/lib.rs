//! gpu-heap: `malloc` and `free` for WGSL compute shaders, on any wgpu backend.
//!
//! The host side: [`GpuHeap`] owns the heap's storage buffers (one or more segments, each
//! no larger than a storage binding), initialises them on the GPU, hands out the bind group
//! and reads back [`HeapStats`]. The device side: shaders `#include "alloc.wgsl"` (through
//! [`GpuHeap::create_shader_module`] or a [`Composer`]) and call `malloc(size)`,
//! `free(ptr)`, `heap_load(ptr, word)` and `heap_store(ptr, word, value)`.
//!
//! The allocator is chosen with [`HeapConfig::strategy`] and compiled into the shaders; the
//! default, [`Strategy::UAlloc`], serves every size from 1 byte to a segment.
//!
//! A heap can grow without copying: [`HeapConfig::max_size`] reserves the handle space and
//! the strategy's state for a maximum, and [`GpuHeap::grow`], [`GpuHeap::trim`] and
//! [`GpuHeap::maintain`] (which reads the device's out-of-memory and low-watermark flags
//! and grows per a [`GrowthPolicy`]) commit and release whole segments between dispatches.
//! Live allocations never move; fetch [`GpuHeap::bind_group`] again after any of them.
//!
//! ```no_run
//! use gpu_heap::{Gpu, GpuHeap, HeapConfig, Strategy};
//! # fn main() -> gpu_heap::Result<()> {
//! let gpu = Gpu::open(None)?;
//! let config = HeapConfig::new(256 << 20).strategy(Strategy::RwBm);
//! let heap = GpuHeap::with_config(&gpu.device, &gpu.queue, config)?;
//! assert_eq!(heap.stats()?.allocations_live, 0);
//! # Ok(()) }
//! ```

#![warn(missing_docs)]

mod bump;
mod config;
mod error;
mod flatten;
mod gpu;
mod growth;
mod heap;
mod layout;
mod meta;
mod ouroboros;
mod random_walk;
pub mod shader;
mod stats;
mod strategy;
mod summary_bitmap;
mod tbuddy;
mod ualloc;

pub use config::{
    HeapConfig, OuroborosParams, RandomWalkParams, SegmentBinding, Statistics, TBuddyParams,
};
pub use error::{Error, Result};
pub use flatten::{composer, flatten, manifest, Manifest, ManifestBinding};
pub use gpu::{
    buffer_group, buffer_group_layout, device_features, read_buffer, storage_buffer,
    submit_and_wait, wait_for, AdapterDescription, Gpu,
};
pub use growth::{GrowthPolicy, MaintainReport};
pub use heap::GpuHeap;
pub use layout::{
    HandleLocation, HeapLayout, SegmentBindingKind, BINDING_ARRAY_FEATURES, UNIT_BYTES,
};
pub use meta::{
    HEAP_CONTENTION, HEAP_INVALID_FREE, HEAP_INVALID_REQUEST, HEAP_NULL, HEAP_OK,
    HEAP_OUT_OF_MEMORY,
};
pub use ouroboros::{ClassReport, EnqueueFailures, OuroborosReport, PageEvents};
pub use random_walk::WalkSteps;
pub use shader::{ComposedShader, Composer, ShaderError, SourceLocation};
pub use stats::{Failures, HeapStats, RawStats};
pub use strategy::{Packing, Strategy, StrategyParams};
pub use tbuddy::{TBuddyOrder, TBuddyReport};
pub use ualloc::{UAllocClass, UAllocReport};

/// The README's Rust examples, compiled as doctests so that the front door cannot rot.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeExamples;
