//! Golden declarations of the corpus for every provider, each checked against
//! that provider's rules. `UPDATE_GOLDEN=1` rewrites the files; otherwise the
//! comparison is exact, on the document written with every object's keys
//! sorted (the order of properties is checked on its own, by the core's
//! `declared_order` test).

use std::path::PathBuf;

use serde_json::{Value, json};
use tinyagents_tools::providers::{
    AnthropicOptions, ExportTarget, GeminiMode, GeminiOptions, OpenAiOptions, export_declarations,
};

use crate::corpus::corpus;
use crate::rules;

/// The exported declarations and the errors, as one JSON document.
fn export_doc(target: ExportTarget) -> Value {
    let specs = corpus();
    let out = export_declarations(target, &specs);
    let errors: Vec<Value> = out
        .errors
        .iter()
        .map(|e| json!({"tool": e.tool(), "rule": e.rule(), "pointer": e.pointer(), "message": e.to_string()}))
        .collect();
    json!({"declarations": out.to_json(), "errors": errors})
}

/// `value` with every object's keys in sorted order (already so when
/// serde_json's maps are sorted; rebuilt so when they keep insertion order).
fn sorted(value: &Value) -> Value {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            Value::Object(
                keys.into_iter()
                    .map(|k| (k.clone(), sorted(&map[k])))
                    .collect(),
            )
        }
        Value::Array(items) => Value::Array(items.iter().map(sorted).collect()),
        other => other.clone(),
    }
}

/// Compares `doc` with the golden file `name` (or rewrites it).
fn assert_golden(name: &str, doc: &Value) {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("golden/providers")
        .join(format!("{name}.json"));
    let text = serde_json::to_string_pretty(&sorted(doc)).expect("serializable") + "\n";
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::write(&path, &text).expect("golden file written");
        return;
    }
    let golden = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e} (run with UPDATE_GOLDEN=1)", path.display()));
    assert_eq!(text, golden, "{} differs from the export", path.display());
}

fn declarations(doc: &Value) -> &Vec<Value> {
    doc["declarations"].as_array().expect("an array")
}

fn assert_no_violations(doc: &Value, check: impl Fn(&Value) -> Vec<String>) {
    for decl in declarations(doc) {
        let violations = check(decl);
        assert!(violations.is_empty(), "{decl}\nbreaks: {violations:#?}");
    }
}

fn failed_tools(doc: &Value) -> Vec<&str> {
    doc["errors"]
        .as_array()
        .expect("an array")
        .iter()
        .filter_map(|e| e["tool"].as_str())
        .collect()
}

#[test]
fn openai_chat_strict_declarations_match_golden_and_follow_strict_rules() {
    let doc = export_doc(ExportTarget::OpenAiChat(OpenAiOptions { strict: true }));
    assert_golden("openai_chat_strict", &doc);
    assert_no_violations(&doc, |d| rules::openai_declaration_violations(d, true));
    assert_eq!(failed_tools(&doc), ["count_tags"]);
    assert_eq!(declarations(&doc).len(), 5);
}

#[test]
fn openai_chat_declarations_match_golden_and_follow_openai_rules() {
    let doc = export_doc(ExportTarget::OpenAiChat(OpenAiOptions { strict: false }));
    assert_golden("openai_chat", &doc);
    assert_no_violations(&doc, |d| rules::openai_declaration_violations(d, true));
    assert!(failed_tools(&doc).is_empty());
}

#[test]
fn openai_responses_declarations_match_golden_and_state_strict() {
    let doc = export_doc(ExportTarget::OpenAiResponses(OpenAiOptions {
        strict: true,
    }));
    assert_golden("openai_responses_strict", &doc);
    assert_no_violations(&doc, |d| rules::openai_declaration_violations(d, false));
    assert!(declarations(&doc).iter().all(|d| d["strict"] == true));
}

#[test]
fn anthropic_declarations_match_golden_and_follow_anthropic_rules() {
    let doc = export_doc(ExportTarget::Anthropic(AnthropicOptions::default()));
    assert_golden("anthropic", &doc);
    assert_no_violations(&doc, rules::anthropic_violations);
    assert!(failed_tools(&doc).is_empty());
    assert!(
        declarations(&doc)
            .iter()
            .all(|d| d.get("cache_control").is_none())
    );
}

#[test]
fn anthropic_strict_declarations_match_golden_and_follow_strict_rules() {
    let doc = export_doc(ExportTarget::Anthropic(AnthropicOptions {
        strict: true,
        cache_last: true,
    }));
    assert_golden("anthropic_strict", &doc);
    assert_no_violations(&doc, rules::anthropic_violations);
    assert_eq!(failed_tools(&doc), ["count_tags", "walk_tree"]);
    let decls = declarations(&doc);
    let marked: Vec<bool> = decls
        .iter()
        .map(|d| d.get("cache_control").is_some())
        .collect();
    assert_eq!(marked, [false, false, false, true]);
    assert_eq!(decls[3]["cache_control"], json!({"type": "ephemeral"}));
}

#[test]
fn gemini_parameters_declarations_match_golden_and_follow_the_openapi_subset() {
    let doc = export_doc(ExportTarget::Gemini(GeminiOptions::default()));
    assert_golden("gemini_parameters", &doc);
    assert_no_violations(&doc, rules::gemini_declaration_violations);
    assert_eq!(failed_tools(&doc), ["count_tags", "walk_tree"]);
    let delete_all = declarations(&doc).last().expect("a declaration");
    assert_eq!(delete_all["name"], "delete_all");
    assert!(delete_all.get("parameters").is_none());
}

#[test]
fn gemini_json_schema_declarations_match_golden_and_keep_definitions() {
    let doc = export_doc(ExportTarget::Gemini(GeminiOptions {
        mode: GeminiMode::ParametersJsonSchema,
    }));
    assert_golden("gemini_json_schema", &doc);
    assert_no_violations(&doc, rules::gemini_declaration_violations);
    assert!(failed_tools(&doc).is_empty());
    let walk_tree = &declarations(&doc)[3];
    assert!(walk_tree["parametersJsonSchema"]["$defs"]["TreeNode"].is_object());
}

#[test]
fn mcp_declarations_match_golden_and_carry_annotations() {
    let doc = export_doc(ExportTarget::Mcp);
    assert_golden("mcp", &doc);
    assert_no_violations(&doc, rules::mcp_violations);
    let decls = declarations(&doc);
    let search = &decls[4];
    assert_eq!(search["title"], "Search docs");
    assert_eq!(
        search["annotations"],
        json!({"title": "Search docs", "readOnlyHint": true, "destructiveHint": false, "idempotentHint": true, "openWorldHint": true})
    );
    assert_eq!(search["outputSchema"]["type"], "object");
    let delete_all = &decls[5];
    assert_eq!(
        delete_all["inputSchema"],
        json!({"type": "object", "additionalProperties": false})
    );
    assert_eq!(delete_all["annotations"]["destructiveHint"], true);
    assert_eq!(delete_all["annotations"]["readOnlyHint"], false);
}
