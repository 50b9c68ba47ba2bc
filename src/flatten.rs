//! The heap's shaders without a heap: a composer for `#include "alloc.wgsl"` and the
//! flattened, self-contained module for tools and for WebGPU users outside Rust, both
//! planned from a configuration and a device's limits and features.

use crate::config::{HeapConfig, OuroborosParams, RandomWalkParams, Strategy, TBuddyParams};
use crate::error::Result;
use crate::layout::{DeviceCaps, HeapBinding, HeapLayout};
use crate::shader::Composer;
use crate::strategy::StrategyParams;

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
/// WebGPU device with `limits` and `features`, for WebGPU users outside Rust. The header
/// says which buffers to create and how to initialise them. WebGPU has no binding arrays,
/// so segments are bound one by one whatever `features` says; where the strategy uses
/// subgroups (`features` has them), the module starts with `enable subgroups;` and the
/// device needs WebGPU's `subgroups` feature ([`Manifest::features`]). User code goes
/// after the module's text, since enable directives must come first.
pub fn flatten(
    config: &HeapConfig,
    limits: &wgpu::Limits,
    features: wgpu::Features,
) -> Result<String> {
    flatten_layout(&plan_for_web(config, limits, features)?, config, true)
}

/// The layout [`flatten`] and [`manifest`] plan: WebGPU's, without binding arrays.
fn plan_for_web(
    config: &HeapConfig,
    limits: &wgpu::Limits,
    features: wgpu::Features,
) -> Result<HeapLayout> {
    plan(
        config,
        limits,
        features - crate::layout::BINDING_ARRAY_FEATURES,
    )
}

/// The flattened module of `layout`; `web`: for WebGPU, which needs the enable directive of
/// every extension it uses (naga, which composes modules for wgpu, rejects `subgroups`).
pub(crate) fn flatten_layout(
    layout: &HeapLayout,
    config: &HeapConfig,
    web: bool,
) -> Result<String> {
    let composed = composer_for(layout).compose_library("heap_init.wgsl")?;
    composed.validate()?;
    let enables = if web && layout.uses_subgroups() {
        "enable subgroups;\ndiagnostic(off, subgroup_uniformity);\n"
    } else {
        ""
    };
    let header = header(
        &manifest_of(layout, config),
        layout.growable,
        !enables.is_empty(),
    );
    Ok(header + enables + composed.source())
}

/// The flattened module's header: the manifest in words; `enables`: the module starts with
/// the enable directives of `m.features`.
fn header(m: &Manifest, growable: bool, enables: bool) -> String {
    let strategy = if m.compiled == m.strategy {
        m.strategy.to_string()
    } else {
        format!(
            "{} (compiled as {}: the device lacks subgroups)",
            m.strategy, m.compiled
        )
    };
    let mut header = format!(
        "// gpu-heap {}: flattened alloc.wgsl, strategy {strategy}.\n\
         // Buffers (usage STORAGE | COPY_DST), all in @group({}):\n",
        m.version, m.bind_group
    );
    for b in &m.bindings {
        let what = match (b.array_count, b.segment) {
            (Some(count), _) => format!(
                "a binding array of {count} segments of these sizes in bytes: {:?}",
                m.segment_bytes
            ),
            (None, Some(index)) => format!(
                "segment {index}: {} bytes{}",
                m.segment_bytes[index as usize],
                if m.reset_clears_segments {
                    ", zero-filled on reset too (new buffers are zero)"
                } else {
                    ""
                }
            ),
            (None, None) => format!(
                "{} bytes, zero-filled before first use and on reset.",
                m.meta_bytes
            ),
        };
        let segments = b.segment.is_some() || b.array_count.is_some();
        let atomic = if segments && b.atomic {
            ", as array<atomic<u32>>"
        } else {
            ""
        };
        header.push_str(&format!(
            "//   @binding({}) {}: {what}{atomic}\n",
            b.binding, b.name
        ));
    }
    if enables {
        header.push_str(&format!(
            "// The device needs the WebGPU features {:?}; the module enables them, so user code\n\
             // goes after this text.\n",
            m.features
        ));
    }
    header.push_str(&format!(
        "// heap_meta word {} holds the committed 16-byte units ({}; read only by heaps that can grow)\n",
        m.committed_units_word, m.committed_units
    ));
    if growable {
        header.push_str(
            "// This heap can grow: bind the segments past the committed ones to any small\n\
             // buffer; growing and trimming follow src/growth.rs (gpu_heap_grow and friends).\n",
        );
    }
    let invocations = m.init_invocations;
    header.push_str(&if invocations > 0 {
        format!(
            "// After zero-filling heap_meta (and writing the committed units above), dispatch\n\
             // the entry point gpu_heap_init over {} workgroups of 64 ({invocations} invocations).\n",
            invocations.div_ceil(64)
        )
    } else {
        "// After zero-filling heap_meta (and writing the committed units above), the heap\n\
         // is ready: this strategy has no init pass.\n"
            .to_owned()
    });
    header.push_str(
        "// Then any compute shader that contains this text may call malloc/free; remove\n\
         // gpu_heap_init from copies other than the one you dispatch.\n\n",
    );
    header
}

/// What a host outside Rust needs to run a flattened heap ([`flatten`]): its buffers and
/// bindings, how to initialise it, where its statistics are, and the WGSL API. With the
/// `serde` feature it serialises to the JSON that `gpu-heap flatten --manifest` writes.
///
/// ```
/// let config = gpu_heap::HeapConfig::new(64 << 20);
/// let m = gpu_heap::manifest(&config, &wgpu::Limits::default(), wgpu::Features::empty())?;
/// assert_eq!(m.bindings[0].name, "gpu_heap_meta");
/// assert!(m.api.contains(&"malloc"));
/// # Ok::<(), gpu_heap::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[non_exhaustive]
pub struct Manifest {
    /// The gpu-heap version that planned it.
    pub version: &'static str,
    /// The configured strategy.
    pub strategy: Strategy,
    /// The strategy the shaders run (CoRW runs as RW-BM without subgroups).
    pub compiled: Strategy,
    /// The bind group index of every binding below.
    pub bind_group: u32,
    /// The bindings in order: read-write storage buffers.
    pub bindings: Vec<ManifestBinding>,
    /// Bytes of the metadata buffer (`heap_meta`), zero-filled before use and on reset.
    pub meta_bytes: u64,
    /// Bytes of each segment buffer.
    pub segment_bytes: Vec<u64>,
    /// Whether a reset zero-fills the segments too, not only heap_meta: the strategy counts
    /// on memory it has not handed out being zero (Ouroboros on virtualized queues).
    pub reset_clears_segments: bool,
    /// Segments to create now (all but for a heap that can grow).
    pub committed_segments: u32,
    /// The heap_meta word to write with `committed_units` before the init pass.
    pub committed_units_word: u64,
    /// 16-byte units of the committed segments.
    pub committed_units: u64,
    /// Invocations of the init entry point `gpu_heap_init`, in workgroups of 64; 0: none.
    pub init_invocations: u32,
    /// The statistics block at the start of heap_meta: (name, first word, words); counters
    /// of two words are 64-bit, low word first.
    pub statistics: Vec<(&'static str, u64, u32)>,
    /// The largest malloc in bytes.
    pub max_alloc: u32,
    /// The random walks' parameters, where the strategy reads them
    /// ([`Strategy::params`]); likewise the next two.
    pub random_walk: Option<RandomWalkParams>,
    /// Ouroboros' parameters, where the strategy reads them.
    pub ouroboros: Option<OuroborosParams>,
    /// The tree buddy's parameters, where the strategy reads them (tbuddy).
    pub tbuddy: Option<TBuddyParams>,
    /// The usages every buffer is created with (WebGPU's `GPUBufferUsage` names): STORAGE
    /// for its binding, COPY_DST for the zero-fill and the committed-units write before
    /// the init pass, COPY_SRC to read the statistics back; the ones the Rust heap uses.
    pub buffer_usages: Vec<&'static str>,
    /// The WebGPU features the device must have: `subgroups` where the strategy uses them.
    pub features: Vec<&'static str>,
    /// The WGSL functions, variables and constants a user shader may use.
    pub api: Vec<&'static str>,
}

/// One binding of a [`Manifest`].
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[non_exhaustive]
pub struct ManifestBinding {
    /// The binding number.
    pub binding: u32,
    /// The variable's name in the WGSL.
    pub name: String,
    /// The buffer bound: `heap_meta`, `segment N`, or `segments` for a binding array.
    pub buffer: String,
    /// For a binding array, its element count.
    pub array_count: Option<u32>,
    /// For a segment bound on its own, its index in `segment_bytes`.
    pub segment: Option<u32>,
    /// Whether the binding is declared `array<atomic<u32>>` rather than `array<u32>`:
    /// heap_meta always, segments for strategies that keep queues inside the heap. Either
    /// way a read-write storage buffer, and every buffer is bound once.
    pub atomic: bool,
}

/// The [`Manifest`] of the heap that [`flatten`] writes for the same arguments.
pub fn manifest(
    config: &HeapConfig,
    limits: &wgpu::Limits,
    features: wgpu::Features,
) -> Result<Manifest> {
    Ok(manifest_of(
        &plan_for_web(config, limits, features)?,
        config,
    ))
}

fn manifest_of(layout: &HeapLayout, config: &HeapConfig) -> Manifest {
    let reads = layout.strategy.params();
    let bindings = (0u32..)
        .zip(layout.bindings())
        .map(|(binding, b)| {
            let (buffer, array_count, segment, atomic) = match b {
                HeapBinding::Meta => ("heap_meta".to_owned(), None, None, true),
                HeapBinding::SegmentArray { atomic } => (
                    "segments".to_owned(),
                    Some(layout.segment_count()),
                    None,
                    atomic,
                ),
                HeapBinding::Segment { index, atomic } => {
                    (format!("segment {index}"), None, Some(index), atomic)
                }
            };
            ManifestBinding {
                binding,
                name: crate::shader::prefixed(&b.wgsl_name()),
                buffer,
                array_count,
                segment,
                atomic,
            }
        })
        .collect();
    Manifest {
        version: env!("CARGO_PKG_VERSION"),
        strategy: layout.strategy,
        compiled: layout.compiled(),
        bind_group: layout.bind_group_index,
        bindings,
        meta_bytes: layout.metadata_bytes(),
        segment_bytes: layout.segment_sizes.clone(),
        committed_segments: layout.initial_segments,
        committed_units_word: layout.growth_word + crate::meta::GROWTH_COMMITTED,
        committed_units: layout.initial_bytes() / crate::layout::UNIT_BYTES,
        init_invocations: layout.init_invocations(),
        reset_clears_segments: layout.reset_clears_segments(),
        statistics: crate::meta::statistics_words(),
        max_alloc: layout.max_alloc,
        random_walk: (reads == StrategyParams::RandomWalk).then_some(config.random_walk),
        ouroboros: (reads == StrategyParams::Ouroboros).then_some(config.ouroboros),
        tbuddy: (reads == StrategyParams::TBuddy).then_some(config.tbuddy),
        buffer_usages: crate::gpu::STORAGE_USAGES
            .iter_names()
            .map(|(name, _)| name)
            .collect(),
        features: if layout.uses_subgroups() {
            vec!["subgroups"]
        } else {
            Vec::new()
        },
        api: crate::shader::API.to_vec(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::SegmentBinding;
    use crate::layout::BINDING_ARRAY_FEATURES;

    /// The manifest and the flattened header say that a reset zero-fills the segments
    /// exactly for the strategies whose shaders count on it (Ouroboros on virtualized
    /// queues).
    #[test]
    fn the_manifest_and_header_say_which_resets_clear_the_segments() {
        let limits = wgpu::Limits::default();
        for &strategy in Strategy::ALL {
            let config = HeapConfig::new(64 << 20).strategy(strategy);
            let m = manifest(&config, &limits, wgpu::Features::empty()).unwrap();
            let virtualized = matches!(
                strategy,
                Strategy::OuroPVA | Strategy::OuroPVL | Strategy::OuroCVA | Strategy::OuroCVL
            );
            assert_eq!(m.reset_clears_segments, virtualized, "{strategy}");
            let text = flatten(&config, &limits, wgpu::Features::empty()).unwrap();
            assert_eq!(
                text.contains("zero-filled on reset too"),
                virtualized,
                "{strategy}"
            );
        }
    }

    /// A user shader that includes alloc.wgsl meets the API and nothing else of the
    /// library: every other module-scope name of every strategy's build carries the prefix.
    #[test]
    fn only_the_api_enters_the_user_namespace() {
        let limits = wgpu::Limits {
            max_storage_buffer_binding_size: 128 << 20,
            max_binding_array_elements_per_shader_stage: 16,
            max_storage_buffers_per_shader_stage: 16,
            ..wgpu::Limits::default()
        };
        let mut seen = std::collections::BTreeSet::new();
        for &strategy in Strategy::ALL {
            for (binding, features) in [
                (SegmentBinding::Separate, wgpu::Features::empty()),
                (
                    SegmentBinding::BindingArray,
                    BINDING_ARRAY_FEATURES | wgpu::Features::SUBGROUP,
                ),
            ] {
                let mut configs = vec![HeapConfig::new(512 << 20)];
                if strategy.supports_growth() {
                    configs.push(HeapConfig::new(256 << 20).max_size(512 << 20));
                }
                for config in configs {
                    let config = config.strategy(strategy).segment_binding(binding);
                    let module = composer(&config, &limits, features)
                        .unwrap()
                        .compose_library("heap_init.wgsl")
                        .unwrap()
                        .validate()
                        .unwrap_or_else(|e| panic!("{strategy} {binding:?}: {e}"));
                    let names = module
                        .global_variables
                        .iter()
                        .filter_map(|(_, v)| v.name.clone())
                        .chain(module.functions.iter().filter_map(|(_, f)| f.name.clone()))
                        .chain(module.constants.iter().filter_map(|(_, c)| c.name.clone()))
                        .chain(module.overrides.iter().filter_map(|(_, o)| o.name.clone()))
                        .chain(module.types.iter().filter_map(|(_, t)| t.name.clone()))
                        .chain(module.entry_points.iter().map(|e| e.name.clone()));
                    for name in names {
                        // naga's own types (atomic results) start with two underscores.
                        if crate::shader::API.contains(&name.as_str()) || name.starts_with("__") {
                            continue;
                        }
                        assert_eq!(
                            crate::shader::prefixed(&name),
                            name,
                            "{strategy} {binding:?}"
                        );
                        seen.insert(name);
                    }
                }
            }
        }
        if let Ok(path) = std::env::var("GPU_HEAP_DUMP_NAMES") {
            std::fs::write(path, seen.into_iter().collect::<Vec<_>>().join("\n")).unwrap();
        }
    }
}
