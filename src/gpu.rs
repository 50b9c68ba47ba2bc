//! Device plumbing: choosing an adapter, requesting a device with what the heap can use,
//! the watchdog that turns a hung dispatch into an error, and buffer readback.

use std::sync::mpsc;
use std::time::Duration;

use crate::error::{Error, Result};
use crate::layout::{unsupported_adapter, BINDING_ARRAY_FEATURES};

/// Features the heap can make use of: binding arrays (heaps of several segments) and
/// subgroups (collaborative strategies). None is required: request those your adapter
/// has, `adapter.features() & device_features()`.
pub fn device_features() -> wgpu::Features {
    BINDING_ARRAY_FEATURES | wgpu::Features::SUBGROUP
}

/// A device and what it came from.
pub struct Gpu {
    /// The adapter the device was requested from.
    pub adapter: wgpu::Adapter,
    /// The device, with every feature of [`device_features`] the adapter has.
    pub device: wgpu::Device,
    /// The device's queue.
    pub queue: wgpu::Queue,
}

impl Gpu {
    /// Opens the adapter whose name contains `name` (case-insensitive), or the default one
    /// (passing over adapters known to break the allocators while another exists), with
    /// every feature of [`device_features`] it has, timestamp queries where it has them,
    /// and all of its limits.
    pub fn open(name: Option<&str>) -> Result<Gpu> {
        let instance =
            wgpu::Instance::new(wgpu::InstanceDescriptor::new_without_display_handle_from_env());
        let adapter = match name {
            Some(name) => {
                let wanted = name.to_lowercase();
                let adapters =
                    pollster::block_on(instance.enumerate_adapters(wgpu::Backends::all()));
                let names: Vec<String> = adapters.iter().map(|a| a.get_info().name).collect();
                adapters
                    .into_iter()
                    .find(|a| a.get_info().name.to_lowercase().contains(&wanted))
                    .ok_or_else(|| {
                        Error::NoAdapter(format!(" named \"{name}\" (found: {})", names.join(", ")))
                    })?
            }
            None => {
                let default =
                    pollster::block_on(instance.request_adapter(&wgpu::RequestAdapterOptions {
                        power_preference: wgpu::PowerPreference::HighPerformance,
                        ..Default::default()
                    }))
                    .map_err(|e| Error::NoAdapter(format!(": {e}")))?;
                // An adapter known to break the allocators only if there is no other: the
                // heap then refuses it with the reason (Error::UnsupportedAdapter).
                if unsupported_adapter(&default.get_info()).is_some() {
                    pollster::block_on(instance.enumerate_adapters(wgpu::Backends::all()))
                        .into_iter()
                        .find(|a| unsupported_adapter(&a.get_info()).is_none())
                        .unwrap_or(default)
                } else {
                    default
                }
            }
        };
        let (device, queue) = pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
            label: Some("gpu-heap"),
            // Timestamp queries too, for timing your own passes (the benchmarks do).
            required_features: adapter.features()
                & (device_features() | wgpu::Features::TIMESTAMP_QUERY),
            required_limits: adapter.limits(),
            ..Default::default()
        }))
        .map_err(|e| Error::Gpu {
            what: "requesting a device".into(),
            message: e.to_string(),
        })?;
        Ok(Gpu {
            adapter,
            device,
            queue,
        })
    }

    /// The adapter's name, backend and driver.
    pub fn describe(&self) -> AdapterDescription {
        AdapterDescription::of(&self.adapter)
    }
}

/// Adapter identity, as written into result files.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct AdapterDescription {
    /// The adapter's name.
    pub name: String,
    /// The backend (`vulkan`, `metal`, `dx12`, `gl`).
    pub backend: String,
    /// The driver and its version, as the adapter reports them.
    pub driver: String,
}

impl AdapterDescription {
    /// The description of `adapter`.
    pub fn of(adapter: &wgpu::Adapter) -> Self {
        let info = adapter.get_info();
        AdapterDescription {
            name: info.name,
            backend: format!("{:?}", info.backend).to_lowercase(),
            driver: format!("{} {}", info.driver, info.driver_info)
                .trim()
                .to_owned(),
        }
    }
}

/// A bind group layout of whole-buffer bindings 0, 1, ... for compute, one per kind: the
/// usual shape of a kernel's own buffers next to the heap's group.
///
/// ```no_run
/// # let gpu = gpu_heap::Gpu::open(None).unwrap();
/// let rw = wgpu::BufferBindingType::Storage { read_only: false };
/// let layout = gpu_heap::buffer_group_layout(&gpu.device, "my kernel", &[rw, rw]);
/// ```
pub fn buffer_group_layout(
    device: &wgpu::Device,
    label: &str,
    kinds: &[wgpu::BufferBindingType],
) -> wgpu::BindGroupLayout {
    let entries: Vec<wgpu::BindGroupLayoutEntry> = kinds
        .iter()
        .enumerate()
        .map(|(i, &ty)| wgpu::BindGroupLayoutEntry {
            binding: i as u32,
            visibility: wgpu::ShaderStages::COMPUTE,
            ty: wgpu::BindingType::Buffer {
                ty,
                has_dynamic_offset: false,
                min_binding_size: None,
            },
            count: None,
        })
        .collect();
    device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
        label: Some(label),
        entries: &entries,
    })
}

/// A bind group of `layout` binding each of `buffers` whole, at bindings 0, 1, ...
pub fn buffer_group(
    device: &wgpu::Device,
    label: &str,
    layout: &wgpu::BindGroupLayout,
    buffers: &[&wgpu::Buffer],
) -> wgpu::BindGroup {
    let entries: Vec<wgpu::BindGroupEntry> = buffers
        .iter()
        .enumerate()
        .map(|(i, b)| wgpu::BindGroupEntry {
            binding: i as u32,
            resource: b.as_entire_binding(),
        })
        .collect();
    device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: Some(label),
        layout,
        entries: &entries,
    })
}

/// Waits for `submission` for at most `timeout`.
///
/// On timeout the device is leaked on purpose: the hung work keeps running, and dropping a
/// device with hung work blocks forever on some drivers, while a
/// leaked one lets the process report the error and exit.
pub fn wait_for(
    device: &wgpu::Device,
    submission: wgpu::SubmissionIndex,
    timeout: Duration,
    what: &str,
) -> Result<()> {
    match device.poll(wgpu::PollType::Wait {
        submission_index: Some(submission),
        timeout: Some(timeout),
    }) {
        Ok(_) => Ok(()),
        Err(wgpu::PollError::Timeout) => {
            std::mem::forget(device.clone());
            Err(Error::Timeout {
                what: what.to_owned(),
                after: timeout,
            })
        }
        Err(e) => Err(Error::Gpu {
            what: what.to_owned(),
            message: e.to_string(),
        }),
    }
}

/// Submits `encoder` and waits for it under the watchdog, turning wgpu validation errors
/// raised while recording into [`Error::Gpu`].
pub fn submit_and_wait(
    device: &wgpu::Device,
    queue: &wgpu::Queue,
    encoder: wgpu::CommandEncoder,
    timeout: Duration,
    what: &str,
) -> Result<()> {
    let scope = device.push_error_scope(wgpu::ErrorFilter::Validation);
    let submission = queue.submit([encoder.finish()]);
    if let Some(e) = pollster::block_on(scope.pop()) {
        return Err(Error::Gpu {
            what: what.to_owned(),
            message: e.to_string(),
        });
    }
    wait_for(device, submission, timeout, what)
}

/// Copies `size` bytes at `offset` of `buffer` (which needs COPY_SRC) back to the host,
/// all of it (the work submitted before, the copy, the mapping) within `timeout`.
pub fn read_buffer(
    device: &wgpu::Device,
    queue: &wgpu::Queue,
    buffer: &wgpu::Buffer,
    offset: u64,
    size: u64,
    timeout: Duration,
) -> Result<Vec<u8>> {
    let staging = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("gpu-heap readback"),
        size,
        usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    // One watchdog for the whole readback: each wait gets what the ones before it left.
    let deadline = std::time::Instant::now() + timeout;
    let left = || deadline.saturating_duration_since(std::time::Instant::now());
    let mut encoder = device.create_command_encoder(&Default::default());
    encoder.copy_buffer_to_buffer(buffer, offset, &staging, 0, size);
    submit_and_wait(device, queue, encoder, left(), "readback copy")?;
    let (tx, rx) = mpsc::channel();
    staging.slice(..).map_async(wgpu::MapMode::Read, move |r| {
        let _ = tx.send(r);
    });
    let submission = queue.submit([]);
    wait_for(device, submission, left(), "readback map")?;
    rx.recv_timeout(left())
        .map_err(|_| Error::Timeout {
            what: "readback map callback".into(),
            after: timeout,
        })?
        .map_err(|e| Error::Gpu {
            what: "mapping a readback buffer".into(),
            message: e.to_string(),
        })?;
    let bytes = staging
        .slice(..)
        .get_mapped_range()
        .map_err(|e| Error::Gpu {
            what: "reading a mapped buffer".into(),
            message: e.to_string(),
        })?
        .to_vec();
    staging.unmap();
    Ok(bytes)
}

/// The usages of every buffer [`storage_buffer`] makes, the heap's included: STORAGE for
/// its binding, COPY_DST for the zero-fill and the committed-units write before the init
/// pass, COPY_SRC to read the statistics back. The manifest lists them by name
/// (`Manifest::buffer_usages`).
pub(crate) const STORAGE_USAGES: wgpu::BufferUsages = wgpu::BufferUsages::STORAGE
    .union(wgpu::BufferUsages::COPY_SRC)
    .union(wgpu::BufferUsages::COPY_DST);

/// A zeroed storage buffer of `size` bytes that can be copied from and to, or the error
/// the device reported (out of memory, a size past its limits) instead of a panic.
///
/// ```no_run
/// # fn main() -> gpu_heap::Result<()> {
/// let gpu = gpu_heap::Gpu::open(None)?;
/// let buffer = gpu_heap::storage_buffer(&gpu.device, "results", 1 << 20)?;
/// assert_eq!(buffer.size(), 1 << 20);
/// # Ok(()) }
/// ```
pub fn storage_buffer(device: &wgpu::Device, label: &str, size: u64) -> Result<wgpu::Buffer> {
    let oom = device.push_error_scope(wgpu::ErrorFilter::OutOfMemory);
    let validation = device.push_error_scope(wgpu::ErrorFilter::Validation);
    let buffer = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some(label),
        size,
        usage: STORAGE_USAGES,
        mapped_at_creation: false,
    });
    let invalid = pollster::block_on(validation.pop());
    let out_of_memory = pollster::block_on(oom.pop());
    match invalid.or(out_of_memory) {
        None => Ok(buffer),
        Some(e) => Err(Error::Gpu {
            what: format!("creating buffer {label} ({size} bytes)"),
            message: e.to_string(),
        }),
    }
}
