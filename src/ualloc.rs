//! UAlloc in front of the tree buddy (Gelado & Garland, PPoPP 2019, section 4;
//! `shaders/ualloc/`): the paper's allocator. Mallocs up to half a 4 KiB leaf take a block
//! of a power-of-two class from a bin (a block of the tree buddy: one leaf up to 64 B, then
//! as many leaves as hold 32 blocks); larger ones a block of the tree buddy itself, up to
//! a segment.
//!
//! heap_meta after the tree buddy's state (planned with 4 KiB leaves, whatever
//! [`TBuddyParams`](crate::TBuddyParams) says):
//! - two words per class: the class's bulk semaphore (its count is the free blocks of the
//!   class's bins);
//! - a state word per leaf, used by the bin that starts there (free count, live flag,
//!   class);
//! - eight bitmap words per leaf, likewise (a bit per block, 256 blocks of 16 bytes at
//!   most);
//! - a hint word per leaf: one more than the class of the bin that holds it, for a bin's
//!   other leaves (frees find the bin's first leaf by it);
//! - summary bitmaps 1 and 2 (`shaders/core/summary_bitmap.wgsl`): per class, a range of
//!   `2^set_shift` indices, a bit per bin that may have a free block, and a bit per empty
//!   bin whose give-back to the tree buddy is to be retried.
//!
//! That is 10 words per 4 KiB leaf (1 % of the heap) plus a few bits per leaf.

use std::fmt::Write as _;

use crate::error::{Error, Result};
use crate::heap::GpuHeap;
use crate::layout::UNIT_BYTES;
use crate::ouroboros::shared::BSEM_R_BITS;
use crate::strategy::{FamilyPlan, PlanInput, StrategyPlan};
use crate::summary_bitmap::{layer_base_wgsl, plan_layers, Layers};
use crate::tbuddy::{TBuddyPlan, TB_MERGE_FAILURES};

/// Bytes of the tree buddy's leaf under UAlloc, the smallest bin.
const LEAF_BYTES: u64 = 4096;
/// Size classes: blocks of 16 B to half a leaf.
const CLASSES: u64 = 8;
/// Bitmap words per leaf, a bin's at its first.
const BITMAP_WORDS: u64 = 8;
/// The first class whose leaf holds at most 32 blocks: from it on, a bin is as many
/// leaves as hold 32 blocks, one bitmap word.
const WORD_BIN_CLASS: u32 = 3;
/// heap_meta scalars after the tree buddy's: mallocs that failed for contention, holding a
/// unit whose bin was not found, whose wait ran out of rounds, and holding a count whose
/// bit was not found.
const UA_CLAIM_FAILURES: u64 = TB_MERGE_FAILURES + 1;
const UA_WAIT_FAILURES: u64 = TB_MERGE_FAILURES + 2;
const UA_BIT_FAILURES: u64 = TB_MERGE_FAILURES + 3;
/// heap_meta scalar: the mallocs making a bin now (a malloc that finds the free leaves all
/// reserved is not out of memory while any is).
const UA_BIN_PRODUCERS: u64 = TB_MERGE_FAILURES + 4;
/// A bin's state word: its class in the low bits, the live flag, the flag of a bin of one
/// leaf where its class's bins have several, and its free count from bit COUNT_SHIFT up
/// (27 bits: see shaders/ualloc/ualloc.wgsl).
const CLASS_MASK: u32 = 0x7;
const LIVE: u32 = 0x8;
const ONE_LEAF: u32 = 0x10;
const COUNT_SHIFT: u32 = 5;

/// A UAlloc heap's plan: the tree buddy's, and UAlloc's state after it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct UAllocPlan {
    tbuddy: TBuddyPlan,
    sem_base: u64,
    state_base: u64,
    bitmap_base: u64,
    hint_base: u64,
    /// Each class's range of the summary bitmap has `2^set_shift >= bins` indices.
    set_shift: u32,
    set_layers: Vec<u64>,
    /// Summary bitmap 2: per class, the empty bins whose give-back is to be retried.
    retire_layers: Vec<u64>,
    state_end: u64,
    /// The device has subgroup operations: the collective paths are compiled in.
    subgroups: bool,
}

impl UAllocPlan {
    pub fn plan(input: &PlanInput) -> Result<UAllocPlan> {
        if input.stride < LEAF_BYTES || input.bytes < LEAF_BYTES {
            return Err(Error::InvalidConfig(format!(
                "ualloc needs a heap and segments of at least one {LEAF_BYTES}-byte bin, not {} \
                 bytes in segments of {}: use a larger heap or a page-based strategy",
                input.bytes, input.stride
            )));
        }
        let tbuddy = TBuddyPlan::with_leaf(input, LEAF_BYTES)?;
        let leaves = tbuddy.leaves();
        let sem_base = tbuddy.state_end();
        let state_base = sem_base + 2 * CLASSES;
        let bitmap_base = state_base + leaves;
        let set_shift = leaves.next_power_of_two().ilog2();
        let hint_base = bitmap_base + BITMAP_WORDS * leaves;
        let mut next = hint_base + leaves;
        let set_layers = plan_layers(&mut next, CLASSES << set_shift, set_shift);
        let retire_layers = plan_layers(&mut next, CLASSES << set_shift, set_shift);
        Ok(UAllocPlan {
            tbuddy,
            sem_base,
            state_base,
            bitmap_base,
            hint_base,
            set_shift,
            set_layers,
            retire_layers,
            state_end: next,
            subgroups: input.caps.features.contains(wgpu::Features::SUBGROUP),
        })
    }

    /// The tree buddy under UAlloc.
    pub(crate) fn tbuddy(&self) -> &TBuddyPlan {
        &self.tbuddy
    }

    /// The class of a malloc of `size` bytes, or `None` above half a leaf (the tree
    /// buddy's).
    fn class_for(size: u32) -> Option<u32> {
        let units = (size as u64).div_ceil(UNIT_BYTES).max(1);
        (units <= LEAF_BYTES / UNIT_BYTES / 2).then(|| units.next_power_of_two().ilog2())
    }

    /// The tree buddy order of class c's bins.
    fn bin_order(&self, c: u32) -> u32 {
        c.saturating_sub(WORD_BIN_CLASS).min(self.max_bin_order())
    }

    /// The largest order of a bin: the last class's, or the tree buddy's largest block.
    fn max_bin_order(&self) -> u32 {
        (CLASSES as u32 - 1 - WORD_BIN_CLASS).min(self.tbuddy.max_order())
    }

    /// Blocks of a bin of class c: a leaf's worth up to WORD_BIN_CLASS, then 32 (one
    /// bitmap word), fewer only where the tree buddy has no block that large.
    fn bin_blocks(&self, c: u32) -> u64 {
        ((LEAF_BYTES / UNIT_BYTES) << self.bin_order(c)) >> c
    }
}

impl StrategyPlan for UAllocPlan {
    fn entry_file(&self) -> &'static str {
        "ualloc/ualloc.wgsl"
    }

    fn max_alloc(&self) -> u64 {
        self.tbuddy.max_alloc()
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
        self.tbuddy.constants(s);
        let constants = [
            ("UA_CLAIM_FAILURES", UA_CLAIM_FAILURES),
            ("UA_WAIT_FAILURES", UA_WAIT_FAILURES),
            ("UA_BIT_FAILURES", UA_BIT_FAILURES),
            ("UA_BIN_PRODUCERS", UA_BIN_PRODUCERS),
            ("UA_LEAF_UNITS", LEAF_BYTES / UNIT_BYTES),
            ("UA_LEAF_SHIFT", (LEAF_BYTES / UNIT_BYTES).ilog2() as u64),
            ("UA_MAX_BIN_ORDER", self.max_bin_order() as u64),
            ("UA_WORD_BIN_CLASS", WORD_BIN_CLASS as u64),
            ("UA_SEM", self.sem_base),
            ("UA_STATE", self.state_base),
            ("UA_BITMAP", self.bitmap_base),
            ("UA_HINT", self.hint_base),
            ("UA_SET_SHIFT", self.set_shift as u64),
            ("UA_CLASSES", CLASSES),
            ("UA_BITMAP_WORDS", BITMAP_WORDS),
            ("UA_CLASS_MASK", CLASS_MASK as u64),
            ("UA_LIVE", LIVE as u64),
            ("UA_ONE_LEAF", ONE_LEAF as u64),
            ("UA_COUNT_SHIFT", COUNT_SHIFT as u64),
        ];
        for (name, value) in constants {
            let _ = writeln!(s, "const {name}: u32 = {value}u;");
        }
        layer_base_wgsl(
            s,
            &[
                self.tbuddy.layer_bases(),
                &self.set_layers,
                &self.retire_layers,
            ],
        );
    }

    /// The tree buddy's init: one invocation publishes its initial blocks.
    fn init_invocations(&self) -> u32 {
        self.tbuddy.init_invocations()
    }

    fn item_units(&self) -> u64 {
        self.tbuddy.item_units()
    }

    fn trim_check_invocations(&self, to_units: u64, from_units: u64) -> u32 {
        self.tbuddy.trim_check_invocations(to_units, from_units)
    }

    /// Blocks of the size's class in bins that fill the heap, or the tree buddy's blocks.
    fn capacity_for(&self, size: u32, segment_sizes: &[u64]) -> u64 {
        match Self::class_for(size) {
            Some(c) => {
                let bin_bytes = (LEAF_BYTES as u32) << self.bin_order(c);
                self.tbuddy.capacity_for(bin_bytes, segment_sizes) * self.bin_blocks(c)
            }
            None => self.tbuddy.capacity_for(size, segment_sizes),
        }
    }

    fn granted_bytes(&self, size: u32) -> u64 {
        match Self::class_for(size) {
            Some(c) => UNIT_BYTES << c,
            None => self.tbuddy.granted_bytes(size),
        }
    }
}

/// One size class of a [`UAllocReport`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct UAllocClass {
    /// The class's semaphore count: free blocks that mallocs can take.
    pub count: i64,
    /// Bins of this class in production (the semaphore's E).
    pub producing: u32,
    /// Units reserved by waiting mallocs (the semaphore's R).
    pub reserved: u32,
    /// Bins of this class that UAlloc holds.
    pub bins: u64,
    /// The free counts of those bins, summed.
    pub free_blocks: u64,
}

/// A UAlloc heap's books ([`GpuHeap::ualloc_report`]): per class, the semaphore against
/// the bins; read it between dispatches. The tree buddy under it has its own
/// ([`GpuHeap::tbuddy_report`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct UAllocReport {
    /// Classes of 16 B up to half a leaf.
    pub classes: Vec<UAllocClass>,
    /// Bins whose free count differs from the zero bits of their bitmap, whose bitmap has
    /// a bit past the bin's blocks, or marked as one leaf in a class of one-leaf bins.
    pub bad_bins: u64,
    /// The first few bad bins: index, state word and bitmap, for the report.
    pub bad_bin_details: Vec<String>,
    /// Bins held with every block free: their give-back to the tree buddy waits for a
    /// later free of their class, or for a malloc that finds the tree buddy out of leaves.
    pub empty_bins: u64,
    /// Of those, the ones not listed for that retry: memory only a free in the bin
    /// would give back. Zero once no call is in flight.
    pub unlisted_empty_bins: u64,
    /// Live bins with a free block that searches cannot see (their bit in the class's
    /// summary bitmap is clear). Zero once no call is in flight.
    pub hidden_bins: u64,
    /// Live bins with a free block whose own bit is set but a summary bit above it is
    /// clear, so that a search's descents cannot reach them. Zero once no call is in
    /// flight.
    pub unreachable_bins: u64,
    /// Mallocs that held a unit but found no bin with a count for it (HEAP_CONTENTION).
    pub claim_failures: u64,
    /// Mallocs that held a count of a bin but found no zero bit in its bitmap
    /// (HEAP_CONTENTION).
    pub bit_failures: u64,
    /// Mallocs whose wait for a block ran out of rounds (HEAP_CONTENTION).
    pub wait_failures: u64,
    /// Mallocs making a bin. Zero once no call is in flight.
    pub bin_producers: u64,
}

impl UAllocReport {
    /// What does not add up with no call in flight: a class whose semaphore is not its
    /// bins' free blocks, a batch or a reservation left behind, a bin whose count is not
    /// its bitmap's. Empty when the books balance.
    pub fn inconsistencies(&self) -> Vec<String> {
        let mut out: Vec<String> = self
            .classes
            .iter()
            .enumerate()
            .filter(|(_, c)| c.count != c.free_blocks as i64 || c.producing != 0 || c.reserved != 0)
            .map(|(k, c)| format!("class {k} ({} B): {c:?}", UNIT_BYTES << k))
            .collect();
        if self.hidden_bins != 0 {
            out.push(format!(
                "{} bins with free blocks hidden from searches",
                self.hidden_bins
            ));
        }
        if self.unreachable_bins != 0 {
            out.push(format!(
                "{} bins with free blocks under a cleared summary bit",
                self.unreachable_bins
            ));
        }
        if self.unlisted_empty_bins != 0 {
            out.push(format!(
                "{} empty bins neither given back nor listed for it",
                self.unlisted_empty_bins
            ));
        }
        if self.bin_producers != 0 {
            out.push(format!(
                "{} bins counted as being made with no call in flight",
                self.bin_producers
            ));
        }
        if self.bad_bins != 0 {
            out.push(format!(
                "{} bins whose count is not their bitmap's: {}",
                self.bad_bins,
                self.bad_bin_details.join("; ")
            ));
        }
        out
    }
}

impl GpuHeap {
    /// The books of a UAlloc heap (waits for submitted work first); `None` for other
    /// strategies.
    pub fn ualloc_report(&self) -> Result<Option<UAllocReport>> {
        let FamilyPlan::UAlloc(p) = &self.layout().plan else {
            return Ok(None);
        };
        let bins = p.tbuddy.leaves();
        let scalars = self.read_meta(UA_CLAIM_FAILURES, 4)?;
        let sems = self.read_meta(p.sem_base, 2 * CLASSES)?;
        let states = self.read_meta(p.state_base, bins)?;
        let bitmaps = self.read_meta(p.bitmap_base, BITMAP_WORDS * bins)?;
        let sets = Layers::read(self, &p.set_layers, CLASSES << p.set_shift)?;
        let retire = Layers::read(self, &p.retire_layers[..1], CLASSES << p.set_shift)?;
        let mut report = UAllocReport {
            classes: (0..CLASSES as usize)
                .map(|c| {
                    let e = sems[2 * c + 1];
                    UAllocClass {
                        count: sems[2 * c] as i32 as i64,
                        producing: e >> BSEM_R_BITS,
                        reserved: e & ((1 << BSEM_R_BITS) - 1),
                        ..UAllocClass::default()
                    }
                })
                .collect(),
            claim_failures: scalars[0] as u64,
            wait_failures: scalars[1] as u64,
            bit_failures: scalars[2] as u64,
            bin_producers: scalars[3] as u64,
            ..UAllocReport::default()
        };
        for (bin, &state) in states.iter().enumerate() {
            let bitmap = &bitmaps[bin * BITMAP_WORDS as usize..][..BITMAP_WORDS as usize];
            let bad = |report: &mut UAllocReport| {
                report.bad_bins += 1;
                if report.bad_bin_details.len() < 4 {
                    report.bad_bin_details.push(format!(
                        "bin {bin}: state {state:#010x}, bitmap {bitmap:08x?}"
                    ));
                }
            };
            if state & LIVE == 0 {
                if state != 0 || bitmap.iter().any(|&w| w != 0) {
                    bad(&mut report);
                }
                continue;
            }
            let c = (state & CLASS_MASK) as usize;
            let class = c.min(CLASSES as usize - 1) as u32; // a bad class is flagged below
            let count = (state >> COUNT_SHIFT) as u64;
            let blocks = match state & ONE_LEAF {
                0 => p.bin_blocks(class),
                _ => (LEAF_BYTES / UNIT_BYTES) >> c,
            };
            let used: u64 = bitmap.iter().map(|w| w.count_ones() as u64).sum();
            let past = (blocks..BITMAP_WORDS * 32)
                .any(|b| bitmap[(b / 32) as usize] & (1 << (b % 32)) != 0);
            // A bin of one leaf exists only for classes whose bins have several.
            let stray = state & ONE_LEAF != 0 && p.bin_order(class) == 0;
            if c >= CLASSES as usize || past || stray || count + used != blocks {
                bad(&mut report);
            }
            if let Some(class) = report.classes.get_mut(c) {
                class.bins += 1;
                class.free_blocks += count;
            }
            let i = ((c as u64) << p.set_shift) + bin as u64;
            if c < CLASSES as usize && count > 0 {
                if !sets.is_set(i) {
                    report.hidden_bins += 1;
                } else if !sets.reachable(i, p.set_shift / 5) {
                    report.unreachable_bins += 1;
                }
            }
            if count == blocks {
                report.empty_bins += 1;
                report.unlisted_empty_bins += !retire.is_set(i) as u64;
            }
        }
        Ok(Some(report))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layout::{DeviceCaps, HeapLayout};
    use crate::{HeapConfig, Strategy};

    fn layout(size: u64) -> HeapLayout {
        let caps = DeviceCaps {
            features: wgpu::Features::empty(),
            limits: wgpu::Limits {
                max_storage_buffer_binding_size: 128 << 20,
                max_buffer_size: 128 << 20,
                ..wgpu::Limits::default()
            },
            backend: None,
            unsupported: None,
        };
        HeapLayout::plan(&HeapConfig::new(size), &caps).unwrap()
    }

    #[test]
    fn the_default_serves_every_size_with_little_metadata() {
        let l = layout(16 << 20);
        assert_eq!(l.compiled(), Strategy::UAlloc);
        // 4096 bins: classes of 16 B to 2 KiB fill them, larger sizes are buddy blocks.
        assert_eq!(l.capacity_for(1), 4096 * 256);
        assert_eq!(l.capacity_for(257), 4096 * 8);
        assert_eq!(l.capacity_for(2048), 4096 * 2);
        assert_eq!(l.capacity_for(2049), 4096);
        assert_eq!(l.capacity_for(16 << 20), 1);
        assert_eq!(l.max_alloc, 16 << 20);
        let FamilyPlan::UAlloc(p) = &l.plan else {
            panic!("planned as {:?}", l.plan)
        };
        assert_eq!(p.granted_bytes(17), 32);
        assert_eq!(p.granted_bytes(3000), 4096);
        // Bins: one leaf up to 64 B, then 32 blocks (2 KiB: 64 KiB, order 4).
        let bins: Vec<_> = (0..CLASSES as u32)
            .map(|c| (p.bin_order(c), p.bin_blocks(c)))
            .collect();
        assert_eq!(
            bins,
            [
                (0, 256),
                (0, 128),
                (0, 64),
                (0, 32),
                (1, 32),
                (2, 32),
                (3, 32),
                (4, 32)
            ]
        );
        // 10 words per leaf and a few bits: about 1 % of the heap.
        assert!(
            l.metadata_bytes() * 100 < l.bytes * 11 / 10,
            "{}",
            l.metadata_bytes()
        );
    }

    #[test]
    fn bins_fit_a_small_tree_buddy() {
        // 16 KiB: the tree buddy's largest block is 4 leaves, so a bin of 2 KiB blocks
        // holds 8, and every class still fills the heap.
        let l = layout(16 << 10);
        let FamilyPlan::UAlloc(p) = &l.plan else {
            panic!("planned as {:?}", l.plan)
        };
        assert_eq!((p.bin_order(7), p.bin_blocks(7)), (2, 8));
        assert_eq!((p.bin_order(5), p.bin_blocks(5)), (2, 32));
        assert_eq!(l.capacity_for(2048), 8);
        assert_eq!(l.capacity_for(512), 32);
        assert_eq!(l.capacity_for(16), 4 * 256);
    }
}
