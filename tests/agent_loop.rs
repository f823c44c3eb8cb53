//! The `openai_agent` example's loop against a local server on 127.0.0.1
//! that answers with recorded Chat Completions responses
//! (`tests/fixtures/openai/`).

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use tinyagents_tools::ToolExecutor;
use tinyagents_tools::spec::SafetyItem;
use tinyagents_tools_examples::agent::{
    Agent, AgentConfig, AgentError, AgentOutcome, ApiKey, ClientError, Invocation, StopReason, cli,
};
use tinyagents_tools_examples::{NoteBook, quickstart_registry, quickstart_run};
use tinyagents_tools_tests::assert_contains_all;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use tokio::task::JoinHandle;

const KEY: &str = "sk-test-5f1e0c9a7b3d4e21";
const TOOL_CALLS: &str = include_str!("fixtures/openai/chat_tool_calls.json");
const FINAL_ANSWER: &str = include_str!("fixtures/openai/chat_final_answer.json");

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

/// A minimal HTTP/1.1 server that answers each request with the next
/// recorded response (status and body), then 500 once they run out.
struct FakeOpenAi {
    base_url: String,
    received: Arc<Mutex<Vec<Received>>>,
    task: JoinHandle<()>,
}

impl FakeOpenAi {
    async fn start(responses: Vec<(u16, String)>) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base_url = format!("http://{}/v1", listener.local_addr().unwrap());
        let received = Arc::new(Mutex::new(Vec::new()));
        let log = received.clone();
        let task = tokio::spawn(async move {
            let mut responses = responses.into_iter();
            loop {
                let Ok((mut stream, _)) = listener.accept().await else {
                    return;
                };
                let Some(request) = read_request(&mut stream).await else {
                    continue;
                };
                log.lock().unwrap().push(request);
                let (status, body) = responses.next().unwrap_or((
                    500,
                    r#"{"error":{"message":"no more recorded responses"}}"#.into(),
                ));
                let head = format!(
                    "HTTP/1.1 {status} {}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
                    if status == 200 { "OK" } else { "Error" },
                    body.len()
                );
                let _ = stream.write_all(head.as_bytes()).await;
                let _ = stream.write_all(body.as_bytes()).await;
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
