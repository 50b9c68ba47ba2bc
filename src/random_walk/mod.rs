//! The random-walk family (Pham & Tu): host-side planning of RW, RW-BM, CoRW and RW_malloc,
//! and the step instrumentation's readback (TAS and utilisation are in the tools crate).
//!
//! Geometry: RW, RW-BM and CoRW manage pages of [`RandomWalkParams::page_size`] bytes (one
//! page per malloc); RW keeps one u32 flag per page, RW-BM and CoRW one bit. RW_malloc manages
//! units of [`RandomWalkParams::unit_size`] bytes and hands out runs of them, with three bitmaps (used,
//! start, end). CoRW needs `wgpu::Features::SUBGROUP`; on a device without it the heap is
//! planned, and compiled, as RW-BM (same state and free), which [`crate::HeapLayout::compiled`]
//! reports. RW_malloc aggregates small requests within a subgroup where the feature exists
//! and walks per invocation elsewhere.

use std::fmt::Write as _;

use crate::error::{Error, Result};
use crate::layout::{STRATEGY_STATE, UNIT_BYTES};
use crate::meta::STAT_WORDS;
use crate::strategy::{PlanInput, StrategyPlan};
use crate::Strategy;

/// The random walks' parameters ([`crate::HeapConfig::random_walk`]).
///
/// ```
/// use gpu_heap::{HeapConfig, RandomWalkParams, Strategy};
/// let small_pages = HeapConfig::new(16 << 20)
///     .strategy(Strategy::RwBm)
///     .random_walk(RandomWalkParams { page_size: 64, ..Default::default() });
/// assert_eq!(small_pages.random_walk.unit_size, 16);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct RandomWalkParams {
    /// Page size in bytes of RW, RW-BM and CoRW: a power of two, at least 16, at most a
    /// segment. Also their largest malloc. Default 256.
    pub page_size: u32,
    /// RW_malloc's unit in bytes: a power of two, at least 16; sizes round up to it.
    /// Default 16.
    pub unit_size: u32,
}

impl Default for RandomWalkParams {
    fn default() -> Self {
        Self {
            page_size: 256,
            unit_size: 16,
        }
    }
}

/// heap_meta words of the walk's scalars: the rotor (which picks a malloc's first shard of
/// the free count: walk_home), then the instrumented build's 64-bit step and walk counters.
const WALK_ROTOR: u64 = STAT_WORDS;
pub(crate) const WALK_STEPS: u64 = STAT_WORDS + 8;
const WALK_WALKS: u64 = WALK_STEPS + 2;
/// The free count, where a strategy's state begins, in shards (walk.wgsl says why), each on
/// a 128-byte line of its own; the flags or bitmaps follow the shards.
const WALK_SHARD: u64 = STRATEGY_STATE;
const WALK_SHARD_STRIDE: u64 = 32;
const _: () = assert!(WALK_SHARD % WALK_SHARD_STRIDE == 0);
/// Shards of the page walks' free count. RW_malloc keeps one: its reservations are of many
/// units, all or none, and two of them holding parts of split shards could both fail
/// where one count lets one of them succeed.
const PAGE_WALK_SHARDS: u32 = 32;
// A malloc that finds its first shard short notes the others in a 32-bit mask.
const _: () = assert!(PAGE_WALK_SHARDS.is_power_of_two() && PAGE_WALK_SHARDS <= 32);
/// Largest RW_malloc request (also capped by the segment size).
const RW_MALLOC_MAX_ALLOC: u64 = 1 << 20;
/// Pages or units are counted in u32 with a wrap check (walk_take_from): below 2^31.
const MAX_ITEMS: u64 = 1 << 31;

/// The planned geometry of a random-walk heap.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct WalkGeometry {
    /// The strategy the shaders are compiled as (CoRW falls back to RW-BM).
    pub compiled: Strategy,
    /// Pages (RW, RW-BM, CoRW) or units (RW_malloc).
    pub items: u32,
    /// 16-byte heap units per page or unit (a power of two).
    pub item_units: u32,
    /// Words of each bitmap (RW-BM, CoRW, RW_malloc).
    pub bitmap_words: u32,
    /// Words of heap_meta after the shards of the free count: flags or bitmaps.
    pub state_words: u64,
    /// RW_malloc: bitmap words per segment (segments hold whole words).
    pub segment_words: u32,
    /// RW_malloc: largest request in units.
    pub max_items: u32,
    /// Subgroups exist: reservations and releases of the free count are made per subgroup,
    /// and RW_malloc aggregates small requests.
    pub subgroups: bool,
    /// Shards of the free count (a power of two, at most 32).
    pub shards: u32,
    /// Largest malloc in bytes.
    pub max_alloc: u64,
}

/// Plans a random-walk heap of `bytes` in segments of `stride` bytes.
pub(crate) fn plan(input: &PlanInput) -> Result<WalkGeometry> {
    let &PlanInput {
        config,
        caps,
        bytes,
        stride,
        segment_count: segments,
        ..
    } = input;
    let subgroups = caps.features.contains(wgpu::Features::SUBGROUP);
    let power_of_two = |what: &str, value: u64| {
        if !value.is_power_of_two() || value < UNIT_BYTES {
            return Err(Error::InvalidConfig(format!(
                "{what} must be a power of two of at least 16 bytes, not {value}"
            )));
        }
        if value > stride {
            return Err(Error::InvalidConfig(format!(
                "{what} {value} is larger than a segment ({stride} bytes)"
            )));
        }
        Ok(())
    };
    if config.strategy == Strategy::RwMalloc {
        let unit = config.random_walk.unit_size as u64;
        power_of_two("unit_size", unit)?;
        let units = bytes / unit;
        if units < 32 {
            return Err(Error::InvalidConfig(format!(
                "a heap of {bytes} bytes holds fewer than 32 units of {unit} bytes; \
                 use a larger heap or a smaller unit_size"
            )));
        }
        if units >= MAX_ITEMS {
            return Err(Error::TooLarge {
                requested: config.size,
                reason: format!(
                    "RW_malloc counts units in 31 bits: use a unit_size of at least {} bytes",
                    (bytes / MAX_ITEMS + 1).next_power_of_two()
                ),
            });
        }
        let segment_units = stride / unit;
        if segments > 1 && segment_units < 32 {
            return Err(Error::InvalidConfig(format!(
                "RW_malloc needs segments of at least 32 units ({} bytes); the segments are \
                 {stride} bytes",
                32 * unit
            )));
        }
        let words = units.div_ceil(32);
        let max_alloc = RW_MALLOC_MAX_ALLOC.min(stride).min(units * unit);
        let geometry = WalkGeometry {
            compiled: Strategy::RwMalloc,
            items: units as u32,
            item_units: (unit / UNIT_BYTES) as u32,
            bitmap_words: words as u32,
            state_words: 3 * words,
            segment_words: if segments > 1 {
                (segment_units / 32) as u32
            } else {
                words as u32
            },
            max_items: (max_alloc / unit) as u32,
            subgroups,
            shards: 1,
            max_alloc,
        };
        return Ok(geometry);
    }
    let page = config.random_walk.page_size as u64;
    power_of_two("page_size", page)?;
    let pages = bytes / page;
    if pages == 0 {
        return Err(Error::InvalidConfig(format!(
            "a heap of {bytes} bytes holds no page of {page} bytes"
        )));
    }
    if pages >= MAX_ITEMS {
        return Err(Error::TooLarge {
            requested: config.size,
            reason: format!(
                "random walks count pages in 31 bits: use a page_size of at least {} bytes",
                (bytes / MAX_ITEMS + 1).next_power_of_two()
            ),
        });
    }
    let words = pages.div_ceil(32);
    let compiled = match config.strategy {
        Strategy::Corw if !subgroups => Strategy::RwBm,
        s => s,
    };
    let geometry = WalkGeometry {
        compiled,
        items: pages as u32,
        item_units: (page / UNIT_BYTES) as u32,
        bitmap_words: words as u32,
        // RW: a flag per page. RW-BM and CoRW: the bitmap and its summary (a bit per word).
        state_words: if compiled == Strategy::Rw {
            pages
        } else {
            words + words.div_ceil(32)
        },
        segment_words: 0,
        max_items: 1,
        subgroups,
        shards: PAGE_WALK_SHARDS,
        max_alloc: page,
    };
    Ok(geometry)
}

impl WalkGeometry {
    /// The heap_meta word where the flags or bitmaps start, after the shards.
    fn state_start(&self) -> u64 {
        WALK_SHARD + self.shards as u64 * WALK_SHARD_STRIDE
    }
}

impl StrategyPlan for WalkGeometry {
    fn entry_file(&self) -> &'static str {
        match self.compiled {
            Strategy::Rw => "random_walk/rw.wgsl",
            Strategy::Corw => "random_walk/corw.wgsl",
            Strategy::RwMalloc => "random_walk/rw_malloc.wgsl",
            _ => "random_walk/rw_bm.wgsl",
        }
    }

    fn compiled(&self, _: Strategy) -> Strategy {
        self.compiled
    }

    fn max_alloc(&self) -> u64 {
        self.max_alloc
    }

    fn state_end_word(&self) -> u64 {
        self.state_start() + self.state_words
    }

    fn uses_subgroups(&self) -> bool {
        self.subgroups
    }

    fn wgsl(&self, s: &mut String) {
        if self.subgroups {
            let _ = writeln!(s, "#define GPU_HEAP_SUBGROUPS");
        }
        let scalars = [
            ("WALK_ROTOR", WALK_ROTOR),
            ("WALK_STEPS", WALK_STEPS),
            ("WALK_WALKS", WALK_WALKS),
            ("WALK_SHARD", WALK_SHARD),
            ("WALK_SHARDS", self.shards as u64),
            ("WALK_SHARD_STRIDE", WALK_SHARD_STRIDE),
            ("WALK_STATE", self.state_start()),
        ];
        let shift = self.item_units.trailing_zeros() as u64;
        let items = [
            ("WALK_ITEMS", self.items as u64),
            ("WALK_ITEM_SHIFT", shift),
        ];
        for (name, value) in scalars.into_iter().chain(items) {
            let _ = writeln!(s, "const {name}: u32 = {value}u;");
        }
        let constants = if self.compiled == Strategy::RwMalloc {
            [
                ("RWM_UNITS", self.items as u64),
                ("RWM_UNIT_SHIFT", shift),
                ("RWM_WORDS", self.bitmap_words as u64),
                ("RWM_SEGMENT_WORDS", self.segment_words as u64),
                ("RWM_MAX_UNITS", self.max_items as u64),
            ]
        } else {
            [
                ("RWBM_PAGES", self.items as u64),
                ("RWBM_PAGE_UNITS", self.item_units as u64),
                ("RWBM_PAGE_SHIFT", shift),
                ("RWBM_BITMAP_WORDS", self.bitmap_words as u64),
                ("RWBM_SUMMARY_WORDS", self.bitmap_words.div_ceil(32) as u64),
            ]
        };
        for (name, value) in constants {
            let _ = writeln!(s, "const {name}: u32 = {value}u;");
        }
    }

    /// One invocation clears the walk state's scalars (the bitmaps start zeroed).
    fn init_invocations(&self) -> u32 {
        1
    }

    fn item_units(&self) -> u64 {
        self.item_units as u64
    }

    /// One invocation per bitmap word (32 pages or units).
    fn trim_check_invocations(&self, to_units: u64, from_units: u64) -> u32 {
        let unit = self.item_units as u64;
        let (to, from) = (to_units / unit, from_units / unit);
        (from.div_ceil(32) - to / 32).max(1) as u32
    }

    fn capacity_for(&self, size: u32, segment_sizes: &[u64]) -> u64 {
        if self.compiled != Strategy::RwMalloc {
            return self.items as u64;
        }
        // Runs do not cross segments; the last segment may be shorter.
        let unit = self.item_units as u64 * UNIT_BYTES;
        let n = (size as u64).div_ceil(unit).max(1);
        let mut left = self.items as u64;
        segment_sizes
            .iter()
            .map(|s| {
                let here = (s / unit).min(left);
                left -= here;
                here / n
            })
            .sum()
    }

    fn granted_bytes(&self, size: u32) -> u64 {
        let unit = self.item_units as u64 * UNIT_BYTES;
        if self.compiled != Strategy::RwMalloc {
            return unit;
        }
        (size as u64).div_ceil(unit).max(1) * unit
    }
}

/// Steps counted by an instrumented heap ([`crate::HeapConfig::count_steps`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct WalkSteps {
    /// Steps of all walks since the last reset.
    pub steps: u64,
    /// Walks (mallocs that held a reservation) since the last reset.
    pub walks: u64,
}

impl WalkSteps {
    /// Average steps per walk (TAS over every walk so far).
    pub fn average(&self) -> f64 {
        if self.walks == 0 {
            0.0
        } else {
            self.steps as f64 / self.walks as f64
        }
    }
}

impl crate::GpuHeap {
    /// The step counters of an instrumented random-walk heap; `None` for heaps built
    /// without [`crate::HeapConfig::count_steps`] or with another strategy.
    pub fn walk_steps(&self) -> Result<Option<WalkSteps>> {
        if !self.config().count_steps || self.layout().walk().is_none() {
            return Ok(None);
        }
        let w = self.read_meta(WALK_STEPS, 4)?;
        Ok(Some(WalkSteps {
            steps: w[0] as u64 | (w[1] as u64) << 32,
            walks: w[2] as u64 | (w[3] as u64) << 32,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layout::{DeviceCaps, HeapLayout};
    use crate::HeapConfig;

    fn caps(features: wgpu::Features) -> DeviceCaps {
        DeviceCaps {
            features,
            limits: wgpu::Limits {
                max_storage_buffer_binding_size: 128 << 20,
                max_buffer_size: 1 << 30,
                max_storage_buffers_per_shader_stage: 16,
                ..wgpu::Limits::default()
            },
            backend: None,
            unsupported: None,
        }
    }

    #[test]
    fn corw_without_subgroups_is_planned_as_rw_bm() {
        let config = HeapConfig::new(64 << 20).strategy(Strategy::Corw);
        let bare = HeapLayout::plan(&config, &caps(wgpu::Features::empty())).unwrap();
        assert_eq!(bare.strategy, Strategy::Corw);
        assert_eq!(bare.compiled(), Strategy::RwBm);
        assert!(bare.config_wgsl().contains("#define GPU_HEAP_RW_BM\n"));
        assert!(!bare.config_wgsl().contains("GPU_HEAP_CORW"));
        let full = HeapLayout::plan(&config, &caps(wgpu::Features::SUBGROUP)).unwrap();
        assert_eq!(full.compiled(), Strategy::Corw);
        assert!(full.config_wgsl().contains("#define GPU_HEAP_CORW\n"));
        // Same state either way: a heap planned on one can be read as the other.
        assert_eq!(bare.meta_words, full.meta_words);
    }

    #[test]
    fn rw_malloc_geometry_and_validation() {
        let c = caps(wgpu::Features::SUBGROUP);
        let l =
            HeapLayout::plan(&HeapConfig::new(512 << 20).strategy(Strategy::RwMalloc), &c).unwrap();
        assert_eq!(l.max_alloc, 1 << 20);
        assert_eq!(l.granted_bytes(24), 32);
        assert_eq!(l.granted_bytes(1000), 1008);
        // Four 128 MiB segments; runs do not cross them.
        assert_eq!(
            l.capacity_for(3 << 20 >> 2),
            4 * ((128 << 20) / (768 << 10))
        );
        assert!(l.config_wgsl().contains("#define GPU_HEAP_SUBGROUPS"));
        let bare = HeapLayout::plan(
            &HeapConfig::new(1 << 20).strategy(Strategy::RwMalloc),
            &caps(wgpu::Features::empty()),
        )
        .unwrap();
        assert!(!bare.config_wgsl().contains("GPU_HEAP_SUBGROUPS"));
        // Every walk reserves and releases per subgroup where subgroups exist.
        let rw_bm =
            HeapLayout::plan(&HeapConfig::new(1 << 20).strategy(Strategy::RwBm), &c).unwrap();
        assert!(rw_bm.config_wgsl().contains("#define GPU_HEAP_SUBGROUPS"));
        let bad = |config: HeapConfig| {
            matches!(
                HeapLayout::plan(&config.strategy(Strategy::RwMalloc), &c),
                Err(Error::InvalidConfig(_))
            )
        };
        let units = |unit_size| RandomWalkParams {
            unit_size,
            ..Default::default()
        };
        assert!(bad(HeapConfig::new(1 << 20).random_walk(units(48))));
        assert!(bad(HeapConfig::new(1 << 20).random_walk(units(8))));
        assert!(bad(HeapConfig::new(256).random_walk(units(16))));
        // Four segments of 16 units: a segment must hold whole bitmap words.
        assert!(bad(HeapConfig::new(256 << 10)
            .random_walk(units(4096))
            .max_segment_size(64 << 10)));
    }

    #[test]
    fn rw_keeps_a_flag_per_page() {
        let c = caps(wgpu::Features::empty());
        let rw = HeapLayout::plan(&HeapConfig::new(1 << 20).strategy(Strategy::Rw), &c).unwrap();
        let bm = HeapLayout::plan(&HeapConfig::new(1 << 20).strategy(Strategy::RwBm), &c).unwrap();
        assert_eq!(rw.meta_words - bm.meta_words, 4096 - 128 - 4);
        assert_eq!(rw.capacity_for(256), 4096);
        assert!(rw.config_wgsl().contains("#define GPU_HEAP_RW\n"));
    }
}
