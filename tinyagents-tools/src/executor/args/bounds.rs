//! Bounds on hostile input, all without recursion: the nesting depth of
//! argument text (one linear scan), the size and depth of a parsed value,
//! numbers read as JSON Schema reads them, and taking apart a value nested
//! deeper than the stack allows.

use serde_json::Value;

use super::{ArgumentLimits, too_deep, too_large};
use crate::error::ToolError;

/// The largest magnitude below which every integer is an exact `f64`.
const EXACT_INTEGERS: f64 = 9_007_199_254_740_992.0;

/// A JSON number read as a float. One with no fraction (`5.0`, `1e3`) is the
/// integer JSON Schema already takes it for, so it becomes that integer and
/// serde's integer types accept what validation accepted (they refuse every
/// float). Only magnitudes where integers are exact are changed.
pub(super) fn float(v: f64) -> Value {
    if v.fract() == 0.0 && v.abs() < EXACT_INTEGERS {
        // In range and integral, so the conversion is exact.
        return Value::from(v as i64);
    }
    serde_json::Number::from_f64(v).map_or(Value::Null, Value::Number)
}

/// Applies [`float`] to every float in `value`, without recursion.
pub(super) fn normalize_numbers(value: &mut Value) {
    // The common shape, a flat object, needs no work stack.
    if let Value::Object(map) = value
        && map.values().all(|v| !v.is_array() && !v.is_object())
    {
        for v in map.values_mut() {
            if let Value::Number(n) = v
                && let Some(f) = n.as_f64().filter(|_| n.is_f64())
            {
                *v = float(f);
            }
        }
        return;
    }
    let mut stack = vec![value];
    while let Some(v) = stack.pop() {
        match v {
            Value::Array(items) => stack.extend(items.iter_mut()),
            Value::Object(map) => stack.extend(map.values_mut()),
            Value::Number(n) if n.is_f64() => {
                if let Some(f) = n.as_f64() {
                    *v = float(f);
                }
            }
            _ => {}
        }
    }
}

/// Drops `value` without recursion, however deeply it nests (the default
/// drop of a [`Value`] recurses once per level).
pub(crate) fn dispose(value: Value) {
    let mut stack = vec![value];
    while let Some(v) = stack.pop() {
        match v {
            Value::Array(items) => stack.extend(items),
            Value::Object(map) => stack.extend(map.into_iter().map(|(_, v)| v)),
            _ => {}
        }
    }
}

/// Bounds an already parsed value ([`check_value_bounds`]) and reads its
/// numbers as JSON Schema does ([`normalize_numbers`]); a flat object, the
/// common shape, in one pass that ends at its first array or object (the
/// two walks then do it all: what the pass normalized stays so).
pub(super) fn bound_and_normalize(
    value: &mut Value,
    limits: ArgumentLimits,
) -> Result<(), ToolError> {
    if let Value::Object(map) = value
        && limits.max_depth >= 1
    {
        let mut size = 2;
        let mut flat = true;
        for (k, v) in map.iter_mut() {
            size += k.len() + 4;
            match v {
                Value::String(s) => size += s.len() + 2,
                Value::Number(n) => {
                    size += 8;
                    if let Some(f) = n.as_f64().filter(|_| n.is_f64()) {
                        *v = float(f);
                    }
                }
                Value::Array(_) | Value::Object(_) => {
                    flat = false;
                    break;
                }
                _ => size += 8,
            }
        }
        if flat {
            if size > limits.max_bytes {
                return Err(too_large(size, limits.max_bytes));
            }
            return Ok(());
        }
    }
    check_value_bounds(value, limits)?;
    normalize_numbers(value);
    Ok(())
}

/// Walks an already parsed value without recursion, checking depth and an
/// estimate of its encoded size.
pub(crate) fn check_value_bounds(value: &Value, limits: ArgumentLimits) -> Result<(), ToolError> {
    // The common shape, a flat object of scalars, needs no work stack.
    if let Value::Object(map) = value
        && limits.max_depth >= 1
        && map.values().all(|v| !v.is_array() && !v.is_object())
    {
        let size = map.iter().fold(2, |size, (k, v)| {
            size + k.len() + 4 + v.as_str().map_or(8, |s| s.len() + 2)
        });
        if size > limits.max_bytes {
            return Err(too_large(size, limits.max_bytes));
        }
        return Ok(());
    }
    let mut stack: Vec<(&Value, usize)> = vec![(value, 1)];
    let mut size = 0usize;
    while let Some((v, depth)) = stack.pop() {
        match v {
            Value::Array(items) => {
                if depth > limits.max_depth {
                    return Err(too_deep(depth, limits.max_depth));
                }
                size += 2 + items.len();
                stack.extend(items.iter().map(|i| (i, depth + 1)));
            }
            Value::Object(map) => {
                if depth > limits.max_depth {
                    return Err(too_deep(depth, limits.max_depth));
                }
                size += 2;
                for (k, item) in map {
                    size += k.len() + 4;
                    stack.push((item, depth + 1));
                }
            }
            Value::String(s) => size += s.len() + 2,
            _ => size += 8,
        }
        if size > limits.max_bytes {
            return Err(too_large(size, limits.max_bytes));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integral_floats_become_integers_only_where_integers_are_exact() {
        let mut v = serde_json::json!({"a": [5.0, {"b": -7.0}], "c": 9007199254740992.0});
        normalize_numbers(&mut v);
        assert_eq!(
            v,
            serde_json::json!({"a": [5, {"b": -7}], "c": 9007199254740992.0})
        );
        assert!(v["c"].is_f64());
        let mut flat = serde_json::json!({"n": 5.0, "x": 2.5});
        normalize_numbers(&mut flat);
        assert_eq!(flat, serde_json::json!({"n": 5, "x": 2.5}));
    }

    #[test]
    fn one_pass_over_a_flat_object_agrees_with_the_two_walks() {
        let limits = |max_bytes| ArgumentLimits {
            max_bytes,
            max_depth: 8,
        };
        let shallow = |max_bytes| ArgumentLimits {
            max_bytes,
            max_depth: 1,
        };
        let samples = [
            serde_json::json!({"n": 5.0, "x": 2.5, "s": "héllo", "b": true, "z": null}),
            serde_json::json!({"n": 1e3, "deep": {"m": -7.0}, "list": [1.0, "a"]}),
            // Floats and strings before the first nested value, and after.
            serde_json::json!({"f": 2.0, "g": 0.25, "s": "abc", "list": [3.0], "h": 4.0}),
            serde_json::json!({"a": 1, "o": {}, "f": 5.0}),
            serde_json::json!({}),
        ];
        for sample in samples {
            for (max, limits) in [0, 10, 30, 60, 1 << 20]
                .into_iter()
                .flat_map(|max| [(max, limits(max)), (max, shallow(max))])
            {
                let mut one = sample.clone();
                let mut two = sample.clone();
                let merged =
                    bound_and_normalize(&mut one, limits).map_err(|e| e.message().to_owned());
                let walked = check_value_bounds(&two, limits).map_err(|e| e.message().to_owned());
                assert_eq!(merged, walked, "{sample} within {max} bytes");
                if walked.is_ok() {
                    normalize_numbers(&mut two);
                    assert_eq!(one, two);
                    assert_eq!(one.to_string(), two.to_string(), "integers stay integers");
                }
            }
        }
    }

    #[test]
    fn deep_values_are_refused_without_recursion() {
        let mut v = Value::Null;
        for _ in 0..10_000 {
            v = Value::Array(vec![v]);
        }
        let limits = ArgumentLimits {
            max_bytes: 1 << 20,
            max_depth: 64,
        };
        let err = check_value_bounds(&v, limits).unwrap_err();
        assert_eq!(err.kind().as_str(), "limit_exceeded");
        // Take the value apart iteratively so dropping it cannot recurse deeply.
        while let Value::Array(mut items) = v {
            v = items.pop().unwrap_or(Value::Null);
        }
    }
}
