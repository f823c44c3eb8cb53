//! Case 3: the declarations of 1,000 registered tools, as sent to a model:
//! ours for OpenAI strict (first time and cached) against rmcp's
//! `tools/list` answer.
//!
//! OpenAI Responses is the target: Chat Completions takes at most 128 tools
//! per request, so an export of 1,000 for Chat would (rightly) leave 872
//! out. Strict mode is on (the default).

use tinyagents_tools::providers::{ExportCache, ExportTarget, OpenAiOptions, export_declarations};

use crate::contenders::{ours, rmcp};
use crate::harness::{Budget, measure_runs, measure_sync};
use crate::report::{Report, Unit};

/// The number of tools.
pub const TOOLS: usize = 1_000;

/// The medians the ratios need (ns).
#[derive(Debug, Default, Clone, Copy)]
pub struct Declarations {
    /// Ours, cached: the declarations of every tool.
    pub ours_cached: f64,
    /// Ours, cached, plus the JSON text.
    pub ours_cached_json: f64,
    /// Ours, the registry's whole toolset cached.
    pub ours_toolset_cached: f64,
    /// Ours, the registry's whole toolset cached, plus its JSON text.
    pub ours_toolset_cached_json: f64,
    /// rmcp `list_all`.
    pub rmcp_list: f64,
    /// rmcp `list_all` plus the JSON text.
    pub rmcp_list_json: f64,
}

/// Runs case 3 and records it.
pub fn run(budget: Budget, runs: usize, report: &mut Report) -> Declarations {
    let mut out = Declarations::default();
    let target = ExportTarget::OpenAiResponses(OpenAiOptions { strict: true });
    let registry = ours::named_registry(TOOLS);

    let first = export_declarations(target, registry.specs());
    assert!(
        first.errors.is_empty(),
        "every tool exports: {:?}",
        first.errors
    );
    assert_eq!(first.declarations.len(), TOOLS);
    assert_eq!(
        first.declarations[0].json()["strict"],
        serde_json::json!(true)
    );

    let stats = measure_runs(runs, || {
        let cache = ExportCache::new();
        let exported = cache.export_declarations(target, registry.specs());
        assert_eq!(exported.declarations.len(), TOOLS);
        exported
    });
    report.stats(
        "declarations",
        "ours_openai_strict_first",
        "ours: OpenAI strict, 1,000 tools, first time (empty cache)",
        Unit::Us,
        stats,
    );

    let cache = ExportCache::new();
    cache.export_declarations(target, registry.specs());
    let stats = measure_sync(budget, || {
        cache.export_declarations(target, registry.specs())
    });
    out.ours_cached = stats.median_ns;
    report.stats(
        "declarations",
        "ours_openai_strict_cached",
        "ours: OpenAI strict, 1,000 tools, cached",
        Unit::Us,
        stats,
    );
    let hits = cache.stats().hits;
    assert!(hits >= TOOLS as u64, "the cache answered");

    // The whole toolset of a registry, kept per registry version and target:
    // what an agent loop that sends the same tools every turn uses.
    let toolset = cache.export_registry(target, &registry);
    assert_eq!(toolset.declarations.len(), TOOLS);
    let stats = measure_sync(budget, || cache.export_registry(target, &registry));
    out.ours_toolset_cached = stats.median_ns;
    report.stats(
        "declarations",
        "ours_openai_strict_toolset_cached",
        "ours: OpenAI strict, 1,000 tools, cached toolset (export_registry)",
        Unit::Us,
        stats,
    );
    let stats = measure_sync(budget, || {
        cache
            .export_registry(target, &registry)
            .request_tools_text()
    });
    out.ours_toolset_cached_json = stats.median_ns;
    report.stats(
        "declarations",
        "ours_openai_strict_toolset_cached_json",
        "ours: OpenAI strict, 1,000 tools, cached toolset + JSON text",
        Unit::Us,
        stats,
    );
    let stats = measure_sync(budget, || {
        let exported = cache.export_declarations(target, registry.specs());
        serde_json::to_string(&exported.declarations).expect("serializes")
    });
    out.ours_cached_json = stats.median_ns;
    report.stats(
        "declarations",
        "ours_openai_strict_cached_json",
        "ours: OpenAI strict, 1,000 tools, cached + JSON text",
        Unit::Us,
        stats,
    );

    let router = rmcp::router_of(TOOLS);
    assert_eq!(router.list_all().len(), TOOLS);
    let stats = measure_sync(budget, || router.list_all());
    out.rmcp_list = stats.median_ns;
    report.stats(
        "declarations",
        "rmcp_list_all",
        "rmcp: ToolRouter::list_all, 1,000 tools (clone + sort)",
        Unit::Us,
        stats,
    );
    let stats = measure_sync(budget, || rmcp::list_tools_json(&router));
    out.rmcp_list_json = stats.median_ns;
    report.stats(
        "declarations",
        "rmcp_list_json",
        "rmcp: list_all + JSON text, 1,000 tools",
        Unit::Us,
        stats,
    );

    let ours_text = serde_json::to_string(
        &cache
            .export_declarations(target, registry.specs())
            .declarations,
    )
    .expect("serializes");
    let rmcp_text = rmcp::list_tools_json(&router);
    report.value(
        "declarations",
        "ours_json_bytes",
        "ours: JSON text size of 1,000 declarations (bytes)",
        serde_json::json!(ours_text.len()),
    );
    report.value(
        "declarations",
        "rmcp_json_bytes",
        "rmcp: JSON text size of 1,000 tools (bytes)",
        serde_json::json!(rmcp_text.len()),
    );
    report.ratio(
        "rmcp_list_all_vs_ours_cached",
        "rmcp list_all / ours cached (speed-up)",
        out.rmcp_list,
        out.ours_cached,
    );
    report.ratio(
        "rmcp_list_all_vs_ours_toolset_cached",
        "rmcp list_all / ours cached toolset (speed-up)",
        out.rmcp_list,
        out.ours_toolset_cached,
    );
    report.ratio(
        "rmcp_list_json_vs_ours_toolset_cached_json",
        "rmcp list_all + JSON / ours cached toolset + JSON (speed-up)",
        out.rmcp_list_json,
        out.ours_toolset_cached_json,
    );
    report.ratio(
        "rmcp_list_json_vs_ours_cached_json",
        "rmcp list_all + JSON / ours cached + JSON (speed-up)",
        out.rmcp_list_json,
        out.ours_cached_json,
    );
    out
}

/// Exports 1,000 cached declarations and writes them as JSON text `n` times,
/// and nothing else, for a profiler.
pub fn profile_cached_json(n: u64) {
    let target = ExportTarget::OpenAiResponses(OpenAiOptions { strict: true });
    let registry = ours::named_registry(TOOLS);
    let cache = ExportCache::new();
    for _ in 0..n {
        let exported = cache.export_declarations(target, registry.specs());
        std::hint::black_box(serde_json::to_string(&exported.declarations).expect("serializes"));
    }
}

/// Lists rmcp's 1,000 tools as JSON text `n` times, and nothing else, for a
/// profiler.
pub fn profile_rmcp_listing(n: u64) {
    let router = rmcp::router_of(TOOLS);
    for _ in 0..n {
        std::hint::black_box(rmcp::list_tools_json(&router));
    }
}
