//! The conformance suite on the default adapter (lavapipe in CI): every scenario for every
//! strategy, each dispatch under the watchdog.

#[path = "../../tests/common/mod.rs"]
mod common;

use gpu_heap::{Gpu, Strategy};
use gpu_heap_cli::conformance::{self, Options, Scenario};

fn check(strategy: Strategy, scenario: Scenario) {
    let gpu = Gpu::open(None).expect("a GPU adapter (install Mesa's lavapipe without a GPU)");
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
    let result = conformance::run(&gpu, strategy, scenario, &options);
    assert!(
        result.passed,
        "{strategy} {} failed:\n  {}",
        scenario.name(),
        result.problems.join("\n  ")
    );
    assert!(result.operations > 0 || scenario == Scenario::HostBadInput);
}

macro_rules! conformance_tests {
    ($($name:ident: $strategy:expr, $scenario:expr;)*) => {
        $(#[test] fn $name() { check($strategy, $scenario); })*
    };
}

conformance_tests! {
    bump_basic: Strategy::Bump, Scenario::Basic;
    bump_churn: Strategy::Bump, Scenario::Churn;
    bump_exhaustion: Strategy::Bump, Scenario::Exhaustion;
    bump_device_bad_input: Strategy::Bump, Scenario::DeviceBadInput;
    bump_host_bad_input: Strategy::Bump, Scenario::HostBadInput;
    bump_utilisation: Strategy::Bump, Scenario::Utilisation;
    rw_bm_basic: Strategy::RwBm, Scenario::Basic;
    rw_bm_churn: Strategy::RwBm, Scenario::Churn;
    rw_bm_exhaustion: Strategy::RwBm, Scenario::Exhaustion;
    rw_bm_device_bad_input: Strategy::RwBm, Scenario::DeviceBadInput;
    rw_bm_host_bad_input: Strategy::RwBm, Scenario::HostBadInput;
    rw_basic: Strategy::Rw, Scenario::Basic;
    rw_churn: Strategy::Rw, Scenario::Churn;
    rw_exhaustion: Strategy::Rw, Scenario::Exhaustion;
    rw_device_bad_input: Strategy::Rw, Scenario::DeviceBadInput;
    rw_host_bad_input: Strategy::Rw, Scenario::HostBadInput;
    corw_basic: Strategy::Corw, Scenario::Basic;
    corw_churn: Strategy::Corw, Scenario::Churn;
    corw_exhaustion: Strategy::Corw, Scenario::Exhaustion;
    corw_device_bad_input: Strategy::Corw, Scenario::DeviceBadInput;
    corw_host_bad_input: Strategy::Corw, Scenario::HostBadInput;
    rw_malloc_basic: Strategy::RwMalloc, Scenario::Basic;
    rw_malloc_churn: Strategy::RwMalloc, Scenario::Churn;
    rw_malloc_exhaustion: Strategy::RwMalloc, Scenario::Exhaustion;
    rw_malloc_device_bad_input: Strategy::RwMalloc, Scenario::DeviceBadInput;
    rw_malloc_host_bad_input: Strategy::RwMalloc, Scenario::HostBadInput;
    rw_bm_utilisation: Strategy::RwBm, Scenario::Utilisation;
    ouro_p_s_basic: Strategy::OuroPS, Scenario::Basic;
    ouro_p_s_churn: Strategy::OuroPS, Scenario::Churn;
    ouro_p_s_exhaustion: Strategy::OuroPS, Scenario::Exhaustion;
    ouro_p_s_device_bad_input: Strategy::OuroPS, Scenario::DeviceBadInput;
    ouro_p_s_host_bad_input: Strategy::OuroPS, Scenario::HostBadInput;
    ouro_p_s_utilisation: Strategy::OuroPS, Scenario::Utilisation;
    ouro_p_va_basic: Strategy::OuroPVA, Scenario::Basic;
    ouro_p_va_churn: Strategy::OuroPVA, Scenario::Churn;
    ouro_p_va_exhaustion: Strategy::OuroPVA, Scenario::Exhaustion;
    ouro_p_va_device_bad_input: Strategy::OuroPVA, Scenario::DeviceBadInput;
    ouro_p_va_host_bad_input: Strategy::OuroPVA, Scenario::HostBadInput;
    ouro_p_va_utilisation: Strategy::OuroPVA, Scenario::Utilisation;
    ouro_p_vl_basic: Strategy::OuroPVL, Scenario::Basic;
    ouro_p_vl_churn: Strategy::OuroPVL, Scenario::Churn;
    ouro_p_vl_exhaustion: Strategy::OuroPVL, Scenario::Exhaustion;
    ouro_p_vl_device_bad_input: Strategy::OuroPVL, Scenario::DeviceBadInput;
    ouro_p_vl_host_bad_input: Strategy::OuroPVL, Scenario::HostBadInput;
    ouro_p_vl_utilisation: Strategy::OuroPVL, Scenario::Utilisation;
    ouro_c_s_basic: Strategy::OuroCS, Scenario::Basic;
    ouro_c_s_churn: Strategy::OuroCS, Scenario::Churn;
    ouro_c_s_exhaustion: Strategy::OuroCS, Scenario::Exhaustion;
    ouro_c_s_device_bad_input: Strategy::OuroCS, Scenario::DeviceBadInput;
    ouro_c_s_host_bad_input: Strategy::OuroCS, Scenario::HostBadInput;
    ouro_c_s_utilisation: Strategy::OuroCS, Scenario::Utilisation;
    ouro_c_va_basic: Strategy::OuroCVA, Scenario::Basic;
    ouro_c_va_churn: Strategy::OuroCVA, Scenario::Churn;
    ouro_c_va_exhaustion: Strategy::OuroCVA, Scenario::Exhaustion;
    ouro_c_va_device_bad_input: Strategy::OuroCVA, Scenario::DeviceBadInput;
    ouro_c_va_host_bad_input: Strategy::OuroCVA, Scenario::HostBadInput;
    ouro_c_va_utilisation: Strategy::OuroCVA, Scenario::Utilisation;
    ouro_c_vl_basic: Strategy::OuroCVL, Scenario::Basic;
    ouro_c_vl_churn: Strategy::OuroCVL, Scenario::Churn;
    ouro_c_vl_exhaustion: Strategy::OuroCVL, Scenario::Exhaustion;
    ouro_c_vl_device_bad_input: Strategy::OuroCVL, Scenario::DeviceBadInput;
    ouro_c_vl_host_bad_input: Strategy::OuroCVL, Scenario::HostBadInput;
    ouro_c_vl_utilisation: Strategy::OuroCVL, Scenario::Utilisation;
    bump_growth: Strategy::Bump, Scenario::Growth;
    rw_bm_growth: Strategy::RwBm, Scenario::Growth;
    rw_growth: Strategy::Rw, Scenario::Growth;
    corw_growth: Strategy::Corw, Scenario::Growth;
    rw_malloc_growth: Strategy::RwMalloc, Scenario::Growth;
    ouro_p_s_growth: Strategy::OuroPS, Scenario::Growth;
    ouro_p_va_growth: Strategy::OuroPVA, Scenario::Growth;
    ouro_p_vl_growth: Strategy::OuroPVL, Scenario::Growth;
    ouro_c_s_growth: Strategy::OuroCS, Scenario::Growth;
    ouro_c_va_growth: Strategy::OuroCVA, Scenario::Growth;
    ouro_c_vl_growth: Strategy::OuroCVL, Scenario::Growth;
    bump_scale: Strategy::Bump, Scenario::Scale;
    bump_free_all: Strategy::Bump, Scenario::FreeAll;
    rw_bm_scale: Strategy::RwBm, Scenario::Scale;
    rw_bm_free_all: Strategy::RwBm, Scenario::FreeAll;
    rw_scale: Strategy::Rw, Scenario::Scale;
    rw_free_all: Strategy::Rw, Scenario::FreeAll;
    corw_scale: Strategy::Corw, Scenario::Scale;
    corw_free_all: Strategy::Corw, Scenario::FreeAll;
    rw_malloc_scale: Strategy::RwMalloc, Scenario::Scale;
    rw_malloc_free_all: Strategy::RwMalloc, Scenario::FreeAll;
    ouro_p_s_scale: Strategy::OuroPS, Scenario::Scale;
    ouro_p_s_free_all: Strategy::OuroPS, Scenario::FreeAll;
    ouro_p_va_scale: Strategy::OuroPVA, Scenario::Scale;
    ouro_p_va_free_all: Strategy::OuroPVA, Scenario::FreeAll;
    ouro_p_vl_scale: Strategy::OuroPVL, Scenario::Scale;
    ouro_p_vl_free_all: Strategy::OuroPVL, Scenario::FreeAll;
    ouro_c_s_scale: Strategy::OuroCS, Scenario::Scale;
    ouro_c_s_free_all: Strategy::OuroCS, Scenario::FreeAll;
    ouro_c_va_scale: Strategy::OuroCVA, Scenario::Scale;
    ouro_c_va_free_all: Strategy::OuroCVA, Scenario::FreeAll;
    ouro_c_vl_scale: Strategy::OuroCVL, Scenario::Scale;
    ouro_c_vl_free_all: Strategy::OuroCVL, Scenario::FreeAll;
    bump_round_trip: Strategy::Bump, Scenario::RoundTrip;
    rw_bm_round_trip: Strategy::RwBm, Scenario::RoundTrip;
    rw_round_trip: Strategy::Rw, Scenario::RoundTrip;
    corw_round_trip: Strategy::Corw, Scenario::RoundTrip;
    rw_malloc_round_trip: Strategy::RwMalloc, Scenario::RoundTrip;
    ouro_p_s_round_trip: Strategy::OuroPS, Scenario::RoundTrip;
    ouro_p_va_round_trip: Strategy::OuroPVA, Scenario::RoundTrip;
    ouro_p_vl_round_trip: Strategy::OuroPVL, Scenario::RoundTrip;
    ouro_c_s_round_trip: Strategy::OuroCS, Scenario::RoundTrip;
    ouro_c_va_round_trip: Strategy::OuroCVA, Scenario::RoundTrip;
    ouro_c_vl_round_trip: Strategy::OuroCVL, Scenario::RoundTrip;
}
