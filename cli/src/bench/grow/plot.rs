//! The grow benchmark's figure: time per step and peak memory, against the size.

use std::path::Path;

use plotters::prelude::*;

use super::{GrowReport, GrowStep};
use crate::{Error, Result};

/// Draws the report: time per step (left) and peak memory during each step (right),
/// against the size after the step.
pub fn plot(report: &GrowReport, path: &Path) -> Result<()> {
    draw(report, path).map_err(|e| Error::Io {
        path: path.to_owned(),
        source: std::io::Error::other(e.to_string()),
    })
}

type Series = (String, Vec<(f64, f64)>);

fn series(
    report: &GrowReport,
    label: impl Fn(&GrowStep) -> String,
    value: impl Fn(&GrowStep) -> Option<f64>,
) -> Vec<Series> {
    let mut names: Vec<String> = Vec::new();
    for r in &report.results {
        let name = label(r);
        if !names.contains(&name) && value(r).is_some() {
            names.push(name);
        }
    }
    names
        .into_iter()
        .map(|name| {
            let points = report
                .results
                .iter()
                .filter(|r| label(r) == name)
                .filter_map(|r| value(r).map(|v| ((r.to_bytes as f64).log2(), v.max(1e-4).log10())))
                .collect();
            (name, points)
        })
        .collect()
}

fn label(r: &GrowStep) -> String {
    match &r.strategy {
        Some(s) => format!("commit ({s}): step incl. first use"),
        None => "copy to a new buffer".into(),
    }
}

fn draw(report: &GrowReport, path: &Path) -> std::result::Result<(), Box<dyn std::error::Error>> {
    let root = SVGBackend::new(path, (1200, 520)).into_drawing_area();
    root.fill(&WHITE)?;
    let (title, body) = root.split_vertically(40);
    title.draw(&Text::new(
        format!(
            "Growing by doubling, {} to {} MiB: {} ({})",
            report.initial_bytes >> 20,
            report.max_bytes >> 20,
            report.adapter.name,
            report.date
        ),
        (12, 12),
        ("sans-serif", 18),
    ))?;
    let panels = body.split_evenly((1, 2));
    let mut times = series(report, label, |r| r.ms);
    times.extend(series(
        report,
        |r| match &r.strategy {
            Some(s) => format!("commit ({s}): grow_to alone"),
            None => String::new(),
        },
        |r| r.grow_ms,
    ));
    let figures = [
        ("time per doubling step (ms, median)", times),
        (
            "GPU memory held during the step (MiB)",
            series(report, label, |r| {
                r.ms.map(|_| r.peak_bytes as f64 / (1 << 20) as f64)
            }),
        ),
    ];
    for (panel, (y_label, data)) in panels.iter().zip(figures) {
        let all = data.iter().flat_map(|(_, p)| p.iter());
        let (mut x0, mut x1, mut y0, mut y1) = (f64::MAX, f64::MIN, f64::MAX, f64::MIN);
        for &(x, y) in all {
            x0 = x0.min(x);
            x1 = x1.max(x);
            y0 = y0.min(y);
            y1 = y1.max(y);
        }
        if x0 > x1 {
            continue;
        }
        let pad = ((y1 - y0) * 0.1).max(0.1);
        let mut chart = ChartBuilder::on(panel)
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(70)
            .build_cartesian_2d((x0 - 0.3)..(x1 + 0.3), (y0 - pad)..(y1 + pad))?;
        chart
            .configure_mesh()
            .x_labels((x1 - x0).round() as usize + 1)
            .x_desc("committed size after the step")
            .y_desc(y_label)
            .x_label_formatter(&|v| {
                let mib = 2f64.powf(*v) / (1 << 20) as f64;
                if mib >= 1024.0 {
                    format!("{}G", (mib / 1024.0).round())
                } else {
                    format!("{}M", mib.round())
                }
            })
            .y_label_formatter(&|v| format!("{:.3}", 10f64.powf(*v)))
            .draw()?;
        for (i, (name, points)) in data.into_iter().enumerate() {
            let color = Palette99::pick(i).to_rgba();
            chart
                .draw_series(LineSeries::new(points.clone(), color.stroke_width(2)))?
                .label(name)
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], color));
            chart.draw_series(points.iter().map(|&p| Circle::new(p, 3, color.filled())))?;
        }
        chart
            .configure_series_labels()
            .background_style(WHITE.mix(0.8))
            .border_style(BLACK)
            .position(SeriesLabelPosition::UpperLeft)
            .draw()?;
    }
    root.present()?;
    Ok(())
}
