//! The TAS measurement: average steps per thread of RW, RW-BM and CoRW against Pham &
//! Tu's model.
//!
//! For each free fraction and thread count: a heap of exactly `pages` pages (a power of two)
//! is reset, prefilled on the GPU so that exactly A = round(fraction * pages) pages are free,
//! at random (cli/shaders/tas.wgsl), then N invocations malloc once each and
//! record their steps. TAS is the mean over the N threads; WAS the mean over groups of 32
//! consecutive invocations (the paper's warp) of the group's largest step count.
//!
//! The model (the paper's equations 2 and 4, before their logarithmic approximation):
//! the N walks are treated as sequential; the j-th (0-based) sees A - j free pages of T,
//! and a step reading w pages at once succeeds with probability 1 - ((T - A + j) / T)^w,
//! so E(X) = (1/N) sum_{j<N} 1 / (1 - ((T - A + j)/T)^w). RW reads one page per step
//! (w = 1, where this is (T/N)(H_A - H_{A-N})), RW-BM one 32-bit word (w = 32). CoRW is
//! shown against the w = 32 value (it walks the same bitmap).

use std::time::Duration;

use bytemuck::{Pod, Zeroable};

use crate::{Error, Result};
use gpu_heap::{buffer_group, buffer_group_layout, read_buffer, submit_and_wait, Gpu};
use gpu_heap::{GpuHeap, HeapConfig, Strategy};

/// Mirrors `TasParams` in cli/shaders/tas.wgsl.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, Pod, Zeroable)]
struct TasParams {
    threads: u32,
    used: u32,
    seed: u32,
    bits: u32,
}

/// What to measure.
#[derive(Clone, Debug)]
pub struct TasOptions {
    /// log2 of the number of pages T (20: the paper's 1M pages).
    pub page_bits: u32,
    /// Page size in bytes (the heap is 2^page_bits pages of it).
    pub page_size: u32,
    /// Free fractions in percent.
    pub free_percent: Vec<f64>,
    /// Thread counts N (each at most the free pages A).
    pub threads: Vec<u32>,
    /// Strategies (rw, rw-bm, corw).
    pub strategies: Vec<Strategy>,
    /// Repetitions with different prefills; TAS and WAS are averaged over them.
    pub rounds: u32,
    pub watchdog: Duration,
}

impl Default for TasOptions {
    fn default() -> Self {
        TasOptions {
            page_bits: 20,
            page_size: 16,
            free_percent: vec![50.0, 10.0, 1.0, 0.5],
            threads: vec![1000, 2000, 3000, 4000, 5000],
            strategies: vec![Strategy::Rw, Strategy::RwBm, Strategy::Corw],
            rounds: 3,
            watchdog: Duration::from_secs(120),
        }
    }
}

/// One row of the table.
#[derive(Clone, Debug, serde::Serialize)]
pub struct TasRow {
    pub strategy: Strategy,
    /// The strategy the shader ran as (CoRW without subgroups runs as RW-BM).
    pub compiled: Strategy,
    pub pages: u64,
    pub free_percent: f64,
    pub free_pages: u64,
    pub threads: u32,
    /// Bits read per step in the model (1 for RW, 32 otherwise).
    pub word_bits: u32,
    pub tas: f64,
    pub tas_model: f64,
    /// (tas - tas_model) / tas_model.
    pub deviation: f64,
    /// The same walk (same prefill, same step bounds and sweep) run one thread after
    /// another on the host: the model's sequential process without its independence
    /// approximation. None for CoRW.
    pub tas_sequential: Option<f64>,
    /// Mean over groups of 32 invocations of the group's maximum (the paper's warp).
    pub was32: f64,
    /// The same over groups of the adapter's subgroup size (its minimum, per wgpu).
    pub was_subgroup: f64,
    pub subgroup_size: u32,
    /// The largest step count of any thread.
    pub max_steps: u32,
    /// Mallocs that returned NULL (should be 0).
    pub failed: u64,
}

/// tas.wgsl's prefill permutation, on the host (keep in sync).
fn permute(p: u32, seed: u32, bits: u32) -> u32 {
    let mask = (1u32 << bits) - 1;
    let mut x = (p ^ seed) & mask;
    x = x.wrapping_mul(0x9e37_79b1).wrapping_add(seed) & mask;
    x ^= x >> (bits / 2 + 1);
    x = x.wrapping_mul(0x85eb_ca6b) & mask;
    x ^= x >> (bits / 3 + 1);
    x = x.wrapping_mul(0xc2b2_ae35).wrapping_add(0x1656_67b1) & mask;
    x ^= x >> (bits / 2);
    x
}

/// The walk of rw.wgsl (w = 1) or rw_bm.wgsl (w = 32) run for `threads` threads one after
/// another on the prefilled heap: mean steps per thread. Same bounds: 4096 (RW) or 64
/// (RW-BM) random steps, then a sweep from a random start.
pub fn simulate(w: u32, bits: u32, used: u32, threads: u32, seed: u32) -> f64 {
    let pages = 1usize << bits;
    let mut state: u64 = 0x853c_49e6_748f_ea9b ^ ((seed as u64) << 17) ^ threads as u64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let mut taken: Vec<bool> = (0..pages as u32)
        .map(|p| permute(p, seed, bits) < used)
        .collect();
    let group = w as usize;
    let groups = pages / group;
    let bound = if w == 1 { 4096 } else { 64 };
    let mut total = 0u64;
    let claim = |g: usize, taken: &mut Vec<bool>| -> bool {
        let free: Vec<usize> = (g * group..(g + 1) * group)
            .filter(|&p| !taken[p])
            .collect();
        match free.first() {
            Some(&p) => {
                taken[p] = true;
                true
            }
            None => false,
        }
    };
    for _ in 0..threads {
        let mut steps = 0u64;
        let mut done = false;
        for _ in 0..bound {
            steps += 1;
            if claim((next() % groups as u64) as usize, &mut taken) {
                done = true;
                break;
            }
        }
        if !done && w == 1 {
            let start = (next() % groups as u64) as usize;
            for i in 0..groups {
                steps += 1;
                if claim((start + i) % groups, &mut taken) {
                    break;
                }
            }
        } else if !done {
            // bitmap.wgsl's summarised sweep: a step per summary word, and one per word it
            // does not mark full (here the summary is exact).
            let summaries = groups.div_ceil(32);
            let first = (next() % groups as u64) as usize / 32;
            'sweep: for i in 0..summaries {
                let s = (first + i) % summaries;
                steps += 1;
                for g in s * 32..((s + 1) * 32).min(groups) {
                    if (g * group..(g + 1) * group).all(|p| taken[p]) {
                        continue;
                    }
                    steps += 1;
                    if claim(g, &mut taken) {
                        break 'sweep;
                    }
                }
            }
        }
        total += steps;
    }
    total as f64 / threads as f64
}

/// E(X) of the model for T pages, A free, N threads, w bits per step.
pub fn model_tas(t: u64, a: u64, n: u64, w: u32) -> f64 {
    let t = t as f64;
    let mut sum = 0.0;
    for j in 0..n {
        let used = (t - a as f64 + j as f64) / t;
        sum += 1.0 / (1.0 - used.powi(w as i32));
    }
    sum / n as f64
}

struct Tool {
    heap: GpuHeap,
    params: wgpu::Buffer,
    out: wgpu::Buffer,
    group: wgpu::BindGroup,
    prefill: wgpu::ComputePipeline,
    measure: wgpu::ComputePipeline,
}

impl Tool {
    fn new(gpu: &Gpu, strategy: Strategy, options: &TasOptions, max_threads: u32) -> Result<Tool> {
        let pages = 1u64 << options.page_bits;
        let config = HeapConfig::new(pages * options.page_size as u64)
            .strategy(strategy)
            .count_steps(true)
            .watchdog(options.watchdog);
        let config = crate::with_pages(config, options.page_size, 16);
        let heap = GpuHeap::with_config(&gpu.device, &gpu.queue, config)?;
        let device = &gpu.device;
        let params = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("tas params"),
            size: std::mem::size_of::<TasParams>() as u64,
            usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let out = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("tas out"),
            size: max_threads.max(1) as u64 * 8,
            usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
            mapped_at_creation: false,
        });
        let layout = buffer_group_layout(
            device,
            "tas",
            &[
                wgpu::BufferBindingType::Uniform,
                wgpu::BufferBindingType::Storage { read_only: false },
            ],
        );
        let group = buffer_group(device, "tas", &layout, &[&params, &out]);
        let module = crate::kernels::module(&heap, "tas.wgsl")?;
        let prefill =
            heap.compute_pipeline("tas_prefill", &module, "tas_prefill", &[(1, &layout)])?;
        let measure =
            heap.compute_pipeline("tas_measure", &module, "tas_measure", &[(1, &layout)])?;
        Ok(Tool {
            heap,
            params,
            out,
            group,
            prefill,
            measure,
        })
    }

    fn dispatch(
        &self,
        gpu: &Gpu,
        pipeline: &wgpu::ComputePipeline,
        p: TasParams,
        n: u32,
        what: &str,
    ) -> Result<()> {
        gpu.queue
            .write_buffer(&self.params, 0, bytemuck::bytes_of(&p));
        let mut encoder = gpu.device.create_command_encoder(&Default::default());
        {
            let mut pass = encoder.begin_compute_pass(&Default::default());
            pass.set_pipeline(pipeline);
            pass.set_bind_group(0, self.heap.bind_group(), &[]);
            pass.set_bind_group(1, &self.group, &[]);
            let groups = n.div_ceil(64);
            // tas_prefill indexes id.x + id.y * 65535 * 64.
            pass.dispatch_workgroups(groups.min(65_535), groups.div_ceil(65_535), 1);
        }
        Ok(submit_and_wait(
            &gpu.device,
            &gpu.queue,
            encoder,
            self.heap.config().watchdog,
            what,
        )?)
    }

    /// One measurement: returns per-thread steps and the number of failed mallocs.
    fn run(
        &self,
        gpu: &Gpu,
        used: u32,
        threads: u32,
        seed: u32,
        bits: u32,
    ) -> Result<(Vec<u32>, u64)> {
        self.heap.reset()?;
        let p = TasParams {
            threads,
            used,
            seed,
            bits,
        };
        self.dispatch(gpu, &self.prefill, p, 1 << bits, "tas prefill")?;
        self.dispatch(gpu, &self.measure, p, threads, "tas measure")?;
        let bytes = read_buffer(
            &gpu.device,
            &gpu.queue,
            &self.out,
            0,
            threads as u64 * 8,
            self.heap.config().watchdog,
        )?;
        let words: Vec<u32> = bytemuck::pod_collect_to_vec(&bytes);
        let steps: Vec<u32> = words.chunks(2).map(|c| c[0]).collect();
        let failed = words.chunks(2).filter(|c| c[1] == 0).count() as u64;
        // The instrumented counters must agree with what the invocations recorded.
        if let Some(counted) = self.heap.walk_steps()? {
            let sum: u64 = steps.iter().map(|&s| s as u64).sum();
            if counted.steps != sum || counted.walks != threads as u64 - failed {
                return Err(Error::Gpu {
                    what: "tas measure".into(),
                    message: format!(
                        "instrumentation counted {counted:?}, the invocations recorded {sum} \
                         steps over {} walks",
                        threads as u64 - failed
                    ),
                });
            }
        }
        Ok((steps, failed))
    }
}

/// Runs the whole table; `progress` is called before each row.
pub fn run(gpu: &Gpu, options: &TasOptions, mut progress: impl FnMut(&str)) -> Result<Vec<TasRow>> {
    if !(4..=26).contains(&options.page_bits) {
        return Err(Error::InvalidOptions(format!(
            "page_bits must be 4..=26, not {}",
            options.page_bits
        )));
    }
    let pages = 1u64 << options.page_bits;
    let max_threads = options.threads.iter().copied().max().unwrap_or(0);
    let lanes = gpu.adapter.get_info().subgroup_min_size.clamp(1, 128) as usize;
    let mut rows = Vec::new();
    for &strategy in &options.strategies {
        if !strategy.has_fixed_pages() {
            return Err(Error::InvalidOptions(format!(
                "the TAS measurement covers rw, rw-bm and corw, not {strategy}"
            )));
        }
        let tool = Tool::new(gpu, strategy, options, max_threads)?;
        let compiled = tool.heap.layout().compiled();
        let w = if compiled == Strategy::Rw { 1 } else { 32 };
        for &percent in &options.free_percent {
            let free = ((percent / 100.0) * pages as f64).round() as u64;
            for &threads in &options.threads {
                if threads as u64 > free || threads == 0 {
                    continue;
                }
                progress(&format!("{strategy} {percent}% free, {threads} threads"));
                let (mut tas, mut was, mut max, mut failed) = (0.0, 0.0, 0, 0);
                let mut was_sg = 0.0;
                let mut sequential = 0.0;
                for round in 0..options.rounds.max(1) {
                    let seed =
                        0x9e37_79b9u32.wrapping_mul(round + 1) ^ (threads << 8) ^ free as u32;
                    let (steps, f) =
                        tool.run(gpu, (pages - free) as u32, threads, seed, options.page_bits)?;
                    tas += steps.iter().map(|&s| s as f64).sum::<f64>() / threads as f64;
                    let was_of = |lanes: usize| {
                        let groups: Vec<f64> = steps
                            .chunks(lanes)
                            .map(|c| *c.iter().max().unwrap_or(&0) as f64)
                            .collect();
                        groups.iter().sum::<f64>() / groups.len() as f64
                    };
                    was += was_of(32);
                    was_sg += was_of(lanes);
                    max = max.max(*steps.iter().max().unwrap_or(&0));
                    failed += f;
                    if compiled != Strategy::Corw {
                        sequential +=
                            simulate(w, options.page_bits, (pages - free) as u32, threads, seed);
                    }
                }
                let r = options.rounds.max(1) as f64;
                let (tas, was, was_sg) = (tas / r, was / r, was_sg / r);
                let model = model_tas(pages, free, threads as u64, w);
                rows.push(TasRow {
                    strategy,
                    compiled,
                    pages,
                    free_percent: percent,
                    free_pages: free,
                    threads,
                    word_bits: w,
                    tas,
                    tas_model: model,
                    deviation: (tas - model) / model,
                    tas_sequential: (compiled != Strategy::Corw).then_some(sequential / r),
                    was32: was,
                    was_subgroup: was_sg,
                    subgroup_size: lanes as u32,
                    max_steps: max,
                    failed,
                });
            }
        }
    }
    Ok(rows)
}

/// The rows as a Markdown table.
pub fn markdown(rows: &[TasRow]) -> String {
    let mut s = String::from(
        "| strategy | free | A (free pages) | N (threads) | TAS measured | TAS model (eq. 2/4) | deviation | TAS sequential (host) | measured vs sequential | WAS (32 lanes) | WAS (subgroup) | max steps | failed |\n\
         |---|---|---|---|---|---|---|---|---|---|---|---|---|\n",
    );
    for r in rows {
        let name = if r.compiled == r.strategy {
            r.strategy.to_string()
        } else {
            format!("{} (as {})", r.strategy, r.compiled)
        };
        let (seq, vs) = match r.tas_sequential {
            Some(q) => (
                format!("{q:.3}"),
                format!("{:+.1}%", 100.0 * (r.tas - q) / q),
            ),
            None => ("–".into(), "–".into()),
        };
        s.push_str(&format!(
            "| {name} | {}% | {} | {} | {:.3} | {:.3} | {:+.1}% | {seq} | {vs} | {:.2} | {:.2} ({}) | {} | {} |\n",
            r.free_percent,
            r.free_pages,
            r.threads,
            r.tas,
            r.tas_model,
            100.0 * r.deviation,
            r.was32,
            r.was_subgroup,
            r.subgroup_size,
            r.max_steps,
            r.failed
        ));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::model_tas;

    #[test]
    fn model_matches_the_closed_form_for_rw() {
        // w = 1: (T/N)(H_A - H_{A-N}).
        let (t, a, n) = (1u64 << 20, 5243u64, 5000u64);
        let h = |k: u64| (1..=k).map(|i| 1.0 / i as f64).sum::<f64>();
        let closed = t as f64 / n as f64 * (h(a) - h(a - n));
        assert!((model_tas(t, a, n, 1) - closed).abs() < 1e-6 * closed);
        // Half the pages free, one thread: two steps for RW; a word of 32 almost surely hits.
        assert!((model_tas(t, t / 2, 1, 1) - 2.0).abs() < 1e-9);
        assert!((model_tas(t, t / 2, 1, 32) - 1.0).abs() < 1e-9);
    }
}
