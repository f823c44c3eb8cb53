//! One streamed turn through `stream::execute_streamed`: calls start while
//! the model is still writing, answers come back in call order, failed and
//! truncated calls are answered without running, a failing piece stream
//! lets started calls finish, and every event reaches the callback in
//! order.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::Stream;
use serde_json::{Value, json};
use tinyagents_tools::stream::native::{NativeFormat, NativeOptions, NativeReader, parse_response};
use tinyagents_tools::stream::{FinishReason, StreamEvent, execute_streamed};
use tinyagents_tools::testkit::{Chunking, FnTool, ScriptedStream, chunk_bytes};
use tinyagents_tools::*;
use tinyagents_tools_tests::*;
use tokio::sync::{Notify, mpsc};

use crate::native_common::events;

/// The error of a piece stream that failed (a dropped connection).
#[derive(Debug, Clone, PartialEq)]
struct Dropped;

/// A stream of the pieces sent on the channel, ended when the sender is
/// dropped: a response body as it arrives.
fn body() -> (
    mpsc::UnboundedSender<Result<String, Dropped>>,
    impl Stream<Item = Result<String, Dropped>> + Send,
) {
    let (tx, rx) = mpsc::unbounded_channel();
    let pieces = futures_util::stream::unfold(rx, |mut rx| async move {
        rx.recv().await.map(|piece| (piece, rx))
    });
    (tx, pieces)
}

/// One Chat Completions chunk as an SSE event.
fn chat(delta: Value) -> String {
    let chunk = json!({"choices": [{"index": 0, "delta": delta, "finish_reason": null}]});
    format!("data: {chunk}\n\n")
}

/// The first fragment of the chat call `index`.
fn chat_call(index: u64, id: &str, name: &str, arguments: &str) -> String {
    chat(
        json!({"tool_calls": [{"index": index, "id": id, "type": "function",
        "function": {"name": name, "arguments": arguments}}]}),
    )
}

/// The chat stream's end.
fn chat_end(reason: &str) -> String {
    let chunk = json!({"choices": [{"index": 0, "delta": {}, "finish_reason": reason}]});
    format!("data: {chunk}\n\ndata: [DONE]\n\n")
}

/// One Anthropic event as a JSON line.
fn line(event: Value) -> String {
    format!("{event}\n")
}

/// An Anthropic tool_use block `index` whose input arrives as `partial`
/// (closed with its stop unless `open`).
fn anthropic_call(index: u64, id: Option<&str>, name: &str, partial: &str, open: bool) -> String {
    let mut block = json!({"type": "tool_use", "name": name, "input": {}});
    if let Some(id) = id {
        block["id"] = json!(id);
    }
    let mut lines =
        line(json!({"type": "content_block_start", "index": index, "content_block": block}))
            + &line(json!({"type": "content_block_delta", "index": index,
            "delta": {"type": "input_json_delta", "partial_json": partial}}));
    if !open {
        lines += &line(json!({"type": "content_block_stop", "index": index}));
    }
    lines
}

/// A pure tool named `name` that says it started (on `started`), waits
/// until `release` is notified, and answers `ran <call id>`.
fn signalling(name: &str, started: &Arc<Notify>, release: &Arc<Notify>) -> Arc<dyn Tool> {
    let (started, release) = (Arc::clone(started), Arc::clone(release));
    Arc::new(FnTool::new(
        empty_input(name)
            .safety(ToolSafety::pure())
            .build()
            .unwrap(),
        move |rt, _| {
            let (started, release) = (Arc::clone(&started), Arc::clone(&release));
            Box::pin(async move {
                started.notify_one();
                release.notified().await;
                Ok(ToolOutput::text(format!("ran {}", rt.call_id().as_str())))
            })
        },
    ))
}

async fn bounded<T>(what: &str, f: impl Future<Output = T>) -> T {
    tokio::time::timeout(Duration::from_secs(10), f)
        .await
        .unwrap_or_else(|_| panic!("{what}"))
}

fn ids(results: &[ToolResult]) -> Vec<&str> {
    results.iter().map(|r| r.tool_call_id.as_str()).collect()
}

#[tokio::test]
async fn a_call_starts_while_the_model_is_still_writing_the_next_one() {
    let (started, release) = (Arc::new(Notify::new()), Arc::new(Notify::new()));
    let exec = executor(vec![signalling("slow", &started, &release), echo()])
        .build()
        .unwrap();
    let (tx, pieces) = body();
    // The model writes its second call only once the first one's body is
    // running, and the first call's closing `}` is the last byte of its
    // piece: were calls held until the stream ended (or until the next
    // piece), this would wait for ever.
    let model = async {
        tx.send(Ok(chat(json!({"content": "Two calls."})))).unwrap();
        tx.send(Ok(chat_call(0, "c1", "slow", "{"))).unwrap();
        tx.send(Ok(chat(
            json!({"tool_calls": [{"index": 0, "function": {"arguments": "}"}}]}),
        )))
        .unwrap();
        started.notified().await;
        tx.send(Ok(chat_call(1, "c2", "echo", r#"{"text": "after"}"#)))
            .unwrap();
        tx.send(Ok(chat_end("tool_calls"))).unwrap();
        release.notify_one();
        drop(tx);
    };
    let (run, turn) = (RunContext::empty(), Turn::new(1));
    let streamed = execute_streamed(
        &exec,
        &run,
        &turn,
        NativeReader::new(NativeFormat::OpenAiChat),
        pieces,
        |_| {},
    );
    let ((), streamed) = bounded(
        "the first call did not start before the stream went on",
        async { tokio::join!(model, streamed) },
    )
    .await;

    assert_eq!(ids(&streamed.results), ["c1", "c2"]);
    assert_eq!(streamed.results[0].text(), "ran c1");
    assert_eq!(streamed.results[1].text(), "after");
    assert_eq!(streamed.output.text(), "Two calls.");
    assert!(streamed.error.is_none());
}

#[tokio::test]
async fn a_ready_call_starts_before_the_next_piece_is_read_even_when_it_is_already_there() {
    // One log for what the callback saw and what the tool ran, in order.
    let log = Arc::new(Mutex::new(Vec::<String>::new()));
    let tool_log = Arc::clone(&log);
    let logging = FnTool::new(
        empty_input("note")
            .safety(ToolSafety::pure())
            .build()
            .unwrap(),
        move |rt, _| {
            let log = Arc::clone(&tool_log);
            Box::pin(async move {
                log.lock()
                    .unwrap()
                    .push(format!("run {}", rt.call_id().as_str()));
                Ok(ToolOutput::text("noted"))
            })
        },
    );
    let exec = executor(vec![Arc::new(logging)]).build().unwrap();
    // Every piece is there at once: nothing makes the reading wait.
    let body = [
        chat_call(0, "c1", "note", "{}"),
        chat(json!({"content": "between"})),
        chat_call(1, "c2", "note", "{}"),
        chat_end("tool_calls"),
    ];
    let (run, turn) = (RunContext::empty(), Turn::new(1));
    let streamed = execute_streamed(
        &exec,
        &run,
        &turn,
        NativeReader::new(NativeFormat::OpenAiChat),
        futures_util::stream::iter(body.map(Ok::<_, Dropped>)),
        |event| match event {
            StreamEvent::CallReady(ready) => log
                .lock()
                .unwrap()
                .push(format!("ready {}", ready.call.id.as_str())),
            StreamEvent::Text(text) => log.lock().unwrap().push(format!("text {text}")),
            _ => {}
        },
    )
    .await;

    assert_eq!(ids(&streamed.results), ["c1", "c2"]);
    assert_eq!(
        *log.lock().unwrap(),
        ["ready c1", "run c1", "text between", "ready c2", "run c2"]
    );
}

#[tokio::test(start_paused = true)]
async fn answers_come_back_in_call_order_and_bad_calls_are_answered_without_running() {
    let echo = echo();
    let slow = sleeper(pure_spec("slow"), Duration::from_millis(500), true);
    let exec = executor(vec![echo.clone(), slow.clone()]).build().unwrap();
    let body = [
        anthropic_call(0, Some("toolu_slow"), "slow", "{}", false),
        // The same id again, with arguments that would run: never run.
        anthropic_call(
            1,
            Some("toolu_slow"),
            "echo",
            r#"{"text": "reused"}"#,
            false,
        ),
        anthropic_call(2, Some("toolu_echo"), "echo", r#"{"text": "fast"}"#, false),
        anthropic_call(3, Some("toolu_bad"), "echo", r#"{"text": 1,}"#, false),
        // No id: nothing to answer; it is only reported.
        anthropic_call(4, None, "echo", r#"{"text": "anonymous"}"#, false),
        anthropic_call(5, Some("toolu_cut"), "echo", r#"{"text": "cut of"#, true),
        line(
            json!({"type": "message_delta", "delta": {"stop_reason": "max_tokens"},
            "usage": {"output_tokens": 99}}),
        ),
        line(json!({"type": "message_stop"})),
    ];
    let (run, turn) = (RunContext::empty(), Turn::new(1));
    let pieces = futures_util::stream::iter(body.map(Ok::<_, Dropped>));
    let streamed = execute_streamed(
        &exec,
        &run,
        &turn,
        NativeReader::new(NativeFormat::Anthropic),
        pieces,
        |_| {},
    )
    .await;

    let results = &streamed.results;
    assert_eq!(
        ids(results),
        [
            "toolu_slow",
            "toolu_slow",
            "toolu_echo",
            "toolu_bad",
            "toolu_cut"
        ],
        "one answer per call with an id, in the order written, the slow first call first"
    );
    let outcomes: Vec<_> = results.iter().map(ToolResult::outcome).collect();
    assert_eq!(
        outcomes,
        [
            "ok",
            "conflict",
            "ok",
            "invalid_arguments",
            "invalid_arguments"
        ]
    );
    assert_eq!(results[0].text(), "slept");
    assert_eq!(
        results[1].text(),
        "call id `toolu_slow` was already used by an earlier call of this output (reused_id); this call did not run"
    );
    assert_eq!(results[2].text(), "fast");
    assert_eq!(
        results[3].text(),
        "the call's arguments are not one JSON object (malformed_arguments); it did not run"
    );
    assert_eq!(
        results[4].text(),
        "the call was cut off by the end of the output; it did not run"
    );
    assert_eq!(
        echo.seen(),
        [json!({"text": "fast"})],
        "only the good echo call reached the tool"
    );
    assert_eq!(slow.runs(), 1);
    let anonymous: Vec<_> = streamed
        .output
        .failed()
        .filter(|f| f.id.is_none())
        .collect();
    assert_eq!(anonymous.len(), 1, "the call without an id is reported");
    assert_eq!(
        streamed.output.finish.as_ref().map(|f| &f.reason),
        Some(&FinishReason::Length)
    );
}

#[tokio::test]
async fn when_the_pieces_fail_started_calls_finish_and_the_open_one_is_answered_cut_off() {
    let (started, release) = (Arc::new(Notify::new()), Arc::new(Notify::new()));
    let exec = executor(vec![signalling("slow", &started, &release), echo()])
        .build()
        .unwrap();
    let (tx, pieces) = body();
    let model = async {
        tx.send(Ok(chat_call(0, "c1", "slow", "{}"))).unwrap();
        started.notified().await;
        tx.send(Ok(chat_call(1, "c2", "echo", r#"{"text": "never fin"#)))
            .unwrap();
        tx.send(Err(Dropped)).unwrap();
        // Whatever comes after the error is not read.
        tx.send(Ok(chat_call(2, "c3", "echo", r#"{"text": "late"}"#)))
            .unwrap();
        // The first call is still running when the stream fails.
        tokio::task::yield_now().await;
        release.notify_one();
    };
    let (run, turn) = (RunContext::empty(), Turn::new(1));
    let streamed = execute_streamed(
        &exec,
        &run,
        &turn,
        NativeReader::new(NativeFormat::OpenAiChat),
        pieces,
        |_| {},
    );
    let ((), streamed) = bounded("the turn did not end after the stream failed", async {
        tokio::join!(model, streamed)
    })
    .await;

    assert_eq!(streamed.error, Some(Dropped));
    assert_eq!(
        ids(&streamed.results),
        ["c1", "c2"],
        "c3 came after the error"
    );
    assert_eq!(
        streamed.results[0].text(),
        "ran c1",
        "the started call finished"
    );
    assert_eq!(
        streamed.results[1].text(),
        "the call was cut off by the end of the output; it did not run"
    );
    let cut: Vec<_> = streamed.output.truncated().collect();
    assert_eq!(cut.len(), 1);
    assert_eq!(cut[0].raw, r#"{"text": "never fin"#);
    assert_eq!(
        streamed.output.finish.as_ref().map(|f| &f.reason),
        Some(&FinishReason::EndOfStream)
    );
}

#[tokio::test]
async fn every_event_reaches_the_callback_in_order_for_every_chunking() {
    let exec = executor(vec![echo()]).build().unwrap();
    let response = json!({
        "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
            "role": "assistant",
            "reasoning_content": "Two echoes, then done.",
            "content": "Echoing twice.",
            "tool_calls": [
                {"id": "call_1", "type": "function",
                 "function": {"name": "echo", "arguments": "{\"text\": \"one ✓\"}"}},
                {"id": "call_2", "type": "function",
                 "function": {"name": "echo", "arguments": "{\"text\": \"two\"}"}},
            ],
        }}],
        "usage": {"prompt_tokens": 12, "completion_tokens": 30, "total_tokens": 42},
    });
    let format = NativeFormat::OpenAiChat;
    let stream = ScriptedStream::from_response(format, &response);
    let whole = parse_response(format, &response, &NativeOptions::default());
    for chunking in Chunking::matrix(4) {
        let seen = Mutex::new(Vec::new());
        let pieces = chunk_bytes(stream.as_bytes(), chunking)
            .into_iter()
            .map(Ok::<_, Dropped>);
        let (run, turn) = (RunContext::empty(), Turn::new(1));
        let streamed = execute_streamed(
            &exec,
            &run,
            &turn,
            NativeReader::new(format),
            futures_util::stream::iter(pieces),
            |event| seen.lock().unwrap().push(event.clone()),
        )
        .await;

        let expected = events(
            format,
            NativeOptions::default(),
            stream.as_bytes(),
            chunking,
        );
        assert_eq!(seen.into_inner().unwrap(), expected, "{chunking:?}");
        assert_eq!(streamed.output, whole, "{chunking:?}");
        let texts: Vec<_> = streamed.results.iter().map(|r| r.text()).collect();
        assert_eq!(texts, ["one ✓", "two"], "{chunking:?}");
    }
}
