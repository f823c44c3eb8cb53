//! Tools deterministic given what their call is given (`Clock`, `Random`,
//! `Ids`): the replay policy replays a recorded result for a call given the
//! same draw, and runs the tool for a call given another.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use serde_json::json;
use tinyagents_tools::journal::{CallKey, Journal};
use tinyagents_tools::policy::{ReplayCache, ReplayScope};
use tinyagents_tools::prelude::*;
use tinyagents_tools::testkit::ManualClock;

/// How many times the shuffle's body ran.
#[derive(Default)]
struct Runs(AtomicUsize);

/// A deck to shuffle.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Deck {
    /// The cards.
    cards: Vec<String>,
}

/// Shuffle the deck, and say when.
#[tool(read_only, idempotent, local, deterministic_given_injected)]
async fn shuffle(
    args: Deck,
    #[inject] clock: Clock,
    #[inject] mut rng: Random,
    #[inject] runs: Store<Runs>,
) -> String {
    runs.0.fetch_add(1, Ordering::SeqCst);
    let mut cards = args.cards;
    for i in (1..cards.len()).rev() {
        let j = rng.below(i as u64 + 1) as usize;
        cards.swap(i, j);
    }
    format!("{} at {}", cards.join(" "), clock.unix_ms())
}

fn deck() -> ToolCall {
    let cards: Vec<String> = (1..=10).map(|n| n.to_string()).collect();
    ToolCall::new("c1", "shuffle", json!({ "cards": cards }))
}

/// A run of id `id` with seed `seed`, reading the time from `clock`,
/// counting the shuffle's runs in `runs`.
fn session(id: &str, seed: u64, clock: &ManualClock, runs: &Arc<Runs>) -> RunContext {
    RunContext::builder(())
        .run_id(id)
        .seed(seed)
        .time_source(clock.clone())
        .store_arc(runs.clone())
        .build()
}

#[tokio::test]
async fn a_recorded_result_is_replayed_for_a_call_given_the_same_draw_and_only_then() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("journal.db").display());
    let journal = Journal::open(&url).await.unwrap();
    let mut registry = ToolRegistry::new();
    registry.register(ShuffleTool).unwrap();
    let cache = ReplayCache::new().scope(ReplayScope::AllRuns);
    assert!(cache.replays(ShuffleTool::spec()), "it takes a draw");
    let executor = ToolExecutor::builder(registry, ())
        .middleware(cache)
        .journal(journal.clone())
        .build()
        .unwrap();
    let clock = ManualClock::at_unix_ms(1_700_000_000_000);
    let runs = Arc::new(Runs::default());
    let turn = Turn::new(1);

    let recorded = executor
        .execute(&session("recorded", 7, &clock, &runs), &turn, deck())
        .await;
    assert_eq!(recorded.outcome(), "ok");
    assert!(recorded.text().ends_with(" at 1700000000000"));
    assert_eq!(runs.0.load(Ordering::SeqCst), 1);

    // The session replayed (another run, the same seed and time): the same
    // call is given the same draw, and the recorded result is replayed.
    let replayed = executor
        .execute(&session("replayed", 7, &clock, &runs), &turn, deck())
        .await;
    assert_eq!(replayed.text(), recorded.text());
    assert_eq!(runs.0.load(Ordering::SeqCst), 1, "replayed, not run");
    let kept = journal
        .call(&CallKey::new("replayed", 1, "c1"))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(kept.answer.unwrap().message.text(), recorded.text());

    // Another seed: other random values, so the tool runs.
    let other_seed = executor
        .execute(&session("other-seed", 8, &clock, &runs), &turn, deck())
        .await;
    assert_eq!(runs.0.load(Ordering::SeqCst), 2);
    assert_ne!(other_seed.text(), recorded.text());

    // The same seed a minute later: another time, so the tool runs.
    clock.advance(Duration::from_secs(60));
    let later = executor
        .execute(&session("later", 7, &clock, &runs), &turn, deck())
        .await;
    assert_eq!(runs.0.load(Ordering::SeqCst), 3);
    assert!(
        later.text().ends_with(" at 1700000060000"),
        "{}",
        later.text()
    );
}

#[tokio::test]
async fn within_one_run_a_call_delivered_again_is_replayed_until_the_clock_moves() {
    let mut registry = ToolRegistry::new();
    registry.register(ShuffleTool).unwrap();
    let executor = ToolExecutor::builder(registry, ())
        .middleware(ReplayCache::new())
        .build()
        .unwrap();
    let clock = ManualClock::at_unix_ms(1_000);
    let runs = Arc::new(Runs::default());
    let run = session("run-1", 3, &clock, &runs);
    let first = executor.execute(&run, &Turn::new(1), deck()).await;
    let again = executor.execute(&run, &Turn::new(1), deck()).await;
    assert_eq!(again.text(), first.text());
    assert_eq!(runs.0.load(Ordering::SeqCst), 1);
    // Another call id is another call, with its own seed.
    let renamed = ToolCall {
        id: "c2".into(),
        ..deck()
    };
    executor.execute(&run, &Turn::new(1), renamed).await;
    assert_eq!(runs.0.load(Ordering::SeqCst), 2);
    clock.advance(Duration::from_millis(1));
    executor.execute(&run, &Turn::new(1), deck()).await;
    assert_eq!(runs.0.load(Ordering::SeqCst), 3);
}
