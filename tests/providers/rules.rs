//! Rule checkers for exported declarations, one per provider, that read the
//! providers' published rules from `tests/fixtures/provider_rules.json`
//! (never from the exporters), so a wrong rule in an exporter shows up as a
//! violation; each returns every violation it finds.

use std::sync::LazyLock;

use serde_json::{Map, Value};
use tinyagents_tools::spec::schema::walk_schemas;

type Violations = Vec<String>;

/// The providers' published rules, as data (`tests/fixtures/provider_rules.json`).
static RULES: LazyLock<Value> = LazyLock::new(|| {
    serde_json::from_str(include_str!("../fixtures/provider_rules.json"))
        .expect("the rules fixture is JSON")
});

/// The strings of the list at `pointer` in the rules.
fn listed(pointer: &str) -> Vec<&'static str> {
    RULES
        .pointer(pointer)
        .and_then(Value::as_array)
        .unwrap_or_else(|| panic!("no list at {pointer} in the rules fixture"))
        .iter()
        .filter_map(Value::as_str)
        .collect()
}

/// Whether `name` follows the name rule of `provider` in the rules.
/// Adds `bad name` to `out` unless `name` is a string that follows
/// `provider`'s published name rule.
fn name_rule(provider: &str, name: &Value, out: &mut Violations) {
    if !name.as_str().is_some_and(|n| name_follows(provider, n)) {
        out.push("bad name".into());
    }
}

fn name_follows(provider: &str, name: &str) -> bool {
    let rule = &RULES[provider]["name"];
    let max = rule["max"].as_u64().expect("a maximum length") as usize;
    let extra = rule["extra"].as_str().expect("the extra characters");
    !name.is_empty()
        && name.len() <= max
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-' || extra.contains(c))
}

fn is_object(obj: &Map<String, Value>) -> bool {
    obj.get("type").is_some_and(|t| {
        t == "object"
            || t.as_array()
                .is_some_and(|a| a.iter().any(|x| x == "object"))
    }) || obj.contains_key("properties")
}

fn is_array(obj: &Map<String, Value>) -> bool {
    obj.get("type").is_some_and(|t| {
        t == "array" || t.as_array().is_some_and(|a| a.iter().any(|x| x == "array"))
    })
}

/// Root checks every LLM provider shares.
fn root_rules(schema: &Value, out: &mut Violations) {
    if schema.get("type") != Some(&RULES["every_llm_provider"]["root_type"]) {
        out.push("root is not type object".into());
    }
    for k in listed("/every_llm_provider/root_refused") {
        if schema.get(k).is_some() {
            out.push(format!("root has `{k}`"));
        }
    }
}

/// Every `$ref` resolves inside the document.
fn refs_resolve(schema: &Value, out: &mut Violations) {
    walk_schemas(schema, &mut |ptr, obj| {
        if let Some(Value::String(r)) = obj.get("$ref") {
            let ok = r
                .strip_prefix('#')
                .is_some_and(|p| p.is_empty() || schema.pointer(p).is_some());
            if !ok {
                out.push(format!("{ptr}: unresolved $ref {r}"));
            }
        }
    });
}

/// OpenAI strict: closed, fully required objects, no `$ref` with siblings,
/// allowed formats only, typed subschemas, arrays with items.
pub fn openai_strict_violations(schema: &Value) -> Violations {
    let mut out = Vec::new();
    root_rules(schema, &mut out);
    refs_resolve(schema, &mut out);
    walk_schemas(schema, &mut |ptr, obj| {
        if is_object(obj) {
            if obj.get("additionalProperties") != Some(&Value::Bool(false)) {
                out.push(format!("{ptr}: object not closed"));
            }
            let props: Vec<&str> = obj
                .get("properties")
                .and_then(Value::as_object)
                .map(|p| p.keys().map(String::as_str).collect())
                .unwrap_or_default();
            let mut required: Vec<&str> = obj
                .get("required")
                .and_then(Value::as_array)
                .map(|r| r.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            required.sort_unstable();
            let mut sorted = props.clone();
            sorted.sort_unstable();
            if required != sorted {
                out.push(format!(
                    "{ptr}: required {required:?} != properties {sorted:?}"
                ));
            }
        }
        if obj.contains_key("$ref") && obj.len() > 1 {
            out.push(format!("{ptr}: $ref with siblings"));
        }
        for k in listed("/openai/strict_refused") {
            if obj.contains_key(k) {
                out.push(format!("{ptr}: `{k}` not allowed"));
            }
        }
        if obj.get("default") == Some(&Value::Null) {
            out.push(format!("{ptr}: default null"));
        }
        if let Some(f) = obj.get("format").and_then(Value::as_str)
            && !listed("/openai/strict_formats").contains(&f)
        {
            out.push(format!("{ptr}: format {f}"));
        }
        if is_array(obj) && !obj.contains_key("items") {
            out.push(format!("{ptr}: array without items"));
        }
        let typed = ["type", "anyOf", "$ref", "enum", "const"]
            .iter()
            .any(|k| obj.contains_key(*k));
        if !typed && !ptr.starts_with("/$defs") {
            out.push(format!("{ptr}: untyped"));
        }
    });
    out
}

/// OpenAI without strict: object root, arrays with items, allowed formats.
pub fn openai_violations(schema: &Value) -> Violations {
    let mut out = Vec::new();
    root_rules(schema, &mut out);
    walk_schemas(schema, &mut |ptr, obj| {
        if is_array(obj) && !obj.contains_key("items") {
            out.push(format!("{ptr}: array without items"));
        }
        if let Some(f) = obj.get("format").and_then(Value::as_str)
            && !listed("/openai/strict_formats").contains(&f)
        {
            out.push(format!("{ptr}: format {f}"));
        }
    });
    out
}

/// An OpenAI declaration (Chat or Responses shape).
pub fn openai_declaration_violations(decl: &Value, chat: bool) -> Violations {
    let f = if chat { &decl["function"] } else { decl };
    let mut out = Vec::new();
    if decl["type"] != "function" {
        out.push("type is not function".into());
    }
    name_rule("openai", &f["name"], &mut out);
    match f.get("strict") {
        Some(Value::Bool(true)) => out.extend(openai_strict_violations(&f["parameters"])),
        Some(Value::Bool(false)) => out.extend(openai_violations(&f["parameters"])),
        _ => out.push("strict not stated".into()),
    }
    out
}

/// Gemini `parameters`: the OpenAPI subset.
pub fn gemini_parameters_violations(schema: &Value) -> Violations {
    let allowed = listed("/gemini/parameters_keywords");
    let mut out = Vec::new();
    if schema.get("type") != Some(&Value::from("object")) {
        out.push("root is not type object".into());
    }
    walk_schemas(schema, &mut |ptr, obj| {
        for k in obj.keys() {
            if !allowed.contains(&k.as_str()) {
                out.push(format!("{ptr}: keyword `{k}` not allowed"));
            }
        }
        if obj.get("type").is_some_and(Value::is_array) {
            out.push(format!("{ptr}: type array"));
        }
        if obj.get("type").is_none() && obj.get("anyOf").is_none() {
            out.push(format!("{ptr}: no type"));
        }
        if let Some(Value::Array(values)) = obj.get("enum")
            && !values.iter().all(Value::is_string)
        {
            out.push(format!("{ptr}: non-string enum"));
        }
        if let Some(f) = obj.get("format").and_then(Value::as_str) {
            let of_type = obj
                .get("type")
                .and_then(Value::as_str)
                .filter(|t| ["integer", "number"].contains(t))
                .unwrap_or("other");
            let ok = listed(&format!("/gemini/formats/{of_type}")).contains(&f);
            if !ok {
                out.push(format!("{ptr}: format {f}"));
            }
        }
        if is_object(obj) {
            match obj.get("properties").and_then(Value::as_object) {
                Some(p) if !p.is_empty() => {
                    for name in p.keys() {
                        let mut c = name.chars();
                        let ok = c
                            .next()
                            .is_some_and(|f| f.is_ascii_alphabetic() || f == '_')
                            && c.all(|x| x.is_ascii_alphanumeric() || x == '_');
                        if !ok {
                            out.push(format!("{ptr}: property name {name}"));
                        }
                    }
                }
                _ => out.push(format!("{ptr}: object without properties")),
            }
        }
        if is_array(obj) && !obj.contains_key("items") {
            out.push(format!("{ptr}: array without items"));
        }
    });
    out
}

/// A Gemini function declaration in either mode.
pub fn gemini_declaration_violations(decl: &Value) -> Violations {
    let mut out = Vec::new();
    let name = decl["name"].as_str().unwrap_or_default();
    let first_ok = name
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_');
    if !first_ok || !name_follows("gemini", name) {
        out.push("bad name".into());
    }
    match (decl.get("parameters"), decl.get("parametersJsonSchema")) {
        (Some(_), Some(_)) => out.push("both parameters and parametersJsonSchema".into()),
        (Some(p), None) => out.extend(gemini_parameters_violations(p)),
        (None, Some(s)) => {
            root_rules(s, &mut out);
            refs_resolve(s, &mut out);
            walk_schemas(s, &mut |ptr, obj| {
                if obj.contains_key("oneOf") {
                    out.push(format!("{ptr}: oneOf"));
                }
            });
        }
        (None, None) => {}
    }
    out
}

/// True when following references from `node` can come back to one of
/// `stack`.
fn recursive(root: &Value, node: &Value, stack: &mut Vec<String>) -> bool {
    let mut refs = Vec::new();
    walk_schemas(node, &mut |ptr, obj| {
        if !ptr.starts_with("/$defs")
            && let Some(Value::String(r)) = obj.get("$ref")
        {
            refs.push(r.clone());
        }
    });
    refs.into_iter().any(|r| {
        if stack.contains(&r) {
            return true;
        }
        let target = r.strip_prefix('#').and_then(|p| {
            if p.is_empty() {
                Some(root)
            } else {
                root.pointer(p)
            }
        });
        stack.push(r);
        let found = target.is_some_and(|t| recursive(root, t, stack));
        stack.pop();
        found
    })
}

/// An Anthropic tool; strict rules when it says `strict: true`.
pub fn anthropic_violations(decl: &Value) -> Violations {
    let mut out = Vec::new();
    name_rule("anthropic", &decl["name"], &mut out);
    let schema = &decl["input_schema"];
    root_rules(schema, &mut out);
    refs_resolve(schema, &mut out);
    if decl.get("strict") == Some(&Value::Bool(true)) {
        if recursive(schema, schema, &mut vec!["#".into()]) {
            out.push("recursive schema".into());
        }
        walk_schemas(schema, &mut |ptr, obj| {
            if is_object(obj) && obj.get("additionalProperties") != Some(&Value::Bool(false)) {
                out.push(format!("{ptr}: object not closed"));
            }
            for k in listed("/anthropic/strict_refused") {
                if obj.contains_key(k) {
                    out.push(format!("{ptr}: `{k}` not allowed"));
                }
            }
            if obj
                .get("minItems")
                .and_then(Value::as_u64)
                .is_some_and(|n| Some(n) > RULES["anthropic"]["strict_max_min_items"].as_u64())
            {
                out.push(format!("{ptr}: minItems above 1"));
            }
            if let Some(f) = obj.get("format").and_then(Value::as_str)
                && !listed("/anthropic/strict_formats").contains(&f)
            {
                out.push(format!("{ptr}: format {f}"));
            }
        });
    } else if decl.get("strict").is_some() {
        out.push("strict stated without being true".into());
    }
    out
}

/// An MCP tool definition.
pub fn mcp_violations(tool: &Value) -> Violations {
    let mut out = Vec::new();
    name_rule("mcp", &tool["name"], &mut out);
    if tool["inputSchema"]["type"] != "object" {
        out.push("inputSchema is not type object".into());
    }
    if let Some(output) = tool.get("outputSchema")
        && output["type"] != "object"
    {
        out.push("outputSchema is not type object".into());
    }
    for hint in listed("/mcp/hints") {
        if !tool["annotations"][hint].is_boolean() {
            out.push(format!("annotation {hint} missing"));
        }
    }
    if tool["annotations"]["readOnlyHint"] == true && tool["annotations"]["destructiveHint"] == true
    {
        out.push("read-only and destructive".into());
    }
    out
}

#[cfg(test)]
mod checker_tests {
    use super::*;
    use serde_json::json;

    /// Asserts every expected violation is reported.
    fn assert_all_found(violations: &[String], expected: &[&str]) {
        for e in expected {
            assert!(
                violations.iter().any(|m| m.contains(e)),
                "{e} not in {violations:#?}"
            );
        }
    }

    #[test]
    fn the_openai_strict_checker_catches_open_optional_and_sibling_refs() {
        let bad = json!({
            "type": "object",
            "properties": {
                "a": {"type": "string", "format": "uri", "maxLength": 3},
                "b": {"$ref": "#/$defs/B", "description": "x"},
                "c": {"type": "array"}
            },
            "required": ["a"],
            "$defs": {"B": {"type": "object", "properties": {}}}
        });
        let v = openai_strict_violations(&bad);
        let expected = [
            ": object not closed",
            "required [\"a\"] != properties",
            "/properties/b: $ref with siblings",
            "/properties/a: format uri",
            "/properties/a: `maxLength` not allowed",
            "/properties/c: array without items",
            "/$defs/B: object not closed",
        ];
        assert_all_found(&v, &expected);
    }

    #[test]
    fn the_gemini_checker_catches_refs_type_arrays_and_number_enums() {
        let bad = json!({
            "type": "object",
            "properties": {
                "a": {"type": ["string", "null"]},
                "b": {"$ref": "#/$defs/B"},
                "c": {"type": "integer", "enum": [1, 2]},
                "d": {"type": "object", "additionalProperties": {"type": "string"}},
                "e": {"const": "x"}
            },
            "$defs": {"B": {"type": "string"}}
        });
        let v = gemini_parameters_violations(&bad);
        assert_all_found(
            &v,
            &[
                "/properties/a: type array",
                "/properties/b: keyword `$ref` not allowed",
                ": keyword `$defs` not allowed",
                "/properties/c: non-string enum",
                "/properties/d: keyword `additionalProperties` not allowed",
                "/properties/d: object without properties",
                "/properties/e: keyword `const` not allowed",
            ],
        );
    }

    #[test]
    fn the_anthropic_and_mcp_checkers_catch_their_rules() {
        let strict = json!({
            "name": "t", "strict": true,
            "input_schema": {"type": "object", "oneOf": [], "properties": {
                "n": {"type": "integer", "minimum": 1},
                "tree": {"$ref": "#/$defs/T"}
            }, "additionalProperties": false, "$defs": {"T": {"type": "object", "additionalProperties": false,
                "properties": {"kids": {"type": "array", "items": {"$ref": "#/$defs/T"}, "minItems": 2}}}}}
        });
        let v = anthropic_violations(&strict);
        assert_all_found(
            &v,
            &[
                "root has `oneOf`",
                "recursive schema",
                "`minimum` not allowed",
                "minItems above 1",
            ],
        );
        let mcp = json!({"name": "bad name", "inputSchema": {"type": "string"}, "annotations": {"readOnlyHint": true, "destructiveHint": true}});
        let v = mcp_violations(&mcp);
        assert_all_found(
            &v,
            &[
                "bad name",
                "inputSchema is not type object",
                "annotation idempotentHint missing",
                "read-only and destructive",
            ],
        );
    }
}
