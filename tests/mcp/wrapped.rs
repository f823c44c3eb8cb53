//! Outputs that are not objects (a list, a number, an enum, an `Option`, a
//! string) over MCP, whose `outputSchema` and `structuredContent` must be
//! objects: wrapped in one member as FastMCP wraps them
//! (`{"type": "object", "properties": {"result": SCHEMA}, "required":
//! ["result"], "x-fastmcp-wrap-result": true}`, and `{"result": value}`),
//! the result checked against the schema it was declared with; the
//! canonical message, in-process results and other providers keep the bare
//! value.

use std::time::Duration;

use serde_json::{Value, json};
use tinyagents_tools::prelude::*;
use tinyagents_tools::providers::{ExportTarget, OpenAiOptions, export_tool, gemini, mcp};
use tinyagents_tools::{ToolCall, Turn};
use tinyagents_tools_mcp::McpServer;

use crate::common::HANG;
use crate::protocol::Wire;

/// A note.
#[derive(Serialize, JsonSchema)]
struct Note {
    /// Its title.
    title: String,
    /// Its body.
    body: String,
}

/// How urgent a note is.
#[derive(Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
enum Urgency {
    /// Some day.
    #[allow(dead_code)] // declared in the schema, never returned here
    Low,
    /// Now.
    High,
}

/// Which notes.
#[derive(Deserialize, JsonSchema)]
struct Which {
    /// How many.
    count: u32,
}

fn note(i: u32) -> Note {
    Note {
        title: format!("note {i}"),
        body: "text".into(),
    }
}

/// The first notes.
#[tool(read_only, idempotent, local, task = "optional")]
async fn list_notes(args: Which) -> Vec<Note> {
    (0..args.count).map(note).collect()
}

/// How many notes there are.
#[tool(read_only, idempotent, local)]
async fn count_notes() -> u32 {
    7
}

/// How urgent the notes are.
#[tool(read_only, idempotent, local)]
async fn urgency() -> Urgency {
    Urgency::High
}

/// The note asked for, if there are that many.
#[tool(read_only, idempotent, local)]
async fn find_note(args: Which) -> Option<Note> {
    (args.count < 2).then(|| note(args.count))
}

/// The newest note.
#[tool(read_only, idempotent, local)]
async fn newest() -> Note {
    note(9)
}

/// Anything.
#[tool(read_only, idempotent, local)]
async fn anything() -> serde_json::Value {
    json!({"free": ["form"]})
}

fn registry() -> ToolRegistry {
    let mut registry = ToolRegistry::new();
    registry.register(ListNotesTool).unwrap();
    registry.register(CountNotesTool).unwrap();
    registry.register(UrgencyTool).unwrap();
    registry.register(FindNoteTool).unwrap();
    registry.register(NewestTool).unwrap();
    registry.register(AnythingTool).unwrap();
    registry
}

fn server() -> McpServer {
    McpServer::builder(ToolExecutor::builder(registry(), ()))
        .build(RunContext::empty)
        .unwrap()
}

/// The schema of a note, as a `$defs` entry.
fn note_schema() -> Value {
    json!({
        "description": "A note.",
        "type": "object",
        "properties": {
            "title": {"description": "Its title.", "type": "string"},
            "body": {"description": "Its body.", "type": "string"},
        },
        "required": ["title", "body"],
    })
}

/// FastMCP's wrapper around `schema`.
fn wrapper(schema: Value) -> Value {
    json!({
        "type": "object",
        "properties": {"result": schema},
        "required": ["result"],
        "x-fastmcp-wrap-result": true,
    })
}

async fn listed(wire: &mut Wire) -> Vec<Value> {
    let answer = wire
        .request(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}))
        .await;
    answer["result"]["tools"].as_array().unwrap().clone()
}

fn output_schema<'a>(tools: &'a [Value], name: &str) -> Option<&'a Value> {
    let tool = tools.iter().find(|t| t["name"] == name).unwrap();
    tool.get("outputSchema")
}

#[tokio::test]
async fn outputs_that_are_not_objects_are_declared_wrapped_as_fastmcp_declares_them() {
    let mut wire = Wire::at_on("2025-11-25", server()).await;
    let tools = listed(&mut wire).await;

    let mut list = wrapper(json!({"type": "array", "items": {"$ref": "#/$defs/Note"}}));
    list["$defs"] = json!({"Note": note_schema()});
    assert_eq!(output_schema(&tools, "list_notes"), Some(&list));
    assert_eq!(
        output_schema(&tools, "count_notes"),
        Some(&wrapper(
            json!({"type": "integer", "format": "uint32", "minimum": 0})
        ))
    );
    assert_eq!(
        output_schema(&tools, "urgency"),
        Some(&wrapper(json!({
            "description": "How urgent a note is.",
            "oneOf": [
                {"description": "Some day.", "type": "string", "const": "low"},
                {"description": "Now.", "type": "string", "const": "high"},
            ],
        })))
    );
    let mut option = wrapper(json!({"anyOf": [{"$ref": "#/$defs/Note"}, {"type": "null"}]}));
    option["$defs"] = json!({"Note": note_schema()});
    assert_eq!(output_schema(&tools, "find_note"), Some(&option));
    // An object stays as it is; a value that may be anything declares no
    // schema (there is nothing to wrap it for).
    let newest = output_schema(&tools, "newest").unwrap();
    assert_eq!(newest["properties"]["title"]["type"], "string");
    assert!(newest.get("x-fastmcp-wrap-result").is_none(), "{newest}");
    assert_eq!(output_schema(&tools, "anything"), None);
}

/// The result of calling `name` with `arguments` on a 2025-11-25 session,
/// checked against the `outputSchema` the session listed for the tool.
async fn call_checked(wire: &mut Wire, tools: &[Value], name: &str, arguments: &str) -> Value {
    let answer = wire.call(2, "2025-11-25", name, arguments).await;
    let result = answer["result"].clone();
    assert_eq!(result["isError"], false, "{result}");
    if let Some(schema) = output_schema(tools, name) {
        let validator = jsonschema::validator_for(schema).unwrap();
        let structured = &result["structuredContent"];
        assert!(validator.is_valid(structured), "{name}: {result}");
    }
    result
}

#[tokio::test]
async fn their_results_carry_the_value_under_result_and_match_the_declared_schema() {
    let mut wire = Wire::at_on("2025-11-25", server()).await;
    let tools = listed(&mut wire).await;

    let list = call_checked(&mut wire, &tools, "list_notes", r#"{"count":2}"#).await;
    let notes = json!([{"title": "note 0", "body": "text"}, {"title": "note 1", "body": "text"}]);
    assert_eq!(list["structuredContent"], json!({ "result": notes }));
    // The text a model reads is the value itself, not the wrapper.
    assert_eq!(list["content"].as_array().unwrap().len(), 1, "{list}");
    let text: Value = serde_json::from_str(list["content"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(text, notes);

    let count = call_checked(&mut wire, &tools, "count_notes", "{}").await;
    assert_eq!(count["structuredContent"], json!({"result": 7}));
    let urgency = call_checked(&mut wire, &tools, "urgency", "{}").await;
    assert_eq!(urgency["structuredContent"], json!({"result": "high"}));
    let found = call_checked(&mut wire, &tools, "find_note", r#"{"count":1}"#).await;
    assert_eq!(
        found["structuredContent"],
        json!({"result": {"title": "note 1", "body": "text"}})
    );
    let none = call_checked(&mut wire, &tools, "find_note", r#"{"count":5}"#).await;
    assert_eq!(none["structuredContent"], json!({"result": null}));

    let newest = call_checked(&mut wire, &tools, "newest", "{}").await;
    assert_eq!(
        newest["structuredContent"],
        json!({"title": "note 9", "body": "text"})
    );
    let anything = call_checked(&mut wire, &tools, "anything", "{}").await;
    assert_eq!(anything["structuredContent"], json!({"free": ["form"]}));

    // A failed call has no structured value to wrap.
    let bad = wire
        .call(3, "2025-11-25", "list_notes", r#"{"count":"two"}"#)
        .await;
    assert_eq!(bad["result"]["isError"], true, "{bad}");
    assert!(bad["result"].get("structuredContent").is_none(), "{bad}");
}

#[tokio::test]
async fn a_task_result_is_wrapped_as_the_call_result_is() {
    let mut wire = Wire::serving(server()).await;
    let context = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities":
            {"extensions": {"io.modelcontextprotocol/tasks": {}}},
    });
    let created = wire
        .request(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                        "params": {"name": "list_notes", "arguments": {"count": 1},
                                   "_meta": context}}))
        .await;
    assert_eq!(created["result"]["resultType"], "task", "{created}");
    let task = created["result"]["taskId"].clone();
    let polling = async {
        for id in 2.. {
            let got = wire
                .request(json!({"jsonrpc": "2.0", "id": id, "method": "tasks/get",
                                "params": {"taskId": task, "_meta": context}}))
                .await;
            if got["result"]["status"] != "working" {
                return got["result"].clone();
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        unreachable!()
    };
    let done = tokio::time::timeout(HANG, polling).await.unwrap();
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(
        done["result"]["structuredContent"],
        json!({"result": [{"title": "note 0", "body": "text"}]}),
        "{done}"
    );
}

#[tokio::test]
async fn in_process_results_and_other_providers_keep_the_bare_value() {
    let executor = ToolExecutor::builder(registry(), ()).build().unwrap();
    let result = executor
        .execute(
            &RunContext::empty(),
            &Turn::new(1),
            ToolCall::new("c1", "count_notes", "{}"),
        )
        .await;
    assert_eq!(result.structured, Some(json!(7)));
    assert_eq!(
        gemini::function_response_part(&result)["functionResponse"]["response"]["output"],
        7
    );
    // MCP alone wraps: the JSON written for the tool's own declaration.
    let spec = executor.registry().get("count_notes").unwrap().spec();
    assert!(mcp::wraps_result(spec));
    assert_eq!(
        mcp::call_tool_result_for(spec, &result, 1024)["structuredContent"],
        json!({"result": 7})
    );
    assert!(
        mcp::call_tool_result(&result)
            .get("structuredContent")
            .is_none()
    );
    // Other providers' declarations have no output schema to wrap.
    let openai = export_tool(spec, ExportTarget::OpenAiChat(OpenAiOptions::default()))
        .unwrap()
        .into_json();
    assert!(!openai.to_string().contains("x-fastmcp-wrap-result"));
}

#[tokio::test]
async fn the_mcp_client_unwraps_what_a_server_wrapped_and_declares_the_bare_schema() {
    let client = crate::common::mcp_client_of(server()).await;
    let (imported, report) =
        crate::client::imported(&client, &tinyagents_tools_mcp::client::ImportOptions::new()).await;
    assert!(report.refused.is_empty(), "{:?}", report.refused);
    // The local tool declares the value's own schema, its `$defs` with it.
    let list = imported.get("list_notes").unwrap().spec();
    let schema = list.output_schema.as_ref().unwrap().as_value();
    assert_eq!(schema["type"], "array", "{schema}");
    assert_eq!(schema["$defs"]["Note"], note_schema(), "{schema}");
    assert!(schema.get("x-fastmcp-wrap-result").is_none(), "{schema}");
    let newest = imported.get("newest").unwrap().spec();
    let schema = newest.output_schema.as_ref().unwrap().as_value();
    assert_eq!(schema["properties"]["title"]["type"], "string", "{schema}");

    let executor = ToolExecutor::builder(imported, ()).build().unwrap();
    let call =
        |name: &'static str, args: Value| crate::client::execute_call(&executor, "c1", name, args);
    let notes = call("list_notes", json!({"count": 2})).await;
    assert!(!notes.is_error, "{}", notes.text());
    assert_eq!(
        notes.structured,
        Some(json!([{"title": "note 0", "body": "text"}, {"title": "note 1", "body": "text"}]))
    );
    assert_eq!(
        call("count_notes", json!({})).await.structured,
        Some(json!(7))
    );
    assert_eq!(
        call("urgency", json!({})).await.structured,
        Some(json!("high"))
    );
    let none = call("find_note", json!({"count": 5})).await;
    assert!(!none.is_error, "{}", none.text());
    assert_eq!(none.structured, Some(Value::Null));
    // An object is not wrapped, so nothing is unwrapped.
    assert_eq!(
        call("newest", json!({})).await.structured,
        Some(json!({"title": "note 9", "body": "text"}))
    );
    assert_eq!(
        call("anything", json!({})).await.structured,
        Some(json!({"free": ["form"]}))
    );
}
