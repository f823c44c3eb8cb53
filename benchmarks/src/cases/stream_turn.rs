//! A streamed turn through `stream::execute_streamed`: how soon a call's
//! body starts once the piece that closes its arguments arrives, and what
//! starting calls early saves on a whole turn.
//!
//! - **Early start**: one call, a body that only notes the time it
//!   started; from the moment the pieces' stream hands over the piece that
//!   closes the call's arguments (found by a dry read) to the body's start,
//!   in microseconds, for a Chat Completions stream and a Hermes text
//!   stream.
//! - **A 4-call turn**: a scripted Chat Completions stream paced at one
//!   event per [`PACE`] (text, then four calls, each written in three
//!   events), each body sleeping [`BODY`]; streamed through
//!   `execute_streamed` against reading the whole response first, then
//!   running its calls as one batch (`execute_batch`). Runs alternate.

use std::cell::Cell;
use std::convert::Infallible;
use std::rc::Rc;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use futures::StreamExt;
use serde_json::{Value, json};
use tinyagents_tools::stream::native::{NativeFormat, NativeReader};
use tinyagents_tools::stream::text::TextFormat;
use tinyagents_tools::stream::{ModelOutput, OutputReader, StreamEvent, execute_streamed};
use tinyagents_tools::{
    RunContext, Tool, ToolError, ToolExecutor, ToolOutput, ToolRegistry, ToolRuntime, ToolSafety,
    ToolSchema, ToolSpec, Turn, async_trait,
};

use crate::harness::{Stats, quartiles};
use crate::report::{Report, Unit};

/// The time between two events of the scripted model stream.
pub const PACE: Duration = Duration::from_millis(5);
/// How long each body of the 4-call turn takes.
pub const BODY: Duration = Duration::from_millis(20);

/// A tool that notes when its body starts, then sleeps for its delay.
struct Work {
    delay: Duration,
    started: Arc<Mutex<Vec<Instant>>>,
}

fn work_spec() -> &'static ToolSpec {
    static SPEC: OnceLock<ToolSpec> = OnceLock::new();
    SPEC.get_or_init(|| {
        ToolSpec::builder("work", "Does some work.")
            .input_schema(ToolSchema::from_value(json!({
                "type": "object",
                "properties": {"n": {"type": "integer"}},
                "required": ["n"]
            })))
            .safety(ToolSafety::pure())
            .build()
            .expect("a valid spec")
    })
}

#[async_trait]
impl Tool for Work {
    fn spec(&self) -> &ToolSpec {
        work_spec()
    }

    async fn call(&self, _: &(), _: &ToolRuntime, _: Value) -> Result<ToolOutput, ToolError> {
        self.started
            .lock()
            .expect("not poisoned")
            .push(Instant::now());
        if !self.delay.is_zero() {
            tokio::time::sleep(self.delay).await;
        }
        Ok(ToolOutput::text("done"))
    }
}

fn executor(delay: Duration) -> (ToolExecutor<()>, Arc<Mutex<Vec<Instant>>>) {
    let started = Arc::new(Mutex::new(Vec::new()));
    let mut registry = ToolRegistry::new();
    registry
        .register(Work {
            delay,
            started: Arc::clone(&started),
        })
        .expect("registers");
    let executor = ToolExecutor::builder(registry, ())
        .build()
        .expect("an executor");
    (executor, started)
}

/// One Chat Completions SSE event.
fn chat_event(delta: Value, finish: Option<&str>) -> String {
    let chunk = json!({
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]
    });
    format!("data: {chunk}\n\n")
}

/// A Chat Completions stream: `texts` text deltas, then `calls` calls of
/// "work", each written in three events (id and name with the arguments'
/// first fragment, a middle fragment, the closing fragment), then the
/// finish and `[DONE]`.
fn chat_stream(texts: usize, calls: usize) -> Vec<String> {
    let mut events: Vec<String> = (0..texts)
        .map(|i| {
            chat_event(
                json!({"content": format!("Part {i} of the answer. ")}),
                None,
            )
        })
        .collect();
    for i in 0..calls {
        let call = |f: Value| json!({"tool_calls": [f]});
        events.push(chat_event(
            call(
                json!({"index": i, "id": format!("call_{i}"), "type": "function",
                "function": {"name": "work", "arguments": "{\"n\""}}),
            ),
            None,
        ));
        events.push(chat_event(
            call(json!({"index": i, "function": {"arguments": ": "}})),
            None,
        ));
        events.push(chat_event(
            call(json!({"index": i, "function": {"arguments": format!("{i}}}")}})),
            None,
        ));
    }
    events.push(chat_event(json!({}), Some("tool_calls")));
    events.push("data: [DONE]\n\n".to_owned());
    events
}

/// A Hermes text stream with one call of "work", in pieces.
fn hermes_stream() -> Vec<String> {
    [
        "Let me do that.\n",
        "<tool_call>\n",
        "{\"name\": \"work\", ",
        "\"arguments\": {\"n\": ",
        "1}}",
        "\n</tool_call>",
    ]
    .map(str::to_owned)
    .to_vec()
}

/// The index of the first piece after which `reader` yields a ready call.
fn closing_piece(mut reader: impl OutputReader, pieces: &[String]) -> usize {
    let mut events = Vec::new();
    for (i, piece) in pieces.iter().enumerate() {
        reader.push(piece.as_bytes(), &mut events);
        if events
            .iter()
            .any(|e| matches!(e, StreamEvent::CallReady(_)))
        {
            return i;
        }
    }
    panic!("no piece closes a call");
}

/// What the turn part measured.
pub struct TurnFigures {
    /// The streamed turn's wall time / the whole-response-first one's,
    /// paired by run.
    pub streamed_vs_whole: f64,
}

/// Runs the early-start and 4-call parts and records them.
pub fn run(starts: usize, turns: usize, report: &mut Report) -> TurnFigures {
    let rt = crate::harness::runtime();
    let chat = chat_stream(2, 1);
    let hermes = hermes_stream();
    for (name, pieces, make) in [
        (
            "openai_chat",
            &chat,
            (|| Reader::Native(NativeReader::new(NativeFormat::OpenAiChat))) as fn() -> Reader,
        ),
        ("hermes", &hermes, || {
            Reader::Text(TextFormat::hermes().reader([work_spec()]))
        }),
    ] {
        let close = closing_piece(make(), pieces);
        let stats = rt.block_on(early_start(starts, pieces, close, make));
        report.stats(
            "stream_turn",
            &format!("{name}_close_to_body_start"),
            &format!("{name}: closing piece handed over -> body starts"),
            Unit::Us,
            stats.0,
        );
        report.value(
            "stream_turn",
            &format!("{name}_close_to_body_start_quartiles_us"),
            &format!("{name}: its quartiles (us)"),
            json!([round(stats.1.0 / 1e3), round(stats.1.1 / 1e3)]),
        );
    }
    let turn = rt.block_on(four_calls(turns, report));
    TurnFigures {
        streamed_vs_whole: turn,
    }
}

/// The reader of a streamed turn: a provider stream's or a text format's.
#[allow(
    clippy::large_enum_variant,
    reason = "one reader a turn, made where it is read, as a caller's would be"
)]
enum Reader {
    Native(NativeReader),
    Text(tinyagents_tools::stream::text::TextReader),
}

impl OutputReader for Reader {
    fn push(&mut self, piece: &[u8], out: &mut Vec<StreamEvent>) {
        match self {
            Reader::Native(r) => r.push(piece, out),
            Reader::Text(r) => r.push(piece, out),
        }
    }

    fn finish(&mut self, out: &mut Vec<StreamEvent>) {
        match self {
            Reader::Native(r) => r.finish(out),
            Reader::Text(r) => r.finish(out),
        }
    }
}

/// `runs` one-call turns: per turn, the time from the closing piece's
/// hand-over to the body's start (ns); the stats and quartiles.
async fn early_start(
    runs: usize,
    pieces: &[String],
    close: usize,
    make: fn() -> Reader,
) -> (Stats, (f64, f64)) {
    let (executor, started) = executor(Duration::ZERO);
    let mut samples = Vec::with_capacity(runs);
    for round in 0..=runs {
        started.lock().expect("not poisoned").clear();
        let handed = Rc::new(Cell::new(None));
        let stamp = Rc::clone(&handed);
        let stream = futures::stream::iter(pieces.iter().enumerate()).map(move |(i, piece)| {
            if i == close {
                stamp.set(Some(Instant::now()));
            }
            Ok::<_, Infallible>(piece.as_bytes())
        });
        let turn = execute_streamed(
            &executor,
            &RunContext::empty(),
            &Turn::new(1),
            make(),
            stream,
            |_| {},
        )
        .await;
        assert_eq!(turn.results.len(), 1, "the call was answered");
        let body = started.lock().expect("not poisoned")[0];
        let handed = handed.get().expect("the closing piece was handed over");
        if round > 0 {
            // Round 0 warms up.
            samples.push(body.duration_since(handed).as_nanos() as f64);
        }
    }
    let spread = quartiles(samples.clone());
    (Stats::from_samples(samples, 1), spread)
}

/// The 4-call turn, streamed and whole-response-first, `runs` times each,
/// alternating; returns streamed / whole, paired by run.
async fn four_calls(runs: usize, report: &mut Report) -> f64 {
    let (executor, started) = executor(BODY);
    let events = chat_stream(6, 4);
    let paced = || {
        futures::stream::iter(events.iter()).then(|e| async move {
            tokio::time::sleep(PACE).await;
            Ok::<_, Infallible>(e.as_bytes())
        })
    };
    let streamed = || async {
        let t = Instant::now();
        let turn = execute_streamed(
            &executor,
            &RunContext::empty(),
            &Turn::new(1),
            NativeReader::new(NativeFormat::OpenAiChat),
            paced(),
            |_| {},
        )
        .await;
        assert_eq!(turn.results.len(), 4, "four answers");
        t.elapsed()
    };
    let whole = || async {
        let t = Instant::now();
        let mut reader = NativeReader::new(NativeFormat::OpenAiChat);
        let mut events = Vec::new();
        let mut pieces = std::pin::pin!(paced());
        while let Some(Ok(piece)) = pieces.next().await {
            reader.push(piece, &mut events);
        }
        reader.finish(&mut events);
        let output = ModelOutput::collect(events);
        let calls = output.calls().cloned().collect();
        let results = executor
            .execute_batch(&RunContext::empty(), &Turn::new(1), calls)
            .await;
        assert_eq!(results.len(), 4, "four answers");
        t.elapsed()
    };
    let (mut s, mut w) = (Vec::new(), Vec::new());
    streamed().await;
    whole().await;
    for round in 0..runs {
        started.lock().expect("not poisoned").clear();
        if round % 2 == 0 {
            s.push(streamed().await.as_nanos() as f64);
            w.push(whole().await.as_nanos() as f64);
        } else {
            w.push(whole().await.as_nanos() as f64);
            s.push(streamed().await.as_nanos() as f64);
        }
    }
    let ratios: Vec<f64> = s.iter().zip(&w).map(|(a, b)| a / b).collect();
    let paired = Stats::from_samples(ratios.clone(), 1).median_ns;
    let stream_time = PACE.as_secs_f64() * 1e3 * events.len() as f64;
    report.stats(
        "stream_turn",
        "four_calls_streamed",
        &format!(
            "4 calls, {} events at {} ms, bodies {} ms: streamed",
            events.len(),
            PACE.as_millis(),
            BODY.as_millis()
        ),
        Unit::Ms,
        Stats::from_samples(s, 1),
    );
    report.stats(
        "stream_turn",
        "four_calls_whole_first",
        "the same: whole response first, then execute_batch",
        Unit::Ms,
        Stats::from_samples(w, 1),
    );
    report.value(
        "stream_turn",
        "four_calls_stream_ms",
        "the model stream alone (events x pace, ms)",
        json!(stream_time),
    );
    report.paired(
        "stream_turn_four_calls_streamed_vs_whole",
        "4-call turn: streamed / whole response first, paired",
        paired,
    );
    report.quartiles(
        "stream_turn_four_calls_streamed_vs_whole_quartiles",
        "4-call turn: its quartiles",
        quartiles(ratios),
    );
    paired
}

fn round(x: f64) -> f64 {
    (x * 10.0).round() / 10.0
}
