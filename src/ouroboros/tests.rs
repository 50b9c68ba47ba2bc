//! Planning tests: classes, ring sizes, metadata and typed geometry errors.

use super::*;

fn params(bytes: u64, stride: u64) -> OuroPlanInput {
    OuroPlanInput {
        params: OuroborosParams::default(),
        bytes,
        segment_stride: stride,
        max_binding: 128 << 20,
        queue_kind: QueueKind::Standard,
        chunk_based: false,
        subgroups: false,
    }
}

#[test]
fn ten_base_classes_and_three_runs() {
    let g = OuroGeometry::plan(&params(1 << 20, 256 << 10)).unwrap();
    assert_eq!(g.chunks, 128);
    assert_eq!(g.base_classes, 10);
    assert_eq!(g.classes, 13);
    assert_eq!(g.max_alloc, 64 << 10);
    assert_eq!(g.capacity_for(64 << 10), 16);
    assert_eq!(g.capacity_for(16), 65536);
    assert_eq!(g.capacity_for(8192), 128);
    assert_eq!(g.granted_bytes(100), 128);
    assert_eq!(g.granted_bytes(9000), 16384);
}

#[test]
fn large_heaps_cap_small_class_rings_to_fit_a_binding() {
    let g = OuroGeometry::plan(&params(512 << 20, 128 << 20)).unwrap();
    assert!(g.meta_words * 4 <= 128 << 20);
    assert!(g.capacity_for(16) < (512 << 20) / 16);
    assert!(g.capacity_for(16) >= 1 << 20);
    assert_eq!(g.capacity_for(8192), 65536);
}

#[test]
fn virtual_array_queues_take_little_metadata() {
    let mut p = params(512 << 20, 128 << 20);
    p.queue_kind = QueueKind::VirtualArray;
    let g = OuroGeometry::plan(&p).unwrap();
    assert_eq!(g.vaq.len(), 10);
    assert_eq!(g.vaq[0].1, 32768); // 2 x 32 Mi pages / 2048 per queue chunk
    assert!(g.meta_words * 4 < 16 << 20);
    assert!(g.capacity_for(16) > (500 << 20) / 16);
}

#[test]
fn virtualized_classes_hold_every_chunk_but_the_queue_reserve() {
    // 8 MiB of 8 KiB chunks: 1024 chunks of 512 blocks of 16 B.
    for chunk_based in [false, true] {
        for (kind, reserve) in [
            (QueueKind::Standard, 0),
            (QueueKind::VirtualArray, 4),
            (QueueKind::VirtualLinked, 4 + 8),
        ] {
            let mut p = params(8 << 20, 8 << 20);
            p.queue_kind = kind;
            p.chunk_based = chunk_based;
            let g = OuroGeometry::plan(&p).unwrap();
            assert_eq!(g.chunks, 1024);
            assert_eq!(g.queue_reserve(), reserve, "{kind:?}");
            assert_eq!(g.capacity_for(16), (1024 - reserve) * 512, "{kind:?}");
            // Runs of the classes above a chunk are not held to the reserve.
            assert_eq!(g.capacity_for(16 << 10), 512, "{kind:?}");
        }
    }
}

#[test]
fn chunk_based_virtual_queues_plan_token_logs() {
    for kind in [QueueKind::VirtualArray, QueueKind::VirtualLinked] {
        let mut p = params(1 << 20, 256 << 10);
        p.queue_kind = kind;
        p.chunk_based = true;
        let g = OuroGeometry::plan(&p).unwrap();
        // Per-chunk queue-chunk words, token words, no rings for the chunk classes.
        assert!(g.qc_words > 0 && g.cb_meta > 0);
        assert!(g.rings[..10].iter().all(|r| r.1 == 0));
        assert_eq!(g.chunk_limit[0], 128);
        let slots = if kind == QueueKind::VirtualArray {
            4
        } else {
            1
        };
        assert!(g.vaq.iter().all(|v| v.1 == slots), "{kind:?}");
        let mut s = String::new();
        g.wgsl(&mut s);
        assert!(s.contains("const OURO_CB_SPAN: u32 = 256u;"));
        assert!(s.contains("const OURO_CB_MOVE: u32 = 128u;"));
        assert!(s.contains("OURO_QC_START"));
    }
}

#[test]
fn chunk_based_plans_an_index_range_per_class_between_the_chunk_words_and_the_rings() {
    let mut p = params(1 << 20, 256 << 10);
    p.chunk_based = true;
    let g = OuroGeometry::plan(&p).unwrap();
    // 128 chunks: a range of 2^7 indices per class, 10 classes in layer 0 (40 words), their
    // summaries in layer 1 (2 words), which is the top for a range of 2^7.
    assert_eq!(g.cb_index_shift(), 7);
    let index_start = g.cb_meta + (3 + g.cb_words) * g.chunks as u64;
    assert_eq!(g.cb_index, vec![index_start, index_start + 40]);
    assert_eq!(g.rings[0].0, index_start + 42);
    let mut s = String::new();
    g.wgsl(&mut s);
    assert!(s.contains("const OURO_CB_INDEX_SHIFT: u32 = 7u;"));
    let layers = format!("select({}u, {index_start}u, j == 0u)", index_start + 40);
    assert!(s.contains(&layers), "{s}");
    // Page-based heaps plan none.
    let g = OuroGeometry::plan(&params(1 << 20, 256 << 10)).unwrap();
    assert!(g.cb_index.is_empty());
}

/// On linked queues a chunk-based heap records the queue chunk of each token, in a fourth
/// per-chunk array before the bitmasks (chunk_tokens.wgsl, ct_token_chunk).
#[test]
fn chunk_based_linked_queues_plan_the_tokens_queue_chunks_before_the_bitmasks() {
    let mut p = params(1 << 20, 256 << 10);
    p.chunk_based = true;
    p.queue_kind = QueueKind::VirtualLinked;
    let g = OuroGeometry::plan(&p).unwrap();
    let chunks = g.chunks as u64;
    let mut s = String::new();
    g.wgsl(&mut s);
    let qc = format!("const OURO_CB_QC: u32 = {}u;", g.cb_meta + 3 * chunks);
    let bits = format!("const OURO_CB_BITS: u32 = {}u;", g.cb_meta + 4 * chunks);
    assert!(s.contains(&qc) && s.contains(&bits), "{s}");
    assert_eq!(g.cb_index[0], g.cb_meta + (4 + g.cb_words) * chunks);
}

#[test]
fn bad_geometry_is_typed() {
    let mut p = params(1 << 20, 256 << 10);
    p.params.chunk_size = 3000;
    assert!(matches!(
        OuroGeometry::plan(&p),
        Err(Error::InvalidConfig(_))
    ));
    let mut p = params(1 << 20, 256 << 10);
    p.params.min_page_size = 8;
    assert!(matches!(
        OuroGeometry::plan(&p),
        Err(Error::InvalidConfig(_))
    ));
    let mut p = params(1 << 20, 256 << 10);
    p.params.min_page_size = 16384;
    assert!(matches!(
        OuroGeometry::plan(&p),
        Err(Error::InvalidConfig(_))
    ));
    assert!(matches!(
        OuroGeometry::plan(&params(4096, 4096)),
        Err(Error::InvalidConfig(_))
    ));
}
