//! Host-side planning of the Ouroboros strategies: chunk geometry, size classes, and where
//! each queue lives in `heap_meta`. Written into the generated WGSL configuration.
//!
//! heap_meta layout (u32 words), declared here and generated into the WGSL (codegen.rs):
//!
//! ```text
//!   0 .. 143                statistics (`RawStats`, core/stats.wgsl)
//! 144                       OURO_FRESH: chunks bumped from fresh memory
//! 145                       reserved
//! 146                       OURO_HELD_CHUNKS: chunks held by classes, page chunks and runs
//!                           (heaps with a queue reserve only; chunks.wgsl, ouro_reserve_take)
//! 147 .. 151                OURO_ENQUEUE_FAILS: failed enqueues by cause (queues/index_queue.wgsl,
//!                           OQ_FAIL_*; [`EnqueueFailures`])
//! 152                       OURO_STALE_DEQUEUES: dequeues of a virtualized page queue that
//!                           gave up on old content in their slot (ouroboros.wgsl)
//! 153 .. 157                OURO_PAGE_EVENTS: events of mallocs (ouroboros.wgsl,
//!                           OURO_EV_*; [`PageEvents`])
//! 158 .. 159                reserved
//! 160 .. 1055               unused (`STRATEGY_STATE`, src/layout/mod.rs, says why)
//! 1056 ..                   OURO_QUEUE_META: OQ_WORDS words per queue (classes, then the
//!                           chunk pool)
//!  ..                       OURO_CHUNK_INFO: one word per chunk
//!  ..                       OURO_LIVE_BITS: one bit per 16-byte unit
//!  ..                       the spill (ouroboros/spill.wgsl): OURO_SPILL_BITS, one bit per
//!                           16-byte unit; OURO_SPILL_COUNT, one word per chunk;
//!                           OURO_SPILLED and OURO_SPILL_CURSOR, one word per class each
//!  ..                       linked and token-log queue chunks' words, VAQ pointer slots
//!  ..                       page-based: OURO_FRESH_TAKEN, a fresh run's page counter per
//!                           chunk (ouroboros/fresh_runs.wgsl)
//!  ..                       chunk-based: per chunk its count, token state, token position,
//!                           on linked queues the queue chunk holding the token, and page
//!                           bitmask (OURO_CB_*), then the index of chunks with free pages
//!                           (summary bitmap 0, `cb_index`)
//!  ..                       rings, one per queue, each a power of two of words
//! ```
//!
//! Standard queues live in heap_meta, not in the heap: a class's ring holds every page the
//! class can own, so an enqueue never finds it full. Where the rings for every page of the
//! heap would not fit one storage binding (or 1 GiB), the largest rings are halved until
//! they do, and a class may then own only as many chunks as its ring can index
//! (`chunk_limit`); mallocs past that report out of memory. [`OuroGeometry::capacity_for`]
//! accounts for it, so capacities stay exact.
//!
//! A heap that can grow is planned for its reserved maximum (`OuroPlanInput::bytes`): chunks,
//! live bits, rings, chunk limits and per-chunk words all cover it, and the device bounds
//! fresh chunks by the committed size instead (shaders/ouroboros/chunks.wgsl,
//! ouro_chunk_end; the grow and trim hooks are in shaders/ouroboros/growth.wgsl).

use crate::error::{Error, Result};
use crate::layout::{STRATEGY_STATE, UNIT_BYTES};
use crate::meta::STAT_WORDS;
use crate::strategy::StrategyPlan;
use crate::summary_bitmap::plan_layers;
use shared::{OQ_VOID, OQ_WORDS, VQ_BUSY};

mod codegen;
mod report;
pub(crate) mod shared;
pub use report::{ClassReport, EnqueueFailures, OuroborosReport, PageEvents};

/// heap_meta words of the scalars in the layout above.
const FRESH_WORD: u64 = STAT_WORDS;
const HELD_CHUNKS_WORD: u64 = STAT_WORDS + 2;
const ENQUEUE_FAILS_WORD: u64 = STAT_WORDS + 3;
const STALE_DEQUEUES_WORD: u64 = ENQUEUE_FAILS_WORD + shared::OQ_FAIL_CAUSES as u64;
const PAGE_EVENTS_WORD: u64 = STALE_DEQUEUES_WORD + 1;
/// The queue descriptors, where a strategy's state begins, on a 128-byte line as their
/// lines expect (shared.rs, OQ_WORDS).
const QUEUE_META: u64 = STRATEGY_STATE;
const _: () = assert!(QUEUE_META % 32 == 0);
/// Cap on all of Ouroboros's metadata, whatever the binding allows.
const META_CAP_BYTES: u64 = 1 << 30;

/// The chunk-based front end's per-chunk words before its bitmasks: count, token state and
/// token position, and on linked queues the queue chunk that holds the token
/// (chunk_tokens.wgsl: a removal finds it there, not by following links from the front).
fn cb_chunk_arrays(kind: QueueKind) -> u64 {
    if kind == QueueKind::VirtualLinked {
        4
    } else {
        3
    }
}

/// Which queues hold the size classes up to one chunk.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum QueueKind {
    /// Standard index queues, rings in heap_meta.
    Standard,
    /// Virtualized array-hierarchy queues: chunk pointers in heap_meta, items in queue chunks.
    VirtualArray,
    /// Virtualized linked-chunk queues: front, back and old chunk pointers, linked chunks.
    VirtualLinked,
}

/// The planned geometry of an Ouroboros heap.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct OuroGeometry {
    pub chunk_units: u32,
    pub chunks: u32,
    pub min_page_units: u32,
    /// Classes from the smallest page up to one chunk.
    pub base_classes: u32,
    /// All classes, runs of several chunks included.
    pub classes: u32,
    pub max_alloc: u32,
    pub chunk_info: u64,
    pub live_bits: u64,
    /// The spill's bits (one per unit); its per-chunk counts, per-class counts and cursors
    /// follow (ouroboros/spill.wgsl).
    pub spill_bits: u64,
    /// Per queue (classes, then the pool): first word and capacity (a power of two).
    pub rings: Vec<(u64, u64)>,
    /// Per class: the most batches (chunks or runs) the class may take.
    pub chunk_limit: Vec<u64>,
    pub queue_kind: QueueKind,
    /// Per class (VirtualArray, classes up to one chunk): first word and number of its
    /// chunk-pointer slots (two words each).
    pub vaq: Vec<(u64, u64)>,
    /// Linked-chunk queues: first of the per-chunk start, next and count arrays.
    pub qc_words: u64,
    /// Chunk-based: first of the per-chunk count, queued and position arrays (and, on
    /// linked queues, the tokens' queue chunks: `cb_chunk_arrays`), then the bitmasks
    /// (`cb_words` words per chunk); 0 if page-based.
    pub cb_meta: u64,
    pub cb_words: u64,
    /// Chunk-based: the index of chunks with free pages, summary bitmap 0
    /// (`shaders/core/summary_bitmap.wgsl`): per base class a range of
    /// `2^cb_index_shift() >= chunks` indices. Its layers' first words; empty if page-based.
    pub cb_index: Vec<u64>,
    /// Page-based: the fresh runs' page counters, one word per chunk
    /// (ouroboros/fresh_runs.wgsl); 0 if chunk-based.
    pub fresh_taken: u64,
    pub meta_words: u64,
    /// Chunk-based with subgroups: `GPU_HEAP_SUBGROUPS` (OuroPlanInput::subgroups).
    pub subgroups: bool,
}

/// The Ouroboros strategies' parameters ([`crate::HeapConfig::ouroboros`]).
///
/// ```
/// use gpu_heap::{HeapConfig, OuroborosParams, Strategy};
/// let config = HeapConfig::new(64 << 20)
///     .strategy(Strategy::OuroPS)
///     .ouroboros(OuroborosParams { max_alloc: 256 << 10, ..Default::default() });
/// assert_eq!(config.ouroboros.chunk_size, 8192);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct OuroborosParams {
    /// Chunk size in bytes: a power of two, at least 16 and at most a segment (128 KiB at
    /// most on linked-chunk queues). The largest page, and the unit the chunk manager hands
    /// out. Default 8 KiB.
    pub chunk_size: u32,
    /// Smallest page in bytes: a power of two from 16 to the chunk size. Default 16.
    pub min_page_size: u32,
    /// Largest malloc in bytes: a power of two, at least 16. Classes above one chunk are
    /// served by runs of chunks; it is also capped by the segment size and the heap.
    /// Default 64 KiB.
    pub max_alloc: u32,
}

impl Default for OuroborosParams {
    fn default() -> Self {
        Self {
            chunk_size: 8192,
            min_page_size: 16,
            max_alloc: 64 << 10,
        }
    }
}

/// What planning an Ouroboros heap takes: the parameters, the heap and the device.
pub(crate) struct OuroPlanInput {
    pub params: OuroborosParams,
    pub bytes: u64,
    /// Units per full segment is 1 << segment_shift; the stride in bytes.
    pub segment_stride: u64,
    /// The largest storage binding (bytes).
    pub max_binding: u64,
    pub queue_kind: QueueKind,
    /// Chunk-based front end for the classes up to one chunk (queues of chunk tokens).
    pub chunk_based: bool,
    /// The device has subgroups: the chunk-based mallocs of a subgroup take their units,
    /// or make their chunks, together (chunk_based.wgsl).
    pub subgroups: bool,
}

impl OuroGeometry {
    pub fn plan(input: &OuroPlanInput) -> Result<Self> {
        let p = input;
        let OuroborosParams {
            chunk_size,
            min_page_size,
            max_alloc,
        } = input.params;
        let pow2 = |name: &str, v: u32, min: u32| -> Result<()> {
            if !v.is_power_of_two() || v < min {
                return Err(Error::InvalidConfig(format!(
                    "{name} must be a power of two of at least {min} bytes, not {v}"
                )));
            }
            Ok(())
        };
        pow2("chunk_size", chunk_size, 16)?;
        pow2("min_page_size", min_page_size, 16)?;
        pow2("max_alloc", max_alloc, 16)?;
        let chunk = chunk_size as u64;
        if min_page_size as u64 > chunk {
            return Err(Error::InvalidConfig(format!(
                "min_page_size {} is larger than chunk_size {chunk}",
                min_page_size
            )));
        }
        if chunk > p.segment_stride {
            return Err(Error::InvalidConfig(format!(
                "chunk_size {chunk} is larger than a segment ({} bytes)",
                p.segment_stride
            )));
        }
        let chunks = p.bytes / chunk;
        if chunks == 0 {
            return Err(Error::InvalidConfig(format!(
                "a heap of {} bytes holds no chunk of {chunk} bytes",
                p.bytes
            )));
        }
        if p.queue_kind == QueueKind::VirtualArray && !p.chunk_based {
            if chunks >= VQ_BUSY as u64 {
                return Err(Error::InvalidConfig(format!(
                    "a page-based VAQ heap holds fewer than {VQ_BUSY} chunks ({chunks} of \
                     {chunk} bytes asked for); use larger chunks"
                )));
            }
            // Page handles (unit + 1) stay below the queue's abandoned-position marker.
            if p.bytes / UNIT_BYTES >= OQ_VOID as u64 {
                return Err(Error::TooLarge {
                    requested: p.bytes,
                    reason: format!(
                        "a page-based VAQ heap holds fewer than {OQ_VOID} units of \
                         {UNIT_BYTES} bytes"
                    ),
                });
            }
        }
        let chunk_units = chunk / UNIT_BYTES;
        let min_page_units = min_page_size as u64 / UNIT_BYTES;
        let base_classes = (chunk_units / min_page_units).trailing_zeros() + 1;
        // Largest run: at most the configured maximum, a segment, and the heap's chunks.
        let max_alloc = (max_alloc as u64)
            .min(p.segment_stride)
            .min(prev_power_of_two(chunks) * chunk)
            .max(chunk);
        let large = (max_alloc / chunk).trailing_zeros();
        let classes = base_classes + large;

        let queues = classes as u64 + 1;
        let chunk_info = QUEUE_META + queues * OQ_WORDS;
        let units = p.bytes / UNIT_BYTES;
        let live_bits = chunk_info + chunks;
        // The spill covers the units of whole chunks (pages live there only).
        let spill_bits = live_bits + units.div_ceil(32);
        let rings_start =
            spill_bits + (chunks * chunk_units).div_ceil(32) + chunks + 2 * classes as u64;

        // Batches (chunks or runs) each class could own in the whole heap, and pages per batch.
        let batch = |k: u32| -> u64 {
            if k < base_classes {
                chunk_units / (min_page_units << k)
            } else {
                1
            }
        };
        let run = |k: u32| -> u64 {
            if k < base_classes {
                1
            } else {
                1 << (k - base_classes + 1)
            }
        };
        let items = |k: u32| (chunks / run(k)).max(1) * batch(k);
        let virtual_class = |k: u32| p.queue_kind != QueueKind::Standard && k < base_classes;
        if p.queue_kind == QueueKind::VirtualLinked && chunk > 128 << 10 {
            return Err(Error::InvalidConfig(format!(
                "chunk_size {chunk} is too large for linked-chunk queues (at most 128 KiB: a \
                 queue chunk's item count must fit 16 bits)"
            )));
        }
        // Virtualized classes: two laps' worth of chunk-pointer slots, two words each.
        let qc_items = chunk_units * 4;
        let mut vaq = Vec::new();
        let mut next = rings_start;
        // Linked-chunk queues, and the chunk-based front end's virtualized token queues:
        // start, next and count words per chunk.
        let per_chunk_qc = p.queue_kind == QueueKind::VirtualLinked
            || (p.chunk_based && p.queue_kind == QueueKind::VirtualArray);
        let qc_words = if per_chunk_qc { next } else { 0 };
        if per_chunk_qc {
            next += 3 * chunks;
        }
        // Page-based: a fresh run's page counter per chunk (at the run's first chunk).
        let fresh_taken = if p.chunk_based { 0 } else { next };
        if !p.chunk_based {
            next += chunks;
        }
        // Chunk-based: the positions a walk covers (twice the chunks a class can own, as the
        // standard ring of chunk tokens has slots).
        let cb_span = (2 * chunks).next_power_of_two();
        for k in 0..classes {
            if virtual_class(k) {
                let slots = if p.queue_kind == QueueKind::VirtualLinked {
                    1 // one slot: the count of drained chunks trailing front
                } else if p.chunk_based {
                    // Token positions between the queue's front and back: four walks' worth
                    // (ouroboros/chunk_tokens.wgsl keeps them within about one).
                    (4 * cb_span).div_ceil(qc_items).next_power_of_two().max(4)
                } else {
                    (2 * items(k)).div_ceil(qc_items).next_power_of_two().max(2)
                };
                vaq.push((next, slots));
                next += 2 * slots;
            }
        }
        // Chunk-based: per-chunk words, and rings of chunk tokens with twice as many slots
        // as chunks (tokens are removed where they lie; see chunk_based.wgsl).
        let (cb_meta, cb_words) = if p.chunk_based {
            let words = (chunk_units / min_page_units).div_ceil(32);
            let start = next;
            next += (cb_chunk_arrays(p.queue_kind) + words) * chunks;
            (start, words)
        } else {
            (0, 0)
        };
        let cb_index = if p.chunk_based {
            let shift = index_shift(chunks);
            plan_layers(&mut next, (base_classes as u64) << shift, shift)
        } else {
            Vec::new()
        };
        let rings_start = next;
        let entries_per_batch = |k: u32| -> u64 {
            if p.chunk_based && k < base_classes {
                2
            } else {
                batch(k)
            }
        };
        let mut caps: Vec<u64> = (0..classes)
            .map(|k| {
                if virtual_class(k) {
                    0
                } else if p.chunk_based && k < base_classes {
                    (2 * chunks).next_power_of_two()
                } else {
                    items(k).next_power_of_two()
                }
            })
            .collect();
        caps.push(chunks.next_power_of_two()); // the pool
        let budget = p.max_binding.min(META_CAP_BYTES) / 4;
        loop {
            let total = rings_start + caps.iter().sum::<u64>();
            if total <= budget {
                break;
            }
            // Halve the largest class ring (never the pool's), keeping one batch.
            let (k, _) = caps[..classes as usize]
                .iter()
                .enumerate()
                .max_by_key(|(_, c)| **c)
                .expect("at least one class");
            if caps[k] / 2 < entries_per_batch(k as u32) {
                return Err(Error::TooLarge {
                    requested: p.bytes,
                    reason: format!(
                        "Ouroboros's queues ({} bytes) do not fit one storage binding of {} bytes; \
                         use larger chunks",
                        total * 4,
                        p.max_binding
                    ),
                });
            }
            caps[k] /= 2;
        }
        let mut rings = Vec::new();
        let mut next = rings_start;
        for &c in &caps {
            rings.push((next, c));
            next += c;
        }
        let chunk_limit = (0..classes)
            .map(|k| {
                if virtual_class(k) {
                    chunks
                } else {
                    caps[k as usize] / entries_per_batch(k)
                }
            })
            .collect();
        Ok(OuroGeometry {
            chunk_units: chunk_units as u32,
            chunks: chunks as u32,
            min_page_units: min_page_units as u32,
            base_classes,
            classes,
            max_alloc: max_alloc as u32,
            chunk_info,
            live_bits,
            spill_bits,
            rings,
            chunk_limit,
            queue_kind: p.queue_kind,
            vaq,
            qc_words,
            cb_meta,
            cb_words,
            cb_index,
            fresh_taken,
            meta_words: next,
            subgroups: p.subgroups && p.chunk_based,
        })
    }

    /// Chunk-based: each class's range of the index has `2^cb_index_shift()` indices.
    pub(crate) fn cb_index_shift(&self) -> u32 {
        index_shift(self.chunks as u64)
    }

    /// First heap_meta word of the spill's per-chunk counts.
    fn spill_count(&self) -> u64 {
        self.spill_bits + (self.chunks as u64 * self.chunk_units as u64).div_ceil(32)
    }

    /// First heap_meta word of the spill's per-class counts of pages.
    pub(crate) fn spilled_word(&self) -> u64 {
        self.spill_count() + self.chunks as u64
    }

    /// First heap_meta word of queue q's descriptor (classes, then the pool).
    fn queue_word(&self, q: u32) -> u64 {
        QUEUE_META + q as u64 * OQ_WORDS
    }

    fn class_of(&self, size: u32) -> u32 {
        let units = (size as u64)
            .div_ceil(UNIT_BYTES)
            .max(self.min_page_units as u64);
        (units.next_power_of_two() / self.min_page_units as u64).trailing_zeros()
    }

    fn page_units(&self, k: u32) -> u64 {
        if k < self.base_classes {
            (self.min_page_units as u64) << k
        } else {
            (self.chunk_units as u64) << (k - self.base_classes + 1)
        }
    }

    /// Allocations of `size` bytes an empty heap serves.
    pub fn capacity_for(&self, size: u32) -> u64 {
        let k = self.class_of(size);
        let chunks = self.chunks as u64;
        let limit = self.chunk_limit[k as usize];
        if k < self.base_classes {
            let per_chunk = self.chunk_units as u64 / self.page_units(k);
            // Classes on virtualized queues hold every chunk but the queue reserve: their
            // producers take a ticket for each chunk (ouro_reserve_take, chunks.wgsl).
            let usable = chunks.saturating_sub(self.queue_reserve());
            usable.min(limit) * per_chunk
        } else {
            let run = 1u64 << (k - self.base_classes + 1);
            (chunks / run).min(limit)
        }
    }

    /// Linked-chunk queues: drained queue chunks kept behind front before they are freed
    /// (`OURO_VL_TRAIL`, the paper's safety distance t).
    pub fn vl_trail(&self) -> u64 {
        (self.chunks as u64 / 128).clamp(8, 256)
    }

    /// Virtualized queues: chunks that the classes whose queues live in the heap leave to
    /// queue chunks (`OURO_QUEUE_RESERVE`, chunks.wgsl's ouro_reserve_take); 0 on standard
    /// queues. The live part of a queue (of pages, or of the chunk-based variants' chunk
    /// tokens) needs one or two queue chunks, more in bursts. A linked queue also keeps its
    /// last `vl_trail` drained chunks, so its reserve holds those too: otherwise class
    /// chunks can take all but the queue chunks in use, and producers whose positions need
    /// one more lose their pages. A linked queue's live part also needs more room in
    /// bursts, so its share is capped higher (256 chunks, 0.1 % of a 2 GiB heap): a page
    /// whose enqueue finds no queue chunk goes to the spill, where mallocs must search for
    /// it.
    pub fn queue_reserve(&self) -> u64 {
        let share = self.chunks as u64 / 256;
        match self.queue_kind {
            QueueKind::Standard => 0,
            QueueKind::VirtualArray => share.clamp(2, 64),
            QueueKind::VirtualLinked => share.clamp(2, 256) + self.vl_trail(),
        }
    }

    pub fn granted_bytes(&self, size: u32) -> u64 {
        self.page_units(self.class_of(size)) * UNIT_BYTES
    }
}

fn prev_power_of_two(x: u64) -> u64 {
    1 << (63 - x.leading_zeros())
}

/// The chunk-based index's range per class covers `chunks` indices: its log2.
fn index_shift(chunks: u64) -> u32 {
    chunks.next_power_of_two().trailing_zeros()
}

#[cfg(test)]
mod tests;

impl StrategyPlan for OuroGeometry {
    fn entry_file(&self) -> &'static str {
        "ouroboros/ouroboros.wgsl"
    }

    fn max_alloc(&self) -> u64 {
        self.max_alloc as u64
    }

    fn state_end_word(&self) -> u64 {
        self.meta_words
    }

    fn wgsl(&self, s: &mut String) {
        OuroGeometry::wgsl(self, s)
    }

    /// The chunk-based front end marks every chunk's count (chunk_based.wgsl).
    fn init_invocations(&self) -> u32 {
        if self.cb_words > 0 {
            self.chunks.min(1 << 20)
        } else {
            0
        }
    }

    fn item_units(&self) -> u64 {
        self.chunk_units as u64
    }

    /// One invocation per chunk.
    fn trim_check_invocations(&self, to_units: u64, from_units: u64) -> u32 {
        let units = self.chunk_units as u64;
        (from_units.div_ceil(units) - to_units / units).max(1) as u32
    }

    fn capacity_for(&self, size: u32, _: &[u64]) -> u64 {
        OuroGeometry::capacity_for(self, size)
    }

    fn granted_bytes(&self, size: u32) -> u64 {
        OuroGeometry::granted_bytes(self, size)
    }

    fn queue_reserve_chunks(&self) -> u64 {
        self.queue_reserve()
    }

    fn uses_subgroups(&self) -> bool {
        self.subgroups
    }

    /// Virtualized queues make their queue chunks from fresh chunks without emptying them
    /// (chunks.wgsl, OURO_FRESH).
    fn reset_clears_segments(&self) -> bool {
        self.queue_kind != QueueKind::Standard
    }
}
