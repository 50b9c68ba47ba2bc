//! Installs Mesa's lavapipe from the distribution (scripts/install-lavapipe.sh) when this
//! machine has no GPU and no lavapipe that gpu-heap can use, so that `cargo run --example
//! quickstart` and `cargo test` work on a fresh machine with nothing done before them; and
//! Node.js with npm (scripts/install-node.sh) where they are missing, for the web tests
//! (cli/tests/web.rs), and on Debian Chromium (scripts/install-chromium.sh) for the demo
//! page test, on the same conditions but the first two of lavapipe's list.
//!
//! It installs lavapipe only when all of these hold, and otherwise does nothing:
//! - Linux with apt (Debian, Ubuntu), and `GPU_HEAP_NO_LAVAPIPE_INSTALL` is not set;
//! - no GPU device node (`/dev/dri/renderD*`, `/dev/nvidia*`, WSL's `/dev/dxg`): a machine
//!   with a GPU keeps the drivers its owner chose;
//! - Mesa's Vulkan drivers are missing or older than 24 (Mesa 22's lavapipe cuts every loop
//!   after 65,535 iterations; gpu-heap refuses it).
//!
//! It needs root, or `sudo` that does not ask for a password; without either it prints the
//! command to run and the tests then say the same.

use std::path::Path;
use std::process::Command;

include!("src/host.rs");

const OPT_OUT: &str = "GPU_HEAP_NO_LAVAPIPE_INSTALL";
/// The first Mesa release whose lavapipe gpu-heap accepts (see `Error::UnsupportedAdapter`).
const MESA_MIN_MAJOR: u32 = 24;

fn main() {
    println!("cargo:rerun-if-env-changed={OPT_OUT}");
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=src/host.rs");
    if std::env::var_os(OPT_OUT).is_some() || !cfg!(target_os = "linux") {
        return;
    }
    // Built again when the driver set changes (an install adds ICD files).
    for dir in ["/usr/share/vulkan/icd.d", "/etc/vulkan/icd.d"] {
        if Path::new(dir).exists() {
            println!("cargo:rerun-if-changed={dir}");
        }
    }
    if !has_apt() {
        return;
    }
    if find_on_path("node").is_none() || find_on_path("npm").is_none() {
        println!(
            "cargo:warning=gpu-heap: no Node.js or npm: installing them for the web tests \
             (scripts/install-node.sh; set {OPT_OUT} to skip)"
        );
        install("install-node.sh", "Node.js and npm");
    }
    if is_debian() && find_on_path("chromium").is_none() {
        println!(
            "cargo:warning=gpu-heap: no Chromium: installing Debian's for the demo page test \
             (scripts/install-chromium.sh; set {OPT_OUT} to skip)"
        );
        install("install-chromium.sh", "Chromium");
    }
    if has_gpu() {
        return;
    }
    match mesa_major() {
        Some(major) if major >= MESA_MIN_MAJOR => return,
        found => {
            let what = found.map_or("no Mesa Vulkan driver".to_string(), |m| format!("Mesa {m}"));
            println!(
                "cargo:warning=gpu-heap: no GPU and {what}: installing Mesa's lavapipe \
                 (scripts/install-lavapipe.sh; set {OPT_OUT} to skip)"
            );
        }
    }
    let (status, root, script) = run_script("install-lavapipe.sh");
    match (status, mesa_major()) {
        (Ok(s), Some(major)) if s.success() && major >= MESA_MIN_MAJOR => println!(
            "cargo:warning=gpu-heap: this build installed Mesa {major}'s lavapipe for the \
             examples and tests"
        ),
        (Ok(s), found) if s.success() => println!(
            "cargo:warning=gpu-heap: the distribution's Mesa is {}, older than \
             {MESA_MIN_MAJOR}: the tests will find no adapter they can use",
            found.map_or("missing".to_string(), |m| m.to_string())
        ),
        _ if root => println!(
            "cargo:warning=gpu-heap: installing lavapipe failed; run `bash {script}` to see \
             why, or the tests will find no adapter they can use"
        ),
        _ => println!(
            "cargo:warning=gpu-heap: installing lavapipe needs root; run `sudo {script}`, or \
             the tests will find no adapter they can use"
        ),
    }
}

/// Runs `scripts/<name>` as root (directly, or through `sudo` that asks for no password);
/// returns its status, whether this build runs as root, and the script's path.
fn run_script(name: &str) -> (std::io::Result<std::process::ExitStatus>, bool, String) {
    let script = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../scripts")
        .join(name);
    let script = script.to_string_lossy().into_owned();
    let root = Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0");
    let status = if root {
        Command::new("bash").arg(&script).status()
    } else {
        Command::new("sudo").args(["-n", "bash", &script]).status()
    };
    (status, root, script)
}

/// Installs `what` with `scripts/<name>`, warning with the command to run if that fails.
fn install(name: &str, what: &str) {
    let (status, root, script) = run_script(name);
    if !status.is_ok_and(|s| s.success()) {
        let how = if root { "bash" } else { "sudo" };
        println!("cargo:warning=gpu-heap: installing {what} failed; run `{how} {script}`");
    }
}

/// A GPU device node: Mesa's hardware drivers (`/dev/dri/renderD*`), NVIDIA's, or WSL's.
fn has_gpu() -> bool {
    let any = |dir: &str, prefix: &str| {
        std::fs::read_dir(dir).is_ok_and(|entries| {
            entries
                .flatten()
                .any(|e| e.file_name().to_string_lossy().starts_with(prefix))
        })
    };
    any("/dev/dri", "renderD") || any("/dev", "nvidia") || Path::new("/dev/dxg").exists()
}

fn has_apt() -> bool {
    Path::new("/usr/bin/apt-get").exists() && Path::new("/usr/bin/dpkg-query").exists()
}

/// The major version of the installed Mesa Vulkan drivers (`mesa-vulkan-drivers`), if any.
fn mesa_major() -> Option<u32> {
    let out = Command::new("dpkg-query")
        .args(["-W", "-f=${Status} ${Version}", "mesa-vulkan-drivers"])
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    let version = text.strip_prefix("install ok installed ")?;
    let version = version.split_once(':').map_or(version, |(_epoch, v)| v);
    version.split('.').next()?.parse().ok()
}
