//! Plain parameters: `#[tool] async fn add(a: i64, b: i64)` takes its
//! model-visible input as named parameters, gathered by the macro into a
//! generated argument struct whose schema equals the hand-written one.

use serde_json::json;
use tinyagents_tools::prelude::*;
use tinyagents_tools::{ErrorClass, ToolSchema};
use tinyagents_tools_tests::*;

fn three() -> u32 {
    3
}

/// Add two numbers, with an optional third and a scale.
#[tool(read_only, idempotent)]
async fn add(
    /// The first number.
    a: i64,
    /// The second number.
    b: i64,
    #[arg(description = "An optional third number.")] c: Option<i64>,
    /// How many times to count the sum (default 1).
    #[arg(default = "one")]
    times: i64,
    /// Digits to keep (default 3).
    #[arg(default = "three")]
    digits: u32,
    /// Round the result (default false).
    #[arg(default)]
    round: bool,
    #[inject] call: ToolCallId,
) -> Result<i64, ToolError> {
    let _ = (digits, round, call);
    Ok((a + b + c.unwrap_or(0)) * times)
}

fn one() -> i64 {
    1
}

/// What a user would write by hand for `add`, named the same.
mod hand {
    use super::{one, three};
    use tinyagents_tools::prelude::*;

    #[derive(Deserialize, JsonSchema)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    pub struct AddArgs {
        /// The first number.
        pub a: i64,
        /// The second number.
        pub b: i64,
        /// An optional third number.
        pub c: Option<i64>,
        /// How many times to count the sum (default 1).
        #[serde(default = "one")]
        pub times: i64,
        /// Digits to keep (default 3).
        #[serde(default = "three")]
        pub digits: u32,
        /// Round the result (default false).
        #[serde(default)]
        pub round: bool,
    }
}

#[test]
fn a_plain_parameter_tool_has_the_schema_of_the_equivalent_hand_written_struct() {
    let spec = AddTool::spec();
    assert_eq!(
        spec.input_schema.as_value(),
        ToolSchema::for_input::<hand::AddArgs>().as_value()
    );
    let schema = spec.input_schema.as_value();
    assert_eq!(schema["additionalProperties"], json!(false));
    assert_eq!(schema["required"], json!(["a", "b"]));
    assert_eq!(
        schema["properties"]["a"]["description"],
        json!("The first number.")
    );
    assert_eq!(
        schema["properties"]["c"]["description"],
        json!("An optional third number.")
    );
    assert_eq!(spec.injected.len(), 1);
}

#[test]
fn the_generated_argument_struct_is_public_and_the_fn_keeps_its_parameters() {
    let args: AddArgs = serde_json::from_value(json!({"a": 1, "b": 2})).unwrap();
    assert_eq!(
        (args.a, args.b, args.c, args.times, args.digits, args.round),
        (1, 2, None, 1, 3, false)
    );
    let direct = futures_block_on(add(1, 2, Some(3), 2, 3, false, "c".into()));
    assert_eq!(direct.unwrap(), 12);
}

fn futures_block_on<F: std::future::Future>(f: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap()
        .block_on(f)
}

#[tokio::test]
async fn plain_parameters_are_decoded_defaults_applied_and_unknown_keys_refused() {
    let exec = ToolExecutor::builder(
        {
            let mut registry = ToolRegistry::new();
            registry.register(AddTool).unwrap();
            registry
        },
        (),
    )
    .build()
    .unwrap();
    let ok = execute_once(&exec, call("c1", "add", r#"{"a": 2, "b": 3}"#)).await;
    assert_eq!(ok.structured, Some(json!(5)));
    let all = execute_once(
        &exec,
        call("c2", "add", r#"{"a": 2, "b": 3, "c": 5, "times": 2}"#),
    )
    .await;
    assert_eq!(all.structured, Some(json!(20)));
    let missing = execute_once(&exec, call("c3", "add", r#"{"a": 2}"#)).await;
    assert!(missing.is_error);
    assert_eq!(missing.tool_call_id.as_str(), "c3");
    assert_eq!(missing.error.as_ref().unwrap().class(), ErrorClass::Repair);
    let unknown = execute_once(&exec, call("c4", "add", r#"{"a": 2, "b": 3, "d": 1}"#)).await;
    assert!(unknown.is_error);
    assert_eq!(unknown.error.as_ref().unwrap().class(), ErrorClass::Repair);
}
