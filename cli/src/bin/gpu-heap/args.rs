//! Arguments that several subcommands share (`--adapter`, `--watchdog-secs`,
//! `--strategy`) and the value parsers of strategies, scenarios, tests and byte sizes.

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
        println!(
            "adapter {} ({}, {})",
            adapter.name, adapter.backend, adapter.driver
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

/// Bytes with an optional binary suffix: 4096, 64KiB, 512MiB, 8GiB.
pub fn parse_bytes(s: &str) -> Result<u64, String> {
    let split = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
    let (digits, suffix) = s.split_at(split);
    let value: u64 = digits.parse().map_err(|_| format!("not a size: \"{s}\""))?;
    let shift = match suffix.trim() {
        "" | "B" => 0,
        "K" | "KiB" => 10,
        "M" | "MiB" => 20,
        "G" | "GiB" => 30,
        other => {
            return Err(format!(
                "unknown size suffix \"{other}\" (use KiB, MiB or GiB)"
            ))
        }
    };
    value
        .checked_mul(1 << shift)
        .ok_or_else(|| format!("size \"{s}\" overflows"))
}
