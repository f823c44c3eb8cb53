//! Case 4: registering 1,000 tools, schema compilation included; rmcp's
//! router construction for the same 1,000 tools beside it.

use tinyagents_tools::ToolRegistry;

use crate::contenders::{ours, rmcp};
use crate::harness::{Stats, measure_runs};
use crate::report::{Report, Unit};

/// The number of tools.
pub const TOOLS: usize = 1_000;

/// Runs case 4 and records it.
pub fn run(runs: usize, report: &mut Report) {
    let stats = measure_runs(runs, || {
        let mut registry = ToolRegistry::new();
        for i in 0..TOOLS {
            registry
                .register(ours::NamedAdd::new(i))
                .expect("registers");
        }
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

    let register_only = register_only(runs);
    report.stats(
        "registration",
        "ours_register_1000",
        "ours: register 1,000 prebuilt tools (validator compile)",
        Unit::Ms,
        register_only,
    );

    let stats = measure_runs(runs, || {
        let router = rmcp::router_of(TOOLS);
        assert_eq!(router.list_all().len(), TOOLS);
        router
    });
    report.stats(
        "registration",
        "rmcp_router_1000",
        "rmcp: build a ToolRouter of 1,000 routes (no validation)",
        Unit::Ms,
        stats,
    );
}

/// Times `register` alone: the tools (and their specs) are built before the
/// clock starts.
fn register_only(runs: usize) -> Stats {
    let mut samples = Vec::with_capacity(runs);
    for _ in 0..runs {
        let tools: Vec<_> = (0..TOOLS).map(ours::NamedAdd::new).collect();
        let started = std::time::Instant::now();
        let mut registry = ToolRegistry::new();
        for tool in tools {
            registry.register(tool).expect("registers");
        }
        samples.push(started.elapsed().as_nanos() as f64);
        std::hint::black_box(registry);
    }
    Stats::from_samples(samples, 1)
}
