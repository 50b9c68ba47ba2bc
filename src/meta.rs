//! State shared by the host and the shaders, declared once: the status codes, the statistics
//! block at the start of heap_meta ([`RawStats`]), the growth block at its end, and the
//! Ouroboros words the host reads back (declared in src/ouroboros). Two generated files carry
//! them to WGSL: `generated/shared.wgsl` ([`shared_wgsl`], the same for every heap, which
//! the library's modules include) and the heap's configuration ([`write_growth_wgsl`], the
//! growth block's words, which depend on the heap). The shaders use the names; no WGSL file
//! repeats a value.

use std::fmt::Write as _;
use std::mem::offset_of;

use crate::stats::RawStats;

/// Declares constants shared with the shaders and `$list()`, their names and values for
/// the generated WGSL, in declaration order: each constant is written once.
macro_rules! wgsl_constants {
    ($list:ident; $($(#[$doc:meta])* $vis:vis const $name:ident: $ty:ty = $value:expr;)*) => {
        $($(#[$doc])* $vis const $name: $ty = $value;)*

        /// The constants above, by their WGSL names.
        pub(crate) fn $list() -> Vec<(&'static str, u64)> {
            vec![$((stringify!($name), $name as u64)),*]
        }
    };
}
pub(crate) use wgsl_constants;

wgsl_constants! {
    core_constants;
    /// The handle `malloc` returns on failure (`HEAP_NULL` in WGSL).
    pub const HEAP_NULL: u32 = 0;

    /// `heap_status` after a malloc or free that succeeded. The WGSL constants of the same names
    /// are generated from these, so a kernel can copy `heap_status` into a buffer and the host
    /// compare it with them.
    ///
    /// ```
    /// assert_ne!(gpu_heap::HEAP_OK, gpu_heap::HEAP_OUT_OF_MEMORY);
    /// ```
    pub const HEAP_OK: u32 = 0;
    /// `heap_status` after a malloc that found no free memory (counted in
    /// [`crate::Failures::out_of_memory`]).
    pub const HEAP_OUT_OF_MEMORY: u32 = 1;
    /// `heap_status` after a malloc that gave up after its bounded steps although memory may be
    /// free ([`crate::Failures::contention`]).
    pub const HEAP_CONTENTION: u32 = 2;
    /// `heap_status` after `malloc(0)` or a size over the strategy's maximum
    /// ([`crate::Failures::invalid_request`]).
    pub const HEAP_INVALID_REQUEST: u32 = 3;
    /// `heap_status` after a free of something that is not a live allocation, where the
    /// strategy can tell ([`crate::Failures::invalid_free`]).
    pub const HEAP_INVALID_FREE: u32 = 4;

    const STAT_MALLOC_CALLS: u64 = (offset_of!(RawStats, malloc_calls) / 4) as u64;
    const STAT_FREE_CALLS: u64 = (offset_of!(RawStats, free_calls) / 4) as u64;
    /// The failure counter of status s (64 bits) starts at STAT_FAILURES + 2 * s.
    const STAT_FAILURES: u64 =
        (offset_of!(RawStats, out_of_memory) / 4) as u64 - 2 * HEAP_OUT_OF_MEMORY as u64;
    const STAT_LIVE_ALLOCATIONS: u64 = (offset_of!(RawStats, live_allocations) / 4) as u64;
    const STAT_LIVE_UNITS: u64 = (offset_of!(RawStats, live_units) / 4) as u64;
    const STAT_PEAK_UNITS: u64 = (offset_of!(RawStats, peak_units) / 4) as u64;
    /// Words of the statistics block: [`RawStats`], word by word.
    pub(crate) const STAT_WORDS: u64 = (size_of::<RawStats>() / 4) as u64;

    /// Pressure flags the device sets in the growth block.
    pub(crate) const HEAP_PRESSURE_OOM: u32 = 1;
    pub(crate) const HEAP_PRESSURE_LOW: u32 = 2;
}

/// Words of the growth block, from its first word (`HEAP_GROWTH`; see
/// shaders/core/growth.wgsl for what each means).
pub(crate) const GROWTH_COMMITTED: u64 = 0;
const GROWTH_RESIZE_FROM: u64 = 1;
const GROWTH_RESIZE_TO: u64 = 2;
const GROWTH_WATERMARK: u64 = 3;
pub(crate) const GROWTH_PRESSURE: u64 = 4;
pub(crate) const GROWTH_TRIM_BUSY: u64 = 5;
const GROWTH_TRIM_INVOCATIONS: u64 = 6;
/// Words of the growth block (the last is reserved).
pub(crate) const GROWTH_WORDS: u64 = 8;

/// The statistics block's counters: name, first word, words (two: 64 bits, low first).
pub(crate) fn statistics_words() -> Vec<(&'static str, u64, u32)> {
    let word = |offset: usize| (offset / 4) as u64;
    vec![
        ("malloc_calls", word(offset_of!(RawStats, malloc_calls)), 2),
        ("free_calls", word(offset_of!(RawStats, free_calls)), 2),
        (
            "out_of_memory",
            word(offset_of!(RawStats, out_of_memory)),
            2,
        ),
        ("contention", word(offset_of!(RawStats, contention)), 2),
        (
            "invalid_request",
            word(offset_of!(RawStats, invalid_request)),
            2,
        ),
        ("invalid_free", word(offset_of!(RawStats, invalid_free)), 2),
        (
            "live_allocations",
            word(offset_of!(RawStats, live_allocations)),
            1,
        ),
        ("live_units", word(offset_of!(RawStats, live_units)), 1),
        ("peak_units", word(offset_of!(RawStats, peak_units)), 1),
    ]
}

/// The path of the generated file that holds the constants shared by every heap.
pub(crate) const SHARED_WGSL_PATH: &str = "generated/shared.wgsl";

fn write_constants(s: &mut String, constants: &[(&str, u64)]) {
    for (name, value) in constants {
        let _ = writeln!(s, "const {name}: u32 = {value:#x}u;");
    }
}

/// `generated/shared.wgsl`: the status codes, the statistics block's words, the pressure
/// flags and the Ouroboros words.
pub(crate) fn shared_wgsl() -> String {
    let mut s = String::from(
        "// Generated by gpu-heap (src/meta.rs): constants shared by the host and the shaders.\n",
    );
    write_constants(&mut s, &core_constants());
    write_constants(&mut s, &crate::ouroboros::shared::constants());
    s
}

/// The growth block's words for a heap whose block starts at `growth_word`.
pub(crate) fn write_growth_wgsl(s: &mut String, growth_word: u64) {
    let growth = [
        ("HEAP_COMMITTED", GROWTH_COMMITTED),
        ("HEAP_RESIZE_FROM", GROWTH_RESIZE_FROM),
        ("HEAP_RESIZE_TO", GROWTH_RESIZE_TO),
        ("HEAP_WATERMARK", GROWTH_WATERMARK),
        ("HEAP_PRESSURE", GROWTH_PRESSURE),
        ("HEAP_TRIM_BUSY", GROWTH_TRIM_BUSY),
        ("HEAP_TRIM_INVOCATIONS", GROWTH_TRIM_INVOCATIONS),
    ]
    .map(|(name, word)| (name, growth_word + word));
    write_constants(s, &growth);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The shaders index failure counters by status: each must be where RawStats has it;
    /// and the block keeps its lines.
    #[test]
    fn failure_counters_follow_the_statuses() {
        let word = |offset: usize| (offset / 4) as u64;
        let at = |status: u32| STAT_FAILURES + 2 * status as u64;
        assert_eq!(
            at(HEAP_OUT_OF_MEMORY),
            word(offset_of!(RawStats, out_of_memory))
        );
        assert_eq!(at(HEAP_CONTENTION), word(offset_of!(RawStats, contention)));
        assert_eq!(
            at(HEAP_INVALID_REQUEST),
            word(offset_of!(RawStats, invalid_request))
        );
        assert_eq!(
            at(HEAP_INVALID_FREE),
            word(offset_of!(RawStats, invalid_free))
        );
        // Each live counter opens a 128-byte line, and the strategy's scalars take the
        // second half of the block's last one (src/stats.rs).
        for offset in [
            offset_of!(RawStats, live_allocations),
            offset_of!(RawStats, live_units),
            offset_of!(RawStats, peak_units),
        ] {
            assert_eq!(word(offset) % 32, 0);
        }
        assert_eq!(STAT_WORDS % 32, 16);
    }
}
