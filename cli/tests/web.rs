//! gpu-heap from JavaScript: `web/gpu-heap.js` and the flattened modules on Dawn (the
//! `webgpu` npm package, on whatever Vulkan adapter the machine has: lavapipe in CI). For
//! every strategy, `gpu-heap flatten --manifest` writes the module and its manifest into a
//! case directory, and `web/test/heap.test.js` runs the conformance basics through the JS
//! module (web/test says what it checks); then the demo page (web/demo) runs in headless
//! Chromium, its WebGPU on Chromium's software adapter, and must end with PASS and a
//! screenshot. Needs Node.js 18 or later and npm, which install the pinned packages from
//! `web/package-lock.json`, and on Debian Chromium (the first build installs both there).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use gpu_heap_lavapipe::{find_on_path, is_debian};

/// Runs `cmd` to its end, or stops it and everything it started after `limit`; panics
/// unless it succeeded.
fn run_bounded(mut cmd: Command, what: &str, limit: Duration) {
    // Its own process group, so that a stop also reaches the processes it starts (node
    // --test runs each test file in one).
    #[cfg(unix)]
    std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
    let mut child = cmd
        .stdin(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("{what}: cannot start ({e}); Node.js 18+ and npm are needed"));
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            assert!(status.success(), "{what} failed: {status}");
            return;
        }
        if start.elapsed() > limit {
            #[cfg(unix)]
            let _ = Command::new("kill")
                .args(["-KILL", &format!("-{}", child.id())])
                .status();
            let _ = child.kill();
            let _ = child.wait();
            panic!("{what} ran past its {limit:?} limit and was stopped");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// The major version of the `node` on PATH (the test runner needs 18 or later).
fn node_major() -> Option<u32> {
    let out = Command::new("node").arg("--version").output().ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    text.trim()
        .trim_start_matches('v')
        .split('.')
        .next()?
        .parse()
        .ok()
}

fn web_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../web")
}

#[test]
fn every_strategy_through_the_js_module_on_dawn_and_the_demo_page_in_chromium() {
    let cases = std::env::temp_dir().join(format!("gpu-heap-web-{}", std::process::id()));
    std::fs::create_dir_all(&cases).unwrap();
    let bin = env!("CARGO_BIN_EXE_gpu-heap");
    // Every strategy at WebGPU's defaults in bind group 0; and those that use subgroups,
    // with WebGPU's `subgroups` feature, in bind group 2 (web/test keeps its own bindings
    // in group 1).
    let plain = gpu_heap::Strategy::ALL
        .iter()
        .map(|s| (s.to_string(), false));
    let subgroups = [
        "rw-bm",
        "rw",
        "corw",
        "rw-malloc",
        "ouro-c-s",
        "ouro-c-va",
        "ouro-c-vl",
        "tbuddy",
        "ualloc",
    ]
    .map(|s| (s.to_string(), true));
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

    let major = node_major();
    assert!(
        major.is_some_and(|m| m >= 18),
        "the web tests need Node.js 18 or later and npm (found: {major:?}); install them \
         (scripts/install-node.sh on Debian 12 and Ubuntu 24.04, or nodejs.org)"
    );
    let web = web_dir();
    // Every time: a clean install of exactly the locked packages, whatever was there.
    let mut install = Command::new("npm");
    install
        .args(["ci", "--no-audit", "--no-fund"])
        .current_dir(&web);
    run_bounded(install, "npm ci (web/)", Duration::from_secs(600));
    let mut node = Command::new("node");
    node.args(["--test", "test/heap.test.js"])
        .current_dir(&web)
        .env("GPU_HEAP_WEB_CASES", &cases);
    run_bounded(node, "node --test (web/)", Duration::from_secs(1800));

    // The demo page in headless Chromium, with its screenshot.
    match chromium() {
        Some(chromium) => {
            let shot = Path::new(env!("CARGO_TARGET_TMPDIR")).join("web-demo.png");
            let _ = std::fs::remove_file(&shot);
            let mut demo = Command::new("node");
            demo.args(["--test", "test/demo.test.js"])
                .current_dir(&web)
                .env("GPU_HEAP_WEB_CASES", &cases)
                .env("GPU_HEAP_CHROMIUM", &chromium)
                .env("GPU_HEAP_DEMO_SCREENSHOT", &shot);
            run_bounded(demo, "the demo page in Chromium", Duration::from_secs(900));
            assert!(shot.exists(), "no screenshot of the demo page");
            eprintln!("the demo page's screenshot: {}", shot.display());
        }
        None => {
            // Debian gets Chromium from the first build (dev/lavapipe); elsewhere the page
            // is left to the browsers the machine has.
            assert!(
                !is_debian(),
                "no Chromium for the demo page test: run scripts/install-chromium.sh"
            );
            eprintln!("the demo page test needs Chromium (Debian's chromium package): not run");
        }
    }
    let _ = std::fs::remove_dir_all(&cases);
}

/// Chromium: $GPU_HEAP_CHROMIUM, else `chromium` on PATH.
fn chromium() -> Option<PathBuf> {
    match std::env::var_os("GPU_HEAP_CHROMIUM") {
        Some(path) => Some(path.into()),
        None => find_on_path("chromium"),
    }
}
