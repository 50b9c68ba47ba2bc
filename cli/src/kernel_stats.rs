//! The driver's statistics of compiled kernels (`gpu-heap kernel-stats`): registers per
//! invocation and the rest of what a Vulkan driver reports through
//! `VK_KHR_pipeline_executable_properties`. A kernel's registers set how many workgroups a
//! multiprocessor keeps resident, and with them how much latency the GPU can hide: on
//! NVIDIA, 65,536 registers per multiprocessor shared by the resident invocations.
//!
//! The kernels are composed as the benchmark composes them, translated to SPIR-V with the
//! options wgpu's Vulkan backend uses, and compiled on a Vulkan device of our own (wgpu
//! cannot ask for the statistics), on the physical device of the adapter that planned the
//! heap.

use std::collections::BTreeMap;
use std::ffi::CString;

use ash::vk;
use gpu_heap::{Gpu, HeapConfig};

use crate::{Error, Result};

/// One kernel's statistics, in the order the driver reports them.
#[derive(Clone, Debug, serde::Serialize)]
pub struct KernelStats {
    pub kernel: String,
    pub statistics: Vec<(String, String)>,
}

impl KernelStats {
    /// The statistic named `name` (NVIDIA's "Register Count", say), if reported.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.statistics
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// The statistics of `kernels` (entry points of the benchmark's kernel file) for a heap of
/// `config` as planned on `gpu`'s adapter.
pub fn bench_kernels(
    gpu: &Gpu,
    config: &HeapConfig,
    kernels: &[String],
) -> Result<Vec<KernelStats>> {
    let features = gpu.device.features();
    let composer = gpu_heap::composer(config, &gpu.device.limits(), features)?;
    let name = crate::kernels::bench_file(features.contains(wgpu::Features::SUBGROUP));
    let (_, module) = crate::kernels::compose(composer, name)?;
    // The module was validated; the SPIR-V writer wants the validator's analysis of it too.
    let info = naga::valid::Validator::new(
        naga::valid::ValidationFlags::all(),
        naga::valid::Capabilities::all(),
    )
    .validate(&module)
    .map_err(|e| naga_error(name, e))?;
    let mut spirv = Vec::new();
    for kernel in kernels {
        if !module.entry_points.iter().any(|e| &e.name == kernel) {
            return Err(Error::InvalidOptions(format!(
                "{name} has no kernel {kernel}"
            )));
        }
        let pipeline = naga::back::spv::PipelineOptions {
            shader_stage: naga::ShaderStage::Compute,
            entry_point: kernel.clone(),
        };
        let words = naga::back::spv::write_vec(&module, &info, &spirv_options(), Some(&pipeline))
            .map_err(|e| naga_error(kernel, e))?;
        spirv.push((kernel.clone(), words));
    }
    let info = gpu.adapter.get_info();
    // SAFETY: `compile` creates and destroys its own Vulkan objects, in order.
    unsafe { compile(info.vendor, info.device, &descriptor_sets(&module), &spirv) }
}

/// The SPIR-V options of wgpu's Vulkan backend on a Vulkan 1.3 device with
/// robustBufferAccess2 (wgpu-hal's `vulkan::adapter`): index bounds clamped, buffer bounds
/// left to the driver, every loop bounded, integer division checked.
fn spirv_options() -> naga::back::spv::Options<'static> {
    let mut options = naga::back::spv::Options {
        lang_version: (1, 6),
        flags: naga::back::spv::WriterFlags::empty(),
        ..Default::default()
    };
    options.bounds_check_policies = naga::proc::BoundsCheckPolicies {
        index: naga::proc::BoundsCheckPolicy::Restrict,
        buffer: naga::proc::BoundsCheckPolicy::Unchecked,
        image_load: naga::proc::BoundsCheckPolicy::Unchecked,
        binding_array: naga::proc::BoundsCheckPolicy::Unchecked,
    };
    options.zero_initialize_workgroup_memory =
        naga::back::spv::ZeroInitializeWorkgroupMemoryMode::Native;
    options.force_loop_bounding = true;
    options.emit_int_div_checks = true;
    options
}

/// The module's buffer bindings, by bind group: (binding, descriptor type, count).
fn descriptor_sets(module: &naga::Module) -> BTreeMap<u32, Vec<(u32, vk::DescriptorType, u32)>> {
    let mut sets: BTreeMap<u32, Vec<_>> = BTreeMap::new();
    for (_, var) in module.global_variables.iter() {
        let Some(binding) = &var.binding else {
            continue;
        };
        let count = match module.types[var.ty].inner {
            naga::TypeInner::BindingArray {
                size: naga::ArraySize::Constant(n),
                ..
            } => n.get(),
            _ => 1,
        };
        let kind = match var.space {
            naga::AddressSpace::Uniform => vk::DescriptorType::UNIFORM_BUFFER,
            _ => vk::DescriptorType::STORAGE_BUFFER,
        };
        sets.entry(binding.group)
            .or_default()
            .push((binding.binding, kind, count));
    }
    sets
}

fn naga_error(what: &str, e: impl std::fmt::Display) -> Error {
    Error::Gpu {
        what: format!("translating {what} to SPIR-V"),
        message: e.to_string(),
    }
}

fn vulkan(what: &str) -> impl Fn(vk::Result) -> Error + '_ {
    move |e| Error::Unsupported(format!("Vulkan: {what}: {e}"))
}

/// Compiles each kernel with CAPTURE_STATISTICS on the physical device with this vendor and
/// device id, and reads its statistics.
///
/// # Safety
/// Calls into the Vulkan loader; every object made here is destroyed before it returns.
unsafe fn compile(
    vendor: u32,
    device_id: u32,
    sets: &BTreeMap<u32, Vec<(u32, vk::DescriptorType, u32)>>,
    spirv: &[(String, Vec<u32>)],
) -> Result<Vec<KernelStats>> {
    let entry =
        ash::Entry::load().map_err(|e| Error::Unsupported(format!("no Vulkan loader: {e}")))?;
    let app = vk::ApplicationInfo::default().api_version(vk::API_VERSION_1_3);
    let instance = entry
        .create_instance(
            &vk::InstanceCreateInfo::default().application_info(&app),
            None,
        )
        .map_err(vulkan("creating an instance"))?;
    let result = (|| {
        let physical = instance
            .enumerate_physical_devices()
            .map_err(vulkan("listing devices"))?
            .into_iter()
            .find(|&p| {
                let props = instance.get_physical_device_properties(p);
                props.vendor_id == vendor && props.device_id == device_id
            })
            .ok_or_else(|| Error::Unsupported("the adapter is not a Vulkan device".into()))?;
        let extension = ash::khr::pipeline_executable_properties::NAME;
        let has_extension = instance
            .enumerate_device_extension_properties(physical)
            .map_err(vulkan("listing extensions"))?
            .iter()
            .any(|e| e.extension_name_as_c_str() == Ok(extension));
        if !has_extension {
            return Err(Error::Unsupported(format!(
                "the driver lacks {}",
                extension.to_string_lossy()
            )));
        }
        // Every feature the device has (the kernels may use binding arrays, subgroups, ...),
        // and the statistics. The query fills a chain of its own; the enabled chain takes
        // copies, unlinked, and the statistics feature set (its support is the extension's).
        let mut f11 = vk::PhysicalDeviceVulkan11Features::default();
        let mut f12 = vk::PhysicalDeviceVulkan12Features::default();
        let mut f13 = vk::PhysicalDeviceVulkan13Features::default();
        let mut query = vk::PhysicalDeviceFeatures2::default()
            .push_next(&mut f11)
            .push_next(&mut f12)
            .push_next(&mut f13);
        instance.get_physical_device_features2(physical, &mut query);
        let core = query.features;
        let (mut f11, mut f12, mut f13) = (f11, f12, f13);
        f11.p_next = std::ptr::null_mut();
        f12.p_next = std::ptr::null_mut();
        f13.p_next = std::ptr::null_mut();
        let mut stats_feature =
            vk::PhysicalDevicePipelineExecutablePropertiesFeaturesKHR::default()
                .pipeline_executable_info(true);
        let mut features = vk::PhysicalDeviceFeatures2::default()
            .features(core)
            .push_next(&mut f11)
            .push_next(&mut f12)
            .push_next(&mut f13)
            .push_next(&mut stats_feature);
        let family = instance
            .get_physical_device_queue_family_properties(physical)
            .iter()
            .position(|q| q.queue_flags.contains(vk::QueueFlags::COMPUTE))
            .ok_or_else(|| Error::Unsupported("no compute queue".into()))?
            as u32;
        let priority = [1.0f32];
        let queues = [vk::DeviceQueueCreateInfo::default()
            .queue_family_index(family)
            .queue_priorities(&priority)];
        let extensions = [extension.as_ptr()];
        let device = instance
            .create_device(
                physical,
                &vk::DeviceCreateInfo::default()
                    .queue_create_infos(&queues)
                    .enabled_extension_names(&extensions)
                    .push_next(&mut features),
                None,
            )
            .map_err(vulkan("creating a device"))?;
        let result = compile_on(&instance, &device, sets, spirv);
        device.destroy_device(None);
        result
    })();
    instance.destroy_instance(None);
    result
}

/// # Safety
/// `device` is a live device of `instance` with the statistics feature enabled.
unsafe fn compile_on(
    instance: &ash::Instance,
    device: &ash::Device,
    sets: &BTreeMap<u32, Vec<(u32, vk::DescriptorType, u32)>>,
    spirv: &[(String, Vec<u32>)],
) -> Result<Vec<KernelStats>> {
    let stats = ash::khr::pipeline_executable_properties::Device::new(instance, device);
    // What is made is destroyed below, whether or not a later step failed.
    let mut set_layouts = Vec::new();
    let mut layout = vk::PipelineLayout::null();
    let out = (|| {
        for group in 0..sets.keys().max().map_or(0, |g| g + 1) {
            let bindings: Vec<_> = sets
                .get(&group)
                .into_iter()
                .flatten()
                .map(|&(binding, kind, count)| {
                    vk::DescriptorSetLayoutBinding::default()
                        .binding(binding)
                        .descriptor_type(kind)
                        .descriptor_count(count)
                        .stage_flags(vk::ShaderStageFlags::COMPUTE)
                })
                .collect();
            // Binding arrays may be bound in part, as wgpu does.
            let flags = vec![vk::DescriptorBindingFlags::PARTIALLY_BOUND; bindings.len()];
            let mut binding_flags =
                vk::DescriptorSetLayoutBindingFlagsCreateInfo::default().binding_flags(&flags);
            set_layouts.push(
                device
                    .create_descriptor_set_layout(
                        &vk::DescriptorSetLayoutCreateInfo::default()
                            .bindings(&bindings)
                            .push_next(&mut binding_flags),
                        None,
                    )
                    .map_err(vulkan("creating a descriptor set layout"))?,
            );
        }
        layout = device
            .create_pipeline_layout(
                &vk::PipelineLayoutCreateInfo::default().set_layouts(&set_layouts),
                None,
            )
            .map_err(vulkan("creating a pipeline layout"))?;
        spirv
            .iter()
            .map(|(kernel, words)| kernel_stats(device, &stats, layout, kernel, words))
            .collect()
    })();
    if layout != vk::PipelineLayout::null() {
        device.destroy_pipeline_layout(layout, None);
    }
    for set_layout in set_layouts {
        device.destroy_descriptor_set_layout(set_layout, None);
    }
    out
}

/// # Safety
/// As `compile_on`; `layout` fits the kernel's bindings.
unsafe fn kernel_stats(
    device: &ash::Device,
    stats: &ash::khr::pipeline_executable_properties::Device,
    layout: vk::PipelineLayout,
    kernel: &str,
    words: &[u32],
) -> Result<KernelStats> {
    let module = device
        .create_shader_module(&vk::ShaderModuleCreateInfo::default().code(words), None)
        .map_err(vulkan("creating a shader module"))?;
    let name = CString::new(kernel).expect("an entry point name has no NUL");
    let info = vk::ComputePipelineCreateInfo::default()
        .stage(
            vk::PipelineShaderStageCreateInfo::default()
                .stage(vk::ShaderStageFlags::COMPUTE)
                .module(module)
                .name(&name),
        )
        .layout(layout)
        .flags(vk::PipelineCreateFlags::CAPTURE_STATISTICS_KHR);
    let pipeline = device.create_compute_pipelines(vk::PipelineCache::null(), &[info], None);
    device.destroy_shader_module(module, None);
    let pipeline = pipeline.map_err(|(_, e)| vulkan("compiling a kernel")(e))?[0];
    let read = stats
        .get_pipeline_executable_statistics(
            &vk::PipelineExecutableInfoKHR::default()
                .pipeline(pipeline)
                .executable_index(0),
        )
        .map_err(vulkan("reading statistics"));
    device.destroy_pipeline(pipeline, None);
    let statistics = read?
        .iter()
        .map(|s| {
            let name = s
                .name_as_c_str()
                .map_or_else(|_| "?".into(), |n| n.to_string_lossy().into_owned());
            let value = match s.format {
                vk::PipelineExecutableStatisticFormatKHR::BOOL32 => (s.value.b32 != 0).to_string(),
                vk::PipelineExecutableStatisticFormatKHR::INT64 => s.value.i64.to_string(),
                vk::PipelineExecutableStatisticFormatKHR::UINT64 => s.value.u64.to_string(),
                vk::PipelineExecutableStatisticFormatKHR::FLOAT64 => s.value.f64.to_string(),
                _ => "?".into(),
            };
            (name, value)
        })
        .collect();
    Ok(KernelStats {
        kernel: kernel.to_string(),
        statistics,
    })
}
