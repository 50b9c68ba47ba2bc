// gpu-heap for WebGPU: the host side of a flattened alloc.wgsl, for JavaScript.
//
// `gpu-heap flatten --strategy S --manifest heap.json > alloc.wgsl` writes the two inputs:
// the WGSL module (malloc, free, heap_load, heap_store, heap_status) and its manifest
// (buffers, bindings, the init pass, the statistics words). This module reads only the
// manifest: it creates the buffers, runs the init pass, gives the bind group layout and
// bind group for the user's pipelines, and reads the statistics back. No build step.

/** An error of this module: a manifest it cannot serve, or misuse. */
export class GpuHeapError extends Error {
  constructor(message) {
    super(message);
    this.name = 'GpuHeapError';
  }
}

const WORKGROUP = 64;

/**
 * Checks that `manifest` describes a heap this module can create on a WebGPU device, and
 * throws a GpuHeapError saying why not otherwise.
 */
export function checkManifest(manifest) {
  if (!manifest || !Array.isArray(manifest.bindings) || !Array.isArray(manifest.statistics)) {
    throw new GpuHeapError('not a gpu-heap manifest (write one with gpu-heap flatten --manifest)');
  }
  const bound = new Set();
  for (const b of manifest.bindings) {
    if (b.array_count !== null && b.array_count !== undefined) {
      throw new GpuHeapError(
        `${manifest.strategy}: binding ${b.binding} is a binding array, which WebGPU lacks ` +
          '(gpu-heap flatten writes none)');
    }
    if (bound.has(b.buffer)) {
      throw new GpuHeapError(
        `${manifest.strategy}: binding ${b.binding} binds ${b.buffer} a second time, ` +
          'which WebGPU rejects (writable storage aliasing)');
    }
    bound.add(b.buffer);
  }
  if (manifest.committed_segments !== manifest.segment_bytes.length) {
    throw new GpuHeapError(`${manifest.strategy}: heaps that grow are not supported here`);
  }
}

/**
 * Creates the heap that `manifest` describes on `device` and runs its init pass. `wgsl` is
 * the flattened module the manifest came with (its gpu_heap_init entry point is the init
 * pass). Resolves to a GpuHeap once the device has run the init pass.
 */
export async function createHeap(device, manifest, wgsl, options = {}) {
  checkManifest(manifest);
  for (const feature of manifest.features ?? []) {
    if (!device.features.has(feature)) {
      throw new GpuHeapError(
        `${manifest.strategy}: the module needs the device feature '${feature}'; request it ` +
          'in requestDevice({ requiredFeatures }), or flatten without it');
    }
  }
  const heap = new GpuHeap(device, manifest, wgsl, options.label ?? `gpu-heap ${manifest.strategy}`);
  try {
    await heap.reset();
  } catch (e) {
    heap.destroy();
    throw e;
  }
  return heap;
}

/** A heap on a WebGPU device: its buffers, bind group and init pass. */
export class GpuHeap {
  constructor(device, manifest, wgsl, label) {
    this.device = device;
    this.manifest = manifest;
    this.wgsl = wgsl;
    this.label = label;
    const usage = manifest.buffer_usages.reduce((u, name) => u | GPUBufferUsage[name], 0);
    this.meta = device.createBuffer({ label: `${label} heap_meta`, size: manifest.meta_bytes, usage });
    this.segments = manifest.segment_bytes.map((size, i) =>
      device.createBuffer({ label: `${label} segment ${i}`, size, usage }));
    this.bindGroupIndex = manifest.bind_group;
    this.bindGroupLayout = device.createBindGroupLayout({
      label,
      entries: manifest.bindings.map((b) => ({
        binding: b.binding,
        visibility: GPUShaderStage.COMPUTE,
        buffer: { type: 'storage' },
      })),
    });
    this.bindGroup = device.createBindGroup({
      label,
      layout: this.bindGroupLayout,
      entries: manifest.bindings.map((b) => ({
        binding: b.binding,
        resource: { buffer: b.segment === null || b.segment === undefined ? this.meta : this.segments[b.segment] },
      })),
    });
    this.initPipeline = null;
  }

  /**
   * A pipeline layout with the heap's bind group layout at its index and `userLayouts`
   * (an object from group index to GPUBindGroupLayout) at theirs; empty groups fill gaps.
   */
  pipelineLayout(userLayouts = {}) {
    const groups = [];
    const top = Math.max(this.bindGroupIndex, ...Object.keys(userLayouts).map(Number));
    for (let g = 0; g <= top; g++) {
      if (g === this.bindGroupIndex) {
        if (userLayouts[g]) {
          throw new GpuHeapError(`group ${g} is the heap's; put the user's bindings in another group`);
        }
        groups.push(this.bindGroupLayout);
      } else {
        groups.push(userLayouts[g] ?? this.device.createBindGroupLayout({ entries: [] }));
      }
    }
    return this.device.createPipelineLayout({ label: this.label, bindGroupLayouts: groups });
  }

  /**
   * Empties the heap: zero-fills heap_meta (and the segments, where the manifest says
   * `reset_clears_segments`), writes the committed size and runs the init pass. Every
   * handle handed out before is then invalid. Resolves once the device has run it.
   */
  async reset() {
    const m = this.manifest;
    const encoder = this.device.createCommandEncoder({ label: `${this.label} reset` });
    encoder.clearBuffer(this.meta);
    if (m.reset_clears_segments) {
      for (const s of this.segments) {
        encoder.clearBuffer(s);
      }
    }
    this.device.queue.submit([encoder.finish()]);
    this.device.queue.writeBuffer(this.meta, m.committed_units_word * 4, new Uint32Array([m.committed_units]));
    if (m.init_invocations > 0) {
      const workgroups = Math.ceil(m.init_invocations / WORKGROUP);
      if (workgroups > this.device.limits.maxComputeWorkgroupsPerDimension) {
        throw new GpuHeapError(`${m.strategy}: the init pass needs ${workgroups} workgroups, above the device's limit`);
      }
      // A module or pipeline the device rejects (a limit too low, say) must not pass for
      // an initialised heap.
      this.device.pushErrorScope('validation');
      this.initPipeline ??= this.device.createComputePipeline({
        label: `${this.label} init`,
        layout: this.pipelineLayout(),
        compute: { module: this.device.createShaderModule({ code: this.wgsl }), entryPoint: 'gpu_heap_init' },
      });
      const init = this.device.createCommandEncoder({ label: `${this.label} init` });
      const pass = init.beginComputePass();
      pass.setPipeline(this.initPipeline);
      pass.setBindGroup(this.bindGroupIndex, this.bindGroup);
      pass.dispatchWorkgroups(workgroups);
      pass.end();
      this.device.queue.submit([init.finish()]);
      const error = await this.device.popErrorScope();
      if (error) {
        this.initPipeline = null;
        throw new GpuHeapError(`${m.strategy}: the device rejected the init pass: ${error.message}`);
      }
    }
    await this.device.queue.onSubmittedWorkDone();
  }

  /**
   * Reads the statistics block: an object from counter name (the manifest's, e.g.
   * malloc_calls, out_of_memory, live_allocations) to its value, a Number (64-bit
   * counters read exactly up to 2^53).
   */
  async stats() {
    const words = this.manifest.statistics.reduce((n, [, first, count]) => Math.max(n, first + count), 0);
    const staging = this.device.createBuffer({ size: words * 4, usage: GPUBufferUsage.COPY_DST | GPUBufferUsage.MAP_READ });
    const encoder = this.device.createCommandEncoder({ label: `${this.label} stats` });
    encoder.copyBufferToBuffer(this.meta, 0, staging, 0, words * 4);
    this.device.queue.submit([encoder.finish()]);
    await staging.mapAsync(GPUMapMode.READ);
    const w = new Uint32Array(staging.getMappedRange().slice(0));
    staging.unmap();
    staging.destroy();
    const out = {};
    for (const [name, first, count] of this.manifest.statistics) {
      out[name] = count === 2 ? w[first] + w[first + 1] * 2 ** 32 : w[first];
    }
    return out;
  }

  /** The heap's module followed by `userCode`: the text of a user's shader module. */
  shaderSource(userCode) {
    return `${this.wgsl}\n${userCode}`;
  }

  /** Frees the heap's buffers. */
  destroy() {
    this.meta.destroy();
    for (const s of this.segments) {
      s.destroy();
    }
  }
}
