//! The flat check against the general validator: for every schema below, both must
//! give the same answer for every value (a differential property test, plus
//! the edge values of each keyword).

use proptest::prelude::*;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Number, Value, json};

use super::InputValidator;
use crate::spec::ToolSchema;

#[allow(dead_code)]
#[derive(Deserialize, JsonSchema)]
struct Scalars {
    a: i64,
    b: u8,
    c: Option<u32>,
    name: String,
    ratio: f64,
    flag: bool,
    mode: Mode,
}

#[allow(dead_code)]
#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
enum Mode {
    Fast,
    Slow,
}

#[allow(dead_code)]
#[derive(Deserialize, JsonSchema)]
struct Nested {
    inner: Scalars,
    tags: Vec<String>,
}

/// Schemas the flat check must take on (what schemars writes for flat
/// argument structs, and each keyword the flat check understands), each with
/// a value it accepts: edge values are put into that value one key at a time,
/// so that each keyword decides the answer.
fn flat_schemas() -> Vec<(Value, Value)> {
    vec![
        (
            ToolSchema::for_input::<Scalars>().as_value().clone(),
            json!({"a": 1, "b": 2, "c": null, "name": "n", "ratio": 0.5, "flag": true,
                   "mode": "fast"}),
        ),
        (
            json!({"type": "object", "properties": {"a": {"type": "integer", "format": "int64"},
                   "b": {"type": "integer", "format": "int64"}}, "required": ["a", "b"],
                   "additionalProperties": false}),
            json!({"a": 1, "b": 2}),
        ),
        (
            json!({"type": "object", "properties": {
                     "count": {"type": ["integer", "null"], "minimum": -3, "exclusiveMaximum": 10},
                     "big": {"type": "integer", "minimum": 0, "maximum": 18446744073709551615u64},
                     "low": {"type": "number", "exclusiveMinimum": -9223372036854775808i64,
                             "maximum": 5},
                     "name": {"type": "string", "minLength": 2, "maxLength": 3, "title": "t"},
                     "mode": {"enum": ["fast", "slow"]},
                     "fixed": {"const": "x", "description": "d"},
                     "any": true,
                     "free": {},
                     "list": {"type": "array"},
                     "obj": {"type": ["object", "boolean"]}},
                   "required": ["name", "ghost"]}),
            json!({"name": "ab", "ghost": 1, "count": 0, "big": 1, "low": 0, "mode": "slow",
                   "fixed": "x", "any": null, "free": [], "list": [], "obj": {}}),
        ),
        (
            json!({"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object",
                   "properties": {"x": {"type": "number"}}, "additionalProperties": true,
                   "required": ["x"]}),
            json!({"x": 1.5, "other": "o"}),
        ),
        (
            json!({"type": "object", "properties": {}, "additionalProperties": false}),
            json!({}),
        ),
        (
            json!({"type": "object", "$defs": {"M": {"type": "string", "enum": ["fast"]},
                                               "Unused": {"type": "object", "properties": {}}},
                   "properties": {"mode": {"$ref": "#/$defs/M", "description": "d"}}}),
            json!({"mode": "fast"}),
        ),
    ]
}

/// Schemas the flat check must leave to the general validator.
fn general_schemas() -> Vec<Value> {
    #[cfg_attr(not(feature = "json-schema-full"), allow(unused_mut))]
    let mut schemas = vec![
        ToolSchema::for_input::<Nested>().as_value().clone(),
        json!({"type": "object", "properties": {"s": {"type": "string", "format": "date"}}}),
        json!({"type": "object", "properties": {"s": {"format": "int32"}}}),
        json!({"type": "object", "properties": {"s": {"type": "number", "multipleOf": 2}}}),
        json!({"type": "object", "properties": {"n": {"type": "number", "minimum": 0.5}}}),
        json!({"type": "object", "properties": {"n": {"enum": [1, 2]}}}),
        json!({"type": "object", "properties": {"n": {"anyOf": [{"type": "string"}]}}}),
        json!({"type": "object", "properties": {"l": {"type": "array", "items": {"type": "string"}}}}),
        json!({"type": "object", "additionalProperties": {"type": "string"}}),
        json!({"type": "object", "properties": {"n": false}}),
        json!({"type": "object", "unknownKeyword": 1}),
        json!({"properties": {"n": {"type": "string"}}}),
        json!({"type": "object", "$defs": {"M": {"type": "string"}},
               "properties": {"mode": {"$ref": "#/$defs/M", "maxLength": 1}}}),
        json!({"type": "object", "$defs": {"M": {"$ref": "#/$defs/N"}, "N": {"type": "string"}},
               "properties": {"mode": {"$ref": "#/$defs/M"}}}),
        json!({"type": "object", "$defs": {"M": {"type": "array", "items": true}},
               "properties": {"mode": {"$ref": "#/$defs/M"}}}),
    ];
    // Another dialect: only `jsonschema` compiles it (the subset validator
    // refuses it, see `subset::tests`).
    #[cfg(feature = "json-schema-full")]
    schemas.push(json!({"$schema": "http://json-schema.org/draft-07/schema#", "type": "object"}));
    schemas
}

fn compiled(schema: &Value) -> InputValidator {
    InputValidator::compile(schema).unwrap_or_else(|e| panic!("{schema} compiles: {e}"))
}

fn assert_agree(validator: &InputValidator, schema: &Value, value: &Value) {
    assert_eq!(
        validator.is_valid(value),
        validator.full().is_valid(value),
        "flat and full checks disagree on {value} for {schema}"
    );
}

#[test]
fn flat_shapes_take_the_flat_check_and_the_rest_do_not() {
    for (schema, valid) in flat_schemas() {
        let validator = compiled(&schema);
        assert!(validator.is_flat(), "expected flat: {schema}");
        assert!(validator.is_valid(&valid), "{valid} is valid for {schema}");
        assert!(
            validator.full().is_valid(&valid),
            "{valid} is valid for {schema}"
        );
    }
    for schema in general_schemas() {
        assert!(!compiled(&schema).is_flat(), "expected general: {schema}");
    }
}

fn float(f: f64) -> Value {
    Value::Number(Number::from_f64(f).expect("finite"))
}

/// Values at the edge of every keyword above.
fn edge_values() -> Vec<Value> {
    let mut values = vec![
        Value::Null,
        json!(true),
        json!(""),
        json!("x"),
        json!("ab"),
        json!("abc"),
        json!("abcd"),
        json!("é😀"),
        json!("é😀é"),
        json!("é😀éé"),
        json!("fast"),
        json!("Fast"),
        json!([]),
        json!({}),
        json!(i64::MIN),
        json!(i64::MAX),
        json!(u64::MAX),
        json!(i64::MAX as u64 + 1),
        json!(-4),
        json!(-3),
        json!(0),
        json!(5),
        json!(9),
        json!(10),
        json!(255),
        json!(256),
        json!(4294967295u64),
        json!(4294967296u64),
    ];
    for f in [
        -3.5,
        -3.0,
        -0.5,
        -0.0,
        0.5,
        5.0,
        5.5,
        9.999,
        10.0,
        255.0,
        255.5,
        256.0,
        1e20,
        -1e20,
        9.223372036854776e18,
        -9.223372036854776e18,
        -9.223372036854778e18,
        1.8446744073709552e19,
        3.6893488147419103e19,
        1e300,
        -1e300,
        4294967295.5,
    ] {
        values.push(float(f));
    }
    values
}

const KEYS: [&str; 18] = [
    "a", "b", "c", "name", "ratio", "flag", "mode", "count", "big", "low", "fixed", "any", "free",
    "list", "obj", "x", "ghost", "other",
];

#[test]
fn edge_values_get_the_same_answer_from_both_checks() {
    for (schema, valid) in flat_schemas() {
        let validator = compiled(&schema);
        for value in edge_values() {
            for key in KEYS {
                let mut object = valid.as_object().cloned().unwrap_or_default();
                object.insert(key.to_owned(), value.clone());
                assert_agree(&validator, &schema, &Value::Object(object.clone()));
                object.remove(key);
                assert_agree(&validator, &schema, &Value::Object(object));
            }
            assert_agree(&validator, &schema, &value);
        }
    }
}

#[test]
fn valid_calls_are_accepted_by_the_flat_check() {
    let validator = compiled(&ToolSchema::for_input::<Scalars>().as_value().clone());
    let good = json!({"a": -7, "b": 255, "c": null, "name": "n", "ratio": 0.5, "flag": false,
                      "mode": "slow"});
    assert!(validator.is_valid(&good));
    assert!(validator.full().is_valid(&good));
    let mut missing = good.clone();
    missing.as_object_mut().unwrap().remove("name");
    assert!(!validator.is_valid(&missing));
    let mut extra = good.clone();
    extra
        .as_object_mut()
        .unwrap()
        .insert("extra".into(), json!(1));
    assert!(!validator.is_valid(&extra));
    let mut out_of_range = good;
    out_of_range
        .as_object_mut()
        .unwrap()
        .insert("b".into(), json!(256));
    assert!(!validator.is_valid(&out_of_range));
}

fn scalar() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|i| json!(i)),
        any::<u64>().prop_map(|u| json!(u)),
        (-300i64..300).prop_map(|i| json!(i)),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(float),
        (-600i32..600).prop_map(|i| float(f64::from(i) / 2.0)),
        "[a-zé😀]{0,5}".prop_map(Value::String),
        prop::sample::select(vec!["fast", "slow", "x"]).prop_map(|s| json!(s)),
        Just(json!([1])),
        Just(json!({"k": 1})),
    ]
}

/// Up to 8 keys set to random values, and a few removed.
fn changes() -> impl Strategy<Value = (Vec<(&'static str, Value)>, Vec<&'static str>)> {
    let key = prop::sample::select(KEYS.to_vec());
    (
        prop::collection::vec((key.clone(), scalar()), 0..9),
        prop::collection::vec(key, 0..3),
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1024))]

    /// Each schema's valid value with random changes, and the changes alone
    /// (an object built from nothing).
    #[test]
    fn random_arguments_get_the_same_answer_from_both_checks((set, removed) in changes()) {
        for (schema, valid) in flat_schemas() {
            let validator = compiled(&schema);
            for base in [valid.as_object().cloned().unwrap_or_default(), serde_json::Map::new()] {
                let mut object = base;
                for (key, value) in &set {
                    object.insert((*key).to_owned(), value.clone());
                }
                for key in &removed {
                    object.remove(*key);
                }
                let value = Value::Object(object);
                prop_assert_eq!(
                    validator.is_valid(&value),
                    validator.full().is_valid(&value),
                    "flat and full disagree on {} for {}", value, schema
                );
            }
        }
    }
}

#[test]
fn undeclared_keys_are_asked_about_and_declared_ones_are_not() {
    let open = json!({"type": "object", "properties": {"call_id": {"type": "string"}}});
    let validator = compiled(&open);
    assert!(validator.is_flat());
    let refuse_run_id = |key: &str| key != "run_id";
    // A declared key passes without the question; an undeclared one is
    // refused when the question says no.
    assert!(validator.is_valid_where(&json!({"call_id": "c"}), refuse_run_id));
    assert!(!validator.is_valid_where(&json!({"run_id": "r"}), refuse_run_id));
    assert!(validator.is_valid_where(&json!({"other": 1}), refuse_run_id));
    // The general validator asks about every key, with the same answers.
    let general = compiled(
        &json!({"type": "object", "properties": {"call_id": {"anyOf": [{"type": "string"}]}}}),
    );
    assert!(!general.is_flat());
    assert!(general.is_valid_where(&json!({"call_id": "c"}), refuse_run_id));
    assert!(!general.is_valid_where(&json!({"run_id": "r"}), refuse_run_id));
}

#[test]
fn the_default_redaction_policy_is_recognised() {
    use crate::spec::RedactionPolicy;
    assert!(RedactionPolicy::default().is_default());
    let mut policy = RedactionPolicy::default();
    policy.fields.push("token".into());
    assert!(!policy.is_default());
    let policy = RedactionPolicy {
        secrets: false,
        ..RedactionPolicy::default()
    };
    assert!(!policy.is_default());
}

#[test]
fn properties_are_told_apart_by_every_byte_of_their_names() {
    // Names that share their first seven bytes, names of up to seven bytes
    // that differ in one byte or in length only (a trailing NUL), and a
    // name longer than 255 bytes.
    let long = "n".repeat(300);
    let schema = json!({
        "type": "object",
        "properties": {
            "counter_a": {"type": "integer"},
            "counter_b": {"type": "string"},
            "ab": {"type": "boolean"},
            "ac": {"type": "null"},
            long.clone(): {"type": "integer"},
        },
        "additionalProperties": false,
    });
    let validator = compiled(&schema);
    assert!(validator.is_flat());
    let long_too = "n".repeat(301);
    let cases = [
        (json!({"counter_a": 1}), true),
        (json!({"counter_a": "x"}), false),
        (json!({"counter_b": "x"}), true),
        (json!({"counter_b": 1}), false),
        (json!({"counter_c": 1}), false),
        (json!({"ab": true, "ac": null}), true),
        (json!({"ab": null}), false),
        (json!({"ab\u{0}": true}), false),
        (json!({"a": true}), false),
        (json!({long.clone(): 3}), true),
        (json!({long.clone(): "3"}), false),
        (json!({long_too: 3}), false),
    ];
    for (value, valid) in cases {
        assert_eq!(validator.is_valid(&value), valid, "{value}");
        assert_agree(&validator, &schema, &value);
    }
}

#[cfg(not(feature = "json-schema-full"))]
#[test]
fn a_format_only_jsonschema_checks_needs_the_feature() {
    let schema =
        json!({"type": "object", "properties": {"to": {"type": "string", "format": "email"}}});
    let err = InputValidator::compile(&schema).err().expect("refused");
    assert_eq!(
        err,
        super::SchemaError::Unsupported {
            keyword: "format: email".into(),
            pointer: "/properties/to/format".into(),
        }
    );
}

/// A flat schema of `names`, each an integer, all required.
fn integers_named(names: &[String]) -> Value {
    let properties: serde_json::Map<String, Value> = names
        .iter()
        .map(|n| (n.clone(), json!({"type": "integer"})))
        .collect();
    json!({"type": "object", "properties": properties, "required": names,
           "additionalProperties": false})
}

#[test]
fn a_property_is_found_from_any_hint_and_in_any_order() {
    // Few properties (a linear search) and many (a binary search over the
    // sorted positions), declared out of alphabetical order.
    for count in [3usize, 8, 9, 20] {
        let names: Vec<String> = (0..count).rev().map(|i| format!("p{i:02}")).collect();
        let schema = integers_named(&names);
        let validator = compiled(&schema);
        let flat = validator.checks.flat.as_ref().expect("flat");
        for (declared, name) in names.iter().enumerate() {
            for hint in 0..=count + 1 {
                let (at, _) = flat.property(name, hint).expect("declared");
                assert_eq!(at, declared, "{name} from hint {hint}");
            }
            assert!(flat.property(&format!("{name}x"), declared).is_none());
        }
        // Keys in the schema's order, reversed, and sorted: one answer.
        let in_order: serde_json::Map<String, Value> =
            names.iter().map(|n| (n.clone(), json!(1))).collect();
        let reversed: serde_json::Map<String, Value> =
            names.iter().rev().map(|n| (n.clone(), json!(1))).collect();
        let mut sorted_names = names.clone();
        sorted_names.sort();
        let sorted: serde_json::Map<String, Value> =
            sorted_names.iter().map(|n| (n.clone(), json!(1))).collect();
        for map in [in_order, reversed, sorted] {
            let mut value = Value::Object(map);
            assert!(validator.is_valid(&value), "{value}");
            assert_agree(&validator, &schema, &value);
            // One key missing, one of the wrong type, one unknown.
            let object = value.as_object_mut().unwrap();
            object.insert(names[count / 2].clone(), json!("x"));
            assert!(!validator.is_valid(&value));
            assert_agree(&validator, &schema, &value);
            let object = value.as_object_mut().unwrap();
            object.shift_remove(&names[count / 2]);
            assert!(!validator.is_valid(&value));
            assert_agree(&validator, &schema, &value);
            let object = value.as_object_mut().unwrap();
            object.insert(names[count / 2].clone(), json!(2));
            object.insert("zz".into(), json!(2));
            assert!(!validator.is_valid(&value));
            assert_agree(&validator, &schema, &value);
        }
    }
}

#[test]
fn integer_ranges_past_i64_answer_as_the_general_validator() {
    let two_63 = 9_223_372_036_854_775_808u64;
    let schemas = [
        json!({"type": "object", "properties": {"n": {"type": "integer", "minimum": two_63}}}),
        json!({"type": "object", "properties": {"n": {"type": "integer",
               "exclusiveMinimum": i64::MAX}}}),
        json!({"type": "object", "properties": {"n": {"type": "integer",
               "exclusiveMaximum": i64::MIN}}}),
        json!({"type": "object", "properties": {"n": {"type": "integer",
               "minimum": 5, "maximum": 4}}}),
        json!({"type": "object", "properties": {"n": {"type": "number",
               "minimum": i64::MIN, "maximum": two_63}}}),
        json!({"type": "object", "properties": {"n": {"type": "string"}}}),
        json!({"type": "object", "properties": {"n": {"enum": ["1"]}}}),
        json!({"type": "object", "properties": {"n": {"minimum": -1, "maximum": 1}}}),
    ];
    let values = [
        json!(i64::MIN),
        json!(i64::MIN + 1),
        json!(-1),
        json!(0),
        json!(1),
        json!(4),
        json!(5),
        json!(i64::MAX),
        json!(two_63),
        json!(u64::MAX),
        json!(0.5),
    ];
    for schema in &schemas {
        let validator = compiled(schema);
        assert!(validator.is_flat(), "{schema}");
        for n in &values {
            assert_agree(&validator, schema, &json!({ "n": n }));
        }
    }
    // And what they answer: nothing in the first three, the lowest i64 in
    // the fifth.
    let none = compiled(&schemas[0]);
    assert!(!none.is_valid(&json!({"n": i64::MAX})));
    assert!(none.is_valid(&json!({"n": two_63})));
    assert!(compiled(&schemas[4]).is_valid(&json!({"n": i64::MIN})));
}
