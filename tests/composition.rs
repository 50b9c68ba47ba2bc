//! The heap's WGSL composed by other tools: its flattened module (`GpuHeap::flatten`)
//! imported through naga_oil, as Bevy composes shaders, and as a WESL module, and run; and
//! the manifest that tells a host outside Rust how to run it.

mod common;

use std::borrow::Cow;

use common::{Kernel, RW};
use gpu_heap::{Gpu, GpuHeap, HeapConfig, RawStats, Strategy};
use naga_oil::compose::{ComposableModuleDescriptor, Composer, NagaModuleDescriptor};

/// Each invocation allocates, writes, reads back through the heap and frees (after the
/// import line of each tool).
const USER: &str = r#"
@group(1) @binding(0) var<storage, read_write> out: array<u32>;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    let p = malloc(16u);
    if (p == 0u) {
        out[id.x] = 0xffffffffu;
        return;
    }
    heap_store(p, 3u, id.x * 3u + 1u);
    out[id.x] = heap_load(p, 3u);
    free(p);
}
"#;

#[test]
fn naga_oil_imports_the_flattened_module() {
    for_each_heap(|gpu, heap, strategy| {
        // naga_oil validates with the capabilities it is given; the device's own validation
        // of the composed module follows in create_shader_module.
        let mut composer = Composer::default().with_capabilities(naga::valid::Capabilities::all());
        composer
            .add_composable_module(ComposableModuleDescriptor {
                source: &heap.flatten().unwrap(),
                file_path: "gpu_heap.wgsl",
                as_name: Some("gpu_heap".into()),
                ..Default::default()
            })
            .unwrap_or_else(|e| panic!("{strategy}: {e:?}"));
        let naga_module = composer
            .make_naga_module(NagaModuleDescriptor {
                source: &format!(
                    "#import gpu_heap::{{malloc, free, heap_store, heap_load}}\n{USER}"
                ),
                file_path: "user.wgsl",
                ..Default::default()
            })
            .unwrap_or_else(|e| panic!("{strategy}: {e:?}"));
        gpu.device
            .create_shader_module(wgpu::ShaderModuleDescriptor {
                label: Some("naga_oil user"),
                source: wgpu::ShaderSource::Naga(Cow::Owned(naga_module)),
            })
    });
}

#[test]
fn wesl_imports_the_flattened_module() {
    for_each_heap(|gpu, heap, strategy| {
        let mut resolver = wesl::VirtualResolver::new();
        let path = |p: &str| p.parse::<wesl::ModulePath>().unwrap();
        resolver.add_module(path("package::gpu_heap"), heap.flatten().unwrap().into());
        let user =
            format!("import package::gpu_heap::{{malloc, free, heap_store, heap_load}};\n{USER}");
        resolver.add_module(path("package::user"), user.into());
        let wgsl = wesl::Wesl::new("")
            .set_custom_resolver(resolver)
            .compile(&path("package::user"))
            .unwrap_or_else(|e| panic!("{strategy}: {e}"))
            .to_string();
        gpu.device
            .create_shader_module(wgpu::ShaderModuleDescriptor {
                label: Some("wesl user"),
                source: wgpu::ShaderSource::Wgsl(wgsl.into()),
            })
    });
}

/// For a heap of each of three families, the user's module that `compose` makes of the
/// heap's flattened module: 4096 invocations run, every word right, the live counters zero.
fn for_each_heap(compose: impl Fn(&Gpu, &GpuHeap, Strategy) -> wgpu::ShaderModule) {
    let gpu = common::gpu();
    for strategy in [Strategy::RwBm, Strategy::OuroPS, Strategy::TBuddy] {
        let config = HeapConfig::new(4 << 20)
            .strategy(strategy)
            .watchdog(common::WATCHDOG);
        let heap = GpuHeap::with_config(&gpu.device, &gpu.queue, config).unwrap();
        let module = compose(gpu, &heap, strategy);
        run_and_check(gpu, &heap, &module, strategy);
    }
}

fn run_and_check(gpu: &Gpu, heap: &GpuHeap, module: &wgpu::ShaderModule, strategy: Strategy) {
    let kernel = Kernel::from_module(gpu, heap, module, "main", &[RW]);
    let n = 64 * 64;
    let out = common::storage(gpu, "out", n as u64 * 4);
    kernel.run(gpu, heap, &[&out], n / 64);
    let got = common::read_words(gpu, &out, n as u64);
    let wrong = (0..n).filter(|&i| got[i as usize] != i * 3 + 1).count();
    assert_eq!(wrong, 0, "{strategy}: wrong words");
    let stats = heap.stats().unwrap();
    assert_eq!(stats.malloc_calls, n as u64, "{strategy}");
    assert_eq!(stats.allocations_live, 0, "{strategy}");
}

/// The manifest describes the heap the library builds for the same configuration: its
/// buffers, its bindings, its init pass, and statistics words that hold what `stats()`
/// reads after a kernel ran.
#[test]
fn the_manifest_describes_the_heap() {
    let gpu = common::gpu();
    for strategy in [Strategy::RwBm, Strategy::OuroCS, Strategy::TBuddy] {
        let config = HeapConfig::new(4 << 20)
            .strategy(strategy)
            .watchdog(common::WATCHDOG);
        let heap = GpuHeap::with_config(&gpu.device, &gpu.queue, config.clone()).unwrap();
        let m = gpu_heap::manifest(&config, &gpu.device.limits(), gpu.device.features()).unwrap();
        let layout = heap.layout();
        assert_eq!(m.meta_bytes, heap.meta_buffer().size(), "{strategy}");
        let sizes: Vec<u64> = heap.segment_buffers().iter().map(|b| b.size()).collect();
        assert_eq!(m.segment_bytes, sizes, "{strategy}");
        assert_eq!(m.bindings.len(), layout.bind_group_layout_entries().len());
        assert_eq!(m.init_invocations, layout.init_invocations(), "{strategy}");
        let user = format!("#include \"alloc.wgsl\"\n{USER}");
        let module = heap.create_shader_module("user", &user).unwrap();
        run_and_check(gpu, &heap, &module, strategy);
        // The statistics block, word by word.
        const STAT_WORDS: u64 = (std::mem::size_of::<RawStats>() / 4) as u64;
        let words = common::read_words(gpu, heap.meta_buffer(), STAT_WORDS);
        let stats = heap.stats().unwrap();
        let counter = |name: &str| {
            let &(_, word, n) = m.statistics.iter().find(|s| s.0 == name).unwrap();
            let low = u64::from(words[word as usize]);
            if n == 2 {
                low | u64::from(words[word as usize + 1]) << 32
            } else {
                low
            }
        };
        assert_eq!(counter("malloc_calls"), stats.malloc_calls, "{strategy}");
        assert_eq!(counter("free_calls"), stats.free_calls, "{strategy}");
        assert_eq!(counter("live_allocations"), stats.allocations_live);
    }
}
