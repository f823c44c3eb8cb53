//! Case 1: SQLite. A journaled call against the same call unjournaled and
//! against a bare INSERT of a row of the same size into the same file,
//! interleaved round by round.

mod bench;
mod report;

use std::time::Duration;

use serde_json::{Value, json};

use crate::tools;
use bench::Bench;
pub use report::Report;

/// What one sample times.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Contender {
    Journaled8,
    Journaled1,
    ReadOnly8,
    ReadOnly1,
    Plain8,
    Plain1,
    Bare,
}

use Contender::*;

/// Every contender, in the order of the tables.
pub const ALL: [Contender; 7] = [
    Journaled8, Journaled1, ReadOnly8, ReadOnly1, Plain8, Plain1, Bare,
];

/// The order of a round (reversed every other round): the bare insert
/// between the two journaled calls of the non-idempotent tool, so the
/// samples of each of the ratios that matter most are neighbours.
const ROUND: [Contender; 7] = [
    Plain8, Plain1, ReadOnly1, Journaled1, Bare, Journaled8, ReadOnly8,
];

impl Contender {
    pub fn key(self) -> &'static str {
        match self {
            Journaled8 => "journaled_batch8",
            Journaled1 => "journaled_lone",
            ReadOnly8 => "read_only_journaled_batch8",
            ReadOnly1 => "read_only_journaled_lone",
            Plain8 => "unjournaled_batch8",
            Plain1 => "unjournaled_lone",
            Bare => "bare_insert",
        }
    }

    fn label(self) -> &'static str {
        match self {
            Journaled8 => "journaled, batches of 8 (execute_batch)",
            Journaled1 => "journaled, lone calls (execute)",
            ReadOnly8 => "read-only tool journaled, batches of 8",
            ReadOnly1 => "read-only tool journaled, lone calls",
            Plain8 => "unjournaled, batches of 8",
            Plain1 => "unjournaled, lone calls",
            Bare => "bare INSERT, autocommit (the floor)",
        }
    }

    pub fn parse(key: &str) -> Option<Contender> {
        ALL.into_iter().find(|c| c.key() == key)
    }

    fn batch(self) -> usize {
        match self {
            Journaled8 | ReadOnly8 | Plain8 => 8,
            _ => 1,
        }
    }

    fn tool(self) -> &'static str {
        match self {
            ReadOnly8 | ReadOnly1 => tools::READS,
            _ => tools::WRITES,
        }
    }
}

/// How much to time: calls per sample.
pub struct Budget {
    pub rounds: usize,
    /// Journaled calls in batches of 8.
    pub batched: usize,
    /// Lone journaled calls.
    pub lone: usize,
    /// Bare inserts.
    pub bare: usize,
    /// Unjournaled calls.
    pub plain: usize,
}

impl Budget {
    fn calls(&self, c: Contender) -> usize {
        let calls = match c {
            Journaled8 | ReadOnly8 => self.batched,
            Journaled1 | ReadOnly1 => self.lone,
            Bare => self.bare,
            Plain8 | Plain1 => self.plain,
        };
        calls / c.batch() * c.batch()
    }
}

/// Runs every contender `budget.rounds` times, interleaved.
pub async fn run(budget: &Budget) -> Result<Report, String> {
    let mut bench = Bench::open().await?;
    // Warm-up: every contender once, not counted.
    for c in ALL {
        bench.sample(c, budget.calls(c).min(64)).await?;
    }
    let mut us: Vec<Vec<f64>> = vec![Vec::new(); ALL.len()];
    for r in 0..budget.rounds {
        let mut order = ROUND;
        if r % 2 == 1 {
            order.reverse();
        }
        for c in order {
            let calls = budget.calls(c);
            let took = bench.sample(c, calls).await?;
            us[index(c)].push(took.as_secs_f64() * 1e6 / calls as f64);
        }
        eprint!(".");
    }
    eprintln!();
    let (found, expected) = bench.answered()?;
    if found != expected as i64 {
        return Err(format!(
            "the journal holds {found} answered calls, {expected} were made"
        ));
    }
    Ok(report::report(budget, &bench, &us, found))
}

fn index(c: Contender) -> usize {
    ALL.iter().position(|x| *x == c).expect("listed")
}

/// `--probe KEY CALLS`: the bench set up, then one sample of `CALLS` calls
/// of one contender (for counting syscalls: run it under `strace -c -f`
/// with 0 and with N calls).
pub async fn probe(c: Contender, calls: usize) -> Result<Value, String> {
    let mut bench = Bench::open().await?;
    let calls = calls / c.batch() * c.batch();
    let took = if calls > 0 {
        bench.sample(c, calls).await?
    } else {
        Duration::ZERO
    };
    let us = if calls > 0 {
        took.as_secs_f64() * 1e6 / calls as f64
    } else {
        0.0
    };
    Ok(json!({ "probe": c.key(), "calls": calls, "us_per_call": us }))
}
