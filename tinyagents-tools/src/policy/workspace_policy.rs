//! [`WorkspacePolicy`]: filesystem tools run only inside the run's workspace
//! root, and their path arguments are checked before the tool runs.

use std::path::Path;

use async_trait::async_trait;
use serde_json::{Map, Value};

use crate::error::{ArgumentProblem, bulleted};
use crate::middleware::{BeforeOutcome, BeforeResult, BeforeToolCtx, Middleware};
use crate::spec::schema::escape_pointer;
use crate::spec::{FilesystemAccess, SafetyItem};
use crate::tool::Shared;

use super::workspace::{WORKSPACE_PATH_FORMAT, resolve_in_root};

/// The policy name in refusals and events.
const POLICY: &str = "workspace_root";

/// How deep `$ref`s are followed while looking for path arguments.
const MAX_REF_DEPTH: usize = 32;

/// Middleware confining filesystem tools to the run's workspace root.
///
/// - A tool that declares filesystem access or `workspace` is refused when
///   the run has no workspace root.
/// - For a `workspace` tool, every argument whose schema is a
///   [`WorkspacePath`](super::WorkspacePath) (`"format": "workspace-path"`) is
///   resolved against the root; an escape (`..`, an absolute path outside,
///   a symbolic link out, `~`, NUL, backslashes, look-alike characters) is
///   refused with a message naming the argument and the rule, before the
///   tool runs.
///
/// An executor whose registry has such a tool adds this policy itself, in
/// front of every other middleware, when no middleware enforces
/// [`SafetyItem::Workspace`] (see
/// [`ToolExecutorBuilder::build`](crate::executor::ToolExecutorBuilder::build)).
#[derive(Debug, Clone, Copy, Default)]
pub struct WorkspacePolicy;

impl WorkspacePolicy {
    /// The problems with the path arguments in `arguments` under `schema`.
    pub fn check_arguments(schema: &Value, arguments: &Value, root: &Path) -> Vec<ArgumentProblem> {
        let mut problems = Vec::new();
        let mut pointer = String::new();
        visit(
            schema,
            schema,
            arguments,
            &mut pointer,
            0,
            &mut |ptr, raw| {
                if let Err(violation) = resolve_in_root(root, raw) {
                    problems.push(ArgumentProblem::new(ptr, violation.to_string()));
                }
            },
        );
        problems
    }
}

fn visit(
    root_schema: &Value,
    node: &Value,
    value: &Value,
    pointer: &mut String,
    depth: usize,
    found: &mut dyn FnMut(&str, &str),
) {
    let Value::Object(node) = node else { return };
    if let Some(Value::String(reference)) = node.get("$ref")
        && depth < MAX_REF_DEPTH
        && let Some(target) = reference
            .strip_prefix('#')
            .and_then(|p| root_schema.pointer(p))
    {
        visit(root_schema, target, value, pointer, depth + 1, found);
    }
    if node.get("format").and_then(Value::as_str) == Some(WORKSPACE_PATH_FORMAT)
        && let Value::String(raw) = value
    {
        found(pointer, raw);
    }
    for key in ["anyOf", "oneOf", "allOf"] {
        for branch in node
            .get(key)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            visit(root_schema, branch, value, pointer, depth + 1, found);
        }
    }
    match value {
        Value::Object(fields) => visit_fields(root_schema, node, fields, pointer, depth, found),
        Value::Array(items) => {
            if let Some(item_schema) = node.get("items").filter(|i| i.is_object()) {
                for (i, item) in items.iter().enumerate() {
                    let base = pointer.len();
                    pointer.push('/');
                    pointer.push_str(&i.to_string());
                    visit(root_schema, item_schema, item, pointer, depth, found);
                    pointer.truncate(base);
                }
            }
        }
        _ => {}
    }
}

fn visit_fields(
    root_schema: &Value,
    node: &Map<String, Value>,
    fields: &Map<String, Value>,
    pointer: &mut String,
    depth: usize,
    found: &mut dyn FnMut(&str, &str),
) {
    let properties = node.get("properties").and_then(Value::as_object);
    let extra = node.get("additionalProperties").filter(|v| v.is_object());
    for (key, field) in fields {
        let Some(field_schema) = properties.and_then(|p| p.get(key)).or(extra) else {
            continue;
        };
        let base = pointer.len();
        pointer.push('/');
        pointer.push_str(&escape_pointer(key));
        visit(root_schema, field_schema, field, pointer, depth, found);
        pointer.truncate(base);
    }
}

#[async_trait]
impl<S: Shared, C: Shared> Middleware<S, C> for WorkspacePolicy {
    fn name(&self) -> &str {
        POLICY
    }

    fn enforces(&self) -> &[SafetyItem] {
        &[SafetyItem::Workspace]
    }

    async fn before_tool(&self, ctx: &mut BeforeToolCtx<'_, S, C>) -> BeforeResult {
        let safety = &ctx.spec().safety;
        if !safety.workspace && safety.filesystem == FilesystemAccess::None {
            return Ok(BeforeOutcome::Continue);
        }
        let Some(root) = ctx.run().workspace_root() else {
            return Ok(BeforeOutcome::deny(
                POLICY,
                "this tool works on files, and this run has no workspace to work in",
            ));
        };
        if !safety.workspace {
            return Ok(BeforeOutcome::Continue);
        }
        let problems = WorkspacePolicy::check_arguments(
            ctx.spec().input_schema.as_value(),
            ctx.arguments(),
            root,
        );
        if problems.is_empty() {
            return Ok(BeforeOutcome::Continue);
        }
        Ok(BeforeOutcome::deny(POLICY, refusal(&problems)))
    }
}

/// The model-facing reason for refused paths: which argument, and why.
fn refusal(problems: &[ArgumentProblem]) -> String {
    match problems {
        [one] => format!("the workspace policy refuses {one}"),
        many => bulleted(
            format!("the workspace policy refuses {} paths:", many.len()),
            many,
        ),
    }
}
