//! Item 1 and 5: the typed stubs, the `run_code` declaration every
//! provider exports, and its size against the plain declarations.

use std::sync::Arc;

use serde_json::json;
use tinyagents_tools::providers::{
    AnthropicOptions, ExportTarget, GeminiOptions, OpenAiOptions, export_declarations,
};
use tinyagents_tools::testkit::FnTool;
use tinyagents_tools::{ToolExecutor, ToolOutput, ToolRegistry, ToolSchema, ToolSpec};
use tinyagents_tools_code_mode::{CodeMode, typescript_stubs};

use crate::tools::{registry, setup};

/// Every provider format a declaration exports to.
fn every_target() -> [ExportTarget; 5] {
    [
        ExportTarget::OpenAiChat(OpenAiOptions::default()),
        ExportTarget::OpenAiResponses(OpenAiOptions::default()),
        ExportTarget::Anthropic(AnthropicOptions::default()),
        ExportTarget::Gemini(GeminiOptions::default()),
        ExportTarget::Mcp,
    ]
}

#[test]
fn stubs_are_typed_from_the_input_and_output_schemas_with_doc_comments() {
    let registry = registry();
    let lookup = registry.get("lookup").unwrap().spec();
    let expected = "\
declare const tools: {
  /** Look up an item of the catalog by number. */
  lookup(args: { /** The item's number, from 1 to 100. */ id: number }): { /** Its name. */ name: string; /** Its price in cents. */ price: number };
};
";
    let stubs = typescript_stubs([lookup]);
    assert!(stubs.starts_with(expected), "{stubs}");
    assert!(stubs.contains("declare class ToolError extends Error"));
}

#[test]
fn stubs_cover_optional_fields_unions_enums_arrays_and_refs() {
    let spec = ToolSpec::builder("search", "Search.\nTwo lines.")
        .input_schema(ToolSchema::from_value(json!({
            "type": "object",
            "properties": {
                "limit": {"type": ["integer", "null"]},
                "mode": {"enum": ["fast", "exact"]},
                "pairs": {"type": "array", "items": {"anyOf": [
                    {"type": "object", "properties": {"a": {"type": "string", "description": "Ends */ early?"}}, "required": ["a"]},
                    {"type": "null"}
                ]}},
                "query": {"type": "string"},
                "tags": {"type": "array", "items": {"$ref": "#/$defs/Tag"}}
            },
            "required": ["query"],
            "additionalProperties": false,
            "$defs": {"Tag": {"type": "object", "properties": {"label": {"type": "string"}}, "required": ["label"]}}
        })))
        .build()
        .unwrap();
    let stubs = typescript_stubs([&spec]);
    let expected = "\
declare const tools: {
  /**
   * Search.
   * Two lines.
   */
  search(args: { limit?: number | null; mode?: \"fast\" | \"exact\"; pairs?: ({ /** Ends *\\/ early? */ a: string } | null)[]; query: string; tags?: { label: string }[] }): unknown;
};
";
    assert!(stubs.starts_with(expected), "{stubs}");
}

#[test]
fn run_code_carries_the_stubs_and_every_provider_exports_it() {
    let s = setup();
    let spec = s.outer.registry().get("run_code").unwrap().spec().clone();
    let code = spec.input_schema.as_value()["properties"]["code"]["description"]
        .as_str()
        .unwrap();
    for name in ["lookup", "tag", "delete_item", "flaky", "flaky_effect"] {
        assert!(code.contains(&format!("  {name}(args: ")), "{name}");
    }
    for target in every_target() {
        let exported = export_declarations(target, [&spec]);
        assert!(
            exported.errors.is_empty(),
            "{target:?}: {:?}",
            exported.errors
        );
        assert_eq!(exported.declarations.len(), 1);
        assert!(
            exported
                .request_tools_text()
                .contains("declare const tools")
        );
    }
}

#[test]
fn the_stubs_sit_in_the_code_arguments_description_and_not_the_tools() {
    let s = setup();
    let spec = s.outer.registry().get("run_code").unwrap().spec().clone();
    let code = spec.input_schema.as_value()["properties"]["code"]["description"]
        .as_str()
        .unwrap();
    // The argument's description ends with every offered tool's stub, as
    // `typescript_stubs` writes them, in a TypeScript block.
    let stubs = typescript_stubs(s.inner.registry().specs());
    assert!(code.ends_with(&format!("```ts\n{stubs}```")), "{code}");
    // The tool's own description (bounded to 1,024 characters by OpenAI
    // Chat) holds none of them.
    assert!(
        !spec.description.contains("declare"),
        "{}",
        spec.description
    );
    assert!(spec.description.len() <= 1024);
}

/// The sentences of `text` (Markdown or Rust comments) that say where
/// the stubs sit: those naming both stubs and a description, with the
/// comment markers and line breaks taken out.
fn where_the_stubs_sit(text: &str) -> Vec<String> {
    let prose: String = text
        .lines()
        .map(|line| {
            let line = line.trim_start();
            let line = ["//!", "///", "//"]
                .iter()
                .find_map(|marker| line.strip_prefix(marker))
                .unwrap_or(line);
            format!("{} ", line.trim())
        })
        .collect();
    prose
        .split(". ")
        .filter(|sentence| sentence.contains("stub") && sentence.contains("description"))
        .map(str::to_owned)
        .collect()
}

#[test]
fn the_readme_the_crate_doc_and_the_guide_put_the_stubs_where_the_declaration_does() {
    // Where they are: the `code` argument's description (the test above).
    let s = setup();
    let spec = s.outer.registry().get("run_code").unwrap().spec().clone();
    let code = &spec.input_schema.as_value()["properties"]["code"]["description"];
    assert!(code.as_str().unwrap().contains("declare const tools: {\n"));
    assert!(!spec.description.contains("declare const tools"));
    // The crate doc is the `//!` block that opens lib.rs.
    let lib = include_str!("../../src/lib.rs");
    let crate_doc: String = lib
        .lines()
        .take_while(|line| line.starts_with("//!"))
        .map(|line| format!("{line}\n"))
        .collect();
    let docs = [
        ("README.md", include_str!("../../README.md")),
        ("the crate doc", crate_doc.as_str()),
        ("guide.md", include_str!("../../guide.md")),
    ];
    for (name, text) in docs {
        let sentences = where_the_stubs_sit(text);
        assert!(
            !sentences.is_empty(),
            "{name} does not say where the stubs sit"
        );
        for sentence in sentences {
            assert!(
                sentence.contains("`code` argument"),
                "{name} puts the stubs elsewhere than the `code` argument's description: {sentence}"
            );
        }
    }
}

#[test]
fn declaration_sizes_report_the_one_declaration_against_the_plain_ones() {
    let s = setup();
    let target = ExportTarget::OpenAiChat(OpenAiOptions::default());
    let sizes = CodeMode::new(Arc::clone(&s.inner)).declaration_sizes(target);
    let plain = export_declarations(target, s.inner.registry().specs());
    assert_eq!(sizes.plain, plain.request_tools_text().len());
    let spec = s.outer.registry().get("run_code").unwrap().spec().clone();
    assert_eq!(
        sizes.code_mode,
        export_declarations(target, [&spec])
            .request_tools_text()
            .len()
    );
    assert_eq!(sizes.saved(), sizes.plain as i64 - sizes.code_mode as i64);
    // A fixed cost (the instructions, `ToolError`), then each tool's stub
    // costs less than its declaration.
    let one = CodeMode::new(Arc::clone(&s.inner))
        .offering(["lookup"])
        .declaration_sizes(target);
    assert!(
        sizes.code_mode - one.code_mode < sizes.plain - one.plain,
        "{one:?} {sizes:?}"
    );
}

#[test]
fn twenty_tools_cost_less_in_code_mode_than_declared_one_by_one() {
    // Twenty tools shaped like the example's: one sentence, two described
    // arguments (one bounded), an object answer of two described members.
    let mut registry = ToolRegistry::<()>::new();
    for i in 0..20 {
        let spec = crate::catalog::catalog_spec(i);
        registry
            .register(FnTool::new(spec, |_, _| {
                Box::pin(async { Ok(ToolOutput::text("x")) })
            }))
            .unwrap();
    }
    let inner = Arc::new(ToolExecutor::builder(registry, ()).build().unwrap());
    for target in every_target() {
        let sizes = CodeMode::new(Arc::clone(&inner)).declaration_sizes(target);
        assert!(sizes.saved() > 0, "{target:?}: {sizes:?}");
    }
    // Nothing the model reads is left out: every description, type and
    // name is in the stubs.
    let stubs = CodeMode::new(inner).stubs();
    for i in 0..20 {
        assert!(stubs.contains(&format!(
            "  /** Look up record {i} of the catalog by number and name. */\n  catalog_tool_{i}(args: \
             {{ /** The record's number, from 1 to 100. */ id: number; /** The record's name. */ name: string }}): \
             {{ /** Its label. */ label: string; /** Its price in cents. */ price: number }};\n"
        )), "{stubs}");
    }
}
