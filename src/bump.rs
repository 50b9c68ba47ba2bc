//! The bump family: one atomicAdd per malloc, no reuse (`shaders/bump.wgsl`). Its plan is
//! the largest malloc; its only state is the head in the strategy's scalar words.

use crate::error::{Error, Result};
use crate::layout::{STRATEGY_SCALAR_WORDS, UNIT_BYTES};
use crate::meta::STAT_WORDS;
use crate::strategy::{PlanInput, StrategyPlan};

/// Largest bump allocation (see bump.wgsl: keeps its head from wrapping).
const BUMP_MAX_ALLOC: u64 = 64 << 10;
/// Largest bump heap in units (see bump.wgsl).
const BUMP_MAX_UNITS: u64 = 1 << 31;

/// A bump heap's plan.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct BumpPlan {
    max_alloc: u64,
}

impl BumpPlan {
    pub fn plan(input: &PlanInput) -> Result<BumpPlan> {
        if input.bytes / UNIT_BYTES > BUMP_MAX_UNITS {
            return Err(Error::TooLarge {
                requested: input.config.size,
                reason: "the bump allocator holds at most 32 GiB".into(),
            });
        }
        Ok(BumpPlan {
            max_alloc: BUMP_MAX_ALLOC.min(input.stride).min(input.bytes),
        })
    }
}

impl StrategyPlan for BumpPlan {
    fn entry_file(&self) -> &'static str {
        "bump.wgsl"
    }

    fn max_alloc(&self) -> u64 {
        self.max_alloc
    }

    fn state_end_word(&self) -> u64 {
        STAT_WORDS + STRATEGY_SCALAR_WORDS
    }

    /// The head: the units handed out so far, in the first scalar word.
    fn wgsl(&self, s: &mut String) {
        s.push_str(&format!("const BUMP_HEAD: u32 = {STAT_WORDS}u;\n"));
    }

    fn init_invocations(&self) -> u32 {
        0
    }

    fn item_units(&self) -> u64 {
        1
    }

    fn trim_check_invocations(&self, _: u64, _: u64) -> u32 {
        1
    }

    /// Blocks do not cross segments.
    fn capacity_for(&self, size: u32, segment_sizes: &[u64]) -> u64 {
        let units = (size as u64).div_ceil(UNIT_BYTES).max(1);
        segment_sizes.iter().map(|s| s / UNIT_BYTES / units).sum()
    }

    fn granted_bytes(&self, size: u32) -> u64 {
        (size as u64).div_ceil(UNIT_BYTES) * UNIT_BYTES
    }
}
