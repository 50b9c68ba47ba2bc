//! Growth without copying, beyond the conformance scenario: the pressure signal's
//! watermark, typed errors of heaps that cannot grow, and stride planning on the device.

mod common;

use common::Kernel;
use gpu_heap::{Error, Gpu, GpuHeap, GrowthPolicy, HeapConfig, RandomWalkParams, Strategy};

const KERNEL: &str = r#"
#include "alloc.wgsl"
@group(1) @binding(0) var<storage, read_write> handles: array<u32>;
@compute @workgroup_size(64)
fn alloc(@builtin(global_invocation_id) id: vec3<u32>) {
    if (id.x < arrayLength(&handles)) {
        let p = malloc(256u);
        handles[id.x] = p;
        if (p != 0u) {
            heap_store(p, 0u, id.x);
        }
    }
}
"#;

/// Runs `alloc` once with `n` invocations; returns the handles.
fn alloc(gpu: &Gpu, heap: &GpuHeap, n: u32) -> Vec<u32> {
    let handles = common::storage(gpu, "handles", n as u64 * 4);
    Kernel::new(gpu, heap, KERNEL, "alloc", &[common::RW]).run(
        gpu,
        heap,
        &[&handles],
        n.div_ceil(64),
    );
    common::read_words(gpu, &handles, n as u64)
}

#[test]
fn low_watermark_raises_pressure_and_maintain_grows() {
    let gpu = common::gpu();
    for strategy in [
        Strategy::Bump,
        Strategy::RwBm,
        Strategy::RwMalloc,
        Strategy::OuroPS,
        Strategy::OuroPVA,
        Strategy::OuroPVL,
        Strategy::OuroCS,
        Strategy::OuroCVA,
        Strategy::OuroCVL,
    ] {
        let config = HeapConfig::new(1 << 20)
            .max_size(4 << 20)
            .max_segment_size(1 << 20)
            .strategy(strategy);
        let mut heap = GpuHeap::with_config(&gpu.device, &gpu.queue, config).unwrap();
        let policy = GrowthPolicy::default().low_watermark(0.5);
        let report = heap.maintain(&policy).unwrap();
        assert!(!report.low && !report.out_of_memory && !report.grew());
        // A quarter of the heap: above the watermark.
        let handles = alloc(gpu, &heap, 1024);
        assert!(handles.iter().all(|&h| h != 0), "{strategy}");
        let report = heap.maintain(&policy).unwrap();
        assert!(!report.low, "{strategy}: low after a quarter: {report:?}");
        // Three quarters: under the watermark of half, but nothing failed.
        let handles = alloc(gpu, &heap, 2048);
        assert!(handles.iter().all(|&h| h != 0), "{strategy}");
        let report = heap.maintain(&policy).unwrap();
        assert!(
            report.low && !report.out_of_memory,
            "{strategy}: {report:?}"
        );
        assert_eq!(report.committed_after, 2 << 20, "{strategy}");
        // The watermark is re-armed for 2 MiB: 3072 of 8192 pages used is above it.
        let report = heap.maintain(&policy).unwrap();
        assert!(!report.low && !report.grew(), "{strategy}: {report:?}");
    }
}

#[test]
fn heaps_that_cannot_grow_say_so() {
    let gpu = common::gpu();
    let mut heap = GpuHeap::new(&gpu.device, &gpu.queue, 1 << 20).unwrap();
    assert!(!heap.layout().growable);
    assert_eq!(heap.committed_bytes(), heap.max_bytes());
    assert!(matches!(heap.grow(1), Err(Error::GrowBeyondMax { .. })));
    assert_eq!(heap.trim().unwrap(), 0);
    assert!(matches!(
        heap.trim_to(1 << 10),
        Err(Error::TrimBelowInitial { .. })
    ));
    // Out of memory on a heap that cannot grow: maintain reports it at its limit.
    let handles = alloc(gpu, &heap, 5000);
    assert_eq!(handles.iter().filter(|&&h| h != 0).count(), 4096);
    let report = heap.maintain(&GrowthPolicy::default()).unwrap();
    assert!(report.out_of_memory && report.at_limit && !report.grew());
}

#[test]
fn grow_keeps_handles_and_data() {
    let gpu = common::gpu();
    let config = HeapConfig::new(1 << 20)
        .max_size(8 << 20)
        .max_segment_size(1 << 20)
        .strategy(Strategy::RwBm);
    let mut heap = GpuHeap::with_config(&gpu.device, &gpu.queue, config).unwrap();
    let first = alloc(gpu, &heap, 4096);
    assert!(first.iter().all(|&h| h != 0));
    let before = heap.segment_buffers()[0].clone();
    assert_eq!(heap.grow(3 << 20).unwrap(), 4 << 20);
    // Same buffer: nothing was copied or replaced.
    assert_eq!(heap.segment_buffers()[0], before);
    assert_eq!(heap.segment_buffers().len(), 4);
    let second = alloc(gpu, &heap, 8192);
    assert!(second.iter().all(|&h| h != 0));
    let mut all: Vec<u32> = first.iter().chain(&second).copied().collect();
    all.sort_unstable();
    all.dedup();
    assert_eq!(all.len(), 4096 + 8192, "no handle handed out twice");
    assert!(all.iter().all(|&h| (h as u64 - 1) * 16 < 4 << 20));
    assert_eq!(heap.stats().unwrap().allocations_live, 4096 + 8192);
}

/// Pages of 64 KiB in 1 MiB segments: 16 pages a segment, so the committed end falls in
/// the middle of a bitmap word and the boundary-word logic of grow and trim is exercised.
#[test]
fn committed_end_inside_a_bitmap_word() {
    let gpu = common::gpu();
    for strategy in [Strategy::RwBm, Strategy::Rw, Strategy::Corw] {
        let config = HeapConfig::new(1 << 20)
            .max_size(4 << 20)
            .max_segment_size(1 << 20)
            .random_walk(RandomWalkParams {
                page_size: 64 << 10,
                ..Default::default()
            })
            .strategy(strategy);
        let mut heap = GpuHeap::with_config(&gpu.device, &gpu.queue, config).unwrap();
        let ok = |handles: Vec<u32>| {
            assert!(handles
                .iter()
                .all(|&h| h == 0 || (h as u64 - 1) * 16 < 4 << 20));
            handles.iter().filter(|&&h| h != 0).count()
        };
        assert_eq!(ok(alloc(gpu, &heap, 20)), 16, "{strategy}: first segment");
        heap.grow(1 << 20).unwrap();
        assert_eq!(ok(alloc(gpu, &heap, 20)), 16, "{strategy}: second segment");
        heap.grow_to(3 << 20).unwrap();
        assert_eq!(ok(alloc(gpu, &heap, 20)), 16, "{strategy}: third segment");
        assert_eq!(heap.trim().unwrap(), 0, "{strategy}: trim while full");
        heap.reset().unwrap();
        assert_eq!(
            heap.trim().unwrap(),
            2 << 20,
            "{strategy}: trim after reset"
        );
        assert_eq!(ok(alloc(gpu, &heap, 20)), 16, "{strategy}: after trim");
        heap.grow_to(4 << 20).unwrap();
        assert_eq!(ok(alloc(gpu, &heap, 60)), 48, "{strategy}: at the maximum");
        let stats = heap.stats().unwrap();
        assert_eq!(stats.allocations_live, 64, "{strategy}");
        assert_eq!(stats.failures.contention, 0, "{strategy}");
        // The reset cleared the counters: the fill after trim and the last one.
        assert_eq!(stats.failures.out_of_memory, 4 + 12, "{strategy}");
    }
}

/// Ouroboros kernels over a buffer of handles: `alloc` as above (`alloc_chunk` and
/// `alloc_run` take 8 KiB and 64 KiB, without a pattern), `release` frees the handles and
/// zeroes them, `read` replaces each handle by its allocation's first word.
const OURO_KERNELS: &str = r#"
#include "alloc.wgsl"
@group(1) @binding(0) var<storage, read_write> handles: array<u32>;
@compute @workgroup_size(64)
fn alloc(@builtin(global_invocation_id) id: vec3<u32>) {
    if (id.x < arrayLength(&handles)) {
        let p = malloc(256u);
        handles[id.x] = p;
        if (p != 0u) {
            heap_store(p, 0u, id.x);
        }
    }
}
@compute @workgroup_size(64)
fn alloc_chunk(@builtin(global_invocation_id) id: vec3<u32>) {
    if (id.x < arrayLength(&handles)) {
        handles[id.x] = malloc(8192u);
    }
}
@compute @workgroup_size(64)
fn alloc_run(@builtin(global_invocation_id) id: vec3<u32>) {
    if (id.x < arrayLength(&handles)) {
        handles[id.x] = malloc(65536u);
    }
}
@compute @workgroup_size(64)
fn release(@builtin(global_invocation_id) id: vec3<u32>) {
    if (id.x < arrayLength(&handles)) {
        free(handles[id.x]);
        handles[id.x] = 0u;
    }
}
@compute @workgroup_size(64)
fn read(@builtin(global_invocation_id) id: vec3<u32>) {
    if (id.x < arrayLength(&handles) && handles[id.x] != 0u) {
        handles[id.x] = heap_load(handles[id.x], 0u);
    }
}
"#;

/// Runs `entry` of OURO_KERNELS over `handles` (one invocation each); returns the buffer.
fn run(gpu: &Gpu, heap: &GpuHeap, entry: &str, handles: &[u32]) -> Vec<u32> {
    let buffer = common::storage_from(gpu, "handles", handles);
    let n = handles.len() as u32;
    Kernel::new(gpu, heap, OURO_KERNELS, entry, &[common::RW]).run(
        gpu,
        heap,
        &[&buffer],
        n.div_ceil(64),
    );
    common::read_words(gpu, &buffer, n as u64)
}

/// Ouroboros with pages of 256 bytes (classes up to one chunk, not the runs the
/// conformance scenario uses): the page-based standard queues (ouro-p-s) and the
/// chunk-based front end, whose free chunks return to the pool (ouro-c-s), both give back
/// trailing segments once their pages are free: trim purges the class queue or the pool
/// (shaders/ouroboros/growth.wgsl). Memory never comes from outside the committed segments,
/// data stays in place, and the trimmed chunks are handed out again after the next grow.
#[test]
fn ouroboros_trim_purges_queues_and_pool() {
    let gpu = common::gpu();
    const MIB: u64 = 1 << 20;
    for strategy in [Strategy::OuroPS, Strategy::OuroCS] {
        let config = HeapConfig::new(MIB)
            .max_size(4 * MIB)
            .max_segment_size(MIB)
            .strategy(strategy);
        let mut heap = GpuHeap::with_config(&gpu.device, &gpu.queue, config).unwrap();
        let below = |handles: &[u32], bytes: u64| {
            handles
                .iter()
                .filter(|&&h| h != 0)
                .all(|&h| (h as u64 - 1) * 16 + 256 <= bytes)
        };
        let ok = |handles: &[u32]| handles.iter().filter(|&&h| h != 0).count();
        // 1 MiB holds 4096 pages of 256 bytes.
        let a = run(gpu, &heap, "alloc", &[0; 4096]);
        assert_eq!(ok(&a), 4096, "{strategy}: first MiB");
        assert!(below(&a, MIB), "{strategy}");
        let none = run(gpu, &heap, "alloc", &[0; 100]);
        assert_eq!(ok(&none), 0, "{strategy}: full");
        let report = heap.maintain(&GrowthPolicy::default()).unwrap();
        assert!(report.out_of_memory && report.committed_after == 2 * MIB);
        let b = run(gpu, &heap, "alloc", &[0; 4096]);
        assert_eq!(ok(&b), 4096, "{strategy}: second MiB");
        assert!(below(&b, 2 * MIB), "{strategy}");
        heap.grow_to(4 * MIB).unwrap();
        let c = run(gpu, &heap, "alloc", &[0; 2048]);
        assert_eq!(ok(&c), 2048, "{strategy}: half of the third MiB");
        assert!(below(&c, 3 * MIB), "{strategy}");
        // The fourth segment was never handed out; the third holds c.
        assert_eq!(
            heap.trim().unwrap(),
            MIB,
            "{strategy}: trim while c is live"
        );
        assert_eq!(heap.committed_bytes(), 3 * MIB);
        // Free c: its pages sit in the class queue (p-s) or its chunks in the pool (c-s).
        run(gpu, &heap, "release", &c);
        assert_eq!(
            heap.trim().unwrap(),
            MIB,
            "{strategy}: trim after freeing c"
        );
        assert_eq!(heap.committed_bytes(), 2 * MIB);
        // a and b kept their data.
        for h in [&a, &b] {
            let words = run(gpu, &heap, "read", h);
            assert!(
                words.iter().enumerate().all(|(i, &w)| w == i as u32),
                "{strategy}: data changed by the trim"
            );
        }
        // Full at 2 MiB: nothing of the trimmed segment comes back.
        let none = run(gpu, &heap, "alloc", &[0; 1000]);
        assert_eq!(ok(&none), 0, "{strategy}: full after trim");
        let stats = heap.stats().unwrap();
        assert_eq!(stats.failures.contention, 0, "{strategy}");
        assert_eq!(stats.allocations_live, 8192, "{strategy}");
        // Free b and allocate again: b's pages come back, all below 2 MiB.
        run(gpu, &heap, "release", &b);
        let d = run(gpu, &heap, "alloc", &[0; 4096]);
        assert_eq!(ok(&d), 4096, "{strategy}: b's pages again");
        assert!(below(&d, 2 * MIB), "{strategy}");
        // Grow again: the trimmed chunks are fresh once more, each handed out once.
        heap.grow_to(4 * MIB).unwrap();
        let e = run(gpu, &heap, "alloc", &[0; 8192]);
        assert_eq!(ok(&e), 8192, "{strategy}: the regrown segments");
        assert!(below(&e, 4 * MIB), "{strategy}");
        let mut all: Vec<u32> = a.iter().chain(&d).chain(&e).copied().collect();
        all.sort_unstable();
        all.dedup();
        assert_eq!(all.len(), 4096 * 2 + 8192, "{strategy}: a handle twice");
        let stats = heap.stats().unwrap();
        assert_eq!(stats.failures.contention, 0, "{strategy}");
        assert_eq!(stats.allocations_live, 16384, "{strategy}");
    }
}

/// Virtualized queues keep their items in queue chunks in the heap; trim cannot purge them
/// in place, so a segment holding pages of a virtualized class (or a queue chunk) stays
/// committed even when every page is free (shaders/ouroboros/growth.wgsl). The check says
/// so instead of releasing memory a queue still hands out; segments never used are released.
/// `GPU_HEAP_TEST_REPEATS` runs it that many times a strategy (at least once).
#[test]
fn ouroboros_virtual_queues_keep_segments_they_reference() {
    let gpu = common::gpu();
    const MIB: u64 = 1 << 20;
    let repeats = common::env_u32("GPU_HEAP_TEST_REPEATS", 1).max(1);
    for strategy in [Strategy::OuroPVA, Strategy::OuroPVL]
        .into_iter()
        .flat_map(|s| std::iter::repeat_n(s, repeats as usize))
    {
        let config = HeapConfig::new(MIB)
            .max_size(4 * MIB)
            .max_segment_size(MIB)
            .strategy(strategy);
        let mut heap = GpuHeap::with_config(&gpu.device, &gpu.queue, config).unwrap();
        heap.grow_to(2 * MIB).unwrap();
        // What a failed fill or refill met: failures by cause, and where the pages are.
        let state = |heap: &GpuHeap| {
            let report = heap.ouroboros_report().unwrap().unwrap();
            let failures = heap.stats().unwrap().failures;
            format!("{strategy}: {failures:?}; {}", report.summary())
        };
        // 1.5 MiB of pages in 2 MiB. The third MiB is committed only afterwards: with it
        // committed during the fill, producers that help on a GPU may take a few chunks
        // more than the pages handed out need, and those may be the third MiB's.
        let a = run(gpu, &heap, "alloc", &[0; 6144]);
        let ok = |h: &[u32]| h.iter().filter(|&&h| h != 0).count();
        assert_eq!(ok(&a), 6144, "{}", state(&heap));
        assert!(
            a.iter().all(|&h| (h as u64 - 1) * 16 < 2 * MIB),
            "{strategy}"
        );
        heap.grow_to(3 * MIB).unwrap();
        assert_eq!(
            heap.trim().unwrap(),
            MIB,
            "{strategy}: the unused third MiB"
        );
        run(gpu, &heap, "release", &a);
        let report = heap.ouroboros_report().unwrap().unwrap();
        assert_eq!(report.unaccounted_units(), Some(0), "{}", state(&heap));
        assert_eq!(heap.trim().unwrap(), 0, "{strategy}: queued pages stay");
        assert_eq!(heap.committed_bytes(), 2 * MIB);
        let b = run(gpu, &heap, "alloc", &[0; 6144]);
        assert_eq!(ok(&b), 6144, "{}", state(&heap));
        assert!(
            b.iter().all(|&h| (h as u64 - 1) * 16 < 2 * MIB),
            "{strategy}"
        );
        assert_eq!(heap.stats().unwrap().failures.contention, 0, "{strategy}");
    }
}

/// A run that straddles the committed end leaves the fresh-chunk counter past it (its
/// chunks below the end go to the pool): growing must restart fresh memory at the old end,
/// so that the new segment holds exactly its 16 aligned runs of 64 KiB and the pooled
/// chunks below the end still serve single chunks.
#[test]
fn ouroboros_grow_after_a_straddling_run() {
    let gpu = common::gpu();
    const MIB: u64 = 1 << 20;
    for strategy in [
        Strategy::OuroPS,
        Strategy::OuroPVA,
        Strategy::OuroPVL,
        Strategy::OuroCS,
        Strategy::OuroCVA,
        Strategy::OuroCVL,
    ] {
        let config = HeapConfig::new(MIB)
            .max_size(2 * MIB)
            .max_segment_size(MIB)
            .strategy(strategy);
        let mut heap = GpuHeap::with_config(&gpu.device, &gpu.queue, config).unwrap();
        let ok = |handles: &[u32]| handles.iter().filter(|&&h| h != 0).count();
        let within = |handles: &[u32], lo: u64, hi: u64| {
            handles
                .iter()
                .filter(|&&h| h != 0)
                .all(|&h| (h as u64 - 1) * 16 >= lo && (h as u64 - 1) * 16 < hi)
        };
        // 122 of the 128 chunks, then a run of 8 that cannot fit: it straddles the end.
        // Classes on virtualized queues leave their queue reserve to queue chunks; where
        // that is more than six chunks (linked queues keep drained ones too), they get
        // fewer, and the run finds no aligned place before the end instead.
        let reserve = heap.layout().queue_reserve_chunks() as usize;
        let singles = 122.min(128 - reserve);
        let a = run(gpu, &heap, "alloc_chunk", &[0; 122]);
        assert_eq!(ok(&a), singles, "{strategy}");
        let none = run(gpu, &heap, "alloc_run", &[0; 1]);
        assert_eq!(ok(&none), 0, "{strategy}: a run past the end");
        heap.grow_to(2 * MIB).unwrap();
        let runs = run(gpu, &heap, "alloc_run", &[0; 17]);
        assert_eq!(ok(&runs), 16, "{strategy}: runs in the new segment");
        assert!(within(&runs, MIB, 2 * MIB), "{strategy}");
        // The chunks left below the old end serve single chunks, but for those that classes
        // on virtualized queues leave to queue chunks.
        let pooled = 128 - singles - reserve;
        let b = run(gpu, &heap, "alloc_chunk", &[0; 10]);
        assert_eq!(
            ok(&b),
            pooled,
            "{strategy}: pooled chunks below the old end"
        );
        assert!(within(&b, 0, MIB), "{strategy}");
        let stats = heap.stats().unwrap();
        assert_eq!(stats.failures.contention, 0, "{strategy}");
        assert_eq!(
            stats.allocations_live,
            (singles + 16 + pooled) as u64,
            "{strategy}"
        );
    }
}

/// A reserved maximum that is not a whole number of chunks: the last segment (4 KiB) holds
/// no whole chunk, so nothing is ever handed out there, and trim releases it at once.
#[test]
fn ouroboros_short_last_segment() {
    let gpu = common::gpu();
    const MIB: u64 = 1 << 20;
    for strategy in [Strategy::OuroPS, Strategy::OuroCS] {
        let config = HeapConfig::new(MIB)
            .max_size(2 * MIB + 4096)
            .max_segment_size(MIB)
            .strategy(strategy);
        let mut heap = GpuHeap::with_config(&gpu.device, &gpu.queue, config).unwrap();
        assert_eq!(heap.layout().segment_count(), 3, "{strategy}");
        assert_eq!(heap.grow_to(2 * MIB + 4096).unwrap(), 2 * MIB + 4096);
        let runs = run(gpu, &heap, "alloc_run", &[0; 40]);
        let ok: Vec<u32> = runs.iter().copied().filter(|&h| h != 0).collect();
        assert_eq!(ok.len(), 32, "{strategy}: 2 MiB of runs");
        assert!(ok.iter().all(|&h| (h as u64 - 1) * 16 + 65536 <= 2 * MIB));
        assert_eq!(
            heap.trim().unwrap(),
            4096,
            "{strategy}: the short segment only"
        );
        run(gpu, &heap, "release", &runs);
        assert_eq!(heap.trim().unwrap(), MIB, "{strategy}: after freeing");
        let again = run(gpu, &heap, "alloc_run", &[0; 40]);
        assert_eq!(again.iter().filter(|&&h| h != 0).count(), 16, "{strategy}");
        assert_eq!(heap.stats().unwrap().failures.contention, 0, "{strategy}");
    }
}
