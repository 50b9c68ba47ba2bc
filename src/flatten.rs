//! The heap's shaders without a heap: a composer for `#include "alloc.wgsl"` and the
//! flattened, self-contained module for tools and for WebGPU users outside Rust, both
//! planned from a configuration and a device's limits and features.

use crate::config::HeapConfig;
use crate::error::Result;
use crate::layout::{DeviceCaps, HeapBinding, HeapLayout};
use crate::shader::Composer;

/// The paths under which the heap's generated configuration and its strategy's entry file
/// are included (shaders/alloc.wgsl).
const GENERATED_CONFIG: &str = "generated/config.wgsl";
const GENERATED_STRATEGY: &str = "generated/strategy.wgsl";

pub(crate) fn composer_for(layout: &HeapLayout) -> Composer {
    Composer::new()
        .with_generated(GENERATED_CONFIG, layout.config_wgsl())
        .with_generated(GENERATED_STRATEGY, layout.strategy_wgsl())
}

/// A composer that resolves `#include "alloc.wgsl"` for a heap of `config` on a device with
/// `limits` and `features`, without creating the heap (for offline validation and tools).
pub fn composer(
    config: &HeapConfig,
    limits: &wgpu::Limits,
    features: wgpu::Features,
) -> Result<Composer> {
    Ok(composer_for(&plan(config, limits, features)?))
}

fn plan(
    config: &HeapConfig,
    limits: &wgpu::Limits,
    features: wgpu::Features,
) -> Result<HeapLayout> {
    HeapLayout::plan(
        config,
        &DeviceCaps {
            features,
            limits: limits.clone(),
            backend: None,
            unsupported: None,
        },
    )
}

/// A self-contained `alloc.wgsl` (plus the init entry point) for a heap of `config` on a
/// device with `limits` and `features`, for WebGPU users outside Rust. The header says
/// which buffers to create and how to initialise them.
pub fn flatten(
    config: &HeapConfig,
    limits: &wgpu::Limits,
    features: wgpu::Features,
) -> Result<String> {
    flatten_layout(&plan(config, limits, features)?)
}

pub(crate) fn flatten_layout(layout: &HeapLayout) -> Result<String> {
    let composed = composer_for(layout).compose_library("heap_init.wgsl")?;
    composed.validate()?;
    let group = layout.bind_group_index;
    let mut header = format!(
        "// gpu-heap {version}: flattened alloc.wgsl, strategy {strategy}.\n\
         // Buffers (usage STORAGE | COPY_DST), all in @group({group}):\n",
        version = env!("CARGO_PKG_VERSION"),
        strategy = if layout.compiled() == layout.strategy {
            layout.strategy.to_string()
        } else {
            format!(
                "{} (compiled as {}: the device lacks subgroups)",
                layout.strategy,
                layout.compiled()
            )
        },
    );
    for (binding, b) in (0u32..).zip(layout.bindings()) {
        let what = match b {
            HeapBinding::Meta => format!(
                "{} bytes, zero-filled before first use and on reset.",
                layout.meta_words * 4
            ),
            HeapBinding::SegmentArray { .. } => format!(
                "a binding array of {} segments of these sizes in bytes: {:?}",
                layout.segment_count(),
                layout.segment_sizes
            ),
            HeapBinding::Segment { index, .. } => format!(
                "segment {index}: {} bytes",
                layout.segment_sizes[index as usize]
            ),
        };
        let again = match b {
            HeapBinding::SegmentArray { atomic: true }
            | HeapBinding::Segment { atomic: true, .. } => ", bound again as array<atomic<u32>>",
            _ => "",
        };
        header.push_str(&format!(
            "//   @binding({binding}) {}: {what}{again}\n",
            b.wgsl_name()
        ));
    }
    header.push_str(&format!(
        "// heap_meta word {} holds the committed 16-byte units ({}; read only by heaps that can grow)\n",
        layout.growth_word,
        layout.initial_bytes() / crate::layout::UNIT_BYTES
    ));
    if layout.growable {
        header.push_str(
            "// This heap can grow: bind the segments past the committed ones to any small\n\
             // buffer; growing and trimming follow src/growth.rs (gpu_heap_grow and friends).\n",
        );
    }
    header.push_str(
        "// After zero-filling heap_meta, dispatch the entry point gpu_heap_init with one\n\
         // workgroup of 64. Then any compute shader that contains this text may call\n\
         // malloc/free; remove gpu_heap_init from copies other than the one you dispatch.\n\n",
    );
    Ok(header + composed.source())
}
