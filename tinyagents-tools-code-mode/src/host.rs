//! The host's side of a program's calls: the functions the program calls
//! (`tools.NAME(args)`, `print`), and the [`Host`] that answers its tool
//! calls. Arguments cross as a JSON value walked out of the engine, and
//! answers as values built in it ([`values`](crate::values)).

use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use rquickjs::function::Opt;
use rquickjs::object::Property;
use rquickjs::{Constructor, Ctx, Object, Value};

use crate::SandboxLimits;
use crate::state::{Limit, Shared, Stop};
use crate::values;
use tinyagents_tools::call::RawArguments;

/// The tool a program calls.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Callee<'a> {
    /// The `n`th of the tools the sandbox was given (`tools.NAME` of a
    /// tool offered to the program).
    Offered(usize),
    /// Any other name the program wrote (`tools.NAME` of a tool it was not
    /// offered): the host refuses it as the executor refuses any call.
    Named(&'a str),
}

/// What the host answers to one tool call of the program.
pub(crate) enum HostAnswer {
    /// The call succeeded: the value the program receives.
    Value(serde_json::Value),
    /// The call was refused or failed: the program gets a `ToolError` it
    /// can catch.
    Error(Failure),
    /// The call waits for a person's decision: the program stops here.
    Pause,
}

/// The fields of the `ToolError` a refused or failed call throws.
#[derive(Debug, Clone, Default)]
pub(crate) struct Failure {
    /// The error kind (`invalid_arguments`, `not_advertised`, ...).
    pub kind: String,
    /// Its class (`retry`, `repair`, `fatal`).
    pub class: String,
    /// The message the model would have seen.
    pub message: String,
    /// The tool called and the call's id (none when the sandbox refused
    /// the call before it was made).
    pub call: Option<(String, String)>,
}

impl Failure {
    /// A failure the sandbox itself answers (no call was made).
    fn of_sandbox(kind: &str, message: &str) -> Self {
        Failure {
            kind: kind.to_owned(),
            class: String::from("fatal"),
            message: message.to_owned(),
            ..Failure::default()
        }
    }
}

/// Whoever answers the program's tool calls.
pub(crate) trait Host {
    /// Answers the program's call of `tool` with `arguments`, and says how
    /// long the call took: time the program's own running time leaves out.
    fn call(&mut self, tool: Callee<'_>, arguments: RawArguments) -> (HostAnswer, Duration);
}

/// What every tool function of a program shares: the host, the stop flag,
/// the `run_code` call's cancellation, the deadline and the number of
/// calls made.
pub(super) struct Calls<H> {
    host: Rc<RefCell<H>>,
    stop: Rc<Cell<Stop>>,
    cancelled: Arc<AtomicBool>,
    deadline: Rc<Cell<Instant>>,
    made: Rc<Cell<u32>>,
    max_calls: u32,
    /// The most argument text walked out of the engine (its heap limit).
    budget: usize,
}

impl<H> Clone for Calls<H> {
    fn clone(&self) -> Self {
        Calls {
            host: Rc::clone(&self.host),
            stop: Rc::clone(&self.stop),
            cancelled: Arc::clone(&self.cancelled),
            deadline: Rc::clone(&self.deadline),
            made: Rc::clone(&self.made),
            ..*self
        }
    }
}

impl<H: Host + 'static> Calls<H> {
    pub(super) fn new(shared: &Shared<H>, limits: &SandboxLimits) -> Self {
        Calls {
            host: Rc::clone(&shared.host),
            stop: Rc::clone(&shared.stop),
            cancelled: Arc::clone(&shared.cancelled),
            deadline: Rc::clone(&shared.deadline),
            made: Rc::new(Cell::new(0)),
            max_calls: limits.max_calls,
            budget: limits.max_memory,
        }
    }

    /// The function `tools.NAME(args)` of the `n`th offered tool.
    pub(super) fn offered<'js>(
        self,
        n: usize,
    ) -> impl Fn(Ctx<'js>, Opt<Value<'js>>) -> rquickjs::Result<Value<'js>> + 'js {
        move |ctx, args| self.call(&ctx, Callee::Offered(n), args.0)
    }

    /// The function `call(name, args)` behind `tools.NAME` for any other
    /// name.
    pub(super) fn named<'js>(
        self,
    ) -> impl Fn(Ctx<'js>, String, Opt<Value<'js>>) -> rquickjs::Result<Value<'js>> + 'js {
        move |ctx, name, args| self.call(&ctx, Callee::Named(&name), args.0)
    }

    /// One call of the program: its arguments walked out of the engine,
    /// the sandbox's bounds, the host's answer (its time added to the
    /// deadline) made a value of the engine or a thrown `ToolError`.
    fn call<'js>(
        &self,
        ctx: &Ctx<'js>,
        callee: Callee<'_>,
        args: Option<Value<'js>>,
    ) -> rquickjs::Result<Value<'js>> {
        let arguments = match &args {
            Some(args) => values::arguments(ctx, args, self.budget)?,
            None => RawArguments::Json(serde_json::Value::Object(serde_json::Map::new())),
        };
        if self.stop.get() == Stop::Running && self.cancelled.load(Ordering::Acquire) {
            // Cancelled: no call is made, and the program stops at the
            // next check, as the interrupt handler would stop it.
            self.stop.set(Stop::Limit(Limit::Time));
        }
        if self.stop.get() != Stop::Running {
            let stopping = Failure::of_sandbox("cancelled", "the program is stopping");
            return Err(throw_tool_error(ctx, stopping));
        }
        if self.made.get() >= self.max_calls {
            self.stop.set(Stop::Limit(Limit::Calls));
            let limit =
                Failure::of_sandbox("limit_exceeded", "the program made too many tool calls");
            return Err(throw_tool_error(ctx, limit));
        }
        self.made.set(self.made.get() + 1);
        let (answer, took) = self.host.borrow_mut().call(callee, arguments);
        self.deadline.set(self.deadline.get() + took);
        match answer {
            HostAnswer::Value(v) => values::to_js(ctx, &v, 0),
            HostAnswer::Error(e) => Err(throw_tool_error(ctx, e)),
            HostAnswer::Pause => {
                self.stop.set(Stop::Paused);
                let waits =
                    Failure::of_sandbox("pending_approval", "the call waits for an approval");
                Err(throw_tool_error(ctx, waits))
            }
        }
    }
}

/// Throws the `ToolError` of `failure`, made by the global `ToolError`
/// (which the program cannot replace).
fn throw_tool_error<'js>(ctx: &Ctx<'js>, failure: Failure) -> rquickjs::Error {
    let member = |value: String| Property::from(value).writable().enumerable().configurable();
    let made = (|| {
        let fields = Object::new(ctx.clone())?;
        fields.prop("kind", member(failure.kind))?;
        fields.prop("class", member(failure.class))?;
        fields.prop("message", member(failure.message))?;
        if let Some((tool, call_id)) = failure.call {
            fields.prop("tool", member(tool))?;
            fields.prop("call_id", member(call_id))?;
        }
        let class: Constructor<'js> = ctx.globals().get("ToolError")?;
        class.construct::<_, Value<'js>>((fields,))
    })();
    match made {
        Ok(error) => ctx.throw(error),
        Err(e) => e,
    }
}

/// The host's function `print(line)`.
pub(super) fn host_print(
    stop: Rc<Cell<Stop>>,
    printed: Rc<RefCell<String>>,
    max_output: usize,
) -> impl Fn(String) + 'static {
    move |line: String| {
        let mut out = printed.borrow_mut();
        if out.len() + line.len() + 1 > max_output {
            stop.set(Stop::Limit(Limit::Output));
            return;
        }
        out.push_str(&line);
        out.push('\n');
    }
}
