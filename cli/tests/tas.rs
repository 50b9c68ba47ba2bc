//! The random walks' measurement tools: the step instrumentation against the steps each
//! invocation records, TAS against the sequential walk and Pham & Tu's model, and
//! RW_malloc's out-of-memory utilisation.

#[path = "../../tests/common/mod.rs"]
mod common;

use std::time::Duration;

use gpu_heap::{GpuHeap, HeapConfig, Strategy};
use gpu_heap_cli::tas::{self, TasOptions};
use gpu_heap_cli::utilisation;

#[test]
fn instrumentation_counts_steps_only_when_asked() {
    let gpu = common::gpu();
    for strategy in [
        Strategy::Rw,
        Strategy::RwBm,
        Strategy::Corw,
        Strategy::RwMalloc,
    ] {
        let plain = GpuHeap::with_config(
            &gpu.device,
            &gpu.queue,
            HeapConfig::new(1 << 20).strategy(strategy),
        )
        .unwrap();
        assert_eq!(plain.walk_steps().unwrap(), None);
        // The TAS tool checks the counters against the per-invocation steps it records.
        let options = TasOptions {
            page_bits: 12,
            free_percent: vec![50.0],
            threads: vec![256],
            strategies: vec![strategy],
            rounds: 1,
            ..TasOptions::default()
        };
        if strategy == Strategy::RwMalloc {
            assert!(tas::run(gpu, &options, |_| {}).is_err());
            continue;
        }
        let rows = tas::run(gpu, &options, |_| {}).unwrap();
        assert_eq!(rows.len(), 1);
        assert_eq!(rows[0].failed, 0);
        assert!(rows[0].tas >= 1.0, "{strategy}: {:?}", rows[0]);
    }
}

/// TAS of the GPU walks agrees with the same walk run sequentially on the host (a step
/// count, not a timing; generous bounds for the randomness of 8k-page heaps).
#[test]
fn tas_agrees_with_the_sequential_walk_and_the_model() {
    let gpu = common::gpu();
    let options = TasOptions {
        page_bits: 16,
        free_percent: vec![50.0, 10.0, 2.0],
        threads: vec![200, 1000],
        strategies: vec![Strategy::Rw, Strategy::RwBm],
        rounds: 4,
        ..TasOptions::default()
    };
    let rows = tas::run(gpu, &options, |_| {}).unwrap();
    assert_eq!(rows.len(), 12);
    for r in &rows {
        let seq = r.tas_sequential.unwrap();
        assert_eq!(r.failed, 0, "{r:?}");
        assert!(
            (r.tas - seq).abs() <= 0.15 * seq,
            "measured vs sequential: {r:?}"
        );
        assert!(
            (r.tas - r.tas_model).abs() <= 0.2 * r.tas_model,
            "measured vs model: {r:?}"
        );
    }
}

/// RW_malloc packs sizes that are not powers of two close to the whole heap before it
/// runs out (the paper reports close to 100 %).
#[test]
fn rw_malloc_utilisation_floor() {
    let gpu = common::gpu();
    let rows = utilisation::measure(
        gpu,
        Strategy::RwMalloc,
        4 << 20,
        16,
        &[24, 100, 1000, 3000, 50_000],
        Duration::from_secs(300),
    )
    .unwrap();
    for r in &rows {
        assert_eq!(r.corrupted + r.overlaps, 0, "{r:?}");
        assert!(r.granted >= 0.95, "utilisation below 95 %: {r:?}");
        assert!(r.allocations < r.attempts, "the heap never ran out: {r:?}");
        assert_eq!(r.live_after_free, (0, 0), "{r:?}");
        assert!(
            r.refilled as f64 >= 0.99 * r.allocations as f64,
            "the second fill got less back: {r:?}"
        );
    }
}
