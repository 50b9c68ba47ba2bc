//! `cargo bench -p gpu-heap-cli --bench suite [-- --quick]`: the benchmark suite on the default adapter,
//! the same code as `gpu-heap bench`. Results go to target/bench/ as JSON, CSV and plots.

use std::path::Path;

use gpu_heap::Gpu;
use gpu_heap_cli::bench::{self, Options};

fn main() -> gpu_heap_cli::Result<()> {
    let quick = std::env::args().any(|a| a == "--quick");
    let options = if quick {
        Options::quick()
    } else {
        Options::full()
    };
    let gpu = Gpu::open(None)?;
    let report = bench::run(&gpu, &options, |p| {
        if let bench::Progress::Starting { done, total, what } = p {
            eprintln!("[{done}/{total}] {what}");
        }
    })?;
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/bench");
    std::fs::create_dir_all(&dir).map_err(|source| gpu_heap_cli::Error::Io {
        path: dir.clone(),
        source,
    })?;
    let json = dir.join("bench.json");
    std::fs::write(
        &json,
        serde_json::to_string_pretty(&report).expect("serialisable"),
    )
    .map_err(|source| gpu_heap_cli::Error::Io { path: json, source })?;
    bench::write_csv(&report, &dir.join("bench.csv"))?;
    bench::write_plots(&report, &dir.join("plots"))?;
    println!(
        "{} results on {} in {}",
        report.results.len(),
        report.adapter.name,
        dir.display()
    );
    Ok(())
}
