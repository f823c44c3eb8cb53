//! The sandbox: one program run in a fresh QuickJS runtime, with a heap
//! limit, a stack limit, an interrupt handler that stops it at its time
//! limit or when the host says so, and a bounded output. The program sees
//! the ECMAScript built-ins (minus the clock and randomness), a `tools`
//! object whose methods cross into the host, and `print`; nothing else.
//!
//! This module knows nothing of the executor: each tool call is handed to
//! a [`Host`] ([`host`](crate::host): the functions the program calls).

use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use rquickjs::{Context, Ctx, Function, Runtime, Value};

use crate::SandboxLimits;
use crate::host::{Calls, Host, host_print};
use crate::state::{Limit, Shared, Stop};

/// How a program ended.
#[derive(Debug)]
pub(crate) enum Ending {
    /// It returned: its value as JSON text (`null` for nothing), and what
    /// it printed.
    Returned {
        /// The returned value, as JSON text.
        value: String,
        /// What it printed, one line per `print`.
        printed: String,
    },
    /// The host paused it at a call that waits for an approval.
    Paused,
    /// It did not parse: the parser's message, line and column (1-based,
    /// in the program as written).
    Syntax {
        /// The parser's message.
        message: String,
        /// The line, from 1.
        line: u32,
        /// The column, from 1.
        column: u32,
    },
    /// It threw an error it did not catch.
    Threw(String),
    /// It ran out of a bounded resource and was stopped.
    Limit(Limit),
}

/// The code run before the program: removes the clock and randomness,
/// and defines `ToolError`, `tools` and `print` over the host's functions.
/// `tools` holds one host function per offered tool, so that
/// `tools.NAME(args)` goes straight to the host. Any other name falls
/// through to a proxy below, whose method the host answers by name (and
/// the executor refuses). A refused or failed call throws a `ToolError`,
/// which the host makes with the global `ToolError` (which the program
/// cannot replace).
const PRELUDE: &str = r#"
"use strict";
(() => {
  const call = globalThis.__host_call, out = globalThis.__host_print;
  const names = globalThis.__host_tools, methods = globalThis.__host_methods;
  delete globalThis.__host_call; delete globalThis.__host_print;
  delete globalThis.__host_tools; delete globalThis.__host_methods;
  delete globalThis.Date;
  delete globalThis.performance;
  Math.random = () => { throw new Error("the sandbox has no randomness: ask a tool for it"); };
  class ToolError extends Error {
    constructor(e) {
      super(e.message);
      this.name = "ToolError";
      this.kind = e.kind; this.errorClass = e.class; this.tool = e.tool; this.callId = e.call_id;
    }
  }
  const others = new Proxy(Object.create(null), {
    get(_, name) { return typeof name === "string" ? call.bind(null, name) : undefined; },
  });
  const tools = Object.create(others);
  names.forEach((name, i) => Object.defineProperty(tools, name, { value: methods[i], enumerable: true }));
  Object.freeze(tools);
  const show = (v) => typeof v === "string" ? v : JSON.stringify(v);
  Object.defineProperty(globalThis, "tools", { value: tools });
  Object.defineProperty(globalThis, "ToolError", { value: ToolError });
  Object.defineProperty(globalThis, "print", { value: (...v) => out(v.map(show).join(" ")) });
  Object.defineProperty(globalThis, "console", { value: Object.freeze({ log: globalThis.print, error: globalThis.print }) });
})();
"#;

/// The program is the body of an async function: `return` gives its
/// value. Both wrappers keep the program's own lines where it wrote them
/// (the opening stays on the first line, which the column fix accounts
/// for).
const OPEN: &str = "globalThis.__result = (async () => {";
const CLOSE: &str = "\n})().then((v) => { globalThis.__value = JSON.stringify(v === undefined ? null : v) ?? null; }, (e) => { globalThis.__thrown = e; });";

/// Runs `code` under `limits`, answering its calls of `tools` (the
/// offered tools, by name) through `host`, and gives the host back;
/// `cancelled` turning true stops the program as its time limit would.
/// Blocking: call it off the async workers.
pub(crate) fn run<H: Host + 'static>(
    code: &str,
    tools: &[String],
    limits: &SandboxLimits,
    cancelled: Arc<AtomicBool>,
    host: H,
) -> (Ending, H) {
    let host = Rc::new(RefCell::new(host));
    let ending = run_shared(code, tools, limits, cancelled, &host);
    let host = match Rc::try_unwrap(host) {
        Ok(host) => host.into_inner(),
        Err(_) => unreachable!("the engine, and with it every function holding the host, is gone"),
    };
    (ending, host)
}

fn run_shared<H: Host + 'static>(
    code: &str,
    tools: &[String],
    limits: &SandboxLimits,
    cancelled: Arc<AtomicBool>,
    host: &Rc<RefCell<H>>,
) -> Ending {
    let Ok(runtime) = Runtime::new() else {
        return Ending::Limit(Limit::Memory);
    };
    runtime.set_memory_limit(limits.max_memory);
    runtime.set_max_stack_size(limits.max_stack);
    let shared = Shared {
        host: Rc::clone(host),
        stop: Rc::new(Cell::new(Stop::Running)),
        // Engine time excludes the time spent in tool calls (they have
        // their own timeouts): the deadline moves on by each call's
        // duration, as the host measured it.
        deadline: Rc::new(Cell::new(Instant::now() + limits.max_time)),
        printed: Rc::new(RefCell::new(String::new())),
        cancelled,
    };
    {
        let (stop, deadline) = (Rc::clone(&shared.stop), Rc::clone(&shared.deadline));
        let cancelled = Arc::clone(&shared.cancelled);
        runtime.set_interrupt_handler(Some(Box::new(move || {
            if stop.get() != Stop::Running {
                return true;
            }
            if Instant::now() > deadline.get() || cancelled.load(Ordering::Acquire) {
                stop.set(Stop::Limit(Limit::Time));
                return true;
            }
            false
        })));
    }
    let Ok(context) = Context::full(&runtime) else {
        return Ending::Limit(Limit::Memory);
    };
    let ending = context.with(|ctx| run_in(&ctx, code, tools, limits, &shared));
    drop(context);
    drop(runtime);
    match shared.stop.get() {
        Stop::Paused => Ending::Paused,
        Stop::Limit(limit) => Ending::Limit(limit),
        Stop::Running => match ending {
            Ending::Returned { value, .. } => {
                let printed = shared.printed.take();
                if value.len() + printed.len() > limits.max_output {
                    Ending::Limit(Limit::Output)
                } else {
                    Ending::Returned { value, printed }
                }
            }
            other => other,
        },
    }
}

/// Installs the host's functions, runs the prelude and the program, and
/// reads how it ended.
fn run_in<'js, H: Host + 'static>(
    ctx: &Ctx<'js>,
    code: &str,
    tools: &[String],
    limits: &SandboxLimits,
    shared: &Shared<H>,
) -> Ending {
    let globals = ctx.globals();
    let print = host_print(
        Rc::clone(&shared.stop),
        Rc::clone(&shared.printed),
        limits.max_output,
    );
    let calls = Calls::new(shared, limits);
    let methods = (0..tools.len())
        .map(|n| Function::new(ctx.clone(), calls.clone().offered(n)))
        .collect::<rquickjs::Result<Vec<_>>>();
    let installed = methods
        .and_then(|methods| globals.set("__host_methods", methods))
        .and_then(|()| Function::new(ctx.clone(), calls.named()))
        .and_then(|f| globals.set("__host_call", f))
        .and_then(|()| Function::new(ctx.clone(), print))
        .and_then(|f| globals.set("__host_print", f))
        .and_then(|()| globals.set("__host_tools", tools.to_vec()))
        .and_then(|()| ctx.eval::<(), _>(PRELUDE));
    if installed.is_err() {
        return caught(ctx, false);
    }
    let source = format!("{OPEN}{code}{CLOSE}");
    if ctx.eval::<(), _>(source).is_err() {
        return caught(ctx, true);
    }
    // The program's awaits are microtasks: run them all.
    while shared.stop.get() == Stop::Running && ctx.execute_pending_job() {}
    if let Ok(thrown) = globals.get::<_, Value>("__thrown")
        && !thrown.is_undefined()
    {
        return classify(describe(&thrown));
    }
    match globals.get::<_, Option<String>>("__value") {
        Ok(Some(value)) => Ending::Returned {
            value,
            printed: String::new(),
        },
        Ok(None) => Ending::Returned {
            value: String::from("null"),
            printed: String::new(),
        },
        Err(_) => caught(ctx, false),
    }
}

/// How the program ended, from the exception the engine holds.
fn caught(ctx: &Ctx<'_>, parsing: bool) -> Ending {
    let exception = ctx.catch();
    let text = describe(&exception);
    let name = exception
        .as_object()
        .and_then(|o| o.get::<_, String>("name").ok());
    if parsing && name.as_deref() == Some("SyntaxError") {
        let stack = exception
            .as_object()
            .and_then(|o| o.get::<_, String>("stack").ok())
            .unwrap_or_default();
        let (line, column) = position(&stack).unwrap_or((1, 1));
        // The program starts on the wrapper's first line, after `OPEN`.
        let column = if line == 1 {
            column.saturating_sub(OPEN.len() as u32).max(1)
        } else {
            column
        };
        let message = exception
            .as_object()
            .and_then(|o| o.get::<_, String>("message").ok())
            .unwrap_or(text);
        return Ending::Syntax {
            message,
            line,
            column,
        };
    }
    classify(text)
}

/// An error the engine threw for a bound (its own words), or the program's.
/// Out of memory, the engine throws its `InternalError` or, when even that
/// cannot be allocated, `null`.
fn classify(text: String) -> Ending {
    if text.starts_with("InternalError: out of memory") || text == NULL_THROWN {
        return Ending::Limit(Limit::Memory);
    }
    if text.starts_with("RangeError: Maximum call stack size exceeded")
        || text.starts_with("InternalError: stack overflow")
    {
        return Ending::Limit(Limit::Stack);
    }
    if text.starts_with("InternalError: interrupted") {
        return Ending::Limit(Limit::Time);
    }
    Ending::Threw(text)
}

/// How a thrown `null` is described.
const NULL_THROWN: &str = "null";

/// `name: message` of a thrown value (or its string form).
fn describe(value: &Value<'_>) -> String {
    if let Some(object) = value.as_object() {
        let name = object.get::<_, String>("name").unwrap_or_default();
        let message = object.get::<_, String>("message").unwrap_or_default();
        if !name.is_empty() || !message.is_empty() {
            return format!("{name}: {message}");
        }
    }
    value
        .as_string()
        .and_then(|s| s.to_string().ok())
        .unwrap_or_else(|| {
            if value.is_null() {
                String::from(NULL_THROWN)
            } else {
                String::from("a value that is not an error")
            }
        })
}

/// The first `:line:column` of an engine stack trace.
fn position(stack: &str) -> Option<(u32, u32)> {
    let frame = stack.lines().next()?;
    let mut parts = frame.rsplitn(3, ':');
    let column = parts.next()?.trim_end_matches(')').parse().ok()?;
    let line = parts.next()?.parse().ok()?;
    Some((line, column))
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::host::{Callee, Failure, HostAnswer};
    use tinyagents_tools::call::RawArguments;

    /// A host without tools.
    struct NoHost;

    impl Host for NoHost {
        fn call(&mut self, _: Callee<'_>, _: RawArguments) -> (HostAnswer, Duration) {
            let failure = Failure {
                kind: String::from("unknown_tool"),
                class: String::from("repair"),
                message: String::from("no tools"),
                ..Failure::default()
            };
            (HostAnswer::Error(failure), Duration::ZERO)
        }
    }

    fn run_plain(code: &str) -> Ending {
        run(code, &[], &SandboxLimits::default(), Arc::default(), NoHost).0
    }

    #[test]
    fn a_program_returns_its_value_as_json() {
        match run_plain("const a = [1, 2, 3]; return a.map(x => x * 2);") {
            Ending::Returned { value, .. } => assert_eq!(value, "[2,4,6]"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_syntax_error_names_the_line_and_column_as_written() {
        match run_plain("const a = 1;\nlet x = ;\n") {
            Ending::Syntax { line, column, .. } => assert_eq!((line, column), (2, 9)),
            other => panic!("{other:?}"),
        }
        match run_plain("let x = ;") {
            Ending::Syntax { line, column, .. } => assert_eq!((line, column), (1, 9)),
            other => panic!("{other:?}"),
        }
    }
}
