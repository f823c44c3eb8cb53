//! Case 4: registering 1,000 tools, schema compilation included; rmcp's
//! router construction for the same 1,000 tools beside it.

use tinyagents_tools::ToolRegistry;

use crate::contenders::{ours, rmcp};
use crate::harness::{Stats, measure_runs, quartiles};
use crate::report::{Report, Unit};

/// The number of tools.
pub const TOOLS: usize = 1_000;

/// Runs case 4 and records it.
/// Returns ours / rmcp, paired by round.
pub fn run(runs: usize, report: &mut Report) -> f64 {
    let stats = measure_runs(runs, || {
        let registry = ours::named_registry(TOOLS);
        assert_eq!(registry.len(), TOOLS);
        registry
    });
    report.stats(
        "registration",
        "ours_build_and_register_1000",
        "ours: build 1,000 specs (schemas) + register (compile)",
        Unit::Ms,
        stats,
    );

    // Every tool with schemas of its own shape: nothing compiled for one
    // tool can serve another.
    let distinct = (0..runs)
        .map(|_| register_only_with(ours::NamedAdd::distinct_shape))
        .collect();
    report.stats(
        "registration",
        "ours_register_1000_distinct_shapes",
        "ours: register 1,000 tools, every schema of its own shape",
        Unit::Ms,
        Stats::from_samples(distinct, 1),
    );

    // Ours (register prebuilt tools) and rmcp (build its router) in
    // alternating runs; the verdict is the median of the per-round ratios.
    let mut ours = Vec::with_capacity(runs);
    let mut theirs = Vec::with_capacity(runs);
    register_only();
    rmcp_router();
    for round in 0..runs {
        if round % 2 == 0 {
            ours.push(register_only());
            theirs.push(rmcp_router());
        } else {
            theirs.push(rmcp_router());
            ours.push(register_only());
        }
    }
    let ratios: Vec<f64> = ours.iter().zip(&theirs).map(|(o, r)| o / r).collect();
    let paired = Stats::from_samples(ratios.clone(), 1).median_ns;
    let spread = quartiles(ratios);
    report.stats(
        "registration",
        "ours_register_1000",
        "ours: register 1,000 prebuilt tools (validator compile)",
        Unit::Ms,
        Stats::from_samples(ours, 1),
    );
    report.stats(
        "registration",
        "rmcp_router_1000",
        "rmcp: build a ToolRouter of 1,000 routes (no validation)",
        Unit::Ms,
        Stats::from_samples(theirs, 1),
    );
    report.paired(
        "ours_register_1000_vs_rmcp_router_1000",
        "ours register 1,000 / rmcp router of 1,000, paired by round",
        paired,
    );
    report.quartiles(
        "ours_register_1000_vs_rmcp_router_1000_quartiles",
        "ours register / rmcp router: 1st and 3rd quartile over rounds",
        spread,
    );
    paired
}

/// Builds rmcp's router of 1,000 routes once; its wall time (ns).
fn rmcp_router() -> f64 {
    let started = std::time::Instant::now();
    let router = rmcp::router_of(TOOLS);
    let elapsed = started.elapsed().as_nanos() as f64;
    assert_eq!(router.list_all().len(), TOOLS);
    std::hint::black_box(router);
    elapsed
}

/// Registers 1,000 prebuilt tools once (the tools and their specs are built
/// before the clock starts); its wall time (ns).
fn register_only() -> f64 {
    register_only_with(ours::NamedAdd::new)
}

/// Registers 1,000 tools made by `make` (before the clock starts) once; its
/// wall time (ns).
fn register_only_with(make: fn(usize) -> ours::NamedAdd) -> f64 {
    let tools: Vec<_> = (0..TOOLS).map(make).collect();
    let started = std::time::Instant::now();
    let mut registry = ToolRegistry::new();
    for tool in tools {
        registry.register(tool).expect("registers");
    }
    let elapsed = started.elapsed().as_nanos() as f64;
    assert_eq!(registry.len(), TOOLS);
    std::hint::black_box(registry);
    elapsed
}

/// Registers 1,000 prebuilt tools `n` times, and nothing else, for a
/// profiler.
pub fn profile_register(n: u64) {
    for _ in 0..n {
        register_only();
    }
}

/// Builds rmcp's router of 1,000 routes `n` times, for a profiler.
pub fn profile_rmcp_router(n: u64) {
    for _ in 0..n {
        rmcp_router();
    }
}
