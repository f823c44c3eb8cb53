//! Registration rules: every rejected class, with its error kind.

use std::sync::Arc;

use serde_json::{Value, json};
use tinyagents_tools::ids::ToolName;
use tinyagents_tools::registry::{SchemaError, compile_schema};
use tinyagents_tools::spec::{Determinism, Effect, Idempotency, Reach};
use tinyagents_tools::spec::{InjectedKind, SpecError};
use tinyagents_tools::testkit::FakeTool;
use tinyagents_tools::*;

/// A tool with a configurable spec that answers with its arguments.
fn fixed(spec: ToolSpec) -> FakeTool {
    FakeTool::new(spec).answering_with(|_, args| Ok(ToolOutput::structured(args.clone())))
}

fn spec_with_schema(name: &str, schema: Value) -> ToolSpec {
    ToolSpec::builder(name, "A test tool.")
        .input_schema(ToolSchema::from_value(schema))
        .build()
        .expect("valid spec")
}

/// A registry of tools with these names, each taking an object with a
/// string `q`, in this order.
fn registry_of(names: &[&str]) -> ToolRegistry {
    let mut registry = ToolRegistry::new();
    for name in names {
        registry
            .register(fixed(spec_with_schema(name, object_schema())))
            .unwrap();
    }
    registry
}

fn object_schema() -> Value {
    json!({"type": "object", "properties": {"q": {"type": "string"}}, "additionalProperties": false})
}

#[test]
fn every_name_rule_is_refused_with_its_own_kind() {
    let long = "a".repeat(65);
    let cases: &[(&str, &str)] = &[
        ("", "empty"),
        ("search docs", "whitespace"),
        ("search\tdocs", "whitespace"),
        ("SearchDocs", "uppercase"),
        ("recherche_é", "non_ascii"),
        ("检索", "non_ascii"),
        (&long, "too_long"),
        ("search-docs", "invalid_char"),
        ("search.docs", "invalid_char"),
        ("search/docs", "invalid_char"),
        ("search:docs", "invalid_char"),
        ("1search", "leading_digit"),
    ];
    for (name, rule) in cases {
        let err = ToolSpec::builder(*name, "A test tool.")
            .build()
            .expect_err(name);
        match err {
            SpecError::InvalidName { reason, .. } => {
                assert_eq!(reason.rule(), *rule, "name {name:?}");
            }
            other => panic!("name {name:?}: unexpected error {other:?}"),
        }
        assert!(ToolName::new(name).is_err(), "ToolName accepted {name:?}");
    }
}

#[test]
fn names_at_the_limits_are_accepted() {
    for name in ["a", "_private", "search_docs_v2", &"a".repeat(64)] {
        assert!(ToolName::new(name).is_ok(), "{name}");
    }
}

#[test]
fn a_duplicate_name_is_refused_and_the_first_tool_stays() {
    let mut registry = registry_of(&["lookup"]);
    let other = ToolSpec::builder("lookup", "A different tool with the same name.")
        .build()
        .unwrap();
    let err = registry.register(fixed(other)).unwrap_err();
    assert_eq!(
        err,
        RegistryError::Duplicate {
            name: "lookup".into()
        }
    );
    assert_eq!(err.rule(), "duplicate");
    assert_eq!(registry.len(), 1);
    assert_eq!(
        registry.get("lookup").unwrap().spec().description,
        "A test tool."
    );
}

#[test]
fn a_schema_whose_root_is_not_an_object_is_refused() {
    for schema in [
        json!({"type": "string"}),
        json!({"type": "array", "items": {}}),
        json!({"anyOf": [{"type": "object"}, {"type": "null"}]}),
        json!(true),
    ] {
        let mut registry = ToolRegistry::new();
        let err = registry
            .register(fixed(spec_with_schema("t", schema.clone())))
            .unwrap_err();
        assert_eq!(err.rule(), "schema_root_not_object", "{schema}");
    }
}

#[test]
fn a_schema_that_exposes_an_injected_argument_is_refused() {
    let spec = ToolSpec::builder("send_mail", "Send a mail.")
        .input_schema(ToolSchema::from_value(json!({
            "type": "object",
            "properties": {"to": {"type": "string"}, "api_key": {"type": "string"}},
            "additionalProperties": false
        })))
        .injected("api_key", "Secret<MailKey>", InjectedKind::Secret)
        .build()
        .unwrap();
    let err = ToolRegistry::<()>::new().register(fixed(spec)).unwrap_err();
    assert_eq!(
        err,
        RegistryError::SchemaExposesInjected {
            tool: "send_mail".into(),
            argument: "api_key".into()
        }
    );
}

#[test]
fn a_schema_that_does_not_compile_is_refused() {
    let schema = json!({"type": "object", "properties": {"q": {"type": "no-such-type"}}});
    let err = ToolRegistry::<()>::new()
        .register(fixed(spec_with_schema("t", schema)))
        .unwrap_err();
    assert_eq!(err.rule(), "invalid_schema");
    let RegistryError::InvalidSchema { tool, problem } = &err else {
        panic!("not an invalid schema: {err:?}");
    };
    assert_eq!(tool, "t");
    assert!(
        matches!(problem, SchemaError::Invalid { pointer, .. } if pointer == "/properties/q/type"),
        "{problem:?}"
    );
    let source = std::error::Error::source(&err).expect("the compiler's finding is the source");
    assert_eq!(source.to_string(), problem.to_string());
    assert!(
        err.to_string().starts_with(
            "tool `t`: the input schema is not valid JSON Schema at `/properties/q/type`"
        ),
        "{err}"
    );
}

#[test]
fn compile_schema_names_where_a_schema_breaks_json_schema() {
    let err = compile_schema(&json!({"type": "object", "required": 7})).unwrap_err();
    let SchemaError::Invalid { pointer, message } = &err else {
        panic!("not an invalid schema: {err:?}");
    };
    assert_eq!(pointer, "/required");
    assert!(message.contains('7'), "{message}");
    assert!(compile_schema(&json!({"type": "object"})).is_ok());
}

#[test]
fn compile_schema_refuses_a_reference_it_cannot_resolve_without_fetching_it() {
    for reference in ["https://example.invalid/remote.json", "#/$defs/missing"] {
        let err = compile_schema(&json!({"type": "object", "$ref": reference})).unwrap_err();
        assert!(
            matches!(err, SchemaError::Reference { .. }),
            "{reference}: {err:?}"
        );
        assert!(err.to_string().contains("unresolvable reference"), "{err}");
    }
}

#[test]
fn aliases_follow_the_provider_rule_and_never_collide() {
    let mut registry = registry_of(&["search_docs", "fetch"]);
    registry.add_alias("search_docs", "Search-Docs").unwrap();
    assert_eq!(
        registry
            .resolve("Search-Docs")
            .unwrap()
            .spec()
            .name
            .as_str(),
        "search_docs"
    );
    assert_eq!(registry.aliases_of("search_docs"), ["Search-Docs"]);
    // The alias is kept apart from the canonical names.
    assert!(registry.get("Search-Docs").is_none());

    let refused = [
        ("fetch", "Search-Docs", "duplicate"),
        ("fetch", "search_docs", "duplicate"),
        ("fetch", "fetch page", "whitespace"),
        ("fetch", "fetch.page", "invalid_char"),
        ("fetch", "", "empty"),
        ("nope", "x", "unknown_tool"),
    ];
    for (tool, alias, rule) in refused {
        let error = registry.add_alias(tool, alias).unwrap_err();
        assert_eq!(error.rule(), rule, "{tool} as {alias:?}");
    }
    // A tool named like an existing alias is a duplicate too.
    let err = registry
        .register(fixed(spec_with_schema("search_docs", object_schema())))
        .unwrap_err();
    assert_eq!(err.rule(), "duplicate");
}

#[test]
fn iteration_follows_registration_order() {
    let registry = registry_of(&["zeta", "alpha", "mid"]);
    assert_eq!(
        registry.names().collect::<Vec<_>>(),
        ["zeta", "alpha", "mid"]
    );
    let specs: Vec<&str> = registry.iter().map(|t| t.spec().name.as_str()).collect();
    assert_eq!(specs, ["zeta", "alpha", "mid"]);
}

#[test]
fn the_compiled_validator_refuses_unknown_keys_and_accepts_good_arguments() {
    let registry = registry_of(&["lookup"]);
    let schema = &registry.get("lookup").unwrap().spec().input_schema;
    let validator = compile_schema(schema.as_value()).unwrap();
    assert!(validator.is_valid(&json!({"q": "rust"})));
    assert!(!validator.is_valid(&json!({"q": "rust", "api_key": "forged"})));
    assert!(!validator.is_valid(&json!({"q": 3})));
}

#[test]
fn registration_never_panics_on_hostile_schemas() {
    let hostile = [
        json!({"type": "object", "$ref": "#/$defs/missing"}),
        json!({"type": "object", "$ref": "https://example.invalid/remote.json"}),
        json!({"type": "object", "properties": {"a": {"pattern": "(unclosed"}}}),
        json!({"type": "object", "required": 7}),
        json!({"type": "object", "properties": []}),
        json!({"type": ["object", "null"]}),
    ];
    for (i, schema) in hostile.into_iter().enumerate() {
        let mut registry = ToolRegistry::<()>::new();
        let name = format!("t{i}");
        // Either outcome is fine; a panic is not.
        let _ = registry.register(fixed(spec_with_schema(&name, schema)));
    }
}

#[test]
fn a_retry_policy_on_a_non_idempotent_tool_is_refused_when_the_spec_is_built() {
    let err = ToolSpec::builder("charge_card", "Charge a card.")
        .retry(RetryPolicy::attempts(
            3,
            std::time::Duration::from_millis(10),
        ))
        .build()
        .unwrap_err();
    assert_eq!(
        err,
        SpecError::RetryWithoutIdempotency("charge_card".into())
    );
    let ok = ToolSpec::builder("get_rate", "Read an exchange rate.")
        .safety(ToolSafety::pure())
        .retry(RetryPolicy::attempts(
            3,
            std::time::Duration::from_millis(10),
        ))
        .build();
    assert!(ok.is_ok());
}

#[test]
fn an_undeclared_tool_gets_the_conservative_safety_profile() {
    let spec = ToolSpec::builder("do_thing", "Do a thing.")
        .build()
        .unwrap();
    assert_eq!(spec.safety.effect, Effect::Mutating);
    assert_eq!(spec.safety.idempotency, Idempotency::NotIdempotent);
    assert_eq!(spec.safety.reach, Reach::Networked);
    assert_eq!(spec.safety.determinism, Determinism::NonDeterministic);
    assert!(spec.safety.redaction.secrets);
    assert!(!spec.retry.retries());
}

#[tokio::test]
async fn a_hand_written_tool_registers_and_runs_as_a_shared_trait_object() {
    let tool: Arc<dyn Tool> = Arc::new(fixed(spec_with_schema("lookup", object_schema())));
    let mut registry = ToolRegistry::new();
    registry.register(Arc::clone(&tool)).unwrap();
    let registered = registry.get("lookup").unwrap();
    let runtime = ToolRuntime::new(RunContext::empty(), "call-1", "lookup");
    let out = registered
        .tool()
        .call(&(), &runtime, json!({"q": "rust"}))
        .await
        .unwrap();
    assert_eq!(out.structured, Some(json!({"q": "rust"})));
    // The spec is the same object every time: built once, never per call.
    assert!(std::ptr::eq(tool.spec(), registered.spec()));
}
