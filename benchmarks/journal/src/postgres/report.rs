//! The case's table and JSON.

use std::fmt::Write as _;

use serde_json::{Value, json};

use super::{Budget, TASKS, Window};
use crate::stats::{Summary, round};

/// The case's figures: JSON, and the table for people.
pub struct Report {
    pub json: Value,
    pub table: String,
}

pub(super) fn report(
    budget: &Budget,
    calls: &[Window],
    inserts: &[Window],
    record: &str,
    settings: serde_json::Map<String, Value>,
    answered: i64,
) -> Report {
    let call_rates: Vec<f64> = calls.iter().map(Window::rate).collect();
    let insert_rates: Vec<f64> = inserts.iter().map(Window::rate).collect();
    let ratios: Vec<f64> = call_rates
        .iter()
        .zip(&insert_rates)
        .map(|(c, i)| c / i)
        .collect();
    let (c, i, r) = (
        Summary::of(&call_rates),
        Summary::of(&insert_rates),
        Summary::of(&ratios),
    );
    let mut table = String::new();
    let _ = writeln!(
        table,
        "PostgreSQL {} (synchronous_commit={}, fsync={}), {TASKS} concurrent tasks, \
         {} window pairs of {:.1} s; record {} bytes",
        settings["server_version"].as_str().unwrap_or("?"),
        settings["synchronous_commit"].as_str().unwrap_or("?"),
        settings["fsync"].as_str().unwrap_or("?"),
        budget.pairs,
        budget.window.as_secs_f64(),
        record.len(),
    );
    if settings["fsync"] == "off" {
        let _ = writeln!(
            table,
            "fsync=off: TempPostgres starts its server with -F, so no commit is flushed to disk; \
             set TINYAGENTS_TEST_POSTGRES_URL to a server of your own to time durable commits"
        );
    }
    let _ = writeln!(
        table,
        "{:<44} {:>10} {:>10} {:>10}",
        "contender", "per s", "q1", "q3"
    );
    let _ = writeln!(
        table,
        "{:<44} {:>10.0} {:>10.0} {:>10.0}",
        "journaled calls (16 runs)", c.median, c.q1, c.q3
    );
    let _ = writeln!(
        table,
        "{:<44} {:>10.0} {:>10.0} {:>10.0}",
        "plain INSERTs (16 connections, autocommit)", i.median, i.q1, i.q3
    );
    let _ = writeln!(
        table,
        "{:<44} {:>10.3} {:>10.3} {:>10.3}  (reported)",
        "journaled calls/s / inserts/s, paired", r.median, r.q1, r.q3
    );
    let json = json!({
        "settings": settings,
        "tasks": TASKS,
        "window_s": budget.window.as_secs_f64(),
        "pairs": budget.pairs,
        "record_bytes": record.len(),
        "journal_rows_answered": answered,
        "journaled_calls_per_s": c.json(&call_rates, 1),
        "inserts_per_s": i.json(&insert_rates, 1),
        "calls_per_s_vs_inserts_per_s": r.json(&ratios, 3),
        "calls_counted": calls.iter().map(|w| w.ops).sum::<u64>(),
        "inserts_counted": inserts.iter().map(|w| w.ops).sum::<u64>(),
        "window_elapsed_s": {
            "journaled": calls.iter().map(|w| round(w.elapsed.as_secs_f64(), 3)).collect::<Vec<_>>(),
            "inserts": inserts.iter().map(|w| round(w.elapsed.as_secs_f64(), 3)).collect::<Vec<_>>(),
        },
    });
    Report { json, table }
}
