//! Where an Ouroboros heap's memory is, read back from heap_meta between dispatches
//! ([`GpuHeap::ouroboros_report`]).
//!
//! A page-based heap keeps a conservation law: every unit of a page chunk is in a live
//! allocation, in a free page of its class queue (the class semaphore's count), in the
//! spill (`OURO_SPILLED`: free pages a queue could not take, ouroboros/spill.wgsl), or in
//! the part of the class's fresh run not yet handed out (ouroboros/fresh_runs.wgsl). [`OuroborosReport::unaccounted_units`]
//! is what breaks it, and a virtualized queue's chunks are all reachable from its
//! pointers ([`OuroborosReport::unreachable_queue_chunks`]), and a linked queue's front
//! passes every finished chunk ([`OuroborosReport::stalled_queue_chunks`]). All are 0 after every
//! dispatch unless the allocator leaks; the conformance suite checks them.

use super::shared::{
    BSEM_R_BITS, OQ_BACK, OQ_FAIL_CAUSES, OQ_FAIL_MAKE_WAIT, OQ_FAIL_MOVES, OQ_FAIL_NO_MEMORY,
    OQ_FAIL_SEARCH, OQ_FAIL_SLOT_WAIT, OQ_FAIL_SPAN, OQ_FILLING, OQ_FRESH_RUN, OQ_FRONT,
    OURO_EV_MISSED, OURO_EV_OOM_WITH_PAGES, OURO_EV_OUT_OF_ROUNDS, OURO_EV_STRANDED,
    OURO_EV_UNREGISTERED, OURO_FRESH_LOG_BITS, OURO_INFO_QUEUE, VL_FRONT, VL_OLD, VQ_BUSY,
    VQ_CHUNK_MASK, VQ_DEAD,
};
use super::{
    OuroGeometry, QueueKind, ENQUEUE_FAILS_WORD, FRESH_WORD, PAGE_EVENTS_WORD, STALE_DEQUEUES_WORD,
};
use crate::error::Result;
use crate::heap::GpuHeap;
use crate::summary_bitmap::Layers;

/// A snapshot of an Ouroboros heap: its chunks by use, and each size class's pages.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[non_exhaustive]
pub struct OuroborosReport {
    /// Chunks the heap has (the reserved maximum of a heap that can grow).
    pub chunks: u32,
    /// Chunks never handed out, below the committed end.
    pub fresh_left: u32,
    /// Chunks in the chunk pool (its fill count).
    pub pooled: i32,
    /// Chunks serving as queue chunks (virtualized queues; their info names the queue).
    pub queue_chunks: u32,
    /// Of those, the drained chunks that linked queues keep behind their fronts, summed over
    /// the queues (`ouro-p-vl`, `ouro-c-vl`; `None` otherwise): each queue keeps its last
    /// `OURO_VL_TRAIL` drained chunks (the paper's safety distance) and frees the one that
    /// falls behind them, so the trail fills over a queue's first front moves and then
    /// stays; the rest of `queue_chunks` holds the queues' live positions.
    pub trailing_queue_chunks: Option<u32>,
    /// Queue chunks that no pointer of their queue reaches (page-based VAQ and VLQ; `None`
    /// otherwise): memory lost to the heap.
    pub unreachable_queue_chunks: Option<u32>,
    /// Chunks of a linked queue (page-based VLQ; `None` otherwise) that front has not
    /// passed although their successor is linked and every position in them was taken by
    /// an enqueue and a dequeue: between dispatches such a chunk is finished, so one that
    /// front still holds keeps every chunk after it from the pool.
    pub stalled_queue_chunks: Option<u32>,
    /// Chunks that a class's index lists as holding free pages but that no descent of the
    /// index reaches, a summary bit above them being clear (chunk-based heaps; `None` for
    /// page-based ones): 0 between dispatches, else mallocs find them only by scanning.
    pub unreachable_index_chunks: Option<u64>,
    /// Why enqueues failed, over the heap's lifetime and all its queues.
    pub enqueue_failures: EnqueueFailures,
    /// Dequeues of a virtualized page queue that gave up on a slot holding a queue chunk's
    /// earlier content (`OURO_STALE_DEQUEUES`): the item written there afterwards is never
    /// dequeued, so its page leaves circulation (it shows in `unaccounted_units`).
    pub stale_dequeues: u32,
    /// What page-based mallocs met on their way, over the heap's lifetime.
    pub page_events: PageEvents,
    /// One entry per size class.
    pub classes: Vec<ClassReport>,
    /// Whether the classes' pages live in queues of pages (page-based front end).
    page_based: bool,
    chunk_units: u32,
}

/// Failed enqueues by cause (`OURO_ENQUEUE_FAILS`, the `OQ_FAIL_*` causes of
/// queues/index_queue.wgsl), counted by every queue of the heap. A page whose enqueue failed
/// goes to the spill ([`ClassReport::spilled`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[non_exhaustive]
pub struct EnqueueFailures {
    /// The heap had no chunk for queue storage.
    pub no_memory: u32,
    /// The wait for a queue chunk that another invocation was making ran out.
    pub make_wait: u32,
    /// A linked queue's search for the position's chunk ran out of rounds.
    pub search: u32,
    /// The wait for the position's slot ran out.
    pub slot_wait: u32,
    /// The item met `OQ_MOVES` positions abandoned by their dequeuers.
    pub moves: u32,
    /// A VAQ chunk-token log's position lay beyond its pointer array's span from the front.
    pub span: u32,
}

impl EnqueueFailures {
    fn from_words(w: &[u32]) -> Self {
        EnqueueFailures {
            no_memory: w[OQ_FAIL_NO_MEMORY as usize],
            make_wait: w[OQ_FAIL_MAKE_WAIT as usize],
            search: w[OQ_FAIL_SEARCH as usize],
            slot_wait: w[OQ_FAIL_SLOT_WAIT as usize],
            moves: w[OQ_FAIL_MOVES as usize],
            span: w[OQ_FAIL_SPAN as usize],
        }
    }

    /// Each cause's name and count.
    ///
    /// ```
    /// let f = gpu_heap::EnqueueFailures::default();
    /// assert!(f.by_cause().iter().all(|&(_, n)| n == 0));
    /// ```
    pub fn by_cause(&self) -> [(&'static str, u32); OQ_FAIL_CAUSES] {
        [
            ("no memory", self.no_memory),
            ("make wait", self.make_wait),
            ("search", self.search),
            ("slot wait", self.slot_wait),
            ("moves", self.moves),
            ("span", self.span),
        ]
    }

    /// All failed enqueues.
    pub fn total(&self) -> u64 {
        self.by_cause().iter().map(|&(_, n)| n as u64).sum()
    }
}

/// Events of mallocs looking for a page, in either front end (`OURO_PAGE_EVENTS`, the
/// `OURO_EV_*` events of ouroboros/ouroboros.wgsl), counted over the heap's lifetime: they
/// say why mallocs found no page while pages were queued.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[non_exhaustive]
pub struct PageEvents {
    /// Units taken for which no page was found (the unit went back to the semaphore):
    /// page-based, the dequeue found no item; chunk-based, the walk found no chunk to
    /// claim a page from.
    pub missed: u32,
    /// Dequeues that gave up without consuming their position: the item put there is never
    /// dequeued, and its unit stays in the count.
    pub stranded: u32,
    /// Mallocs that spent all their rounds of waiting.
    pub out_of_rounds: u32,
    /// Mallocs that reported out of memory while their class semaphore held units.
    pub out_of_memory_with_pages: u32,
    /// Mallocs out of rounds whose last production the semaphore could not register (its
    /// count of batches in production was at its cap); they produced it unregistered.
    pub unregistered: u32,
}

impl PageEvents {
    fn from_words(w: &[u32]) -> Self {
        PageEvents {
            missed: w[OURO_EV_MISSED as usize],
            stranded: w[OURO_EV_STRANDED as usize],
            out_of_rounds: w[OURO_EV_OUT_OF_ROUNDS as usize],
            out_of_memory_with_pages: w[OURO_EV_OOM_WITH_PAGES as usize],
            unregistered: w[OURO_EV_UNREGISTERED as usize],
        }
    }
}

/// One size class of an [`OuroborosReport`].
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[non_exhaustive]
pub struct ClassReport {
    /// Bytes per page.
    pub page_bytes: u64,
    /// Chunks (or multi-chunk runs) holding this class's pages.
    pub chunks: u32,
    /// Pages of those chunks out with a user (live bits set).
    pub live_pages: u64,
    /// The class semaphore's count: free pages in its queue (page-based), or units of
    /// chunk tokens (chunk-based).
    pub queued: i32,
    /// Batches registered with the semaphore and not yet signalled (0 between dispatches).
    pub batches_in_production: u32,
    /// Units reserved by waiting mallocs (0 between dispatches).
    pub reserved: u32,
    /// Producers between taking a chunk and signalling its pages (0 between dispatches).
    pub filling: u32,
    /// Free pages in the spill: their queue could not take them (`OURO_SPILLED`).
    pub spilled: i32,
    /// Pages of the class's fresh run not yet handed out (page-based heaps that cannot
    /// grow; 0 otherwise): mallocs that find no page queued take them in order.
    pub fresh: u64,
    /// Positions the class queue has handed out at its back since the heap was initialized
    /// or reset, modulo 2^32: pages enqueued (page-based) or chunk tokens placed
    /// (chunk-based), so that two reports tell how many were placed between them.
    pub placed: u32,
    units_per_page: u64,
    pages_per_batch: u64,
}

impl OuroborosReport {
    /// Units of page chunks that are neither live, nor free in their class queue, nor
    /// spilled: pages the allocator can no longer reach (page-based heaps between
    /// dispatches; `None` for chunk-based ones, whose free pages are in chunk bitmasks).
    /// Positive values are leaks; negative ones mean a queue counts pages it does not have.
    pub fn unaccounted_units(&self) -> Option<i64> {
        if !self.page_based {
            return None;
        }
        let held: i64 = self
            .classes
            .iter()
            .map(|c| {
                let pages = c.chunks as i64 * c.pages_per_batch as i64;
                let free = c.queued as i64 + c.spilled as i64 + c.fresh as i64;
                (pages - c.live_pages as i64 - free) * c.units_per_page as i64
            })
            .sum();
        Some(held)
    }

    /// Chunks holding pages of some class.
    pub fn page_chunks(&self) -> u32 {
        self.classes
            .iter()
            .map(|c| {
                c.chunks
                    * (c.pages_per_batch * c.units_per_page / self.chunk_units as u64).max(1) as u32
            })
            .sum()
    }

    /// One line: chunks by use, then the classes that hold any.
    pub fn summary(&self) -> String {
        let mut s = format!(
            "chunks {}: {} fresh, {} pooled, {} pages, {} queue",
            self.chunks,
            self.fresh_left,
            self.pooled,
            self.page_chunks(),
            self.queue_chunks
        );
        if let Some(t) = self.trailing_queue_chunks {
            s += &format!(" ({t} trailing)");
        }
        if let Some(u) = self.unreachable_queue_chunks {
            s += &format!(" ({u} unreachable)");
        }
        if let Some(u) = self.stalled_queue_chunks.filter(|&u| u > 0) {
            s += &format!(" ({u} stalled behind front)");
        }
        let f = &self.enqueue_failures;
        if f.total() > 0 {
            let causes: Vec<String> = f
                .by_cause()
                .iter()
                .map(|(cause, n)| format!("{n} {cause}"))
                .collect();
            s += &format!(" (failed enqueues: {})", causes.join(", "));
        }
        if self.stale_dequeues > 0 {
            s += &format!(", {} dequeues gave up on old content", self.stale_dequeues);
        }
        if let Some(u) = self.unaccounted_units() {
            s += &format!(", unaccounted {u} units");
        }
        let e = &self.page_events;
        if *e != PageEvents::default() {
            s += &format!(
                "; mallocs: {} missed a page ({} dequeues stranded), {} out of rounds ({} \
                 produced unregistered), {} out of memory with pages queued",
                e.missed, e.stranded, e.out_of_rounds, e.unregistered, e.out_of_memory_with_pages
            );
        }
        for c in self
            .classes
            .iter()
            .filter(|c| c.chunks > 0 || c.queued != 0)
        {
            s += &format!(
                "; {} B: {} chunks, {} live, {} queued",
                c.page_bytes, c.chunks, c.live_pages, c.queued
            );
            if c.spilled != 0 {
                s += &format!(", {} spilled", c.spilled);
            }
            if c.fresh != 0 {
                s += &format!(", {} fresh", c.fresh);
            }
            if c.batches_in_production + c.reserved + c.filling > 0 {
                s += &format!(
                    ", E {} R {} filling {}",
                    c.batches_in_production, c.reserved, c.filling
                );
            }
        }
        s
    }
}

impl GpuHeap {
    /// Where an Ouroboros heap's chunks and pages are (waits for submitted work first). A
    /// snapshot for diagnostics and tests: read it between dispatches, when no malloc or free
    /// is in flight. `None` for other strategies.
    pub fn ouroboros_report(&self) -> Result<Option<OuroborosReport>> {
        let Some(g) = self.layout.ouro() else {
            return Ok(None);
        };
        let head = self.read_meta(0, g.chunk_info + g.chunks as u64)?;
        let spilled = self.read_meta(g.spilled_word(), g.classes as u64)?;
        let units = self.layout.bytes / crate::layout::UNIT_BYTES;
        let live = self.read_meta(g.live_bits, units.div_ceil(32))?;
        let info = &head[g.chunk_info as usize..];
        let committed_chunks = (self.committed_bytes() / (g.chunk_units as u64 * 16)) as u32;
        let end = committed_chunks.min(g.chunks);
        let fresh = head[FRESH_WORD as usize].min(end);
        let queue = |q: u32| g.queue_word(q) as usize;

        // Live bits are set at the first unit of a page only, so the bits of a range count
        // its live pages; whole words at once where the range is word-aligned (chunks of
        // 512 B and more), bit by bit otherwise.
        let live_in = |first_unit: u64, count: u64| -> u64 {
            if first_unit % 32 == 0 && count % 32 == 0 {
                let words = &live[(first_unit / 32) as usize..((first_unit + count) / 32) as usize];
                return words.iter().map(|w| w.count_ones() as u64).sum();
            }
            (first_unit..first_unit + count)
                .filter(|u| live[(u / 32) as usize] >> (u % 32) & 1 == 1)
                .count() as u64
        };
        let classes = (0..g.classes)
            .map(|k| {
                let units_per_page = g.page_units(k);
                let pages_per_batch = if k < g.base_classes {
                    g.chunk_units as u64 / units_per_page
                } else {
                    1
                };
                let d = queue(k);
                // The fresh run: its chunks are the class's whether or not a malloc has
                // stamped them yet (between dispatches, one not stamped has given no page).
                let mut run = 0..0;
                let mut fresh = 0;
                let word = head[d + OQ_FRESH_RUN as usize];
                if g.fresh_taken > 0 && word != 0 && word != u32::MAX {
                    let first = (word >> OURO_FRESH_LOG_BITS) - 1;
                    let log = word & ((1 << OURO_FRESH_LOG_BITS) - 1);
                    run = first..first + (1 << log);
                    let pages = pages_per_batch << log;
                    let taken = self.read_meta(g.fresh_taken + first as u64, 1)?[0] as u64;
                    fresh = pages - taken.min(pages);
                }
                let mut chunks = 0;
                let mut live_pages = 0;
                for (c, &i) in info.iter().enumerate() {
                    if i == k + 1 || (i == 0 && run.contains(&(c as u32))) {
                        chunks += 1;
                        live_pages += live_in(
                            c as u64 * g.chunk_units as u64,
                            units_per_page * pages_per_batch,
                        );
                    }
                }
                Ok(ClassReport {
                    page_bytes: units_per_page * 16,
                    chunks,
                    live_pages,
                    queued: head[d] as i32,
                    batches_in_production: head[d + 1] >> BSEM_R_BITS,
                    reserved: head[d + 1] & ((1 << BSEM_R_BITS) - 1),
                    filling: head[d + OQ_FILLING as usize],
                    spilled: spilled[k as usize] as i32,
                    placed: head[d + OQ_BACK as usize],
                    fresh,
                    units_per_page,
                    pages_per_batch,
                })
            })
            .collect::<Result<Vec<_>>>()?;
        let queue_chunks = info.iter().filter(|&&i| i & OURO_INFO_QUEUE != 0).count() as u32;
        let page_based = g.cb_words == 0;
        let linked = page_based && g.queue_kind == QueueKind::VirtualLinked;
        let vlq = if linked {
            Some(self.vlq_walk(g, &head)?)
        } else {
            None
        };
        let reachable = match g.queue_kind {
            QueueKind::VirtualArray if page_based => Some(self.vaq_chunks(g)?),
            _ => vlq.map(|w| w.reachable),
        };
        let trailing_queue_chunks = match (g.queue_kind, g.vaq.first(), g.vaq.last()) {
            // Word 0 of a linked queue's slot range counts its chunks between old and front;
            // the queues' ranges lie one after another, so one read covers them all.
            (QueueKind::VirtualLinked, Some(&(first, _)), Some(&(last, _))) => {
                let words = self.read_meta(first, last + 1 - first)?;
                Some(
                    g.vaq
                        .iter()
                        .map(|&(base, _)| words[(base - first) as usize])
                        .sum(),
                )
            }
            (QueueKind::VirtualLinked, ..) => Some(0),
            _ => None,
        };
        let unreachable_index_chunks = if page_based {
            None
        } else {
            let shift = g.cb_index_shift();
            let index = Layers::read(self, &g.cb_index, (g.base_classes as u64) << shift)?;
            Some(index.unreachable(shift / 5))
        };
        Ok(Some(OuroborosReport {
            chunks: g.chunks,
            fresh_left: end - fresh,
            pooled: head[queue(g.classes)] as i32,
            queue_chunks,
            trailing_queue_chunks,
            unreachable_queue_chunks: reachable.map(|r: u32| queue_chunks.saturating_sub(r)),
            stalled_queue_chunks: vlq.map(|w| w.stalled),
            unreachable_index_chunks,
            enqueue_failures: EnqueueFailures::from_words(&head[ENQUEUE_FAILS_WORD as usize..]),
            stale_dequeues: head[STALE_DEQUEUES_WORD as usize],
            page_events: PageEvents::from_words(&head[PAGE_EVENTS_WORD as usize..]),
            classes,
            page_based,
            chunk_units: g.chunk_units,
        }))
    }

    /// Queue chunks that the VAQ pointer arrays name (not dead laps, nor installs that a
    /// dispatch left unfinished, which the bounded installer never does).
    fn vaq_chunks(&self, g: &OuroGeometry) -> Result<u32> {
        let mut n = 0;
        for &(base, slots) in &g.vaq {
            let words = self.read_meta(base, 2 * slots)?;
            n += words
                .iter()
                .step_by(2)
                .map(|&p| p & VQ_CHUNK_MASK)
                .filter(|&c| c != 0 && c != VQ_DEAD + 1 && c != VQ_BUSY + 1)
                .count() as u32;
        }
        Ok(n)
    }

    /// Walks each VLQ from `old` through the next links: the chunks it reaches, and those
    /// at or after front that front should have passed (see `stalled_queue_chunks`).
    fn vlq_walk(&self, g: &OuroGeometry, head: &[u32]) -> Result<VlqWalk> {
        let chunks = g.chunks as u64;
        let qc = self.read_meta(g.qc_words, 2 * chunks)?;
        let (start, next) = qc.split_at(g.chunks as usize);
        let items = g.chunk_units * 4;
        let mut walk = VlqWalk::default();
        for k in 0..g.base_classes {
            let d = g.queue_word(k) as usize;
            let front = head[d + VL_FRONT as usize];
            // Positions below both counters were taken by an enqueue and a dequeue.
            let (front_pos, back_pos) = (head[d + OQ_FRONT as usize], head[d + OQ_BACK as usize]);
            let taken = if (back_pos.wrapping_sub(front_pos) as i32) < 0 {
                back_pos
            } else {
                front_pos
            };
            let mut p = head[d + VL_OLD as usize];
            let mut at_or_after_front = false;
            // A cycle would be a bug of its own; the walk stops after every chunk once.
            for _ in 0..g.chunks {
                // Only chunk links are followed: 0, a link being made or a position range
                // without a chunk (never left between dispatches but the last) ends the
                // queue, and the chunks after anything else show up as unreachable.
                if p == 0 || p > g.chunks {
                    break;
                }
                walk.reachable += 1;
                let c = (p - 1) as usize;
                at_or_after_front |= p == front;
                let n = next[c];
                let linked = n != 0 && n <= g.chunks;
                let end = start[c].wrapping_add(items);
                if at_or_after_front && linked && (taken.wrapping_sub(end) as i32) >= 0 {
                    walk.stalled += 1;
                }
                p = n;
            }
        }
        Ok(walk)
    }
}

/// What [`GpuHeap::vlq_walk`] found.
#[derive(Clone, Copy, Default)]
struct VlqWalk {
    reachable: u32,
    stalled: u32,
}
