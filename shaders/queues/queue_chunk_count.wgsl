// A queue chunk's count of finished positions, shared by the linked-chunk queues
// (queues/vlq.wgsl) and the chunk-token logs (ouroboros/chunk_tokens.wgsl).
//
// State: OURO_QC_COUNT + c = A << 16 | B for queue chunk c: A positions finished by
// inserters (written, or found abandoned), B items in it not yet removed. A chunk is filled
// when A = OURO_QC_ITEMS and drained when, besides, B = 0; it moves no pointer before then.
// No loops.

// A finished position adds this (A is the high half).
const QC_ONE_FINISHED: u32 = 0x10000u;
// The count of a drained chunk.
const QC_DRAINED: u32 = OURO_QC_ITEMS * QC_ONE_FINISHED;

// Adds `add` to chunk c's count, or takes `sub` off it where `add` is zero, and returns the
// count after: the one atomic whose result says whether this call filled or drained it.
fn qc_count_change(c: u32, add: u32, sub: u32) -> u32 {
    if (add != 0u) {
        return atomicAdd(&heap_meta[OURO_QC_COUNT + c], add) + add;
    }
    return atomicSub(&heap_meta[OURO_QC_COUNT + c], sub) - sub;
}

fn qc_filled(count: u32) -> bool {
    return (count >> 16u) == OURO_QC_ITEMS;
}
