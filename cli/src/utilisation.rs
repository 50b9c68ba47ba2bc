//! Out-of-memory utilisation: how much of the heap a strategy hands out before malloc
//! returns NULL, for one request size at a time (the survey's and Pham & Tu's measure; the
//! paper reports close to 100 % for RW_malloc).
//!
//! One dispatch of more invocations than the heap can hold each mallocs `size` bytes and
//! writes a pattern; the harness verifies the patterns and that no two allocations share a
//! byte; then everything is freed and the heap filled again. Utilisation is granted bytes (size rounded up to the strategy's unit) over heap
//! bytes; the requested fraction is shown beside it.

use std::time::Duration;

use crate::conformance::harness::{Harness, Params, MAX_SLOTS, TALLY_CORRUPTED, TALLY_OK};
use crate::{Error, Result};
use gpu_heap::Failures;
use gpu_heap::Gpu;
use gpu_heap::{HeapConfig, Strategy};

/// One size's result.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Utilisation {
    pub strategy: Strategy,
    pub heap_bytes: u64,
    pub unit_size: u32,
    pub size: u32,
    /// Invocations that called malloc.
    pub attempts: u64,
    pub allocations: u64,
    /// Granted bytes / heap bytes.
    pub granted: f64,
    /// Requested bytes / heap bytes.
    pub requested: f64,
    pub failures: Failures,
    /// Corrupted or overlapping allocations (must be 0).
    pub corrupted: u64,
    pub overlaps: u64,
    /// Live allocations and bytes left after freeing everything (must be 0, 0).
    pub live_after_free: (u64, u64),
    /// Allocations of a second fill of the emptied heap (reuse after free).
    pub refilled: u64,
}

/// Fills a fresh heap of `heap_bytes` with allocations of each size in turn.
pub fn measure(
    gpu: &Gpu,
    strategy: Strategy,
    heap_bytes: u64,
    unit_size: u32,
    sizes: &[u32],
    watchdog: Duration,
) -> Result<Vec<Utilisation>> {
    let mut out = Vec::new();
    for &size in sizes {
        let config = HeapConfig::new(heap_bytes)
            .strategy(strategy)
            .watchdog(watchdog);
        let config = crate::with_pages(config, unit_size, unit_size);
        let probe = gpu_heap::HeapLayout::for_device(&config, &gpu.device)?;
        if size == 0 || size > probe.max_alloc {
            return Err(Error::InvalidOptions(format!(
                "size {size} is outside 1..={} for this heap",
                probe.max_alloc
            )));
        }
        let capacity = probe.capacity_for(size);
        let attempts = (capacity + capacity / 20 + 64).min(MAX_SLOTS as u64) as u32;
        let h = Harness::new(gpu, config, attempts)?;
        h.clear_tally();
        let p = Params {
            slots: attempts,
            size_min: size,
            size_max: size,
            seed: size,
            malloc_permille: 1000,
            free_permille: 1000,
            ..Params::default()
        };
        h.alloc(p)?;
        h.verify(p)?;
        let tally = h.tally()?;
        let placement = h.placement()?;
        let stats = h.heap.stats()?;
        // Free everything, then fill again: the freed memory must come back.
        h.free(p)?;
        let emptied = h.heap.stats()?;
        h.clear_tally();
        h.alloc(Params { round: 1, ..p })?;
        h.verify(p)?;
        let second = h.tally()?;
        let second_placement = h.placement()?;
        let layout = h.heap.layout();
        let ok = tally[TALLY_OK] as u64;
        out.push(Utilisation {
            strategy,
            heap_bytes: layout.bytes,
            unit_size,
            size,
            attempts: attempts as u64,
            allocations: ok,
            granted: (ok * layout.granted_bytes(size)) as f64 / layout.bytes as f64,
            requested: (ok * size as u64) as f64 / layout.bytes as f64,
            failures: stats.failures,
            corrupted: (tally[TALLY_CORRUPTED] + second[TALLY_CORRUPTED]) as u64,
            overlaps: placement.overlaps
                + placement.misplaced
                + second_placement.overlaps
                + second_placement.misplaced,
            live_after_free: (emptied.allocations_live, emptied.bytes_live),
            refilled: second[TALLY_OK] as u64,
        });
    }
    Ok(out)
}
