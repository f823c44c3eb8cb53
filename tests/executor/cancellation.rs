//! A run cancelled mid-batch answers every call exactly once, each either
//! with the result it had before the cancellation or `cancelled` (class
//! fatal), whatever step the call was in: waiting in the queue, waiting for
//! a permit, in a middleware, running (whatever error the tool itself then
//! returns), or between retries.

use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use tinyagents_tools::middleware::{BeforeOutcome, BeforeToolCtx};
use tinyagents_tools::*;
use tinyagents_tools_tests::*;

const HANG: Duration = Duration::from_secs(30);

/// A tool that waits for its token, then answers with an error of its own,
/// as a tool that checks `cancel.is_cancelled()` does; the [`Spy`] counts
/// its runs.
fn stops_early(name: &str, error: ToolError, shape: Shape) -> Arc<Spy<Arc<dyn Tool>>> {
    let mut spec = empty_input(name);
    match shape {
        Shape::Plain => {}
        Shape::Retried => {
            spec = spec
                .safety(ToolSafety::pure())
                .retry(RetryPolicy::attempts(3, Duration::from_millis(1)));
        }
        Shape::Sequential => spec = spec.sequential(),
    }
    let tool = FnTool::new(spec.build().unwrap(), move |rt, _| {
        let error = error.clone();
        Box::pin(async move {
            rt.cancellation().cancelled().await;
            Err(error)
        })
    });
    Spy::new(Arc::new(tool) as Arc<dyn Tool>)
}

#[derive(Clone, Copy)]
enum Shape {
    Plain,
    /// Idempotent, three attempts.
    Retried,
    /// Runs alone in its batch.
    Sequential,
}

/// An approver for the tool `guarded`: the user stops the run while the
/// question is open, and the approval arrives afterwards.
struct LateApprover;

#[async_trait]
impl Middleware for LateApprover {
    fn name(&self) -> &str {
        "late_approver"
    }
    async fn before_tool(&self, ctx: &mut BeforeToolCtx<'_>) -> Result<BeforeOutcome, ToolError> {
        if ctx.spec().name.as_str() == "guarded" {
            ctx.run().cancel();
            tokio::task::yield_now().await;
        }
        Ok(BeforeOutcome::Continue)
    }
}

struct Fixture {
    exec: ToolExecutor,
    guarded: Arc<FakeTool>,
    stoppers: Vec<Arc<Spy<Arc<dyn Tool>>>>,
}

fn fixture(max_concurrency: usize) -> Fixture {
    let guarded = no_args("guarded", false);
    let stoppers = vec![
        stops_early(
            "says_retry",
            ToolError::retry("stopped early"),
            Shape::Plain,
        ),
        stops_early("says_fatal", ToolError::fatal("interrupted"), Shape::Plain),
        stops_early("retried", ToolError::retry("interrupted"), Shape::Retried),
        stops_early(
            "exclusive",
            ToolError::retry("interrupted"),
            Shape::Sequential,
        ),
    ];
    let mut tools: Vec<Arc<dyn Tool>> = vec![echo(), guarded.clone()];
    tools.extend(stoppers.iter().map(|t| t.clone() as Arc<dyn Tool>));
    let exec = executor(tools)
        .middleware(LateApprover)
        .configure(|c| {
            c.max_concurrency = max_concurrency.try_into().unwrap();
            c.default_timeout = HANG;
        })
        .build()
        .unwrap();
    Fixture {
        exec,
        guarded,
        stoppers,
    }
}

/// The fixture's tool a call id names by its first letter.
fn tool_of(id: &str) -> &'static str {
    match &id[..1] {
        "e" => "echo",
        "g" => "guarded",
        "s" => "says_retry",
        "f" => "says_fatal",
        "r" => "retried",
        "x" => "exclusive",
        _ => panic!("no tool for the call id {id}"),
    }
}

/// Runs a batch of calls with the ids `ids` (each to [`tool_of`] its id)
/// and checks the promise: one answer per call, in order, each `ok` or
/// `cancelled` (fatal); returns the kinds.
async fn run_batch(exec: &ToolExecutor, run: &RunContext, ids: &[&str]) -> Vec<String> {
    let batch = ids
        .iter()
        .map(|id| {
            let args = if tool_of(id) == "echo" {
                json!({"text": id})
            } else {
                json!({})
            };
            call(id, tool_of(id), args)
        })
        .collect();
    let results = tokio::time::timeout(HANG, exec.execute_batch(run, &Turn::new(1), batch))
        .await
        .expect("a cancelled batch ends");
    let answered: Vec<&str> = results.iter().map(|r| r.tool_call_id.as_str()).collect();
    assert_eq!(answered, ids, "one answer per call, in call order");
    for r in &results {
        if let Some(e) = &r.error {
            assert_eq!(
                (e.kind().as_str(), e.class()),
                ("cancelled", ErrorClass::Fatal),
                "{}: {}",
                r.tool_call_id,
                r.text()
            );
        }
    }
    results.iter().map(|r| kind(r).to_owned()).collect()
}

#[tokio::test]
async fn a_batch_cancelled_by_an_approver_mid_way_answers_cancelled_after_that_point_when_serial() {
    let f = fixture(1);
    let kinds = run_batch(
        &f.exec,
        &RunContext::empty(),
        &["e0", "e1", "g2", "s3", "e4", "r5"],
    )
    .await;
    assert_eq!(
        kinds.join(" "),
        "ok ok cancelled cancelled cancelled cancelled"
    );
    assert_eq!(
        f.guarded.runs(),
        0,
        "approved after the cancellation, never ran"
    );
}

#[tokio::test]
async fn calls_running_waiting_or_retrying_when_the_run_is_cancelled_all_answer_cancelled() {
    let f = fixture(8);
    let batch = ["e0", "s1", "f2", "r3", "g4", "x5", "e6"];
    let kinds = run_batch(&f.exec, &RunContext::empty(), &batch).await;
    assert_eq!(
        kinds.join(" "),
        "ok cancelled cancelled cancelled cancelled cancelled cancelled"
    );
    assert_eq!(f.guarded.runs(), 0);
    // The three tools before the approver were running when it cancelled.
    let runs: Vec<usize> = f.stoppers[..3].iter().map(|t| t.runs()).collect();
    assert_eq!(runs, [1, 1, 1], "no retry after the cancellation");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_cancelled_from_outside_while_calls_run_answers_each_cancelled_on_any_runtime() {
    for max_concurrency in [1, 3, 8] {
        let f = fixture(max_concurrency);
        let run = RunContext::empty();
        let canceller = {
            let run = run.clone();
            let started = Arc::clone(&f.stoppers[0]);
            tokio::spawn(async move {
                while started.runs() == 0 {
                    tokio::time::sleep(Duration::from_millis(1)).await;
                }
                run.cancel();
            })
        };
        // `x3` waits for the batch's exclusive lock (at 3 and 8), `r4`
        // behind it (at 8).
        let kinds = run_batch(&f.exec, &run, &["e0", "s1", "f2", "x3", "r4", "e5"]).await;
        canceller.await.unwrap();
        assert_eq!(f.stoppers[3].runs(), 0);
        assert_eq!(kinds[0], "ok", "at {max_concurrency}");
        assert!(
            kinds[1..].iter().all(|k| k == "cancelled"),
            "at {max_concurrency}: {kinds:?}"
        );
    }
}

#[tokio::test]
async fn a_batch_in_a_run_cancelled_before_it_starts_answers_every_call_cancelled() {
    for max_concurrency in [1, 4] {
        let f = fixture(max_concurrency);
        let run = RunContext::empty();
        run.cancel();
        let kinds = run_batch(&f.exec, &run, &["e0", "g1", "s2"]).await;
        assert_eq!(kinds, ["cancelled", "cancelled", "cancelled"]);
        assert_eq!(f.stoppers[0].runs(), 0);
    }
}

#[tokio::test]
async fn a_tool_that_panics_on_seeing_the_cancellation_stays_panicked() {
    let spec = empty_input("panics_late").build().unwrap();
    let tool = FnTool::new(spec, |rt, _| {
        Box::pin(async move {
            rt.run().cancel();
            rt.cancellation().cancelled().await;
            panic!("cleanup failed");
        })
    });
    let exec = executor(vec![Arc::new(tool), echo()]).build().unwrap();
    let calls = vec![
        call("p0", "panics_late", "{}"),
        call("e1", "echo", json!({"text": "x"})),
    ];
    let results = tokio::time::timeout(
        HANG,
        exec.execute_batch(&RunContext::empty(), &Turn::new(1), calls),
    )
    .await
    .unwrap();
    let answers: Vec<(&str, ErrorClass)> = results
        .iter()
        .map(|r| (kind(r), r.error.as_ref().unwrap().class()))
        .collect();
    assert_eq!(
        answers,
        [
            ("panicked", ErrorClass::Fatal),
            ("cancelled", ErrorClass::Fatal)
        ]
    );
}

#[tokio::test]
async fn a_run_an_in_line_subscriber_cancels_on_tool_started_runs_no_attempt() {
    // Code the executor does not control (here an in-line subscriber of
    // `tool.started`) may cancel the run between the first check and the
    // attempt: the attempt then does not start.
    let run = RunContext::empty();
    let token = run.cancellation().clone();
    let cancels = move |event: &events::ToolEvent| {
        if event.kind == events::EventKind::Started {
            token.cancel();
        }
    };
    struct Inline<F>(F);
    impl<F: Fn(&events::ToolEvent) + Send + Sync + 'static> events::EventSubscriber for Inline<F> {
        fn on_event(&self, event: &events::ToolEvent) {
            (self.0)(event)
        }
        fn delivery(&self) -> events::Delivery {
            events::Delivery::Inline
        }
    }
    let tool = echo();
    let exec = executor(vec![tool.clone()])
        .subscribe(Inline(cancels))
        .build()
        .unwrap();
    let r = execute_in(&exec, &run, call("c1", "echo", json!({"text": "hi"}))).await;
    assert_eq!(kind(&r), "cancelled");
    assert_eq!(r.tool_call_id.as_str(), "c1");
    assert_eq!(tool.runs(), 0, "the tool never ran");
}
