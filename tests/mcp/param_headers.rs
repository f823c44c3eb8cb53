//! `Mcp-Param-{Name}` headers over streamable HTTP (SEP-2243): the tools of
//! the conformance suite whose arguments carry `x-mcp-header`, called with
//! raw requests on protocol 2026-07-28, and a tool without annotations.

use serde_json::{Value, json};
use tinyagents_tools::prelude::*;
use tinyagents_tools::{CancellationToken, ToolExecutor};
use tinyagents_tools_examples::CalculateTool;
use tinyagents_tools_examples::conformance_tools::{
    TestCustomHeadersNullTool, TestCustomHeadersTool,
};
use tinyagents_tools_mcp::McpServer;
use tinyagents_tools_mcp::rmcp::transport::StreamableHttpServerConfig;

use crate::http::{initialized_session, raw};

/// Serves the two custom-header tools and `calculate` on 127.0.0.1.
async fn serve() -> (std::net::SocketAddr, CancellationToken) {
    let mut registry = ToolRegistry::new();
    registry
        .register(TestCustomHeadersTool)
        .unwrap()
        .register(TestCustomHeadersNullTool)
        .unwrap()
        .register(CalculateTool)
        .unwrap();
    let server = McpServer::builder(ToolExecutor::builder(registry, ()))
        .build(RunContext::empty)
        .unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let shutdown = CancellationToken::new();
    let stop = shutdown.clone();
    tokio::spawn(async move {
        server
            .serve_http(listener, StreamableHttpServerConfig::default(), stop)
            .await
    });
    (addr, shutdown)
}

/// A 2026-07-28 `tools/call` of `tool` with `arguments`, sent with the
/// standard headers and `params` (`("Region", "us-east1")` is sent as
/// `Mcp-Param-Region: us-east1`): the status and the answer.
async fn call(
    addr: std::net::SocketAddr,
    tool: &str,
    arguments: Value,
    params: &[(&str, &str)],
) -> (reqwest::StatusCode, Value) {
    let meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "probe", "version": "1"}
    });
    let body = json!({"jsonrpc": "2.0", "id": 41, "method": "tools/call",
                      "params": {"_meta": meta, "name": tool, "arguments": arguments}});
    let names: Vec<String> = params
        .iter()
        .map(|(name, _)| format!("mcp-param-{name}"))
        .collect();
    let mut headers = vec![
        ("mcp-protocol-version", "2026-07-28"),
        ("mcp-method", "tools/call"),
        ("mcp-name", tool),
    ];
    headers.extend(
        names
            .iter()
            .map(String::as_str)
            .zip(params.iter().map(|(_, v)| *v)),
    );
    let (status, _, mut messages) =
        raw(addr, reqwest::Method::POST, &headers, body.to_string()).await;
    assert_eq!(messages.len(), 1, "{messages:?}");
    (status, messages.remove(0))
}

/// `Mcp-Param-*` headers to send: each name without the prefix, and its value.
type Params = Vec<(&'static str, &'static str)>;

/// The required arguments of `test_custom_headers` and their headers.
const REGION: (&str, &str) = ("Region", "us-east1");
const PRIORITY: (&str, &str) = ("Priority", "3");
/// The headers of both required arguments.
const REQUIRED: &[(&str, &str)] = &[REGION, PRIORITY];

fn required(extra: Value) -> Value {
    let mut arguments = json!({"region": "us-east1", "priority": 3, "query": "SELECT 1"});
    for (key, value) in extra.as_object().unwrap() {
        arguments[key] = value.clone();
    }
    arguments
}

#[track_caller]
fn assert_ran(status: reqwest::StatusCode, answer: &Value) {
    assert!(status.is_success(), "{status} {answer}");
    assert_eq!(answer["result"]["isError"], false, "{answer}");
}

/// [`call`], checking that the call ran: the answer.
async fn ran(
    addr: std::net::SocketAddr,
    tool: &str,
    arguments: Value,
    params: &[(&str, &str)],
) -> Value {
    let (status, answer) = call(addr, tool, arguments, params).await;
    assert_ran(status, &answer);
    answer
}

#[track_caller]
fn assert_mismatch(case: &str, status: reqwest::StatusCode, answer: &Value) {
    assert_eq!(status, reqwest::StatusCode::BAD_REQUEST, "{case}: {answer}");
    assert_eq!(answer["id"], 41, "{case}: {answer}");
    assert_eq!(answer["error"]["code"], -32020, "{case}: {answer}");
}

#[tokio::test]
async fn param_headers_that_match_the_arguments_let_the_call_run() {
    let (addr, shutdown) = serve().await;
    let answer = ran(addr, "test_custom_headers", required(json!({})), REQUIRED).await;
    assert_eq!(
        answer["result"]["content"][0]["text"],
        "Custom headers test completed"
    );

    // Base64-wrapped values are compared decoded; booleans as true/false;
    // numbers by value; surrounding whitespace of a header is not its value.
    let arguments = required(json!({
        "non_ascii_val": "héllo", "whitespace_val": "  padded  ",
        "crlf_val": "a\r\nb", "verbose": true, "internal_space_val": "a b c"
    }));
    let params = [
        ("Region", "=?base64?dXMtZWFzdDE=?="),
        ("Priority", "3.0"),
        ("NonAscii", "=?base64?aMOpbGxv?="),
        ("Whitespace", "=?base64?ICBwYWRkZWQgIA==?="),
        ("CrLf", "=?base64?YQ0KYg==?="),
        ("Verbose", "true"),
        ("InternalSpace", " a b c "),
    ];
    ran(addr, "test_custom_headers", arguments, &params).await;

    // An argument left out has no header (the null tool's `verbose`).
    ran(
        addr,
        "test_custom_headers_null",
        required(json!({})),
        REQUIRED,
    )
    .await;
    shutdown.cancel();
}

#[tokio::test]
async fn a_value_without_the_whole_base64_wrapper_is_compared_as_written() {
    let (addr, shutdown) = serve().await;
    for literal in ["SGVsbG8=", "=?base64?SGVsbG8=", "SGVsbG8=?="] {
        let arguments = required(json!({"region": literal}));
        ran(
            addr,
            "test_custom_headers",
            arguments,
            &[("Region", literal), PRIORITY],
        )
        .await;
    }
    shutdown.cancel();
}

#[tokio::test]
async fn param_headers_that_contradict_the_body_are_refused_with_400_and_header_mismatch() {
    let (addr, shutdown) = serve().await;
    let hello = || required(json!({"region": "Hello"}));
    let cases: Vec<(&str, Value, Params)> = vec![
        (
            "another value",
            required(json!({})),
            vec![("Region", "eu-west1"), PRIORITY],
        ),
        ("a header left out", required(json!({})), vec![PRIORITY]),
        (
            "another number",
            required(json!({})),
            vec![REGION, ("Priority", "4")],
        ),
        (
            "not a number",
            required(json!({})),
            vec![REGION, ("Priority", "three")],
        ),
        (
            "another boolean",
            required(json!({"debug": false})),
            vec![REGION, PRIORITY, ("Debug", "False")],
        ),
        (
            "Base64 without padding",
            hello(),
            vec![("Region", "=?base64?SGVsbG8?="), PRIORITY],
        ),
        (
            "Base64 with other characters",
            hello(),
            vec![("Region", "=?base64?SGVs!!!bG8=?="), PRIORITY],
        ),
        (
            "Base64 of another value",
            hello(),
            vec![("Region", "=?base64?SGVsbG8h?="), PRIORITY],
        ),
        (
            "the header sent twice",
            required(json!({})),
            vec![REGION, REGION, PRIORITY],
        ),
        (
            "a header for an absent argument",
            required(json!({})),
            vec![REGION, PRIORITY, ("Verbose", "true")],
        ),
        (
            "a header for a null argument",
            required(json!({"verbose": null})),
            vec![REGION, PRIORITY, ("Verbose", "null")],
        ),
    ];
    for (case, arguments, params) in cases {
        let (status, answer) = call(addr, "test_custom_headers", arguments, &params).await;
        assert_mismatch(case, status, &answer);
    }
    shutdown.cancel();
}

#[tokio::test]
async fn a_tool_without_x_mcp_header_and_an_older_protocol_are_not_checked() {
    let (addr, shutdown) = serve().await;
    let arguments = json!({"a": 2, "op": "add", "b": 3});
    let answer = ran(addr, "calculate", arguments, &[("Region", "anything")]).await;
    assert_eq!(answer["result"]["content"][0]["text"], "5.0");

    // A 2025-11-25 client sends no such headers.
    let session = initialized_session(addr).await;
    let body = json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call",
                      "params": {"name": "test_custom_headers", "arguments": required(json!({}))}});
    let (status, messages) = session.send(reqwest::Method::POST, body.to_string()).await;
    assert_ran(status, &messages[0]);
    shutdown.cancel();
}
