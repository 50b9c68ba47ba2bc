//! The Ouroboros words and values that the host reads back or that several shader modules
//! share, declared once here (`constants` lists them) and generated into
//! `generated/shared.wgsl` (src/meta.rs).

crate::meta::wgsl_constants! {
    constants;
    /// Words of a queue descriptor (`ouro_queue_meta(q)`, queues/index_queue.wgsl): four
    /// lines of 32 words (128 bytes; descriptors start on a line). The words that every
    /// malloc or free of the class changes, the semaphore's count, the front, the back and
    /// the spread counter, each open a line of their own: in one line, the atomics of a
    /// million calls on them waited on each other (BENCHMARKS.md, "A queue's words in lines
    /// of their own").
    pub(crate) const OQ_WORDS: u64 = 128;
    /// [0, 1]: the class's bulk semaphore (or, for the chunk pool, [0] its fill count).
    /// [32]: the front position (the next dequeue's); the chunk-token log's scan hint.
    pub(crate) const OQ_FRONT: u64 = 32;
    /// [64]: the back position (the next enqueue's).
    pub(crate) const OQ_BACK: u64 = 64;
    /// [4]: chunks the class owns.
    pub(crate) const OQ_CLASS_CHUNKS: u64 = 4;
    /// [5, 6, 7]: a linked queue's front, back and old chunk + 1 (queues/vlq.wgsl); [5] is
    /// also a VAQ token log's front position (chunk_tokens.wgsl).
    pub(crate) const VL_FRONT: u64 = 5;
    pub(crate) const VL_BACK: u64 = 6;
    pub(crate) const VL_OLD: u64 = 7;
    pub(crate) const CT_FRONT: u64 = 5;
    /// [8]: batches being filled; [96]: the chunk-based malloc's spread counter; [97]: the
    /// page-based class's fresh run (ouroboros/fresh_runs.wgsl), which every malloc that
    /// finds no page queued reads. The rest is unused.
    pub(crate) const OQ_FILLING: u64 = 8;
    pub(crate) const OQ_SPREAD: u64 = 96;
    pub(crate) const OQ_FRESH_RUN: u64 = 97;
    /// A fresh run word: (first chunk + 1) above `OURO_FRESH_LOG_BITS` bits of log2(its
    /// chunks); 0 for none, `u32::MAX` while one is installed.
    pub(crate) const OURO_FRESH_LOG_BITS: u32 = 4;

    /// Slot values of the index queues: the deletion marker (a zeroed ring is an empty queue),
    /// a position whose dequeuer gave up, and a VAQ position whose enqueuer abandoned it. Page
    /// handles stay below `OQ_VOID`.
    pub(crate) const OQ_EMPTY: u32 = 0;
    pub(crate) const OQ_SKIP: u32 = 0xffff_ffff;
    pub(crate) const OQ_VOID: u32 = 0xffff_fffe;

    /// Why an enqueue failed, counted at `OURO_ENQUEUE_FAILS + cause` ([`super::EnqueueFailures`]).
    pub(crate) const OQ_FAIL_NO_MEMORY: u64 = 0;
    pub(crate) const OQ_FAIL_MAKE_WAIT: u64 = 1;
    pub(crate) const OQ_FAIL_SEARCH: u64 = 2;
    pub(crate) const OQ_FAIL_SLOT_WAIT: u64 = 3;
    pub(crate) const OQ_FAIL_MOVES: u64 = 4;
    pub(crate) const OQ_FAIL_SPAN: u64 = 5;

    /// What mallocs met, counted at `OURO_PAGE_EVENTS + event` ([`super::PageEvents`]).
    pub(crate) const OURO_EV_MISSED: u64 = 0;
    pub(crate) const OURO_EV_STRANDED: u64 = 1;
    pub(crate) const OURO_EV_OUT_OF_ROUNDS: u64 = 2;
    pub(crate) const OURO_EV_OOM_WITH_PAGES: u64 = 3;
    pub(crate) const OURO_EV_UNREGISTERED: u64 = 4;

    /// The chunk info bit of queue chunks; the low bits name the queue.
    pub(crate) const OURO_INFO_QUEUE: u32 = 0x8000_0000;
    /// The chunk info of a pooled chunk whose every word holds `OQ_EMPTY` (a drained queue
    /// chunk of a virtualized page queue): a queue chunk made from it needs no zeroing. Other
    /// pooled chunks have info 0.
    pub(crate) const OURO_INFO_EMPTIED: u32 = 0x4000_0000;

    /// VAQ pointer words (queues/vaq.wgsl): chunk + 1 in the bits of `VQ_CHUNK_MASK` under a lap
    /// tag, `VQ_DEAD` + 1 there for a lap without storage and `VQ_BUSY` + 1 for one whose
    /// storage is being installed; so a VAQ heap has fewer than `VQ_BUSY` chunks.
    pub(crate) const VQ_CHUNK_MASK: u32 = 0xff_ffff;
    pub(crate) const VQ_DEAD: u32 = 0xff_fffe;
    pub(crate) const VQ_BUSY: u32 = 0xff_fffd;

    /// The bulk semaphore's second word holds the batches in production (E) above the reserved
    /// count (R), which takes the low `BSEM_R_BITS` bits (sync/bulk_semaphore.wgsl).
    pub(crate) const BSEM_R_BITS: u32 = 20;
}

/// The failure causes above.
pub(crate) const OQ_FAIL_CAUSES: usize = 6;
