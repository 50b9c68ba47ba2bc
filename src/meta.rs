//! State shared by the host and the shaders, declared once: the status codes, the statistics
//! block at the start of heap_meta ([`RawStats`]) and the growth block at its end. The
//! generated WGSL configuration carries them ([`write_wgsl`]); the shaders use the names and
//! no WGSL file repeats a value.

use std::fmt::Write as _;
use std::mem::offset_of;

use crate::stats::RawStats;

/// The handle malloc returns on failure.
pub(crate) const HEAP_NULL: u32 = 0;

/// Status of the last malloc or free of an invocation (`heap_status` in WGSL); failures are
/// counted per status in the statistics block.
pub(crate) const HEAP_OK: u32 = 0;
pub(crate) const HEAP_OUT_OF_MEMORY: u32 = 1;
pub(crate) const HEAP_CONTENTION: u32 = 2;
pub(crate) const HEAP_INVALID_REQUEST: u32 = 3;
pub(crate) const HEAP_INVALID_FREE: u32 = 4;

/// Words of the statistics block: [`RawStats`], word by word.
pub(crate) const STAT_WORDS: u64 = (size_of::<RawStats>() / 4) as u64;
const STAT_MALLOC_CALLS: u64 = (offset_of!(RawStats, malloc_calls) / 4) as u64;
const STAT_FREE_CALLS: u64 = (offset_of!(RawStats, free_calls) / 4) as u64;
/// The failure counter of status s (64 bits) starts at STAT_FAILURES + 2 * s.
const STAT_FAILURES: u64 =
    (offset_of!(RawStats, out_of_memory) / 4) as u64 - 2 * HEAP_OUT_OF_MEMORY as u64;
const STAT_LIVE_ALLOCATIONS: u64 = (offset_of!(RawStats, live_allocations) / 4) as u64;
const STAT_LIVE_UNITS: u64 = (offset_of!(RawStats, live_units) / 4) as u64;
const STAT_PEAK_UNITS: u64 = (offset_of!(RawStats, peak_units) / 4) as u64;

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

/// Pressure flags the device sets in the growth block.
pub(crate) const PRESSURE_OOM: u32 = 1;
pub(crate) const PRESSURE_LOW: u32 = 2;

/// Writes the shared constants as WGSL, the growth block's at `growth_word`.
pub(crate) fn write_wgsl(s: &mut String, growth_word: u64) {
    let statuses = [
        ("HEAP_NULL", HEAP_NULL as u64),
        ("HEAP_OK", HEAP_OK as u64),
        ("HEAP_OUT_OF_MEMORY", HEAP_OUT_OF_MEMORY as u64),
        ("HEAP_CONTENTION", HEAP_CONTENTION as u64),
        ("HEAP_INVALID_REQUEST", HEAP_INVALID_REQUEST as u64),
        ("HEAP_INVALID_FREE", HEAP_INVALID_FREE as u64),
    ];
    let statistics = [
        ("STAT_MALLOC_CALLS", STAT_MALLOC_CALLS),
        ("STAT_FREE_CALLS", STAT_FREE_CALLS),
        ("STAT_FAILURES", STAT_FAILURES),
        ("STAT_LIVE_ALLOCATIONS", STAT_LIVE_ALLOCATIONS),
        ("STAT_LIVE_UNITS", STAT_LIVE_UNITS),
        ("STAT_PEAK_UNITS", STAT_PEAK_UNITS),
        ("STAT_WORDS", STAT_WORDS),
    ];
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
    let pressure = [
        ("HEAP_PRESSURE_OOM", PRESSURE_OOM as u64),
        ("HEAP_PRESSURE_LOW", PRESSURE_LOW as u64),
    ];
    for (name, value) in statuses
        .iter()
        .chain(&statistics)
        .chain(&growth)
        .chain(&pressure)
    {
        let _ = writeln!(s, "const {name}: u32 = {value}u;");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The shaders index failure counters by status: each must be where RawStats has it.
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
        assert_eq!(STAT_WORDS, 16);
    }
}
