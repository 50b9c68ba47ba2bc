// The demo page: a per-invocation variable-length output through gpu-heap (the pattern
// that otherwise needs a prefix-sum pass). Loads the flattened module and its manifest
// named by the page's query (?wgsl=...&manifest=..., defaults alloc.wgsl and heap.json),
// and ends with #result reading PASS or FAIL (cli/tests/web.rs checks it in Chromium).

import { createHeap } from '../gpu-heap.js';

const LANES = 4096;
const MAX_WORDS = 16;

const userCode = /* wgsl */ `
@group(1) @binding(0) var<storage, read_write> handles: array<u32>;
// [0] words that read back wrong, [1] NULLs, [2] failed frees; then a count per length.
@group(1) @binding(1) var<storage, read_write> counts: array<atomic<u32>>;

// Half the invocations write 1 word, a quarter 2, ... up to ${MAX_WORDS}.
fn demo_len(i: u32) -> u32 {
    var h = i * 2654435761u;
    h ^= h >> 16u;
    h *= 0x85ebca6bu;
    h ^= h >> 13u;
    return 1u + min(countTrailingZeros(h), ${MAX_WORDS - 1}u);
}

@compute @workgroup_size(64)
fn demo_write(@builtin(global_invocation_id) id: vec3<u32>) {
    let i = id.x;
    let n = demo_len(i);
    let p = malloc(n * 4u);
    if (p == 0u) {
        atomicAdd(&counts[1], 1u);
    } else {
        for (var w = 0u; w < n; w++) {
            heap_store(p, w, i * 100u + w);
        }
    }
    handles[i] = p;
}

@compute @workgroup_size(64)
fn demo_read(@builtin(global_invocation_id) id: vec3<u32>) {
    let i = id.x;
    let p = handles[i];
    if (p != 0u) {
        let n = demo_len(i);
        for (var w = 0u; w < n; w++) {
            if (heap_load(p, w) != i * 100u + w) {
                atomicAdd(&counts[0], 1u);
            }
        }
        atomicAdd(&counts[2u + n], 1u);
        free(p);
        if (heap_status != HEAP_OK) {
            atomicAdd(&counts[2], 1u);
        }
    }
}
`;

async function run() {
  const query = new URLSearchParams(location.search);
  const [manifest, wgsl] = await Promise.all([
    fetch(query.get('manifest') ?? 'heap.json').then((r) => r.json()),
    fetch(query.get('wgsl') ?? 'alloc.wgsl').then((r) => r.text()),
  ]);
  const adapter = await navigator.gpu?.requestAdapter();
  if (!adapter) {
    throw new Error('no WebGPU adapter');
  }
  const device = await adapter.requestDevice({ requiredFeatures: manifest.features });
  const heap = await createHeap(device, manifest, wgsl);
  const storage = GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC;
  const handles = device.createBuffer({ size: LANES * 4, usage: storage });
  const counts = device.createBuffer({ size: (3 + MAX_WORDS + 1) * 4, usage: storage });
  const userLayout = device.createBindGroupLayout({
    entries: [0, 1].map((binding) => ({ binding, visibility: GPUShaderStage.COMPUTE, buffer: { type: 'storage' } })),
  });
  const userGroup = device.createBindGroup({
    layout: userLayout,
    entries: [handles, counts].map((buffer, binding) => ({ binding, resource: { buffer } })),
  });
  device.pushErrorScope('validation');
  const module = device.createShaderModule({ code: heap.shaderSource(userCode) });
  const layout = heap.pipelineLayout({ 1: userLayout });
  const encoder = device.createCommandEncoder();
  const pass = encoder.beginComputePass();
  for (const entryPoint of ['demo_write', 'demo_read']) {
    pass.setPipeline(device.createComputePipeline({ layout, compute: { module, entryPoint } }));
    pass.setBindGroup(heap.bindGroupIndex, heap.bindGroup);
    pass.setBindGroup(1, userGroup);
    pass.dispatchWorkgroups(LANES / 64);
  }
  pass.end();
  const staging = device.createBuffer({ size: counts.size, usage: GPUBufferUsage.COPY_DST | GPUBufferUsage.MAP_READ });
  encoder.copyBufferToBuffer(counts, 0, staging, 0, counts.size);
  device.queue.submit([encoder.finish()]);
  const error = await device.popErrorScope();
  if (error) {
    throw new Error(error.message);
  }
  await staging.mapAsync(GPUMapMode.READ);
  const c = new Uint32Array(staging.getMappedRange().slice(0));
  const stats = await heap.stats();

  const table = document.getElementById('lengths');
  let served = 0;
  for (let n = 1; n <= MAX_WORDS; n++) {
    served += c[2 + n];
    const row = table.insertRow();
    row.insertCell().textContent = n;
    row.insertCell().textContent = c[2 + n];
    row.insertCell().innerHTML = `<span class="bar" style="width:${Math.ceil(c[2 + n] / 8)}px"></span>`;
  }
  const ok = c[0] === 0 && c[1] === 0 && c[2] === 0 && served === LANES
    && stats.malloc_calls === LANES && stats.free_calls === LANES && stats.live_allocations === 0;
  document.getElementById('details').textContent =
    `strategy ${manifest.strategy}; ${served} outputs; wrong words ${c[0]}, NULLs ${c[1]}, ` +
    `failed frees ${c[2]}\nstatistics ${JSON.stringify(stats)}`;
  return ok;
}

const result = document.getElementById('result');
run().then(
  (ok) => { result.textContent = ok ? 'PASS' : 'FAIL'; },
  (e) => { result.textContent = `FAIL: ${e.message}`; },
);
