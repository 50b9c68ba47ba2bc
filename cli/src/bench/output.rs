//! Results as CSV and as SVG plots in the style of the survey's figures.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use plotters::prelude::*;

use super::{Record, Report, Test};
use crate::{Error, Result};

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> Error + '_ {
    move |source| Error::Io {
        path: path.to_owned(),
        source,
    }
}

/// One row of the CSV: the record with its nested values flattened.
#[derive(serde::Serialize)]
struct CsvRow<'a> {
    test: &'a str,
    strategy: &'a str,
    threads: u32,
    size: u32,
    size_hi: Option<u32>,
    malloc_ms: Option<f64>,
    malloc_ms_min: Option<f64>,
    malloc_ms_max: Option<f64>,
    free_ms: Option<f64>,
    free_ms_min: Option<f64>,
    free_ms_max: Option<f64>,
    out_of_memory: u64,
    contention: u64,
    invalid_request: u64,
    invalid_free: u64,
    corrupted: u64,
    failed: bool,
    rounds: u32,
    /// `key=value` pairs of the test-specific results, `;`-separated.
    extra: String,
    note: &'a str,
}

/// Writes every record as one CSV row.
pub fn write_csv(report: &Report, path: &Path) -> Result<()> {
    let mut w = csv::Writer::from_path(path).map_err(|e| csv_error(path, e))?;
    for r in &report.results {
        let extra: Vec<String> = r.extra.iter().map(|(k, v)| format!("{k}={v}")).collect();
        w.serialize(CsvRow {
            test: &r.test,
            strategy: &r.strategy,
            threads: r.threads,
            size: r.size,
            size_hi: r.size_hi,
            malloc_ms: r.malloc.map(|t| t.median),
            malloc_ms_min: r.malloc.map(|t| t.min),
            malloc_ms_max: r.malloc.map(|t| t.max),
            free_ms: r.free.map(|t| t.median),
            free_ms_min: r.free.map(|t| t.min),
            free_ms_max: r.free.map(|t| t.max),
            out_of_memory: r.failures.out_of_memory,
            contention: r.failures.contention,
            invalid_request: r.failures.invalid_request,
            invalid_free: r.failures.invalid_free,
            corrupted: r.corrupted,
            failed: r.failed,
            rounds: r.rounds,
            extra: extra.join(";"),
            note: r.note.as_deref().unwrap_or(""),
        })
        .map_err(|e| csv_error(path, e))?;
    }
    w.flush().map_err(io(path))
}

fn csv_error(path: &Path, e: csv::Error) -> Error {
    Error::Io {
        path: path.to_owned(),
        source: std::io::Error::other(e),
    }
}

/// One line of a plot: (x, y, failed) points.
struct Series {
    name: String,
    points: Vec<(f64, f64, bool)>,
}

/// A plot of one value of one test, one line per strategy (and baseline).
struct Figure {
    file: String,
    title: String,
    x_label: &'static str,
    y_label: &'static str,
    log_y: bool,
    series: Vec<Series>,
}

/// What a figure plots from each record.
type Value = fn(&Record) -> Option<f64>;

/// Builds one figure from the records of `test` that `keep` selects: x from `x`, one
/// series per strategy from `y`, and optionally a baseline series from `baseline` (the
/// same for every strategy, so the first strategy's value is used).
#[allow(clippy::too_many_arguments)]
fn figure(
    report: &Report,
    test: Test,
    keep: impl Fn(&Record) -> bool,
    file: String,
    title: String,
    x: (&'static str, fn(&Record) -> f64),
    y: (&'static str, Value),
    baseline: Option<(&str, Value)>,
    log_y: bool,
) -> Figure {
    let records: Vec<&Record> = report
        .results
        .iter()
        .filter(|r| r.test == test.name() && keep(r))
        .collect();
    let mut strategies: Vec<&str> = Vec::new();
    for r in &records {
        if !strategies.contains(&r.strategy.as_str()) {
            strategies.push(&r.strategy);
        }
    }
    let mut series: Vec<Series> = strategies
        .iter()
        .map(|s| Series {
            name: s.to_string(),
            points: records
                .iter()
                .filter(|r| r.strategy == *s)
                .filter_map(|r| y.1(r).map(|v| (x.1(r), v, r.failed)))
                .collect(),
        })
        .collect();
    if let (Some((name, value)), Some(first)) = (baseline, strategies.first()) {
        series.push(Series {
            name: name.to_string(),
            points: records
                .iter()
                .filter(|r| r.strategy == *first)
                .filter_map(|r| value(r).map(|v| (x.1(r), v, false)))
                .collect(),
        });
    }
    Figure {
        file,
        title,
        x_label: x.0,
        y_label: y.0,
        log_y,
        series,
    }
}

fn extra(key: &'static str) -> impl Fn(&Record) -> Option<f64> {
    move |r| r.extra.get(key).copied()
}

/// Writes the survey-style plots of every test in the report into `dir`; returns the files.
pub fn write_plots(report: &Report, dir: &Path) -> Result<Vec<PathBuf>> {
    std::fs::create_dir_all(dir).map_err(io(dir))?;
    let size: fn(&Record) -> f64 = |r| r.size as f64;
    let size_hi: fn(&Record) -> f64 = |r| r.size_hi.unwrap_or(r.size) as f64;
    let threads: fn(&Record) -> f64 = |r| r.threads as f64;
    let malloc: Value = |r| r.malloc_ms;
    let free: Value = |r| r.free_ms;
    let values = |test: &str, f: fn(&Record) -> u32| -> BTreeSet<u32> {
        report
            .results
            .iter()
            .filter(|r| r.test == test)
            .map(f)
            .collect()
    };
    let mut figures = Vec::new();
    for test in [Test::Alloc, Test::Subgroup] {
        for t in values(test.name(), |r| r.threads) {
            for (op, y) in [("malloc", malloc), ("free", free)] {
                figures.push(figure(
                    report,
                    test,
                    |r| r.threads == t,
                    format!("{}-{op}-{t}.svg", test.name()),
                    format!("{}: {op}, {t} threads", test.name()),
                    ("size (bytes)", size),
                    ("time (ms)", y),
                    None,
                    true,
                ));
            }
        }
    }
    for (op, y) in [("malloc", malloc), ("free", free)] {
        figures.push(figure(
            report,
            Test::Mixed,
            |_| true,
            format!("mixed-{op}.svg"),
            format!("mixed sizes in [4, hi]: {op}"),
            ("largest size hi (bytes)", size_hi),
            ("time (ms)", y),
            None,
            true,
        ));
        for s in values(Test::Scaling.name(), |r| r.size) {
            figures.push(figure(
                report,
                Test::Scaling,
                |r| r.size == s,
                format!("scaling-{op}-{s}.svg"),
                format!("scaling: {op} of {s} B"),
                ("threads", threads),
                ("time (ms)", y),
                None,
                true,
            ));
        }
    }
    for hi in values(Test::WorkGeneration.name(), |r| r.size_hi.unwrap_or(r.size)) {
        figures.push(figure(
            report,
            Test::WorkGeneration,
            |r| r.size_hi == Some(hi),
            format!("work-generation-{hi}.svg"),
            format!("work generation, 4-{hi} B per thread"),
            ("threads", threads),
            ("time (ms)", malloc),
            Some(("prefix-sum baseline", |r| {
                r.extra.get("baseline_total_ms").copied()
            })),
            true,
        ));
    }
    figures.push(figure(
        report,
        Test::Write,
        |_| true,
        "write.svg".into(),
        "write and read back each allocation".into(),
        ("size (bytes)", size),
        ("time (ms)", |r| r.extra.get("write_ms").copied()),
        Some(("contiguous buffer", |r| r.extra.get("baseline_ms").copied())),
        true,
    ));
    figures.push(figure(
        report,
        Test::Fragmentation,
        |_| true,
        "fragmentation.svg".into(),
        "address range of the live allocations, after rounds of free and malloc".into(),
        ("size (bytes)", size),
        ("range / ideal", |r| {
            Some(extra("range_bytes_after_rounds")(r)? / extra("ideal_bytes")(r)?)
        }),
        None,
        true,
    ));
    figures.push(figure(
        report,
        Test::OutOfMemory,
        |_| true,
        "out-of-memory.svg".into(),
        "out of memory: rounds reached / theoretical maximum".into(),
        ("size (bytes)", size),
        ("utilisation", |r| r.extra.get("utilisation").copied()),
        None,
        false,
    ));
    let mut written = Vec::new();
    for f in figures {
        if f.series.iter().all(|s| s.points.is_empty()) {
            continue;
        }
        let path = dir.join(&f.file);
        draw(&f, &path).map_err(|e| Error::Io {
            path: path.clone(),
            source: std::io::Error::other(e.to_string()),
        })?;
        written.push(path);
    }
    Ok(written)
}

/// Draws `f`: log2 x axis, log10 (or linear) y axis; failed points as crosses.
fn draw(f: &Figure, path: &Path) -> std::result::Result<(), Box<dyn std::error::Error>> {
    let tx = |x: f64| x.max(1e-12).log2();
    let ty = |y: f64| {
        if f.log_y {
            y.max(1e-6).log10()
        } else {
            y
        }
    };
    let points = f.series.iter().flat_map(|s| s.points.iter());
    let (mut x0, mut x1, mut y0, mut y1) = (f64::MAX, f64::MIN, f64::MAX, f64::MIN);
    for &(x, y, _) in points {
        x0 = x0.min(tx(x));
        x1 = x1.max(tx(x));
        y0 = y0.min(ty(y));
        y1 = y1.max(ty(y));
    }
    if !f.log_y {
        y0 = y0.min(0.0);
    }
    let pad_y = ((y1 - y0) * 0.08).max(0.05);
    let root = SVGBackend::new(path, (900, 560)).into_drawing_area();
    root.fill(&WHITE)?;
    let mut chart = ChartBuilder::on(&root)
        .caption(&f.title, ("sans-serif", 20))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(70)
        .build_cartesian_2d((x0 - 0.3)..(x1 + 0.3), (y0 - pad_y)..(y1 + pad_y))?;
    let log_y = f.log_y;
    chart
        .configure_mesh()
        .x_desc(f.x_label)
        .y_desc(f.y_label)
        .x_label_formatter(&|v| human(2f64.powf(*v)))
        .y_label_formatter(&|v| {
            if log_y {
                format!("{:.3}", 10f64.powf(*v))
            } else {
                format!("{v:.2}")
            }
        })
        .draw()?;
    for (i, s) in f.series.iter().enumerate() {
        let color = Palette99::pick(i).to_rgba();
        let line: Vec<(f64, f64)> = s.points.iter().map(|&(x, y, _)| (tx(x), ty(y))).collect();
        chart
            .draw_series(LineSeries::new(line, color.stroke_width(2)))?
            .label(s.name.clone())
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], color));
        chart.draw_series(s.points.iter().map(|&(x, y, failed)| {
            let at = (tx(x), ty(y));
            if failed {
                Cross::new(at, 6, BLACK.stroke_width(2)).into_dyn()
            } else {
                Circle::new(at, 3, color.filled()).into_dyn()
            }
        }))?;
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .position(SeriesLabelPosition::UpperLeft)
        .draw()?;
    root.draw(&Text::new(
        "x: a point with failures (NULLs or corrupted words)",
        (12, 540),
        ("sans-serif", 12),
    ))?;
    root.present()?;
    Ok(())
}

fn human(v: f64) -> String {
    let v = v.round();
    if v >= 1048576.0 && v % 1048576.0 == 0.0 {
        format!("{}M", v / 1048576.0)
    } else if v >= 1024.0 && v % 1024.0 == 0.0 {
        format!("{}Ki", v / 1024.0)
    } else {
        format!("{v}")
    }
}
