//! Summary bitmaps (`shaders/core/summary_bitmap.wgsl`): where their layers lie in
//! heap_meta, and the generated `sb_layer_base(t, j)` that the shaders read them through.

use std::fmt::Write as _;

/// The first word of each layer of a summary bitmap over `indices` indices (layer 0 a bit
/// per index, layer `j + 1` a bit per word of layer `j`), up to the layer where a range of
/// `2^max_shift` indices fits in part of one word; placed from `*next`, which moves past them.
pub(crate) fn plan_layers(next: &mut u64, indices: u64, max_shift: u32) -> Vec<u64> {
    (0..=max_shift / 5)
        .map(|j| {
            let base = *next;
            *next += ((indices.max(1) - 1) >> (5 * j + 5)) + 1;
            base
        })
        .collect()
}

/// `sb_layer_base(t, j)`: bitmap `t`'s layer `j` is at `bitmaps[t][j]`.
pub(crate) fn layer_base_wgsl(s: &mut String, bitmaps: &[&[u64]]) {
    let _ = writeln!(
        s,
        "fn sb_layer_base(t: u32, j: u32) -> u32 {{\n    switch t * 8u + j {{"
    );
    for (t, layers) in bitmaps.iter().enumerate() {
        for (j, base) in layers.iter().enumerate() {
            let _ = writeln!(s, "        case {}u: {{ return {base}u; }}", t * 8 + j);
        }
    }
    let _ = writeln!(s, "        default: {{ return 0u; }}\n    }}\n}}");
}
