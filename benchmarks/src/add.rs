//! The benchmarked tool, "add": `{a: i64, b: i64}` in, `{"sum": a + b}` out,
//! and the RAW baseline every contender is compared with.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// The arguments the model chooses.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct AddArgs {
    /// The first addend.
    pub a: i64,
    /// The second addend.
    pub b: i64,
}

/// The result.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Sum {
    /// `a + b` (wrapping).
    pub sum: i64,
}

/// The tool's body, shared by every contender.
#[inline(never)]
pub fn add(args: AddArgs) -> Sum {
    Sum {
        sum: args.a.wrapping_add(args.b),
    }
}

/// The arguments every per-call case uses.
pub fn sample_args() -> Value {
    json!({"a": 40, "b": 2})
}

/// The expected result for [`sample_args`].
pub fn expected_sum() -> Value {
    json!({"sum": 42})
}

/// RAW: deserialize the (owned) argument value, call the fn, serialize the
/// result. What a tool call costs with no framework at all.
#[inline(never)]
pub fn raw(args: Value) -> Result<Value, serde_json::Error> {
    let args: AddArgs = serde_json::from_value(args)?;
    serde_json::to_value(add(args))
}

/// RAW from text: the same, starting from the JSON text a provider sends
/// (rig takes arguments as text).
#[inline(never)]
pub fn raw_text(args: &str) -> Result<Value, serde_json::Error> {
    let args: AddArgs = serde_json::from_str(args)?;
    serde_json::to_value(add(args))
}

/// What a careful user writes by hand without any framework: parse the
/// argument text, validate it against the argument schema with a
/// `jsonschema` validator built once, call the fn, serialize the result to
/// text.
pub struct HandRolled {
    validator: jsonschema::Validator,
}

/// Why a hand-rolled call failed.
#[derive(Debug)]
pub enum HandRolledError {
    /// The text is not JSON, or not the argument type.
    Json(serde_json::Error),
    /// The arguments break the schema (the first error, as text).
    Invalid(String),
}

impl std::fmt::Display for HandRolledError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            HandRolledError::Json(e) => write!(f, "invalid JSON arguments: {e}"),
            HandRolledError::Invalid(e) => write!(f, "invalid arguments: {e}"),
        }
    }
}

impl From<serde_json::Error> for HandRolledError {
    fn from(e: serde_json::Error) -> Self {
        HandRolledError::Json(e)
    }
}

impl HandRolled {
    /// The validator of [`AddArgs`]'s schema (schemars, as rig's tool uses).
    pub fn new() -> Self {
        let schema = serde_json::to_value(schemars::schema_for!(AddArgs)).expect("serializes");
        HandRolled {
            validator: jsonschema::validator_for(&schema).expect("a valid schema"),
        }
    }

    /// One call: argument text in, result text out.
    #[inline(never)]
    pub fn call(&self, text: String) -> Result<String, HandRolledError> {
        let value: Value = serde_json::from_str(&text)?;
        if let Err(e) = self.validator.validate(&value) {
            return Err(HandRolledError::Invalid(e.to_string()));
        }
        let args: AddArgs = serde_json::from_value(value)?;
        Ok(serde_json::to_string(&add(args))?)
    }
}
