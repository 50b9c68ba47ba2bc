//! The conformance suite on the default adapter (lavapipe in CI): every scenario for every
//! strategy, each dispatch under the watchdog.

#[path = "../../tests/common/mod.rs"]
mod common;

use gpu_heap::Strategy;
use gpu_heap_cli::conformance::{self, Options, Scenario};

/// Runs `scenario` for every strategy of the registry and fails with every strategy's
/// problems at once.
fn check(scenario: Scenario) {
    let gpu = common::gpu();
    let options = Options {
        // 512 MiB: several segments on lavapipe (128 MiB bindings).
        heap_size: 512 << 20,
        slots: 8192,
        // 8192 invocations holding 4 blocks each (the GPU run uses 1024 workgroups or more).
        workgroups: 128,
        // llvmpipe compiles a pipeline inside its first dispatch (see common::WATCHDOG).
        watchdog: common::WATCHDOG,
        ..Options::default()
    };
    let mut failed = Vec::new();
    for &strategy in Strategy::ALL {
        let result = conformance::run(gpu, strategy, scenario, &options);
        if !result.passed {
            failed.push(format!("{strategy}:\n  {}", result.problems.join("\n  ")));
        } else if result.operations == 0 && scenario != Scenario::HostBadInput {
            failed.push(format!("{strategy}: no operations"));
        }
    }
    assert!(
        failed.is_empty(),
        "{} failed for:\n{}",
        scenario.name(),
        failed.join("\n")
    );
}

#[test]
fn all_scenarios_are_tested() {
    assert_eq!(
        Scenario::ALL.len(),
        10,
        "add a test below for the new scenario"
    );
}

#[test]
fn basic() {
    check(Scenario::Basic);
}

#[test]
fn churn() {
    check(Scenario::Churn);
}

#[test]
fn exhaustion() {
    check(Scenario::Exhaustion);
}

#[test]
fn device_bad_input() {
    check(Scenario::DeviceBadInput);
}

#[test]
fn host_bad_input() {
    check(Scenario::HostBadInput);
}

#[test]
fn utilisation() {
    check(Scenario::Utilisation);
}

#[test]
fn growth() {
    check(Scenario::Growth);
}

#[test]
fn scale() {
    check(Scenario::Scale);
}

#[test]
fn free_all() {
    check(Scenario::FreeAll);
}

#[test]
fn round_trip() {
    check(Scenario::RoundTrip);
}
