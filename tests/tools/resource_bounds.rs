//! Resource bounds on a spec: built, refused at zero, serialized only when
//! set.

use std::time::Duration;

use serde_json::json;
use tinyagents_tools::events::EventKind;
use tinyagents_tools::spec::SpecError;
use tinyagents_tools_tests::*;

#[test]
fn a_zero_bound_is_refused_when_the_spec_is_built() {
    for (builder, bound) in [
        (
            spec("t", json!({"type": "object"})).max_memory(0),
            "max_memory",
        ),
        (
            spec("t", json!({"type": "object"})).max_cpu(Duration::ZERO),
            "max_cpu",
        ),
        (spec("t", json!({"type": "object"})).fuel(0), "fuel"),
    ] {
        assert_eq!(
            builder.build().unwrap_err(),
            SpecError::ZeroBound {
                name: "t".into(),
                bound
            }
        );
    }
}

#[test]
fn bounds_are_serialized_only_when_set() {
    let plain = spec("t", json!({"type": "object"})).build().unwrap();
    assert!(plain.bounds.is_unlimited());
    assert!(
        serde_json::to_value(&plain)
            .unwrap()
            .get("bounds")
            .is_none()
    );

    let bounded = spec("t", json!({"type": "object"}))
        .max_memory(256 << 20)
        .max_cpu(Duration::from_millis(1500))
        .build()
        .unwrap();
    assert_eq!(bounded.bounds.max_cpu(), Some(Duration::from_millis(1500)));
    assert_eq!(
        serde_json::to_value(&bounded).unwrap()["bounds"],
        json!({"max_memory": 268435456, "max_cpu_ms": 1500, "fuel": null})
    );
}

#[tokio::test]
async fn an_unbounded_tool_starts_without_bounds_in_its_event() {
    let (_, recorder, exec) = recorded_echo();
    execute_once(&exec, call("c1", "echo", r#"{"text":"x"}"#)).await;
    let started = recorder
        .events()
        .into_iter()
        .find(|e| e.kind == EventKind::Started)
        .unwrap();
    assert_eq!(started.bounds, None);
    assert!(
        serde_json::to_value(&started)
            .unwrap()
            .get("bounds")
            .is_none()
    );
}

#[test]
fn the_mcp_declaration_carries_declared_bounds_in_its_meta_and_no_meta_without_them() {
    use tinyagents_tools::providers::{ExportTarget, export_declarations, mcp::BOUNDS_META_KEY};
    let bounded = spec("bounded", json!({"type": "object"}))
        .max_memory(256 << 20)
        .max_cpu(Duration::from_secs(2))
        .build()
        .unwrap();
    let plain = spec("plain", json!({"type": "object"})).build().unwrap();
    let exported = export_declarations(ExportTarget::Mcp, [&bounded, &plain]);
    let tools = exported.request_tools();
    assert_eq!(
        tools[0]["_meta"][BOUNDS_META_KEY],
        json!({"max_memory": 268_435_456u64, "max_cpu_ms": 2000, "fuel": null})
    );
    assert!(tools[1].get("_meta").is_none(), "{}", tools[1]);
}
