//! Heap configuration: which allocator, and its parameters.

use std::time::Duration;

pub use crate::ouroboros::OuroborosParams;
pub use crate::random_walk::RandomWalkParams;
pub use crate::strategy::Strategy;
pub use crate::tbuddy::TBuddyParams;

/// How the heap's segments (storage buffers) are bound.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum SegmentBinding {
    /// One binding for a single segment; a binding array where the device has the features,
    /// separate bindings otherwise.
    #[default]
    Auto,
    /// `binding_array<HeapSegment, N>`: needs the binding-array features.
    BindingArray,
    /// One binding per segment, selected with a `switch`: works everywhere, up to
    /// [`HeapConfig::max_separate_bindings`] segments.
    Separate,
}

/// What the heap counts on the device (see [`HeapStats`](crate::HeapStats)).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "kebab-case"))]
#[non_exhaustive]
pub enum Statistics {
    /// Calls, failures by cause, live and peak bytes and allocations: about four global
    /// atomics per call, on four 128-byte lines of the statistics block.
    #[default]
    Full,
    /// Failures by cause only, counted on the failure path: a successful call costs
    /// nothing extra. Calls, live and peak counters read back as zero. For benchmarks and
    /// hot loops.
    FailuresOnly,
}

/// Everything that shapes a heap. Build with [`HeapConfig::new`] and the setters.
///
/// The strategy's own parameters are typed per family ([`RandomWalkParams`],
/// [`OuroborosParams`], [`TBuddyParams`]); a heap reads only its strategy's.
///
/// ```
/// use gpu_heap::{HeapConfig, RandomWalkParams, Strategy};
/// let config = HeapConfig::new(64 << 20)
///     .strategy(Strategy::RwBm)
///     .random_walk(RandomWalkParams { page_size: 64, ..Default::default() });
/// assert_eq!(config.random_walk.page_size, 64);
/// ```
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct HeapConfig {
    /// Bytes of user memory (rounded up to 16); with [`Self::max_size`] above it, the
    /// initial committed size (rounded up to whole segments).
    pub size: u64,
    /// The most bytes the heap may grow to ([`crate::GpuHeap::grow`]); `None` (the default)
    /// or a value at or below `size`: the heap cannot grow.
    pub max_size: Option<u64>,
    /// The allocator.
    pub strategy: Strategy,
    /// Parameters of the random walks (RW, RW-BM, CoRW, RW_malloc).
    pub random_walk: RandomWalkParams,
    /// Parameters of the Ouroboros strategies.
    pub ouroboros: OuroborosParams,
    /// Parameters of the tree buddy.
    pub tbuddy: TBuddyParams,
    /// The bind group index the heap's bindings are declared at in WGSL.
    pub bind_group_index: u32,
    /// How segments are bound.
    pub segment_binding: SegmentBinding,
    /// Caps the segment size below the device's limit (rounded down to a power of two).
    pub max_segment_size: Option<u64>,
    /// The most segments [`SegmentBinding::Separate`] may use, leaving the rest of the
    /// device's storage-buffer bindings to the user.
    pub max_separate_bindings: u32,
    /// How long the heap's own GPU work (init, statistics readback) may take.
    pub watchdog: Duration,
    /// What the device counts.
    pub statistics: Statistics,
    /// Instrumented build: random walks count their steps (`#define GPU_HEAP_COUNT_STEPS`),
    /// readable with [`crate::GpuHeap::walk_steps`].
    pub count_steps: bool,
    /// Create the heap even on an adapter known to break the allocators
    /// ([`crate::Error::UnsupportedAdapter`] says which and why).
    pub allow_unsupported_adapter: bool,
}

impl HeapConfig {
    /// Defaults: [`Strategy::UAlloc`], which serves every size from 1 byte to a segment,
    /// at bind group 0.
    pub fn new(size: u64) -> Self {
        Self {
            size,
            max_size: None,
            strategy: Strategy::UAlloc,
            random_walk: RandomWalkParams::default(),
            ouroboros: OuroborosParams::default(),
            tbuddy: TBuddyParams::default(),
            bind_group_index: 0,
            segment_binding: SegmentBinding::Auto,
            max_segment_size: None,
            max_separate_bindings: 4,
            watchdog: Duration::from_secs(60),
            statistics: Statistics::Full,
            count_steps: false,
            allow_unsupported_adapter: false,
        }
    }

    /// Sets the heap's size in bytes (its initial size, if it can grow).
    pub fn size(mut self, bytes: u64) -> Self {
        self.size = bytes;
        self
    }

    /// Reserves handle space for up to `bytes`: the heap starts at `size` and grows by
    /// committing segments (see the README's section on growth).
    pub fn max_size(mut self, bytes: u64) -> Self {
        self.max_size = Some(bytes);
        self
    }

    /// Whether the heap can grow past its initial size.
    pub fn is_growable(&self) -> bool {
        self.max_size.is_some_and(|m| m > self.size)
    }

    /// Sets the allocator compiled into the shaders.
    pub fn strategy(mut self, strategy: Strategy) -> Self {
        self.strategy = strategy;
        self
    }

    /// Sets the random walks' page and unit sizes.
    pub fn random_walk(mut self, params: RandomWalkParams) -> Self {
        self.random_walk = params;
        self
    }

    /// Sets the Ouroboros chunk and page sizes and largest malloc.
    pub fn ouroboros(mut self, params: OuroborosParams) -> Self {
        self.ouroboros = params;
        self
    }

    /// Sets the tree buddy's leaf size.
    pub fn tbuddy(mut self, params: TBuddyParams) -> Self {
        self.tbuddy = params;
        self
    }

    /// Sets the bind group index the heap's bindings are declared at (below `max_bind_groups`).
    pub fn bind_group_index(mut self, index: u32) -> Self {
        self.bind_group_index = index;
        self
    }

    /// Sets how segments are bound: one binding array, or a binding each.
    pub fn segment_binding(mut self, binding: SegmentBinding) -> Self {
        self.segment_binding = binding;
        self
    }

    /// Caps the segment size below the device's storage binding limit.
    pub fn max_segment_size(mut self, bytes: u64) -> Self {
        self.max_segment_size = Some(bytes);
        self
    }

    /// Sets the most segments bound separately, leaving the device's other storage bindings to you.
    pub fn max_separate_bindings(mut self, count: u32) -> Self {
        self.max_separate_bindings = count;
        self
    }

    /// Sets how long the heap's own GPU work may take before it counts as hung (not zero).
    pub fn watchdog(mut self, timeout: Duration) -> Self {
        self.watchdog = timeout;
        self
    }

    /// Sets what the device counts.
    pub fn statistics(mut self, statistics: Statistics) -> Self {
        self.statistics = statistics;
        self
    }

    /// Builds the instrumented heap whose random walks count their steps ([`crate::GpuHeap::walk_steps`]).
    pub fn count_steps(mut self, on: bool) -> Self {
        self.count_steps = on;
        self
    }

    /// Creates the heap on an adapter known to break the allocators, instead of returning
    /// [`crate::Error::UnsupportedAdapter`]: only to reproduce what that adapter does.
    pub fn allow_unsupported_adapter(mut self, allow: bool) -> Self {
        self.allow_unsupported_adapter = allow;
        self
    }
}

#[cfg(all(test, feature = "serde"))]
mod tests {
    use super::*;

    #[test]
    fn serde_names_are_the_shared_names() {
        for &s in Strategy::ALL {
            let json = serde_json::to_string(&s).unwrap();
            assert_eq!(json, format!("\"{}\"", s.name()));
            assert_eq!(serde_json::from_str::<Strategy>(&json).unwrap(), s);
            assert_eq!(s.name().parse::<Strategy>().unwrap(), s);
        }
    }
}
