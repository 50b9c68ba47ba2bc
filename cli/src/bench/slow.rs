//! The cells that are far slower than bump, the speed reference, in the same run: a cell
//! like ouro-p-s accumulating 10k x 16 B at 75 times bump must not sit unnoticed in a table.

use super::{Record, Report};

/// How many times bump's time a cell may take before [`slow_cells`] lists it.
pub const SLOW_FACTOR: f64 = 10.0;

/// One pass of one cell that took more than [`SLOW_FACTOR`] times bump's.
#[derive(Clone, Debug, PartialEq)]
pub struct SlowCell {
    /// The test, strategy, thread count and size of the cell.
    pub test: String,
    pub strategy: String,
    pub threads: u32,
    pub size: u32,
    /// `"malloc"` or `"free"`.
    pub pass: &'static str,
    /// The cell's median time and bump's, in ms.
    pub ms: f64,
    pub bump_ms: f64,
}

impl std::fmt::Display for SlowCell {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} {} {} x {} B {}: {:.4} ms, {:.1}x bump",
            self.test,
            self.strategy,
            self.threads,
            self.size,
            self.pass,
            self.ms,
            self.ratio()
        )
    }
}

impl SlowCell {
    /// How many times bump's time the cell took.
    pub fn ratio(&self) -> f64 {
        self.ms / self.bump_ms
    }
}

/// Every malloc or free pass of a finished cell that took more than [`SLOW_FACTOR`] times
/// bump's in the same test at the same thread count and size, slowest first.
pub fn slow_cells(report: &Report) -> Vec<SlowCell> {
    let bump = |r: &Record| {
        report.results.iter().find(|b| {
            b.strategy == "bump"
                && !b.failed
                && (b.test.as_str(), b.threads, b.size, b.size_hi)
                    == (r.test.as_str(), r.threads, r.size, r.size_hi)
        })
    };
    let mut slow = Vec::new();
    for r in report.results.iter().filter(|r| r.strategy != "bump") {
        let Some(b) = bump(r) else { continue };
        let passes = [
            ("malloc", r.malloc_ms, b.malloc_ms),
            ("free", r.free_ms, b.free_ms),
        ];
        for (pass, ms, bump_ms) in passes {
            if let (Some(ms), Some(bump_ms)) = (ms, bump_ms) {
                if bump_ms > 0.0 && ms > SLOW_FACTOR * bump_ms {
                    slow.push(SlowCell {
                        test: r.test.clone(),
                        strategy: r.strategy.clone(),
                        threads: r.threads,
                        size: r.size,
                        pass,
                        ms,
                        bump_ms,
                    });
                }
            }
        }
    }
    slow.sort_by(|a, b| b.ratio().total_cmp(&a.ratio()));
    slow
}

/// How many of `slow` each strategy has, most first (ties by name): the line that says
/// where the slow cells are before the list of them.
pub fn slow_counts(slow: &[SlowCell]) -> Vec<(&str, usize)> {
    let mut counts: Vec<(&str, usize)> = Vec::new();
    for c in slow {
        match counts.iter_mut().find(|(s, _)| *s == c.strategy) {
            Some((_, n)) => *n += 1,
            None => counts.push((&c.strategy, 1)),
        }
    }
    counts.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    counts
}

/// `slow_counts` as one line: "175 passes over 10x bump (ouro-c-vl 35, ...)".
pub fn slow_summary(slow: &[SlowCell]) -> String {
    let counts: Vec<String> = slow_counts(slow)
        .iter()
        .map(|(s, n)| format!("{s} {n}"))
        .collect();
    let passes = if slow.len() == 1 { "pass" } else { "passes" };
    format!(
        "{} {passes} over {SLOW_FACTOR}x bump ({})",
        slow.len(),
        counts.join(", ")
    )
}

/// The slow cells as a Markdown section (empty when there are none).
pub fn slow_cells_markdown(report: &Report) -> String {
    let slow = slow_cells(report);
    if slow.is_empty() {
        return String::new();
    }
    let mut s = format!(
        "\n## Cells over {SLOW_FACTOR}x bump\n\n{}.\n\n| test | strategy | threads | size | pass | ms | bump ms | x bump |\n|---|---|---|---|---|---|---|---|\n",
        slow_summary(&slow)
    );
    for c in slow {
        s += &format!(
            "| {} | {} | {} | {} | {} | {:.4} | {:.4} | {:.1} |\n",
            c.test,
            c.strategy,
            c.threads,
            c.size,
            c.pass,
            c.ms,
            c.bump_ms,
            c.ratio()
        );
    }
    s
}
