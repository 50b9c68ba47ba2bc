//! The tools' test kernels (`cli/shaders/`), composed against a heap like any user shader:
//! they `#include "alloc.wgsl"` from the library and each other by their names here.

use gpu_heap::{ComposedShader, Composer, GpuHeap};

use crate::Result;

/// Every kernel source, by the name other kernels include it under.
const KERNELS: &[(&str, &str)] = &[
    (
        "bench/kernels.wgsl",
        include_str!("../shaders/bench/kernels.wgsl"),
    ),
    (
        "bench/subgroup.wgsl",
        include_str!("../shaders/bench/subgroup.wgsl"),
    ),
    (
        "conformance/kernels.wgsl",
        include_str!("../shaders/conformance/kernels.wgsl"),
    ),
    ("tas.wgsl", include_str!("../shaders/tas.wgsl")),
];

/// Adds the kernels to `composer`, so that `compose_str` of any kernel resolves.
pub fn register(composer: &mut Composer) {
    for &(name, text) in KERNELS {
        composer.add_source(name, text);
    }
}

/// The source of the kernel file `name` (`"conformance/kernels.wgsl"`, `"tas.wgsl"`, ...).
pub fn source(name: &str) -> Option<&'static str> {
    KERNELS.iter().find(|(n, _)| *n == name).map(|(_, t)| *t)
}

/// The benchmark's kernel file: with subgroup kernels where the device has subgroups.
pub fn bench_file(subgroups: bool) -> &'static str {
    if subgroups {
        "bench/subgroup.wgsl"
    } else {
        "bench/kernels.wgsl"
    }
}

/// The kernel file `name`, composed with a heap's `composer` and validated: the composed
/// text and naga's module of it.
pub(crate) fn compose(
    mut composer: Composer,
    name: &str,
) -> Result<(ComposedShader, naga::Module)> {
    let text = source(name).unwrap_or_else(|| panic!("no kernel named {name}"));
    register(&mut composer);
    let composed = composer
        .compose_str(name, text)
        .map_err(gpu_heap::Error::from)?;
    let module = composed.validate().map_err(gpu_heap::Error::from)?;
    Ok((composed, module))
}

/// The kernel file `name`, composed for `heap`, validated and created as a module.
pub(crate) fn module(heap: &GpuHeap, name: &str) -> Result<wgpu::ShaderModule> {
    let (composed, _) = compose(heap.composer(), name)?;
    Ok(heap.create_shader_module_from(name, &composed)?)
}
