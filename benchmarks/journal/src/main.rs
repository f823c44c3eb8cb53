//! The call journal's cost, side by side in one run: a journaled call
//! against the same call unjournaled, and against a bare INSERT of the same
//! row into the same database (the floor for a durable call).
//!
//! ```sh
//! cargo run --release --manifest-path benchmarks/journal/Cargo.toml [-- --quick]
//! ```
//!
//! Options: `--quick` (a smaller budget), `--sqlite-only`,
//! `--postgres-only`, `--probe CONTENDER CALLS` (SQLite: set up, then one
//! sample of one contender, for `strace -c -f`; contenders:
//! journaled_batch8, journaled_lone, read_only_journaled_batch8,
//! read_only_journaled_lone, unjournaled_batch8, unjournaled_lone,
//! bare_insert). A table for people on stderr, the same figures as JSON
//! on stdout.

mod postgres;
mod sqlite;
mod stats;
mod tools;

use std::process::ExitCode;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::{Value, json};

struct Options {
    quick: bool,
    sqlite: bool,
    postgres: bool,
    probe: Option<(sqlite::Contender, usize)>,
}

fn parse() -> Result<Options, String> {
    let mut options = Options {
        quick: false,
        sqlite: true,
        postgres: true,
        probe: None,
    };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--quick" => options.quick = true,
            "--sqlite-only" => options.postgres = false,
            "--postgres-only" => options.sqlite = false,
            "--probe" => {
                let key = args.next().ok_or("--probe CONTENDER CALLS")?;
                let contender = sqlite::Contender::parse(&key).ok_or_else(|| {
                    let keys: Vec<_> = sqlite::ALL.iter().map(|c| c.key()).collect();
                    format!("unknown contender {key:?}; one of {}", keys.join(", "))
                })?;
                let calls = args
                    .next()
                    .and_then(|n| n.parse().ok())
                    .ok_or("--probe CONTENDER CALLS: CALLS is a number")?;
                options.probe = Some((contender, calls));
            }
            "-h" | "--help" => {
                return Err("options: --quick --sqlite-only --postgres-only \
                            --probe CONTENDER CALLS"
                    .to_owned());
            }
            other => return Err(format!("unknown option {other:?} (see --help)")),
        }
    }
    if !options.sqlite && !options.postgres {
        return Err("--sqlite-only and --postgres-only exclude each other".to_owned());
    }
    Ok(options)
}

#[tokio::main]
async fn main() -> ExitCode {
    let options = match parse() {
        Ok(options) => options,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    };
    match run(&options).await {
        Ok(value) => {
            println!(
                "{}",
                serde_json::to_string_pretty(&value).expect("JSON values serialize")
            );
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

async fn run(options: &Options) -> Result<Value, String> {
    if let Some((contender, calls)) = options.probe {
        return sqlite::probe(contender, calls).await;
    }
    let mut out = json!({
        "machine": machine(),
        "quick": options.quick,
        "at_unix_s": SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs()),
    });
    if options.sqlite {
        let budget = if options.quick {
            sqlite::Budget {
                rounds: 5,
                batched: 400,
                lone: 100,
                bare: 200,
                plain: 4_000,
            }
        } else {
            sqlite::Budget {
                rounds: 11,
                batched: 1_600,
                lone: 400,
                bare: 800,
                plain: 16_000,
            }
        };
        eprintln!("case 1: SQLite, {} rounds", budget.rounds);
        let report = sqlite::run(&budget).await?;
        eprintln!("{}", report.table);
        out["sqlite"] = report.json;
        out["sqlite"]["goal_met"] = json!(report.goal_met);
    }
    if options.postgres {
        let budget = if options.quick {
            postgres::Budget {
                window: Duration::from_secs(2),
                pairs: 2,
            }
        } else {
            postgres::Budget {
                window: Duration::from_secs(5),
                pairs: 4,
            }
        };
        eprintln!(
            "case 2: PostgreSQL, {} concurrent runs, {} window pairs",
            postgres::TASKS,
            budget.pairs
        );
        let report = postgres::run(&budget).await?;
        eprintln!("{}", report.table);
        out["postgres"] = report.json;
    }
    Ok(out)
}

/// The cores and the CPU model.
fn machine() -> Value {
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|info| {
            info.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, model)| model.trim().to_owned())
        })
        .unwrap_or_else(|| "unknown".to_owned());
    json!({
        "cores": std::thread::available_parallelism().map_or(0, |n| n.get()),
        "cpu": cpu,
    })
}
