//! gpu-heap from JavaScript: `web/gpu-heap.js` and the flattened modules on Dawn (the
//! `webgpu` npm package, on whatever Vulkan adapter the machine has: lavapipe in CI). For
//! every strategy, `gpu-heap flatten --manifest` writes the module and its manifest into a
//! case directory, and `web/test/heap.test.js` runs the conformance basics through the JS
//! module (web/test says what it checks). Needs Node.js 20 or later and npm, which install
//! the pinned package from `web/package-lock.json`.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Runs `cmd` to its end, or kills it after `limit`; panics unless it succeeded.
fn run_bounded(mut cmd: Command, what: &str, limit: Duration) {
    let mut child = cmd
        .stdin(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("{what}: cannot start ({e}); Node.js 20+ and npm are needed"));
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            assert!(status.success(), "{what} failed: {status}");
            return;
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{what} ran past its {limit:?} limit and was stopped");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn web_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../web")
}

#[test]
fn every_strategy_through_the_js_module_on_dawn() {
    let cases = std::env::temp_dir().join(format!("gpu-heap-web-{}", std::process::id()));
    std::fs::create_dir_all(&cases).unwrap();
    let bin = env!("CARGO_BIN_EXE_gpu-heap");
    // Every strategy at WebGPU's defaults in bind group 0; and those that use subgroups,
    // with WebGPU's `subgroups` feature, in bind group 2 (web/test keeps its own bindings
    // in group 1).
    let plain = gpu_heap::Strategy::ALL
        .iter()
        .map(|s| (s.to_string(), false));
    let subgroups = ["rw-bm", "rw", "corw", "rw-malloc", "ualloc"].map(|s| (s.to_string(), true));
    for (strategy, with_subgroups) in plain.chain(subgroups) {
        let name = if with_subgroups {
            format!("{strategy}+subgroups")
        } else {
            strategy.clone()
        };
        let wgsl = std::fs::File::create(cases.join(format!("{name}.wgsl"))).unwrap();
        let mut flatten = Command::new(bin);
        flatten
            .args(["flatten", "--strategy", &strategy, "--heap-size", "4MiB"])
            .arg("--manifest")
            .arg(cases.join(format!("{name}.json")))
            .stdout(wgsl);
        if with_subgroups {
            flatten.args(["--subgroups", "--bind-group", "2"]);
        }
        run_bounded(flatten, &format!("flatten {name}"), Duration::from_secs(60));
    }

    let web = web_dir();
    if !web.join("node_modules/webgpu").exists() {
        let mut install = Command::new("npm");
        install
            .args(["ci", "--no-audit", "--no-fund"])
            .current_dir(&web);
        run_bounded(install, "npm ci (web/)", Duration::from_secs(600));
    }
    let mut node = Command::new("node");
    node.args(["--test", "test/"])
        .current_dir(&web)
        .env("GPU_HEAP_WEB_CASES", &cases);
    run_bounded(node, "node --test (web/)", Duration::from_secs(1800));
    let _ = std::fs::remove_dir_all(&cases);
}
