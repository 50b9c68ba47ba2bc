//! Arguments that several subcommands share (`--adapter`, `--watchdog-secs`,
//! `--strategy`) and the value parsers of strategies, scenarios, tests and byte sizes.

use std::path::Path;
use std::time::Duration;

use gpu_heap::{AdapterDescription, Gpu, Strategy};
use gpu_heap_cli::bench::Test;
use gpu_heap_cli::conformance::Scenario;

// The shared argument structs carry `//` comments, not doc comments: clap would apply a
// struct's doc comment as the about text of each subcommand that flattens it.

// `--adapter`; `flatten` gives it its own meaning and help with `mut_arg`.
#[derive(clap::Args)]
pub struct AdapterArg {
    /// Use the adapter whose name contains this text.
    #[arg(long)]
    pub adapter: Option<String>,
}

impl AdapterArg {
    /// Opens the adapter named by `--adapter`, or the default one.
    pub fn open(&self) -> gpu_heap_cli::Result<Gpu> {
        Ok(Gpu::open(self.adapter.as_deref())?)
    }

    /// Opens the adapter as `open` does and prints the `adapter NAME (BACKEND, DRIVER)` line
    /// that heads the output of the measuring subcommands.
    pub fn open_announced(&self) -> gpu_heap_cli::Result<(Gpu, AdapterDescription)> {
        let gpu = self.open()?;
        let adapter = gpu.describe();
        crate::say!(
            "adapter {} ({}, {})",
            adapter.name,
            adapter.backend,
            adapter.driver
        );
        Ok((gpu, adapter))
    }
}

// `--strategy` of `conformance` and `bench`: a comma-separated list, repeatable.
#[derive(clap::Args)]
pub struct StrategiesArg {
    /// Strategies to run, comma-separated (default: all).
    #[arg(long, value_parser = strategy_parser(), value_delimiter = ',')]
    pub strategy: Vec<Strategy>,
}

// `--watchdog-secs`, 60 s by default; `grow-bench`, `tas` and `utilisation` change it
// with `long_watchdog`.
#[derive(clap::Args)]
pub struct WatchdogArg {
    /// Seconds one dispatch may take before it counts as hung.
    #[arg(long, default_value_t = 60)]
    pub watchdog_secs: u64,
}

impl WatchdogArg {
    pub fn duration(&self) -> Duration {
        Duration::from_secs(self.watchdog_secs)
    }
}

/// For `mut_arg` on `watchdog_secs`: 120 s for the measurements whose dispatches run
/// longer.
pub fn long_watchdog(arg: clap::Arg) -> clap::Arg {
    arg.default_value("120")
}

/// A value parser over a list of names (shown by `--help` and in errors), mapped to the
/// item of that name.
use clap::builder::TypedValueParser as _;

fn named<T: Copy + Send + Sync + 'static>(
    all: &'static [T],
    name: fn(T) -> &'static str,
) -> impl clap::builder::TypedValueParser<Value = T> {
    clap::builder::PossibleValuesParser::new(all.iter().map(|&x| name(x))).map(move |s| {
        *all.iter()
            .find(|&&x| name(x) == s)
            .expect("the parser accepts only these names")
    })
}

pub fn strategy_parser() -> impl clap::builder::TypedValueParser<Value = Strategy> {
    named(Strategy::ALL, Strategy::name)
}

pub fn test_parser() -> impl clap::builder::TypedValueParser<Value = Test> {
    named(Test::ALL, Test::name)
}

pub fn scenario_parser() -> impl clap::builder::TypedValueParser<Value = Scenario> {
    named(Scenario::ALL, Scenario::name)
}

/// A size in bytes, greater than zero, with an optional suffix: binary (KiB, MiB, GiB, TiB;
/// K, M, G alone are binary too) or decimal (KB, MB, GB, TB), and an optional fraction:
/// 4096, 64KiB, 512MiB, 1.5GiB, 64MB.
pub fn parse_bytes(s: &str) -> Result<u64, String> {
    let split = s
        .find(|c: char| !c.is_ascii_digit() && c != '.')
        .unwrap_or(s.len());
    let (number, suffix) = s.split_at(split);
    let value: f64 = number.parse().map_err(|_| format!("not a size: \"{s}\""))?;
    let unit: f64 = match suffix.trim() {
        "" | "B" => 1.0,
        "K" | "KiB" => 1024.0,
        "M" | "MiB" => 1024.0 * 1024.0,
        "G" | "GiB" => 1024.0 * 1024.0 * 1024.0,
        "TiB" => 1024.0 * 1024.0 * 1024.0 * 1024.0,
        "KB" => 1e3,
        "MB" => 1e6,
        "GB" => 1e9,
        "TB" => 1e12,
        other => {
            return Err(format!(
                "unknown size suffix \"{other}\" (use KiB, MiB, GiB, TiB, or KB, MB, GB, TB)"
            ))
        }
    };
    let bytes = value * unit;
    if bytes.fract() != 0.0 {
        return Err(format!("\"{s}\" is not a whole number of bytes"));
    }
    if bytes < 1.0 {
        return Err(format!("a size must be greater than zero, not \"{s}\""));
    }
    if bytes > u64::MAX as f64 {
        return Err(format!("size \"{s}\" overflows"));
    }
    Ok(bytes as u64)
}

/// Writes `value` as JSON to `path`, or to standard output where `path` is `-`. A file is
/// written through a temporary one, so it holds a whole document even if the process is
/// killed while writing.
pub fn write_json(path: &Path, value: &impl serde::Serialize) -> gpu_heap_cli::Result<()> {
    let text = serde_json::to_string_pretty(value).expect("serialisable");
    if is_stdout(path) {
        println!("{text}");
        return Ok(());
    }
    let tmp = path.with_extension("json.tmp");
    std::fs::write(&tmp, text)
        .and_then(|()| std::fs::rename(&tmp, path))
        .map_err(|source| {
            let _ = std::fs::remove_file(&tmp);
            gpu_heap_cli::Error::Io {
                path: path.to_owned(),
                source,
            }
        })
}

/// Whether a `--json` path means standard output.
pub fn is_stdout(path: &Path) -> bool {
    path == Path::new("-")
}

/// Set when `--json -` sends the JSON to standard output: the text report then goes to
/// standard error ([`say!`](crate::say)), so that standard output is one JSON document.
pub static TEXT_TO_STDERR: std::sync::atomic::AtomicBool =
    std::sync::atomic::AtomicBool::new(false);

/// Whether the command line asks for `--json -`.
pub fn json_to_stdout(args: &[String]) -> bool {
    args.windows(2).any(|w| w[0] == "--json" && w[1] == "-") || args.iter().any(|a| a == "--json=-")
}

#[cfg(test)]
mod tests {
    use super::parse_bytes;

    #[test]
    fn sizes_binary_decimal_fractional_and_never_zero() {
        assert_eq!(parse_bytes("4096"), Ok(4096));
        assert_eq!(parse_bytes("64KiB"), Ok(64 << 10));
        assert_eq!(parse_bytes("512M"), Ok(512 << 20));
        assert_eq!(parse_bytes("1.5GiB"), Ok(3 << 29));
        assert_eq!(parse_bytes("64MB"), Ok(64_000_000));
        assert!(parse_bytes("0").is_err());
        assert!(parse_bytes("0MiB").is_err());
        assert!(parse_bytes("1.3B").is_err());
        assert!(parse_bytes("8XB").is_err());
        assert!(parse_bytes("").is_err());
    }
}
