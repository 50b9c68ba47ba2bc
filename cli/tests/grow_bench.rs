//! grow-bench on a small heap: committing segments never copies, and the plot is written.

#[path = "../../tests/common/mod.rs"]
mod common;

#[test]
fn grow_bench_runs_small_and_never_copies() {
    let gpu = common::gpu();
    let options = gpu_heap_cli::bench::grow::GrowOptions {
        initial: 1 << 20,
        max: 8 << 20,
        rounds: 1,
        ..Default::default()
    };
    let report = gpu_heap_cli::bench::grow::run(gpu, &options).unwrap();
    let commit: Vec<_> = report
        .results
        .iter()
        .filter(|r| r.method == "commit")
        .collect();
    let copy: Vec<_> = report
        .results
        .iter()
        .filter(|r| r.method == "copy")
        .collect();
    // 1 -> 2 -> 4 -> 8 MiB for each of the two default strategies, and for the copy.
    assert_eq!(commit.len(), 6);
    assert_eq!(copy.len(), 3);
    for r in &commit {
        assert_eq!(r.copied_bytes, 0);
        assert_eq!(r.to_bytes, 2 * r.from_bytes);
        // Peak: the committed size plus metadata and placeholder, never old + new.
        assert!(r.peak_bytes >= r.to_bytes && r.peak_bytes < r.to_bytes + r.from_bytes);
        assert!(r.ms.is_some() && r.grow_ms.is_some());
    }
    for r in &copy {
        assert_eq!(r.peak_bytes, r.from_bytes + r.to_bytes);
    }
    let dir = std::env::temp_dir().join(format!("gpu-heap-grow-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let svg = dir.join("grow.svg");
    gpu_heap_cli::bench::grow::plot(&report, &svg).unwrap();
    assert!(std::fs::read_to_string(&svg).unwrap().contains("<svg"));
    std::fs::remove_dir_all(&dir).unwrap();
}
