//! A page-based malloc whose rounds run out while its class semaphore's count of batches in
//! production (E) is at its cap still gets a page: its last production goes ahead
//! unregistered (`ouro_help_last`) instead of failing with contention.
//!
//! On the H200 that cap was reached by P-VL with a million mallocs in flight. lavapipe does
//! not get there, so the test puts E at its cap before the mallocs run: none can register a
//! batch, all wait out their rounds while E says batches are on their way, and each then
//! produces. It also marks the class's fresh run as being installed, so that the mallocs,
//! which find no page queued, take the queue path (ouroboros/fresh_runs.wgsl gives up
//! after its rounds) instead of the run's pages.

mod common;

use common::Kernel;
use gpu_heap::{GpuHeap, HeapConfig, Strategy};

const THREADS: u32 = 64;

/// The `saturate` entry point, appended to common::PATTERN_KERNEL's alloc and check.
const SATURATE: &str = r#"
@compute @workgroup_size(1)
fn saturate() {
    atomicStore(&gpu_heap_meta[gpu_heap_ouro_queue_meta(0u) + 1u], GPU_HEAP_BSEM_E_MAX << GPU_HEAP_BSEM_R_BITS);
    atomicStore(&gpu_heap_meta[gpu_heap_ouro_queue_meta(0u) + GPU_HEAP_OQ_FRESH_RUN], GPU_HEAP_OURO_FRESH_BUSY);
}
"#;

#[test]
fn ouro_p_s_malloc_produces_with_batches_at_their_cap() {
    let gpu = common::gpu();
    let heap = GpuHeap::with_config(
        &gpu.device,
        &gpu.queue,
        HeapConfig::new(8 << 20)
            .strategy(Strategy::OuroPS)
            .watchdog(common::WATCHDOG),
    )
    .unwrap();
    let handles = common::storage(gpu, "handles", THREADS as u64 * 4);
    let source = format!("{}{SATURATE}", common::PATTERN_KERNEL);
    let kernel = |entry| Kernel::new(gpu, &heap, &source, entry, &[common::RW]);
    kernel("saturate").run(gpu, &heap, &[&handles], 1);
    kernel("alloc").run(gpu, &heap, &[&handles], THREADS / 64);

    let got = common::read_words(gpu, &handles, THREADS as u64);
    let stats = heap.stats().unwrap();
    assert_eq!(
        stats.failures.contention, 0,
        "mallocs failed with contention"
    );
    assert_eq!(
        stats.failures.out_of_memory, 0,
        "mallocs failed out of memory"
    );
    assert!(got.iter().all(|&h| h != 0), "a NULL handle: {got:?}");
    // 16-byte allocations at distinct 16-byte units never overlap.
    let mut sorted = got.clone();
    sorted.sort_unstable();
    sorted.dedup();
    assert_eq!(sorted.len(), got.len(), "two mallocs got the same page");

    let report = heap.ouroboros_report().unwrap().expect("an Ouroboros heap");
    let events = report.page_events;
    assert!(events.out_of_rounds > 0, "no malloc waited out its rounds");
    assert!(
        events.unregistered > 0,
        "no production went ahead unregistered: {events:?}"
    );
    assert!(events.unregistered <= events.out_of_rounds, "{events:?}");
    // Unregistered productions retire nothing: E is still at its cap (4095), R back at 0.
    let class = &report.classes[0];
    assert_eq!(class.batches_in_production, 4095, "E after the mallocs");
    assert_eq!(class.reserved, 0, "R after the mallocs");
    assert_eq!(class.live_pages, THREADS as u64);

    kernel("check").run(gpu, &heap, &[&handles], THREADS / 64);
    let bad = common::read_words(gpu, &handles, THREADS as u64);
    assert!(bad.iter().all(|&b| b == 0), "corrupted words: {bad:?}");
    let stats = heap.stats().unwrap();
    assert_eq!(stats.failures.invalid_free, 0, "frees rejected");
    assert_eq!(
        heap.ouroboros_report().unwrap().unwrap().classes[0].live_pages,
        0
    );
}
