//! The tree buddy family (Gelado & Garland, PPoPP 2019, section 4.1; `shaders/tbuddy/`):
//! power-of-two blocks from one leaf ([`TBuddyParams::leaf_size`] bytes) up to a segment,
//! split on demand and merged with their buddies when a larger block is wanted, one bulk
//! semaphore per order counting the available blocks.
//!
//! Geometry. The heap is `leaves` leaves; a block of order `n` is `2^n` leaves at a multiple
//! of `2^n` leaves, node `v` of its level. The largest order is the largest block that fits
//! in a segment and in the heap, so no block crosses a segment. The leaves past the last
//! whole top-order block are covered by smaller blocks (the binary digits of the remainder);
//! nodes that reach past the heap's end do not exist, so such blocks never merge.
//!
//! heap_meta after the scalar words (all sized for the reserved maximum), with nodes
//! numbered as in an implicit binary tree over `2^B >= leaves` leaves (node `v` of order
//! `n` is tree index `2^(B - n) + v`), so that no per-order table is needed:
//! - two words per order: the order's bulk semaphore (its count is the available blocks);
//! - the allocated bitmap: a bit per tree index, set while the node is a live allocation
//!   (free reads it to find a block's order and to reject double frees);
//! - the available tree: layer 0 has a bit per tree index, set while the node is
//!   available; bit `i` of layer `j + 1` says that word `i` of layer `j` may be non-zero. An
//!   order's indices stay a contiguous power-of-two range in every layer, down to a part of
//!   one word, where its descent starts (the paper's "partial" nodes, kept per order).

use std::fmt::Write as _;

use crate::error::{Error, Result};
use crate::heap::GpuHeap;
use crate::layout::{STRATEGY_STATE, UNIT_BYTES};
use crate::meta::STAT_WORDS;
use crate::ouroboros::shared::BSEM_R_BITS;
use crate::strategy::{FamilyPlan, PlanInput, StrategyPlan};
use crate::summary_bitmap::{layer_base_wgsl, plan_layers, Layers};

/// heap_meta scalars: the free leaves not reserved by a malloc in flight, and the mallocs
/// that failed for contention by cause.
const TB_FREE: u64 = STAT_WORDS;
const TB_CLAIM_FAILURES: u64 = STAT_WORDS + 1;
const TB_WAIT_FAILURES: u64 = STAT_WORDS + 2;
pub(crate) const TB_MERGE_FAILURES: u64 = STAT_WORDS + 3;
/// Leaves are counted in u32 node indices.
const MAX_LEAVES: u64 = 1 << 31;
/// Blocks are at most 2 GiB: sizes are u32.
const MAX_BLOCK_BYTES: u64 = 1 << 31;

/// The tree buddy's parameters ([`crate::HeapConfig::tbuddy`]).
///
/// ```
/// use gpu_heap::{HeapConfig, Strategy, TBuddyParams};
/// let config = HeapConfig::new(64 << 20)
///     .strategy(Strategy::TBuddy)
///     .tbuddy(TBuddyParams { leaf_size: 4096 });
/// assert_eq!(config.tbuddy.leaf_size, 4096);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct TBuddyParams {
    /// The leaf in bytes, the smallest block: a power of two, at least 16, at most a
    /// segment. Default 256.
    pub leaf_size: u32,
}

impl Default for TBuddyParams {
    fn default() -> Self {
        Self { leaf_size: 256 }
    }
}

/// A tree buddy heap's plan.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct TBuddyPlan {
    /// 16-byte units per leaf (a power of two).
    leaf_units: u64,
    leaves: u64,
    max_order: u32,
    /// B: the implicit tree has `2^B` leaves.
    tree_shift: u32,
    /// First word of the semaphores (two per order).
    sem_base: u64,
    /// First word of the allocated bitmap.
    alloc_base: u64,
    /// First word of each layer of the available tree, layer 0 first.
    layer_bases: Vec<u64>,
    state_end: u64,
    /// Whether the device has subgroups: the frees of a subgroup count their blocks given
    /// back together (`GPU_HEAP_SUBGROUPS`).
    subgroups: bool,
}

impl TBuddyPlan {
    pub fn plan(input: &PlanInput) -> Result<TBuddyPlan> {
        Self::with_leaf(input, input.config.tbuddy.leaf_size as u64)
    }

    /// The plan with leaves of `leaf` bytes (UAlloc's bins), whatever the configuration says.
    pub fn with_leaf(input: &PlanInput, leaf: u64) -> Result<TBuddyPlan> {
        if !leaf.is_power_of_two() || leaf < UNIT_BYTES {
            return Err(Error::InvalidConfig(format!(
                "the tbuddy leaf_size must be a power of two of at least 16 bytes, not {leaf}"
            )));
        }
        if leaf > input.stride {
            return Err(Error::InvalidConfig(format!(
                "the tbuddy leaf_size {leaf} is larger than a segment ({} bytes)",
                input.stride
            )));
        }
        let leaves = input.bytes / leaf;
        if leaves == 0 || leaves > MAX_LEAVES {
            return Err(Error::TooLarge {
                requested: input.config.size,
                reason: format!("tbuddy holds 1 to 2^31 leaves of {leaf} bytes"),
            });
        }
        let top = input.stride.min(MAX_BLOCK_BYTES) / leaf;
        let max_order = top.min(1 << leaves.ilog2()).ilog2();
        let tree_shift = leaves.next_power_of_two().ilog2();
        let sem_base = STRATEGY_STATE;
        // Tree indices are below 2^(B + 1): a bit each in the allocated bitmap and in the
        // available tree, a summary bitmap whose largest range (order 0) is 2^B indices.
        let alloc_base = sem_base + 2 * (max_order as u64 + 1);
        let mut next = alloc_base + (2u64 << tree_shift).div_ceil(32);
        let layer_bases = plan_layers(&mut next, 2 << tree_shift, tree_shift);
        Ok(TBuddyPlan {
            leaf_units: leaf / UNIT_BYTES,
            leaves,
            max_order,
            tree_shift,
            sem_base,
            alloc_base,
            layer_bases,
            state_end: next,
            subgroups: input.caps.features.contains(wgpu::Features::SUBGROUP),
        })
    }

    /// The order of the smallest block that holds `size` bytes.
    fn order_for(&self, size: u32) -> u32 {
        let leaves = (size as u64).div_ceil(self.leaf_units * UNIT_BYTES).max(1);
        leaves.next_power_of_two().ilog2()
    }

    /// The blocks an empty heap of `leaves` leaves starts with, as (order, node): whole
    /// top-order blocks, then the remainder's binary digits (the same walk as `tb_cover`).
    fn initial_blocks(&self, leaves: u64) -> Vec<(u32, u64)> {
        let mut blocks = Vec::new();
        let mut at = 0u64;
        while at < leaves {
            let aligned = if at == 0 {
                self.max_order
            } else {
                at.trailing_zeros()
            };
            let n = aligned.min(self.max_order).min((leaves - at).ilog2());
            blocks.push((n, at >> n));
            at += 1 << n;
        }
        blocks
    }

    /// The tree buddy's constants for `generated/config.wgsl` (its summary bitmap's layers
    /// are bitmap 0 of `sb_layer_base`, which the caller generates).
    pub(crate) fn constants(&self, s: &mut String) {
        let constants = [
            ("TB_FREE", TB_FREE),
            ("TB_CLAIM_FAILURES", TB_CLAIM_FAILURES),
            ("TB_WAIT_FAILURES", TB_WAIT_FAILURES),
            ("TB_MERGE_FAILURES", TB_MERGE_FAILURES),
            ("TB_LEAF_UNITS", self.leaf_units),
            ("TB_LEAF_SHIFT", self.leaf_units.trailing_zeros() as u64),
            ("TB_LEAVES", self.leaves),
            ("TB_MAX_ORDER", self.max_order as u64),
            ("TB_TREE_SHIFT", self.tree_shift as u64),
            ("TB_SEM", self.sem_base),
            ("TB_ALLOC", self.alloc_base),
        ];
        for (name, value) in constants {
            let _ = writeln!(s, "const {name}: u32 = {value}u;");
        }
    }

    /// The first words of the available tree's layers.
    pub(crate) fn layer_bases(&self) -> &[u64] {
        &self.layer_bases
    }

    /// The first heap_meta word after the tree buddy's state.
    pub(crate) fn state_end(&self) -> u64 {
        self.state_end
    }

    /// Leaves of the (reserved) heap.
    pub(crate) fn leaves(&self) -> u64 {
        self.leaves
    }

    /// The largest order: blocks of 2^max_order leaves.
    pub(crate) fn max_order(&self) -> u32 {
        self.max_order
    }
}

impl StrategyPlan for TBuddyPlan {
    fn entry_file(&self) -> &'static str {
        "tbuddy/strategy.wgsl"
    }

    fn max_alloc(&self) -> u64 {
        (self.leaf_units * UNIT_BYTES) << self.max_order
    }

    fn state_end_word(&self) -> u64 {
        self.state_end
    }

    fn uses_subgroups(&self) -> bool {
        self.subgroups
    }

    fn wgsl(&self, s: &mut String) {
        if self.subgroups {
            let _ = writeln!(s, "#define GPU_HEAP_SUBGROUPS");
        }
        self.constants(s);
        layer_base_wgsl(s, &[&self.layer_bases]);
    }

    /// One invocation publishes the initial blocks (a handful per segment).
    fn init_invocations(&self) -> u32 {
        1
    }

    fn item_units(&self) -> u64 {
        self.leaf_units
    }

    /// One invocation checks the whole range (its blocks are few: see `tb_cover`).
    fn trim_check_invocations(&self, _: u64, _: u64) -> u32 {
        1
    }

    /// Blocks of the size's order that an empty heap holds.
    fn capacity_for(&self, size: u32, segment_sizes: &[u64]) -> u64 {
        let n = self.order_for(size);
        let bytes: u64 = segment_sizes.iter().sum();
        let leaves = (bytes / (self.leaf_units * UNIT_BYTES)).min(self.leaves);
        self.initial_blocks(leaves)
            .iter()
            .filter(|&&(order, _)| order >= n)
            .map(|&(order, _)| 1u64 << (order - n))
            .sum()
    }

    fn granted_bytes(&self, size: u32) -> u64 {
        (self.leaf_units * UNIT_BYTES) << self.order_for(size)
    }
}

/// One order of a [`TBuddyReport`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct TBuddyOrder {
    /// The order's semaphore count: blocks available to take.
    pub count: i64,
    /// Batches of this order in production (the semaphore's E).
    pub producing: u32,
    /// Units reserved by waiting mallocs (the semaphore's R).
    pub reserved: u32,
    /// Nodes of this order marked available.
    pub available: u64,
    /// Of those, nodes a malloc's descent cannot reach: a summary bit above them is clear.
    /// None once the dispatches that publish and repair have finished (mallocs would find
    /// them only by their last-resort scans).
    pub unreachable: u64,
}

/// A tree buddy heap's books ([`GpuHeap::tbuddy_report`]): what each order's semaphore
/// counts against what the available tree holds. Read it between dispatches.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct TBuddyReport {
    /// Orders 0 (one leaf) up to the largest block.
    pub orders: Vec<TBuddyOrder>,
    /// Leaves the free count holds.
    pub free_leaves: u64,
    /// Mallocs that held a unit but did not find its block (HEAP_CONTENTION).
    pub claim_failures: u64,
    /// Mallocs whose wait for a block ran out of rounds (HEAP_CONTENTION).
    pub wait_failures: u64,
    /// Mallocs that swept for a block large enough and gave up with pairs still unmerged:
    /// taken by other sweeps, or left alone for mallocs waiting at their order
    /// (HEAP_CONTENTION).
    pub merge_failures: u64,
}

impl TBuddyReport {
    /// One line: the free leaves, the contention failures by cause, and every order that
    /// holds, expects or waits for a block.
    ///
    /// ```
    /// use gpu_heap::{TBuddyOrder, TBuddyReport};
    /// let books = TBuddyReport {
    ///     orders: vec![TBuddyOrder::default(), TBuddyOrder { count: 2, available: 2, ..Default::default() }],
    ///     free_leaves: 4,
    ///     ..Default::default()
    /// };
    /// assert_eq!(
    ///     books.summary(),
    ///     "4 free leaves, 0 claim, 0 wait and 0 merge failures; \
    ///      order 1: count 2, producing 0, reserved 0, available 2"
    /// );
    /// ```
    pub fn summary(&self) -> String {
        let orders: Vec<String> = (self.orders.iter().enumerate())
            .filter(|(_, o)| **o != TBuddyOrder::default())
            .map(|(n, o)| {
                let hidden = match o.unreachable {
                    0 => String::new(),
                    k => format!(" ({k} unreachable)"),
                };
                format!(
                    "order {n}: count {}, producing {}, reserved {}, available {}{hidden}",
                    o.count, o.producing, o.reserved, o.available
                )
            })
            .collect();
        format!(
            "{} free leaves, {} claim, {} wait and {} merge failures; {}",
            self.free_leaves,
            self.claim_failures,
            self.wait_failures,
            self.merge_failures,
            orders.join("; ")
        )
    }

    /// What does not add up with no call in flight: a count that differs from the
    /// available nodes, a batch or a reservation left behind, available nodes that
    /// descents cannot reach, free leaves that are not the available blocks' leaves. Empty
    /// when the books balance.
    pub fn inconsistencies(&self) -> Vec<String> {
        let mut out = Vec::new();
        let mut leaves = 0u64;
        for (n, o) in self.orders.iter().enumerate() {
            if o.count != o.available as i64
                || o.producing != 0
                || o.reserved != 0
                || o.unreachable != 0
            {
                out.push(format!("order {n}: {o:?}"));
            }
            leaves += o.available << n;
        }
        if leaves != self.free_leaves {
            out.push(format!(
                "free leaves {} but the available blocks hold {leaves}",
                self.free_leaves
            ));
        }
        out
    }
}

impl GpuHeap {
    /// The books of a tree buddy heap (waits for submitted work first): per order, the
    /// semaphore against the available nodes (the tree buddy under UAlloc too); `None` for
    /// other strategies.
    pub fn tbuddy_report(&self) -> Result<Option<TBuddyReport>> {
        let p = match &self.layout().plan {
            FamilyPlan::TBuddy(p) => p,
            FamilyPlan::UAlloc(p) => p.tbuddy(),
            _ => return Ok(None),
        };
        let scalars = self.read_meta(TB_FREE, 4)?;
        let sems = self.read_meta(p.sem_base, 2 * (p.max_order as u64 + 1))?;
        let tree = Layers::read(self, &p.layer_bases, 2 << p.tree_shift)?;
        let orders = (0..=p.max_order)
            .map(|n| {
                let m = p.tree_shift - n;
                let (lo, hi) = (1u64 << m, 2u64 << m);
                let (mut available, mut unreachable) = (0, 0);
                for i in (lo..hi).step_by(32) {
                    let span = (hi - i).min(32);
                    let mask = if span == 32 {
                        u32::MAX
                    } else {
                        ((1u32 << span) - 1) << (i & 31)
                    };
                    let nodes = (tree.words()[(i >> 5) as usize] & mask).count_ones() as u64;
                    available += nodes;
                    if !tree.reachable(i, m / 5) {
                        unreachable += nodes;
                    }
                }
                let e = sems[2 * n as usize + 1];
                TBuddyOrder {
                    count: sems[2 * n as usize] as i32 as i64,
                    producing: e >> BSEM_R_BITS,
                    reserved: e & ((1 << BSEM_R_BITS) - 1),
                    available,
                    unreachable,
                }
            })
            .collect();
        Ok(Some(TBuddyReport {
            orders,
            free_leaves: scalars[0] as u64,
            claim_failures: scalars[1] as u64,
            wait_failures: scalars[2] as u64,
            merge_failures: scalars[3] as u64,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layout::{DeviceCaps, HeapLayout};
    use crate::{HeapConfig, Strategy};

    /// Plans `config` as tbuddy on a device whose storage bindings hold `binding` bytes.
    fn plan(config: HeapConfig, binding: u64) -> TBuddyPlan {
        let caps = DeviceCaps {
            features: wgpu::Features::empty(),
            limits: wgpu::Limits {
                max_storage_buffer_binding_size: binding,
                max_buffer_size: binding,
                max_storage_buffers_per_shader_stage: 16,
                ..wgpu::Limits::default()
            },
            backend: None,
            unsupported: None,
        };
        let config = config
            .strategy(Strategy::TBuddy)
            .max_segment_size(binding)
            .max_separate_bindings(8);
        match HeapLayout::plan(&config, &caps).unwrap().plan {
            FamilyPlan::TBuddy(p) => p,
            other => panic!("planned as {other:?}"),
        }
    }

    #[test]
    fn orders_stop_at_the_segment_and_cover_the_tail() {
        // 11 leaves of 256 B in segments of 1 MiB: one block of 8 leaves, then 2 and 1.
        let p = plan(
            HeapConfig::new(11 * 256).tbuddy(TBuddyParams { leaf_size: 256 }),
            1 << 20,
        );
        assert_eq!(p.max_order, 3);
        assert_eq!(p.initial_blocks(11), vec![(3, 0), (1, 4), (0, 10)]);
        assert_eq!(p.capacity_for(256, &[11 * 256]), 11);
        assert_eq!(p.capacity_for(512, &[11 * 256]), 5);
        assert_eq!(p.capacity_for(2048, &[11 * 256]), 1);
        // 8 MiB in 1 MiB segments: the top order is a segment.
        let p = plan(
            HeapConfig::new(8 << 20).tbuddy(TBuddyParams { leaf_size: 256 }),
            1 << 20,
        );
        assert_eq!(p.max_order, 12);
        assert_eq!(p.initial_blocks(p.leaves).len(), 8);
        assert_eq!(p.granted_bytes(257), 512);
        assert_eq!(p.granted_bytes(1 << 20), 1 << 20);
    }

    #[test]
    fn tree_state_is_a_few_bits_per_leaf() {
        // 2^18 leaves: B = 18, layers 0..=3; two bitmaps of 2^19 bits, then 1/32 of that.
        let p = plan(
            HeapConfig::new(64 << 20).tbuddy(TBuddyParams { leaf_size: 256 }),
            1 << 30,
        );
        assert_eq!(p.tree_shift, 18);
        assert_eq!(p.layer_bases.len(), 4);
        assert_eq!(p.layer_bases[0] - p.alloc_base, 1 << 14);
        assert_eq!(p.layer_bases[1] - p.layer_bases[0], 1 << 14);
        let words = p.state_end - p.sem_base;
        assert!(words * 32 < p.leaves * 5, "{words} words");
        // Just above a power of two the bitmaps are twice as large, never more.
        let p = plan(
            HeapConfig::new((64 << 20) + 256).tbuddy(TBuddyParams { leaf_size: 256 }),
            1 << 30,
        );
        assert_eq!(p.tree_shift, 19);
        assert!((p.state_end - p.sem_base) * 32 < p.leaves * 9);
    }
}
