// Conformance kernels: run any strategy through malloc / write / verify / free.
//
// Invocation i owns slots i * K .. i * K + K - 1 (K = params.per_invocation, at least 1), so
// an invocation can hold several allocations across dispatches. A live slot holds a handle,
// the size asked for and a tag; word k of the allocation holds conformance_word(tag, k),
// written over the requested size (every word of the first 4 KiB, then a stride and the
// last word: pattern_next), so an overlap or a stray write shows up as a mismatch when
// verified, and the host checks that no two live allocations overlap. Which invocations allocate is decided by a hash of the invocation
// (malloc_permille), which slots free by a hash of the slot (free_permille): arbitrary
// subsets of the lanes of a subgroup call the allocator, not only regular masks.
// round_trip_pass instead mallocs and frees within one dispatch (K rounds per invocation).
// tally: [0] successful mallocs, [1] NULLs, [2] corrupted allocations, [3] frees that did
// not return HEAP_OK, [8 + s] NULLs with status s; [16 + j] status of step j of bad_input,
// [25] and [26] the outcomes of free_at_once.
// Loops: K slots per invocation; the pattern loops visit at most 1024 + HEAP_MAX_ALLOC /
// (4 * 4099) + 1 words of an allocation.
#include "alloc.wgsl"

struct Params {
    slots: u32,
    size_min: u32,
    size_max: u32,
    seed: u32,
    malloc_permille: u32,
    free_permille: u32,
    round: u32,
    first: u32, // alloc_pass: slots below this one are left alone
    per_invocation: u32, // K; 0 counts as 1
    pad0: u32,
    pad1: u32,
    pad2: u32,
}

struct Slot {
    handle: u32,
    size: u32,
    tag: u32,
    pad: u32,
}

@group(1) @binding(0) var<uniform> params: Params;
@group(1) @binding(1) var<storage, read_write> slots: array<Slot>;
@group(1) @binding(2) var<storage, read_write> tally: array<atomic<u32>>;

const TALLY_OK: u32 = 0u;
const TALLY_NULL: u32 = 1u;
const TALLY_CORRUPTED: u32 = 2u;
const TALLY_FREE_FAILED: u32 = 3u;
const TALLY_NULL_BY_STATUS: u32 = 8u;
const TALLY_BAD_INPUT: u32 = 16u;

fn conformance_word(tag: u32, k: u32) -> u32 {
    return gpu_heap_hash(tag ^ (k * 0x9e3779b9u));
}

fn words_of(size: u32) -> u32 {
    return (size + 3u) / 4u;
}

// The pattern covers every word of the first 4 KiB of an allocation, then every 4099th
// word and the last one: a block of a segment (up to 1 GiB) is written and checked in a
// bounded number of steps, its ends and its whole extent still carrying the pattern.
const PATTERN_DENSE_WORDS: u32 = 1024u;
const PATTERN_STRIDE: u32 = 4099u;

fn pattern_next(k: u32, n: u32) -> u32 {
    if (k + 1u < PATTERN_DENSE_WORDS || k + 1u >= n) {
        return k + 1u;
    }
    return min(k + PATTERN_STRIDE, n - 1u);
}

fn chance(permille: u32, i: u32, salt: u32) -> bool {
    return gpu_heap_hash(gpu_heap_hash(params.seed ^ salt) ^ (i * 0x85ebca6bu) ^ (params.round * 0xc2b2ae35u)) % 1000u < permille;
}

fn pick_size(i: u32) -> u32 {
    if (params.size_max <= params.size_min) {
        return params.size_min;
    }
    let r = gpu_heap_hash(params.seed ^ (i * 0x27d4eb2fu) ^ (params.round * 0x165667b1u));
    return params.size_min + r % (params.size_max - params.size_min + 1u);
}

fn per_invocation() -> u32 {
    return max(params.per_invocation, 1u);
}

// Counts a corrupted allocation if any word of s differs from its pattern.
fn verify(s: Slot) {
    var bad = false;
    let n = words_of(s.size);
    for (var k = 0u; k < n; k = pattern_next(k, n)) {
        if (heap_load(s.handle, k) != conformance_word(s.tag, k)) {
            bad = true;
        }
    }
    if (bad) {
        atomicAdd(&tally[TALLY_CORRUPTED], 1u);
    }
}

// Frees a live handle; counts the free if it did not return HEAP_OK.
fn free_counted(handle: u32) {
    free(handle);
    if (heap_status != HEAP_OK) {
        atomicAdd(&tally[TALLY_FREE_FAILED], 1u);
    }
}

// Mallocs slot i's size and writes its pattern; the NULL slot (counted by cause) if malloc
// returned NULL.
fn allocate(i: u32) -> Slot {
    let size = pick_size(i);
    let p = malloc(size);
    if (p == HEAP_NULL) {
        atomicAdd(&tally[TALLY_NULL], 1u);
        atomicAdd(&tally[TALLY_NULL_BY_STATUS + heap_status], 1u);
        return Slot(HEAP_NULL, 0u, 0u, 0u);
    }
    atomicAdd(&tally[TALLY_OK], 1u);
    let tag = gpu_heap_hash(params.seed ^ gpu_heap_hash(i ^ (params.round << 24u)));
    let n = words_of(size);
    for (var k = 0u; k < n; k = pattern_next(k, n)) {
        heap_store(p, k, conformance_word(tag, k));
    }
    return Slot(p, size, tag, 0u);
}

// Chosen invocations fill their empty slots (from `first` on) and write the pattern.
@compute @workgroup_size(64)
fn alloc_pass(@builtin(global_invocation_id) id: vec3<u32>) {
    let n = per_invocation();
    if (!chance(params.malloc_permille, id.x, 1u)) {
        return;
    }
    for (var j = 0u; j < n; j++) {
        let i = id.x * n + j;
        if (i >= params.first && i < params.slots && slots[i].handle == HEAP_NULL) {
            let a = allocate(i);
            if (a.handle != HEAP_NULL) {
                slots[i] = a;
            }
        }
    }
}

@compute @workgroup_size(64)
fn verify_pass(@builtin(global_invocation_id) id: vec3<u32>) {
    let n = per_invocation();
    for (var j = 0u; j < n; j++) {
        let i = id.x * n + j;
        if (i < params.slots && slots[i].handle != HEAP_NULL) {
            verify(slots[i]);
        }
    }
}

// Verifies every live slot, then frees it with probability free_permille.
@compute @workgroup_size(64)
fn free_pass(@builtin(global_invocation_id) id: vec3<u32>) {
    let n = per_invocation();
    for (var j = 0u; j < n; j++) {
        let i = id.x * n + j;
        if (i >= params.slots || slots[i].handle == HEAP_NULL) {
            continue;
        }
        verify(slots[i]);
        if (!chance(params.free_permille, i, 2u)) {
            continue;
        }
        free_counted(slots[i].handle);
        slots[i] = Slot(HEAP_NULL, 0u, 0u, 0u);
    }
}

// Each chosen invocation makes K round trips in this one dispatch: malloc, write the
// pattern, then verify and free the block of its round before (so every block stays live
// while the invocation allocates and writes once more), and in a last round its last block.
// Mallocs and frees of different invocations run at the same time. Slots are not used.
// The kernels call malloc and free from one place each (drivers inline the allocator at
// every call site).
@compute @workgroup_size(64)
fn round_trip_pass(@builtin(global_invocation_id) id: vec3<u32>) {
    var held = Slot(HEAP_NULL, 0u, 0u, 0u);
    let n = per_invocation();
    for (var j = 0u; j <= n; j++) {
        let i = id.x * n + j;
        var next = Slot(HEAP_NULL, 0u, 0u, 0u);
        if (j < n && i < params.slots && chance(params.malloc_permille, i, 3u)) {
            next = allocate(i);
        }
        release_held(held);
        held = next;
    }
}

// Verifies a round trip's block and frees it (nothing for HEAP_NULL).
fn release_held(s: Slot) {
    if (s.handle != HEAP_NULL) {
        verify(s);
        free_counted(s.handle);
    }
}

fn record(step: u32) {
    atomicStore(&tally[TALLY_BAD_INPUT + step], heap_status);
}

// One invocation: the device-side bad input of the conformance suite, step by step, each
// step's status recorded: malloc of 0 bytes, of HEAP_MAX_ALLOC + 1, of 0xffffffff; free of
// HEAP_NULL; malloc of 16 bytes (p, written); free of p + 1 and of 0xffffffff; p verified,
// then freed twice. One malloc and one free call site, as in every kernel here.
@compute @workgroup_size(1)
fn bad_input() {
    var p = HEAP_NULL;
    for (var step = 0u; step < 9u; step++) {
        if (step < 3u || step == 4u) {
            var size = 16u;
            if (step == 0u) {
                size = 0u;
            } else if (step == 1u) {
                size = HEAP_MAX_ALLOC + 1u;
            } else if (step == 2u) {
                size = 0xffffffffu;
            }
            let q = malloc(size);
            record(step);
            if (step == 4u) {
                if (q == HEAP_NULL) {
                    return;
                }
                p = q;
                heap_store(p, 0u, 0xc0ffeeu);
            }
        } else {
            var handle = p;
            if (step == 3u) {
                handle = HEAP_NULL;
            } else if (step == 5u) {
                handle = p + 1u;
            } else if (step == 6u) {
                handle = 0xffffffffu;
            } else if (step == 7u && heap_load(p, 0u) != 0xc0ffeeu) {
                atomicAdd(&tally[TALLY_CORRUPTED], 1u);
            }
            free(handle);
            record(step);
        }
    }
}

var<workgroup> shared_handle: u32;

// One workgroup of 64: its first invocation allocates, then all 64 free that one handle at
// once. [16 + 9] counts the frees that succeeded, [16 + 10] those reported as invalid.
@compute @workgroup_size(64)
fn free_at_once(@builtin(local_invocation_index) lane: u32) {
    if (lane == 0u) {
        shared_handle = malloc(16u);
    }
    let p = workgroupUniformLoad(&shared_handle);
    if (p == HEAP_NULL) {
        return;
    }
    free(p);
    if (heap_status == HEAP_OK) {
        atomicAdd(&tally[TALLY_BAD_INPUT + 9u], 1u);
    } else if (heap_status == HEAP_INVALID_FREE) {
        atomicAdd(&tally[TALLY_BAD_INPUT + 10u], 1u);
    }
}
