//! A program has nothing to call but its tools: no network, files,
//! environment, process, clock or randomness.

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
