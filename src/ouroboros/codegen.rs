//! The Ouroboros part of the generated WGSL configuration: defines, constants and the
//! queue-geometry functions, from the plan.

use std::fmt::Write as _;

use super::*;
use crate::summary_bitmap::layer_base_wgsl;

impl OuroGeometry {
    /// Constants and generated queue-geometry functions for `generated/config.wgsl`.
    pub fn wgsl(&self, s: &mut String) {
        let _ = writeln!(s, "#define GPU_HEAP_OURO");
        if self.cb_words > 0 {
            let _ = writeln!(s, "#define OURO_CHUNK_BASED");
        }
        if self.subgroups {
            let _ = writeln!(s, "#define GPU_HEAP_SUBGROUPS");
        }
        if self.fresh_taken > 0 {
            let _ = writeln!(s, "#define OURO_FRESH_RUNS");
        }
        if self.qc_words > 0 {
            // Queue chunks with their own start, next and count words (linked queues, and
            // the chunk-based front end's token log).
            let _ = writeln!(s, "#define OURO_QUEUE_CHUNK_WORDS");
        }
        match self.queue_kind {
            QueueKind::Standard => {}
            QueueKind::VirtualArray => {
                let _ = writeln!(s, "#define OURO_VIRTUAL_QUEUES\n#define OURO_QUEUE_VA");
            }
            QueueKind::VirtualLinked => {
                let _ = writeln!(s, "#define OURO_VIRTUAL_QUEUES\n#define OURO_QUEUE_VL");
            }
        }
        let mut constant = |name: &str, value: u64| {
            let _ = writeln!(s, "const {name}: u32 = {value}u;");
        };
        constant("OURO_CHUNK_UNITS", self.chunk_units as u64);
        constant("OURO_CHUNK_SHIFT", self.chunk_units.trailing_zeros() as u64);
        constant("OURO_CHUNKS", self.chunks as u64);
        constant("OURO_MIN_PAGE_UNITS", self.min_page_units as u64);
        constant(
            "OURO_MIN_PAGE_SHIFT",
            self.min_page_units.trailing_zeros() as u64,
        );
        constant("OURO_BASE_CLASSES", self.base_classes as u64);
        constant("OURO_CLASSES", self.classes as u64);
        constant("OURO_POOL", self.classes as u64);
        constant("OURO_FRESH", FRESH_WORD);
        constant("OURO_HELD_CHUNKS", HELD_CHUNKS_WORD);
        constant("OURO_ENQUEUE_FAILS", ENQUEUE_FAILS_WORD);
        constant("OURO_STALE_DEQUEUES", STALE_DEQUEUES_WORD);
        constant("OURO_PAGE_EVENTS", PAGE_EVENTS_WORD);
        constant("OURO_QUEUE_META", QUEUE_META);
        constant("OURO_CHUNK_INFO", self.chunk_info);
        constant("OURO_LIVE_BITS", self.live_bits);
        constant("OURO_SPILL_BITS", self.spill_bits);
        constant("OURO_SPILL_COUNT", self.spill_count());
        constant("OURO_SPILLED", self.spilled_word());
        constant(
            "OURO_SPILL_CURSOR",
            self.spilled_word() + self.classes as u64,
        );
        if self.cb_words > 0 {
            constant("OURO_CB_COUNT", self.cb_meta);
            constant("OURO_CB_QUEUED", self.cb_meta + self.chunks as u64);
            constant("OURO_CB_POS", self.cb_meta + 2 * self.chunks as u64);
            if self.queue_kind == QueueKind::VirtualLinked {
                constant("OURO_CB_QC", self.cb_meta + 3 * self.chunks as u64);
            }
            let arrays = cb_chunk_arrays(self.queue_kind);
            constant("OURO_CB_BITS", self.cb_meta + arrays * self.chunks as u64);
            constant("OURO_CB_WORDS", self.cb_words);
            let span = (2 * self.chunks as u64).next_power_of_two();
            constant("OURO_CB_SPAN", span);
            constant("OURO_CB_MOVE", span / 2);
            constant("OURO_CB_INDEX_SHIFT", self.cb_index_shift() as u64);
        }
        if self.qc_words > 0 {
            constant("OURO_QC_START", self.qc_words);
            constant("OURO_QC_NEXT", self.qc_words + self.chunks as u64);
            constant("OURO_QC_COUNT", self.qc_words + 2 * self.chunks as u64);
        }
        if self.queue_kind == QueueKind::VirtualLinked {
            constant("OURO_VL_TRAIL", self.vl_trail());
        }
        if self.fresh_taken > 0 {
            constant("OURO_FRESH_TAKEN", self.fresh_taken);
        }
        constant("OURO_QUEUE_RESERVE", self.queue_reserve());
        let mut switch = |name: &str, values: &[u64]| {
            let _ = writeln!(s, "fn {name}(q: u32) -> u32 {{\n    switch q {{");
            for (q, v) in values.iter().enumerate() {
                let _ = writeln!(s, "        case {q}u: {{ return {v}u; }}");
            }
            let _ = writeln!(s, "        default: {{ return 0u; }}\n    }}\n}}");
        };
        let bases: Vec<u64> = self.rings.iter().map(|r| r.0).collect();
        let masks: Vec<u64> = self.rings.iter().map(|r| r.1.max(1) - 1).collect();
        switch("ouro_ring_base", &bases);
        switch("ouro_ring_mask", &masks);
        switch("ouro_chunk_limit", &self.chunk_limit);
        if self.queue_kind != QueueKind::Standard {
            let bases: Vec<u64> = self.vaq.iter().map(|v| v.0).collect();
            let masks: Vec<u64> = self.vaq.iter().map(|v| v.1 - 1).collect();
            switch("ouro_vaq_base", &bases);
            switch("ouro_vaq_mask", &masks);
        }
        if !self.cb_index.is_empty() {
            layer_base_wgsl(s, &[&self.cb_index]);
        }
    }
}
