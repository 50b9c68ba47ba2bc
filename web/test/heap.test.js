// The conformance basics through the JS module and a flattened module, on Dawn (the `webgpu`
// npm package): for each case in $GPU_HEAP_WEB_CASES (<name>.wgsl and <name>.json, written
// by `gpu-heap flatten --manifest`; a manifest's features are requested), hashed lanes malloc, write a pattern into every word,
// verify it, and free; no two blocks overlap; the statistics count exactly that, and the
// bad input; the heap, reset, serves the same again. cli/tests/web.rs runs it in CI.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { create, globals } from 'webgpu';
import { createHeap, checkManifest, GpuHeapError } from '../gpu-heap.js';

Object.assign(globalThis, globals);

const casesDir = process.env.GPU_HEAP_WEB_CASES;
if (!casesDir) {
  throw new Error('GPU_HEAP_WEB_CASES is not set: run cli/tests/web.rs (cargo test --release --test web)');
}
const cases = readdirSync(casesDir).filter((f) => f.endsWith('.json')).map((f) => f.slice(0, -5)).sort();

// Lanes per dispatch: 64 workgroups of 64.
const LANES = 4096;

const userCode = /* wgsl */ `
struct TestParams { lanes: u32, seed: u32, size_max: u32, round: u32 }
@group(1) @binding(0) var<uniform> test_params: TestParams;
// Per lane: handle and requested size (0, 0: did not allocate or got NULL).
@group(1) @binding(1) var<storage, read_write> slots: array<vec2<u32>>;
// 0: words that read back wrong; 1: NULLs; 2: frees that failed; 3: lanes that called malloc.
@group(1) @binding(2) var<storage, read_write> tally: array<atomic<u32>, 4>;

fn test_mix(x: u32) -> u32 {
    var h = x * 0x9e3779b1u;
    h ^= h >> 15u;
    h *= 0x85ebca77u;
    h ^= h >> 13u;
    return h;
}

fn test_pattern(p: u32, w: u32) -> u32 {
    return test_mix(p ^ (w * 0x27d4eb2fu) ^ test_params.round);
}

@compute @workgroup_size(64)
fn test_alloc(@builtin(global_invocation_id) id: vec3<u32>) {
    let i = id.x;
    if (i < test_params.lanes) {
        let h = test_mix(i ^ test_params.seed);
        var slot = vec2<u32>(0u, 0u);
        if ((h & 3u) != 0u) { // a hashed three quarters of the lanes allocate
            atomicAdd(&tally[3], 1u);
            let size = 1u + test_mix(h) % test_params.size_max;
            let p = malloc(size);
            if (p == 0u) {
                atomicAdd(&tally[1], 1u);
            } else {
                for (var w = 0u; w < (size + 3u) / 4u; w++) {
                    heap_store(p, w, test_pattern(p, w));
                }
                slot = vec2<u32>(p, size);
            }
        }
        slots[i] = slot;
    }
}

@compute @workgroup_size(64)
fn test_verify_and_free(@builtin(global_invocation_id) id: vec3<u32>) {
    let i = id.x;
    if (i < test_params.lanes) {
        let s = slots[i];
        if (s.x != 0u) {
            for (var w = 0u; w < (s.y + 3u) / 4u; w++) {
                if (heap_load(s.x, w) != test_pattern(s.x, w)) {
                    atomicAdd(&tally[0], 1u);
                }
            }
            free(s.x);
            if (heap_status != HEAP_OK) {
                atomicAdd(&tally[2], 1u);
            }
        }
    }
}

// Lane 0: a malloc of 0 bytes and one above the largest; lane 1: a free of a handle that
// no malloc returned (the heap's last unit, misaligned for every strategy's blocks).
@compute @workgroup_size(64)
fn test_bad_input(@builtin(global_invocation_id) id: vec3<u32>) {
    if (id.x == 0u) {
        slots[0].x = malloc(0u) | malloc(HEAP_MAX_ALLOC + 1u);
    }
    if (id.x == 1u) {
        free(test_params.seed);
    }
}
`;

// One instance for the whole file: a device must not outlive the instance it came from.
const gpu = create([]);

async function openDevice(requiredFeatures = []) {
  const adapter = await gpu.requestAdapter();
  assert.ok(adapter, 'Dawn found no WebGPU adapter');
  for (const f of requiredFeatures) {
    assert.ok(adapter.features.has(f), `the adapter lacks ${f}`);
  }
  return adapter.requestDevice({ requiredFeatures });
}

async function readU32(device, buffer, bytes) {
  const staging = device.createBuffer({ size: bytes, usage: GPUBufferUsage.COPY_DST | GPUBufferUsage.MAP_READ });
  const encoder = device.createCommandEncoder();
  encoder.copyBufferToBuffer(buffer, 0, staging, 0, bytes);
  device.queue.submit([encoder.finish()]);
  await staging.mapAsync(GPUMapMode.READ);
  const out = new Uint32Array(staging.getMappedRange().slice(0));
  staging.unmap();
  staging.destroy();
  return out;
}

test('manifests the module cannot serve are refused with a typed error', () => {
  const manifest = JSON.parse(readFileSync(join(casesDir, `${cases[0]}.json`), 'utf8'));
  const aliased = { ...manifest, bindings: [...manifest.bindings, { ...manifest.bindings[1], binding: 99 }] };
  assert.throws(() => checkManifest(aliased), GpuHeapError);
  const array = { ...manifest, bindings: [{ ...manifest.bindings[1], array_count: 4 }] };
  assert.throws(() => checkManifest(array), GpuHeapError);
  assert.throws(() => checkManifest({}), GpuHeapError);
});

test('a module the device rejects fails createHeap with a typed error', async () => {
  const name = cases.find((c) => JSON.parse(readFileSync(join(casesDir, `${c}.json`), 'utf8')).init_invocations > 0);
  const manifest = JSON.parse(readFileSync(join(casesDir, `${name}.json`), 'utf8'));
  const device = await openDevice();
  await assert.rejects(createHeap(device, manifest, 'this is not WGSL'), GpuHeapError);
  device.destroy();
});

for (const name of cases) {
  test(name, { timeout: 600_000 }, async () => {
    const manifest = JSON.parse(readFileSync(join(casesDir, `${name}.json`), 'utf8'));
    const wgsl = readFileSync(join(casesDir, `${name}.wgsl`), 'utf8');
    if (manifest.features.length > 0) {
      // Without the feature the module is refused with a typed error.
      const bare = await openDevice();
      await assert.rejects(createHeap(bare, manifest, wgsl), GpuHeapError);
      bare.destroy();
    }
    const device = await openDevice(manifest.features);
    device.pushErrorScope('validation');
    const heap = await createHeap(device, manifest, wgsl);

    const userLayout = device.createBindGroupLayout({
      entries: [
        { binding: 0, visibility: GPUShaderStage.COMPUTE, buffer: { type: 'uniform' } },
        { binding: 1, visibility: GPUShaderStage.COMPUTE, buffer: { type: 'storage' } },
        { binding: 2, visibility: GPUShaderStage.COMPUTE, buffer: { type: 'storage' } },
      ],
    });
    const layout = heap.pipelineLayout({ 1: userLayout });
    const module = device.createShaderModule({ code: heap.shaderSource(userCode) });
    const pipeline = (entryPoint) => device.createComputePipeline({ layout, compute: { module, entryPoint } });
    const [alloc, verifyAndFree, badInput] = ['test_alloc', 'test_verify_and_free', 'test_bad_input'].map(pipeline);
    const usage = GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST;
    const params = device.createBuffer({ size: 16, usage: GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST });
    const slots = device.createBuffer({ size: LANES * 8, usage });
    const tally = device.createBuffer({ size: 16, usage });
    const userGroup = device.createBindGroup({
      layout: userLayout,
      entries: [params, slots, tally].map((buffer, binding) => ({ binding, resource: { buffer } })),
    });
    const run = async (p, lanes) => {
      const encoder = device.createCommandEncoder();
      const pass = encoder.beginComputePass();
      pass.setPipeline(p);
      pass.setBindGroup(heap.bindGroupIndex, heap.bindGroup);
      pass.setBindGroup(1, userGroup);
      pass.dispatchWorkgroups(Math.ceil(lanes / 64));
      pass.end();
      device.queue.submit([encoder.finish()]);
      await device.queue.onSubmittedWorkDone();
    };
    const sizeMax = Math.min(manifest.max_alloc, 512);
    const unitsIn = (bytes) => Math.ceil(bytes / 16);

    let calls = 0; // mallocs (and frees) since the heap was last reset
    for (const round of [1, 2]) {
      device.queue.writeBuffer(params, 0, new Uint32Array([LANES, 0x5eed0000 + round, sizeMax, round]));
      device.queue.writeBuffer(tally, 0, new Uint32Array(4));
      await run(alloc, LANES);
      const s = await readU32(device, slots, LANES * 8);
      const live = [];
      for (let i = 0; i < LANES; i++) {
        if (s[2 * i] !== 0) {
          live.push([s[2 * i] - 1, unitsIn(s[2 * i + 1])]); // handle = 16-byte unit + 1
        }
      }
      live.sort((a, b) => a[0] - b[0]);
      for (let k = 1; k < live.length; k++) {
        assert.ok(live[k - 1][0] + live[k - 1][1] <= live[k][0], `${name} round ${round}: blocks at units ${live[k - 1][0]} and ${live[k][0]} overlap`);
      }
      let t = await readU32(device, tally, 16);
      assert.equal(t[1], 0, `${name} round ${round}: NULLs on a heap with room`);
      assert.equal(live.length, t[3], `${name} round ${round}: live blocks against lanes that called malloc`);
      calls += t[3];
      let st = await heap.stats();
      assert.equal(st.malloc_calls, calls, `${name} round ${round}: malloc_calls`);
      assert.equal(st.live_allocations, live.length, `${name} round ${round}: live_allocations`);
      assert.equal(st.live_units * 16 >= live.reduce((n, [, u]) => n + u * 16, 0), true, `${name}: live_units below the requested bytes`);

      await run(verifyAndFree, LANES);
      t = await readU32(device, tally, 16);
      assert.equal(t[0], 0, `${name} round ${round}: words that read back wrong`);
      assert.equal(t[2], 0, `${name} round ${round}: frees that failed`);
      st = await heap.stats();
      assert.equal(st.free_calls, calls, `${name} round ${round}: free_calls`);
      assert.equal(st.out_of_memory + st.contention + st.invalid_request + st.invalid_free, 0, `${name} round ${round}: failures`);
      if (manifest.strategy !== 'bump') {
        assert.equal(st.live_allocations, 0, `${name} round ${round}: live_allocations after every free`);
        assert.equal(st.live_units, 0, `${name} round ${round}: live_units after every free`);
      }
      if (manifest.strategy === 'bump' || round === 1) {
        // A reset empties the heap and its statistics (bump's free releases nothing). Round
        // 2 then runs on memory that round 1 wrote its patterns into: the virtualized
        // Ouroboros queues count on the reset zero-filling it (reset_clears_segments).
        await heap.reset();
        calls = 0;
        st = await heap.stats();
        assert.ok(Object.values(st).every((v) => v === 0), `${name}: statistics after a reset`);
      }
    }

    // Bad input: counted, nothing handed out, nothing lost.
    const lastUnit = manifest.segment_bytes.reduce((n, b) => n + b, 0) / 16;
    device.queue.writeBuffer(params, 0, new Uint32Array([2, lastUnit, 16, 0]));
    await run(badInput, 2);
    const s = await readU32(device, slots, 8);
    assert.equal(s[0], 0, `${name}: a bad malloc returned a handle`);
    const st = await heap.stats();
    assert.equal(st.invalid_request, 2, `${name}: invalid requests counted`);
    if (manifest.strategy !== 'bump') {
      assert.equal(st.invalid_free, 1, `${name}: invalid frees counted`);
    }
    assert.equal(st.live_allocations, 0, `${name}: live_allocations after bad input`);

    const error = await device.popErrorScope();
    assert.equal(error, null, `${name}: WebGPU validation error: ${error?.message}`);
    heap.destroy();
    device.destroy();
  });
}
