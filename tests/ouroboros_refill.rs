//! The chunk-based Ouroboros variants refill a full heap after a hashed subset of its blocks
//! is freed: every chunk keeps some blocks live, so no chunk goes back to the pool, and the
//! freed pages are the only memory left. Each must be found again (through the class's
//! index of chunks with free pages, with many claimants on few pages), so the refill, which
//! asks for a few more blocks than were freed, gets exactly as many as were freed.
//!
//! The page-based variants on virtualized queues, full to the last chunk, send freed pages to
//! the spill (their queues have no memory for queue chunks): a malloc must find a spilled
//! page wherever it lies before it reports out of memory.

mod common;

use common::Kernel;
use gpu_heap::{Gpu, GpuHeap, HeapConfig, Strategy, UNIT_BYTES};

/// held[i]: slot i's block (HEAP_NULL when empty), whose first word holds i while live.
/// params[0]: the phase (0 fill every slot, 1 free the slots whose hash is odd, 2 fill the
/// empty slots, 3 free everything, 4 free slot params[1], 5 fill slot params[1], 6 the first
/// eight invocations each malloc a block of 16 KiB, a run of two chunks, and keep it).
/// out[0]: NULL mallocs; out[1]: frees that failed; out[2]: blocks that lost their slot
/// number (handed out twice); out[3]: frees made, and the 16 KiB blocks phase 6 got.
const KERNEL: &str = r#"
#include "alloc.wgsl"
@group(1) @binding(0) var<storage, read_write> held: array<u32>;
@group(1) @binding(1) var<storage, read_write> out: array<atomic<u32>>;
@group(1) @binding(2) var<storage, read_write> params: array<u32>;
@compute @workgroup_size(64)
fn phase(@builtin(global_invocation_id) id: vec3<u32>) {
    let i = id.x;
    if (i >= arrayLength(&held)) {
        return;
    }
    let p = held[i];
    let step = params[0];
    if (step == 6u) {
        if (i < 8u && malloc(16384u) != HEAP_NULL) {
            atomicAdd(&out[3], 1u);
        }
        return;
    }
    if (step == 1u || step == 3u || step == 4u) {
        let kept = (step == 1u && (gpu_heap_hash(i * 0x9e3779b9u) & 1u) == 0u)
            || (step == 4u && i != params[1]);
        if (p == HEAP_NULL || kept) {
            return;
        }
        if (heap_load(p, 0u) != i) {
            atomicAdd(&out[2], 1u);
        }
        free(p);
        if (heap_status != HEAP_OK) {
            atomicAdd(&out[1], 1u);
        }
        atomicAdd(&out[3], 1u);
        held[i] = HEAP_NULL;
        return;
    }
    if (p != HEAP_NULL || (step == 5u && i != params[1])) {
        return;
    }
    let q = malloc(16u);
    if (q == HEAP_NULL) {
        atomicAdd(&out[0], 1u);
    } else {
        heap_store(q, 0u, i);
    }
    held[i] = q;
}
"#;

/// A heap of `strategy`, the test kernel and its buffers, with one slot more than the heap
/// has blocks of 16 B.
struct Refill {
    strategy: Strategy,
    gpu: &'static Gpu,
    heap: GpuHeap,
    kernel: Kernel,
    held: wgpu::Buffer,
    out: wgpu::Buffer,
    params: wgpu::Buffer,
    capacity: u32,
    slots: u32,
}

impl Refill {
    fn new(strategy: Strategy) -> Refill {
        Refill::with_kernel(strategy, KERNEL)
    }

    fn with_kernel(strategy: Strategy, kernel: &str) -> Refill {
        let gpu = common::gpu();
        let heap = GpuHeap::with_config(
            &gpu.device,
            &gpu.queue,
            HeapConfig::new(2 << 20)
                .strategy(strategy)
                .watchdog(common::WATCHDOG),
        )
        .unwrap();
        let capacity = heap.layout().capacity_for(16) as u32;
        let slots = (capacity + 1).next_multiple_of(64);
        Refill {
            strategy,
            gpu,
            kernel: Kernel::new(gpu, &heap, kernel, "phase", &[common::RW; 3]),
            held: common::storage_from(gpu, "held", &vec![0; slots as usize]),
            out: common::storage(gpu, "out", 16),
            params: common::storage(gpu, "params", 16),
            heap,
            capacity,
            slots,
        }
    }

    /// Runs phase `step` (with `slot` for phases 4 and 5) over every slot; returns out.
    fn run(&self, step: u32, slot: u32) -> Vec<u32> {
        let gpu = self.gpu;
        let params = [step.to_le_bytes(), slot.to_le_bytes()].concat();
        gpu.queue.write_buffer(&self.params, 0, &params);
        self.kernel.run(
            gpu,
            &self.heap,
            &[&self.held, &self.out, &self.params],
            self.slots / 64,
        );
        common::read_words(gpu, &self.out, 4)
    }

    /// For the message of a count that fails: the failures by cause and the books.
    fn books(&self) -> String {
        format!(
            "failures {:?}; the books: {:?}",
            self.heap.stats().unwrap().failures,
            self.heap.ouroboros_report().unwrap()
        )
    }

    /// Fills every block of the heap; the slots past its capacity come back NULL. Returns
    /// the phase's out.
    fn fill(&self) -> Vec<u32> {
        let strategy = self.strategy;
        let filled = self.run(0, 0);
        assert_eq!(
            filled[0],
            self.slots - self.capacity,
            "{strategy:?}: NULLs filling the heap; {}",
            self.books()
        );
        let live = self.heap.stats().unwrap().allocations_live;
        assert_eq!(
            live, self.capacity as u64,
            "{strategy:?}: live after the fill"
        );
        filled
    }
}

fn refill(r: Refill) {
    let strategy = r.strategy;
    let filled = r.fill();
    let live = r.capacity as u64;
    let live_now = || r.heap.stats().unwrap().allocations_live;
    // A hashed half of the blocks, spread over every chunk.
    let freed = r.run(1, 0)[3];
    assert!(freed > r.capacity / 3, "{strategy:?}: only {freed} freed");
    assert_eq!(live_now(), live - freed as u64);
    // Refill: the empty slots ask for more blocks than were freed (the slots past the
    // capacity too); exactly `freed` must succeed.
    let refilled = r.run(2, 0);
    let nulls = refilled[0] - filled[0];
    assert_eq!(
        nulls,
        r.slots - r.capacity,
        "{strategy:?}: NULLs refilling {freed} freed blocks; {}",
        r.books()
    );
    assert_eq!(live_now(), live);
    let done = r.run(3, 0);
    assert_eq!(
        done[1..3],
        [0, 0],
        "{strategy:?}: failed frees, blocks handed out twice"
    );
    assert_eq!(live_now(), 0, "{strategy:?}");
}

#[test]
fn chunk_based_variants_find_every_freed_page_of_a_full_heap() {
    for strategy in [Strategy::OuroCS, Strategy::OuroCVA, Strategy::OuroCVL] {
        refill(Refill::new(strategy));
    }
}

/// The same with a test build in which a hashed half of the lanes of a subgroup refuse the
/// pages their serving lane claimed or made for them (chunk_based.wgsl's
/// GPU_HEAP_TEST_REFUSE_HAND_OVER), as lanes that do not reconverge after its rounds would:
/// the serving lane gives those pages back and the lanes go on without them, so the fill and
/// the refill still get every page, and none twice.
#[test]
fn chunk_based_hand_over_refused_loses_no_page() {
    if !common::gpu()
        .device
        .features()
        .contains(wgpu::Features::SUBGROUP)
    {
        eprintln!("no subgroups on this device: no hand-over to refuse");
        return;
    }
    let kernel = format!("#define GPU_HEAP_TEST_REFUSE_HAND_OVER\n{KERNEL}");
    refill(Refill::with_kernel(Strategy::OuroCS, &kernel));
}

/// A full heap of a page-based variant on virtualized queues, one block freed at a time in
/// chunks far apart. The 16 B blocks leave the queue reserve's chunks free (their pages come
/// from fresh runs, not through the queue); blocks of 16 KiB, runs that the reserve does not
/// hold back, take those. So each freed page goes to the spill, and the next malloc must take it
/// (the only free page of the heap) however far it lies from where the spill's search
/// starts. Each chunk lies five eighths of the heap's chunks after the last, where the
/// cursor then is: further than two searches of the window (64 chunks, spill.wgsl's
/// OURO_SPILL_CHUNKS) reach, so only the search of every chunk finds it.
#[test]
fn page_based_virtualized_variants_find_a_spilled_page_anywhere() {
    for strategy in [Strategy::OuroPVA, Strategy::OuroPVL] {
        let r = Refill::new(strategy);
        r.fill();
        let runs = r.run(6, 0)[3];
        let report = r.heap.ouroboros_report().unwrap().unwrap();
        assert_eq!(
            (report.fresh_left, report.pooled),
            (0, 0),
            "{strategy:?}: chunks left after the 16 KiB blocks"
        );
        let live = r.heap.stats().unwrap().allocations_live;
        assert!(runs > 0 && live > r.capacity as u64, "no 16 KiB block");
        let held = common::read_words(r.gpu, &r.held, r.slots as u64);
        let chunk_units = r.heap.config().ouroboros.chunk_size / UNIT_BYTES as u32;
        let heap_chunks = r.heap.layout().bytes / UNIT_BYTES / chunk_units as u64;
        // A slot of each chunk holding blocks, by chunk.
        let mut by_chunk = std::collections::BTreeMap::new();
        for (slot, &h) in held.iter().enumerate().filter(|(_, &h)| h != 0) {
            by_chunk.entry((h - 1) / chunk_units).or_insert(slot as u32);
        }
        let chunks: Vec<(u32, u32)> = by_chunk.into_iter().collect();
        let stride = chunks.len() * 5 / 8;
        let mut last = None;
        for trial in 0..6 {
            let (chunk, slot) = chunks[trial * stride % chunks.len()];
            if let Some(last) = last {
                let ahead = (chunk as u64 + heap_chunks - last) % heap_chunks;
                assert!(
                    ahead > 2 * 64,
                    "{strategy:?}: chunk {chunk} is {ahead} after {last}"
                );
            }
            last = Some(chunk as u64);
            let nulls_before = r.run(4, slot)[0];
            let report = r.heap.ouroboros_report().unwrap().unwrap();
            let spilled: i32 = report.classes.iter().map(|c| c.spilled).sum();
            assert_eq!(
                spilled, 1,
                "{strategy:?}: chunk {chunk}'s freed block spilled"
            );
            // The freed slot alone asks: one malloc, whose search no other moves on.
            let nulls = r.run(5, slot)[0] - nulls_before;
            assert_eq!(
                (nulls, r.heap.stats().unwrap().allocations_live),
                (0, live),
                "{strategy:?}: chunk {chunk}'s freed block found again; {}",
                r.books()
            );
        }
    }
}
