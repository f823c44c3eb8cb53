//! The rules of the `#[tool(...)]` options: the name and description, the
//! declared safety (no contradictions), the timeout and retry, concurrency,
//! tasks, redaction, and the options a method tool cannot take.

use proc_macro2::Span;

use super::{Description, Determinism, Effect, Redaction};
use crate::ast::{ToolFn, has_doc};
use crate::attr::{Filesystem, Switch, TaskMode, ToolOptions, parse_duration_ms};
use crate::names::check_tool_name;
use crate::util::Errors;

/// The tool's name: `name = "..."`, else the fn's name; either must be a
/// valid tool name.
pub(super) fn name(o: &ToolOptions, f: &ToolFn, errors: &mut Errors) -> String {
    if let Some(lit) = &o.name {
        let name = lit.value();
        if let Err(reason) = check_tool_name(&name) {
            errors.push(lit.span(), format_args!("invalid tool name: {reason}"));
        }
        return name;
    }
    let name = f.ident_name();
    if let Err(reason) = check_tool_name(&name) {
        errors.push(
            f.item.sig.ident.span(),
            format_args!(
                "the fn name `{name}` is not a valid tool name ({reason}): rename the fn, or name the tool with `#[tool(name = \"...\")]`"
            ),
        );
    }
    name
}

/// The description: `description = "..."`, else the doc comment; one of
/// them must say something.
pub(super) fn description(o: &ToolOptions, f: &ToolFn, errors: &mut Errors) -> Description {
    if let Some(lit) = &o.description {
        let text = lit.value();
        if text.trim().is_empty() {
            errors.push(
                lit.span(),
                "the description is empty: say what the tool does, the model reads it to decide when to call the tool",
            );
        }
        return Description::Option(text);
    }
    if !has_doc(&f.doc) {
        errors.push(
            f.item.sig.ident.span(),
            "a tool needs a description, the model reads it to decide when to call the tool: add a doc comment (`/// ...`) to the fn, or `#[tool(description = \"...\")]`",
        );
    }
    Description::Doc(f.doc.clone())
}

fn contradiction(errors: &mut Errors, span: Span, a: &str, b: &str) {
    errors.push(
        span,
        format_args!("`{a}` and `{b}` contradict each other: keep one of them"),
    );
}

/// The effect (default `mutating`); `read_only` excludes every other, and
/// the reach takes one of `local` and `networked`.
pub(super) fn effect(o: &ToolOptions, errors: &mut Errors) -> Effect {
    if o.read_only.is_present() {
        for (flag, word) in [(&o.mutating, "mutating"), (&o.destructive, "destructive")] {
            if flag.is_present() {
                contradiction(errors, flag.span(), "read_only", word);
            }
        }
        if let Some(fs) = &o.filesystem
            && **fs == Filesystem::Write
        {
            contradiction(errors, fs.span(), "read_only", "filesystem = \"write\"");
        }
    }
    if o.mutating.is_present() && o.destructive.is_present() {
        errors.push(
            o.mutating.span(),
            "`destructive` already means the tool mutates: remove `mutating`",
        );
    }
    if o.local.is_present() && o.networked.is_present() {
        contradiction(errors, o.networked.span(), "local", "networked");
    }
    first_given(
        [
            (o.destructive, Effect::Destructive),
            (o.read_only, Effect::ReadOnly),
        ],
        Effect::Mutating,
    )
}

/// The determinism (default: non-deterministic); at most one is declared.
pub(super) fn determinism(o: &ToolOptions, errors: &mut Errors) -> Determinism {
    if o.deterministic.is_present() && o.deterministic_given_injected.is_present() {
        contradiction(
            errors,
            o.deterministic_given_injected.span(),
            "deterministic",
            "deterministic_given_injected",
        );
    }
    first_given(
        [
            (o.deterministic, Determinism::Deterministic),
            (o.deterministic_given_injected, Determinism::GivenInjected),
        ],
        Determinism::NonDeterministic,
    )
}

/// The value of the first flag given, in `flags`' order; `default` when
/// none is.
fn first_given<T>(flags: impl IntoIterator<Item = (Switch, T)>, default: T) -> T {
    flags
        .into_iter()
        .find(|(flag, _)| flag.is_present())
        .map_or(default, |(_, value)| value)
}

/// `timeout = "30s"`: a positive duration.
pub(super) fn timeout(o: &ToolOptions, errors: &mut Errors) -> Option<u64> {
    let lit = &o.timeout.as_ref()?.0;
    match parse_duration_ms(&lit.value()) {
        Ok(0) => errors.push(
            lit.span(),
            "a zero timeout would fail every call: give a positive duration such as \"30s\", or remove `timeout` to use the executor's default",
        ),
        Ok(ms) => return Some(ms),
        Err(e) => errors.push(lit.span(), e.message("timeout")),
    }
    None
}

/// `retry(max_attempts = N, backoff = "..")`: at least 2 attempts, on an
/// idempotent tool; `(max_attempts, backoff_ms)`.
pub(super) fn retry(o: &ToolOptions, errors: &mut Errors) -> Option<(u32, u64)> {
    let retry = o.retry.as_ref()?;
    if !o.idempotent.is_present() {
        errors.push(
            retry.span,
            "`retry` needs `idempotent`: a retried call repeats its effect; add `idempotent` if repeating a call is safe, or remove `retry`",
        );
    }
    let max_attempts = retry.max_attempts.as_ref()?;
    let attempts = match max_attempts.base10_parse::<u32>() {
        Ok(n) if n >= 2 => Some(n),
        _ => {
            errors.push(
                max_attempts.span(),
                "`retry(max_attempts)` counts every attempt, the first included: retrying needs at least 2; remove `retry` for a single attempt",
            );
            None
        }
    };
    let backoff = match &retry.backoff {
        None => Some(100),
        Some(lit) => match parse_duration_ms(&lit.value()) {
            Ok(ms) => Some(ms),
            Err(e) => {
                errors.push(lit.span(), e.message("backoff"));
                None
            }
        },
    };
    Some((attempts?, backoff?))
}

/// `max_concurrency = N`, never with `sequential`.
pub(super) fn max_concurrency(o: &ToolOptions, errors: &mut Errors) -> Option<usize> {
    let c = o.max_concurrency.as_ref()?;
    if o.sequential.is_present() {
        errors.push(
            c.span,
            "`sequential` and `max_concurrency` contradict each other: `sequential` already keeps the tool apart from every other call; keep one of them",
        );
    }
    Some(c.value)
}

/// `task = ".."` (default forbidden); `escalates` only with a task.
pub(super) fn task(o: &ToolOptions, errors: &mut Errors) -> TaskMode {
    let task = o.task.as_ref().map_or(TaskMode::Forbidden, |t| **t);
    if o.escalates.is_present() && task == TaskMode::Forbidden {
        errors.push(
            o.escalates.span(),
            "`escalates` says where the tool's task begins, and this tool never runs as a task: add `task = \"optional\"` or `task = \"required\"`, or remove `escalates`",
        );
    }
    task
}

/// A method tool runs on its service in this process, registered with it:
/// never `isolated`, never `collect`.
pub(super) fn method_only(o: &ToolOptions, f: &ToolFn, errors: &mut Errors) {
    if f.service.is_none() {
        return;
    }
    if o.isolated.is_present() {
        errors.push(
            o.isolated.span(),
            "`isolated` runs the fn in a worker process, which cannot reach the service instance: make it a free `#[tool(isolated)]` fn",
        );
    }
    if o.collect.is_present() {
        errors.push(
            o.collect.span(),
            "a method tool is registered with its service (`registry.register_service(Arc::new(service))`), not collected: remove `collect`",
        );
    }
}

/// `redact(...)`: `secrets = false` only with the `unredacted_secrets`
/// opt-in, and the opt-in only with it.
pub(super) fn redaction(o: &ToolOptions, errors: &mut Errors) -> Redaction {
    let unredacted = o.unredacted_secrets.is_present();
    let Some(redact) = &o.redact else {
        if unredacted {
            errors.push(o.unredacted_secrets.span(), UNREDACTED_ALONE);
        }
        return Redaction {
            secrets: true,
            ..Redaction::default()
        };
    };
    let secrets_off = redact.secrets.as_ref().filter(|b| !b.value);
    match (secrets_off, unredacted) {
        (Some(off), false) => errors.push(
            off.span(),
            "`secrets = false` lets a secret in the tool's output reach the model unmasked: add `unredacted_secrets` to the #[tool] options to opt in, or remove `secrets = false`",
        ),
        (None, true) => errors.push(o.unredacted_secrets.span(), UNREDACTED_ALONE),
        _ => {}
    }
    Redaction {
        fields: redact.fields.iter().map(|l| l.value()).collect(),
        patterns: redact.patterns.iter().map(|l| l.value()).collect(),
        secrets: redact.secrets.as_ref().is_none_or(|b| b.value),
        unredacted_secrets: unredacted,
    }
}

const UNREDACTED_ALONE: &str = "`unredacted_secrets` opts in to `redact(secrets = false)`, which this tool does not have: add `redact(secrets = false)`, or remove `unredacted_secrets`";
