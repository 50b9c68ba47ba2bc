// Benchmark kernels: the survey's test cases (Winter et al.) for any strategy.
//
// Each invocation i < params.threads plays one thread of the survey. Its request size is a
// pure function of (seed, i) (bench_size), so the malloc, write and free kernels agree on it
// without storing it. ptrs[i] holds the handle of invocation i (0 = NULL or nothing).
//
// tally (atomic words, read back by the host after untimed passes):
//   [0] words that read back wrong in a write pass   [1] NULLs seen by bench_malloc
//   [2] total of the baseline scan, in 16-byte units
//
// The baseline kernels (flat_*, scan_*) do the same work without the allocator: writes into
// one contiguous buffer, and the canonical count / prefix sum / write of work generation.
//
// Loops: the write loops run over one allocation's words (at most HEAP_MAX_ALLOC / 4); the
// scan loops over one workgroup's elements. Nothing waits for another invocation except
// across workgroupBarrier, which every invocation of the workgroup reaches.
#include "alloc.wgsl"

struct BenchParams {
    threads: u32,
    size_lo: u32,
    size_hi: u32,
    seed: u32,
    // Words between the starts of two invocations' regions of `flat`.
    flat_stride: u32,
    // Elements of `offsets` that the scan covers (threads, or the block sums).
    scan_len: u32,
    pad0: u32,
    pad1: u32,
}

@group(1) @binding(0) var<uniform> params: BenchParams;
@group(1) @binding(1) var<storage, read_write> ptrs: array<u32>;
@group(1) @binding(2) var<storage, read_write> tally: array<atomic<u32>>;
@group(1) @binding(3) var<storage, read_write> flat: array<u32>;
@group(1) @binding(4) var<storage, read_write> offsets: array<u32>;

const TALLY_BAD_WORDS: u32 = 0u;
const TALLY_NULLS: u32 = 1u;
const TALLY_SCAN_TOTAL: u32 = 2u;

fn bench_size(i: u32) -> u32 {
    if (params.size_hi <= params.size_lo) {
        return params.size_lo;
    }
    let r = gpu_heap_hash(params.seed ^ (i * 0x9e3779b9u));
    return params.size_lo + r % (params.size_hi - params.size_lo + 1u);
}

fn bench_word(i: u32, k: u32) -> u32 {
    return (i * 0x01000193u) ^ k;
}

fn bench_invocation(id: vec3<u32>, groups: vec3<u32>) -> u32 {
    // Dispatches wider than 65,535 workgroups fold into y.
    return id.x + id.y * groups.x * 256u;
}

@compute @workgroup_size(256)
fn bench_malloc(@builtin(global_invocation_id) id: vec3<u32>, @builtin(num_workgroups) g: vec3<u32>) {
    let i = bench_invocation(id, g);
    if (i >= params.threads) {
        return;
    }
    let p = malloc(bench_size(i));
    ptrs[i] = p;
    if (p == HEAP_NULL) {
        atomicAdd(&tally[TALLY_NULLS], 1u);
    }
}

@compute @workgroup_size(256)
fn bench_free(@builtin(global_invocation_id) id: vec3<u32>, @builtin(num_workgroups) g: vec3<u32>) {
    let i = bench_invocation(id, g);
    if (i >= params.threads) {
        return;
    }
    free(ptrs[i]);
    ptrs[i] = HEAP_NULL;
}

// Writes the allocation's words, then reads them back; mismatches are counted.
@compute @workgroup_size(256)
fn bench_write(@builtin(global_invocation_id) id: vec3<u32>, @builtin(num_workgroups) g: vec3<u32>) {
    let i = bench_invocation(id, g);
    if (i >= params.threads || ptrs[i] == HEAP_NULL) {
        return;
    }
    let p = ptrs[i];
    let words = (bench_size(i) + 3u) / 4u;
    for (var k = 0u; k < words; k++) {
        heap_store(p, k, bench_word(i, k));
    }
    var bad = 0u;
    for (var k = 0u; k < words; k++) {
        bad += u32(heap_load(p, k) != bench_word(i, k));
    }
    if (bad != 0u) {
        atomicAdd(&tally[TALLY_BAD_WORDS], bad);
    }
}

// The write baseline: the same words into one contiguous buffer, flat_stride words apart.
@compute @workgroup_size(256)
fn flat_write(@builtin(global_invocation_id) id: vec3<u32>, @builtin(num_workgroups) g: vec3<u32>) {
    let i = bench_invocation(id, g);
    if (i >= params.threads) {
        return;
    }
    let base = i * params.flat_stride;
    let words = (bench_size(i) + 3u) / 4u;
    for (var k = 0u; k < words; k++) {
        flat[base + k] = bench_word(i, k);
    }
    var bad = 0u;
    for (var k = 0u; k < words; k++) {
        bad += u32(flat[base + k] != bench_word(i, k));
    }
    if (bad != 0u) {
        atomicAdd(&tally[TALLY_BAD_WORDS], bad);
    }
}

// Work generation with the allocator: each thread allocates its output and writes it.
@compute @workgroup_size(256)
fn workgen_malloc(@builtin(global_invocation_id) id: vec3<u32>, @builtin(num_workgroups) g: vec3<u32>) {
    let i = bench_invocation(id, g);
    if (i >= params.threads) {
        return;
    }
    let p = malloc(bench_size(i));
    ptrs[i] = p;
    if (p == HEAP_NULL) {
        atomicAdd(&tally[TALLY_NULLS], 1u);
        return;
    }
    let words = (bench_size(i) + 3u) / 4u;
    for (var k = 0u; k < words; k++) {
        heap_store(p, k, bench_word(i, k));
    }
}

// Work generation baseline, step 1: each thread's output size in 16-byte units (the
// allocator's granularity, so both sides align alike and the total fits in u32).
@compute @workgroup_size(256)
fn workgen_count(@builtin(global_invocation_id) id: vec3<u32>, @builtin(num_workgroups) g: vec3<u32>) {
    let i = bench_invocation(id, g);
    if (i < params.threads) {
        offsets[i] = (bench_size(i) + 15u) / 16u;
    }
}

// Step 2: an exclusive prefix sum over offsets[0 .. scan_len), in three kernels. scan_blocks
// scans each block of SCAN_BLOCK elements in place and stores the block's sum after the
// data (offsets[scan_len + block]); scan_sums scans those sums with one workgroup and
// records the total; scan_add adds each block's offset.
const SCAN_BLOCK: u32 = 256u;
var<workgroup> scan_tmp: array<u32, 256>;

// Inclusive Hillis-Steele scan of scan_tmp; every invocation of the workgroup calls it.
fn scan_workgroup(lane: u32) {
    for (var d = 1u; d < SCAN_BLOCK; d <<= 1u) {
        workgroupBarrier();
        var add = 0u;
        if (lane >= d) {
            add = scan_tmp[lane - d];
        }
        workgroupBarrier();
        scan_tmp[lane] += add;
    }
    workgroupBarrier();
}

@compute @workgroup_size(256)
fn scan_blocks(@builtin(local_invocation_index) lane: u32, @builtin(workgroup_id) wg: vec3<u32>) {
    let i = wg.x * SCAN_BLOCK + lane;
    var v = 0u;
    if (i < params.scan_len) {
        v = offsets[i];
    }
    scan_tmp[lane] = v;
    scan_workgroup(lane);
    if (i < params.scan_len) {
        offsets[i] = scan_tmp[lane] - v;
    }
    if (lane == SCAN_BLOCK - 1u) {
        offsets[params.scan_len + wg.x] = scan_tmp[lane];
    }
}

// One workgroup; each invocation owns a run of consecutive block sums.
@compute @workgroup_size(256)
fn scan_sums(@builtin(local_invocation_index) lane: u32) {
    let blocks = (params.scan_len + SCAN_BLOCK - 1u) / SCAN_BLOCK;
    let run = (blocks + SCAN_BLOCK - 1u) / SCAN_BLOCK;
    let base = params.scan_len;
    var sum = 0u;
    for (var k = 0u; k < run; k++) {
        let b = lane * run + k;
        if (b < blocks) {
            sum += offsets[base + b];
        }
    }
    scan_tmp[lane] = sum;
    scan_workgroup(lane);
    var running = scan_tmp[lane] - sum;
    for (var k = 0u; k < run; k++) {
        let b = lane * run + k;
        if (b < blocks) {
            let s = offsets[base + b];
            offsets[base + b] = running;
            running += s;
        }
    }
    if (lane == SCAN_BLOCK - 1u) {
        atomicStore(&tally[TALLY_SCAN_TOTAL], scan_tmp[lane]);
    }
}

@compute @workgroup_size(256)
fn scan_add(@builtin(local_invocation_index) lane: u32, @builtin(workgroup_id) wg: vec3<u32>) {
    let i = wg.x * SCAN_BLOCK + lane;
    if (i < params.scan_len) {
        offsets[i] += offsets[params.scan_len + wg.x];
    }
}

// Step 4: each thread writes its output at its offset in the buffer sized from the total.
@compute @workgroup_size(256)
fn workgen_write(@builtin(global_invocation_id) id: vec3<u32>, @builtin(num_workgroups) g: vec3<u32>) {
    let i = bench_invocation(id, g);
    if (i >= params.threads) {
        return;
    }
    let base = offsets[i] * 4u;
    let words = (bench_size(i) + 3u) / 4u;
    for (var k = 0u; k < words; k++) {
        flat[base + k] = bench_word(i, k);
    }
}

// Figure 5 of Gelado & Garland (PPoPP 2019): the upper limit of two-stage allocation with a
// bulk and with a counting semaphore. Each invocation takes one unit; a batch of SEM_BATCH
// units is allocated with one atomicAdd on a batch counter (the paper's assumption), its
// producer keeping one unit and signalling the rest. Compiled only for bump heaps, whose
// heap_meta words after the bump head are free. An invocation whose rounds run out counts
// as a NULL.
#ifdef GPU_HEAP_BUMP
#include "sync/bulk_semaphore.wgsl"

const SEM_BATCH: u32 = 512u;
const SEM_ROUNDS: u32 = 65536u;
const SEM_BULK: u32 = GPU_HEAP_BUMP_HEAD + 2u; // two words
const SEM_COUNT: u32 = GPU_HEAP_BUMP_HEAD + 4u;
const SEM_LOCK: u32 = GPU_HEAP_BUMP_HEAD + 5u;
const SEM_BATCHES: u32 = GPU_HEAP_BUMP_HEAD + 6u;

@compute @workgroup_size(256)
fn sem_bulk(@builtin(global_invocation_id) id: vec3<u32>, @builtin(num_workgroups) g: vec3<u32>) {
    if (bench_invocation(id, g) >= params.threads) {
        return;
    }
    var wait = gpu_heap_bsem_new_wait();
    var done = false;
    for (var r = 0u; r < SEM_ROUNDS && !done; r++) {
        let step = gpu_heap_bsem_step(SEM_BULK, 1u, SEM_BATCH - 1u, &wait, false);
        // The producer signals inside an if with no exit, which its subgroup leaves
        // together: waiting lanes cannot run ahead of the signal (a producer that returns
        // from inside the loop can be left unscheduled while they spin).
        if (step == GPU_HEAP_BSEM_ALLOCATE) {
            atomicAdd(&gpu_heap_meta[SEM_BATCHES], 1u);
            gpu_heap_bsem_signal(SEM_BULK, SEM_BATCH - 1u, 1u);
        }
        done = step != GPU_HEAP_BSEM_PENDING;
    }
    if (!done) {
        gpu_heap_bsem_abandon(SEM_BULK, 1u, &wait);
        atomicAdd(&tally[TALLY_NULLS], 1u);
    }
}

// The counting semaphore (Figure 1a): a unit if there is one; otherwise one invocation at a
// time produces a batch (a try-lock whose critical section sits inside the loop, in an if
// with no exit: the progress rule) while the others try again.
@compute @workgroup_size(256)
fn sem_counting(@builtin(global_invocation_id) id: vec3<u32>, @builtin(num_workgroups) g: vec3<u32>) {
    if (bench_invocation(id, g) >= params.threads) {
        return;
    }
    var done = false;
    for (var r = 0u; r < SEM_ROUNDS && !done; r++) {
        done = bitcast<i32>(atomicSub(&gpu_heap_meta[SEM_COUNT], 1u)) >= 1;
        if (!done) {
            atomicAdd(&gpu_heap_meta[SEM_COUNT], 1u);
            if (atomicCompareExchangeWeak(&gpu_heap_meta[SEM_LOCK], 0u, 1u).exchanged) {
                atomicAdd(&gpu_heap_meta[SEM_BATCHES], 1u);
                atomicAdd(&gpu_heap_meta[SEM_COUNT], SEM_BATCH - 1u);
                atomicStore(&gpu_heap_meta[SEM_LOCK], 0u);
                done = true;
            }
        }
    }
    if (!done) {
        atomicAdd(&tally[TALLY_NULLS], 1u);
    }
}
#endif
