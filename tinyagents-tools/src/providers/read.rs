//! Reading helpers shared by the call parsers: fields, types and nesting
//! checked, each error at its JSON pointer.

use serde_json::{Map, Value};

use super::{CallParseError, MAX_CALL_ARGUMENT_DEPTH};
use crate::call::{RawArguments, ToolCall};

/// A copy of a call's arguments at `ptr`, refused without recursion when
/// they nest deeper than [`MAX_CALL_ARGUMENT_DEPTH`].
pub fn arguments(value: &Value, ptr: &str) -> Result<Value, CallParseError> {
    let too_deep = || CallParseError::TooDeep {
        pointer: ptr.to_owned(),
        max: MAX_CALL_ARGUMENT_DEPTH,
    };
    let mut stack: Vec<(&Value, usize)> = vec![(value, 1)];
    while let Some((v, depth)) = stack.pop() {
        match v {
            Value::Array(_) | Value::Object(_) if depth > MAX_CALL_ARGUMENT_DEPTH => {
                return Err(too_deep());
            }
            Value::Array(items) => stack.extend(items.iter().map(|c| (c, depth + 1))),
            Value::Object(map) => stack.extend(map.values().map(|c| (c, depth + 1))),
            _ => {}
        }
    }
    Ok(value.clone())
}

/// The field `key` of `obj`, or a `Missing` error at `ptr/key`.
pub fn field<'v>(
    obj: &'v Map<String, Value>,
    key: &str,
    ptr: &str,
) -> Result<&'v Value, CallParseError> {
    obj.get(key).ok_or_else(|| CallParseError::Missing {
        pointer: format!("{ptr}/{key}"),
    })
}

/// The string field `key` of `obj`.
pub fn string<'v>(
    obj: &'v Map<String, Value>,
    key: &str,
    ptr: &str,
) -> Result<&'v str, CallParseError> {
    field(obj, key, ptr)?
        .as_str()
        .ok_or_else(|| CallParseError::WrongType {
            pointer: format!("{ptr}/{key}"),
            expected: "a string",
        })
}

/// `value` as an object.
pub fn object<'v>(value: &'v Value, ptr: &str) -> Result<&'v Map<String, Value>, CallParseError> {
    value.as_object().ok_or_else(|| CallParseError::WrongType {
        pointer: ptr.to_owned(),
        expected: "an object",
    })
}

/// `value` as an array.
pub fn array<'v>(value: &'v Value, ptr: &str) -> Result<&'v Vec<Value>, CallParseError> {
    value.as_array().ok_or_else(|| CallParseError::WrongType {
        pointer: ptr.to_owned(),
        expected: "an array",
    })
}
/// The calls among the objects of the array `items` (at `ptr`) whose
/// `"type"` is `kind`; other items are skipped. A call's id is its string
/// field `id_key`, its name the string `name`, its arguments what
/// `arguments` reads from the object (given with its pointer).
pub fn typed_calls(
    items: &[Value],
    ptr: &str,
    kind: &str,
    id_key: &str,
    arguments: impl Fn(&Map<String, Value>, &str) -> Result<RawArguments, CallParseError>,
) -> Result<Vec<ToolCall>, CallParseError> {
    let mut calls = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let ptr = format!("{ptr}/{i}");
        let obj = object(item, &ptr)?;
        if obj.get("type").and_then(Value::as_str) != Some(kind) {
            continue;
        }
        let id = string(obj, id_key, &ptr)?;
        let name = string(obj, "name", &ptr)?;
        calls.push(ToolCall::new(id, name, arguments(obj, &ptr)?));
    }
    Ok(calls)
}
