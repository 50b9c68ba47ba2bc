//! Development only. Its build script makes sure that a machine with no GPU has a software
//! Vulkan driver gpu-heap can use (Mesa 24 or later's lavapipe) before the workspace's
//! examples and tests run, so that the README's two commands need no step before them.
//! It is a dev-dependency of the workspace's crates: nothing that depends on `gpu-heap`
//! builds it. See `build.rs` for when it installs and how to opt out.

mod host;
pub use host::{find_on_path, is_debian};
