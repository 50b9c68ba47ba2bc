//! Summary bitmaps (`shaders/core/summary_bitmap.wgsl`): where their layers lie in
//! heap_meta, the generated `sb_layer_base(t, j)` that the shaders read them through, and
//! the layers read back for the books.

use std::fmt::Write as _;

use crate::{GpuHeap, Result};

/// The first word of each layer of a summary bitmap over `indices` indices (layer 0 a bit
/// per index, layer `j + 1` a bit per word of layer `j`), up to the layer where a range of
/// `2^max_shift` indices fits in part of one word; placed from `*next`, which moves past them.
pub(crate) fn plan_layers(next: &mut u64, indices: u64, max_shift: u32) -> Vec<u64> {
    (0..=max_shift / 5)
        .map(|j| {
            let base = *next;
            *next += layer_words(indices, j);
            base
        })
        .collect()
}

/// Words in layer `j` of a summary bitmap over `indices` indices.
fn layer_words(indices: u64, j: u32) -> u64 {
    ((indices.max(1) - 1) >> (5 * j + 5)) + 1
}

/// A summary bitmap's layers read back from heap_meta (layer 0 first), for the books.
pub(crate) struct Layers(Vec<Vec<u32>>);

impl Layers {
    /// Reads the layers at `bases` (plan_layers) of a bitmap over `indices` indices.
    pub(crate) fn read(heap: &GpuHeap, bases: &[u64], indices: u64) -> Result<Layers> {
        (bases.iter().zip(0..))
            .map(|(&base, j)| heap.read_meta(base, layer_words(indices, j)))
            .collect::<Result<_>>()
            .map(Layers)
    }

    /// Layer 0's words.
    pub(crate) fn words(&self) -> &[u32] {
        &self.0[0]
    }

    /// Whether index `i` is set.
    pub(crate) fn is_set(&self, i: u64) -> bool {
        self.0[0][(i / 32) as usize] >> (i % 32) & 1 == 1
    }

    /// Set indices that a descent from layer `top` cannot reach, in a bitmap whose ranges
    /// all have that top layer.
    pub(crate) fn unreachable(&self, top: u32) -> u64 {
        (self.words().iter().zip(0u64..))
            .filter(|&(&w, k)| w != 0 && !self.reachable(k * 32, top))
            .map(|(w, _)| w.count_ones() as u64)
            .sum()
    }

    /// Whether a descent from layer `top` reaches index `i`'s word: every summary bit above
    /// it, up to that layer, is set.
    pub(crate) fn reachable(&self, i: u64, top: u32) -> bool {
        (1..=top as usize).all(|j| {
            let k = i >> (5 * j);
            self.0[j][(k / 32) as usize] >> (k % 32) & 1 == 1
        })
    }
}

/// `sb_layer_base(t, j)`: bitmap `t`'s layer `j` is at `bitmaps[t][j]`. Every call site
/// names its bitmap with a constant, so once inlined the branch on `t` folds away and the
/// layer is a chain of selects on `j`, without branches: the shaders inline it at every
/// step of every set, repair and descent.
pub(crate) fn layer_base_wgsl(s: &mut String, bitmaps: &[&[u64]]) {
    let _ = writeln!(s, "fn sb_layer_base(t: u32, j: u32) -> u32 {{");
    for (t, layers) in bitmaps.iter().enumerate() {
        let mut chain = format!("{}u", layers.last().copied().unwrap_or(0));
        for (j, base) in layers.iter().enumerate().rev().skip(1) {
            chain = format!("select({chain}, {base}u, j == {j}u)");
        }
        let _ = writeln!(s, "    if (t == {t}u) {{\n        return {chain};\n    }}");
    }
    let _ = writeln!(s, "    return 0u;\n}}");
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 2^12 indices over three layers: index 100 (word 3) and index 3000 (word 93) set,
    /// the summaries above word 3 set, but layer 1's bit for word 93 clear (layer 2's for
    /// its layer-1 word 2 set).
    fn layers() -> Layers {
        let mut layer0 = vec![0u32; 128];
        layer0[100 / 32] |= 1 << (100 % 32);
        layer0[3000 / 32] |= 1 << (3000 % 32);
        let mut layer1 = vec![0u32; 4];
        layer1[0] |= 1 << 3;
        let layer2 = vec![0b101u32];
        Layers(vec![layer0, layer1, layer2])
    }

    #[test]
    fn a_clear_summary_hides_the_indices_under_it() {
        let l = layers();
        assert!(l.is_set(100) && l.is_set(3000) && !l.is_set(101));
        assert!(l.reachable(100, 2));
        assert!(!l.reachable(3000, 2));
        // Ranges whose top layer is 0 have no summaries: everything set is reachable.
        assert!(l.reachable(3000, 0));
        assert_eq!(l.unreachable(2), 1);
        assert_eq!(l.unreachable(0), 0);
    }

    #[test]
    fn layers_are_planned_one_after_another() {
        let mut next = 10;
        let bases = plan_layers(&mut next, 1 << 12, 12);
        assert_eq!(bases, vec![10, 10 + 128, 10 + 128 + 4]);
        assert_eq!(next, 10 + 128 + 4 + 1);
    }
}
