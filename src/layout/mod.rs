//! Heap geometry: how a configuration maps onto segments, metadata and WGSL constants.
//!
//! Planned on the host from the configuration and the device's limits, then written into
//! the generated `generated/config.wgsl` that `alloc.wgsl` includes.
//!
//! This file holds [`HeapLayout`] and its per-strategy queries; `segments` plans the layout
//! ([`HeapLayout::plan`]) and `codegen` writes its WGSL ([`HeapLayout::config_wgsl`]).

mod codegen;
mod segments;

use std::num::NonZeroU32;

use crate::config::{Statistics, Strategy};
use crate::meta::STAT_WORDS;
use crate::ouroboros::OuroGeometry;
use crate::random_walk::WalkGeometry;
use crate::strategy::{FamilyPlan, StrategyPlan};

pub(crate) use segments::{unsupported_adapter, DeviceCaps};

/// Bytes per heap unit; handles count units, so this is also malloc's alignment.
pub const UNIT_BYTES: u64 = 16;

/// Words of heap_meta reserved for a strategy's scalars, after the statistics.
pub(crate) const STRATEGY_SCALAR_WORDS: u64 = 16;

/// The heap_meta word where a strategy's state begins (the walks' shards, the tree buddy's
/// semaphores, Ouroboros's queue descriptors): the first word after the statistics and the
/// scalars that lies 32 words past a 4 KiB boundary. That is where the state lay, modulo
/// 4 KiB, before the statistics block grew to 144 words, and where it stays: with
/// Ouroboros's metadata 160 words past a 4 KiB boundary, its chunk-based mallocs of a
/// million small blocks were several times slower on an NVIDIA H200 (BENCHMARKS.md, "Where
/// the metadata lies, and rw-malloc's neighbours"). Why is not known; the 3.5 KiB in
/// between stay unused (bump, which has no state, keeps its growth block there).
pub(crate) const STRATEGY_STATE: u64 =
    (STAT_WORDS + STRATEGY_SCALAR_WORDS - 32).next_multiple_of(1024) + 32;
const _: () = assert!(STRATEGY_STATE >= STAT_WORDS + STRATEGY_SCALAR_WORDS);

/// Features that binding-array segments need.
pub const BINDING_ARRAY_FEATURES: wgpu::Features = wgpu::Features::BUFFER_BINDING_ARRAY
    .union(wgpu::Features::STORAGE_RESOURCE_BINDING_ARRAY)
    .union(wgpu::Features::SAMPLED_TEXTURE_AND_STORAGE_BUFFER_ARRAY_NON_UNIFORM_INDEXING);

/// How the planned heap binds its segments.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "kebab-case"))]
pub enum SegmentBindingKind {
    /// All segments in one `binding_array` binding.
    BindingArray,
    /// One storage binding per segment.
    Separate,
}

/// What one binding of the heap's bind group holds ([`HeapLayout::bindings`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum HeapBinding {
    /// `heap_meta`: statistics, strategy state, growth block.
    Meta,
    /// Every segment, as one binding array; `atomic`: as `array<atomic<u32>>`.
    SegmentArray { atomic: bool },
    /// One segment; `atomic`: as `array<atomic<u32>>`.
    Segment { index: u32, atomic: bool },
}

impl HeapBinding {
    /// The WGSL variable bound here.
    pub(crate) fn wgsl_name(self) -> String {
        match self {
            HeapBinding::Meta => "heap_meta".into(),
            HeapBinding::SegmentArray { atomic: false } => "heap_segments".into(),
            HeapBinding::SegmentArray { atomic: true } => "heap_segments_atomic".into(),
            HeapBinding::Segment {
                index,
                atomic: false,
            } => format!("heap_segment_{index}"),
            HeapBinding::Segment {
                index,
                atomic: true,
            } => format!("heap_segment_atomic_{index}"),
        }
    }
}

/// Where an allocation starts: [`HeapLayout::locate`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HandleLocation {
    /// The segment, an index into [`crate::GpuHeap::segment_buffers`].
    pub segment: u32,
    /// Bytes from the segment's start.
    pub offset: u64,
}

/// The planned heap.
#[derive(Clone, Debug)]
pub struct HeapLayout {
    /// The configured strategy (see [`HeapLayout::compiled`] for what the shaders use).
    pub strategy: Strategy,
    /// User-memory bytes (a multiple of 16).
    pub bytes: u64,
    /// Bytes of each segment (the last may be shorter).
    pub segment_sizes: Vec<u64>,
    /// log2 of the units per (full) segment.
    pub segment_shift: u32,
    /// How the segments are bound.
    pub binding: SegmentBindingKind,
    /// Words of heap_meta (statistics plus strategy state).
    pub meta_words: u64,
    /// Largest malloc in bytes.
    pub max_alloc: u32,
    /// The bind group index of the heap's bindings.
    pub bind_group_index: u32,
    /// What the device counts.
    pub statistics: Statistics,
    /// Instrumented build (`#define GPU_HEAP_COUNT_STEPS`).
    pub count_steps: bool,
    /// The strategy family's plan (src/strategy.rs).
    pub(crate) plan: FamilyPlan,
    /// The segments are bound as `array<atomic<u32>>` instead of `array<u32>`, for
    /// strategies that keep queues inside the heap (user data is then read and written with
    /// relaxed atomic loads and stores). Never both: WebGPU forbids binding one buffer twice
    /// where either binding is writable, and a plain and an atomic view of the same words
    /// would be outside the memory model.
    pub atomic_segments: bool,
    /// Whether the heap can grow: `bytes` and `segment_sizes` are then the reserved
    /// maximum, of which the first `initial_segments` are committed at creation.
    pub growable: bool,
    /// Segments committed when the heap is created (all of them unless growable).
    pub initial_segments: u32,
    /// First word of the growth block in heap_meta (`HEAP_GROWTH` in WGSL).
    pub growth_word: u64,
}

impl HeapLayout {
    /// Bytes of user memory in the first `segments` segments.
    pub fn committed_bytes(&self, segments: u32) -> u64 {
        self.segment_sizes[..segments as usize].iter().sum()
    }

    /// Bytes of the metadata buffer (statistics and the strategy's state): what the heap
    /// costs besides its segments.
    pub fn metadata_bytes(&self) -> u64 {
        self.meta_words * 4
    }

    /// Bytes committed when the heap is created.
    pub fn initial_bytes(&self) -> u64 {
        self.committed_bytes(self.initial_segments)
    }

    /// The heap's bindings, binding `i` at index `i`: heap_meta, then the segments (one
    /// binding array, or one binding each), as atomics for strategies that keep queues
    /// inside the heap ([`atomic_segments`](Self::atomic_segments)). Each buffer is bound
    /// once. The bind group layout, the bind group, the generated WGSL and the flattened
    /// shader's header all follow this list.
    pub(crate) fn bindings(&self) -> Vec<HeapBinding> {
        let atomic = self.atomic_segments;
        let mut bindings = vec![HeapBinding::Meta];
        match self.binding {
            SegmentBindingKind::BindingArray => bindings.push(HeapBinding::SegmentArray { atomic }),
            SegmentBindingKind::Separate => bindings.extend(
                (0..self.segment_count()).map(|index| HeapBinding::Segment { index, atomic }),
            ),
        }
        bindings
    }

    /// The entries of the heap's bind group layout, binding `i` at index `i`, as
    /// [`GpuHeap::bind_group_layout`](crate::GpuHeap::bind_group_layout) was made from them:
    /// for engines that build their own layouts from entries (Bevy's pipeline cache, say).
    /// All are read-write storage buffers visible to compute shaders.
    ///
    /// ```
    /// use gpu_heap::{Gpu, HeapConfig, HeapLayout};
    /// let gpu = Gpu::open(None)?;
    /// let layout = HeapLayout::for_device(&HeapConfig::new(16 << 20), &gpu.device)?;
    /// let entries = layout.bind_group_layout_entries();
    /// assert_eq!(entries[0].binding, 0); // heap_meta
    /// # Ok::<(), gpu_heap::Error>(())
    /// ```
    pub fn bind_group_layout_entries(&self) -> Vec<wgpu::BindGroupLayoutEntry> {
        let entry = |binding: u32, count: Option<NonZeroU32>| wgpu::BindGroupLayoutEntry {
            binding,
            visibility: wgpu::ShaderStages::COMPUTE,
            ty: wgpu::BindingType::Buffer {
                ty: wgpu::BufferBindingType::Storage { read_only: false },
                has_dynamic_offset: false,
                min_binding_size: None,
            },
            count,
        };
        (0u32..)
            .zip(self.bindings())
            .map(|(binding, b)| match b {
                HeapBinding::SegmentArray { .. } => {
                    entry(binding, NonZeroU32::new(self.segment_count()))
                }
                _ => entry(binding, None),
            })
            .collect()
    }

    /// The family's plan behind the strategy seam.
    fn family(&self) -> &dyn StrategyPlan {
        self.plan.get()
    }

    /// The Ouroboros geometry, for Ouroboros heaps.
    pub(crate) fn ouro(&self) -> Option<&OuroGeometry> {
        match &self.plan {
            FamilyPlan::Ouroboros(o) => Some(o),
            _ => None,
        }
    }

    /// The random-walk geometry, for random-walk heaps.
    pub(crate) fn walk(&self) -> Option<&WalkGeometry> {
        match &self.plan {
            FamilyPlan::RandomWalk(w) => Some(w),
            _ => None,
        }
    }

    /// 16-byte units of the strategy's free count (a page or RW_malloc unit; 1 for bump;
    /// a chunk for Ouroboros, whose free count is its fresh chunks).
    pub(crate) fn item_units(&self) -> u64 {
        self.family().item_units()
    }

    /// Invocations of the trim check between `to` and `from` committed units (one per
    /// bitmap word of the random walks, one for bump, one per chunk for Ouroboros).
    pub(crate) fn trim_check_invocations(&self, to_units: u64, from_units: u64) -> u32 {
        self.family().trim_check_invocations(to_units, from_units)
    }

    /// The strategy the shaders are compiled as: the configured one, except CoRW on a
    /// device without subgroups, which runs as RW-BM (same state, same free).
    pub fn compiled(&self) -> Strategy {
        self.family().compiled(self.strategy)
    }

    /// Where the allocation of `handle` (what `malloc` returned) starts: its segment
    /// ([`crate::GpuHeap::segment_buffers`]) and the byte offset in it. A handle is the
    /// 16-byte unit of the heap where the allocation starts, plus one, and segments hold
    /// `1 << segment_shift` units each. `None` for NULL and for handles past the heap.
    ///
    /// ```
    /// use gpu_heap::{Gpu, HeapConfig, HeapLayout, HandleLocation};
    /// let gpu = Gpu::open(None)?;
    /// let layout = HeapLayout::for_device(&HeapConfig::new(1 << 20), &gpu.device)?;
    /// assert_eq!(layout.locate(0), None);
    /// assert_eq!(layout.locate(3), Some(HandleLocation { segment: 0, offset: 32 }));
    /// # Ok::<(), gpu_heap::Error>(())
    /// ```
    pub fn locate(&self, handle: u32) -> Option<HandleLocation> {
        let unit = u64::from(handle.checked_sub(1)?);
        if unit >= u64::from(self.units()) {
            return None;
        }
        Some(HandleLocation {
            segment: (unit >> self.segment_shift) as u32,
            offset: (unit & ((1u64 << self.segment_shift) - 1)) * UNIT_BYTES,
        })
    }

    /// User-memory units of 16 bytes.
    pub fn units(&self) -> u32 {
        (self.bytes / UNIT_BYTES) as u32
    }

    /// Number of segments (storage buffers) of user memory.
    pub fn segment_count(&self) -> u32 {
        self.segment_sizes.len() as u32
    }

    /// Invocations of the strategy's init pass (`STRATEGY_INIT_INVOCATIONS` in WGSL).
    pub fn init_invocations(&self) -> u32 {
        self.family().init_invocations()
    }

    /// How many allocations of `size` bytes fit in an empty heap, as
    /// [`Strategy::packing`] qualifies it: exact for slots, an upper bound for blocks placed
    /// end to end or in runs. The Ouroboros size classes on virtualized queues (`ouro-p-va`,
    /// `ouro-p-vl`, `ouro-c-va`, `ouro-c-vl`) keep their queues in chunks of the heap:
    /// their blocks never take the last [`queue_reserve_chunks`](Self::queue_reserve_chunks)
    /// chunks, which this count leaves out. A heap filled in rounds (each dispatch a few
    /// thousand mallocs) serves exactly this many; one filled by a single dispatch of
    /// hundreds of thousands of mallocs can serve fewer, when its queues outgrow the reserve.
    ///
    /// ```
    /// use gpu_heap::{HeapConfig, HeapLayout, Strategy};
    /// let config = HeapConfig::new(64 << 20).strategy(Strategy::RwBm);
    /// let layout = HeapLayout::for_device(&config, &gpu_heap::Gpu::open(None)?.device)?;
    /// assert_eq!(layout.capacity_for(256), (64 << 20) / 256);
    /// # Ok::<(), gpu_heap::Error>(())
    /// ```
    pub fn capacity_for(&self, size: u32) -> u64 {
        self.family().capacity_for(size, &self.segment_sizes)
    }

    /// Whether the heap's shaders use subgroup operations (the device has them, and the
    /// strategy makes use of them): in WebGPU, the `subgroups` feature.
    pub fn uses_subgroups(&self) -> bool {
        self.family().uses_subgroups()
    }

    /// Whether [`GpuHeap::reset`](crate::GpuHeap::reset) clears the segments too: the
    /// strategy counts on memory it has not handed out being zero (Ouroboros on
    /// virtualized queues).
    pub(crate) fn reset_clears_segments(&self) -> bool {
        self.family().reset_clears_segments()
    }

    /// Chunks that Ouroboros classes on virtualized queues leave free for queue chunks
    /// (`OURO_QUEUE_RESERVE`); 0 for every other strategy.
    pub fn queue_reserve_chunks(&self) -> u64 {
        self.family().queue_reserve_chunks()
    }

    /// Bytes a malloc of `size` takes from the heap.
    pub fn granted_bytes(&self, size: u32) -> u64 {
        self.family().granted_bytes(size)
    }
}

#[cfg(test)]
mod tests {
    use super::segments::tests::caps;
    use super::*;
    use crate::config::{HeapConfig, OuroborosParams};
    use crate::error::Error;

    #[test]
    fn ouroboros_setters_are_validated() {
        let c = caps(128 << 20, false);
        let ouro = |params| {
            let config = HeapConfig::new(4 << 20).strategy(Strategy::OuroPS);
            HeapLayout::plan(&config.ouroboros(params), &c)
        };
        let l = ouro(OuroborosParams::default()).unwrap();
        assert_eq!(l.max_alloc, 64 << 10);
        assert_eq!(l.capacity_for(16), (4 << 20) / 16);
        let l = ouro(OuroborosParams {
            chunk_size: 16 << 10,
            min_page_size: 64,
            ..Default::default()
        })
        .unwrap();
        assert_eq!(l.granted_bytes(16), 64);
        assert_eq!(l.capacity_for(16 << 10), 256);
        let l = ouro(OuroborosParams {
            max_alloc: 256 << 10,
            ..Default::default()
        })
        .unwrap();
        assert_eq!(l.max_alloc, 256 << 10);
        let chunk = |chunk_size| OuroborosParams {
            chunk_size,
            ..Default::default()
        };
        let min_page = |min_page_size| OuroborosParams {
            min_page_size,
            ..Default::default()
        };
        for bad in [
            ouro(chunk(3000)),
            ouro(chunk(8)),
            ouro(min_page(24)),
            ouro(min_page(16 << 10)),
            ouro(OuroborosParams {
                max_alloc: 100_000,
                ..Default::default()
            }),
            ouro(chunk(8 << 20)),
        ] {
            assert!(matches!(bad, Err(Error::InvalidConfig(_))), "{bad:?}");
        }
        assert!(matches!(
            HeapLayout::plan(
                &HeapConfig::new(4 << 20)
                    .strategy(Strategy::OuroPVL)
                    .ouroboros(chunk(256 << 10)),
                &c
            ),
            Err(Error::InvalidConfig(_))
        ));
    }

    #[test]
    fn growable_ouroboros_plans_its_tables_for_the_maximum() {
        for &strategy in Strategy::ALL.iter().filter(|s| s.is_ouroboros()) {
            let c = HeapConfig::new(2 << 20)
                .max_size(8 << 20)
                .strategy(strategy);
            let l = HeapLayout::plan(&c, &caps(128 << 20, true)).unwrap();
            let fixed = HeapLayout::plan(
                &HeapConfig::new(8 << 20).strategy(strategy),
                &caps(128 << 20, true),
            )
            .unwrap();
            let (o, f) = (l.ouro().unwrap(), fixed.ouro().unwrap());
            // Chunks, live bits, rings and chunk limits as for a fixed heap of the maximum.
            assert_eq!(o.chunks, 1024, "{strategy}");
            assert_eq!(
                (&o.rings, &o.chunk_limit, o.live_bits, o.cb_meta, o.qc_words),
                (&f.rings, &f.chunk_limit, f.live_bits, f.cb_meta, f.qc_words),
                "{strategy}"
            );
            // Runs fit one 2 MiB segment; the watermark counts chunks; one check per chunk.
            assert_eq!(l.max_alloc, 64 << 10, "{strategy}");
            assert_eq!(l.item_units(), 512, "{strategy}");
            assert_eq!(
                l.trim_check_invocations(1 << 17, 2 << 17),
                256,
                "{strategy}"
            );
            assert!(l.config_wgsl().contains("#define GPU_HEAP_GROWABLE"));
        }
    }
}
