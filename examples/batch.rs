//! A concurrent batch: one model turn of twelve calls, run at most four at
//! once, answered in call order.
//!
//! ```sh
//! cargo run --example batch
//! ```
//!
//! A price lookup that allows two calls at a time, a ledger writer that
//! never overlaps any other call of the batch (`sequential`), a flaky quote
//! service retried with backoff, and a report that outlives its timeout.
//! The example prints when each call starts and ends, what each call id
//! gets back, its own time (`elapsed`) and the time it waited for a place
//! in the batch or a concurrency slot (`waited`).

use std::num::NonZeroUsize;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::json;
use tinyagents_tools::events::{Delivery, EventKind, EventSubscriber, ToolEvent};
use tinyagents_tools::prelude::*;

/// The ticker to price.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct PriceArgs {
    /// A stock ticker such as "ACME".
    symbol: String,
}

/// Look up the last traded price of a stock (about 200 ms).
#[tool(read_only, idempotent, networked, max_concurrency = 2)]
async fn fetch_price(args: PriceArgs) -> f64 {
    tokio::time::sleep(Duration::from_millis(200)).await;
    args.symbol.len() as f64 * 10.0
}

/// The ledger entry to append.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct LedgerArgs {
    /// One line of text.
    entry: String,
}

/// The ledger: one writer at a time, and no reader while it writes.
#[derive(Default)]
struct Ledger {
    lines: Mutex<Vec<String>>,
}

/// Append a line to the trading ledger (about 100 ms).
#[tool(mutating, local, sequential)]
async fn append_ledger(args: LedgerArgs, #[inject] ledger: Store<Ledger>) -> usize {
    tokio::time::sleep(Duration::from_millis(100)).await;
    let mut lines = ledger.lines.lock().expect("ledger lock");
    lines.push(args.entry);
    lines.len()
}

/// How many attempts the quote service has seen.
static QUOTE_ATTEMPTS: AtomicU32 = AtomicU32::new(0);

/// Ask the quote service for a bid; it fails its first answer.
#[tool(
    read_only,
    idempotent,
    networked,
    retry(max_attempts = 3, backoff = "50ms")
)]
async fn request_quote(args: PriceArgs) -> Result<String, ToolError> {
    if QUOTE_ATTEMPTS.fetch_add(1, Ordering::SeqCst) == 0 {
        return Err(ToolError::retry("the quote service is busy"));
    }
    Ok(format!("bid for {} at 99.5", args.symbol))
}

/// Build the end-of-day report (slow: it outlives its timeout).
#[tool(read_only, local, timeout = "300ms")]
async fn daily_report(#[inject] cancel: CancellationToken) -> String {
    tokio::select! {
        _ = cancel.cancelled() => "stopped early".to_owned(),
        _ = tokio::time::sleep(Duration::from_secs(5)) => "the report".to_owned(),
    }
}

/// Prints when each call starts, is retried and ends, in milliseconds since
/// the batch began.
struct Timeline(Instant);

impl EventSubscriber for Timeline {
    fn on_event(&self, e: &ToolEvent) {
        let what = match e.kind {
            EventKind::Started => "starts",
            EventKind::Retrying => "will retry",
            EventKind::Completed => "ends",
            EventKind::Failed => "fails",
            EventKind::Rejected => "is refused",
            _ => return,
        };
        println!(
            "   {:>5} ms  {:<4} {:<14} {what}",
            self.0.elapsed().as_millis(),
            e.call_id,
            e.tool
        );
    }

    fn delivery(&self) -> Delivery {
        Delivery::Inline
    }
}

/// The executor: four calls at once, a short grace after a timeout.
fn desk(subscriber: Arc<dyn EventSubscriber>) -> Result<ToolExecutor, Box<dyn std::error::Error>> {
    let mut registry = ToolRegistry::new();
    registry
        .register(FetchPriceTool)?
        .register(AppendLedgerTool)?
        .register(RequestQuoteTool)?
        .register(DailyReportTool)?;
    Ok(ToolExecutor::builder(registry, ())
        .subscribe(subscriber)
        .configure(|c| {
            c.max_concurrency = NonZeroUsize::new(4).expect("not zero");
            c.cancel_grace = Duration::from_millis(50);
        })
        .build()?)
}

/// The model's twelve calls: prices, two ledger lines, a quote, a report,
/// an empty ticker and a misspelled argument.
fn model_calls() -> Vec<ToolCall> {
    let price =
        |id: &str, symbol: &str| ToolCall::new(id, "fetch_price", json!({ "symbol": symbol }));
    let ledger =
        |id: &str, entry: &str| ToolCall::new(id, "append_ledger", json!({ "entry": entry }));
    vec![
        price("p1", "ACME"),
        price("p2", "INIT"),
        price("p3", "GLOBEX"),
        ledger("l1", "opened the day"),
        price("p4", "UMBRELLA"),
        ToolCall::new("q1", "request_quote", json!({"symbol": "ACME"})),
        ToolCall::new("d1", "daily_report", json!({})),
        price("p5", "HOOLI"),
        ledger("l2", "priced five tickers"),
        price("p6", ""),
        ToolCall::new("x1", "fetch_price", json!({"ticker": "ACME"})),
        price("p7", "STARK"),
    ]
}

#[cfg_attr(test, allow(dead_code))]
#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let started = Instant::now();
    let executor = desk(Arc::new(Timeline(started)))?;
    let run = RunContext::builder(()).store(Ledger::default()).build();
    let calls = model_calls();
    let n = calls.len();
    println!(
        "== {n} calls, at most 4 at once, `fetch_price` at most 2 at once, `append_ledger` alone"
    );
    let results = executor.execute_batch(&run, &Turn::new(1), calls).await;
    let wall = started.elapsed();

    println!("\n== What goes back to the model, in call order");
    for r in &results {
        let verdict = r.error.as_ref().map_or("ok".to_owned(), |e| {
            format!("{}: {}", e.class(), e.kind().as_str())
        });
        println!(
            "   {:<4} {:<14} {:>4} ms, waited {:>4} ms  [{verdict}] {}",
            r.tool_call_id,
            r.name,
            r.elapsed.as_millis(),
            r.waited.as_millis(),
            r.text()
        );
    }
    println!(
        "\n   {} results for {n} calls, in call order, each id once; the batch took {} ms",
        results.len(),
        wall.as_millis()
    );
    println!(
        "   (a result's time is its own; `waited` is the time it waited for its place in the batch or a concurrency slot)"
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every start and end, in the order they happened.
    #[derive(Default)]
    struct Order(Mutex<Vec<(EventKind, String)>>);

    impl EventSubscriber for Order {
        fn on_event(&self, e: &ToolEvent) {
            if matches!(
                e.kind,
                EventKind::Started | EventKind::Completed | EventKind::Failed
            ) {
                let mut seen = self.0.lock().unwrap();
                seen.push((e.kind, e.call_id.to_string()));
            }
        }

        fn delivery(&self) -> Delivery {
            Delivery::Inline
        }
    }

    #[tokio::test]
    async fn the_walkthrough_does_what_it_prints() {
        let order = Arc::new(Order::default());
        let executor = desk(order.clone()).unwrap();
        let run = RunContext::builder(()).store(Ledger::default()).build();
        let results = executor
            .execute_batch(&run, &Turn::new(1), model_calls())
            .await;
        let ids: Vec<&str> = results.iter().map(|r| r.tool_call_id.as_str()).collect();
        assert_eq!(
            ids,
            [
                "p1", "p2", "p3", "l1", "p4", "q1", "d1", "p5", "l2", "p6", "x1", "p7"
            ]
        );
        let kind = |id: &str| {
            let r = results
                .iter()
                .find(|r| r.tool_call_id.as_str() == id)
                .unwrap();
            r.outcome()
        };
        assert_eq!(kind("q1"), "ok", "retried after its first failure");
        assert_eq!(kind("d1"), "timeout");
        assert_eq!(kind("x1"), "invalid_arguments");
        assert_eq!(kind("l2"), "ok");

        // A ledger write runs alone: between its start and its end, no
        // other call of the batch starts or ends.
        let seen = order.0.lock().unwrap();
        for ledger in ["l1", "l2"] {
            let at = |kind: EventKind| {
                seen.iter()
                    .position(|(k, id)| *k == kind && id == ledger)
                    .unwrap()
            };
            let (start, end) = (at(EventKind::Started), at(EventKind::Completed));
            assert_eq!(end, start + 1, "{ledger} overlapped: {seen:?}");
            // And nothing else was running when it started.
            let running = seen[..start]
                .iter()
                .filter(|(k, _)| *k == EventKind::Started)
                .count()
                - seen[..start]
                    .iter()
                    .filter(|(k, _)| *k != EventKind::Started)
                    .count();
            assert_eq!(running, 0, "{ledger} started beside other calls: {seen:?}");
        }
    }
}
