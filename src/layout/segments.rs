//! Segment planning: how a configuration and the device's limits split the heap into
//! power-of-two segments, choose their bindings and size heap_meta ([`HeapLayout::plan`]).

use crate::config::{HeapConfig, SegmentBinding};
use crate::error::{Error, Result};
use crate::meta::GROWTH_WORDS;
use crate::strategy::{FamilyPlan, PlanInput};

use super::{HeapLayout, SegmentBindingKind, BINDING_ARRAY_FEATURES, UNIT_BYTES};

/// What the planner needs to know about the device.
#[derive(Clone, Debug)]
pub(crate) struct DeviceCaps {
    pub features: wgpu::Features,
    pub limits: wgpu::Limits,
    /// The backend, where known: DX12 cannot use binding-array segments (see below).
    pub backend: Option<wgpu::Backend>,
    /// Why the adapter breaks the allocators, if it is known to ([`unsupported_adapter`]).
    pub unsupported: Option<(String, String)>,
}

impl DeviceCaps {
    pub fn of(device: &wgpu::Device) -> Self {
        let info = device.adapter_info();
        DeviceCaps {
            features: device.features(),
            limits: device.limits(),
            backend: Some(info.backend),
            unsupported: unsupported_adapter(&info).map(|why| (info.name.clone(), why)),
        }
    }
}

/// Why an adapter is known to break the allocators, or `None`. Mesa's CPU drivers
/// (llvmpipe for GL, lavapipe for Vulkan) before Mesa 24 end every shader loop after 65,535
/// iterations without an error, so walks and waits stop early and results are wrong.
pub(crate) fn unsupported_adapter(info: &wgpu::AdapterInfo) -> Option<String> {
    let cpu_mesa = info.name.contains("llvmpipe") || info.driver.contains("llvmpipe");
    let mesa_major = info
        .driver_info
        .split("Mesa ")
        .nth(1)
        .and_then(|v| v.split('.').next())
        .and_then(|major| major.parse::<u32>().ok())?;
    (cpu_mesa && mesa_major < 24).then(|| {
        format!(
            "Mesa {mesa_major}'s CPU driver ends every shader loop after 65,535 iterations; \
             install Mesa 24 or later (on Debian bookworm: sudo scripts/install-lavapipe.sh)"
        )
    })
}

impl HeapLayout {
    /// The heap that [`crate::GpuHeap::with_config`] would create for `config` on `device`,
    /// planned without creating anything: its segments, capacity and largest malloc, or the
    /// error that creating it would return.
    ///
    /// ```no_run
    /// # fn main() -> gpu_heap::Result<()> {
    /// let gpu = gpu_heap::Gpu::open(None)?;
    /// let config = gpu_heap::HeapConfig::new(64 << 20);
    /// let layout = gpu_heap::HeapLayout::for_device(&config, &gpu.device)?;
    /// println!("{} blocks of 256 bytes", layout.capacity_for(256));
    /// # Ok(()) }
    /// ```
    pub fn for_device(config: &HeapConfig, device: &wgpu::Device) -> Result<Self> {
        Self::plan(config, &DeviceCaps::of(device))
    }

    /// Plans the heap of `config` on a device with `caps`: its segments, their bindings and
    /// the strategy's geometry, or the typed error that says why the device cannot hold it.
    pub(crate) fn plan(config: &HeapConfig, caps: &DeviceCaps) -> Result<Self> {
        if config.size == 0 {
            return Err(Error::ZeroSize);
        }
        if let (Some((adapter, reason)), false) =
            (&caps.unsupported, config.allow_unsupported_adapter)
        {
            return Err(Error::UnsupportedAdapter {
                adapter: adapter.clone(),
                reason: reason.clone(),
            });
        }
        if config.watchdog.is_zero() {
            return Err(Error::InvalidConfig(
                "the watchdog must allow some time: with Duration::ZERO every wait would fail"
                    .into(),
            ));
        }
        if config.bind_group_index >= caps.limits.max_bind_groups {
            return Err(Error::LimitTooLow {
                limit: "max_bind_groups",
                have: caps.limits.max_bind_groups as u64,
                needed: config.bind_group_index as u64 + 1,
            });
        }
        let growable = config.is_growable();
        if growable && !config.strategy.supports_growth() {
            return Err(Error::GrowthUnsupported {
                strategy: config.strategy.to_string(),
            });
        }
        let reserved = if growable {
            config.max_size.unwrap_or(config.size)
        } else {
            config.size
        };
        let too_large = |reason: String| Error::TooLarge {
            requested: reserved,
            reason,
        };
        let initial_bytes = config
            .size
            .checked_next_multiple_of(UNIT_BYTES)
            .ok_or_else(|| too_large("it overflows u64".into()))?;
        let bytes = reserved
            .checked_next_multiple_of(UNIT_BYTES)
            .ok_or_else(|| too_large("it overflows u64".into()))?;
        let units = bytes / UNIT_BYTES;
        if units > u32::MAX as u64 {
            return Err(too_large(
                "handles are u32 counts of 16-byte units, which reach 64 GiB - 16 bytes".into(),
            ));
        }

        // Segment stride: a power of two no larger than one binding, one buffer, or the cap.
        let limits = &caps.limits;
        let mut cap = limits
            .max_storage_buffer_binding_size
            .min(limits.max_buffer_size);
        if let Some(max) = config.max_segment_size {
            cap = cap.min(max);
        }
        if cap < UNIT_BYTES {
            return Err(Error::InvalidConfig(format!(
                "the segment size cap of {cap} bytes is below one 16-byte unit"
            )));
        }
        // A growable heap commits whole segments, so its stride follows the initial size
        // (rounded up to a power of two): growth then commits in steps of that size.
        // If the maximum would then need more segments than the device can bind, the
        // stride doubles until it fits (the initial commit rounds up to one segment).
        let fit = if growable { initial_bytes } else { bytes };
        let mut stride = prev_power_of_two(cap).min(fit.next_power_of_two());
        if growable {
            let bindable = bindable_segments(config, caps);
            while bytes.div_ceil(stride) > bindable && stride < prev_power_of_two(cap) {
                stride *= 2;
            }
        }
        let segment_count = bytes.div_ceil(stride);
        let initial_segments = initial_bytes.div_ceil(stride).min(segment_count) as u32;
        let segment_sizes: Vec<u64> = (0..segment_count)
            .map(|i| stride.min(bytes - i * stride))
            .collect();
        let segment_shift = (stride / UNIT_BYTES).trailing_zeros();

        let binding = resolve_binding(config, caps, segment_count)?;

        let max_binding = limits
            .max_storage_buffer_binding_size
            .min(limits.max_buffer_size);
        let plan = FamilyPlan::plan(&PlanInput {
            config,
            caps,
            bytes,
            stride,
            segment_count,
            max_binding,
        })?;
        let growth_word = plan.get().state_end_word();
        let meta_words = growth_word + GROWTH_WORDS;
        let meta_bytes = meta_words * 4;
        if meta_bytes > max_binding {
            return Err(too_large(format!(
                "its metadata ({meta_bytes} bytes) exceeds one storage binding; use larger pages"
            )));
        }

        Ok(Self {
            strategy: config.strategy,
            bytes,
            segment_sizes,
            segment_shift,
            binding,
            meta_words,
            max_alloc: plan.get().max_alloc() as u32,
            bind_group_index: config.bind_group_index,
            statistics: config.statistics,
            count_steps: config.count_steps,
            plan,
            atomic_segments: config.strategy.needs_atomic_segments(),
            growable,
            initial_segments,
            growth_word,
        })
    }
}

fn prev_power_of_two(x: u64) -> u64 {
    1 << (63 - x.leading_zeros())
}

/// Storage bindings per shader stage a growable heap leaves to the user's own bind groups
/// when it picks its segment count.
const USER_STORAGE_BINDINGS: u64 = 8;

/// The most segments a growable heap plans for this configuration (binding arrays where
/// `resolve_binding` would choose them, separate bindings otherwise), leaving the metadata
/// binding and USER_STORAGE_BINDINGS to the rest of the pipeline.
fn bindable_segments(config: &HeapConfig, caps: &DeviceCaps) -> u64 {
    let dx12 = caps.backend == Some(wgpu::Backend::Dx12);
    let has_arrays = caps.features.contains(BINDING_ARRAY_FEATURES) && !dx12;
    let stage = (caps.limits.max_storage_buffers_per_shader_stage as u64)
        .saturating_sub(1 + USER_STORAGE_BINDINGS);
    let arrays = matches!(
        config.segment_binding,
        SegmentBinding::Auto | SegmentBinding::BindingArray
    ) && has_arrays;
    if arrays {
        (caps.limits.max_binding_array_elements_per_shader_stage as u64)
            .min(stage)
            .max(1)
    } else {
        (config.max_separate_bindings as u64).min(stage).max(1)
    }
}

fn resolve_binding(
    config: &HeapConfig,
    caps: &DeviceCaps,
    segments: u64,
) -> Result<SegmentBindingKind> {
    // naga 30's HLSL back end cannot write binding arrays of storage buffers holding
    // runtime-sized arrays (tests/backends.rs locks this in), so DX12 binds separately.
    let dx12 = caps.backend == Some(wgpu::Backend::Dx12);
    let has_arrays = caps.features.contains(BINDING_ARRAY_FEATURES) && !dx12;
    let kind = match config.segment_binding {
        SegmentBinding::Auto if segments == 1 => SegmentBindingKind::Separate,
        SegmentBinding::Auto if has_arrays => SegmentBindingKind::BindingArray,
        SegmentBinding::Auto | SegmentBinding::Separate => SegmentBindingKind::Separate,
        SegmentBinding::BindingArray => SegmentBindingKind::BindingArray,
    };
    let limits = &caps.limits;
    match kind {
        SegmentBindingKind::BindingArray => {
            if dx12 {
                return Err(Error::InvalidConfig(
                    "binding-array segments are not supported on DX12 (naga's HLSL back end \
                     cannot write them); use SegmentBinding::Separate or Auto"
                        .into(),
                ));
            }
            if !has_arrays {
                return Err(Error::MissingFeatures {
                    needed_for: format!("a heap of {segments} segments in a binding array"),
                    missing: BINDING_ARRAY_FEATURES - caps.features,
                });
            }
            let have = limits.max_binding_array_elements_per_shader_stage as u64;
            if have < segments {
                return Err(Error::LimitTooLow {
                    limit: "max_binding_array_elements_per_shader_stage",
                    have,
                    needed: segments,
                });
            }
        }
        SegmentBindingKind::Separate => {
            if segments > config.max_separate_bindings as u64 {
                return Err(Error::TooLarge {
                    requested: config.size,
                    reason: format!(
                        "it needs {segments} segments and separate bindings are capped at {} \
                         (max_separate_bindings); the device {} binding arrays",
                        config.max_separate_bindings,
                        if has_arrays { "has" } else { "lacks" }
                    ),
                });
            }
        }
    }
    let have = limits.max_storage_buffers_per_shader_stage as u64;
    if have < segments + 1 {
        return Err(Error::LimitTooLow {
            limit: "max_storage_buffers_per_shader_stage",
            have,
            needed: segments + 1,
        });
    }
    Ok(kind)
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::Strategy;

    fn adapter(
        name: &str,
        driver: &str,
        driver_info: &str,
        backend: wgpu::Backend,
    ) -> wgpu::AdapterInfo {
        wgpu::AdapterInfo {
            name: name.into(),
            vendor: 0,
            device: 0,
            device_type: wgpu::DeviceType::Cpu,
            device_pci_bus_id: String::new(),
            driver: driver.into(),
            driver_info: driver_info.into(),
            backend,
            subgroup_min_size: 4,
            subgroup_max_size: 4,
            transient_saves_memory: None,
            limit_bucket: None,
        }
    }

    /// Mesa's CPU drivers before 24 are refused, through GL and Vulkan; later ones and GPUs
    /// are not. The strings are what wgpu reported on Debian bookworm and an H100.
    #[test]
    fn mesa_cpu_drivers_before_24_are_unsupported() {
        let llvm = "llvmpipe (LLVM 15.0.6, 256 bits)";
        let gl22 = adapter(
            llvm,
            "",
            "4.5 (Core Profile) Mesa 22.3.6",
            wgpu::Backend::Gl,
        );
        let vk22 = adapter(
            llvm,
            "llvmpipe",
            "Mesa 22.3.6 (LLVM 15.0.6)",
            wgpu::Backend::Vulkan,
        );
        let vk25 = adapter(
            llvm,
            "llvmpipe",
            "Mesa 25.0.7-2~bpo12+1 (LLVM 15.0.6)",
            wgpu::Backend::Vulkan,
        );
        let h100 = adapter(
            "NVIDIA H100 80GB HBM3",
            "NVIDIA",
            "580.159.04",
            wgpu::Backend::Vulkan,
        );
        assert!(unsupported_adapter(&gl22).unwrap().contains("65,535"));
        assert!(unsupported_adapter(&vk22).is_some());
        assert_eq!(unsupported_adapter(&vk25), None);
        assert_eq!(unsupported_adapter(&h100), None);
        let mut caps = caps(1 << 30, false);
        caps.unsupported = Some((gl22.name.clone(), unsupported_adapter(&gl22).unwrap()));
        let config = HeapConfig::new(1 << 20);
        assert!(matches!(
            HeapLayout::plan(&config, &caps),
            Err(Error::UnsupportedAdapter { .. })
        ));
        assert!(HeapLayout::plan(&config.allow_unsupported_adapter(true), &caps).is_ok());
    }

    /// Limits for planning tests: `binding` bytes per storage binding, 64 bindings, and
    /// binding arrays where `arrays`.
    pub(crate) fn caps(binding: u64, arrays: bool) -> DeviceCaps {
        DeviceCaps {
            features: if arrays {
                BINDING_ARRAY_FEATURES
            } else {
                wgpu::Features::empty()
            },
            limits: wgpu::Limits {
                max_storage_buffer_binding_size: binding,
                max_buffer_size: 4 << 30,
                max_storage_buffers_per_shader_stage: 64,
                max_binding_array_elements_per_shader_stage: 64,
                ..wgpu::Limits::default()
            },
            backend: None,
            unsupported: None,
        }
    }

    #[test]
    fn misuse_is_a_typed_error_before_any_buffer() {
        let c = caps(128 << 20, true);
        let zero = HeapConfig::new(1 << 20).watchdog(std::time::Duration::ZERO);
        assert!(matches!(
            HeapLayout::plan(&zero, &c),
            Err(Error::InvalidConfig(_))
        ));
        let group = HeapConfig::new(1 << 20).bind_group_index(c.limits.max_bind_groups);
        assert!(matches!(
            HeapLayout::plan(&group, &c),
            Err(Error::LimitTooLow {
                limit: "max_bind_groups",
                ..
            })
        ));
        let last = HeapConfig::new(1 << 20).bind_group_index(c.limits.max_bind_groups - 1);
        assert!(HeapLayout::plan(&last, &c).is_ok());
    }

    #[test]
    fn eight_gib_on_a_two_gib_binding_is_eight_segments() {
        let c = HeapConfig::new(8 << 30);
        let l = HeapLayout::plan(&c, &caps((2 << 30) - 4, true)).unwrap();
        assert_eq!(l.segment_sizes, vec![1 << 30; 8]);
        assert_eq!(l.segment_shift, 26);
        assert_eq!(l.binding, SegmentBindingKind::BindingArray);
    }

    #[test]
    fn uneven_heap_has_a_short_last_segment() {
        let c = HeapConfig::new(300 << 20).max_separate_bindings(8);
        let l = HeapLayout::plan(&c, &caps(128 << 20, false)).unwrap();
        assert_eq!(l.segment_sizes, vec![128 << 20, 128 << 20, 44 << 20]);
        assert_eq!(l.binding, SegmentBindingKind::Separate);
        // Handles locate across segments, and not past the short last one.
        let seg_units = 128u64 << 20 >> 4;
        let at = |unit: u64| l.locate(unit as u32 + 1);
        assert_eq!(at(0).unwrap().segment, 0);
        assert_eq!(at(seg_units - 1).unwrap().offset, (128 << 20) - 16);
        let second = at(seg_units + 5).unwrap();
        assert_eq!((second.segment, second.offset), (1, 80));
        let last = at(2 * seg_units + (44 << 16) - 1).unwrap();
        assert_eq!((last.segment, last.offset), (2, (44 << 20) - 16));
        assert_eq!(at(2 * seg_units + (44 << 16)), None);
        assert_eq!(l.locate(0), None);
    }

    #[test]
    fn small_heap_is_one_segment() {
        let rw_bm = HeapConfig::new(1000).strategy(Strategy::RwBm);
        let l = HeapLayout::plan(&rw_bm, &caps(128 << 20, true)).unwrap();
        assert_eq!(l.bytes, 1008);
        assert_eq!(l.segment_sizes, vec![1008]);
        assert_eq!(l.segment_shift, 6);
        assert_eq!(l.walk().unwrap().items, 3);
    }

    #[test]
    fn every_segment_is_bound_once() {
        let mut c = caps(1 << 20, false);
        c.limits.max_storage_buffers_per_shader_stage = 5;
        let config = HeapConfig::new(4 << 20)
            .segment_binding(SegmentBinding::Separate)
            .max_separate_bindings(8);
        for strategy in [Strategy::OuroPS, Strategy::OuroPVA] {
            let l = HeapLayout::plan(&config.clone().strategy(strategy), &c).unwrap();
            assert_eq!(l.bindings().len(), 5, "{strategy}");
        }
        c.limits.max_storage_buffers_per_shader_stage = 4;
        assert!(matches!(
            HeapLayout::plan(&config.strategy(Strategy::OuroPVA), &c),
            Err(Error::LimitTooLow { needed: 5, .. })
        ));
    }

    #[test]
    fn growable_heap_reserves_segments_of_the_initial_size() {
        let c = HeapConfig::new(64 << 20)
            .max_size(1 << 30)
            .strategy(Strategy::RwBm);
        let l = HeapLayout::plan(&c, &caps(128 << 20, true)).unwrap();
        assert!(l.growable);
        assert_eq!(l.segment_sizes, vec![64 << 20; 16]);
        assert_eq!(l.initial_segments, 1);
        assert_eq!(l.initial_bytes(), 64 << 20);
        assert!(l.config_wgsl().contains("#define GPU_HEAP_GROWABLE"));
        // Bitmaps are sized for the maximum.
        assert_eq!(l.walk().unwrap().items, (1 << 30) / 256);
        // Not growable: no define, everything committed.
        let fixed = HeapLayout::plan(&HeapConfig::new(64 << 20), &caps(128 << 20, true)).unwrap();
        assert!(!fixed.growable);
        assert_eq!(fixed.initial_segments, fixed.segment_count());
        assert!(!fixed.config_wgsl().contains("GPU_HEAP_GROWABLE"));
    }

    #[test]
    fn growable_stride_doubles_to_fit_the_bindings() {
        // 64 MiB to 8 GiB would be 128 segments; the device binds at most 63.
        let c = HeapConfig::new(64 << 20).max_size(8 << 30);
        let l = HeapLayout::plan(&c, &caps((2 << 30) - 4, true)).unwrap();
        assert_eq!(l.segment_sizes, vec![256 << 20; 32]);
        assert_eq!(l.initial_segments, 1);
    }

    #[test]
    fn bad_input_is_typed() {
        let c = caps(128 << 20, false);
        assert!(matches!(
            HeapLayout::plan(&HeapConfig::new(0), &c),
            Err(Error::ZeroSize)
        ));
        assert!(matches!(
            HeapLayout::plan(&HeapConfig::new(1 << 40), &c),
            Err(Error::TooLarge { .. })
        ));
        assert!(matches!(
            HeapLayout::plan(
                &HeapConfig::new(1 << 20)
                    .strategy(Strategy::RwBm)
                    .random_walk(crate::RandomWalkParams {
                        page_size: 48,
                        ..Default::default()
                    }),
                &c
            ),
            Err(Error::InvalidConfig(_))
        ));
        // The default (ualloc) needs a whole 4 KiB bin.
        assert!(matches!(
            HeapLayout::plan(&HeapConfig::new(1000), &c),
            Err(Error::InvalidConfig(m)) if m.contains("ualloc")
        ));
        assert!(matches!(
            HeapLayout::plan(
                &HeapConfig::new(512 << 20).segment_binding(SegmentBinding::BindingArray),
                &c
            ),
            Err(Error::MissingFeatures { .. })
        ));
        assert!(matches!(
            HeapLayout::plan(&HeapConfig::new(1 << 30), &c),
            Err(Error::TooLarge { .. })
        ));
    }
}
