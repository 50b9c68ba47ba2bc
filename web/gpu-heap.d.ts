// Types of gpu-heap.js (uses the WebGPU types of @webgpu/types or the DOM library).

/** A manifest written by `gpu-heap flatten --manifest`. */
export interface Manifest {
  version: string;
  strategy: string;
  compiled: string;
  bind_group: number;
  bindings: {
    binding: number;
    name: string;
    buffer: string;
    array_count: number | null;
    segment: number | null;
    atomic: boolean;
  }[];
  meta_bytes: number;
  segment_bytes: number[];
  /** Whether reset() zero-fills the segments too (Ouroboros on virtualized queues). */
  reset_clears_segments: boolean;
  committed_segments: number;
  committed_units_word: number;
  committed_units: number;
  init_invocations: number;
  /** [name, first word, words]: two words are a 64-bit counter, low word first. */
  statistics: [string, number, number][];
  max_alloc: number;
  /** The parameters the strategy reads; null for the others. */
  random_walk: object | null;
  ouroboros: object | null;
  tbuddy: object | null;
  /** GPUBufferUsage names every buffer is created with. */
  buffer_usages: string[];
  /** WebGPU features the device must have (requiredFeatures), e.g. "subgroups". */
  features: string[];
  api: string[];
}

/** An error of this module: a manifest it cannot serve, or misuse. */
export class GpuHeapError extends Error {}

/** Throws a GpuHeapError if `manifest` describes a heap this module cannot create. */
export function checkManifest(manifest: Manifest): void;

/** Creates the heap on `device` and runs its init pass (`wgsl`: the flattened module). */
export function createHeap(
  device: GPUDevice,
  manifest: Manifest,
  wgsl: string,
  options?: { label?: string },
): Promise<GpuHeap>;

/** The statistics block: counter name to value (malloc_calls, live_allocations, ...). */
export type HeapStats = Record<string, number>;

export class GpuHeap {
  readonly device: GPUDevice;
  readonly manifest: Manifest;
  readonly wgsl: string;
  readonly bindGroupIndex: number;
  readonly bindGroupLayout: GPUBindGroupLayout;
  readonly bindGroup: GPUBindGroup;
  /** A pipeline layout with the heap's group and the user's (group index to layout). */
  pipelineLayout(userLayouts?: Record<number, GPUBindGroupLayout>): GPUPipelineLayout;
  /** Empties the heap and runs the init pass again. */
  reset(): Promise<void>;
  /** Reads the statistics block back. */
  stats(): Promise<HeapStats>;
  /** The heap's module followed by the user's code. */
  shaderSource(userCode: string): string;
  /** Frees the heap's buffers. */
  destroy(): void;
}
