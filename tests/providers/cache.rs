//! The export cache: the second export of a tool does no schema work.

use std::sync::Arc;

use tinyagents_tools::providers::{
    AnthropicOptions, CacheStats, ExportCache, ExportTarget, OpenAiOptions, Provider,
};
use tinyagents_tools::{ToolSchema, ToolSpec};

use crate::corpus::corpus;

#[test]
fn the_second_export_of_every_tool_comes_from_the_cache() {
    let cache = ExportCache::new();
    let specs = corpus();
    let target = Provider::OpenAiChat.default_target();
    let first = cache.export_declarations(target, &specs);
    assert_eq!(cache.stats(), CacheStats { hits: 0, misses: 6 });
    let second = cache.export_declarations(target, &specs);
    assert_eq!(cache.stats(), CacheStats { hits: 6, misses: 6 });
    assert_eq!(first.declarations.len(), second.declarations.len());
    for (a, b) in first.declarations.iter().zip(&second.declarations) {
        assert!(
            Arc::ptr_eq(a, b),
            "a cached declaration is shared, not rebuilt"
        );
    }
    assert_eq!(first.errors, second.errors);
}

#[test]
fn each_provider_and_option_set_is_cached_apart() {
    let cache = ExportCache::new();
    let spec = &corpus()[4];
    for strict in [true, false] {
        let _ = cache.export(spec, ExportTarget::OpenAiChat(OpenAiOptions { strict }));
    }
    let _ = cache.export(spec, ExportTarget::Mcp);
    assert_eq!(cache.len(), 3);
    assert_eq!(cache.stats().misses, 3);
}

#[test]
fn anthropic_cache_marker_does_not_split_the_cache() {
    let cache = ExportCache::new();
    let specs = corpus();
    let plain = ExportTarget::Anthropic(AnthropicOptions::default());
    let marked = ExportTarget::Anthropic(AnthropicOptions {
        strict: false,
        cache_last: true,
    });
    let _ = cache.export_declarations(plain, &specs);
    let out = cache.export_declarations(marked, &specs);
    assert_eq!(cache.stats(), CacheStats { hits: 6, misses: 6 });
    let last = out.declarations.last().expect("declarations");
    assert_eq!(last.json()["cache_control"]["type"], "ephemeral");
}

#[test]
fn a_changed_spec_under_the_same_name_is_exported_again() {
    let cache = ExportCache::new();
    let target = ExportTarget::Mcp;
    let build = |description: &str| {
        ToolSpec::builder("lookup", description)
            .input_schema(ToolSchema::empty_object())
            .build()
            .expect("valid")
    };
    let old = cache.export(&build("Old text."), target).expect("exports");
    let new = cache.export(&build("New text."), target).expect("exports");
    assert_eq!(new.json()["description"], "New text.");
    assert!(!Arc::ptr_eq(&old, &new));
    assert_eq!(cache.stats().misses, 2);
}

#[test]
fn a_failed_export_is_cached_too() {
    let cache = ExportCache::new();
    let count_tags = &corpus()[2];
    let target = Provider::OpenAiChat.default_target();
    let first = cache.export(count_tags, target).unwrap_err();
    let second = cache.export(count_tags, target).unwrap_err();
    assert_eq!(first, second);
    assert_eq!(cache.stats(), CacheStats { hits: 1, misses: 1 });
}

/// A hand-written tool around a corpus spec, for registry-level exports.
struct Fixed(ToolSpec);

#[tinyagents_tools::async_trait]
impl tinyagents_tools::Tool for Fixed {
    fn spec(&self) -> &ToolSpec {
        &self.0
    }
    async fn call(
        &self,
        _: &(),
        _: &tinyagents_tools::ToolRuntime,
        _: serde_json::Value,
    ) -> Result<tinyagents_tools::ToolOutput, tinyagents_tools::ToolError> {
        Ok(tinyagents_tools::ToolOutput::empty())
    }
}

#[test]
fn a_registrys_toolset_is_exported_once_per_registry_state_and_target() {
    let cache = ExportCache::new();
    let target = Provider::Mcp.default_target();
    let mut specs = corpus();
    let last = specs.pop().unwrap();
    let mut registry = tinyagents_tools::ToolRegistry::new();
    for spec in specs {
        registry.register(Fixed(spec)).unwrap();
    }
    let first = cache.export_registry(target, &registry);
    let misses = cache.stats().misses;
    let second = cache.export_registry(target, &registry);
    assert!(Arc::ptr_eq(&first, &second), "the whole toolset is shared");
    assert_eq!(cache.stats().misses, misses, "no tool was exported again");
    assert_eq!(first.declarations.len(), registry.len());

    // A per-turn subset is its own toolset, in registration order.
    let mut names: Vec<String> = registry.names().map(str::to_owned).collect();
    names.reverse();
    names.truncate(2);
    let subset = cache.export_selected(target, &registry, &names);
    let exported: Vec<&str> = subset
        .declarations
        .iter()
        .map(|d| d.json()["name"].as_str().unwrap())
        .collect();
    let expected: Vec<&str> = registry.names().skip(registry.len() - 2).collect();
    assert_eq!(exported, expected);

    // Registering another tool changes the registry's version: exported again.
    registry.register(Fixed(last)).unwrap();
    let third = cache.export_registry(target, &registry);
    assert!(!Arc::ptr_eq(&first, &third));
    assert_eq!(third.declarations.len(), registry.len());
}
