//! WASM tools: fuel and memory limits stop real runaways in the engine, a
//! fresh instance per call keeps no state, and the next call is answered.

use std::sync::Arc;

use serde_json::json;
use tinyagents_tools::spec::ToolSpecBuilder;
use tinyagents_tools::wasm::{DEFAULT_FUEL, DEFAULT_MAX_MEMORY, WasmError, WasmTool};
use tinyagents_tools::*;
use tinyagents_tools_tests::*;

use crate::common::exhausted;

/// Bump allocation from offset 1024; `call` answers `{"ok":<input>}`.
const ECHO: &str = include_str!("../../tinyagents-tools/examples/echo.wat");

/// `call` never returns.
const SPIN: &str = r#"(module
  (memory (export "memory") 1)
  (func (export "alloc") (param i32) (result i32) (i32.const 1024))
  (func (export "call") (param i32 i32) (result i64)
    (loop $forever (br $forever))
    (i64.const 0)))"#;

/// `call` grows its memory by 1 MiB until growing fails.
const BOMB: &str = r#"(module
  (memory (export "memory") 1)
  (func (export "alloc") (param i32) (result i32) (i32.const 1024))
  (func (export "call") (param i32 i32) (result i64)
    (loop $more
      (br_if $more (i32.ne (memory.grow (i32.const 16)) (i32.const -1))))
    (i64.const 0)))"#;

/// `call` bumps a global and a byte of memory and answers `{"ok":N}` with
/// N = global + byte: 2 on a fresh instance, more if either survived.
const COUNTER: &str = r#"(module
  (memory (export "memory") 1)
  (global $calls (mut i32) (i32.const 0))
  (data (i32.const 0) "{\22ok\22:0}")
  (func (export "alloc") (param i32) (result i32) (i32.const 1024))
  (func (export "call") (param i32 i32) (result i64)
    (global.set $calls (i32.add (global.get $calls) (i32.const 1)))
    (i32.store8 (i32.const 100) (i32.add (i32.load8_u (i32.const 100)) (i32.const 1)))
    (i32.store8 (i32.const 6)
      (i32.add (i32.const 48) (i32.add (global.get $calls) (i32.load8_u (i32.const 100)))))
    (i64.const 8)))"#;

/// `call` answers `{"err":"too big"}`.
const REFUSES: &str = r#"(module
  (memory (export "memory") 1)
  (data (i32.const 0) "{\22err\22:\22too big\22}")
  (func (export "alloc") (param i32) (result i32) (i32.const 1024))
  (func (export "call") (param i32 i32) (result i64) (i64.const 17)))"#;

/// `call` traps.
const TRAPS: &str = r#"(module
  (memory (export "memory") 1)
  (func (export "alloc") (param i32) (result i32) (i32.const 1024))
  (func (export "call") (param i32 i32) (result i64) (unreachable)))"#;

fn tool(
    name: &str,
    wat: &str,
    bounds: impl FnOnce(ToolSpecBuilder) -> ToolSpecBuilder,
) -> WasmTool {
    let spec = bounds(spec(name, json!({"type": "object"})).safety(ToolSafety::pure()))
        .build()
        .unwrap();
    WasmTool::new(spec, &wat::parse_str(wat).unwrap()).unwrap()
}

fn exec(tools: Vec<WasmTool>) -> ToolExecutor {
    executor(
        tools
            .into_iter()
            .map(|t| Arc::new(t) as Arc<dyn Tool>)
            .collect(),
    )
    .build()
    .unwrap()
}

#[tokio::test]
async fn a_wasm_tool_answers_json_with_json() {
    let exec = exec(vec![tool("wasm_echo", ECHO, |b| b)]);
    let result = execute_once(&exec, call("c1", "wasm_echo", r#"{"text":"héllo"}"#)).await;
    assert_eq!(result.structured, Some(json!({"text": "héllo"})));
}

#[tokio::test]
async fn an_endless_loop_runs_out_of_fuel_and_the_next_call_is_answered() {
    let exec = exec(vec![
        tool("wasm_spin", SPIN, |b| b.fuel(1_000_000)),
        tool("wasm_echo", ECHO, |b| b),
    ]);
    let result = execute_once(&exec, call("spin-1", "wasm_spin", "{}")).await;
    assert_eq!(result.tool_call_id.as_str(), "spin-1");
    let error = exhausted(&result, "fuel");
    assert_eq!(error.class(), ErrorClass::Repair);
    assert!(result.text().contains("1000000"), "{}", result.text());
    let next = execute_once(&exec, call("c2", "wasm_echo", r#"{"a":1}"#)).await;
    assert_eq!(next.structured, Some(json!({"a": 1})));
    // The same tool runs again with its full fuel.
    let again = execute_once(&exec, call("spin-2", "wasm_spin", "{}")).await;
    assert_eq!(again.outcome(), "resource_exhausted");
}

#[tokio::test]
async fn an_allocation_bomb_stops_at_the_memory_limit() {
    let exec = exec(vec![tool("wasm_bomb", BOMB, |b| {
        b.max_memory(4 << 20).fuel(u64::MAX / 2)
    })]);
    let result = execute_once(&exec, call("c1", "wasm_bomb", "{}")).await;
    exhausted(&result, "memory");
    assert!(result.text().contains("4 MiB"), "{}", result.text());
}

#[tokio::test]
async fn no_global_or_memory_state_survives_from_one_call_to_the_next() {
    let exec = exec(vec![tool("wasm_counter", COUNTER, |b| b)]);
    for id in ["c1", "c2", "c3"] {
        let result = execute_once(&exec, call(id, "wasm_counter", "{}")).await;
        assert_eq!(result.structured, Some(json!(2)), "{id}");
    }
}

#[tokio::test]
async fn an_err_document_is_a_repairable_error_and_a_trap_is_a_crash() {
    let exec = exec(vec![
        tool("wasm_refuses", REFUSES, |b| b),
        tool("wasm_traps", TRAPS, |b| b),
    ]);
    let refused = execute_once(&exec, call("c1", "wasm_refuses", "{}")).await;
    assert_eq!(refused.error.as_ref().unwrap().class(), ErrorClass::Repair);
    assert_eq!(refused.text(), "too big");
    let trapped = execute_once(&exec, call("c2", "wasm_traps", "{}")).await;
    assert_eq!(trapped.outcome(), "crashed");
}

#[test]
fn the_spec_shows_the_bounds_that_hold() {
    let defaulted = tool("wasm_echo", ECHO, |b| b);
    let bounds = Tool::<(), ()>::spec(&defaulted).bounds;
    assert_eq!(
        (bounds.fuel, bounds.max_memory),
        (Some(DEFAULT_FUEL), Some(DEFAULT_MAX_MEMORY))
    );
    let set = tool("wasm_echo", ECHO, |b| b.fuel(5).max_memory(1 << 20));
    let spec = Tool::<(), ()>::spec(&set);
    assert_eq!(
        (spec.bounds.fuel, spec.bounds.max_memory),
        (Some(5), Some(1 << 20))
    );
    let exported = serde_json::to_value(spec).unwrap();
    assert_eq!(exported["bounds"]["fuel"], json!(5));
}

#[test]
fn a_module_that_imports_or_lacks_the_abi_is_refused() {
    let spec = || spec("wasm_bad", json!({"type": "object"})).build().unwrap();
    let imports = wat::parse_str(r#"(module (import "env" "f" (func)))"#).unwrap();
    assert!(
        matches!(WasmTool::new(spec(), &imports), Err(WasmError::Imports(name)) if name == "env::f")
    );
    let no_call = wat::parse_str(
        r#"(module (memory (export "memory") 1) (func (export "alloc") (param i32) (result i32) (i32.const 0)))"#,
    )
    .unwrap();
    assert!(matches!(
        WasmTool::new(spec(), &no_call),
        Err(WasmError::MissingExport("call"))
    ));
    assert!(matches!(
        WasmTool::new(spec(), b"not wasm"),
        Err(WasmError::Invalid(_))
    ));
}
