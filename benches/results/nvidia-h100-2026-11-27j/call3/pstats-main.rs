//! Compiles WGSL to SPIR-V as wgpu's Vulkan backend does and prints the driver's pipeline
//! executable statistics (registers and so on) for each compute entry point.
use ash::vk;
use std::collections::BTreeMap;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let wgsl = std::fs::read_to_string(&args[1]).unwrap();
    let bounded = std::env::var("NO_LOOP_BOUNDING").is_err();
    let module = naga::front::wgsl::parse_str(&wgsl).unwrap_or_else(|e| panic!("{}", e.emit_to_string(&wgsl)));
    let info = naga::valid::Validator::new(naga::valid::ValidationFlags::all(), naga::valid::Capabilities::all())
        .validate(&module)
        .unwrap();
    let mut opts = naga::back::spv::Options::default();
    opts.lang_version = (1, 6);
    opts.bounds_check_policies = naga::proc::BoundsCheckPolicies {
        index: naga::proc::BoundsCheckPolicy::Restrict,
        buffer: naga::proc::BoundsCheckPolicy::Unchecked,
        image_load: naga::proc::BoundsCheckPolicy::Unchecked,
        binding_array: naga::proc::BoundsCheckPolicy::Unchecked,
    };
    opts.force_loop_bounding = bounded;
    opts.emit_int_div_checks = std::env::var("NO_DIV_CHECKS").is_err();
    opts.zero_initialize_workgroup_memory = naga::back::spv::ZeroInitializeWorkgroupMemoryMode::Native;
    opts.flags = naga::back::spv::WriterFlags::empty();
    // descriptor set layouts from the module's bindings
    let mut sets: BTreeMap<u32, Vec<vk::DescriptorSetLayoutBinding>> = BTreeMap::new();
    for (_, g) in module.global_variables.iter() {
        let Some(b) = &g.binding else { continue };
        let (inner, count) = match &module.types[g.ty].inner {
            naga::TypeInner::BindingArray { base, size } => {
                let n = match size {
                    naga::ArraySize::Constant(n) => n.get(),
                    _ => 1,
                };
                (&module.types[*base].inner, n)
            }
            t => (t, 1),
        };
        let _ = inner;
        let ty = match g.space {
            naga::AddressSpace::Uniform => vk::DescriptorType::UNIFORM_BUFFER,
            naga::AddressSpace::Storage { .. } => vk::DescriptorType::STORAGE_BUFFER,
            _ => panic!("binding kind"),
        };
        sets.entry(b.group).or_default().push(
            vk::DescriptorSetLayoutBinding::default()
                .binding(b.binding)
                .descriptor_type(ty)
                .descriptor_count(count)
                .stage_flags(vk::ShaderStageFlags::COMPUTE),
        );
    }
    unsafe {
        let entry = ash::Entry::load().unwrap();
        let app = vk::ApplicationInfo::default().api_version(vk::API_VERSION_1_3);
        let instance = entry
            .create_instance(&vk::InstanceCreateInfo::default().application_info(&app), None)
            .unwrap();
        let pds = instance.enumerate_physical_devices().unwrap();
        let pd = *pds
            .iter()
            .find(|&&p| instance.get_physical_device_properties(p).device_type == vk::PhysicalDeviceType::DISCRETE_GPU)
            .unwrap_or(&pds[0]);
        let props = instance.get_physical_device_properties(pd);
        eprintln!("device: {:?}, loop bounding {bounded}", props.device_name_as_c_str().unwrap());
        let mut f11 = vk::PhysicalDeviceVulkan11Features::default();
        let mut f12 = vk::PhysicalDeviceVulkan12Features::default();
        let mut f13 = vk::PhysicalDeviceVulkan13Features::default();
        let mut pe = vk::PhysicalDevicePipelineExecutablePropertiesFeaturesKHR::default();
        let mut f2 = vk::PhysicalDeviceFeatures2::default()
            .push_next(&mut f11)
            .push_next(&mut f12)
            .push_next(&mut f13)
            .push_next(&mut pe);
        instance.get_physical_device_features2(pd, &mut f2);
        let base = f2.features;
        let mut f11 = f11;
        f11.p_next = std::ptr::null_mut();
        let mut f12 = f12;
        f12.p_next = std::ptr::null_mut();
        let mut f13 = f13;
        f13.p_next = std::ptr::null_mut();
        let mut pe = vk::PhysicalDevicePipelineExecutablePropertiesFeaturesKHR::default().pipeline_executable_info(true);
        let mut f2 = vk::PhysicalDeviceFeatures2::default()
            .features(base)
            .push_next(&mut f11)
            .push_next(&mut f12)
            .push_next(&mut f13)
            .push_next(&mut pe);
        let qf = instance
            .get_physical_device_queue_family_properties(pd)
            .iter()
            .position(|q| q.queue_flags.contains(vk::QueueFlags::COMPUTE))
            .unwrap() as u32;
        let prio = [1.0f32];
        let qinfo = [vk::DeviceQueueCreateInfo::default().queue_family_index(qf).queue_priorities(&prio)];
        let exts = [ash::khr::pipeline_executable_properties::NAME.as_ptr()];
        let device = instance
            .create_device(
                pd,
                &vk::DeviceCreateInfo::default()
                    .queue_create_infos(&qinfo)
                    .enabled_extension_names(&exts)
                    .push_next(&mut f2),
                None,
            )
            .unwrap();
        let pep = ash::khr::pipeline_executable_properties::Device::new(&instance, &device);
        let max_set = sets.keys().max().copied().unwrap_or(0);
        let mut layouts = Vec::new();
        for s in 0..=max_set {
            let bindings = sets.get(&s).cloned().unwrap_or_default();
            let mut flags: Vec<vk::DescriptorBindingFlags> = Vec::new();
            flags.resize(bindings.len(), vk::DescriptorBindingFlags::PARTIALLY_BOUND);
            let mut bf = vk::DescriptorSetLayoutBindingFlagsCreateInfo::default().binding_flags(&flags);
            layouts.push(
                device
                    .create_descriptor_set_layout(
                        &vk::DescriptorSetLayoutCreateInfo::default().bindings(&bindings).push_next(&mut bf),
                        None,
                    )
                    .unwrap(),
            );
        }
        let layout = device
            .create_pipeline_layout(&vk::PipelineLayoutCreateInfo::default().set_layouts(&layouts), None)
            .unwrap();
        let only: Vec<String> = args[2..].to_vec();
        for ep in module.entry_points.iter() {
            if ep.stage != naga::ShaderStage::Compute || (!only.is_empty() && !only.contains(&ep.name)) {
                continue;
            }
            let popts = naga::back::spv::PipelineOptions { shader_stage: ep.stage, entry_point: ep.name.clone() };
            let spv = naga::back::spv::write_vec(&module, &info, &opts, Some(&popts)).unwrap();
            let sm = device
                .create_shader_module(&vk::ShaderModuleCreateInfo::default().code(&spv), None)
                .unwrap();
            let name = std::ffi::CString::new(ep.name.clone()).unwrap();
            let stage = vk::PipelineShaderStageCreateInfo::default()
                .stage(vk::ShaderStageFlags::COMPUTE)
                .module(sm)
                .name(&name);
            let ci = vk::ComputePipelineCreateInfo::default()
                .stage(stage)
                .layout(layout)
                .flags(vk::PipelineCreateFlags::CAPTURE_STATISTICS_KHR);
            let t = std::time::Instant::now();
            let p = device
                .create_compute_pipelines(vk::PipelineCache::null(), &[ci], None)
                .map_err(|e| e.1)
                .unwrap()[0];
            let ms = t.elapsed().as_millis();
            let execs = pep
                .get_pipeline_executable_properties(&vk::PipelineInfoKHR::default().pipeline(p))
                .unwrap();
            let mut line = format!("{} ({} spv words, {ms} ms):", ep.name, spv.len());
            for i in 0..execs.len() {
                let stats = pep
                    .get_pipeline_executable_statistics(
                        &vk::PipelineExecutableInfoKHR::default().pipeline(p).executable_index(i as u32),
                    )
                    .unwrap();
                for s in stats {
                    let v = match s.format {
                        vk::PipelineExecutableStatisticFormatKHR::BOOL32 => s.value.b32.to_string(),
                        vk::PipelineExecutableStatisticFormatKHR::INT64 => s.value.i64.to_string(),
                        vk::PipelineExecutableStatisticFormatKHR::UINT64 => s.value.u64.to_string(),
                        vk::PipelineExecutableStatisticFormatKHR::FLOAT64 => s.value.f64.to_string(),
                        _ => "?".into(),
                    };
                    line += &format!(" {}={v};", s.name_as_c_str().unwrap().to_string_lossy());
                }
            }
            println!("{line}");
            device.destroy_pipeline(p, None);
            device.destroy_shader_module(sm, None);
        }
    }
}
