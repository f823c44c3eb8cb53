//! A program has nothing to call but its tools: no network, files,
//! environment, process, clock or randomness; its globals are exactly the
//! ones the guide lists.

use serde_json::json;

use crate::model::{answer, program_result};
use crate::tools::setup;

#[tokio::test]
async fn there_is_nothing_ambient_to_call() {
    let s = setup();
    let code = r#"
const names = ["fetch", "XMLHttpRequest", "WebSocket", "require", "process", "Deno", "Bun",
  "std", "os", "scriptArgs", "setTimeout", "Date", "performance", "__host_call", "__host_print",
  "__host_tools", "__host_methods"];
return names.filter((n) => typeof globalThis[n] !== "undefined");
"#;
    let found = program_result(&answer(&s.outer, &s.run("r"), code).await);
    assert_eq!(found, json!([]));
}

#[tokio::test]
async fn no_module_can_be_imported_and_there_is_no_randomness() {
    let s = setup();
    let code = r#"
const out = [];
try { await import("os"); out.push("os imported"); } catch (e) { out.push("no os"); }
try { await import("std"); out.push("std imported"); } catch (e) { out.push("no std"); }
try { Math.random(); out.push("random"); } catch (e) { out.push("no random"); }
return out;
"#;
    let out = program_result(&answer(&s.outer, &s.run("r"), code).await);
    assert_eq!(out, json!(["no os", "no std", "no random"]));
}

#[tokio::test]
async fn the_host_functions_cannot_be_reached_or_replaced() {
    let s = setup();
    let code = r#"
const out = [];
try { tools = null; } catch (e) { out.push("tools kept"); }
out.push(typeof tools.lookup);
return out;
"#;
    let out = program_result(&answer(&s.outer, &s.run("r"), code).await);
    assert_eq!(out, json!(["tools kept", "function"]));
}

/// The globals the guide lists: the ECMAScript built-ins (ECMA-262's
/// global object, ES2026 with explicit resource management) but `Date`;
/// QuickJS's `InternalError`; the web's `queueMicrotask`, `atob`, `btoa`
/// and `DOMException`; and the program's `tools`, `ToolError`, `print`
/// and `console`.
const GLOBALS: &[&str] = &[
    // ECMA-262, the global object: value properties, functions, constructors
    // and namespaces.
    "globalThis",
    "Infinity",
    "NaN",
    "undefined",
    "eval",
    "isFinite",
    "isNaN",
    "parseFloat",
    "parseInt",
    "decodeURI",
    "decodeURIComponent",
    "encodeURI",
    "encodeURIComponent",
    "AggregateError",
    "Array",
    "ArrayBuffer",
    "AsyncDisposableStack",
    "BigInt",
    "BigInt64Array",
    "BigUint64Array",
    "Boolean",
    "DataView",
    "DisposableStack",
    "Error",
    "EvalError",
    "FinalizationRegistry",
    "Float16Array",
    "Float32Array",
    "Float64Array",
    "Function",
    "Int8Array",
    "Int16Array",
    "Int32Array",
    "Iterator",
    "Map",
    "Number",
    "Object",
    "Promise",
    "Proxy",
    "RangeError",
    "ReferenceError",
    "RegExp",
    "Set",
    "SharedArrayBuffer",
    "String",
    "SuppressedError",
    "Symbol",
    "SyntaxError",
    "TypeError",
    "Uint8Array",
    "Uint8ClampedArray",
    "Uint16Array",
    "Uint32Array",
    "URIError",
    "WeakMap",
    "WeakRef",
    "WeakSet",
    "Atomics",
    "JSON",
    "Math",
    "Reflect",
    // Annex B.
    "escape",
    "unescape",
    // QuickJS.
    "InternalError",
    // The web's.
    "queueMicrotask",
    "atob",
    "btoa",
    "DOMException",
    // The program's.
    "tools",
    "ToolError",
    "print",
    "console",
];

#[tokio::test]
async fn the_globals_are_exactly_the_ones_the_guide_lists() {
    let s = setup();
    let code = "return Object.getOwnPropertyNames(globalThis);";
    let found = program_result(&answer(&s.outer, &s.run("r"), code).await);
    let mut found: Vec<String> = serde_json::from_value(found).unwrap();
    found.sort();
    let mut expected: Vec<String> = GLOBALS.iter().map(|g| g.to_string()).collect();
    expected.sort();
    assert_eq!(found, expected);
}

#[tokio::test]
async fn math_random_is_absent_and_math_has_the_rest() {
    let s = setup();
    let code = r#"return [typeof Math.random, "random" in Math, Math.max(1, 2), Math.sqrt(16)];"#;
    let out = program_result(&answer(&s.outer, &s.run("r"), code).await);
    assert_eq!(out, json!(["undefined", false, 2, 4]));
}
