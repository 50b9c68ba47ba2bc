//! `kernel-stats` compiles the benchmark's kernels on the adapter's Vulkan device and reads
//! their statistics: where the driver reports them (NVIDIA's, say), each kernel has some,
//! registers among them on NVIDIA; where it does not (lavapipe), the error says so.

#[path = "../../tests/common/mod.rs"]
mod common;

use gpu_heap::{HeapConfig, Strategy};
use gpu_heap_cli::kernel_stats::bench_kernels;
use gpu_heap_cli::Error;

fn kernels() -> Vec<String> {
    vec!["bench_malloc".into(), "bench_free".into()]
}

#[test]
fn kernels_have_statistics_or_the_driver_says_it_has_none() {
    let gpu = common::gpu();
    let config = HeapConfig::new(16 << 20).strategy(Strategy::UAlloc);
    match bench_kernels(gpu, &config, &kernels()) {
        Ok(stats) => {
            let names: Vec<_> = stats.iter().map(|s| s.kernel.as_str()).collect();
            assert_eq!(names, ["bench_malloc", "bench_free"]);
            for s in &stats {
                assert!(!s.statistics.is_empty(), "{} has no statistics", s.kernel);
                if gpu.adapter.get_info().vendor == 0x10de {
                    let registers: u32 = s
                        .get("Register Count")
                        .expect("NVIDIA counts")
                        .parse()
                        .unwrap();
                    assert!(registers > 0);
                }
            }
        }
        Err(Error::Unsupported(why)) => {
            assert!(
                why.contains("VK_KHR_pipeline_executable_properties") || why.contains("Vulkan"),
                "{why}"
            );
        }
        Err(e) => panic!("{e}"),
    }
}

#[test]
fn an_unknown_kernel_is_an_invalid_option() {
    let gpu = common::gpu();
    let config = HeapConfig::new(16 << 20).strategy(Strategy::Bump);
    let err = bench_kernels(gpu, &config, &["no_such_kernel".into()]).unwrap_err();
    assert!(
        matches!(&err, Error::InvalidOptions(m) if m.contains("no_such_kernel")),
        "{err}"
    );
}
