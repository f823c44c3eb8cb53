//! The `run_code` tool: runs the program on a blocking thread and answers
//! each of its tool calls with the executor, on the async runtime the
//! outer call runs on.

use std::pin::{Pin, pin};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use std::task::{Context, Poll, Wake, Waker};
use std::time::Duration;

use async_trait::async_trait;
use serde_json::{Value, json};
use tokio::runtime::Handle;
use tokio_util::sync::WaitForCancellationFutureOwned;

use crate::error::ProgramError;
use crate::host::{Callee, Failure, Host, HostAnswer};
use crate::sandbox::{self, Ending};
use crate::state::Limit;
use crate::{CodeMode, PendingCall, ProgramPause, SandboxLimits};
use tinyagents_tools::CancellationToken;
use tinyagents_tools::call::{RawArguments, ToolCall};
use tinyagents_tools::error::{ArgumentProblem, ToolError};
use tinyagents_tools::executor::ToolExecutor;
use tinyagents_tools::ids::CallName;
use tinyagents_tools::output::{ToolOutput, ToolResult};
use tinyagents_tools::runtime::Turn;
use tinyagents_tools::runtime::{RunContext, ToolRuntime};
use tinyagents_tools::spec::ToolSafety;
use tinyagents_tools::spec::ToolSchema;
use tinyagents_tools::spec::ToolSpec;
use tinyagents_tools::tool::{CallResult, Shared, Tool};

/// The `run_code` tool of a [`CodeMode`]: a [`Tool`] for any application
/// state (it uses its own executor's), to register in the model-facing
/// registry. Its calls answer with the program's value
/// (`{"result": ..., "printed": ..., "calls": n}`), a [`ProgramPause`], or
/// a classified error: `invalid_arguments` for a program that does not
/// parse as a function body (line and column named), `resource_exhausted`
/// for one stopped at a limit (`time`, `memory`, `stack`, `output`,
/// `calls`), and a repairable `tool` error for one that threw an error it
/// did not catch, did not finish, or returned a value JSON cannot carry;
/// each but the limits has a [`ProgramError`](crate::ProgramError) as its
/// source.
pub struct RunCode<S = (), C = ()> {
    executor: Arc<ToolExecutor<S, C>>,
    offered: Arc<[String]>,
    limits: SandboxLimits,
    turn: u32,
    spec: OnceLock<ToolSpec>,
    stubs: String,
    name: String,
    safety: ToolSafety,
}

impl<S: Shared, C: Shared> RunCode<S, C> {
    pub(super) fn new(mode: CodeMode<S, C>) -> Self {
        let specs = mode.specs();
        let offered: Arc<[String]> = specs.iter().map(|s| s.name.to_string()).collect();
        let safety = safety_of(&specs);
        let stubs = mode.stubs();
        RunCode {
            offered,
            limits: mode.limits,
            turn: mode.turn,
            spec: OnceLock::new(),
            stubs,
            name: mode.name,
            safety,
            executor: mode.executor,
        }
    }

    /// The names of the tools offered to the program.
    pub fn offered(&self) -> &[String] {
        &self.offered
    }
}

/// Read-only when every offered tool is; otherwise the conservative
/// default (mutating, not idempotent, networked).
fn safety_of(specs: &[&ToolSpec]) -> ToolSafety {
    if !specs.is_empty() && specs.iter().all(|s| s.safety.is_read_only()) {
        ToolSafety::pure().determinism(tinyagents_tools::spec::Determinism::NonDeterministic)
    } else {
        ToolSafety::default()
    }
}

/// The spec of a `run_code` tool named `name` offering the tools `stubs` declare.
pub(super) fn spec_of(
    name: &str,
    stubs: &str,
    limits: &SandboxLimits,
    specs: &[&ToolSpec],
) -> ToolSpec {
    // The stubs go in the argument's description: OpenAI Chat bounds a
    // tool's description to 1024 characters, not its parameters'. Both
    // are sent with every request: they say what the model needs, once.
    let description = format!(
        "Run a JavaScript program that calls tools; answers with the value it returns. \
         Limits: {} ms running time, {} MiB memory, {} tool calls, {} KiB output.",
        limits.max_time.as_millis(),
        limits.max_memory >> 20,
        limits.max_calls,
        limits.max_output >> 10,
    );
    let code = format!(
        "Body of an async function: call `tools.NAME(args)` (synchronous; `await` allowed), \
         `return` the answer, `print(...)` notes. A refused or failed call throws a ToolError. \
         No network, files, clock or randomness but through tools.\n```ts\n{stubs}```"
    );
    ToolSpec::builder(name, description)
        .input_schema(ToolSchema::from_value(json!({
            "type": "object",
            "properties": {
                "code": { "type": "string", "description": code }
            },
            "required": ["code"],
            "additionalProperties": false
        })))
        .safety(safety_of(specs))
        .timeout(limits.max_duration)
        .build()
        .expect("the run_code spec is valid")
}

#[async_trait]
impl<O: Shared, S: Shared, C: Shared> Tool<O, C> for RunCode<S, C> {
    fn spec(&self) -> &ToolSpec {
        self.spec.get_or_init(|| {
            let specs: Vec<&ToolSpec> = self
                .executor
                .registry()
                .specs()
                .filter(|s| self.offered.iter().any(|n| n == s.name.as_str()))
                .collect();
            let mut spec = spec_of(&self.name, &self.stubs, &self.limits, &specs);
            spec.safety = self.safety.clone();
            spec
        })
    }

    async fn call(&self, _: &O, runtime: &ToolRuntime<C>, arguments: Value) -> CallResult {
        let Some(code) = arguments.get("code").and_then(Value::as_str) else {
            return Err(ToolError::invalid_arguments(vec![ArgumentProblem::new(
                "/code",
                "the program is missing",
            )]));
        };
        let code = code.to_owned();
        let cancel = runtime.cancellation().clone();
        // The program's thread reads the token's state at every call and
        // interrupt check without its lock: a flag, set by the token when it
        // fires and when this call ends or is dropped (a timed-out call is
        // dropped after a grace period): the program stops either way.
        let watch = Watch::new(&cancel);
        let cancelled = Arc::clone(&watch.cancelled);
        let limits = self.limits.clone();
        let id = format!("{}/", runtime.call_id().as_str());
        let host = ExecutorHost {
            executor: Arc::clone(&self.executor),
            run: runtime.run().clone(),
            turn: Turn::new(self.turn).advertising(self.offered.iter().cloned()),
            names: self.offered.iter().map(CallName::from).collect(),
            parent_len: id.len(),
            id,
            made: 0,
            handle: Handle::current(),
            cancel,
            cancelled: Arc::clone(&cancelled),
            pending: Vec::new(),
        };
        let offered = Arc::clone(&self.offered);
        let job = tokio::task::spawn_blocking(move || {
            let (ending, host) = sandbox::run(&code, &offered, &limits, cancelled, host);
            (ending, host.made, host.pending)
        });
        let (ending, calls, pending) = job.await.map_err(|_| ToolError::crashed())?;
        drop(watch);
        answer(ending, calls, pending, &self.limits)
    }
}

/// The `run_code` call's answer for how its program ended.
fn answer(
    ending: Ending,
    calls: u32,
    pending: Vec<PendingCall>,
    limits: &SandboxLimits,
) -> CallResult {
    match ending {
        Ending::Returned { value, printed } => {
            let mut out = json!({ "result": value, "calls": calls });
            if !printed.is_empty() {
                out["printed"] = Value::String(printed);
            }
            Ok(ToolOutput::structured(out))
        }
        Ending::Paused => {
            let pause = ProgramPause {
                outcome: String::from("pending_approval"),
                pending,
                calls,
            };
            Ok(ToolOutput::structured(
                serde_json::to_value(pause).unwrap_or(Value::Null),
            ))
        }
        Ending::Unsettled => Err(failed(ProgramError::Unsettled { calls })),
        Ending::Failed(error) => Err(failed(error)),
        Ending::Limit(limit) => {
            let bound = match limit {
                Limit::Time => format!("{} ms", limits.max_time.as_millis()),
                Limit::Memory => format!("{} bytes", limits.max_memory),
                Limit::Stack => format!("{} bytes", limits.max_stack),
                Limit::Output => format!("{} bytes", limits.max_output),
                Limit::Calls => format!("{} calls", limits.max_calls),
            };
            Err(ToolError::resource_exhausted(limit.resource(), bound))
        }
    }
}

/// The classified error of a program that failed, `error` its source: a
/// program that does not parse is `invalid_arguments` (on `/code`), any
/// other failure a repairable error of the tool.
fn failed(error: ProgramError) -> ToolError {
    let message = error.to_string();
    let tool_error = match error {
        ProgramError::Syntax { .. } | ProgramError::ClosesEarly => {
            ToolError::invalid_arguments(vec![ArgumentProblem::new("/code", message)])
        }
        _ => ToolError::repair(message),
    };
    tool_error.with_source(error)
}

/// Answers the program's calls with the executor, on the program's
/// thread: a call that answers at once (a tool that does not wait) is
/// polled once, in place; one that waits blocks the thread on the
/// runtime until it answers or the `run_code` call is cancelled.
struct ExecutorHost<S, C> {
    executor: Arc<ToolExecutor<S, C>>,
    run: RunContext<C>,
    turn: Turn,
    /// The offered tools' names, by the index the program calls them with.
    names: Vec<CallName>,
    /// `<run_code call id>/`, then the number of the call being made.
    id: String,
    /// The length of `<run_code call id>/`.
    parent_len: usize,
    made: u32,
    handle: Handle,
    cancel: CancellationToken,
    /// The token has fired (read without its lock).
    cancelled: Arc<AtomicBool>,
    pending: Vec<PendingCall>,
}

/// The `run_code` call's watch over its token: a flag the token sets when
/// it fires (it wakes the wait registered here, whose waker sets it; no
/// task runs for it), and that is set when the call ends or is dropped,
/// so that a program still running stops.
struct Watch {
    cancelled: Arc<AtomicBool>,
    _wait: Pin<Box<WaitForCancellationFutureOwned>>,
}

impl Watch {
    fn new(cancel: &CancellationToken) -> Self {
        let cancelled = Arc::new(AtomicBool::new(false));
        let mut wait = Box::pin(cancel.clone().cancelled_owned());
        let waker = Waker::from(Arc::new(SetOnWake(Arc::clone(&cancelled))));
        if wait
            .as_mut()
            .poll(&mut Context::from_waker(&waker))
            .is_ready()
        {
            cancelled.store(true, Ordering::Release);
        }
        Watch {
            cancelled,
            _wait: wait,
        }
    }
}

impl Drop for Watch {
    fn drop(&mut self) {
        self.cancelled.store(true, Ordering::Release);
    }
}

/// A waker that sets its flag.
struct SetOnWake(Arc<AtomicBool>);

impl Wake for SetOnWake {
    fn wake(self: Arc<Self>) {
        self.0.store(true, Ordering::Release);
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.0.store(true, Ordering::Release);
    }
}

impl<S: Shared, C: Shared> ExecutorHost<S, C> {
    /// Runs `call` to its result: `None` when the `run_code` call was
    /// cancelled first.
    fn run(&self, call: ToolCall) -> Option<ToolResult> {
        if self.cancelled.load(Ordering::Acquire) {
            return None;
        }
        let mut call = pin!(self.executor.execute(&self.run, &self.turn, call));
        // Most calls answer at their first poll: no need to block.
        if let Poll::Ready(result) = call.as_mut().poll(&mut Context::from_waker(Waker::noop())) {
            return Some(result);
        }
        let cancel = &self.cancel;
        let result = self.handle.block_on(async {
            tokio::select! {
                r = call => Some(r),
                () = cancel.cancelled() => None,
            }
        });
        if result.is_none() {
            // Seen here first (the token's waker sets it too).
            self.cancelled.store(true, Ordering::Release);
        }
        result
    }
}

impl<S: Shared, C: Shared> Host for ExecutorHost<S, C> {
    fn call(&mut self, tool: Callee<'_>, arguments: RawArguments) -> (HostAnswer, Duration) {
        self.made += 1;
        self.id.truncate(self.parent_len);
        push_number(&mut self.id, self.made);
        let name = match tool {
            Callee::Offered(n) => self.names.get(n).cloned().unwrap_or_default(),
            Callee::Named(name) => CallName::from(name),
        };
        let call = ToolCall::new(self.id.as_str(), name.clone(), arguments);
        let Some(mut result) = self.run(call) else {
            let cancelled = failure(
                &name,
                &self.id,
                "cancelled",
                "fatal",
                "the call was cancelled",
            );
            return (HostAnswer::Error(cancelled), Duration::ZERO);
        };
        // The call's wall time, from its receipt to its answer.
        let took = result.elapsed + result.waited;
        if let Some(approval_id) = result.approval_id() {
            self.pending.push(PendingCall {
                call_id: self.id.clone(),
                tool: name.to_string(),
                approval_id,
            });
            return (HostAnswer::Pause, took);
        }
        let answer = match &result.error {
            Some(e) => HostAnswer::Error(failure(
                &name,
                &self.id,
                e.kind().as_str(),
                e.class().as_str(),
                &result.text(),
            )),
            None => HostAnswer::Value(match result.message.structured.take() {
                Some(v) => v,
                None => Value::String(result.text()),
            }),
        };
        (answer, took)
    }
}

/// Writes `n` in decimal at the end of `out`.
fn push_number(out: &mut String, n: u32) {
    let mut digits = [0u8; 10];
    let mut at = digits.len();
    let mut n = n;
    loop {
        at -= 1;
        digits[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    out.extend(digits[at..].iter().map(|&d| char::from(d)));
}

/// The fields of the `ToolError` the program receives.
fn failure(tool: &str, call_id: &str, kind: &str, class: &str, message: &str) -> Failure {
    Failure {
        kind: kind.to_owned(),
        class: class.to_owned(),
        message: message.to_owned(),
        call: Some((tool.to_owned(), call_id.to_owned())),
    }
}
