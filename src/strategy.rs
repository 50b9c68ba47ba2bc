//! The strategy seam: the registry of strategies, their families, and what the host asks of
//! a family's plan.
//!
//! Every strategy is one line of the registry below (its name, the `#define` that selects it
//! in the generated WGSL, and its family). A family is one module that plans its geometry
//! for a heap and answers the [`StrategyPlan`] queries: its WGSL entry file, constants and
//! defines, heap_meta words, init and trim-check invocation counts, capacity and item size.
//! Nothing else names strategies by hand: the host code asks the plan, and tests, the
//! conformance suite, the benchmarks and the CLI iterate [`Strategy::ALL`].
//!
//! Adding a strategy of an existing family: a registry line, its WGSL entry file, and the
//! family's handling of it. Adding a family: its module (implementing [`StrategyPlan`]), a
//! [`Family`] and a [`FamilyPlan`] variant, and one arm of [`FamilyPlan::plan`]. The recipe
//! is in docs/architecture.md.

use std::fmt;
use std::str::FromStr;

use crate::bump::BumpPlan;
use crate::config::HeapConfig;
use crate::error::Result;
use crate::layout::DeviceCaps;
use crate::ouroboros::{OuroGeometry, OuroPlanInput, QueueKind};
use crate::random_walk::WalkGeometry;
use crate::tbuddy::TBuddyPlan;
use crate::ualloc::UAllocPlan;

/// The strategy families: the host-side modules that plan heaps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Family {
    /// `src/bump.rs`, `shaders/bump.wgsl`.
    Bump,
    /// `src/random_walk/`, `shaders/random_walk/`.
    RandomWalk,
    /// `src/ouroboros/`, `shaders/ouroboros/`: page- or chunk-based, on standard or
    /// virtualized queues.
    Ouroboros { chunk_based: bool, queue: QueueKind },
    /// `src/tbuddy.rs`, `shaders/tbuddy/`.
    TBuddy,
    /// `src/ualloc.rs`, `shaders/ualloc/` (over the tree buddy).
    UAlloc,
}

macro_rules! registry {
    ($($(#[$doc:meta])* $variant:ident = $name:literal, $define:literal, $family:expr;)*) => {
        /// The allocator compiled into the heap's shaders; the README says which to choose.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        #[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
        #[non_exhaustive]
        pub enum Strategy {
            $($(#[$doc])* #[cfg_attr(feature = "serde", serde(rename = $name))] $variant,)*
        }

        impl Strategy {
            /// Every strategy, in the order the CLI lists them.
            pub const ALL: &'static [Strategy] = &[$(Strategy::$variant),*];

            /// The shared name (`bump`, `rw-bm`, ...).
            pub fn name(self) -> &'static str {
                match self {
                    $(Strategy::$variant => $name,)*
                }
            }

            /// The `#define` that selects this strategy in the generated WGSL.
            pub(crate) fn define(self) -> &'static str {
                match self {
                    $(Strategy::$variant => $define,)*
                }
            }

            /// The family that plans it.
            pub(crate) fn family(self) -> Family {
                match self {
                    $(Strategy::$variant => $family,)*
                }
            }
        }
    };
}

const fn ouroboros(chunk_based: bool, queue: QueueKind) -> Family {
    Family::Ouroboros { chunk_based, queue }
}

registry! {
    /// Bump allocator: one atomicAdd per malloc, no reuse. The speed reference.
    Bump = "bump", "GPU_HEAP_BUMP", Family::Bump;
    /// Random walk over a bitmap of fixed-size pages (Pham & Tu, section 4.1).
    RwBm = "rw-bm", "GPU_HEAP_RW_BM", Family::RandomWalk;
    /// Basic random walk: one used flag per page (Pham & Tu, section 3).
    Rw = "rw", "GPU_HEAP_RW", Family::RandomWalk;
    /// Collaborative random walk over the RW-BM bitmap, pages shared within a subgroup
    /// (Pham & Tu, section 4.2); RW-BM on devices without subgroups.
    Corw = "corw", "GPU_HEAP_CORW", Family::RandomWalk;
    /// Runs of consecutive free units of any size (Pham & Tu, section 4.3).
    RwMalloc = "rw-malloc", "GPU_HEAP_RW_MALLOC", Family::RandomWalk;
    /// Ouroboros, page-based, standard index queues (Winter et al., ICS 2020, section 4.1).
    OuroPS = "ouro-p-s", "GPU_HEAP_OURO_P_S", ouroboros(false, QueueKind::Standard);
    /// Ouroboros, page-based, virtualized array-hierarchy queues (section 5.1).
    OuroPVA = "ouro-p-va", "GPU_HEAP_OURO_P_VA", ouroboros(false, QueueKind::VirtualArray);
    /// Ouroboros, page-based, virtualized linked-chunk queues (section 5.2).
    OuroPVL = "ouro-p-vl", "GPU_HEAP_OURO_P_VL", ouroboros(false, QueueKind::VirtualLinked);
    /// Ouroboros, chunk-based, standard queues of chunks with free pages (section 4.2).
    OuroCS = "ouro-c-s", "GPU_HEAP_OURO_C_S", ouroboros(true, QueueKind::Standard);
    /// Ouroboros, chunk-based, chunk tokens on virtualized array-hierarchy queues
    /// (sections 4.2 and 5.1).
    OuroCVA = "ouro-c-va", "GPU_HEAP_OURO_C_VA", ouroboros(true, QueueKind::VirtualArray);
    /// Ouroboros, chunk-based, chunk tokens on virtualized linked-chunk queues
    /// (sections 4.2 and 5.2).
    OuroCVL = "ouro-c-vl", "GPU_HEAP_OURO_C_VL", ouroboros(true, QueueKind::VirtualLinked);
    /// Tree buddy: power-of-two blocks from a leaf (`leaf_size`) to a segment, split and
    /// merged on a static tree, one bulk semaphore per order (Gelado & Garland, section 4.1).
    TBuddy = "tbuddy", "GPU_HEAP_TBUDDY", Family::TBuddy;
    /// UAlloc over the tree buddy: power-of-two classes of 16 B to 2 KiB in bins of 4-64
    /// KiB, one bulk semaphore per class, larger blocks from the tree buddy up to a segment
    /// (Gelado & Garland, section 4). Every size from 1 byte.
    UAlloc = "ualloc", "GPU_HEAP_UALLOC", Family::UAlloc;
}

impl Strategy {
    /// Whether this is one of the Ouroboros strategies (chunk manager and queues).
    pub fn is_ouroboros(self) -> bool {
        matches!(self.family(), Family::Ouroboros { .. })
    }

    /// Whether this is one of the random walks (RW, RW-BM, CoRW, RW_malloc), whose
    /// instrumented build counts steps ([`HeapConfig::count_steps`]).
    pub fn is_random_walk(self) -> bool {
        self.family() == Family::RandomWalk
    }

    /// Whether this is a chunk-based Ouroboros strategy (queues of chunk tokens).
    pub fn is_chunk_based_ouroboros(self) -> bool {
        matches!(
            self.family(),
            Family::Ouroboros {
                chunk_based: true,
                ..
            }
        )
    }

    /// Whether this is a page-based Ouroboros strategy (queues of pages).
    pub fn is_page_based_ouroboros(self) -> bool {
        matches!(
            self.family(),
            Family::Ouroboros {
                chunk_based: false,
                ..
            }
        )
    }

    /// Whether the heap's segments are bound as atomics (queues inside the heap).
    pub fn needs_atomic_segments(self) -> bool {
        match self.family() {
            Family::Ouroboros { queue, .. } => queue != QueueKind::Standard,
            _ => false,
        }
    }

    /// Whether `free` releases memory for reuse.
    pub fn reuses_memory(self) -> bool {
        self.family() != Family::Bump
    }

    /// Whether the strategy hands out pages of one configured size
    /// ([`RandomWalkParams::page_size`](crate::RandomWalkParams::page_size)), which is then also
    /// its largest malloc.
    pub fn has_fixed_pages(self) -> bool {
        self.family() == Family::RandomWalk && self != Strategy::RwMalloc
    }

    /// Which of [`HeapConfig`]'s per-family parameters the strategy reads.
    pub fn params(self) -> StrategyParams {
        match self.family() {
            Family::Bump => StrategyParams::None,
            Family::RandomWalk => StrategyParams::RandomWalk,
            Family::Ouroboros { .. } => StrategyParams::Ouroboros,
            Family::TBuddy => StrategyParams::TBuddy,
            Family::UAlloc => StrategyParams::None,
        }
    }

    /// How a heap filled with mallocs of one size compares with
    /// [`HeapLayout::capacity_for`](crate::HeapLayout::capacity_for).
    pub fn packing(self) -> Packing {
        match self.family() {
            Family::Bump => Packing::EndToEnd,
            Family::RandomWalk if self == Strategy::RwMalloc => Packing::Runs,
            _ => Packing::Exact,
        }
    }

    /// Whether memory freed by mallocs of one size can serve mallocs of another. False for
    /// page-based Ouroboros: a chunk stays with the size class that first took it (Winter et
    /// al., section 4.1), so a heap filled with small blocks and freed serves only that size.
    pub fn reuses_across_sizes(self) -> bool {
        self.reuses_memory() && !self.is_page_based_ouroboros()
    }

    /// Whether freeing an already freed block is detected and counted as an invalid free.
    pub fn detects_double_free(self) -> bool {
        self.family() != Family::Bump
    }

    /// Whether the strategy implements the growth hooks (`strategy_grow`,
    /// `strategy_trim_check`, `strategy_trim`; see shaders/alloc.wgsl), so that a heap with
    /// [`HeapConfig::max_size`] above its size can be planned for it. Every family does.
    pub fn supports_growth(self) -> bool {
        match self.family() {
            Family::Bump
            | Family::RandomWalk
            | Family::Ouroboros { .. }
            | Family::TBuddy
            | Family::UAlloc => true,
        }
    }
}

/// Which of [`HeapConfig`]'s per-family parameters a strategy reads ([`Strategy::params`]);
/// it ignores the others.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum StrategyParams {
    /// None: bump has no parameters.
    None,
    /// [`HeapConfig::random_walk`]: the page size (RW, RW-BM, CoRW) or the unit (RW_malloc).
    RandomWalk,
    /// [`HeapConfig::ouroboros`].
    Ouroboros,
    /// [`HeapConfig::tbuddy`].
    TBuddy,
}

/// How a strategy places blocks, and so how many mallocs of one size a heap holds
/// ([`Strategy::packing`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Packing {
    /// Blocks are fixed slots (pages, size classes, buddy blocks): a heap holds exactly
    /// [`HeapLayout::capacity_for`](crate::HeapLayout::capacity_for) of them.
    Exact,
    /// Blocks are placed end to end and never cross a segment: the block that would is
    /// abandoned, so a heap holds the capacity less at most one per segment boundary.
    EndToEnd,
    /// Blocks are runs of units wherever concurrent walks find room: the gaps they leave
    /// depend on the interleaving, so the capacity is an upper bound, not a promise.
    Runs,
}

impl fmt::Display for Strategy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Strategy {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Strategy::ALL
            .iter()
            .copied()
            .find(|st| st.name() == s)
            .ok_or_else(|| {
                let names: Vec<_> = Strategy::ALL.iter().map(|s| s.name()).collect();
                format!("unknown strategy \"{s}\"; known: {}", names.join(", "))
            })
    }
}

/// What the host asks of a family's plan for one heap.
pub(crate) trait StrategyPlan {
    /// The WGSL file that provides `strategy_malloc`, `strategy_free`, `strategy_init` and
    /// the growth hooks, as a library path (`alloc.wgsl` includes it).
    fn entry_file(&self) -> &'static str;

    /// The strategy the shaders are compiled as (CoRW falls back to RW-BM without subgroups).
    fn compiled(&self, configured: Strategy) -> Strategy {
        configured
    }

    /// Largest malloc in bytes.
    fn max_alloc(&self) -> u64;

    /// The first heap_meta word after the statistics and the strategy's state.
    fn state_end_word(&self) -> u64;

    /// The strategy's defines and constants for `generated/config.wgsl`.
    fn wgsl(&self, s: &mut String);

    /// Invocations of the strategy's init pass (`STRATEGY_INIT_INVOCATIONS`).
    fn init_invocations(&self) -> u32;

    /// 16-byte units of the strategy's free count (a page or unit; a chunk for Ouroboros).
    fn item_units(&self) -> u64;

    /// Invocations of the trim check between `to_units` and `from_units` committed units.
    fn trim_check_invocations(&self, to_units: u64, from_units: u64) -> u32;

    /// How many allocations of `size` bytes fit in an empty heap of these segments.
    fn capacity_for(&self, size: u32, segment_sizes: &[u64]) -> u64;

    /// Bytes a malloc of `size` takes from the heap.
    fn granted_bytes(&self, size: u32) -> u64;

    /// Chunks left free for queue chunks (`OURO_QUEUE_RESERVE`); 0 but for Ouroboros.
    fn queue_reserve_chunks(&self) -> u64 {
        0
    }

    /// Whether the shaders use subgroup operations (`GPU_HEAP_SUBGROUPS`): in WebGPU, the
    /// `subgroups` feature.
    fn uses_subgroups(&self) -> bool {
        false
    }

    /// Whether the shaders rely on user memory they have not handed out since the heap was
    /// made being zero, so that [`GpuHeap::reset`](crate::GpuHeap::reset) must clear the
    /// segments as well as the metadata (wgpu zero-fills new buffers).
    fn reset_clears_segments(&self) -> bool {
        false
    }
}

/// A family's plan for one heap.
#[derive(Clone, Debug)]
pub(crate) enum FamilyPlan {
    Bump(BumpPlan),
    RandomWalk(WalkGeometry),
    Ouroboros(OuroGeometry),
    TBuddy(TBuddyPlan),
    UAlloc(UAllocPlan),
}

/// What every family's planning gets: the configuration, the device, and the segments.
pub(crate) struct PlanInput<'a> {
    pub config: &'a HeapConfig,
    pub caps: &'a DeviceCaps,
    /// User-memory bytes (the reserved maximum of a heap that can grow).
    pub bytes: u64,
    /// Bytes per (full) segment.
    pub stride: u64,
    pub segment_count: u64,
    /// The largest storage binding (and buffer) the device allows.
    pub max_binding: u64,
}

impl FamilyPlan {
    /// Plans the configured strategy's family.
    pub fn plan(input: &PlanInput) -> Result<FamilyPlan> {
        Ok(match input.config.strategy.family() {
            Family::Bump => FamilyPlan::Bump(BumpPlan::plan(input)?),
            Family::RandomWalk => FamilyPlan::RandomWalk(crate::random_walk::plan(input)?),
            Family::Ouroboros { chunk_based, queue } => {
                FamilyPlan::Ouroboros(OuroGeometry::plan(&OuroPlanInput {
                    params: input.config.ouroboros,
                    bytes: input.bytes,
                    segment_stride: input.stride,
                    max_binding: input.max_binding,
                    chunk_based,
                    queue_kind: queue,
                    subgroups: input.caps.features.contains(wgpu::Features::SUBGROUP),
                })?)
            }
            Family::TBuddy => FamilyPlan::TBuddy(TBuddyPlan::plan(input)?),
            Family::UAlloc => FamilyPlan::UAlloc(UAllocPlan::plan(input)?),
        })
    }

    /// The plan behind the seam.
    pub fn get(&self) -> &dyn StrategyPlan {
        match self {
            FamilyPlan::Bump(p) => p,
            FamilyPlan::RandomWalk(p) => p,
            FamilyPlan::Ouroboros(p) => p,
            FamilyPlan::TBuddy(p) => p,
            FamilyPlan::UAlloc(p) => p,
        }
    }
}
