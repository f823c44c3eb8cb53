//! The MCP server's wire protocol, as raw JSON lines over the stdio
//! transport (`McpServer::serve_lines`, what `serve_stdio` runs): results
//! valid for each protocol version the server accepts, and a JSON-RPC answer
//! with the right code for every malformed request, hostile nesting
//! included. What the official Python SDK's client (2.x, default mode) needed
//! from the server is recorded here.

use std::time::Duration;

use serde_json::{Value, json};
use tinyagents_tools::prelude::*;
use tinyagents_tools::{RunContext, ToolRegistry};
use tinyagents_tools_examples::CalculateTool;
use tinyagents_tools_mcp::McpServer;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, Lines, WriteHalf};

use crate::common::HANG;

/// Arguments of [`echo_size`].
#[derive(Deserialize, JsonSchema)]
pub(crate) struct SizeArgs {
    /// How many bytes of text to return.
    bytes: usize,
}

/// Return `bytes` bytes of text, as structured data.
#[tool(read_only, idempotent, local)]
pub(crate) async fn echo_size(args: SizeArgs) -> Json<serde_json::Value> {
    Json(json!({"text": "x".repeat(args.bytes)}))
}

/// A server with `calculate` and `echo_size`.
pub(crate) fn server() -> McpServer {
    let mut registry = ToolRegistry::new();
    registry.register(CalculateTool).unwrap();
    registry.register(EchoSizeTool).unwrap();
    McpServer::builder(ToolExecutor::builder(registry, ()))
        .name("protocol-test")
        .build(RunContext::empty)
        .unwrap()
}

/// A client speaking raw JSON lines to one session.
pub(crate) struct Wire {
    to: WriteHalf<DuplexStream>,
    from: Lines<BufReader<tokio::io::ReadHalf<DuplexStream>>>,
}

impl Wire {
    pub(crate) async fn open() -> Wire {
        Wire::serving(server()).await
    }

    /// A raw session of `server`.
    pub(crate) async fn serving(server: McpServer) -> Wire {
        let (client, ours) = tokio::io::duplex(1 << 20);
        let (read, write) = tokio::io::split(ours);
        tokio::spawn(async move {
            if let Ok(running) = server.serve_lines(read, write).await {
                let _ = running.waiting().await;
            }
        });
        let (from, to) = tokio::io::split(client);
        Wire {
            to,
            from: BufReader::new(from).lines(),
        }
    }

    /// Opens a session at `version`: the initialize handshake before
    /// 2026-07-28, nothing from it on (each request carries its context).
    pub(crate) async fn at(version: &str) -> Wire {
        Wire::at_on(version, server()).await
    }

    /// [`Wire::at`] on `server`.
    pub(crate) async fn at_on(version: &str, server: McpServer) -> Wire {
        let mut wire = Wire::serving(server).await;
        if version < "2026-07-28" {
            let answer = wire
                .request(json!({
                    "jsonrpc": "2.0", "id": 0, "method": "initialize",
                    "params": {"protocolVersion": version, "capabilities": {},
                               "clientInfo": {"name": "raw", "version": "1"}}
                }))
                .await;
            assert_eq!(answer["result"]["protocolVersion"], version, "{answer}");
            wire.send_line(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#)
                .await;
        }
        wire
    }

    pub(crate) async fn send_line(&mut self, line: &str) {
        self.to.write_all(line.as_bytes()).await.unwrap();
        self.to.write_all(b"\n").await.unwrap();
        self.to.flush().await.unwrap();
    }

    /// The next message from the server (a notification included).
    pub(crate) async fn next(&mut self) -> Value {
        let line = tokio::time::timeout(HANG, self.from.next_line())
            .await
            .expect("the server answers in time")
            .unwrap()
            .expect("the server is still there");
        serde_json::from_str(&line).unwrap()
    }

    /// Sends `message` and returns the answer with its id.
    pub(crate) async fn request(&mut self, message: Value) -> Value {
        let id = message["id"].clone();
        self.send_line(&message.to_string()).await;
        self.answer_to(&id).await
    }

    /// Calls tool `name` with `arguments` (raw JSON text) in request `id` at
    /// `version` and returns the answer.
    pub(crate) async fn call(
        &mut self,
        id: u64,
        version: &str,
        name: &str,
        arguments: &str,
    ) -> Value {
        let line = format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"_meta":{},"name":"{name}","arguments":{arguments}}}}}"#,
            context(version)
        );
        self.send_line(&line).await;
        self.answer_to(&json!(id)).await
    }

    /// Sends `line`, which the server must answer with error `code` and no
    /// id (it could not read one).
    pub(crate) async fn assert_line_refused(&mut self, line: &str, code: i64) {
        self.send_line(line).await;
        let answer = self.next().await;
        assert_eq!(answer["error"]["code"], code, "{line:.80}: {answer}");
        assert_eq!(answer["id"], Value::Null, "{line:.80}: {answer}");
    }

    /// Asks `calculate` for 1 + 1 in request `id`: the session still serves.
    pub(crate) async fn assert_still_serves(&mut self, id: u64) {
        let answer = self
            .call(id, "2025-11-25", "calculate", r#"{"a":1,"op":"add","b":1}"#)
            .await;
        assert_eq!(answer["result"]["content"][0]["text"], "2.0", "{answer}");
    }

    /// The answer with id `id`, skipping notifications.
    pub(crate) async fn answer_to(&mut self, id: &Value) -> Value {
        loop {
            let message = self.next().await;
            if message.get("id") == Some(id) {
                return message;
            }
        }
    }
}

/// The `_meta` a 2026-07-28 request carries in place of the handshake.
fn context(version: &str) -> Value {
    if version < "2026-07-28" {
        return json!({});
    }
    json!({
        "io.modelcontextprotocol/protocolVersion": version,
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"}
    })
}

const VERSIONS: [&str; 3] = ["2025-06-18", "2025-11-25", "2026-07-28"];

#[tokio::test]
async fn tools_call_results_are_valid_for_every_protocol_version_the_server_accepts() {
    for version in VERSIONS {
        let mut wire = Wire::at(version).await;
        let listed = wire
            .request(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list",
                            "params": {"_meta": context(version)}}))
            .await;
        assert!(listed["result"]["tools"].is_array(), "{version}: {listed}");

        let ok = wire
            .call(2, version, "calculate", r#"{"a":2,"op":"add","b":3}"#)
            .await;
        let failed = wire
            .call(3, version, "calculate", r#"{"a":1,"op":"modulo","b":2}"#)
            .await;
        let tool_error = wire
            .call(4, version, "calculate", r#"{"a":1,"op":"div","b":0}"#)
            .await;

        for (answer, is_error) in [(&ok, false), (&failed, true), (&tool_error, true)] {
            let result = &answer["result"];
            assert_eq!(result["isError"], is_error, "{version}: {answer}");
            assert!(
                result["content"][0]["text"].is_string(),
                "{version}: {answer}"
            );
            if version >= "2026-07-28" {
                // Every result of 2026-07-28 says what it is.
                assert_eq!(result["resultType"], "complete", "{version}: {answer}");
            } else {
                // Older versions have no such field; strict clients refuse it.
                assert!(result.get("resultType").is_none(), "{version}: {answer}");
            }
        }
        if version >= "2026-07-28" {
            assert_eq!(listed["result"]["resultType"], "complete", "{listed}");
        } else {
            assert!(listed["result"].get("resultType").is_none(), "{listed}");
        }
        assert_eq!(ok["result"]["content"][0]["text"], "5.0", "{ok}");
    }
}

#[tokio::test]
async fn a_line_that_is_not_json_is_answered_parse_error_and_the_session_goes_on() {
    let mut wire = Wire::at("2025-11-25").await;
    for line in [
        "this is not json",
        r#"{"jsonrpc":"2.0","id":5,"method":"tools/list""#,
        "{]",
    ] {
        wire.assert_line_refused(line, -32700).await;
    }
    wire.assert_still_serves(6).await;
}

#[tokio::test]
async fn a_tools_call_without_a_name_or_with_arguments_not_an_object_is_invalid_params() {
    for version in VERSIONS {
        let mut wire = Wire::at(version).await;
        let meta = context(version);
        let cases = [
            json!({"_meta": meta}),
            json!({"_meta": meta, "arguments": {"a": 1}}),
            json!({"_meta": meta, "name": 7, "arguments": {}}),
            json!({"_meta": meta, "name": "calculate", "arguments": [1, 2]}),
            json!({"_meta": meta, "name": "calculate", "arguments": "{\"a\": 1}"}),
            json!({"_meta": meta, "name": "calculate", "arguments": 5}),
        ];
        for (i, params) in cases.into_iter().enumerate() {
            let id = json!(format!("bad-{i}"));
            let answer = wire
                .request(json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                                "params": params}))
                .await;
            assert_eq!(
                answer["error"]["code"], -32602,
                "{version} {params}: {answer}"
            );
            assert_eq!(answer["id"], id, "{answer}");
        }
        let no_params = wire
            .request(json!({"jsonrpc": "2.0", "id": 99, "method": "tools/call"}))
            .await;
        assert_eq!(no_params["error"]["code"], -32602, "{version}: {no_params}");
    }
}

#[tokio::test]
async fn arguments_nested_100_to_100000_levels_get_the_same_classified_depth_error() {
    let mut wire = Wire::at("2025-11-25").await;
    let mut texts = Vec::new();
    for (id, levels) in [(1u64, 100usize), (2, 125), (3, 1000), (4, 100_000)] {
        let nested = format!("{}{}", "[".repeat(levels), "]".repeat(levels));
        let arguments = format!(r#"{{"a":{nested},"op":"add","b":1}}"#);
        let started = std::time::Instant::now();
        let answer = wire.call(id, "2025-11-25", "calculate", &arguments).await;
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "{levels} levels"
        );
        assert_eq!(
            answer["result"]["isError"], true,
            "{levels} levels: {answer}"
        );
        let text = answer["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .to_owned();
        assert!(
            text.contains("nest deeper than 64 levels"),
            "{levels}: {text}"
        );
        texts.push(text);
    }
    assert!(texts.windows(2).all(|w| w[0] == w[1]), "{texts:?}");
}

#[tokio::test]
async fn a_repeated_key_in_mcp_arguments_is_refused_as_on_every_other_path() {
    let mut wire = Wire::at("2025-11-25").await;
    let answer = wire
        .call(
            1,
            "2025-11-25",
            "calculate",
            r#"{"a":1,"op":"add","b":2,"b":40}"#,
        )
        .await;
    assert_eq!(answer["result"]["isError"], true, "{answer}");
    let text = answer["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("appears more than once"), "{text}");

    // The same text from a provider path gets the same refusal.
    let registry = {
        let mut r = ToolRegistry::new();
        r.register(CalculateTool).unwrap();
        r
    };
    let executor = ToolExecutor::builder(registry, ()).build().unwrap();
    let result = executor
        .execute(
            &RunContext::empty(),
            &tinyagents_tools::Turn::new(1),
            tinyagents_tools::ToolCall::new(
                "c1",
                "calculate",
                tinyagents_tools::call::RawArguments::Text(
                    r#"{"a":1,"op":"add","b":2,"b":40}"#.into(),
                ),
            ),
        )
        .await;
    assert_eq!(result.text(), text);
}

#[tokio::test]
async fn an_unknown_tools_list_cursor_is_invalid_params() {
    let mut wire = Wire::at("2025-11-25").await;
    let answer = wire
        .request(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list",
                        "params": {"cursor": "page-2"}}))
        .await;
    assert_eq!(answer["error"]["code"], -32602, "{answer}");
    let whole = wire
        .request(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}))
        .await;
    assert_eq!(
        whole["result"]["tools"].as_array().unwrap().len(),
        2,
        "{whole}"
    );
}

#[tokio::test]
async fn declared_prompts_and_resources_list_empty_and_an_unknown_one_is_invalid_params() {
    let mut wire = Wire::at("2025-11-25").await;
    let prompts = wire
        .request(json!({"jsonrpc": "2.0", "id": 1, "method": "prompts/list"}))
        .await;
    assert_eq!(prompts["result"]["prompts"], json!([]), "{prompts}");
    let resources = wire
        .request(json!({"jsonrpc": "2.0", "id": 2, "method": "resources/list"}))
        .await;
    assert_eq!(resources["result"]["resources"], json!([]), "{resources}");
    // JSON-RPC -32601 would say the method (the capability) is absent; the
    // server declares both, so a name it does not serve is invalid params.
    let prompt = wire
        .request(json!({"jsonrpc": "2.0", "id": 3, "method": "prompts/get",
                        "params": {"name": "test_simple_prompt"}}))
        .await;
    assert_eq!(prompt["error"]["code"], -32602, "{prompt}");
    assert_eq!(
        prompt["error"]["data"],
        json!({"name": "test_simple_prompt"})
    );
    let resource = wire
        .request(
            json!({"jsonrpc": "2.0", "id": 4, "method": "resources/read",
                        "params": {"uri": "test://static-text"}}),
        )
        .await;
    assert_eq!(resource["error"]["code"], -32602, "{resource}");
    assert_eq!(
        resource["error"]["data"],
        json!({"uri": "test://static-text"})
    );
    wire.assert_still_serves(5).await;
}

#[tokio::test]
async fn a_message_nested_too_deep_outside_the_arguments_is_answered_invalid_request() {
    let mut wire = Wire::at("2025-11-25").await;
    let deep = format!("{}{}", "[".repeat(5000), "]".repeat(5000));
    wire.send_line(&format!(
        r#"{{"jsonrpc":"2.0","id":"deep","method":"tools/list","params":{{"_meta":{{"x":{deep}}}}}}}"#
    ))
    .await;
    let answer = wire.answer_to(&json!("deep")).await;
    assert_eq!(answer["error"]["code"], -32600, "{answer}");
}

#[tokio::test]
async fn the_python_sdk_default_conversation_over_stdio_gets_complete_results() {
    // What the official Python SDK (2.3, default mode "auto") sends over
    // stdio, line for line: a `server/discover` probe, then requests that
    // each carry the 2026-07-28 context in `_meta`, with no handshake.
    let meta = r#"{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"mcp","version":"0.1.0"},"io.modelcontextprotocol/clientCapabilities":{}}"#;
    let mut wire = Wire::open().await;
    wire.send_line(&format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{{"_meta":{meta}}}}}"#
    ))
    .await;
    let discovered = wire.answer_to(&json!(1)).await;
    assert_eq!(
        discovered["result"]["resultType"], "complete",
        "{discovered}"
    );
    let versions = discovered["result"]["supportedVersions"]
        .as_array()
        .unwrap();
    for version in VERSIONS {
        assert!(versions.contains(&json!(version)), "{discovered}");
    }
    wire.send_line(&format!(
        r#"{{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{{"_meta":{meta}}}}}"#
    ))
    .await;
    let listed = wire.answer_to(&json!(2)).await;
    assert_eq!(listed["result"]["resultType"], "complete", "{listed}");
    for (id, arguments, is_error) in [
        (3, r#"{"a":2,"op":"add","b":3}"#, false),
        (4, r#"{"a":1,"op":"modulo","b":2}"#, true),
    ] {
        wire.send_line(&format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"calculate","arguments":{arguments},"_meta":{meta}}}}}"#
        ))
        .await;
        let answer = wire.answer_to(&json!(id)).await;
        assert_eq!(answer["result"]["resultType"], "complete", "{answer}");
        assert_eq!(answer["result"]["isError"], is_error, "{answer}");
    }
}

#[tokio::test]
async fn a_line_longer_than_4_mib_is_answered_invalid_request_and_the_session_goes_on() {
    let mut wire = Wire::at("2025-11-25").await;
    let huge = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{{"_meta":{{"pad":"{}"}}}}}}"#,
        "x".repeat(5 << 20)
    );
    wire.assert_line_refused(&huge, -32600).await;
    wire.assert_still_serves(2).await;
}
