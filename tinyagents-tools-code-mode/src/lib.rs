//! Code mode: the model writes one program that calls many tools, and the
//! program runs in a metered sandbox where every call goes through the
//! fail-closed executor.
//!
//! [`CodeMode::new`] takes the executor that runs the tools (an
//! `Arc<ToolExecutor>`: its registry, middleware, limits, events and
//! journal) and gives one tool, `run_code` ([`RunCode`]), to register in
//! the model-facing registry beside (or instead of) the tools themselves.
//! Its one argument, `code`, is a JavaScript program: the body of an async
//! function, whose `return` value is the call's answer. The typed stubs of
//! the offered tools ([`typescript_stubs`]) sit in the `code` argument's
//! description (not the tool's description, which OpenAI Chat bounds to
//! 1,024 characters).
//!
//! ```js
//! const names = [];
//! for (const id of [1, 2, 3]) names.push(tools.lookup({ id }).name);
//! return names.join(", ");
//! ```
//!
//! - **Every call is a call.** `tools.lookup(args)` becomes a
//!   [`ToolCall`](tinyagents_tools::ToolCall) with id `<run_code call id>/<n>` (`n`
//!   from 1, in program order), run by the executor with the outer call's
//!   [`RunContext`](tinyagents_tools::RunContext) in a [`Turn`](tinyagents_tools::Turn) that
//!   advertises exactly the tools offered to the program: validation,
//!   limits, policies and approvals, timeouts, retries, events and
//!   redaction all apply. A refused or failed call throws a `ToolError`
//!   (`kind`, `errorClass`, `tool`, `callId`, and the message the model
//!   would have seen) that the program can catch.
//! - **Bounded.** Heap, stack, running time (the program's own: time in
//!   tool calls is bounded by their timeouts), output and number of calls
//!   ([`SandboxLimits`]); a program stopped at a limit ends with a
//!   `resource_exhausted` error naming it, and the engine is discarded.
//! - **Exactly a function body.** The program is compiled by the engine
//!   as the body of an async function (strict mode), in a parse that
//!   refuses text closing the body early and going on outside it, before
//!   anything runs ([`ProgramError::ClosesEarly`]). Parse
//!   errors and uncaught errors name the program's own line and column.
//! - **Exactly what it did.** The call answers the value the program
//!   returned, carried as `JSON.stringify` writes it, or fails with a
//!   [`ProgramError`] (the `ToolError`'s source): one that never reached
//!   its `return` because it awaits a promise nothing settles is
//!   [`ProgramError::Unsettled`], never a success; a value JSON cannot carry
//!   as it is (a cycle, a `BigInt`, `NaN`, a function, `undefined` in an
//!   array, a `Map`, an unpaired surrogate, nesting past
//!   [`MAX_RESULT_DEPTH`]) is [`ProgramError::Uncarried`], naming what and
//!   where, never `null`.
//! - **Nothing ambient.** The program's globals are the ECMAScript
//!   built-ins without `Date` (and `Math` without `random`), QuickJS's
//!   `InternalError`, the web's `queueMicrotask`, `atob`, `btoa` and
//!   `DOMException`, and its own `tools`, `ToolError`, `print` and
//!   `console` (`log` and `error`, as `print`): no network, files,
//!   environment, modules, clock or randomness except through tools.
//! - **Approvals pause, replay resumes.** A call left waiting for an
//!   approval stops the program; `run_code` answers with a
//!   [`ProgramPause`] (outcome `pending_approval` and the pending calls).
//!   Once decided (`Journal::approve`), deliver the same `run_code` call
//!   again: the program runs from the start, and its calls, which get the
//!   same ids, are answered from the executor's journal without running
//!   again, up to the approved call, which runs, and on. Give the inner
//!   executor the journal; the model-facing executor needs none (a
//!   journaled one would answer the re-delivered call from its journal).
//!
//! The sandbox is QuickJS (through `rquickjs`, built from its C sources:
//! this crate needs a C compiler), chosen by measurement: the [`guide`].
#![deny(missing_docs)]
#![cfg_attr(docsrs, feature(doc_cfg))]
#![forbid(unsafe_code)]

mod error;
pub mod guide;
mod host;
mod result;
mod run_code;
mod sandbox;
mod state;
mod stubs;
mod values;

use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::json;

use tinyagents_tools::ToolResult;
use tinyagents_tools::executor::ToolExecutor;
use tinyagents_tools::providers::{ExportTarget, export_declarations};
use tinyagents_tools::spec::ToolSpec;
use tinyagents_tools::tool::Shared;

pub use error::{MAX_RESULT_DEPTH, Position, ProgramError, Uncarried};
pub use run_code::RunCode;
pub use stubs::typescript_stubs;

/// The bounds of one program run.
#[derive(Debug, Clone)]
pub struct SandboxLimits {
    /// The program's own running time, tool calls excluded (default 2 s).
    pub max_time: Duration,
    /// The engine's heap, in bytes (default 32 MiB).
    pub max_memory: usize,
    /// The engine's stack, in bytes (default 256 KiB).
    pub max_stack: usize,
    /// What the program prints and returns, in bytes (default 64 KiB).
    pub max_output: usize,
    /// Tool calls per program run (default 200).
    pub max_calls: u32,
    /// The whole `run_code` call, tool calls included: its timeout
    /// (default 120 s).
    pub max_duration: Duration,
}

impl Default for SandboxLimits {
    fn default() -> Self {
        SandboxLimits {
            max_time: Duration::from_secs(2),
            max_memory: 32 << 20,
            max_stack: 256 << 10,
            max_output: 64 << 10,
            max_calls: 200,
            max_duration: Duration::from_secs(120),
        }
    }
}

/// Builds the `run_code` tool over an executor.
///
/// ```
/// # use std::sync::Arc;
/// # use tinyagents_tools::{ToolExecutor, ToolRegistry};
/// use tinyagents_tools_code_mode::CodeMode;
/// let executor = Arc::new(ToolExecutor::builder(ToolRegistry::<()>::new(), ()).build().unwrap());
/// let mut model_facing = ToolRegistry::<()>::new();
/// model_facing.register(CodeMode::new(executor).tool()).unwrap();
/// ```
pub struct CodeMode<S = (), C = ()> {
    executor: Arc<ToolExecutor<S, C>>,
    offered: Option<Vec<String>>,
    limits: SandboxLimits,
    name: String,
    turn: u32,
}

impl<S: Shared, C: Shared> CodeMode<S, C> {
    /// Code mode over every tool of `executor`'s registry.
    pub fn new(executor: Arc<ToolExecutor<S, C>>) -> Self {
        CodeMode {
            executor,
            offered: None,
            limits: SandboxLimits::default(),
            name: String::from("run_code"),
            turn: 0,
        }
    }

    /// Offers the program only the tools named (canonical names of the
    /// executor's registry; names it does not know are left out).
    pub fn offering(mut self, names: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.offered = Some(names.into_iter().map(Into::into).collect());
        self
    }

    /// The program's bounds.
    pub fn limits(mut self, limits: SandboxLimits) -> Self {
        self.limits = limits;
        self
    }

    /// The tool's name (default `run_code`).
    pub fn named(mut self, name: impl Into<String>) -> Self {
        self.name = name.into();
        self
    }

    /// The turn index of the program's calls, part of their journal key
    /// (default 0). Keep it fixed for a run so that a re-delivered program
    /// finds its answers.
    pub fn turn_index(mut self, index: u32) -> Self {
        self.turn = index;
        self
    }

    /// The specs of the tools offered to the program, in registry order.
    pub fn specs(&self) -> Vec<&ToolSpec> {
        self.executor
            .registry()
            .specs()
            .filter(|s| {
                self.offered
                    .as_ref()
                    .is_none_or(|o| o.iter().any(|n| n == s.name.as_str()))
            })
            .collect()
    }

    /// The offered tools' typed stubs ([`typescript_stubs`]).
    pub fn stubs(&self) -> String {
        typescript_stubs(self.specs())
    }

    /// The `run_code` tool.
    pub fn tool(self) -> RunCode<S, C> {
        RunCode::new(self)
    }

    /// The size of the export in code mode (the `run_code` declaration
    /// alone) against the plain export of the offered tools, for `target`.
    pub fn declaration_sizes(&self, target: ExportTarget) -> DeclarationSizes {
        let plain = export_declarations(target, self.specs())
            .request_tools_text()
            .len();
        let spec = run_code::spec_of(&self.name, &self.stubs(), &self.limits, &self.specs());
        let code_mode = export_declarations(target, [&spec])
            .request_tools_text()
            .len();
        DeclarationSizes { plain, code_mode }
    }
}

/// The byte counts of a registry's export: its tools declared one by one,
/// and the one `run_code` declaration that carries them as stubs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DeclarationSizes {
    /// The request's `tools` value with every offered tool, in bytes.
    pub plain: usize,
    /// The request's `tools` value with `run_code` alone, in bytes.
    pub code_mode: usize,
}

impl DeclarationSizes {
    /// Bytes saved by code mode (negative when its declaration is larger).
    pub fn saved(&self) -> i64 {
        self.plain as i64 - self.code_mode as i64
    }
}

/// A program stopped at a call that waits for an approval: what
/// `run_code` answers instead of a value. Read it from the call's result
/// with [`ProgramPause::of`]; approve the calls, then deliver the same
/// `run_code` call again.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProgramPause {
    /// Always `pending_approval`.
    pub outcome: String,
    /// The calls that wait (one: the program stops at the first).
    pub pending: Vec<PendingCall>,
    /// The tool calls the program made in this run, the waiting one included.
    pub calls: u32,
}

/// One program call waiting for an approval.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PendingCall {
    /// Its derived id (`<run_code call id>/<n>`).
    pub call_id: String,
    /// The tool.
    pub tool: String,
    /// The approval to decide (`Journal::approve`).
    pub approval_id: String,
}

impl ProgramPause {
    /// The pause a `run_code` result reports, if the program paused.
    pub fn of(result: &ToolResult) -> Option<ProgramPause> {
        let value = result.message.structured.as_ref()?;
        if value.get("outcome")? != &json!("pending_approval") {
            return None;
        }
        serde_json::from_value(value.clone()).ok()
    }

    /// The ids of the approvals to decide.
    pub fn approval_ids(&self) -> Vec<&str> {
        self.pending
            .iter()
            .map(|p| p.approval_id.as_str())
            .collect()
    }
}
