//! `gpu-heap bench-report` merges result files of one run (a later file's cells replace the
//! same cells of earlier ones) and refuses to mix runs whose times do not compare. No GPU
//! needed: the files are written here.

use std::path::Path;
use std::process::Command;

use gpu_heap::AdapterDescription;
use gpu_heap_cli::bench::{Record, Report, Timer};

/// One cell of a result file.
fn record(test: &str, strategy: &str, threads: u32, size: u32, ms: (f64, f64)) -> Record {
    Record {
        test: test.into(),
        strategy: strategy.into(),
        threads,
        size,
        malloc_ms: Some(ms.0),
        free_ms: Some(ms.1),
        rounds: 5,
        ..Record::default()
    }
}

fn report(adapter: &str, strategy: &str) -> Report {
    Report {
        adapter: AdapterDescription {
            name: adapter.into(),
            backend: "vulkan".into(),
            driver: "test".into(),
        },
        date: "2026-11-24".into(),
        timer: Timer::Gpu,
        heap_size: 64 << 20,
        rounds: 5,
        quick: true,
        growable: false,
        full_statistics: false,
        unfinished: 0,
        results: vec![record("alloc", strategy, 10_000, 16, (0.01, 0.01))],
    }
}

fn write(dir: &Path, name: &str, r: &Report) -> String {
    let path = dir.join(name);
    std::fs::write(&path, serde_json::to_string(r).unwrap()).unwrap();
    path.to_str().unwrap().to_owned()
}

#[test]
fn merges_one_run_and_refuses_another_adapter() {
    let dir = std::env::temp_dir().join(format!("gpu-heap-bench-report-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let a = write(&dir, "a.json", &report("GPU A", "bump"));
    let cut_short = Report {
        unfinished: 2,
        ..report("GPU A", "rw-bm")
    };
    let b = write(&dir, "b.json", &cut_short);
    let other = write(&dir, "other.json", &report("GPU B", "corw"));
    let merged = dir.join("merged.json");
    let bin = env!("CARGO_BIN_EXE_gpu-heap");

    let ok = Command::new(bin)
        .args(["bench-report", &a, &b, "--merged-json"])
        .arg(&merged)
        .output()
        .unwrap();
    assert!(
        ok.status.success(),
        "{}",
        String::from_utf8_lossy(&ok.stderr)
    );
    let m: Report = serde_json::from_str(&std::fs::read_to_string(&merged).unwrap()).unwrap();
    let strategies: Vec<_> = m.results.iter().map(|r| r.strategy.as_str()).collect();
    assert_eq!(strategies, ["bump", "rw-bm"]);
    assert_eq!(
        m.unfinished, 2,
        "the merged run lost count of unfinished cells"
    );
    let out = String::from_utf8_lossy(&ok.stdout);
    assert!(
        out.contains("2 cells of these runs were not finished"),
        "{out}"
    );

    let refused = Command::new(bin)
        .args(["bench-report", &a, &other])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&refused.stderr);
    assert_eq!(refused.status.code(), Some(2), "a usage error: {err}");
    assert!(err.contains("results that do not compare"), "{err}");

    let missing = Command::new(bin)
        .args(["bench-report"])
        .arg(dir.join("missing.json"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&missing.stderr);
    assert_eq!(missing.status.code(), Some(3), "a set-up failure: {err}");
    assert!(err.contains("missing.json"), "{err}");
    std::fs::remove_dir_all(&dir).ok();
}

/// Arguments clap cannot accept exit with 2, as the tools' own usage errors do.
#[test]
fn zero_counts_are_usage_errors() {
    let bin = env!("CARGO_BIN_EXE_gpu-heap");
    for args in [
        &["conformance", "--slots", "0"][..],
        &["conformance", "--heap-size", "0"],
        &["bench", "--rounds", "0"],
    ] {
        let out = Command::new(bin).args(args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
    }
}

#[test]
fn a_rerun_replaces_the_cells_it_measured_again() {
    let mut run = report("GPU A", "bump");
    run.merge(report("GPU A", "rw-bm")).unwrap();
    let mut rerun = report("GPU A", "bump");
    rerun.results[0].malloc_ms = Some(0.02);
    run.merge(rerun).unwrap();
    let cells: Vec<_> = run
        .results
        .iter()
        .map(|r| (r.strategy.as_str(), r.malloc_ms))
        .collect();
    assert_eq!(cells, [("bump", Some(0.02)), ("rw-bm", Some(0.01))]);
    assert!(run.merge(report("GPU B", "corw")).is_err());
    let growable = Report {
        growable: true,
        ..report("GPU A", "corw")
    };
    assert!(
        run.merge(growable).is_err(),
        "merged growable with fixed heaps"
    );
    let full = Report {
        full_statistics: true,
        ..report("GPU A", "corw")
    };
    assert!(
        run.merge(full).is_err(),
        "merged full statistics with failures only"
    );
}

/// A cell more than ten times bump's time in the same test, thread count and size is
/// listed; one at nine times is not, nor one without a bump cell to compare with.
#[test]
fn cells_over_ten_times_bump_are_listed() {
    let cell = |strategy: &str, threads: u32, malloc: f64, free: f64| {
        record("accumulate", strategy, threads, 16, (malloc, free))
    };
    let mut r = report("GPU A", "bump");
    r.results = vec![
        cell("bump", 10_000, 0.0075, 0.005),
        cell("ouro-p-s", 10_000, 0.56, 0.04),
        cell("rw-bm", 10_000, 0.0675, 0.006),
        cell("rw-bm", 20_000, 1.0, 1.0),
    ];
    let slow = gpu_heap_cli::bench::slow_cells(&r);
    let listed: Vec<_> = slow
        .iter()
        .map(|c| (c.strategy.as_str(), c.pass, c.threads))
        .collect();
    assert_eq!(listed, [("ouro-p-s", "malloc", 10_000)]);
    assert!((slow[0].ratio() - 0.56 / 0.0075).abs() < 1e-9);
    let comparison = gpu_heap_cli::bench::comparison(&r);
    assert!(comparison.contains("| accumulate | ouro-p-s | 10000 | 16 | malloc |"));
    assert!(comparison.contains("1 pass over 10x bump (ouro-p-s 1)."));
}

/// The count of slow passes per strategy, most first: the line before the list.
#[test]
fn slow_passes_are_counted_per_strategy() {
    let cell = |strategy: &str, size: u32, malloc: f64, free: f64| {
        record("alloc", strategy, 1_000_000, size, (malloc, free))
    };
    let mut r = report("GPU A", "bump");
    r.results = vec![
        cell("bump", 16, 0.03, 0.01),
        cell("bump", 64, 0.03, 0.01),
        cell("tbuddy", 16, 0.14, 0.12),
        cell("ualloc", 16, 0.31, 0.05),
        cell("ualloc", 64, 0.35, 0.11),
        cell("rw-bm", 64, 0.035, 0.018),
    ];
    let slow = gpu_heap_cli::bench::slow_cells(&r);
    assert_eq!(
        gpu_heap_cli::bench::slow_counts(&slow),
        [("ualloc", 3), ("tbuddy", 1)]
    );
    assert_eq!(
        gpu_heap_cli::bench::slow_summary(&slow),
        "4 passes over 10x bump (ualloc 3, tbuddy 1)"
    );
}

/// `--json -` makes standard output one JSON document (the text goes to standard error).
#[test]
fn json_to_standard_output_is_one_document() {
    let bin = env!("CARGO_BIN_EXE_gpu-heap");
    let out = Command::new(bin)
        .args(["info", "--json", "-"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let info: serde_json::Value = serde_json::from_slice(&out.stdout).expect("one JSON document");
    assert!(info["adapter"]["name"].is_string(), "{info}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("adapter"));
}
