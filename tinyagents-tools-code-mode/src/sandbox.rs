//! The sandbox: one program run in a fresh QuickJS runtime, with a heap
//! limit, a stack limit, an interrupt handler that stops it at its time
//! limit or when the host says so, and a bounded output. The program sees
//! the ECMAScript built-ins (minus the clock and randomness), a `tools`
//! object whose methods cross into the host, `ToolError`, `print` and
//! `console`, and the few globals QuickJS adds (the guide lists them all).
//!
//! The program is compiled as the body of an async function by the
//! engine's module parser, in a parse that refuses text closing the body
//! early, before anything runs ([`compile`]). Its run ends when its promise settles, or when
//! nothing is left to run while it is still pending: then it did not
//! finish. Its value leaves the engine faithfully or not at all
//! ([`result`](crate::result)).
//!
//! This module knows nothing of the executor: each tool call is handed to
//! a [`Host`] ([`host`](crate::host): the functions the program calls).

use std::cell::{Cell, RefCell};
use std::hash::{BuildHasher, RandomState};
use std::rc::Rc;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use rquickjs::module::Declared;
use rquickjs::promise::PromiseState;
use rquickjs::{Context, Ctx, Function, Module, Promise, Runtime, Value};

use crate::SandboxLimits;
use crate::error::{Position, ProgramError};
use crate::host::{Calls, Host, host_print};
use crate::result::{self, Builtins, Refused};
use crate::state::{Limit, Shared, Stop};

/// How a program ended.
#[derive(Debug)]
pub(crate) enum Ending {
    /// It returned: its value, and what it printed.
    Returned {
        /// The returned value (`null` for nothing).
        value: serde_json::Value,
        /// What it printed, one line per `print`.
        printed: String,
    },
    /// The host paused it at a call that waits for an approval.
    Paused,
    /// Its promise was still pending when nothing was left to run.
    Unsettled,
    /// It did not parse, threw, or returned what cannot be carried.
    Failed(ProgramError),
    /// It ran out of a bounded resource and was stopped.
    Limit(Limit),
}

/// The code run before the program: removes the clock and randomness
/// (`Date`, `performance`, `Math.random`),
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
  delete Math.random;
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

/// The module the program is the body of: `export default async function
/// program() { LABEL: {`, the program on lines of its own (the engine's
/// positions are the program's, one line down), then `break LABEL; } }`
/// on a line of its own. `LABEL` is a name drawn for the run, which no
/// program can know: the `break` parses only inside the labeled block,
/// so any `}` of the program that closes the body closes the block first,
/// and the module no longer parses. (Inside a block the program's
/// top-level declarations follow a block's rules: the same function
/// declared twice at its top level, or a `var` and a function of one name
/// there, are refused, with the engine's message.)
fn module_source(code: &str) -> String {
    let label = format!("body_{:016x}", RandomState::new().hash_one(code));
    format!("export default async function program() {{ {label}: {{\n{code}\nbreak {label}; }} }}")
}

/// The engine's message for a `break` to a label not in scope.
const NO_LABEL: &str = "break/continue label not found";

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
    match stopped(shared.stop.get()) {
        Some(stopped) => stopped,
        None => match ending {
            Ending::Returned { value, .. } => {
                let printed = shared.printed.take();
                if json_len(&value) + printed.len() > limits.max_output {
                    Ending::Limit(Limit::Output)
                } else {
                    Ending::Returned { value, printed }
                }
            }
            other => other,
        },
    }
}

/// How a program the host stopped ended (whatever the engine says).
fn stopped(stop: Stop) -> Option<Ending> {
    match stop {
        Stop::Running => None,
        Stop::Paused => Some(Ending::Paused),
        Stop::Limit(limit) => Some(Ending::Limit(limit)),
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
        .and_then(|()| ctx.eval::<(), _>(PRELUDE))
        .and_then(|()| Builtins::new(ctx));
    let Ok(builtins) = installed else {
        return threw(ctx, code);
    };
    let program = match compile(ctx, code) {
        Ok(program) => program,
        Err(ending) => return ending,
    };
    let promise: Promise<'js> = match program.call(()) {
        Ok(promise) => promise,
        Err(_) => return threw(ctx, code),
    };
    // The program's awaits are jobs: run them until none is left (or the
    // host stops it).
    while shared.stop.get() == Stop::Running && ctx.execute_pending_job() {}
    if let Some(stopped) = stopped(shared.stop.get()) {
        return stopped;
    }
    match promise.state() {
        PromiseState::Pending => Ending::Unsettled,
        PromiseState::Rejected => {
            let _ = promise.result::<Value>();
            threw(ctx, code)
        }
        PromiseState::Resolved => {
            let value = match promise.result::<Value>() {
                Some(Ok(value)) => value,
                _ => return threw(ctx, code),
            };
            let budget = limits
                .max_output
                .saturating_sub(shared.printed.borrow().len());
            match result::carry(ctx, &builtins, value, budget) {
                Ok(value) => Ending::Returned {
                    value,
                    printed: String::new(),
                },
                Err(Refused::TooLarge) => Ending::Limit(Limit::Output),
                Err(Refused::Uncarried(what, path)) => {
                    Ending::Failed(ProgramError::Uncarried { what, path })
                }
                Err(Refused::Thrown) => threw(ctx, code),
            }
        }
    }
}

/// The program, compiled as the body of an async function: the module
/// `program` ([`module_source`]: its one export, the function) parsed and
/// evaluated, which runs nothing of the body.
///
/// A wrapper pasted around the text (as QuickJS's own `AsyncFunction`
/// constructor does) lets a program close the body early and go on
/// outside it; the module's labeled block refuses that in the same parse
/// ([`ProgramError::ClosesEarly`]).
fn compile<'js>(ctx: &Ctx<'js>, code: &str) -> Result<Function<'js>, Ending> {
    match Module::declare(ctx.clone(), "program", module_source(code)) {
        Ok(module) => evaluate(ctx, module, code),
        Err(_) => Err(syntax_of(&ctx.catch(), code)),
    }
}

/// The program's function: the module evaluated (which runs nothing of the
/// body), its default export.
fn evaluate<'js>(
    ctx: &Ctx<'js>,
    module: Module<'js, Declared>,
    code: &str,
) -> Result<Function<'js>, Ending> {
    let evaluated = module
        .eval()
        .and_then(|(module, _)| module.get::<_, Function<'js>>("default"));
    evaluated.map_err(|_| threw(ctx, code))
}

/// The syntax error `exception` of `code`'s module (or the bound the
/// parser ran into). The module's own `break`, past the program's end,
/// not finding its label means a `}` of the program closed the body.
fn syntax_of(exception: &Value<'_>, code: &str) -> Ending {
    let object = exception.as_object();
    if object
        .and_then(|o| o.get::<_, String>("name").ok())
        .as_deref()
        != Some("SyntaxError")
    {
        let error = describe(exception);
        return match bound(&error) {
            Some(limit) => Ending::Limit(limit),
            None => Ending::Failed(ProgramError::Threw { error, at: None }),
        };
    }
    let message = object
        .and_then(|o| o.get::<_, String>("message").ok())
        .unwrap_or_else(|| describe(exception));
    let stack = object
        .and_then(|o| o.get::<_, String>("stack").ok())
        .unwrap_or_default();
    let place = position(&stack, "program");
    let last_line = code.split('\n').count() as u32 + 1;
    if message == NO_LABEL && place.is_some_and(|(line, _)| line > last_line) {
        return Ending::Failed(ProgramError::ClosesEarly);
    }
    let at = place.map_or(Position { line: 1, column: 1 }, |(line, column)| {
        in_program(code, line, column)
    });
    Ending::Failed(ProgramError::Syntax { message, at })
}

/// How the program ended, from the exception the engine holds: a bound
/// the engine enforces, in its own words, or the error the program threw,
/// where it was thrown, in the program's terms.
fn threw(ctx: &Ctx<'_>, code: &str) -> Ending {
    let exception = ctx.catch();
    let error = describe(&exception);
    if let Some(limit) = bound(&error) {
        return Ending::Limit(limit);
    }
    let stack = exception
        .as_object()
        .and_then(|o| o.get::<_, String>("stack").ok())
        .unwrap_or_default();
    Ending::Failed(ProgramError::Threw {
        error,
        at: position(&stack, "program").map(|(line, column)| in_program(code, line, column)),
    })
}

/// A position of the module (the engine counts columns in bytes), as the
/// program's: one line up, the column in characters. A position past the
/// program's end (on the closing line) is just past its last character.
fn in_program(code: &str, line: u32, column: u32) -> Position {
    let lines: Vec<&str> = code.split('\n').collect();
    let Some(index) = (line as usize).checked_sub(2) else {
        return Position { line: 1, column: 1 };
    };
    match lines.get(index) {
        Some(text) => {
            let bytes = (column as usize).saturating_sub(1).min(text.len());
            let before = text
                .char_indices()
                .take_while(|&(at, _)| at < bytes)
                .count();
            Position {
                line: line - 1,
                column: before as u32 + 1,
            }
        }
        None => Position {
            line: lines.len() as u32,
            column: lines.last().map_or(0, |l| l.chars().count()) as u32 + 1,
        },
    }
}

/// The bytes of `value`'s JSON text.
fn json_len(value: &serde_json::Value) -> usize {
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0 += bytes.len();
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count(0);
    let _ = serde_json::to_writer(&mut count, value);
    count.0
}

/// The bound an error the engine threw stands for, in its own words.
/// Out of memory, the engine throws its `InternalError` or, when even that
/// cannot be allocated, `null`.
fn bound(text: &str) -> Option<Limit> {
    if text.starts_with("InternalError: out of memory") || text == NULL_THROWN {
        return Some(Limit::Memory);
    }
    if text.starts_with("RangeError: Maximum call stack size exceeded")
        || text.starts_with("InternalError: stack overflow")
    {
        return Some(Limit::Stack);
    }
    if text.starts_with("InternalError: interrupted") {
        return Some(Limit::Time);
    }
    None
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

/// The `line:column` of the first frame of an engine stack trace that is
/// in `file` (`    at name (file:line:column)`, or `    at file:line:column`
/// for a parse error).
fn position(stack: &str, file: &str) -> Option<(u32, u32)> {
    stack.lines().find_map(|frame| {
        let frame = frame.trim().strip_prefix("at ")?;
        let place = match frame.rfind(" (") {
            Some(open) => frame[open + 2..].strip_suffix(')')?,
            None => frame,
        };
        let mut parts = place.rsplitn(3, ':');
        let column = parts.next()?.parse().ok()?;
        let line = parts.next()?.parse().ok()?;
        (parts.next()? == file).then_some((line, column))
    })
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
            Ending::Returned { value, .. } => assert_eq!(value, serde_json::json!([2, 4, 6])),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_syntax_error_names_the_line_and_column_as_written() {
        for (code, line, column) in [("const a = 1;\nlet x = ;\n", 2, 9), ("let x = ;", 1, 9)] {
            match run_plain(code) {
                Ending::Failed(ProgramError::Syntax { at, .. }) => {
                    assert_eq!(at, Position { line, column });
                }
                other => panic!("{other:?}"),
            }
        }
    }
}
