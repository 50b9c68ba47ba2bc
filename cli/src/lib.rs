//! gpu-heap's tools, behind the `gpu-heap` command: the conformance suite, the benchmark
//! suite (with grow-bench), the random walks' TAS and out-of-memory utilisation, and their
//! test kernels. They use the library only through its public API, as a user would.

pub mod bench;
pub mod conformance;
mod error;
pub mod kernel_stats;
pub mod kernels;
pub mod tas;
pub mod utilisation;

pub use error::{Error, Result};

use gpu_heap::{HeapConfig, RandomWalkParams, TBuddyParams};

/// Sets the smallest blocks the tools' `--page-size` and `--unit-size` stand for: the
/// random walks' page and unit, and the tree buddy's leaf (the page size). Other strategies
/// keep their own parameters.
pub fn with_pages(config: HeapConfig, page_size: u32, unit_size: u32) -> HeapConfig {
    config
        .random_walk(RandomWalkParams {
            page_size,
            unit_size,
        })
        .tbuddy(TBuddyParams {
            leaf_size: page_size,
        })
}
