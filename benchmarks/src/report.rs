//! The results of one run: every figure under a stable key, printed as one
//! JSON object (`--json`) and as a table.

use serde_json::{Map, Value, json};

use crate::harness::Stats;

/// Figures collected by the cases, section by section.
#[derive(Default)]
pub struct Report {
    sections: Map<String, Value>,
    table: Vec<String>,
}

impl Report {
    /// Records timing stats under `section.key`, with a table row.
    pub fn stats(&mut self, section: &str, key: &str, label: &str, unit: Unit, stats: Stats) {
        let d = unit.divisor();
        self.table.push(format!(
            "{section:<13} {label:<58} {:>12.3} {:>12.3} {:>12.3} {}",
            stats.median_ns / d,
            stats.min_ns / d,
            stats.max_ns / d,
            unit.name()
        ));
        self.section(section).insert(
            key.to_owned(),
            json!({
                "median_ns": round(stats.median_ns),
                "min_ns": round(stats.min_ns),
                "max_ns": round(stats.max_ns),
                "samples": stats.samples,
                "iters_per_sample": stats.iters,
            }),
        );
    }

    /// Records a ratio `numerator / denominator` of two medians.
    pub fn ratio(&mut self, key: &str, label: &str, numerator: f64, denominator: f64) -> f64 {
        let r = numerator / denominator;
        self.table
            .push(format!("{:<13} {label:<58} {r:>12.2} x", "ratio"));
        self.section("ratios")
            .insert(key.to_owned(), json!(round3(r)));
        r
    }

    /// Records ratios `numerator / denominator` of two medians, one per row
    /// `(key, label, numerator, denominator)`.
    pub fn ratios(&mut self, rows: &[(&str, &str, f64, f64)]) {
        for &(key, label, numerator, denominator) in rows {
            self.ratio(key, label, numerator, denominator);
        }
    }

    /// Records a ratio computed elsewhere (a median of paired ratios, for
    /// example) under `ratios.key`, rounded to three decimals.
    pub fn paired(&mut self, key: &str, label: &str, ratio: f64) {
        self.value("ratios", key, label, json!(round3(ratio)));
    }

    /// Records the first and third quartile of a paired ratio under
    /// `ratios.key`, each rounded to three decimals.
    pub fn quartiles(&mut self, key: &str, label: &str, (q1, q3): (f64, f64)) {
        self.value("ratios", key, label, json!([round3(q1), round3(q3)]));
    }

    /// Records values under `section`, one per row `(key, label, value)`.
    pub fn values<const N: usize>(&mut self, section: &str, rows: [(&str, &str, Value); N]) {
        for (key, label, value) in rows {
            self.value(section, key, label, value);
        }
    }

    /// Records any other value under `section.key`.
    pub fn value(&mut self, section: &str, key: &str, label: &str, value: Value) {
        self.table
            .push(format!("{section:<13} {label:<58} {value:>12}"));
        self.section(section).insert(key.to_owned(), value);
    }

    /// Records a target: its figure, the bound it must respect (`None` for
    /// a figure that is only reported) and whether it holds. A missing
    /// figure (a case that could not measure it here) holds no verdict.
    pub fn target(&mut self, key: &str, label: &str, figure: Option<f64>, bound: Option<Bound>) {
        let holds = match (figure, bound) {
            (Some(f), Some(b)) => Some(b.holds(f)),
            _ => None,
        };
        let verdict = match holds {
            Some(true) => "met",
            Some(false) => "MISSED",
            None => "reported",
        };
        let shown = figure.map_or("n/a".to_owned(), |f| format!("{f:.3}"));
        let bound_text = bound.map_or("none".to_owned(), |b| b.to_string());
        self.table.push(format!(
            "{:<13} {label:<58} {shown:>12} {bound_text:>12} {verdict:>12}",
            "target"
        ));
        self.section("targets").insert(
            key.to_owned(),
            json!({
                "label": label,
                "figure": figure.map(round3),
                "bound": bound.map(|b| b.to_string()),
                "holds": holds,
            }),
        );
    }

    fn section(&mut self, name: &str) -> &mut Map<String, Value> {
        self.sections
            .entry(name.to_owned())
            .or_insert_with(|| Value::Object(Map::new()))
            .as_object_mut()
            .expect("sections are objects")
    }

    /// The human-readable table.
    pub fn table(&self) -> String {
        let mut out = format!(
            "{:<13} {:<58} {:>12} {:>12} {:>12}\n",
            "section", "case", "median", "min", "max"
        );
        for row in &self.table {
            out.push_str(row);
            out.push('\n');
        }
        out
    }

    /// Every figure as one JSON object.
    pub fn into_json(self) -> Value {
        Value::Object(self.sections)
    }
}

/// The bound of a target.
#[derive(Debug, Clone, Copy)]
pub enum Bound {
    /// The figure must be at most this.
    AtMost(f64),
    /// The figure must be at least this.
    AtLeast(f64),
}

impl Bound {
    fn holds(self, figure: f64) -> bool {
        match self {
            Bound::AtMost(b) => figure <= b,
            Bound::AtLeast(b) => figure >= b,
        }
    }
}

impl std::fmt::Display for Bound {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Bound::AtMost(b) => write!(f, "<= {b}"),
            Bound::AtLeast(b) => write!(f, ">= {b}"),
        }
    }
}

/// The unit a row of the table is shown in (JSON is always nanoseconds).
#[derive(Debug, Clone, Copy)]
pub enum Unit {
    /// Nanoseconds.
    Ns,
    /// Microseconds.
    Us,
    /// Milliseconds.
    Ms,
}

impl Unit {
    fn divisor(self) -> f64 {
        match self {
            Unit::Ns => 1.0,
            Unit::Us => 1e3,
            Unit::Ms => 1e6,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Unit::Ns => "ns",
            Unit::Us => "us",
            Unit::Ms => "ms",
        }
    }
}

fn round(x: f64) -> f64 {
    (x * 10.0).round() / 10.0
}

fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}
