//! Heap statistics, read back from the statistics block at the start of `heap_meta`.

use bytemuck::{Pod, Zeroable};

/// The statistics block exactly as the GPU writes it, at the start of heap_meta. This struct
/// is its declaration: the shaders' word offsets (`STAT_*`) are generated from it
/// (src/meta.rs).
///
/// With full statistics every successful malloc changes the call count, the live counts and
/// the peak, at a million invocations a queue of atomics per word. Those on one 128-byte
/// line also wait for each other, so the live allocations, the live units and the peak
/// each open a line of their own (the calls and the failures share the first), and the
/// block ends half a line into the fifth, where the strategy's 16 scalar words take the
/// line's second half (docs/architecture.md, "Metadata").
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, Pod, Zeroable)]
pub struct RawStats {
    /// Calls of malloc (64 bits as two words, low first), as every counter pair below.
    pub malloc_calls: [u32; 2],
    /// Calls of free with a non-NULL handle.
    pub free_calls: [u32; 2],
    /// mallocs that found no free memory.
    pub out_of_memory: [u32; 2],
    /// mallocs that gave up after their bounded steps.
    pub contention: [u32; 2],
    /// mallocs of 0 bytes or over the largest malloc.
    pub invalid_request: [u32; 2],
    /// frees of something that is not a live allocation.
    pub invalid_free: [u32; 2],
    /// Unused: the rest of the calls' line.
    rest_of_line_0: [u32; 20],
    /// Live allocations.
    pub live_allocations: u32,
    /// Unused: the rest of its line.
    rest_of_line_1: [u32; 31],
    /// Live 16-byte units.
    pub live_units: u32,
    /// Unused: the rest of its line.
    rest_of_line_2: [u32; 31],
    /// The most live units since the last reset.
    pub peak_units: u32,
    /// Unused: the rest of its line.
    rest_of_line_3: [u32; 31],
    /// Unused: the first half of the line whose second half holds the strategy's scalars.
    first_half_of_line_4: [u32; 16],
}

/// Failed calls by cause.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Failures {
    /// malloc found no free memory.
    pub out_of_memory: u64,
    /// malloc gave up after its bounded number of steps although memory may be free.
    pub contention: u64,
    /// malloc(0), or a size over the strategy's maximum.
    pub invalid_request: u64,
    /// free of something that is not a live allocation (where the strategy can tell).
    pub invalid_free: u64,
}

impl Failures {
    /// All failures, whatever the cause.
    pub fn total(&self) -> u64 {
        self.out_of_memory + self.contention + self.invalid_request + self.invalid_free
    }

    /// The difference `self - earlier`, for counting what one phase added.
    pub fn since(&self, earlier: &Failures) -> Failures {
        Failures {
            out_of_memory: self.out_of_memory - earlier.out_of_memory,
            contention: self.contention - earlier.contention,
            invalid_request: self.invalid_request - earlier.invalid_request,
            invalid_free: self.invalid_free - earlier.invalid_free,
        }
    }
}

impl std::ops::AddAssign for Failures {
    fn add_assign(&mut self, other: Failures) {
        self.out_of_memory += other.out_of_memory;
        self.contention += other.contention;
        self.invalid_request += other.invalid_request;
        self.invalid_free += other.invalid_free;
    }
}

/// What [`GpuHeap::stats`](crate::GpuHeap::stats) reports.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct HeapStats {
    /// Bytes held by live allocations, as granted (rounded up to the unit or page). A free
    /// lowers it by what it releases: bump's frees release nothing (its memory comes back by
    /// [`GpuHeap::reset`](crate::GpuHeap::reset)), so there it counts what was handed out
    /// since the last reset.
    pub bytes_live: u64,
    /// The most `bytes_live` has been since the last reset.
    pub bytes_peak: u64,
    /// Live allocations; for bump, allocations since the last reset (see `bytes_live`).
    pub allocations_live: u64,
    /// Calls of malloc.
    pub malloc_calls: u64,
    /// Calls of free with a non-NULL handle.
    pub free_calls: u64,
    /// Failed calls by cause: out of memory, contention and invalid requests are mallocs that returned NULL; invalid frees are frees.
    pub failures: Failures,
}

fn wide(w: [u32; 2]) -> u64 {
    w[0] as u64 | (w[1] as u64) << 32
}

impl From<RawStats> for HeapStats {
    fn from(r: RawStats) -> Self {
        HeapStats {
            bytes_live: r.live_units as u64 * 16,
            bytes_peak: r.peak_units as u64 * 16,
            allocations_live: r.live_allocations as u64,
            malloc_calls: wide(r.malloc_calls),
            free_calls: wide(r.free_calls),
            failures: Failures {
                out_of_memory: wide(r.out_of_memory),
                contention: wide(r.contention),
                invalid_request: wide(r.invalid_request),
                invalid_free: wide(r.invalid_free),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wide_counters_combine_both_words() {
        let raw = RawStats {
            malloc_calls: [5, 1],
            live_units: 2,
            ..RawStats::default()
        };
        let s = HeapStats::from(raw);
        assert_eq!(s.malloc_calls, (1 << 32) + 5);
        assert_eq!(s.bytes_live, 32);
    }
}
