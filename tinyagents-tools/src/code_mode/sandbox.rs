//! The sandbox: one program run in a fresh QuickJS runtime, with a heap
//! limit, a stack limit, an interrupt handler that stops it at its time
//! limit or when the host says so, and a bounded output. The program sees
//! the ECMAScript built-ins (minus the clock and randomness), a `tools`
//! object whose methods cross into the host, and `print`; nothing else.
//!
//! This module knows nothing of the executor: each tool call is handed to
//! a [`Host`] as a name and JSON text, and its answer comes back as a
//! [`HostAnswer`].

use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::time::Instant;

use rquickjs::{Context, Ctx, Function, Runtime, Value};

use super::SandboxLimits;
use crate::CancellationToken;

/// What the host answers to one tool call of the program.
pub(crate) enum HostAnswer {
    /// The call succeeded: the value the program receives, as JSON text.
    Value(String),
    /// The call was refused or failed: the program gets a `ToolError` it
    /// can catch. The JSON text is the error object's fields.
    Error(String),
    /// The call waits for a person's decision: the program stops here.
    Pause,
}

/// Whoever answers the program's tool calls.
pub(crate) trait Host {
    /// Answers the program's call of tool `name` with `arguments` (JSON text).
    fn call(&mut self, name: &str, arguments: &str) -> HostAnswer;
}

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

/// A bound the sandbox enforces.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Limit {
    /// Its own running time ([`SandboxLimits::max_time`]).
    Time,
    /// Its heap ([`SandboxLimits::max_memory`]).
    Memory,
    /// Its stack ([`SandboxLimits::max_stack`]).
    Stack,
    /// What it printed and returned ([`SandboxLimits::max_output`]).
    Output,
    /// Its number of tool calls ([`SandboxLimits::max_calls`]).
    Calls,
}

impl Limit {
    /// The resource's name, as errors and events spell it.
    pub(crate) fn resource(self) -> &'static str {
        match self {
            Limit::Time => "time",
            Limit::Memory => "memory",
            Limit::Stack => "stack",
            Limit::Output => "output",
            Limit::Calls => "calls",
        }
    }
}

/// Why the host stopped the program from inside (read by the interrupt
/// handler, which then ends it with an error the program cannot catch).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Stop {
    Running,
    Paused,
    Limit(Limit),
}

/// The code run before the program: removes the clock and randomness,
/// and defines `ToolError`, `tools` and `print` over the host's two
/// functions.
const PRELUDE: &str = r#"
"use strict";
(() => {
  const call = globalThis.__host_call, out = globalThis.__host_print;
  delete globalThis.__host_call; delete globalThis.__host_print;
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
  const show = (v) => typeof v === "string" ? v : JSON.stringify(v);
  const tools = new Proxy(Object.create(null), {
    get(_, name) {
      if (typeof name !== "string") return undefined;
      return (args) => {
        const answer = call(name, JSON.stringify(args === undefined ? {} : args));
        if (answer[0] === "v") return JSON.parse(answer.slice(1));
        throw new ToolError(JSON.parse(answer.slice(1)));
      };
    },
  });
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

/// Runs `code` under `limits`, answering its tool calls through `host`,
/// and gives the host back; `cancel` firing stops the program as its time
/// limit would. Blocking: call it off the async workers.
pub(crate) fn run<H: Host + 'static>(
    code: &str,
    limits: &SandboxLimits,
    cancel: Option<CancellationToken>,
    host: H,
) -> (Ending, H) {
    let host = Rc::new(RefCell::new(host));
    let ending = run_shared(code, limits, cancel, &host);
    let host = match Rc::try_unwrap(host) {
        Ok(host) => host.into_inner(),
        Err(_) => unreachable!("the engine, and with it every function holding the host, is gone"),
    };
    (ending, host)
}

fn run_shared<H: Host + 'static>(
    code: &str,
    limits: &SandboxLimits,
    cancel: Option<CancellationToken>,
    host: &Rc<RefCell<H>>,
) -> Ending {
    let Ok(runtime) = Runtime::new() else {
        return Ending::Limit(Limit::Memory);
    };
    runtime.set_memory_limit(limits.max_memory);
    runtime.set_max_stack_size(limits.max_stack);
    let stop = Rc::new(Cell::new(Stop::Running));
    // Engine time excludes the time spent in tool calls (they have their
    // own timeouts): the deadline moves on by each call's duration.
    let deadline = Rc::new(Cell::new(Instant::now() + limits.max_time));
    {
        let (stop, deadline) = (Rc::clone(&stop), Rc::clone(&deadline));
        runtime.set_interrupt_handler(Some(Box::new(move || {
            if stop.get() != Stop::Running {
                return true;
            }
            if Instant::now() > deadline.get() || cancel.as_ref().is_some_and(|c| c.is_cancelled())
            {
                stop.set(Stop::Limit(Limit::Time));
                return true;
            }
            false
        })));
    }
    let Ok(context) = Context::full(&runtime) else {
        return Ending::Limit(Limit::Memory);
    };
    let printed = Rc::new(RefCell::new(String::new()));
    let ending = context.with(|ctx| {
        let host_call = {
            let (stop, deadline, host) = (Rc::clone(&stop), Rc::clone(&deadline), Rc::clone(host));
            let (max_calls, calls) = (limits.max_calls, Cell::new(0u32));
            move |name: String, arguments: String| -> String {
                if stop.get() != Stop::Running {
                    return String::from(
                        "e{\"kind\":\"cancelled\",\"class\":\"fatal\",\"message\":\"the program is stopping\"}",
                    );
                }
                if calls.get() >= max_calls {
                    stop.set(Stop::Limit(Limit::Calls));
                    return String::from(
                        "e{\"kind\":\"limit_exceeded\",\"class\":\"fatal\",\"message\":\"the program made too many tool calls\"}",
                    );
                }
                calls.set(calls.get() + 1);
                let started = Instant::now();
                let answer = host.borrow_mut().call(&name, &arguments);
                deadline.set(deadline.get() + started.elapsed());
                match answer {
                    HostAnswer::Value(v) => format!("v{v}"),
                    HostAnswer::Error(e) => format!("e{e}"),
                    HostAnswer::Pause => {
                        stop.set(Stop::Paused);
                        String::from(
                            "e{\"kind\":\"pending_approval\",\"class\":\"fatal\",\"message\":\"the call waits for an approval\"}",
                        )
                    }
                }
            }
        };
        let print = {
            let (stop, printed, max_output) = (Rc::clone(&stop), Rc::clone(&printed), limits.max_output);
            move |line: String| {
                let mut out = printed.borrow_mut();
                if out.len() + line.len() + 1 > max_output {
                    stop.set(Stop::Limit(Limit::Output));
                    return;
                }
                out.push_str(&line);
                out.push('\n');
            }
        };
        let stopped = || stop.get() != Stop::Running;
        run_in(&ctx, code, host_call, print, &stopped)
    });
    drop(context);
    drop(runtime);
    match stop.get() {
        Stop::Paused => Ending::Paused,
        Stop::Limit(limit) => Ending::Limit(limit),
        Stop::Running => match ending {
            Ending::Returned { value, .. } => {
                let printed = printed.take();
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
fn run_in<'js>(
    ctx: &Ctx<'js>,
    code: &str,
    host_call: impl Fn(String, String) -> String + 'static,
    print: impl Fn(String) + 'static,
    stopped: &dyn Fn() -> bool,
) -> Ending {
    let globals = ctx.globals();
    let installed = Function::new(ctx.clone(), host_call)
        .and_then(|f| globals.set("__host_call", f))
        .and_then(|()| Function::new(ctx.clone(), print))
        .and_then(|f| globals.set("__host_print", f))
        .and_then(|()| ctx.eval::<(), _>(PRELUDE));
    if installed.is_err() {
        return caught(ctx, false);
    }
    let source = format!("{OPEN}{code}{CLOSE}");
    if ctx.eval::<(), _>(source).is_err() {
        return caught(ctx, true);
    }
    // The program's awaits are microtasks: run them all.
    while !stopped() && ctx.execute_pending_job() {}
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

/// A program that needs no host, for measuring the engine alone.
#[cfg(test)]
pub(crate) struct NoHost;

#[cfg(test)]
impl Host for NoHost {
    fn call(&mut self, _: &str, _: &str) -> HostAnswer {
        HostAnswer::Error(String::from(
            "{\"kind\":\"unknown_tool\",\"class\":\"repair\",\"message\":\"no tools\"}",
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run_plain(code: &str) -> Ending {
        run(code, &SandboxLimits::default(), None, NoHost).0
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
