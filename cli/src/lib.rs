//! gpu-heap's tools, behind the `gpu-heap` command: the conformance suite, the benchmark
//! suite (with grow-bench), the random walks' TAS and out-of-memory utilisation, and their
//! test kernels. They use the library only through its public API, as a user would.

pub mod bench;
pub mod conformance;
mod error;
pub mod kernels;
pub mod tas;
pub mod utilisation;

pub use error::{Error, Result};
