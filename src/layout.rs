//! Heap geometry: how a configuration maps onto segments, metadata and WGSL constants.
//!
//! Planned on the host from the configuration and the device's limits, then written into
//! the generated `generated/config.wgsl` that `alloc.wgsl` includes.

use std::fmt::Write as _;

use crate::config::{HeapConfig, SegmentBinding, Statistics, Strategy};
use crate::error::{Error, Result};
use crate::ouroboros::{OuroGeometry, OuroParams, QueueKind};
use crate::random_walk::{self, WalkGeometry};
use crate::stats::STAT_WORDS;

/// Bytes per heap unit; handles count units, so this is also malloc's alignment.
pub const UNIT_BYTES: u64 = 16;

/// Largest bump allocation (see bump.wgsl: keeps its head from wrapping).
const BUMP_MAX_ALLOC: u64 = 64 << 10;
/// Largest bump heap in units (see bump.wgsl).
const BUMP_MAX_UNITS: u64 = 1 << 31;
/// Words of heap_meta reserved for a strategy's scalars, after the statistics.
const STRATEGY_SCALAR_WORDS: u64 = 16;
/// Words of the growth block at the end of heap_meta (shaders/core/growth.wgsl).
pub(crate) const GROWTH_WORDS: u64 = 8;

/// Features that binding-array segments need.
pub const BINDING_ARRAY_FEATURES: wgpu::Features = wgpu::Features::BUFFER_BINDING_ARRAY
    .union(wgpu::Features::STORAGE_RESOURCE_BINDING_ARRAY)
    .union(wgpu::Features::SAMPLED_TEXTURE_AND_STORAGE_BUFFER_ARRAY_NON_UNIFORM_INDEXING);

/// What the planner needs to know about the device.
#[derive(Clone, Debug)]
pub(crate) struct DeviceCaps {
    pub features: wgpu::Features,
    pub limits: wgpu::Limits,
    /// The backend, where known: DX12 cannot use binding-array segments (see below).
    pub backend: Option<wgpu::Backend>,
}

impl DeviceCaps {
    pub fn of(device: &wgpu::Device) -> Self {
        DeviceCaps {
            features: device.features(),
            limits: device.limits(),
            backend: Some(device.adapter_info().backend),
        }
    }
}

/// How the planned heap binds its segments.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum SegmentBindingKind {
    BindingArray,
    Separate,
}

/// The planned heap.
#[derive(Clone, Debug)]
pub struct HeapLayout {
    pub strategy: Strategy,
    /// User-memory bytes (a multiple of 16).
    pub bytes: u64,
    /// Bytes of each segment (the last may be shorter).
    pub segment_sizes: Vec<u64>,
    /// log2 of the units per (full) segment.
    pub segment_shift: u32,
    pub binding: SegmentBindingKind,
    /// Words of heap_meta (statistics plus strategy state).
    pub meta_words: u64,
    /// Largest malloc in bytes.
    pub max_alloc: u32,
    pub bind_group_index: u32,
    pub statistics: Statistics,
    /// Random-walk strategies' geometry (src/random_walk).
    pub(crate) walk: Option<WalkGeometry>,
    /// Instrumented build (`#define GPU_HEAP_COUNT_STEPS`).
    pub count_steps: bool,
    pub(crate) ouro: Option<OuroGeometry>,
    /// Every segment is bound a second time as `array<atomic<u32>>` (after the plain views),
    /// for strategies that keep queues inside the heap.
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
    pub(crate) fn plan(config: &HeapConfig, caps: &DeviceCaps) -> Result<Self> {
        if config.size == 0 {
            return Err(Error::ZeroSize);
        }
        let growable = config.is_growable();
        if growable && !config.strategy.supports_growth() {
            return Err(Error::GrowthUnsupported {
                strategy: config.strategy.to_string(),
            });
        }
        let reserved = if growable {
            config.max_size.unwrap_or(config.size)
        } else {
            config.size
        };
        let too_large = |reason: String| Error::TooLarge {
            requested: reserved,
            reason,
        };
        let initial_bytes = config
            .size
            .checked_next_multiple_of(UNIT_BYTES)
            .ok_or_else(|| too_large("it overflows u64".into()))?;
        let bytes = reserved
            .checked_next_multiple_of(UNIT_BYTES)
            .ok_or_else(|| too_large("it overflows u64".into()))?;
        let units = bytes / UNIT_BYTES;
        if units > u32::MAX as u64 {
            return Err(too_large(
                "handles are u32 counts of 16-byte units, which reach 64 GiB - 16 bytes".into(),
            ));
        }
        if config.strategy == Strategy::Bump && units > BUMP_MAX_UNITS {
            return Err(too_large("the bump allocator holds at most 32 GiB".into()));
        }

        // Segment stride: a power of two no larger than one binding, one buffer, or the cap.
        let limits = &caps.limits;
        let mut cap = limits
            .max_storage_buffer_binding_size
            .min(limits.max_buffer_size);
        if let Some(max) = config.max_segment_size {
            cap = cap.min(max);
        }
        if cap < UNIT_BYTES {
            return Err(Error::InvalidConfig(format!(
                "the segment size cap of {cap} bytes is below one 16-byte unit"
            )));
        }
        // A growable heap commits whole segments, so its stride follows the initial size
        // (rounded up to a power of two): growth then commits in steps of that size.
        // If the maximum would then need more segments than the device can bind, the
        // stride doubles until it fits (the initial commit rounds up to one segment).
        let fit = if growable { initial_bytes } else { bytes };
        let mut stride = prev_power_of_two(cap).min(fit.next_power_of_two());
        if growable {
            let bindable = bindable_segments(config, caps);
            while bytes.div_ceil(stride) > bindable && stride < prev_power_of_two(cap) {
                stride *= 2;
            }
        }
        let segment_count = bytes.div_ceil(stride);
        let initial_segments = initial_bytes.div_ceil(stride).min(segment_count) as u32;
        let segment_sizes: Vec<u64> = (0..segment_count)
            .map(|i| stride.min(bytes - i * stride))
            .collect();
        let segment_shift = (stride / UNIT_BYTES).trailing_zeros();

        let binding = resolve_binding(config, caps, segment_count)?;

        let (max_alloc, walk) = match config.strategy {
            Strategy::Bump => (BUMP_MAX_ALLOC.min(stride).min(bytes), None),
            s if random_walk::is_random_walk(s) => {
                let (max, geometry) =
                    random_walk::plan(config, caps, bytes, stride, segment_count)?;
                (max, Some(geometry))
            }
            // Ouroboros is planned below; its geometry sets max_alloc.
            s if s.is_ouroboros() => (0, None),
            s => {
                return Err(Error::InvalidConfig(format!(
                    "strategy {s} is not planned by this build"
                )))
            }
        };
        let ouro = if config.strategy.is_ouroboros() {
            Some(OuroGeometry::plan(&OuroParams {
                bytes,
                segment_stride: stride,
                chunk_size: config.chunk_size,
                min_page_size: config.min_page_size,
                max_alloc: config.ouro_max_alloc,
                max_binding: limits
                    .max_storage_buffer_binding_size
                    .min(limits.max_buffer_size),
                chunk_based: config.strategy.is_chunk_based_ouroboros(),
                queue_kind: match config.strategy {
                    Strategy::OuroPVA | Strategy::OuroCVA => QueueKind::VirtualArray,
                    Strategy::OuroPVL | Strategy::OuroCVL => QueueKind::VirtualLinked,
                    _ => QueueKind::Standard,
                },
            })?)
        } else {
            None
        };
        let max_alloc = ouro.as_ref().map_or(max_alloc, |o| o.max_alloc as u64);

        let growth_word = match &ouro {
            Some(o) => o.meta_words,
            None => STAT_WORDS as u64 + STRATEGY_SCALAR_WORDS + walk.map_or(0, |w| w.state_words),
        };
        let meta_words = growth_word + GROWTH_WORDS;
        let meta_bytes = meta_words * 4;
        if meta_bytes
            > limits
                .max_storage_buffer_binding_size
                .min(limits.max_buffer_size)
        {
            return Err(too_large(format!(
                "its metadata ({meta_bytes} bytes) exceeds one storage binding; use larger pages"
            )));
        }

        Ok(Self {
            strategy: config.strategy,
            bytes,
            segment_sizes,
            segment_shift,
            binding,
            meta_words,
            max_alloc: max_alloc as u32,
            bind_group_index: config.bind_group_index,
            statistics: config.statistics,
            walk,
            count_steps: config.count_steps,
            ouro,
            atomic_segments: config.strategy.needs_atomic_segments(),
            growable,
            initial_segments,
            growth_word,
        })
    }

    /// Bytes of user memory in the first `segments` segments.
    pub fn committed_bytes(&self, segments: u32) -> u64 {
        self.segment_sizes[..segments as usize].iter().sum()
    }

    /// Bytes committed when the heap is created.
    pub fn initial_bytes(&self) -> u64 {
        self.committed_bytes(self.initial_segments)
    }

    /// 16-byte units of the strategy's free count (a page or RW_malloc unit; 1 for bump;
    /// a chunk for Ouroboros, whose free count is its fresh chunks).
    pub(crate) fn item_units(&self) -> u64 {
        if let Some(o) = &self.ouro {
            return o.chunk_units as u64;
        }
        self.walk.map_or(1, |w| w.item_units as u64)
    }

    /// Invocations of the trim check between `to` and `from` committed units: one per
    /// bitmap word (32 pages or units) of the random walks, one for bump, one per chunk
    /// for Ouroboros.
    pub(crate) fn trim_check_invocations(&self, to_units: u64, from_units: u64) -> u32 {
        if let Some(o) = &self.ouro {
            let units = o.chunk_units as u64;
            return (from_units.div_ceil(units) - to_units / units).max(1) as u32;
        }
        match self.walk {
            None => 1,
            Some(_) => {
                let (to, from) = (to_units / self.item_units(), from_units / self.item_units());
                (from.div_ceil(32) - to / 32).max(1) as u32
            }
        }
    }

    /// The strategy the shaders are compiled as: the configured one, except CoRW on a
    /// device without subgroups, which runs as RW-BM (same state, same free).
    pub fn compiled(&self) -> Strategy {
        self.walk.map_or(self.strategy, |w| w.compiled)
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
        match self.strategy {
            Strategy::Bump => 0,
            s if random_walk::is_random_walk(s) => 1,
            Strategy::OuroPS | Strategy::OuroPVA | Strategy::OuroPVL => 0,
            // The chunk-based front end marks every chunk's count (chunk_based.wgsl).
            Strategy::OuroCS | Strategy::OuroCVA | Strategy::OuroCVL => {
                self.ouro.as_ref().map_or(0, |o| o.chunks.min(1 << 20))
            }
            _ => 0,
        }
    }

    /// How many allocations of `size` bytes fit in an empty heap.
    pub fn capacity_for(&self, size: u32) -> u64 {
        if let Some(o) = &self.ouro {
            return o.capacity_for(size);
        }
        match self.walk {
            Some(w) => w.capacity_for(size, &self.segment_sizes),
            None => {
                // Bump: blocks do not cross segments.
                let units = (size as u64).div_ceil(UNIT_BYTES).max(1);
                self.segment_sizes
                    .iter()
                    .map(|s| s / UNIT_BYTES / units)
                    .sum()
            }
        }
    }

    /// Chunks that page producers of Ouroboros classes on virtualized queues leave free for
    /// queue chunks (`OURO_QUEUE_RESERVE`); 0 for every other strategy.
    pub fn queue_reserve_chunks(&self) -> u64 {
        self.ouro.as_ref().map_or(0, |o| o.queue_reserve())
    }

    /// Bytes a malloc of `size` takes from the heap.
    pub fn granted_bytes(&self, size: u32) -> u64 {
        if let Some(o) = &self.ouro {
            return o.granted_bytes(size);
        }
        match self.walk {
            Some(w) => w.granted_bytes(size),
            None => (size as u64).div_ceil(UNIT_BYTES) * UNIT_BYTES,
        }
    }

    /// The WGSL of `generated/config.wgsl`: constants, the strategy's define, and bindings.
    pub fn config_wgsl(&self) -> String {
        let mut s = String::new();
        let n = self.segment_count();
        let group = self.bind_group_index;
        let _ = writeln!(
            s,
            "// Generated by gpu-heap: strategy {}, {} bytes in {} segment(s) bound as {:?}.\n\
             // Keep in sync with src/layout.rs (it writes this file).\n#define {}",
            self.strategy,
            self.bytes,
            n,
            self.binding,
            self.compiled().define()
        );
        if self.statistics == Statistics::Full {
            let _ = writeln!(s, "#define GPU_HEAP_FULL_STATISTICS");
        }
        if self.count_steps {
            let _ = writeln!(s, "#define GPU_HEAP_COUNT_STEPS");
        }
        if self.growable {
            let _ = writeln!(s, "#define GPU_HEAP_GROWABLE");
        }
        for define in self.walk.map_or(vec![], |w| w.defines()) {
            let _ = writeln!(s, "#define {define}");
        }
        let mut constant = |name: &str, value: u64| {
            let _ = writeln!(s, "const {name}: u32 = {value}u;");
        };
        constant("HEAP_UNITS", self.units() as u64);
        constant("HEAP_SEGMENTS", n as u64);
        constant("HEAP_SEGMENT_SHIFT", self.segment_shift as u64);
        constant("HEAP_SEGMENT_MASK", (1u64 << self.segment_shift) - 1);
        constant("HEAP_MAX_ALLOC", self.max_alloc as u64);
        constant("HEAP_META_WORDS", self.meta_words);
        constant("HEAP_GROWTH", self.growth_word);
        constant("STRATEGY_INIT_INVOCATIONS", self.init_invocations() as u64);
        for (name, value) in self.walk.map_or(vec![], |w| w.wgsl()) {
            constant(name, value);
        }
        if let Some(o) = &self.ouro {
            o.wgsl(&mut s);
        }
        let _ = writeln!(
            s,
            "@group({group}) @binding(0) var<storage, read_write> heap_meta: array<atomic<u32>>;"
        );
        match self.binding {
            SegmentBindingKind::BindingArray => {
                let _ = writeln!(
                    s,
                    "enable wgpu_binding_array;\n\
                     struct HeapSegment {{ words: array<u32> }}\n\
                     @group({group}) @binding(1) var<storage, read_write> heap_segments: \
                     binding_array<HeapSegment, {n}>;\n\
                     fn heap_segment_load(segment: u32, word: u32) -> u32 {{\n    \
                     return heap_segments[segment].words[word];\n}}\n\
                     fn heap_segment_store(segment: u32, word: u32, value: u32) {{\n    \
                     heap_segments[segment].words[word] = value;\n}}"
                );
                if self.atomic_segments {
                    let _ = writeln!(
                        s,
                        "struct HeapSegmentAtomic {{ words: array<atomic<u32>> }}\n\
                         @group({group}) @binding(2) var<storage, read_write> heap_segments_atomic: \
                         binding_array<HeapSegmentAtomic, {n}>;"
                    );
                    atomic_accessors(
                        &mut s,
                        |_| "heap_segments_atomic[segment].words".into(),
                        None,
                    );
                }
            }
            SegmentBindingKind::Separate => {
                for i in 0..n {
                    let _ = writeln!(
                        s,
                        "@group({group}) @binding({}) var<storage, read_write> heap_segment_{i}: \
                         array<u32>;",
                        i + 1
                    );
                }
                let _ = writeln!(s, "fn heap_segment_load(segment: u32, word: u32) -> u32 {{");
                let _ = writeln!(s, "    switch segment {{");
                for i in 0..n {
                    let _ = writeln!(s, "        case {i}u: {{ return heap_segment_{i}[word]; }}");
                }
                let _ = writeln!(s, "        default: {{ return 0u; }}\n    }}\n}}");
                let _ = writeln!(
                    s,
                    "fn heap_segment_store(segment: u32, word: u32, value: u32) {{"
                );
                let _ = writeln!(s, "    switch segment {{");
                for i in 0..n {
                    let _ = writeln!(
                        s,
                        "        case {i}u: {{ heap_segment_{i}[word] = value; }}"
                    );
                }
                let _ = writeln!(s, "        default: {{}}\n    }}\n}}");
                if self.atomic_segments {
                    for i in 0..n {
                        let _ = writeln!(
                            s,
                            "@group({group}) @binding({}) var<storage, read_write> \
                             heap_segment_atomic_{i}: array<atomic<u32>>;",
                            n + i + 1
                        );
                    }
                    atomic_accessors(&mut s, |i| format!("heap_segment_atomic_{i}"), Some(n));
                }
            }
        }
        s
    }
}

/// heap_atomic_fill's body over the atomic array ARR. Each iteration issues 4 exchanges
/// before it uses any of their old values, so that they wait for memory together: one at
/// a time makes zeroing a queue chunk slow enough to stall out-of-memory fills. More per
/// iteration makes shaders much slower to compile and gains nothing.
const FILL_BODY: &str = "var w = word; let end = word + count; var same = 0u;
    for (; w + 4u <= end; w += 4u) {
        let old = vec4<u32>(atomicExchange(&ARR[w], value), atomicExchange(&ARR[w + 1u], value),
            atomicExchange(&ARR[w + 2u], value), atomicExchange(&ARR[w + 3u], value));
        same += dot(vec4<u32>(old == vec4<u32>(value)), vec4<u32>(1u));
    }
    for (; w < end; w++) { same += u32(atomicExchange(&ARR[w], value) == value); }
    return same;";

/// Generates heap_atomic_{load,exchange,add,cas}(segment, word, ..) over the atomic
/// views: `array(i)` names segment i's array; `switch_over` is the segment count for
/// separate bindings (a switch), None for a binding array indexed by `segment`. Also
/// heap_atomic_fill(segment, word, count, value): exchanges value into the count words from
/// word on (they must not leave the segment) and returns how many held it already; its
/// switch sits outside its loop, so a growable heap's separate bindings cost one switch, not
/// one per word.
fn atomic_accessors(s: &mut String, array: impl Fn(u32) -> String, switch_over: Option<u32>) {
    let ops: [(&str, &str, &str, &str); 5] = [
        ("load", "", "u32", "return atomicLoad(&ARR[word]);"),
        (
            "exchange",
            ", value: u32",
            "u32",
            "return atomicExchange(&ARR[word], value);",
        ),
        (
            "add",
            ", value: u32",
            "u32",
            "return atomicAdd(&ARR[word], value);",
        ),
        (
            "cas",
            ", compare: u32, value: u32",
            "vec2<u32>",
            "let x = atomicCompareExchangeWeak(&ARR[word], compare, value); \
             return vec2<u32>(x.old_value, select(0u, 1u, x.exchanged));",
        ),
        ("fill", ", count: u32, value: u32", "u32", FILL_BODY),
    ];
    for (name, args, ret, body) in ops {
        let _ = writeln!(
            s,
            "fn heap_atomic_{name}(segment: u32, word: u32{args}) -> {ret} {{"
        );
        match switch_over {
            None => {
                let _ = writeln!(s, "    {}", body.replace("ARR", &array(0)));
            }
            Some(n) => {
                let _ = writeln!(s, "    switch segment {{");
                for i in 0..n {
                    let _ = writeln!(
                        s,
                        "        case {i}u: {{ {} }}",
                        body.replace("ARR", &array(i))
                    );
                }
                let _ = writeln!(s, "        default: {{}}\n    }}");
                let _ = writeln!(s, "    return {ret}();");
            }
        }
        let _ = writeln!(s, "}}");
    }
}

fn prev_power_of_two(x: u64) -> u64 {
    1 << (63 - x.leading_zeros())
}

/// Storage bindings per shader stage a growable heap leaves to the user's own bind groups
/// when it picks its segment count.
const USER_STORAGE_BINDINGS: u64 = 8;

/// The most segments a growable heap plans for this configuration (binding arrays where
/// `resolve_binding` would choose them, separate bindings otherwise), leaving the metadata
/// binding and USER_STORAGE_BINDINGS to the rest of the pipeline.
fn bindable_segments(config: &HeapConfig, caps: &DeviceCaps) -> u64 {
    let dx12 = caps.backend == Some(wgpu::Backend::Dx12);
    let has_arrays = caps.features.contains(BINDING_ARRAY_FEATURES) && !dx12;
    let stage = (caps.limits.max_storage_buffers_per_shader_stage as u64)
        .saturating_sub(1 + USER_STORAGE_BINDINGS);
    let arrays = matches!(
        config.segment_binding,
        SegmentBinding::Auto | SegmentBinding::BindingArray
    ) && has_arrays;
    if arrays {
        (caps.limits.max_binding_array_elements_per_shader_stage as u64)
            .min(stage)
            .max(1)
    } else {
        (config.max_separate_bindings as u64).min(stage).max(1)
    }
}

fn resolve_binding(
    config: &HeapConfig,
    caps: &DeviceCaps,
    segments: u64,
) -> Result<SegmentBindingKind> {
    // naga 30's HLSL back end cannot write binding arrays of storage buffers holding
    // runtime-sized arrays (tests/backends.rs locks this in), so DX12 binds separately.
    let dx12 = caps.backend == Some(wgpu::Backend::Dx12);
    let has_arrays = caps.features.contains(BINDING_ARRAY_FEATURES) && !dx12;
    let kind = match config.segment_binding {
        SegmentBinding::Auto if segments == 1 => SegmentBindingKind::Separate,
        SegmentBinding::Auto if has_arrays => SegmentBindingKind::BindingArray,
        SegmentBinding::Auto | SegmentBinding::Separate => SegmentBindingKind::Separate,
        SegmentBinding::BindingArray => SegmentBindingKind::BindingArray,
    };
    let limits = &caps.limits;
    match kind {
        SegmentBindingKind::BindingArray => {
            if dx12 {
                return Err(Error::InvalidConfig(
                    "binding-array segments are not supported on DX12 (naga's HLSL back end \
                     cannot write them); use SegmentBinding::Separate or Auto"
                        .into(),
                ));
            }
            if !has_arrays {
                return Err(Error::MissingFeatures {
                    needed_for: format!("a heap of {segments} segments in a binding array"),
                    missing: BINDING_ARRAY_FEATURES - caps.features,
                });
            }
            let have = limits.max_binding_array_elements_per_shader_stage as u64;
            if have < segments {
                return Err(Error::LimitTooLow {
                    limit: "max_binding_array_elements_per_shader_stage",
                    have,
                    needed: segments,
                });
            }
        }
        SegmentBindingKind::Separate => {
            if segments > config.max_separate_bindings as u64 {
                return Err(Error::TooLarge {
                    requested: config.size,
                    reason: format!(
                        "it needs {segments} segments and separate bindings are capped at {} \
                         (max_separate_bindings); the device {} binding arrays",
                        config.max_separate_bindings,
                        if has_arrays { "has" } else { "lacks" }
                    ),
                });
            }
        }
    }
    // Strategies with queues inside the heap bind every segment a second time, as atomics.
    let views = if config.strategy.needs_atomic_segments() {
        2
    } else {
        1
    };
    let have = limits.max_storage_buffers_per_shader_stage as u64;
    if have < segments * views + 1 {
        return Err(Error::LimitTooLow {
            limit: "max_storage_buffers_per_shader_stage",
            have,
            needed: segments * views + 1,
        });
    }
    Ok(kind)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn caps(binding: u64, arrays: bool) -> DeviceCaps {
        DeviceCaps {
            features: if arrays {
                BINDING_ARRAY_FEATURES
            } else {
                wgpu::Features::empty()
            },
            limits: wgpu::Limits {
                max_storage_buffer_binding_size: binding,
                max_buffer_size: 4 << 30,
                max_storage_buffers_per_shader_stage: 64,
                max_binding_array_elements_per_shader_stage: 64,
                ..wgpu::Limits::default()
            },
            backend: None,
        }
    }

    #[test]
    fn eight_gib_on_a_two_gib_binding_is_eight_segments() {
        let c = HeapConfig::new(8 << 30);
        let l = HeapLayout::plan(&c, &caps((2 << 30) - 4, true)).unwrap();
        assert_eq!(l.segment_sizes, vec![1 << 30; 8]);
        assert_eq!(l.segment_shift, 26);
        assert_eq!(l.binding, SegmentBindingKind::BindingArray);
    }

    #[test]
    fn uneven_heap_has_a_short_last_segment() {
        let c = HeapConfig::new(300 << 20).max_separate_bindings(8);
        let l = HeapLayout::plan(&c, &caps(128 << 20, false)).unwrap();
        assert_eq!(l.segment_sizes, vec![128 << 20, 128 << 20, 44 << 20]);
        assert_eq!(l.binding, SegmentBindingKind::Separate);
    }

    #[test]
    fn small_heap_is_one_segment() {
        let l = HeapLayout::plan(&HeapConfig::new(1000), &caps(128 << 20, true)).unwrap();
        assert_eq!(l.bytes, 1008);
        assert_eq!(l.segment_sizes, vec![1008]);
        assert_eq!(l.segment_shift, 6);
        assert_eq!(l.walk.unwrap().items, 3);
    }

    #[test]
    fn ouroboros_setters_are_validated() {
        let c = caps(128 << 20, false);
        let ouro = |f: fn(HeapConfig) -> HeapConfig| {
            HeapLayout::plan(&f(HeapConfig::new(4 << 20).strategy(Strategy::OuroPS)), &c)
        };
        let l = ouro(|h| h).unwrap();
        assert_eq!(l.max_alloc, 64 << 10);
        assert_eq!(l.capacity_for(16), (4 << 20) / 16);
        let l = ouro(|h| h.chunk_size(16 << 10).min_page_size(64)).unwrap();
        assert_eq!(l.granted_bytes(16), 64);
        assert_eq!(l.capacity_for(16 << 10), 256);
        let l = ouro(|h| h.ouro_max_alloc(256 << 10)).unwrap();
        assert_eq!(l.max_alloc, 256 << 10);
        for bad in [
            ouro(|h| h.chunk_size(3000)),
            ouro(|h| h.chunk_size(8)),
            ouro(|h| h.min_page_size(24)),
            ouro(|h| h.min_page_size(16 << 10)),
            ouro(|h| h.ouro_max_alloc(100_000)),
            ouro(|h| h.chunk_size(8 << 20)),
        ] {
            assert!(matches!(bad, Err(Error::InvalidConfig(_))), "{bad:?}");
        }
        assert!(matches!(
            HeapLayout::plan(
                &HeapConfig::new(4 << 20)
                    .strategy(Strategy::OuroPVL)
                    .chunk_size(256 << 10),
                &c
            ),
            Err(Error::InvalidConfig(_))
        ));
    }

    #[test]
    fn atomic_segment_views_count_against_the_binding_limit() {
        let mut c = caps(1 << 20, false);
        c.limits.max_storage_buffers_per_shader_stage = 8;
        let config = HeapConfig::new(4 << 20)
            .segment_binding(SegmentBinding::Separate)
            .max_separate_bindings(8);
        assert!(HeapLayout::plan(&config.clone().strategy(Strategy::OuroPS), &c).is_ok());
        assert!(matches!(
            HeapLayout::plan(&config.strategy(Strategy::OuroPVA), &c),
            Err(Error::LimitTooLow { needed: 9, .. })
        ));
    }

    #[test]
    fn growable_heap_reserves_segments_of_the_initial_size() {
        let c = HeapConfig::new(64 << 20).max_size(1 << 30);
        let l = HeapLayout::plan(&c, &caps(128 << 20, true)).unwrap();
        assert!(l.growable);
        assert_eq!(l.segment_sizes, vec![64 << 20; 16]);
        assert_eq!(l.initial_segments, 1);
        assert_eq!(l.initial_bytes(), 64 << 20);
        assert!(l.config_wgsl().contains("#define GPU_HEAP_GROWABLE"));
        // Bitmaps are sized for the maximum.
        assert_eq!(l.walk.unwrap().items, (1 << 30) / 256);
        // Not growable: no define, everything committed.
        let fixed = HeapLayout::plan(&HeapConfig::new(64 << 20), &caps(128 << 20, true)).unwrap();
        assert!(!fixed.growable);
        assert_eq!(fixed.initial_segments, fixed.segment_count());
        assert!(!fixed.config_wgsl().contains("GPU_HEAP_GROWABLE"));
    }

    #[test]
    fn growable_ouroboros_plans_its_tables_for_the_maximum() {
        for strategy in [
            Strategy::OuroPS,
            Strategy::OuroPVA,
            Strategy::OuroPVL,
            Strategy::OuroCS,
            Strategy::OuroCVA,
            Strategy::OuroCVL,
        ] {
            let c = HeapConfig::new(2 << 20)
                .max_size(8 << 20)
                .strategy(strategy);
            let l = HeapLayout::plan(&c, &caps(128 << 20, true)).unwrap();
            let fixed = HeapLayout::plan(
                &HeapConfig::new(8 << 20).strategy(strategy),
                &caps(128 << 20, true),
            )
            .unwrap();
            let (o, f) = (l.ouro.as_ref().unwrap(), fixed.ouro.as_ref().unwrap());
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

    #[test]
    fn growable_stride_doubles_to_fit_the_bindings() {
        // 64 MiB to 8 GiB would be 128 segments; the device binds at most 63.
        let c = HeapConfig::new(64 << 20).max_size(8 << 30);
        let l = HeapLayout::plan(&c, &caps((2 << 30) - 4, true)).unwrap();
        assert_eq!(l.segment_sizes, vec![256 << 20; 32]);
        assert_eq!(l.initial_segments, 1);
    }

    #[test]
    fn bad_input_is_typed() {
        let c = caps(128 << 20, false);
        assert!(matches!(
            HeapLayout::plan(&HeapConfig::new(0), &c),
            Err(Error::ZeroSize)
        ));
        assert!(matches!(
            HeapLayout::plan(&HeapConfig::new(1 << 40), &c),
            Err(Error::TooLarge { .. })
        ));
        assert!(matches!(
            HeapLayout::plan(&HeapConfig::new(1 << 20).page_size(48), &c),
            Err(Error::InvalidConfig(_))
        ));
        assert!(matches!(
            HeapLayout::plan(
                &HeapConfig::new(512 << 20).segment_binding(SegmentBinding::BindingArray),
                &c
            ),
            Err(Error::MissingFeatures { .. })
        ));
        assert!(matches!(
            HeapLayout::plan(&HeapConfig::new(1 << 30), &c),
            Err(Error::TooLarge { .. })
        ));
    }
}
