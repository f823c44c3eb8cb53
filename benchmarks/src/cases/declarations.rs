//! Case 3: the declarations of 1,000 registered tools, as sent to a model:
//! ours for OpenAI strict (first time and cached) against rmcp's
//! `tools/list` answer.

use crate::contenders::rmcp;
use crate::harness::{Budget, measure_sync};
use crate::report::{Report, Unit};

/// The number of tools.
pub const TOOLS: usize = 1_000;

/// Runs rmcp's part of case 3 and returns its median (ns).
pub fn run_rmcp(budget: Budget, report: &mut Report) -> f64 {
    let router = rmcp::router_of(TOOLS);
    assert_eq!(router.list_all().len(), TOOLS);
    let stats = measure_sync(budget, || router.list_all());
    report.stats(
        "declarations",
        "rmcp_list_all",
        "rmcp: ToolRouter::list_all, 1,000 tools (clone + sort)",
        Unit::Us,
        stats,
    );
    let stats = measure_sync(budget, || rmcp::list_tools_json(&router));
    report.stats(
        "declarations",
        "rmcp_list_json",
        "rmcp: list_all + JSON text, 1,000 tools",
        Unit::Us,
        stats,
    );
    stats.median_ns
}
