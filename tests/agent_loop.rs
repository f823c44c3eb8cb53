//! The `openai_agent` example's loop against a local server on 127.0.0.1
//! that answers with recorded responses (`tests/fixtures/openai/`): whole
//! Chat Completions responses, their streamed form (server-sent events),
//! and streamed raw completions whose text carries the calls.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use tinyagents_tools::ToolExecutor;
use tinyagents_tools::spec::SafetyItem;
use tinyagents_tools::stream::StreamEvent;
use tinyagents_tools::stream::text::TextFormat;
use tinyagents_tools_examples::agent::{
    Agent, AgentConfig, AgentError, AgentEvent, AgentOutcome, ApiKey, ClientError, Invocation,
    StopReason, cli,
};
use tinyagents_tools_examples::{NoteBook, quickstart_registry, quickstart_run};
use tinyagents_tools_tests::assert_contains_all;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use tokio::task::JoinHandle;

const KEY: &str = "sk-test-5f1e0c9a7b3d4e21";
const TOOL_CALLS: &str = include_str!("fixtures/openai/chat_tool_calls.json");
const FINAL_ANSWER: &str = include_str!("fixtures/openai/chat_final_answer.json");
const STREAM_TOOL_CALLS: &str = include_str!("fixtures/openai/chat_stream_tool_calls.sse");
const STREAM_FINAL_ANSWER: &str = include_str!("fixtures/openai/chat_stream_final_answer.sse");
const STREAM_CUT_MID_CALL: &str = include_str!("fixtures/openai/chat_stream_cut_mid_call.sse");
const HERMES_CALLS: &str = include_str!("fixtures/openai/completion_stream_hermes_calls.sse");
const HERMES_ANSWER: &str = include_str!("fixtures/openai/completion_stream_hermes_answer.sse");
const HERMES_MALFORMED: &str =
    include_str!("fixtures/openai/completion_stream_hermes_malformed.sse");
const HERMES_NAMELESS: &str = include_str!("fixtures/openai/completion_stream_hermes_nameless.sse");
const STREAM_MALFORMED_CALL: &str = include_str!("fixtures/openai/chat_stream_malformed_call.sse");
/// The final answer both recorded final streams spell out.
const STREAMED_ANSWER: &str =
    "Retries back off exponentially (see \"Retries and timeouts\"), and 6 × 7 = 42.";

/// One request the server received.
#[derive(Debug, Clone)]
struct Received {
    request_line: String,
    headers: Vec<(String, String)>,
    body: Value,
}

impl Received {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// A condition the server waits for, in the middle of a stream.
type Condition = Arc<dyn Fn() -> bool + Send + Sync>;

/// One piece of a streamed reply.
enum Piece {
    /// Bytes, written and flushed on their own.
    Bytes(Vec<u8>),
    /// Waits (up to 10 s) until the condition holds before the next piece,
    /// and records in the flag whether it came to hold.
    Until(Condition, Arc<AtomicBool>),
}

/// One recorded reply.
enum Reply {
    /// A whole JSON response with its status.
    Json(u16, String),
    /// `200 text/event-stream`, its body written piece by piece, the end of
    /// the body marked by closing the connection.
    Stream(Vec<Piece>),
    /// `200 text/event-stream` in chunked encoding, each piece a chunk, the
    /// connection closed without the last chunk: the body breaks off.
    Broken(Vec<Vec<u8>>),
}

/// A streamed reply: `sse` written in pieces of `size` bytes (cut anywhere,
/// inside events and characters, as a network may cut it).
fn sse(text: &str, size: usize) -> Reply {
    Reply::Stream(pieces(text, size))
}

fn pieces(text: &str, size: usize) -> Vec<Piece> {
    text.as_bytes()
        .chunks(size)
        .map(|c| Piece::Bytes(c.to_vec()))
        .collect()
}

/// A minimal HTTP/1.1 server that answers each request with the next
/// recorded reply, then 500 once they run out.
struct FakeOpenAi {
    base_url: String,
    received: Arc<Mutex<Vec<Received>>>,
    task: JoinHandle<()>,
}

impl FakeOpenAi {
    async fn start(responses: Vec<(u16, String)>) -> Self {
        let replies = responses
            .into_iter()
            .map(|(status, body)| Reply::Json(status, body))
            .collect();
        FakeOpenAi::replying(replies).await
    }

    async fn replying(replies: Vec<Reply>) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base_url = format!("http://{}/v1", listener.local_addr().unwrap());
        let received = Arc::new(Mutex::new(Vec::new()));
        let log = received.clone();
        let task = tokio::spawn(async move {
            let mut replies = replies.into_iter();
            loop {
                let Ok((mut stream, _)) = listener.accept().await else {
                    return;
                };
                let Some(request) = read_request(&mut stream).await else {
                    continue;
                };
                log.lock().unwrap().push(request);
                let reply = replies.next().unwrap_or(Reply::Json(
                    500,
                    r#"{"error":{"message":"no more recorded responses"}}"#.into(),
                ));
                match reply {
                    Reply::Json(status, body) => {
                        let head = format!(
                            "HTTP/1.1 {status} {}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
                            if status == 200 { "OK" } else { "Error" },
                            body.len()
                        );
                        let _ = stream.write_all(head.as_bytes()).await;
                        let _ = stream.write_all(body.as_bytes()).await;
                    }
                    Reply::Stream(pieces) => {
                        let head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\nconnection: close\r\n\r\n";
                        let _ = stream.write_all(head.as_bytes()).await;
                        for piece in pieces {
                            match piece {
                                Piece::Bytes(bytes) => {
                                    let _ = stream.write_all(&bytes).await;
                                    let _ = stream.flush().await;
                                }
                                Piece::Until(condition, held) => {
                                    for _ in 0..2000 {
                                        if condition() {
                                            held.store(true, Ordering::SeqCst);
                                            break;
                                        }
                                        tokio::time::sleep(Duration::from_millis(5)).await;
                                    }
                                }
                            }
                        }
                    }
                    Reply::Broken(chunks) => {
                        let head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n";
                        let _ = stream.write_all(head.as_bytes()).await;
                        for chunk in chunks {
                            let _ = stream
                                .write_all(format!("{:x}\r\n", chunk.len()).as_bytes())
                                .await;
                            let _ = stream.write_all(&chunk).await;
                            let _ = stream.write_all(b"\r\n").await;
                            let _ = stream.flush().await;
                        }
                    }
                }
                let _ = stream.shutdown().await;
            }
        });
        FakeOpenAi {
            base_url,
            received,
            task,
        }
    }

    fn received(&self) -> Vec<Received> {
        self.received.lock().unwrap().clone()
    }
}

impl Drop for FakeOpenAi {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Reads one request: the head up to the blank line, then `content-length`
/// bytes of body. At most 1 MiB.
async fn read_request(stream: &mut tokio::net::TcpStream) -> Option<Received> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 8192];
    let head_end = loop {
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i;
        }
        let n = stream.read(&mut chunk).await.ok()?;
        if n == 0 || buf.len() > 1 << 20 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8(buf[..head_end].to_vec()).ok()?;
    let mut lines = head.split("\r\n");
    let request_line = lines.next()?.to_owned();
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_owned(), v.trim().to_owned()))
        .collect();
    let length: usize = headers
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case("content-length"))
        .and_then(|(_, v)| v.parse().ok())?;
    let mut body = buf[head_end + 4..].to_vec();
    while body.len() < length {
        let n = stream.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        body.extend_from_slice(&chunk[..n]);
    }
    Some(Received {
        request_line,
        headers,
        body: serde_json::from_slice(&body).ok()?,
    })
}

fn env(server: &FakeOpenAi) -> impl Fn(&str) -> Option<String> + use<> {
    let base = server.base_url.clone();
    move |name| match name {
        "OPENAI_BASE_URL" => Some(base.clone()),
        "OPENAI_API_KEY" => Some(KEY.to_owned()),
        "OPENAI_MODEL" => Some("gpt-4.1-mini".to_owned()),
        _ => None,
    }
}

fn args(words: &[&str]) -> Vec<String> {
    words.iter().map(|w| w.to_string()).collect()
}

async fn bounded<T>(f: impl Future<Output = T>) -> T {
    tokio::time::timeout(Duration::from_secs(30), f)
        .await
        .expect("the agent finished within 30 s")
}

fn tool_names(request: &Value) -> Vec<String> {
    request["tools"]
        .as_array()
        .expect("tools are declared")
        .iter()
        .map(|t| {
            assert_eq!(t["type"], "function");
            t["function"]["name"].as_str().unwrap().to_owned()
        })
        .collect()
}

#[tokio::test]
async fn the_agent_runs_the_models_tool_calls_and_prints_its_final_answer() {
    let server = FakeOpenAi::start(vec![
        (200, TOOL_CALLS.to_owned()),
        (200, FINAL_ANSWER.to_owned()),
    ])
    .await;
    let workspace = tempfile::tempdir().unwrap();
    let (mut out, mut err) = (Vec::new(), Vec::new());

    let code = bounded(cli(
        args(&[
            "--no-stream",
            "--workspace",
            workspace.path().to_str().unwrap(),
            "How do retries work? And what is 6 * 7?",
        ]),
        env(&server),
        &mut out,
        &mut err,
    ))
    .await;
    let (out, err) = (
        String::from_utf8(out).unwrap(),
        String::from_utf8(err).unwrap(),
    );
    assert_eq!(code, 0, "stdout:\n{out}\nstderr:\n{err}");

    let received = server.received();
    assert_eq!(received.len(), 2);
    for request in &received {
        assert_eq!(request.request_line, "POST /v1/chat/completions HTTP/1.1");
        assert_eq!(
            request.header("authorization"),
            Some(&*format!("Bearer {KEY}"))
        );
        assert_eq!(request.header("content-type"), Some("application/json"));
        assert_eq!(request.body["model"], "gpt-4.1-mini");
        assert_eq!(request.body.get("stream"), None, "not streamed");
        assert_eq!(
            tool_names(&request.body),
            ["search_docs", "read_file", "calculate"],
            "write_note needs confirmation and is not offered"
        );
    }

    let first = &received[0].body["messages"];
    assert_eq!(first.as_array().unwrap().len(), 2);
    assert_eq!(
        first[1],
        json!({"role": "user", "content": "How do retries work? And what is 6 * 7?"})
    );

    let second = received[1].body["messages"].as_array().unwrap();
    assert_eq!(
        second.len(),
        5,
        "system, user, assistant, two tool messages"
    );
    let recorded: Value = serde_json::from_str(TOOL_CALLS).unwrap();
    assert_eq!(second[2]["role"], "assistant");
    assert_eq!(
        second[2]["tool_calls"],
        recorded["choices"][0]["message"]["tool_calls"]
    );
    assert_eq!(second[3]["role"], "tool");
    assert_eq!(second[3]["tool_call_id"], "call_Qm3v8XbR2kT9wLpN4sYd7JhA");
    let hits: Value = serde_json::from_str(second[3]["content"].as_str().unwrap()).unwrap();
    assert_eq!(
        hits.as_array().unwrap().len(),
        1,
        "the model's limit of 1 held"
    );
    assert_eq!(hits[0]["id"], "retries");
    assert_eq!(second[4]["role"], "tool");
    assert_eq!(second[4]["tool_call_id"], "call_Zt6nH1cW5eR0uKjM8bVx3PqS");
    assert_eq!(
        second[4]["content"]
            .as_str()
            .unwrap()
            .parse::<f64>()
            .unwrap(),
        42.0
    );

    let answer: Value = serde_json::from_str(FINAL_ANSWER).unwrap();
    let answer = answer["choices"][0]["message"]["content"].as_str().unwrap();
    assert_contains_all(
        &out,
        &[
            answer,
            "[turn 1] call_Qm3v8XbR2kT9wLpN4sYd7JhA search_docs",
            "[turn 1] call_Zt6nH1cW5eR0uKjM8bVx3PqS calculate",
            "-> ok: 42",
        ],
    );
    assert!(
        !out.contains(KEY) && !err.contains(KEY),
        "the key is never printed"
    );
}

fn agent(server: &FakeOpenAi, max_turns: u32) -> Agent {
    let mut config = AgentConfig::new(server.base_url.clone(), "gpt-4.1-mini");
    config.api_key = Some(ApiKey::new(KEY));
    config.max_turns = max_turns;
    config.request_timeout = Duration::from_secs(10);
    // These turns read whole responses.
    config.stream = false;
    quickstart_agent(config)
}

/// An agent with `config` over the quickstart's tools.
fn quickstart_agent(config: AgentConfig) -> Agent {
    let executor = ToolExecutor::builder(quickstart_registry().unwrap(), ())
        // `write_note` needs confirmation; these turns never advertise it.
        .unenforced(SafetyItem::Confirmation)
        .build()
        .unwrap();
    Agent::new(config, Arc::new(executor)).unwrap()
}

/// Runs `agent` once on `hello`, in a quickstart run of the current
/// directory.
async fn say_hello(agent: &Agent) -> Result<AgentOutcome, AgentError> {
    let run = quickstart_run(std::path::Path::new("."), Arc::new(NoteBook::default()));
    bounded(agent.run(&run, "hello")).await
}

#[tokio::test]
async fn the_loop_stops_after_max_turns_when_the_model_keeps_calling_tools() {
    let server = FakeOpenAi::start(vec![(200, TOOL_CALLS.to_owned()); 3]).await;
    let agent = agent(&server, 2);
    let dir = tempfile::tempdir().unwrap();
    let run = quickstart_run(dir.path(), Arc::new(NoteBook::default()));

    let outcome = bounded(agent.run(&run, "loop forever")).await.unwrap();

    assert_eq!(outcome.stop, StopReason::MaxTurns);
    assert_eq!(outcome.answer, None);
    assert_eq!(server.received().len(), 2, "no request after the bound");
    assert_eq!(outcome.trace.len(), 4);
}

#[tokio::test]
async fn a_call_to_a_tool_that_was_not_offered_is_refused_and_the_model_is_told() {
    let mut reply: Value = serde_json::from_str(TOOL_CALLS).unwrap();
    reply["choices"][0]["message"]["tool_calls"] = json!([{
        "id": "call_note",
        "type": "function",
        "function": {"name": "write_note", "arguments": "{\"title\":\"t\",\"body\":\"b\"}"}
    }]);
    let server = FakeOpenAi::start(vec![
        (200, reply.to_string()),
        (200, FINAL_ANSWER.to_owned()),
    ])
    .await;
    let agent = agent(&server, 4)
        .advertising(["search_docs", "calculate"])
        .unwrap();
    let notebook = Arc::new(NoteBook::default());
    let dir = tempfile::tempdir().unwrap();
    let run = quickstart_run(dir.path(), notebook.clone());

    let outcome = bounded(agent.run(&run, "write a note")).await.unwrap();

    assert_eq!(outcome.stop, StopReason::Answered);
    assert_eq!(outcome.trace[0].error, Some("not_advertised"));
    assert!(notebook.notes().is_empty());
    let sent = &server.received()[1].body["messages"];
    assert_eq!(sent[3]["tool_call_id"], "call_note");
    assert!(
        sent[3]["content"].as_str().unwrap().contains("write_note"),
        "{}",
        sent[3]
    );
}

#[tokio::test]
async fn an_error_status_is_reported_with_the_key_masked() {
    let echo = format!(
        r#"{{"error":{{"message":"Incorrect API key provided: {KEY}.","code":"invalid_api_key"}}}}"#
    );
    let server = FakeOpenAi::start(vec![(401, echo)]).await;
    let agent = agent(&server, 2);
    let run = quickstart_run(std::path::Path::new("."), Arc::new(NoteBook::default()));

    let error = bounded(agent.run(&run, "hello")).await.unwrap_err();

    let text = error.to_string();
    assert!(text.contains("401"), "{text}");
    assert!(text.contains("Incorrect API key provided: ***."), "{text}");
    assert!(!text.contains(KEY), "{text}");
    assert!(matches!(
        error,
        tinyagents_tools_examples::agent::AgentError::Client(ClientError::Status {
            status: 401,
            ..
        })
    ));
    assert!(!format!("{agent:?}").contains(KEY));
}

#[tokio::test]
async fn a_reply_without_choices_is_a_protocol_error_naming_the_message_pointer() {
    let server = FakeOpenAi::start(vec![(
        200,
        r#"{"id":"chatcmpl-1","object":"chat.completion"}"#.to_owned(),
    )])
    .await;
    let agent = agent(&server, 2);
    let run = quickstart_run(std::path::Path::new("."), Arc::new(NoteBook::default()));

    let error = bounded(agent.run(&run, "hello")).await.unwrap_err();

    assert_eq!(
        error.to_string(),
        "the reply is not a Chat Completions response: `/choices/0/message` is missing"
    );
    assert_eq!(server.received().len(), 1, "no second request");
}

#[test]
fn the_command_line_reads_the_environment_and_flags() {
    let env = |name: &str| match name {
        "OPENAI_API_KEY" => Some(KEY.to_owned()),
        "OPENAI_MODEL" => Some("from-env".to_owned()),
        _ => None,
    };

    let parsed = Invocation::parse(args(&["--max-turns", "3", "what", "is", "new?"]), env).unwrap();

    assert_eq!(parsed.prompt, "what is new?");
    assert_eq!(parsed.config.model, "from-env");
    assert_eq!(parsed.config.base_url, "https://api.openai.com/v1");
    assert_eq!(parsed.config.max_turns, 3);
    assert!(!format!("{parsed:?}").contains(KEY));

    let flag = Invocation::parse(args(&["--model", "m", "hi"]), env).unwrap();
    assert_eq!(flag.config.model, "m");
    let none = |_: &str| None;
    assert_eq!(
        Invocation::parse(args(&["hi"]), none)
            .unwrap_err()
            .to_string(),
        "no model: pass --model NAME or set OPENAI_MODEL"
    );
    assert!(Invocation::parse(args(&["--max-turns", "0", "hi"]), env).is_err());
    assert!(Invocation::parse(args(&[]), env).is_err());

    assert!(parsed.config.stream, "streamed by default");
    assert_eq!(parsed.config.text_format, None);
    let whole = Invocation::parse(args(&["--no-stream", "hi"]), env).unwrap();
    assert!(!whole.config.stream);
    let text = Invocation::parse(
        args(&[
            "--text-format",
            "tags:[TOOL_CALL],[/TOOL_CALL]",
            "--max-tokens",
            "64",
            "hi",
        ]),
        env,
    )
    .unwrap();
    assert_eq!(
        text.config.text_format,
        Some(TextFormat::tags("[TOOL_CALL]", "[/TOOL_CALL]"))
    );
    assert_eq!(text.config.max_tokens, 64);
    assert!(text.config.stream);
    let error = |words: &[&str]| Invocation::parse(args(words), env).unwrap_err().to_string();
    assert_eq!(
        error(&["--text-format", "llama5", "hi"]),
        "--text-format: unknown text format \"llama5\": expected one of hermes, qwen3-coder, \
         glm45, llama3-json, pythonic, mistral, mistral-v11, deepseek-v3, deepseek-v31, kimi-k2, \
         harmony or tags:START,END"
    );
    assert_eq!(
        error(&["--text-format", "hermes", "--strict", "hi"]),
        "--strict applies to declared tools, not to --text-format"
    );
    assert_eq!(
        error(&["--max-tokens", "0", "hi"]),
        "--max-tokens must be a number from 1 to 1000000, not `0`"
    );
}

#[tokio::test]
async fn help_prints_the_modes_and_flags_and_exits_0() {
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let code = cli(args(&["--help"]), |_: &str| None, &mut out, &mut err).await;
    let out = String::from_utf8(out).unwrap();
    assert_eq!(code, 0);
    assert_contains_all(
        &out,
        &[
            "--no-stream",
            "--text-format FORMAT",
            "hermes",
            "tags:START,END",
            "--max-tokens N",
            "Streams each reply",
        ],
    );
    let mut err = Vec::new();
    let code = cli(
        args(&["--stream"]),
        |_: &str| None,
        &mut Vec::new(),
        &mut err,
    )
    .await;
    assert_eq!(code, 2, "{}", String::from_utf8_lossy(&err));
}

#[tokio::test]
async fn a_refused_connection_is_reported_with_its_cause() {
    let port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let mut config = AgentConfig::new(format!("http://127.0.0.1:{port}/v1"), "m");
    config.request_timeout = Duration::from_secs(10);
    let error = say_hello(&quickstart_agent(config)).await.unwrap_err();

    let text = error.to_string();
    assert!(
        text.contains(&format!("http://127.0.0.1:{port}/v1/chat/completions")),
        "{text}"
    );
    assert!(
        text.contains("tcp connect error"),
        "the cause is shown: {text}"
    );
}

#[tokio::test]
async fn strict_requests_declare_strict_tools_and_turn_off_parallel_calls() {
    let server = FakeOpenAi::start(vec![(200, FINAL_ANSWER.to_owned())]).await;
    let mut config = AgentConfig::new(server.base_url.clone(), "m");
    config.strict = true;
    config.stream = false;
    config.system_prompt = None;
    let outcome = say_hello(&quickstart_agent(config)).await.unwrap();

    assert_eq!(outcome.stop, StopReason::Answered);
    let body = &server.received()[0].body;
    assert_eq!(body["parallel_tool_calls"], false);
    assert_eq!(
        body["messages"].as_array().unwrap().len(),
        1,
        "no system message"
    );
    assert_eq!(
        server.received()[0].header("authorization"),
        None,
        "no key, no header"
    );
    for tool in body["tools"].as_array().unwrap() {
        assert_eq!(tool["function"]["strict"], true, "{tool}");
        assert_eq!(
            tool["function"]["parameters"]["additionalProperties"], false,
            "{tool}"
        );
    }
}

/// The text a recorded Completions stream carries: its chunks'
/// `choices[0].text`, joined.
fn completion_text(sse: &str) -> String {
    sse.lines()
        .filter_map(|line| line.strip_prefix("data: "))
        .filter(|data| *data != "[DONE]")
        .map(|data| {
            let chunk: Value = serde_json::from_str(data).unwrap();
            chunk["choices"][0]["text"].as_str().unwrap().to_owned()
        })
        .collect()
}

/// Runs the command line with `words` against `server`, returning the exit
/// code, stdout and stderr.
async fn run_cli(server: &FakeOpenAi, words: &[&str]) -> (i32, String, String) {
    let workspace = tempfile::tempdir().unwrap();
    let mut all = vec!["--workspace", workspace.path().to_str().unwrap()];
    all.extend_from_slice(words);
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let code = bounded(cli(args(&all), env(server), &mut out, &mut err)).await;
    (
        code,
        String::from_utf8(out).unwrap(),
        String::from_utf8(err).unwrap(),
    )
}

/// Where `part` is in `text` (it must be there).
fn at(text: &str, part: &str) -> usize {
    text.find(part)
        .unwrap_or_else(|| panic!("no {part:?} in: {text}"))
}

#[tokio::test]
async fn a_streamed_turn_shows_the_text_as_it_comes_runs_both_calls_and_answers_them() {
    let server =
        FakeOpenAi::replying(vec![sse(STREAM_TOOL_CALLS, 7), sse(STREAM_FINAL_ANSWER, 5)]).await;

    let (code, out, err) = run_cli(&server, &["How do retries work? And what is 6 * 7?"]).await;
    assert_eq!(code, 0, "stdout:\n{out}\nstderr:\n{err}");

    let received = server.received();
    assert_eq!(received.len(), 2);
    for request in &received {
        assert_eq!(request.request_line, "POST /v1/chat/completions HTTP/1.1");
        assert_eq!(request.header("accept"), Some("text/event-stream"));
        assert_eq!(request.body["stream"], true);
        assert_eq!(
            tool_names(&request.body),
            ["search_docs", "read_file", "calculate"]
        );
    }
    let sent = received[1].body["messages"].as_array().unwrap();
    assert_eq!(sent.len(), 5, "system, user, assistant, two tool messages");
    // The assistant message as the recorded deltas add up: the content
    // fragments joined, each call's id and name from its first delta and its
    // arguments the fragments of its index joined.
    assert_eq!(
        sent[2],
        json!({
            "role": "assistant",
            "content": "Let me look that up.",
            "tool_calls": [
                {"id": "call_Qm3v8XbR2kT9wLpN4sYd7JhA", "type": "function", "function":
                    {"name": "search_docs", "arguments": "{\"query\":\"retries timeouts\",\"limit\":1}"}},
                {"id": "call_Zt6nH1cW5eR0uKjM8bVx3PqS", "type": "function", "function":
                    {"name": "calculate", "arguments": "{\"a\":6,\"op\":\"multiply\",\"b\":7}"}},
            ]
        })
    );
    assert_eq!(sent[3]["role"], "tool");
    assert_eq!(sent[3]["tool_call_id"], "call_Qm3v8XbR2kT9wLpN4sYd7JhA");
    let hits: Value = serde_json::from_str(sent[3]["content"].as_str().unwrap()).unwrap();
    assert_eq!(hits.as_array().unwrap().len(), 1, "the model's limit held");
    assert_eq!(hits[0]["id"], "retries");
    assert_eq!(sent[4]["role"], "tool");
    assert_eq!(sent[4]["tool_call_id"], "call_Zt6nH1cW5eR0uKjM8bVx3PqS");
    let product: f64 = sent[4]["content"].as_str().unwrap().parse().unwrap();
    assert_eq!(product, 42.0);

    // The text of each turn, then the calls' answers, in the order they
    // happened; the final answer is not printed a second time.
    let first_text = at(&out, "Let me look that up.");
    let search = at(&out, "[turn 1] call_Qm3v8XbR2kT9wLpN4sYd7JhA search_docs");
    let calc = at(&out, "[turn 1] call_Zt6nH1cW5eR0uKjM8bVx3PqS calculate");
    let answer = at(&out, STREAMED_ANSWER);
    let end = at(&out, "(answered in 2 turns)");
    assert!(
        first_text < search && search < calc && calc < answer && answer < end,
        "{out}"
    );
    assert_eq!(out.matches(STREAMED_ANSWER).count(), 1, "{out}");
    assert_contains_all(
        &err,
        &[
            "[starting call_Qm3v8XbR2kT9wLpN4sYd7JhA search_docs]",
            "[starting call_Zt6nH1cW5eR0uKjM8bVx3PqS calculate]",
        ],
    );
    assert!(!out.contains(KEY) && !err.contains(KEY));
}

#[tokio::test]
async fn a_text_format_turn_prompts_in_the_family_s_template_and_reads_the_calls_from_the_text() {
    let server = FakeOpenAi::replying(vec![sse(HERMES_CALLS, 11), sse(HERMES_ANSWER, 3)]).await;

    let (code, out, err) = run_cli(
        &server,
        &[
            "--text-format",
            "hermes",
            "How do retries work? And what is 6 * 7?",
        ],
    )
    .await;
    assert_eq!(code, 0, "stdout:\n{out}\nstderr:\n{err}");

    let received = server.received();
    assert_eq!(received.len(), 2);
    for request in &received {
        assert_eq!(request.request_line, "POST /v1/completions HTTP/1.1");
        assert_eq!(request.body["model"], "gpt-4.1-mini");
        assert_eq!(request.body["stream"], true);
        assert_eq!(request.body["max_tokens"], 2048);
        assert_eq!(request.body["stop"], json!(["<|im_end|>"]));
        assert_eq!(
            request.body.get("skip_special_tokens"),
            None,
            "Hermes' markers are plain text"
        );
        assert_eq!(request.body.get("tools"), None);
    }
    // Qwen2.5's and Qwen3's chat template: the tools after the system text,
    // one JSON object a line inside <tools>, then the user's turn and the
    // assistant's header.
    let first = received[0].body["prompt"].as_str().unwrap();
    let head = "<|im_start|>system\nYou are a helpful assistant. Use the tools when they help; \
                answer briefly.\n\n# Tools\n\nYou may call one or more functions to assist with the \
                user query.\n\nYou are provided with function signatures within <tools></tools> XML \
                tags:\n<tools>\n";
    let tail = "\n</tools>\n\nFor each function call, return a json object with function name and \
                arguments within <tool_call></tool_call> XML tags:\n<tool_call>\n{\"name\": \
                <function-name>, \"arguments\": <args-json-object>}\n</tool_call><|im_end|>\n\
                <|im_start|>user\nHow do retries work? And what is 6 * 7?<|im_end|>\n\
                <|im_start|>assistant\n";
    assert!(first.starts_with(head), "{first}");
    assert!(first.ends_with(tail), "{first}");
    let tools: Vec<Value> = first[head.len()..first.len() - tail.len()]
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    let names: Vec<&str> = tools
        .iter()
        .map(|t| {
            assert_eq!(t["type"], "function");
            t["function"]["name"].as_str().unwrap()
        })
        .collect();
    assert_eq!(names, ["search_docs", "read_file", "calculate"]);

    // The next prompt: this one, the model's turn as it wrote it and its
    // end, the answers in <tool_response> blocks of one user turn in call
    // order, and the assistant's header again.
    let second = received[1].body["prompt"].as_str().unwrap();
    let written = completion_text(HERMES_CALLS);
    let opened = format!("{first}{written}<|im_end|>\n<|im_start|>user\n<tool_response>\n");
    let closed = "\n</tool_response><|im_end|>\n<|im_start|>assistant\n";
    assert!(second.starts_with(&opened), "{second}");
    assert!(second.ends_with(closed), "{second}");
    let answers: Vec<&str> = second[opened.len()..second.len() - closed.len()]
        .split("\n</tool_response>\n<tool_response>\n")
        .collect();
    assert_eq!(answers.len(), 2, "{second}");
    let hits: Value = serde_json::from_str(answers[0]).unwrap();
    assert_eq!(hits.as_array().unwrap().len(), 1);
    assert_eq!(hits[0]["id"], "retries");
    assert_eq!(answers[1].parse::<f64>().unwrap(), 42.0);

    // Only the visible text is printed: no markup, the reasoning on stderr.
    let text = at(&out, "Let me look that up.");
    let search = at(&out, "[turn 1] text-call-1-0 search_docs");
    let calc = at(&out, "[turn 1] text-call-1-1 calculate");
    let answer = at(&out, "Retries back off exponentially");
    assert!(text < search && search < calc && calc < answer, "{out}");
    assert_contains_all(&out, &[STREAMED_ANSWER, "(answered in 2 turns)"]);
    for markup in ["<tool_call>", "</tool_call>", "<think>", "\"arguments\""] {
        assert!(!out.contains(markup), "{markup} printed: {out}");
    }
    assert_contains_all(
        &err,
        &[
            "The user asks how retries work",
            "[starting text-call-1-0 search_docs]",
            "[starting text-call-1-1 calculate]",
            "text format: hermes",
        ],
    );
}

/// An agent over the quickstart's tools that offers `write_note` (its
/// confirmation not enforced), streaming from `server`.
fn note_agent(server: &FakeOpenAi, text_format: Option<TextFormat>) -> Agent {
    let mut config = AgentConfig::new(server.base_url.clone(), "m");
    config.request_timeout = Duration::from_secs(10);
    config.text_format = text_format;
    quickstart_agent(config)
        .advertising(["write_note"])
        .unwrap()
}

#[tokio::test]
async fn a_stream_that_ends_mid_call_runs_the_calls_before_it_early_and_answers_the_cut_one() {
    let notebook = Arc::new(NoteBook::default());
    let started = Arc::new(AtomicBool::new(false));
    // The server holds the stream after the first call's arguments close,
    // until that call has written its note: only a loop that starts calls
    // as they close gets past it before the end of the stream.
    let second = STREAM_CUT_MID_CALL.find("\"index\":1").unwrap();
    let second = STREAM_CUT_MID_CALL[..second].rfind("data: ").unwrap();
    let seen = notebook.clone();
    let mut turn = pieces(&STREAM_CUT_MID_CALL[..second], 9);
    turn.push(Piece::Until(
        Arc::new(move || seen.notes().len() == 1),
        started.clone(),
    ));
    turn.extend(pieces(&STREAM_CUT_MID_CALL[second..], 9));
    let server =
        FakeOpenAi::replying(vec![Reply::Stream(turn), sse(STREAM_FINAL_ANSWER, 64)]).await;
    let agent = note_agent(&server, None);
    let dir = tempfile::tempdir().unwrap();
    let run = quickstart_run(dir.path(), notebook.clone());
    let mut cut = Vec::new();

    let outcome = bounded(agent.run_with(&run, "save two notes", &mut |event| {
        if let AgentEvent::Output(StreamEvent::Truncated(t)) = event {
            cut.push((t.id.clone().unwrap().to_string(), t.raw.clone()));
        }
    }))
    .await
    .unwrap();

    assert!(
        started.load(Ordering::SeqCst),
        "the first call ran while the stream was still open"
    );
    let notes = notebook.notes();
    assert_eq!(notes.len(), 1, "the cut-off call did not run: {notes:?}");
    assert_eq!(
        (notes[0].title.as_str(), notes[0].body.as_str()),
        ("first", "kept")
    );
    assert_eq!(
        cut,
        [(
            "call_R7tY2uI5oP8aS1dF4gH6jKlZ".to_owned(),
            "{\"title\":\"second\",\"bo".to_owned()
        )]
    );
    assert_eq!(outcome.stop, StopReason::Answered);
    assert_eq!(outcome.answer.as_deref(), Some(STREAMED_ANSWER));
    assert_eq!(outcome.trace.len(), 2);
    assert_eq!(outcome.trace[0].error, None);
    assert_eq!(outcome.trace[1].call_id, "call_R7tY2uI5oP8aS1dF4gH6jKlZ");
    assert_eq!(outcome.trace[1].error, Some("invalid_arguments"));
    assert_eq!(outcome.trace[1].arguments, "{\"title\":\"second\",\"bo");

    // Both calls go back with the assistant message (the cut one with no
    // arguments: what arrived is not JSON), each answered by its id.
    let sent = &server.received()[1].body["messages"];
    assert_eq!(sent.as_array().unwrap().len(), 5, "{sent}");
    assert_eq!(sent[2]["content"], Value::Null);
    assert_eq!(
        sent[2]["tool_calls"],
        json!([
            {"id": "call_N4kW9pX2rT7yQ1mL5sV8bJhC", "type": "function",
             "function": {"name": "write_note", "arguments": "{\"title\":\"first\",\"body\":\"kept\"}"}},
            {"id": "call_R7tY2uI5oP8aS1dF4gH6jKlZ", "type": "function",
             "function": {"name": "write_note", "arguments": "{}"}},
        ])
    );
    assert_eq!(sent[3]["tool_call_id"], "call_N4kW9pX2rT7yQ1mL5sV8bJhC");
    let note: Value = serde_json::from_str(sent[3]["content"].as_str().unwrap()).unwrap();
    assert_eq!(note, json!({"id": 1, "title": "first", "body": "kept"}));
    assert_eq!(
        sent[4],
        json!({
            "role": "tool",
            "tool_call_id": "call_R7tY2uI5oP8aS1dF4gH6jKlZ",
            "content": "the call was cut off by the end of the output; it did not run"
        })
    );
}

#[tokio::test]
async fn a_streamed_call_whose_arguments_are_not_json_is_answered_by_its_id_and_the_other_runs() {
    let server = FakeOpenAi::replying(vec![
        sse(STREAM_MALFORMED_CALL, 10),
        sse(STREAM_FINAL_ANSWER, 64),
    ])
    .await;
    let agent = note_agent(&server, None);
    let notebook = Arc::new(NoteBook::default());
    let dir = tempfile::tempdir().unwrap();
    let run = quickstart_run(dir.path(), notebook.clone());
    let mut failed = Vec::new();

    let outcome = bounded(agent.run_with(&run, "save two notes", &mut |event| {
        if let AgentEvent::Output(StreamEvent::CallFailed(f)) = event {
            failed.push(f.clone());
        }
    }))
    .await
    .unwrap();

    let notes = notebook.notes();
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert_eq!(
        (notes[0].title.as_str(), notes[0].body.as_str()),
        ("second", "kept")
    );
    assert_eq!(failed.len(), 1);
    assert_eq!(
        failed[0].id.as_ref().map(|id| id.as_str()),
        Some("call_B2nM5qW8eR1tY4uI7oP0aSdF")
    );
    assert_eq!(failed[0].kind.as_str(), "malformed_arguments");
    assert_eq!(failed[0].raw, "{\"title\":\"first\",\"body\":}");
    assert_eq!(outcome.stop, StopReason::Answered);
    assert_eq!(outcome.trace.len(), 2);
    assert_eq!(outcome.trace[0].error, Some("invalid_arguments"));
    assert_eq!(outcome.trace[1].error, None);

    let sent = &server.received()[1].body["messages"];
    assert_eq!(
        sent[2]["tool_calls"][0]["function"],
        json!({"name": "write_note", "arguments": "{}"}),
        "arguments that are not JSON are not sent back"
    );
    assert_eq!(
        sent[3],
        json!({
            "role": "tool",
            "tool_call_id": "call_B2nM5qW8eR1tY4uI7oP0aSdF",
            "content": "the call's arguments are not one JSON object (malformed_arguments); it did not run"
        })
    );
    assert_eq!(sent[4]["tool_call_id"], "call_H3jK6lZ9xC2vB5nM8qW1eRtY");
    let note: Value = serde_json::from_str(sent[4]["content"].as_str().unwrap()).unwrap();
    assert_eq!(note, json!({"id": 1, "title": "second", "body": "kept"}));
}

#[tokio::test]
async fn a_malformed_call_in_the_text_is_answered_in_its_place_and_the_other_call_still_runs() {
    let server =
        FakeOpenAi::replying(vec![sse(HERMES_MALFORMED, 13), sse(HERMES_ANSWER, 17)]).await;
    let agent = note_agent(&server, Some(TextFormat::hermes()));
    let notebook = Arc::new(NoteBook::default());
    let dir = tempfile::tempdir().unwrap();
    let run = quickstart_run(dir.path(), notebook.clone());
    let mut failed = Vec::new();
    let mut shown = String::new();

    let outcome = bounded(
        agent.run_with(&run, "save two notes", &mut |event| match event {
            AgentEvent::Output(StreamEvent::CallFailed(f)) => failed.push(f.clone()),
            AgentEvent::Output(StreamEvent::Text(t)) => shown.push_str(t),
            _ => {}
        }),
    )
    .await
    .unwrap();

    let notes = notebook.notes();
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert_eq!(
        (notes[0].title.as_str(), notes[0].body.as_str()),
        ("second", "kept")
    );
    // The JSON broke after its name: the reader gives the call the turn's
    // generated id and the name it read (the call had started), and the
    // loop answers it in its place.
    assert_eq!(failed.len(), 1);
    assert_eq!(
        (
            failed[0].id.as_ref().map(|id| id.as_str()),
            failed[0].name.as_ref().map(|name| name.as_str())
        ),
        (Some("text-call-1-0"), Some("write_note"))
    );
    assert_eq!(failed[0].kind.as_str(), "malformed_arguments");
    assert!(shown.starts_with("I will save both notes.\n"), "{shown:?}");
    assert!(!shown.contains("tool_call"), "{shown:?}");

    assert_eq!(outcome.stop, StopReason::Answered);
    assert_eq!(outcome.answer.as_deref(), Some(STREAMED_ANSWER));
    assert_eq!(outcome.trace.len(), 2);
    assert_eq!(outcome.trace[0].call_id, "text-call-1-0");
    assert_eq!(outcome.trace[0].tool, "write_note");
    assert_eq!(outcome.trace[0].error, Some("invalid_arguments"));
    assert_eq!(outcome.trace[1].call_id, "text-call-1-1");
    assert_eq!(outcome.trace[1].error, None);

    // The answers go back in call order (Hermes matches them by position),
    // the refusal first.
    let prompt = server.received()[1].body["prompt"]
        .as_str()
        .unwrap()
        .to_owned();
    let refusal =
        "the call's arguments are not one JSON object (malformed_arguments); it did not run";
    let results = format!(
        "{}<|im_end|>\n<|im_start|>user\n<tool_response>\n{refusal}\n</tool_response>\n<tool_response>\n",
        completion_text(HERMES_MALFORMED)
    );
    let at_results = at(&prompt, &results);
    let note: Value = serde_json::from_str(
        prompt[at_results + results.len()..]
            .split("\n</tool_response>")
            .next()
            .unwrap(),
    )
    .unwrap();
    assert_eq!(note, json!({"id": 1, "title": "second", "body": "kept"}));
    assert!(prompt.ends_with("</tool_response><|im_end|>\n<|im_start|>assistant\n"));
}

#[tokio::test]
async fn a_text_call_broken_before_its_name_is_answered_in_its_place_as_unreadable() {
    let server = FakeOpenAi::replying(vec![sse(HERMES_NAMELESS, 11), sse(HERMES_ANSWER, 17)]).await;
    let agent = note_agent(&server, Some(TextFormat::hermes()));
    let notebook = Arc::new(NoteBook::default());
    let dir = tempfile::tempdir().unwrap();
    let run = quickstart_run(dir.path(), notebook.clone());
    let mut failed = Vec::new();
    let mut shown = String::new();

    let outcome = bounded(
        agent.run_with(&run, "save two notes", &mut |event| match event {
            AgentEvent::Output(StreamEvent::CallFailed(f)) => failed.push(f.clone()),
            AgentEvent::Output(StreamEvent::Text(t)) => shown.push_str(t),
            _ => {}
        }),
    )
    .await
    .unwrap();

    // Only the second call ran: the first never had a readable name.
    let notes = notebook.notes();
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert_eq!(
        (notes[0].title.as_str(), notes[0].body.as_str()),
        ("second", "kept")
    );
    // The JSON broke at the name's value: the reader gives the call the
    // turn's generated id, no name, and its raw text up to its end marker.
    assert_eq!(failed.len(), 1, "{failed:?}");
    assert_eq!(
        (failed[0].id.as_ref().map(|id| id.as_str()), &failed[0].name),
        (Some("text-call-1-0"), &None)
    );
    assert_eq!(failed[0].kind.as_str(), "malformed_arguments");
    assert!(
        failed[0].raw.contains("write_note, \"arguments\""),
        "{:?}",
        failed[0].raw
    );
    assert!(!shown.contains("tool_call"), "{shown:?}");
    assert!(!shown.contains("lost"), "{shown:?}");

    assert_eq!(outcome.stop, StopReason::Answered);
    assert_eq!(outcome.answer.as_deref(), Some(STREAMED_ANSWER));
    assert_eq!(outcome.trace.len(), 2);
    assert_eq!(outcome.trace[0].call_id, "text-call-1-0");
    assert_eq!(outcome.trace[0].tool, "unreadable_call");
    assert_eq!(outcome.trace[0].error, Some("invalid_arguments"));
    assert_eq!(outcome.trace[1].call_id, "text-call-1-1");
    assert_eq!(outcome.trace[1].error, None);

    // The refusal goes back first, in the call's place (Hermes matches
    // answers by position), then the second call's note.
    let prompt = server.received()[1].body["prompt"]
        .as_str()
        .unwrap()
        .to_owned();
    let refusal =
        "the call's arguments are not one JSON object (malformed_arguments); it did not run";
    let results = format!(
        "<|im_start|>user\n<tool_response>\n{refusal}\n</tool_response>\n<tool_response>\n"
    );
    let at_results = at(&prompt, &results);
    let note: Value = serde_json::from_str(
        prompt[at_results + results.len()..]
            .split("\n</tool_response>")
            .next()
            .unwrap(),
    )
    .unwrap();
    assert_eq!(note, json!({"id": 1, "title": "second", "body": "kept"}));
}

#[tokio::test]
async fn a_stream_that_breaks_off_stops_the_run_and_the_calls_already_started_are_answered() {
    // The first call's events, then the connection breaks inside an event
    // of the second call's arguments.
    let broken_at = STREAM_CUT_MID_CALL.len() - 100;
    let chunks = STREAM_CUT_MID_CALL.as_bytes()[..broken_at]
        .chunks(64)
        .map(<[u8]>::to_vec)
        .collect();
    let server = FakeOpenAi::replying(vec![Reply::Broken(chunks)]).await;
    let agent = note_agent(&server, None);
    let notebook = Arc::new(NoteBook::default());
    let dir = tempfile::tempdir().unwrap();
    let run = quickstart_run(dir.path(), notebook.clone());

    let outcome = bounded(agent.run(&run, "save two notes")).await.unwrap();

    let StopReason::StreamBroken { error } = &outcome.stop else {
        panic!("{:?}", outcome.stop);
    };
    assert!(error.contains("/v1/chat/completions"), "{error}");
    assert_eq!(server.received().len(), 1, "no request after the break");
    assert_eq!(notebook.notes().len(), 1, "the started call ran to its end");
    assert_eq!(outcome.trace.len(), 2);
    assert_eq!(outcome.trace[0].error, None);
    assert_eq!(outcome.trace[1].call_id, "call_R7tY2uI5oP8aS1dF4gH6jKlZ");
    assert_eq!(outcome.trace[1].error, Some("invalid_arguments"));
}
