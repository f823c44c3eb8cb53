//! What a call is given: `Clock`, `Random` and `Ids`, hidden from the
//! schema, drawn once per call from the run's time source and seed; the
//! testkit's `ManualClock` and `SequentialIds`.

use std::time::Duration;

use serde_json::json;
use tinyagents_tools::ids::IdSource;
use tinyagents_tools::prelude::*;
use tinyagents_tools::runtime::TimeSource;
use tinyagents_tools::testkit::{ManualClock, SequentialIds, ToolHarness};

/// What to stamp.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Stamp {
    /// The note's title.
    title: String,
}

/// Stamp a note with the time, a random number and a new id.
#[tool(local, deterministic_given_injected)]
async fn stamp(
    args: Stamp,
    #[inject] clock: Clock,
    #[inject] mut rng: Random,
    #[inject] mut ids: Ids,
) -> serde_json::Value {
    json!({
        "title": args.title,
        "at": clock.unix_ms(),
        "again": clock.unix_ms(),
        "lucky": rng.below(100),
        "ids": [ids.next("note"), ids.next("note")],
    })
}

#[test]
fn clock_random_and_ids_are_listed_as_injected_and_never_in_the_schema() {
    let spec = StampTool::spec();
    assert_eq!(
        spec.input_schema.as_value()["properties"],
        json!({"title": {"description": "The note's title.", "type": "string"}})
    );
    let injected = serde_json::to_value(&spec.injected).unwrap();
    assert_eq!(
        injected,
        json!([
            {"name": "clock", "type_name": "Clock", "kind": "clock"},
            {"name": "rng", "type_name": "Random", "kind": "random"},
            {"name": "ids", "type_name": "Ids", "kind": "ids"},
        ])
    );
    assert!(spec.takes_draw());
}

#[tokio::test]
async fn a_forged_clock_or_seed_in_the_arguments_is_refused() {
    let harness = ToolHarness::builder(StampTool).build().unwrap();
    for forged in [
        json!({"title": "x", "clock": 0}),
        json!({"title": "x", "rng": 4}),
        json!({"title": "x", "ids": ["note-0"]}),
    ] {
        let result = harness.call(forged).await;
        assert_eq!(result.outcome(), "invalid_arguments");
    }
}

#[tokio::test]
async fn the_testkit_clock_advances_only_when_told() {
    let clock = ManualClock::at_unix_ms(1_700_000_000_000);
    let harness = ToolHarness::builder(StampTool)
        .time_source(clock.clone())
        .build()
        .unwrap();
    let at = |v: &serde_json::Value| v["at"].as_i64().unwrap();
    let first = harness
        .call_ok(json!({"title": "a"}))
        .await
        .structured
        .clone()
        .unwrap();
    assert_eq!(at(&first), 1_700_000_000_000);
    assert_eq!(first["again"], first["at"], "one call reads one time");
    // Real time passes; the clock does not.
    tokio::time::sleep(Duration::from_millis(20)).await;
    let second = harness
        .call_ok(json!({"title": "b"}))
        .await
        .structured
        .clone()
        .unwrap();
    assert_eq!(at(&second), 1_700_000_000_000);
    clock.advance(Duration::from_millis(1_500));
    let third = harness
        .call_ok(json!({"title": "c"}))
        .await
        .structured
        .clone()
        .unwrap();
    assert_eq!(at(&third), 1_700_000_001_500);
    clock.set(std::time::UNIX_EPOCH);
    let fourth = harness
        .call_ok(json!({"title": "d"}))
        .await
        .structured
        .clone()
        .unwrap();
    assert_eq!(at(&fourth), 0);
}

#[tokio::test]
async fn sequential_ids_number_the_runs_and_the_tools_ids_from_zero() {
    let ids = SequentialIds::new();
    let harness = ToolHarness::builder(StampTool)
        .ids(ids.clone())
        .build()
        .unwrap();
    assert_eq!(harness.run().run_id().as_str(), "run-0");
    assert_eq!(harness.run().thread_id().as_str(), "thread-0");
    let first = harness
        .call_ok(json!({"title": "a"}))
        .await
        .structured
        .clone()
        .unwrap();
    assert_eq!(first["ids"], json!(["note-0", "note-1"]));
    let second = harness
        .call_ok(json!({"title": "b"}))
        .await
        .structured
        .clone()
        .unwrap();
    assert_eq!(second["ids"], json!(["note-2", "note-3"]));
    // The counters are shared by clones, per prefix.
    assert_eq!(ids.next_id("note"), "note-4");
    assert_eq!(ids.next_id("run"), "run-1");
}

#[tokio::test]
async fn a_run_seed_gives_each_call_the_same_values_and_other_calls_other_values() {
    let clock = ManualClock::at_unix_ms(5_000);
    let run = |seed| {
        RunContext::builder(())
            .seed(seed)
            .time_source(clock.clone())
            .build()
    };
    let mut registry = ToolRegistry::new();
    registry.register(StampTool).unwrap();
    let executor = ToolExecutor::builder(registry, ()).build().unwrap();
    let call = |id: &str| ToolCall::new(id, "stamp", json!({"title": "t"}));
    let turn = Turn::new(1);
    let one = executor.execute(&run(42), &turn, call("c1")).await;
    let same = executor.execute(&run(42), &turn, call("c1")).await;
    assert_eq!(one.structured, same.structured);
    let other_call = executor.execute(&run(42), &turn, call("c2")).await;
    assert_ne!(one.structured, other_call.structured);
    let other_turn = executor.execute(&run(42), &Turn::new(2), call("c1")).await;
    assert_ne!(one.structured, other_turn.structured);
    let other_seed = executor.execute(&run(43), &turn, call("c1")).await;
    assert_ne!(one.structured, other_seed.structured);
    // Without a seed, each run draws its own.
    assert_ne!(RunContext::empty().seed(), RunContext::empty().seed());
    // A fixed instant is a time source too.
    let fixed = std::time::UNIX_EPOCH + Duration::from_secs(60);
    assert_eq!(fixed.now(), fixed);
    let at_fixed = RunContext::builder(()).time_source(fixed).build();
    let stamped = executor.execute(&at_fixed, &turn, call("c1")).await;
    assert_eq!(stamped.structured.clone().unwrap()["at"], 60_000);
}
