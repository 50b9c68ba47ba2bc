//! The published reference numbers (the CUDA peers on an NVIDIA H200, median of
//! 5 rounds on an 8 GiB heap) and the comparison of a run against them, as Markdown.

use std::fmt::Write as _;

use super::{Record, Report};

/// Allocators in the reference tables, in column order.
const ALLOCATORS: [&str; 6] = [
    "CUDA malloc",
    "Ouroboros P-S",
    "Ouroboros P-VA",
    "Ouroboros P-VL",
    "Ouroboros C-S",
    "Gallatin",
];

/// (threads, size, [(malloc ms, free ms) per allocator]); None where not measured.
type Row = (u32, u32, [Option<(f64, f64)>; 6]);

/// The survey protocol (each round frees what the last allocated).
#[rustfmt::skip]
const SURVEY: [Row; 6] = [
    (10_000, 16, [Some((1.121, 2.692)), Some((0.0088, 0.0173)), Some((0.0102, 0.0185)), Some((0.0174, 0.0235)), Some((0.0672, 0.0164)), Some((0.0098, 0.0085))]),
    (100_000, 16, [Some((10.24, 17.37)), Some((0.0163, 0.0911)), Some((0.0213, 0.0938)), Some((0.1001, 0.2894)), Some((1.147, 0.0850)), Some((0.0254, 0.0103))]),
    (100_000, 1024, [Some((1794.0, 242.4)), Some((0.0142, 0.0891)), Some((0.0217, 0.0934)), Some((0.1107, 0.2986)), Some((22.93, 0.1184)), Some((0.1781, 0.0166))]),
    (100_000, 8192, [Some((60.57, 43.41)), Some((0.0115, 0.0885)), Some((0.0186, 0.1010)), Some((0.0930, 0.2985)), Some((172.4, 0.2888)), Some((0.6354, 0.0152))]),
    (1_000_000, 16, [Some((273.8, 128.2)), Some((0.1118, 0.9139)), Some((0.1291, 0.8515)), Some((0.9433, 7.914)), Some((16.48, 0.7897)), Some((0.0848, 0.0357))]),
    (1_000_000, 4096, [None, Some((0.0840, 0.8913)), Some((0.1072, 0.9186)), Some((0.7035, 9.762)), Some((1517.0, 2.195)), Some((3.618, 0.0224))]),
];

/// Accumulate mode (no free; malloc ms only, the free slot unused).
#[rustfmt::skip]
const ACCUMULATE: [Row; 6] = [
    (10_000, 16, [Some((6.262, 0.0)), Some((0.4135, 0.0)), Some((0.9007, 0.0)), None, Some((0.1299, 0.0)), Some((0.0086, 0.0))]),
    (100_000, 16, [Some((214.0, 0.0)), Some((2.995, 0.0)), Some((3.299, 0.0)), None, Some((2.524, 0.0)), Some((0.0233, 0.0))]),
    (100_000, 1024, [None, Some((18.05, 0.0)), Some((18.18, 0.0)), None, Some((24.44, 0.0)), Some((0.1339, 0.0))]),
    (100_000, 8192, [None, Some((113.8, 0.0)), Some((110.9, 0.0)), None, Some((170.5, 0.0)), Some((0.6088, 0.0))]),
    (1_000_000, 16, [Some((4198.0, 0.0)), Some((26.82, 0.0)), Some((35.56, 0.0)), None, Some((57.75, 0.0)), Some((0.0661, 0.0))]),
    (1_000_000, 256, [None, None, None, None, None, Some((121.9, 0.0))]),
];

/// An operation of a table: its name, the record's time, the reference's time.
type Op = (
    &'static str,
    fn(&Record) -> Option<f64>,
    fn((f64, f64)) -> f64,
);

fn find<'a>(report: &'a Report, test: &str, threads: u32, size: u32) -> Vec<&'a Record> {
    report
        .results
        .iter()
        .filter(|r| r.test == test && r.threads == threads && r.size == size && r.size_hi.is_none())
        .collect()
}

fn best_by<'a>(records: &[&'a Record], key: impl Fn(&Record) -> Option<f64>) -> Option<&'a Record> {
    records
        .iter()
        .filter(|r| r.strategy != "bump" && !r.failed)
        .filter(|r| key(r).is_some())
        .min_by(|a, b| key(a).unwrap().total_cmp(&key(b).unwrap()))
        .copied()
}

fn ms(v: Option<f64>) -> String {
    v.map_or("–".into(), |v| format!("{v:.4}"))
}

fn best_reference(row: &Row, pick: impl Fn((f64, f64)) -> f64) -> Option<(f64, &'static str)> {
    row.2
        .iter()
        .zip(ALLOCATORS)
        .filter_map(|(v, name)| v.map(|v| (pick(v), name)))
        .min_by(|a, b| a.0.total_cmp(&b.0))
}

/// Markdown tables: for each reference cell, our best strategy (fastest without failures),
/// the bump allocator of the same run, and the best reference allocator, malloc and free.
pub fn comparison(report: &Report) -> String {
    let mut s = String::new();
    for (title, test, rows, with_free) in [
        (
            "Survey protocol (malloc, then free, per round)",
            "alloc",
            &SURVEY,
            true,
        ),
        (
            "Accumulate mode (no free; rounds stack up)",
            "accumulate",
            &ACCUMULATE,
            false,
        ),
    ] {
        let _ = writeln!(s, "### {title}\n");
        let _ = writeln!(
            s,
            "| threads × size | op | our best (strategy) | bump, same run | best reference (allocator) | ours / reference |"
        );
        let _ = writeln!(s, "|---|---|---|---|---|---|");
        for row in rows.iter() {
            let records = find(report, test, row.0, row.1);
            let ops: &[Op] = if with_free {
                &[
                    ("malloc", |r| r.malloc_ms, |v| v.0),
                    ("free", |r| r.free_ms, |v| v.1),
                ]
            } else {
                &[("malloc", |r| r.malloc_ms, |v| v.0)]
            };
            for &(op, key, pick) in ops {
                let ours = best_by(&records, key);
                let bump = records
                    .iter()
                    .find(|r| r.strategy == "bump")
                    .and_then(|r| key(r));
                let reference = best_reference(row, pick);
                let ratio = match (ours.and_then(key), reference) {
                    (Some(o), Some((r, _))) => format!("{:.2}", o / r),
                    _ => "–".into(),
                };
                let _ = writeln!(
                    s,
                    "| {} × {} B | {op} | {} | {} | {} | {ratio} |",
                    row.0,
                    row.1,
                    ours.map_or("–".into(), |r| {
                        // A cell cut by its budget says over how many rounds it is a median.
                        let cut = if r.rounds < report.rounds {
                            format!(", {} rounds", r.rounds)
                        } else {
                            String::new()
                        };
                        format!("{} ({}{cut})", ms(key(r)), r.strategy)
                    }),
                    ms(bump),
                    reference.map_or("–".into(), |(v, n)| format!("{v} ({n})")),
                );
            }
        }
        s.push('\n');
    }
    s += &super::slow::slow_cells_markdown(report);
    s
}
