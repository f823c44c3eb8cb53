//! What a `run_code` call answers is exactly what its program did: a
//! program that never reached its `return` did not finish, and a value
//! JSON cannot carry as it is fails, naming what and where, instead of
//! arriving as `null` or emptied.

use serde_json::{Value, json};
use tinyagents_tools::ErrorClass;
use tinyagents_tools_code_mode::{MAX_RESULT_DEPTH, ProgramError, Uncarried};

use crate::model::{answer, program_error, program_result};
use crate::tools::setup;

#[tokio::test]
async fn a_program_left_awaiting_a_promise_that_never_settles_did_not_finish() {
    let s = setup();
    let code = r#"tools.lookup({ id: 1 }); await new Promise(() => {}); return "reached";"#;
    let r = answer(&s.outer, &s.run("r"), code).await;
    assert_eq!(r.outcome(), "tool", "{}", r.text());
    assert_eq!(r.error.as_ref().unwrap().class(), ErrorClass::Repair);
    assert_eq!(program_error(&r), ProgramError::Unsettled { calls: 1 });
    assert!(
        r.text().contains("the program did not finish"),
        "{}",
        r.text()
    );
    // A promise that nothing settles, left behind by a program that
    // returns, does not matter.
    let code = "new Promise(() => {}); return 1;";
    assert_eq!(
        program_result(&answer(&s.outer, &s.run("r"), code).await),
        1
    );
}

/// Programs whose value JSON cannot carry as it is, with what the call
/// names and where (a JSON Pointer into the value).
const UNCARRIED: &[(&str, Uncarried, &str)] = &[
    (
        "const a = { n: 1 }; a.self = a; return { a };",
        Uncarried::Cycle,
        "/a/self",
    ),
    (
        "const l = [1]; l.push([l]); return l;",
        Uncarried::Cycle,
        "/1/0",
    ),
    ("return { n: 10n };", Uncarried::BigInt, "/n"),
    ("return 1n;", Uncarried::BigInt, ""),
    (
        r#"return { s: "ok\ud800" };"#,
        Uncarried::LoneSurrogate,
        "/s",
    ),
    (r#"return ["\udc00"];"#, Uncarried::LoneSurrogate, "/0"),
    (
        r#"return { inner: { ["k\ud800"]: 1 } };"#,
        Uncarried::LoneSurrogateKey,
        "/inner",
    ),
    ("return { f: () => 1 };", Uncarried::Function, "/f"),
    ("return function () {};", Uncarried::Function, ""),
    ("return { s: Symbol('s') };", Uncarried::Symbol, "/s"),
    ("return [1, undefined];", Uncarried::UndefinedInArray, "/1"),
    ("return [1, , 3];", Uncarried::UndefinedInArray, "/1"),
    ("return { x: [NaN] };", Uncarried::NonFinite, "/x/0"),
    ("return -Infinity;", Uncarried::NonFinite, ""),
    (
        "return { m: new Map([[1, 2]]) };",
        Uncarried::BuiltIn("Map"),
        "/m",
    ),
    ("return [new Set([1])];", Uncarried::BuiltIn("Set"), "/0"),
    (
        "return { e: new TypeError('x') };",
        Uncarried::BuiltIn("Error"),
        "/e",
    ),
    ("return { r: /a+/ };", Uncarried::BuiltIn("RegExp"), "/r"),
    (
        "return new Uint8Array([1, 2]);",
        Uncarried::BuiltIn("typed array"),
        "",
    ),
    (
        "return { p: Promise.resolve(1) };",
        Uncarried::BuiltIn("Promise"),
        "/p",
    ),
    ("return new Proxy({}, {});", Uncarried::Proxy, ""),
    (
        "return [[1].values()];",
        Uncarried::BuiltIn("iterator"),
        "/0",
    ),
    ("return { b: Object(1n) };", Uncarried::BigInt, "/b"),
    // The built-ins are the ones of before the program ran: replacing a
    // global hides nothing.
    (
        "const m = new Map([[1, 2]]); globalThis.Map = function () {}; return { m };",
        Uncarried::BuiltIn("Map"),
        "/m",
    ),
    // The key `JSON.stringify` passes to `toJSON` is kept, and what it
    // returns is judged like any value.
    (
        "return { at: { toJSON() { return [undefined]; } } };",
        Uncarried::UndefinedInArray,
        "/at/0",
    ),
    // A pointer's `/` and `~` are escaped.
    (r#"return { "a/b~c": 1n };"#, Uncarried::BigInt, "/a~1b~0c"),
];

#[tokio::test]
async fn a_return_value_json_cannot_carry_fails_naming_what_and_where() {
    let s = setup();
    for &(code, what, path) in UNCARRIED {
        let r = answer(&s.outer, &s.run("r"), code).await;
        assert_eq!(r.outcome(), "tool", "{code}: {}", r.text());
        assert_eq!(r.error.as_ref().unwrap().class(), ErrorClass::Repair);
        let expected = ProgramError::Uncarried {
            what,
            path: path.to_owned(),
        };
        assert_eq!(program_error(&r), expected, "{code}");
        assert_eq!(r.text(), expected.to_string(), "{code}");
    }
}

#[tokio::test]
async fn a_return_value_json_carries_arrives_as_json_stringify_writes_it() {
    let s = setup();
    let code = r#"
class Point { constructor() { this.x = 1; this.y = 2; } get sum() { return 3; } }
const hidden = { shown: 1 };
Object.defineProperty(hidden, "hidden", { value: 2, enumerable: false });
hidden[Symbol("s")] = 3;
const bare = Object.create(null);
bare.k = "v";
return {
  scalars: [null, true, false, 0, -0, 1.5, -7, 2 ** 53, 1e21, "é ✓ 🦀 \n \" \\ \u0001"],
  skipped: undefined,
  point: new Point(),
  hidden,
  bare,
  boxed: [new Number(5), new String("s"), new Boolean(false)],
  at: { toJSON(key) { return "key:" + key; } },
  list: [{ toJSON(key) { return key; } }],
  "0": "zero", "10": "ten",
};
"#;
    let value = program_result(&answer(&s.outer, &s.run("r"), code).await);
    // What `JSON.parse(JSON.stringify(value))` gives in any engine.
    let expected = json!({
        "0": "zero", "10": "ten",
        "scalars": [null, true, false, 0, 0, 1.5, -7, 9007199254740992_u64, 1e21, "é ✓ 🦀 \n \" \\ \u{1}"],
        "point": {"x": 1, "y": 2},
        "hidden": {"shown": 1},
        "bare": {"k": "v"},
        "boxed": [5, "s", false],
        "at": "key:at",
        "list": ["0"]
    });
    assert_eq!(value, expected);
    // Nothing returned, or `undefined`: the result is null.
    for code in ["tools.lookup({ id: 1 });", "return;", "return undefined;"] {
        let r = answer(&s.outer, &s.run("r"), code).await;
        assert_eq!(program_result(&r), Value::Null, "{code}");
    }
}

#[tokio::test]
async fn a_value_nested_to_the_documented_depth_crosses_and_one_level_more_fails() {
    let s = setup();
    // `depth` arrays, the innermost holding 1.
    let nested = |depth: usize| {
        format!("let v = 1; for (let i = 0; i < {depth}; i++) v = [v]; return {{ v }};")
    };
    // The object holding `v` is one level: `v` may nest one less.
    let r = answer(&s.outer, &s.run("r"), &nested(MAX_RESULT_DEPTH - 1)).await;
    let mut value = program_result(&r)["v"].clone();
    for _ in 0..MAX_RESULT_DEPTH - 1 {
        value = value[0].clone();
    }
    assert_eq!(value, 1);
    let r = answer(&s.outer, &s.run("r"), &nested(MAX_RESULT_DEPTH)).await;
    let path = format!("/v{}", "/0".repeat(MAX_RESULT_DEPTH - 1));
    assert_eq!(
        program_error(&r),
        ProgramError::Uncarried {
            what: Uncarried::TooDeep,
            path
        }
    );
}
