//! Bad input on the device (counted, defined outcomes) and on the host (typed errors).

use super::checks::{expect_all_freed, Checks};
use super::harness::{Harness, TALLY_BAD_INPUT, TALLY_CORRUPTED, TALLY_FREE_AT_ONCE, TALLY_OK};
use super::{all, heap_config, Options};
use crate::Error;
use gpu_heap::Error as HeapError;
use gpu_heap::{
    Gpu, GpuHeap, HeapConfig, OuroborosParams, RandomWalkParams, SegmentBinding, Strategy,
    StrategyParams, TBuddyParams,
};

pub(super) fn device_bad_input(
    gpu: &Gpu,
    strategy: Strategy,
    options: &Options,
    checks: &mut Checks,
) -> crate::Result<()> {
    let h = Harness::new(gpu, heap_config(strategy, options), options.slots)?;
    h.clear_tally();
    h.bad_input()?;
    let tally = h.tally()?;
    let got = &tally[TALLY_BAD_INPUT..TALLY_BAD_INPUT + 9];
    // Statuses: 0 ok, 3 invalid request, 4 invalid free. Steps: malloc(0), malloc(max + 1),
    // malloc(u32::MAX), free(NULL), malloc(16), free(p + 1), free(u32::MAX), free(p), free(p).
    let (want, invalid_frees): ([u32; 9], u64) = if !strategy.detects_double_free() {
        // Bump rejects handles past its head (p + 1 is, on a fresh heap) but cannot tell a
        // freed block from a live one.
        ([3, 3, 3, 0, 0, 4, 4, 0, 0], 2)
    } else {
        ([3, 3, 3, 0, 0, 4, 4, 0, 4], 3)
    };
    checks.equal("statuses of the bad-input steps", got, &want[..]);
    checks.equal("corrupted by invalid frees", tally[TALLY_CORRUPTED], 0);
    let stats = h.heap.stats()?;
    checks.equal(
        "invalid requests counted",
        stats.failures.invalid_request,
        3,
    );
    checks.equal(
        "invalid frees counted",
        stats.failures.invalid_free,
        invalid_frees,
    );
    checks.equal(
        "malloc calls counted (free(0) is not a call)",
        (stats.malloc_calls, stats.free_calls),
        (4, 4),
    );
    if strategy.reuses_memory() {
        checks.equal("live after bad input", stats.allocations_live, 0);
    }
    checks.finish(&h, &stats, "bad input")?;
    // 64 invocations free one allocation at once: one free releases it, and a strategy
    // that detects double frees reports the other 63 (aggregated frees must not let two
    // of them succeed).
    h.clear_tally();
    h.free_at_once()?;
    let tally = h.tally()?;
    let before = stats.failures;
    let stats = h.heap.stats()?;
    let (ok, invalid) = if strategy.detects_double_free() {
        (1, 63)
    } else {
        (64, 0)
    };
    checks.equal(
        "one handle freed by 64 invocations at once: succeeded, invalid",
        (tally[TALLY_FREE_AT_ONCE], tally[TALLY_FREE_AT_ONCE + 1]),
        (ok, invalid),
    );
    checks.equal(
        "its invalid frees counted",
        stats.failures.since(&before).invalid_free,
        invalid as u64,
    );
    if strategy.reuses_memory() {
        checks.equal("live after the frees at once", stats.allocations_live, 0);
    }
    // The heap still works: a full round of mallocs on the same heap.
    let size = h.heap.layout().max_alloc.min(256);
    h.clear_tally();
    let p = all(options.slots, size, size, 99);
    h.alloc(p)?;
    h.free(p)?;
    let tally = h.tally()?;
    checks.equal("mallocs after bad input", tally[TALLY_OK], options.slots);
    expect_all_freed(&h, strategy, checks, "round after bad input")
}

pub(super) fn host_bad_input(
    gpu: &Gpu,
    strategy: Strategy,
    options: &Options,
    checks: &mut Checks,
) -> crate::Result<()> {
    let (device, queue) = (&gpu.device, &gpu.queue);
    let base = heap_config(strategy, options);
    let mut expect =
        |what: &str, result: gpu_heap::Result<GpuHeap>, ok: fn(&HeapError) -> bool| match result {
            Err(e) if ok(&e) => {}
            Err(e) => checks.problems.push(format!("{what}: wrong error: {e}")),
            Ok(_) => checks.problems.push(format!("{what}: accepted")),
        };
    expect(
        "zero size",
        GpuHeap::with_config(device, queue, base.clone().size(0)),
        |e| matches!(e, HeapError::ZeroSize),
    );
    expect(
        "1 TiB heap",
        GpuHeap::with_config(device, queue, base.clone().size(1 << 40)),
        |e| matches!(e, HeapError::TooLarge { .. }),
    );
    expect(
        "a zero watchdog",
        GpuHeap::with_config(
            device,
            queue,
            base.clone().watchdog(std::time::Duration::ZERO),
        ),
        |e| matches!(e, HeapError::InvalidConfig(_)),
    );
    expect(
        "a bind group index at max_bind_groups",
        GpuHeap::with_config(
            device,
            queue,
            base.clone()
                .bind_group_index(device.limits().max_bind_groups),
        ),
        |e| matches!(e, HeapError::LimitTooLow { .. }),
    );
    let too_many = base
        .clone()
        .max_segment_size(1 << 20)
        .segment_binding(SegmentBinding::Separate)
        .max_separate_bindings(2);
    expect(
        "8 separate segments over a cap of 2",
        GpuHeap::with_config(device, queue, too_many.size(8 << 20)),
        |e| matches!(e, HeapError::TooLarge { .. }),
    );
    if !strategy.supports_growth() {
        expect(
            "a growable heap of a strategy without growth hooks",
            GpuHeap::with_config(device, queue, base.clone().max_size(2 * base.size)),
            |e| matches!(e, HeapError::GrowthUnsupported { .. }),
        );
    }
    // A device without binding arrays, asked for a binding array of segments.
    let (bare, bare_queue) =
        pollster::block_on(gpu.adapter.request_device(&wgpu::DeviceDescriptor {
            label: Some("gpu-heap without binding arrays"),
            required_limits: gpu.adapter.limits(),
            ..Default::default()
        }))
        .map_err(|e| Error::Gpu {
            what: "requesting a device without features".into(),
            message: e.to_string(),
        })?;
    let arrays = base
        .clone()
        .max_segment_size(1 << 20)
        .segment_binding(SegmentBinding::BindingArray);
    expect(
        "binding array without the features",
        GpuHeap::with_config(&bare, &bare_queue, arrays.size(4 << 20)),
        |e| matches!(e, HeapError::MissingFeatures { .. }),
    );
    bad_parameters(gpu, strategy, &base, checks)?;
    // A pipeline layout that would put a user's layout at the heap's index, or two at one.
    let heap = GpuHeap::with_config(device, queue, base)?;
    let user = gpu_heap::buffer_group_layout(
        device,
        "user",
        &[wgpu::BufferBindingType::Storage { read_only: false }],
    );
    let at = heap.bind_group_index();
    for (what, others) in [
        ("a layout at the heap's index", vec![(at, &user)]),
        (
            "two layouts at one index",
            vec![(at + 1, &user), (at + 1, &user)],
        ),
    ] {
        match heap.pipeline_layout(&others) {
            Err(HeapError::BindGroupIndexTaken { .. }) => {}
            Err(e) => checks.problems.push(format!("{what}: wrong error: {e}")),
            Ok(_) => checks.problems.push(format!("{what}: accepted")),
        }
    }
    Ok(())
}

/// Every family's parameters, one bad value at a time: a strategy that reads the value
/// ([`Strategy::params`], and for the random walks whether they have pages or units)
/// refuses it with a typed error, and every other strategy plans the same heap as without
/// it (so neither a bad value nor a family's parameters can leak into another family).
fn bad_parameters(
    gpu: &Gpu,
    strategy: Strategy,
    base: &HeapConfig,
    checks: &mut Checks,
) -> crate::Result<()> {
    let (limits, features) = (gpu.device.limits(), gpu.device.features());
    let module = |config: &HeapConfig| gpu_heap::flatten(config, &limits, features);
    let reference = module(base)?;
    let params = strategy.params();
    let walks = params == StrategyParams::RandomWalk;
    let (pages, units) = (
        walks && strategy.has_fixed_pages(),
        walks && !strategy.has_fixed_pages(),
    );
    let ouroboros = params == StrategyParams::Ouroboros;
    let walk = |page_size, unit_size| RandomWalkParams {
        page_size,
        unit_size,
    };
    let good = base.random_walk;
    let ouro = OuroborosParams::default();
    let bad = [
        (
            "page size 48",
            pages,
            base.clone().random_walk(walk(48, good.unit_size)),
        ),
        (
            "unit size 48",
            units,
            base.clone().random_walk(walk(good.page_size, 48)),
        ),
        (
            "unit size 8",
            units,
            base.clone().random_walk(walk(good.page_size, 8)),
        ),
        (
            "leaf size 48",
            params == StrategyParams::TBuddy,
            base.clone().tbuddy(TBuddyParams { leaf_size: 48 }),
        ),
        (
            "chunk size 3000",
            ouroboros,
            base.clone().ouroboros(OuroborosParams {
                chunk_size: 3000,
                ..ouro
            }),
        ),
        (
            "smallest page 24",
            ouroboros,
            base.clone().ouroboros(OuroborosParams {
                min_page_size: 24,
                ..ouro
            }),
        ),
        (
            "largest malloc 100000",
            ouroboros,
            base.clone().ouroboros(OuroborosParams {
                max_alloc: 100_000,
                ..ouro
            }),
        ),
    ];
    for (what, read, config) in bad {
        match (read, module(&config)) {
            (true, Err(HeapError::InvalidConfig(_))) => {}
            (true, Err(e)) => checks.problems.push(format!("{what}: wrong error: {e}")),
            (true, Ok(_)) => checks.problems.push(format!("{what}: accepted")),
            (false, Ok(text)) if text == reference => {}
            (false, Ok(_)) => checks
                .problems
                .push(format!("{what}: changed a heap that does not read it")),
            (false, Err(e)) => checks.problems.push(format!(
                "{what}: refused by a heap that does not read it: {e}"
            )),
        }
    }
    Ok(())
}
