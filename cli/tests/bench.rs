//! The benchmark suite's quick version on the default adapter (lavapipe in CI), so the suite
//! never rots. Checks what every cell measured, never how fast: no timing thresholds.

#[path = "../../tests/common/mod.rs"]
mod common;

use gpu_heap::Strategy;
use gpu_heap_cli::bench::{self, Options, Record, Test};

fn extra(r: &Record, key: &str) -> f64 {
    *r.extra
        .get(key)
        .unwrap_or_else(|| panic!("{} {}: no {key} in {:?}", r.test, r.strategy, r.extra))
}

#[test]
fn quick_suite_runs_and_measures_every_cell() {
    let gpu = common::gpu();
    let options = Options::quick();
    // Each finished cell comes with the report so far: one more result, one fewer to go.
    let (mut total, mut finished) = (0, 0);
    let report = bench::run(gpu, &options, |p| match p {
        bench::Progress::Starting { total: t, .. } => total = t,
        bench::Progress::Finished { record, report } => {
            finished += 1;
            assert_eq!(report.results.len(), finished);
            assert_eq!(report.unfinished, total - finished);
            assert!(
                report.results.iter().any(|r| r.cell() == record.cell()),
                "{record:?} not in the report"
            );
        }
    })
    .expect("the quick suite runs");
    assert_eq!((finished, report.unfinished), (report.results.len(), 0));
    let json = serde_json::to_value(&report).unwrap();
    for key in ["adapter", "date", "results"] {
        assert!(json.get(key).is_some(), "bench JSON lacks {key}");
    }
    for strategy in Strategy::ALL {
        assert!(
            report.results.iter().any(|r| r.strategy == strategy.name()),
            "no results for {strategy}"
        );
    }
    let subgroups = gpu.device.features().contains(wgpu::Features::SUBGROUP);
    for r in &report.results {
        let what = format!("{} {} {} x {}", r.test, r.strategy, r.threads, r.size);
        assert_eq!(r.corrupted, 0, "{what}: corrupted words");
        assert_eq!(r.failures.contention, 0, "{what}: contention failures");
        if r.malloc_ms.is_none() && r.extra.is_empty() {
            // Skipped cells say why: too large for a fixed page, or no subgroups.
            assert!(r.note.is_some(), "{what}: skipped without a reason");
            assert!(r.test != "subgroup" || !subgroups, "{what}: {:?}", r.note);
            continue;
        }
        match r.test.as_str() {
            "alloc" | "mixed" | "scaling" | "subgroup" => {
                assert!(!r.failed, "{what}: {:?}", r.failures);
                assert!(
                    r.malloc_ms.unwrap() > 0.0 && r.free_ms.unwrap() > 0.0,
                    "{what}"
                );
                let m = r.malloc.unwrap();
                assert!(m.min <= m.median && m.median <= m.max, "{what}: {m:?}");
                // Every timed round is kept, in order, and the summary is made of them.
                let rounds = r.rounds as usize;
                assert_eq!(r.malloc_rounds_ms.len(), rounds, "{what}");
                assert_eq!(r.free_rounds_ms.len(), rounds, "{what}");
                let lowest = r.malloc_rounds_ms.iter().copied().fold(f64::MAX, f64::min);
                assert_eq!(lowest, m.min, "{what}: {:?}", r.malloc_rounds_ms);
            }
            "accumulate" => {
                assert!(!r.failed && r.malloc_ms.unwrap() > 0.0, "{what}");
                assert_eq!(r.malloc_rounds_ms.len(), r.rounds as usize, "{what}");
            }
            "fragmentation" => {
                // Without reuse the rounds run out of memory, as the note says.
                let reuses = r.strategy.parse::<Strategy>().unwrap().reuses_memory();
                assert!(!r.failed || !reuses, "{what}: {:?}", r.failures);
                assert!(extra(r, "range_bytes") >= extra(r, "ideal_bytes"), "{what}");
            }
            "out-of-memory" => {
                assert!(!r.failed, "{what}: {:?} {:?}", r.failures, r.note);
                let u = extra(r, "utilisation");
                assert!(u > 0.0 && u <= 1.0, "{what}: utilisation {u}");
                assert!(r.failures.out_of_memory > 0, "{what}: never ran out");
            }
            "work-generation" => {
                assert!(!r.failed, "{what}: {:?}", r.failures);
                assert!(extra(r, "baseline_total_ms") > 0.0, "{what}");
            }
            "write" => {
                assert!(!r.failed, "{what}: {:?}", r.failures);
                assert!(extra(r, "write_ms") > 0.0 && extra(r, "baseline_ms") > 0.0);
            }
            "exhaust" => {
                // Running out is expected; anything else marks the cell.
                assert!(!r.failed, "{what}: {:?} {:?}", r.failures, r.note);
                let failed = extra(r, "failed_fraction");
                assert!((0.0..=1.0).contains(&failed), "{what}: failed {failed}");
                assert!(extra(r, "rate_g_per_s") > 0.0, "{what}");
            }
            "semaphores" => {
                assert!(!r.failed, "{what}: {:?}", r.extra);
                assert!(extra(r, "bulk_g_per_s") > 0.0 && extra(r, "counting_g_per_s") > 0.0);
            }
            "init" => assert!(extra(r, "create_ms") > 0.0 && extra(r, "reset_ms") > 0.0),
            other => panic!("unexpected test {other}"),
        }
    }
    let table = bench::comparison(&report);
    assert!(table.contains("| 1000000 × 16 B | malloc |"), "{table}");
    let dir = std::env::temp_dir().join(format!("gpu-heap-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    bench::write_csv(&report, &dir.join("bench.csv")).unwrap();
    let plots = bench::write_plots(&report, &dir.join("plots")).unwrap();
    assert!(plots.len() >= 8, "only {} plots", plots.len());
    let csv = std::fs::read_to_string(dir.join("bench.csv")).unwrap();
    assert_eq!(csv.lines().count(), report.results.len() + 1);
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn a_cell_over_its_budget_stops_and_says_so() {
    let gpu = common::gpu();
    let options = Options {
        strategies: vec![Strategy::Bump],
        tests: vec![Test::Alloc, Test::Accumulate, Test::Fragmentation],
        cell_budget: Some(std::time::Duration::ZERO),
        ..Options::quick()
    };
    let report = bench::run(gpu, &options, |_| {}).expect("the cut suite runs");
    assert!(!report.results.is_empty());
    for r in &report.results {
        let note = r.note.as_deref().unwrap_or_default();
        if r.test == "fragmentation" {
            assert_eq!(extra(r, "rounds_between"), 1.0, "{r:?}");
            assert!(note.contains("1 of 5 rounds of free and malloc"), "{note}");
        } else {
            assert_eq!(r.rounds, 1, "{r:?}");
            assert!(r.malloc_ms.is_some(), "{r:?}: no time from its one round");
            assert!(note.starts_with("1 of 5"), "{note}");
        }
    }
}

#[test]
fn books_after_every_round_balance() {
    let gpu = common::gpu();
    let options = Options {
        strategies: vec![Strategy::UAlloc, Strategy::TBuddy, Strategy::RwBm],
        tests: vec![Test::Alloc, Test::Accumulate],
        books: true,
        ..Options::quick()
    };
    let report = bench::run(gpu, &options, |_| {}).expect("the suite with books runs");
    assert!(!report.results.is_empty());
    for r in &report.results {
        // The alloc test's warm-up round is round 0; accumulate has no warm-up.
        let rounds = if r.test == "alloc" {
            r.rounds + 1
        } else {
            r.rounds
        };
        if r.strategy == "tbuddy" {
            // The tree buddy alone has only the tree's books.
            for round in 0..rounds {
                let key = format!("r{round}_tree_unreachable");
                assert_eq!(extra(r, &key), 0.0, "{r:?}");
            }
            assert!(!r.extra.contains_key("r0_count"), "{r:?}");
            assert!(r.note.is_none(), "{r:?}");
            continue;
        }
        if r.strategy != "ualloc" {
            assert!(r.extra.keys().all(|k| !k.starts_with("r0_")), "{r:?}");
            continue;
        }
        for round in 0..rounds {
            let at = |key: &str| extra(r, &format!("r{round}_{key}"));
            assert_eq!(at("count"), at("free_blocks"), "{r:?}");
            assert_eq!((at("hidden"), at("unreachable")), (0.0, 0.0), "{r:?}");
            assert_eq!(at("tree_unreachable"), 0.0, "{r:?}");
            if r.test == "alloc" {
                // Everything was freed: a bin left is an empty one listed for its give-back
                // (the note would say if one were not).
                assert_eq!(at("bins"), at("empty"), "{r:?}");
            } else {
                assert!(at("bins") > 0.0, "{r:?}");
            }
        }
        assert!(r.note.is_none(), "{r:?}");
    }
}

#[test]
fn compile_only_builds_every_cell_and_measures_nothing() {
    let gpu = common::gpu();
    let options = Options {
        strategies: vec![Strategy::Bump, Strategy::RwBm],
        tests: vec![Test::Alloc],
        compile_only: true,
        ..Options::quick()
    };
    let report = bench::run(gpu, &options, |_| {}).expect("the compile-only suite runs");
    assert!(!report.results.is_empty());
    for r in &report.results {
        assert!(r.malloc_ms.is_none() && r.free_ms.is_none(), "{r:?}");
        assert_eq!(r.rounds, 0, "{r:?}");
        assert_eq!(r.note.as_deref(), Some("pipelines built, nothing measured"));
    }
}

/// `--prime` runs a child process that builds every cell and measures nothing, then
/// measures: the JSON the command leaves has every cell timed.
#[test]
fn prime_builds_in_a_child_then_measures() {
    let dir = std::env::temp_dir().join(format!("gpu-heap-bench-prime-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let json = dir.join("bench.json");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_gpu-heap"))
        .args(["bench", "--quick", "--strategy", "bump", "--test", "alloc"])
        .args(["--rounds", "1", "--prime", "--json"])
        .arg(&json)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("pipelines built, nothing measured"),
        "no child: {stderr}"
    );
    let report: bench::Report =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert!(!report.results.is_empty());
    for r in &report.results {
        assert!(r.malloc_ms.is_some() && r.note.is_none(), "{r:?}");
    }
    std::fs::remove_dir_all(&dir).ok();
}
