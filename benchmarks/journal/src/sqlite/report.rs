//! The case's table and JSON.

use std::fmt::Write as _;

use serde_json::{Value, json};

use super::Contender::{self, *};
use super::bench::Bench;
use super::{ALL, Budget, index};
use crate::stats::Summary;

/// The case's figures: JSON, and the table for people.
pub struct Report {
    pub json: Value,
    pub table: String,
    pub goal_met: bool,
}

/// The ratios reported: (key, numerator, denominator, bound).
const RATIOS: [(&str, Contender, Contender, Option<f64>); 6] = [
    (
        "journaled_batch8_vs_bare_insert",
        Journaled8,
        Bare,
        Some(1.5),
    ),
    ("journaled_lone_vs_bare_insert", Journaled1, Bare, None),
    ("read_only_batch8_vs_bare_insert", ReadOnly8, Bare, None),
    ("read_only_lone_vs_bare_insert", ReadOnly1, Bare, None),
    (
        "journaled_batch8_vs_unjournaled_batch8",
        Journaled8,
        Plain8,
        None,
    ),
    (
        "journaled_lone_vs_unjournaled_lone",
        Journaled1,
        Plain1,
        None,
    ),
];

pub fn report(budget: &Budget, bench: &Bench, us: &[Vec<f64>], answered: i64) -> Report {
    let (mode, sync) = bench
        .pragmas()
        .unwrap_or_else(|e| (format!("unknown ({e})"), -1));
    let mut table = String::new();
    let _ = writeln!(
        table,
        "SQLite {} (journal_mode={}, synchronous={}), {} rounds; record {} bytes answered / {} received",
        rusqlite::version(),
        mode,
        synchronous_name(sync),
        budget.rounds,
        bench.record.len(),
        bench.received_len,
    );
    let _ = writeln!(
        table,
        "{:<44} {:>6} {:>10} {:>10} {:>10}",
        "contender", "calls", "µs/call", "q1", "q3"
    );
    let mut per_call = serde_json::Map::new();
    for c in ALL {
        let xs = &us[index(c)];
        let s = Summary::of(xs);
        let _ = writeln!(
            table,
            "{:<44} {:>6} {:>10.2} {:>10.2} {:>10.2}",
            c.label(),
            budget.calls(c),
            s.median,
            s.q1,
            s.q3
        );
        per_call.insert(c.key().to_owned(), s.json(xs, 2));
    }
    let _ = writeln!(
        table,
        "{:<44} {:>6} {:>10} {:>10} {:>10}",
        "ratio, paired by round", "", "median", "q1", "q3"
    );
    let mut ratios = serde_json::Map::new();
    let mut goal_met = true;
    for (key, num, den, bound) in RATIOS {
        let xs: Vec<f64> = us[index(num)]
            .iter()
            .zip(&us[index(den)])
            .map(|(n, d)| n / d)
            .collect();
        let s = Summary::of(&xs);
        let verdict = match bound {
            Some(b) if s.median <= b => format!("  goal <= {b}: met"),
            Some(b) => {
                goal_met = false;
                format!("  goal <= {b}: MISSED")
            }
            None => String::new(),
        };
        let _ = writeln!(
            table,
            "{:<44} {:>6} {:>10.3} {:>10.3} {:>10.3}{verdict}",
            key, "", s.median, s.q1, s.q3
        );
        let mut entry = s.json(&xs, 3);
        if let Some(b) = bound {
            entry["bound"] = json!(b);
            entry["met"] = json!(s.median <= b);
        }
        ratios.insert(key.to_owned(), entry);
    }
    let json = json!({
        "sqlite_version": rusqlite::version(),
        "journal_mode": mode,
        "synchronous": synchronous_name(sync),
        "file": bench.path.display().to_string(),
        "rounds": budget.rounds,
        "calls_per_sample": {
            "journaled_batch8": budget.batched,
            "journaled_lone": budget.lone,
            "bare_insert": budget.bare,
            "unjournaled": budget.plain,
        },
        "record_bytes": { "answered": bench.record.len(), "received": bench.received_len },
        "journal_rows_answered": answered,
        "us_per_call": per_call,
        "ratios": ratios,
    });
    Report {
        json,
        table,
        goal_met,
    }
}

/// `PRAGMA synchronous`'s number, named.
fn synchronous_name(level: i64) -> String {
    match level {
        0 => "OFF".to_owned(),
        1 => "NORMAL".to_owned(),
        2 => "FULL".to_owned(),
        3 => "EXTRA".to_owned(),
        other => other.to_string(),
    }
}
