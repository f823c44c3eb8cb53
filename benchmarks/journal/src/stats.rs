//! Medians and quartiles over rounds.

use serde_json::{Value, json};

/// The median and the first and third quartiles of a sample.
#[derive(Debug, Clone, Copy)]
pub struct Summary {
    pub median: f64,
    pub q1: f64,
    pub q3: f64,
}

impl Summary {
    /// The summary of `xs` (quantiles interpolated between neighbours).
    pub fn of(xs: &[f64]) -> Summary {
        let mut sorted = xs.to_vec();
        sorted.sort_by(f64::total_cmp);
        Summary {
            median: quantile(&sorted, 0.5),
            q1: quantile(&sorted, 0.25),
            q3: quantile(&sorted, 0.75),
        }
    }

    /// `{"median", "q1", "q3", "rounds": [...]}`, rounded to `places`.
    pub fn json(&self, xs: &[f64], places: i32) -> Value {
        json!({
            "median": round(self.median, places),
            "q1": round(self.q1, places),
            "q3": round(self.q3, places),
            "rounds": xs.iter().map(|x| round(*x, places)).collect::<Vec<_>>(),
        })
    }
}

fn quantile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let at = q * (sorted.len() - 1) as f64;
    let (lo, hi) = (at.floor() as usize, at.ceil() as usize);
    sorted[lo] + (sorted[hi] - sorted[lo]) * (at - lo as f64)
}

/// `x` rounded to `places` decimals.
pub fn round(x: f64, places: i32) -> f64 {
    let scale = 10f64.powi(places);
    (x * scale).round() / scale
}
