//! UAlloc beyond the conformance suite: a heap run out by the largest classes, filled
//! exactly, freed whole, and filled again with the other class (on 256 leaves, bins of 32
//! blocks, so that subgroups short of free blocks make fresh bins while others fill the
//! last ones; on two leaves, bins the tree buddy caps at 4 and 8 blocks, fewer than a
//! subgroup's lanes, so that a subgroup makes or finds several at once); a heap cut up
//! by small blocks, where a bin of 2 KiB blocks no longer fits; rounds of small blocks
//! that stay live, after each of which every bin with free blocks can be found; a crowd of
//! mallocs whose bins all need merged leaves; and a heap freed while a malloc waits, whose
//! every bin is left for a later give-back, then asked for whole.

mod common;

use common::Kernel;
use gpu_heap::{Gpu, GpuHeap, HeapConfig, Strategy, HEAP_OK, HEAP_OUT_OF_MEMORY};

/// out[0] is the size; from out[1], per invocation, a handle and a status. take: malloc and
/// write a pattern into every word. give: check the pattern, then free; the status becomes
/// the free's, or BAD_PATTERN.
const KERNEL: &str = r#"
#include "alloc.wgsl"
@group(1) @binding(0) var<storage, read_write> out: array<u32>;
const BAD_PATTERN: u32 = 0xbadu;
fn pattern(id: u32, word: u32) -> u32 {
    return (id * 0x9e3779b9u) ^ word;
}
@compute @workgroup_size(64)
fn take(@builtin(global_invocation_id) id: vec3<u32>) {
    let slot = 1u + 2u * id.x;
    if (slot + 1u < arrayLength(&out)) {
        let p = malloc(out[0]);
        out[slot] = p;
        out[slot + 1u] = heap_status;
        if (p != 0u) {
            for (var w = 0u; w < out[0] / 4u; w++) {
                heap_store(p, w, pattern(id.x, w));
            }
        }
    }
}
// The word of class 0's semaphore that counts waiting mallocs' reserved units, moved by
// out[1] (one: a malloc waits; the two's complement of one: it left).
@compute @workgroup_size(1)
fn wait_in_class_0() {
    atomicAdd(&gpu_heap_meta[gpu_heap_ua_sem(0u) + 1u], out[1]);
}
@compute @workgroup_size(64)
fn give(@builtin(global_invocation_id) id: vec3<u32>) {
    let slot = 1u + 2u * id.x;
    if (slot + 1u < arrayLength(&out) && out[slot] != 0u) {
        var intact = true;
        for (var w = 0u; w < out[0] / 4u; w++) {
            intact = intact && heap_load(out[slot], w) == pattern(id.x, w);
        }
        free(out[slot]);
        out[slot + 1u] = select(BAD_PATTERN, heap_status, intact);
    }
}
"#;

const LEAF: u64 = 4096;

/// A UAlloc heap of `leaves` leaves, and the kernels that take and give its blocks.
struct Setup {
    gpu: &'static Gpu,
    heap: GpuHeap,
    take: Kernel,
    give: Kernel,
}

impl Setup {
    fn new(leaves: u64) -> Setup {
        let gpu = common::gpu();
        let config = HeapConfig::new(leaves * LEAF)
            .strategy(Strategy::UAlloc)
            .watchdog(common::WATCHDOG);
        let heap = GpuHeap::with_config(&gpu.device, &gpu.queue, config).unwrap();
        let take = Kernel::new(gpu, &heap, KERNEL, "take", &[common::RW]);
        let give = Kernel::new(gpu, &heap, KERNEL, "give", &[common::RW]);
        Setup {
            gpu,
            heap,
            take,
            give,
        }
    }

    /// Runs `kernel` over `size` and `slots` (a handle and a status per invocation): the
    /// handles and statuses it left.
    fn run(&self, kernel: &Kernel, size: u32, slots: &[(u32, u32)]) -> Vec<(u32, u32)> {
        let words: Vec<u32> = std::iter::once(size)
            .chain(slots.iter().flat_map(|&(h, s)| [h, s]))
            .collect();
        let out = common::storage_from(self.gpu, "out", &words);
        let n = slots.len() as u64;
        kernel.run(self.gpu, &self.heap, &[&out], n.div_ceil(64) as u32);
        let words = common::read_words(self.gpu, &out, 1 + 2 * n);
        words[1..].chunks(2).map(|s| (s[0], s[1])).collect()
    }

    /// Frees every block of `slots`, checking its pattern first.
    fn give_all(&self, size: u32, slots: &[(u32, u32)]) {
        for (h, s) in self.run(&self.give, size, slots) {
            assert!(h == 0 || s == HEAP_OK, "{size} B: free of {h} said {s:#x}");
        }
    }

    /// After everything was freed: no live block, books that balance, and every leaf back
    /// in the tree buddy.
    fn expect_empty(&self, leaves: u64, what: &str) {
        assert_eq!(self.heap.stats().unwrap().allocations_live, 0, "{what}");
        let books = self.heap.ualloc_report().unwrap().unwrap();
        assert_eq!(books.inconsistencies(), Vec::<String>::new(), "{what}");
        let tree = self.heap.tbuddy_report().unwrap().unwrap();
        assert_eq!(tree.free_leaves, leaves, "{what}: {}", self.books());
    }

    /// Every malloc of `got` (handles and statuses) served a block.
    fn expect_served(&self, got: &[(u32, u32)], what: &str) {
        let failed: Vec<u32> = got
            .iter()
            .filter(|&&(h, s)| h == 0 || s != HEAP_OK)
            .map(|&(_, s)| s)
            .collect();
        assert!(
            failed.is_empty(),
            "{what}: {} of {} mallocs failed (statuses {:?}); {}",
            failed.len(),
            got.len(),
            &failed[..failed.len().min(8)],
            self.books()
        );
    }

    /// The heap's books, for a failed assertion's message.
    fn books(&self) -> String {
        let tree = self.heap.tbuddy_report().unwrap().unwrap();
        format!(
            "{:?}; tree buddy: {}; UAlloc: {:?}",
            self.heap.stats().unwrap().failures,
            tree.summary(),
            self.heap.ualloc_report().unwrap().unwrap()
        )
    }
}

/// The byte offset of a handle.
fn byte(h: u32) -> u64 {
    (h - 1) as u64 * 16
}

#[test]
fn short_subgroups_fill_the_heap_exactly_and_free_it_whole() {
    for (leaves, sizes) in [(256, [2048u32, 1024, 2048]), (2, [2048, 1024, 16])] {
        let t = Setup::new(leaves);
        for size in sizes {
            let what = format!("{leaves} leaves, {size} B");
            let capacity = t.heap.layout().capacity_for(size);
            assert_eq!(capacity, leaves * LEAF / size as u64, "{what}");
            // Half as many mallocs again as fit.
            let n = capacity * 3 / 2;
            let (handles, statuses): (Vec<u32>, Vec<u32>) = t
                .run(&t.take, size, &vec![(0, 0); n as usize])
                .into_iter()
                .unzip();
            assert!(
                statuses
                    .iter()
                    .all(|&s| s == HEAP_OK || s == HEAP_OUT_OF_MEMORY),
                "{what}: a malloc failed other than out of memory: {statuses:?}"
            );
            let mut blocks: Vec<u64> = handles
                .iter()
                .filter(|&&h| h != 0)
                .map(|&h| byte(h))
                .collect();
            assert_eq!(
                blocks.len() as u64,
                capacity,
                "{what}: blocks served; {}",
                t.books()
            );
            blocks.sort_unstable();
            assert!(
                blocks.windows(2).all(|b| b[0] + size as u64 <= b[1]),
                "{what}: blocks overlap"
            );
            assert!(blocks
                .iter()
                .all(|&b| b % size as u64 == 0 && b + size as u64 <= leaves * LEAF));
            let slots: Vec<_> = handles
                .iter()
                .zip(&statuses)
                .map(|(&h, &s)| (h, s))
                .collect();
            t.give_all(size, &slots);
            // Every bin went back to the tree buddy, so the next class finds every leaf.
            t.expect_empty(leaves, &what);
        }
    }
}

/// A heap cut up by small blocks: filled with 16 B blocks, then freed but for the blocks of
/// every sixteenth leaf, so that no free block of 16 aligned leaves (a bin of 2 KiB blocks)
/// is left. Mallocs of 2 KiB then make bins of one leaf: every free leaf serves two, and
/// none fails while a block could be had.
#[test]
fn mallocs_whose_bin_does_not_fit_make_bins_of_one_leaf() {
    const LEAVES: u64 = 256;
    let t = Setup::new(LEAVES);
    let small = t.run(&t.take, 16, &vec![(0, 0); (LEAVES * 256) as usize]);
    t.expect_served(&small, "16 B fill");
    // Free all but the blocks of every sixteenth leaf.
    let (kept, freed): (Vec<_>, Vec<_>) = small
        .iter()
        .map(|&(h, _)| {
            if byte(h) / LEAF % 16 == 0 {
                ((h, 0), (0, 0))
            } else {
                ((0, 0), (h, 0))
            }
        })
        .unzip();
    t.give_all(16, &freed);

    let large = t.run(&t.take, 2048, &vec![(0, 0); 512]);
    assert!(
        large
            .iter()
            .all(|&(_, s)| s == HEAP_OK || s == HEAP_OUT_OF_MEMORY),
        "a 2 KiB malloc failed other than out of memory: {large:?}"
    );
    let mut blocks: Vec<u64> = large
        .iter()
        .filter(|&&(h, _)| h != 0)
        .map(|&(h, _)| byte(h))
        .collect();
    assert_eq!(
        blocks.len() as u64,
        2 * (LEAVES - LEAVES / 16),
        "2 KiB blocks served; {}",
        t.books()
    );
    blocks.sort_unstable();
    assert!(
        blocks.windows(2).all(|b| b[0] + 2048 <= b[1]),
        "2 KiB blocks overlap"
    );
    assert!(
        blocks
            .iter()
            .all(|&b| b / LEAF % 16 != 0 && b + 2048 <= LEAVES * LEAF),
        "a 2 KiB block in a kept leaf or past the heap"
    );
    t.give_all(2048, &large);
    t.give_all(16, &kept);
    t.expect_empty(LEAVES, "cut up");
}

/// Rounds of many small mallocs that stay live, as a kernel that accumulates results makes
/// them: after each round the books balance and every bin with free blocks can be reached
/// from the top of its class's summary bitmap (summary bits cleared over full words once
/// hid whole ranges of bins: BENCHMARKS.md, "Hidden summaries"); then every block is freed.
#[test]
fn accumulated_small_blocks_stay_reachable() {
    const LEAVES: u64 = 65536; // 256 MiB
    const MALLOCS: usize = 100_000;
    let t = Setup::new(LEAVES);
    let mut rounds = Vec::new();
    for round in 0..8 {
        let got = t.run(&t.take, 16, &vec![(0, 0); MALLOCS]);
        t.expect_served(&got, &format!("round {round}"));
        let books = t.heap.ualloc_report().unwrap().unwrap();
        assert_eq!(
            books.inconsistencies(),
            Vec::<String>::new(),
            "round {round}"
        );
        rounds.push(got);
    }
    let mut blocks: Vec<u64> = rounds.iter().flatten().map(|&(h, _)| byte(h)).collect();
    blocks.sort_unstable();
    assert!(
        blocks.windows(2).all(|b| b[0] + 16 <= b[1]),
        "blocks overlap"
    );
    // Each round's blocks carry the pattern of their invocation in that round.
    for slots in &rounds {
        t.give_all(16, slots);
    }
    t.expect_empty(LEAVES, "every round's blocks freed");
}

/// A heap whose free memory lies all in single leaves (blocks of one leaf, freed: frees do
/// not merge), then a dispatch of 2 KiB mallocs for half of it, whose bins need 16
/// aligned leaves: their makers all find the tree buddy in pieces at once, and their
/// reservations can take every free leaf for a while. None may fail, and no tree buddy
/// malloc may run out of rounds waiting for batches that only other such makers had
/// registered.
#[test]
fn a_crowd_of_bins_on_a_heap_in_leaves_does_not_wait_on_itself() {
    const LEAVES: u64 = 16384; // 64 MiB
    let t = Setup::new(LEAVES);
    let leaves = t.run(&t.take, LEAF as u32, &vec![(0, 0); LEAVES as usize]);
    t.expect_served(&leaves, "leaf fill");
    t.give_all(LEAF as u32, &leaves);
    let bins = t.run(&t.take, 2048, &vec![(0, 0); LEAVES as usize]);
    let tree = t.heap.tbuddy_report().unwrap().unwrap();
    t.expect_served(&bins, "2 KiB");
    assert_eq!(
        (tree.claim_failures, tree.wait_failures, tree.merge_failures),
        (0, 0, 0),
        "tree buddy mallocs failed for contention: {}",
        tree.summary()
    );
    t.give_all(2048, &bins);
    t.expect_empty(LEAVES, "a crowd of bins");
}

/// A free that empties a bin while a malloc of its class waits cannot take the bin's blocks
/// from the semaphore (that malloc may be the one to find them), so the bin is only listed
/// for a later give-back; on the GPU this happens wherever frees and mallocs of a class
/// overlap. Here a waiting malloc is stood in for (the semaphore's reserved count raised by
/// one) while a heap full of 16 B blocks is freed, so that every one of its 2048 bins is
/// listed (the class's summaries are then two layers deep, where a descent can follow a
/// summary bit left over a word that earlier takes emptied). Once the wait is over, the
/// heap must serve as if empty: one malloc of the whole of it, and, after the same fill and
/// free again, as many 2 KiB blocks as it holds. Their mallocs give the listed bins back.
#[test]
fn a_heap_whose_every_bin_is_listed_for_a_give_back_serves_any_size_whole() {
    const LEAVES: u64 = 2048;
    let t = Setup::new(LEAVES);
    let wait = Kernel::new(t.gpu, &t.heap, KERNEL, "wait_in_class_0", &[common::RW]);
    let waiting = |moved: u32| {
        let out = common::storage_from(t.gpu, "out", &[0, moved]);
        wait.run(t.gpu, &t.heap, &[&out], 1);
    };
    for (size, n) in [(LEAVES * LEAF, 1), (2048, LEAVES * 2)] {
        let what = format!("{n} x {size} B");
        let small = t.run(&t.take, 16, &vec![(0, 0); (LEAVES * 256) as usize]);
        t.expect_served(&small, &format!("{what}: 16 B fill"));
        waiting(1);
        t.give_all(16, &small);
        waiting(1u32.wrapping_neg());
        let books = t.heap.ualloc_report().unwrap().unwrap();
        // Every empty bin listed, and the semaphore's words as they were.
        assert_eq!(books.inconsistencies(), Vec::<String>::new(), "{what}");
        assert_eq!(
            books.empty_bins,
            LEAVES,
            "{what}: bins listed; {}",
            t.books()
        );
        let got = t.run(&t.take, size as u32, &vec![(0, 0); n as usize]);
        t.expect_served(&got, &what);
        t.give_all(size as u32, &got);
        t.expect_empty(LEAVES, &what);
    }
}
