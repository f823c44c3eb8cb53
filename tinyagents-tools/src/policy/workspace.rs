//! Paths confined to the run's workspace root, and [`WorkspacePolicy`], the
//! middleware that confines filesystem tools to it.
//!
//! A filesystem tool takes paths as [`WorkspacePath`] arguments. Its schema
//! marks them (`"format": "workspace-path"`), so the workspace policy checks
//! every such argument against the run's root *before the tool runs*, and the
//! tool itself resolves them with [`WorkspacePath::resolve`] (the same rules)
//! to get a real path.
//!
//! Refused, each with a message that says why: empty paths, NUL and control
//! characters, `~` home shortcuts, backslashes, characters that look like
//! `.` or `/` (Unicode look-alikes), `..` steps that leave the root, absolute
//! paths outside the root, and symbolic links that lead out of it.

use std::borrow::Cow;
use std::fmt;
use std::path::{Component, Path, PathBuf};

use async_trait::async_trait;
use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

use crate::error::{ArgumentProblem, bulleted};
use crate::middleware::{BeforeOutcome, BeforeResult, BeforeToolCtx, Middleware};
use crate::spec::schema::escape_pointer;
use crate::spec::{FilesystemAccess, SafetyItem};
use crate::tool::Shared;

pub use crate::spec::schema::WORKSPACE_PATH_FORMAT;

/// Why a path was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PathViolation {
    /// The path is empty.
    #[error("the path is empty")]
    Empty,
    /// The path contains a NUL or another control character.
    #[error("the path contains a control character")]
    ControlCharacter,
    /// The path starts with `~`.
    #[error("`~` is not expanded: give a path relative to the workspace root")]
    HomeShortcut,
    /// The path contains a backslash.
    #[error("backslashes are not path separators here: use `/`")]
    Backslash,
    /// The path contains a character that looks like `.` or `/`.
    #[error(
        "the path contains `{0}`, which looks like a path separator or dot: use plain ASCII `.` and `/`"
    )]
    LookAlike(char),
    /// A `..` step leaves the root.
    #[error("the path leaves the workspace root through `..`")]
    EscapesRoot,
    /// An absolute path outside the root.
    #[error(
        "absolute paths outside the workspace root are not allowed: give a path relative to the root"
    )]
    AbsoluteOutsideRoot,
    /// A symbolic link leads out of the root.
    #[error("the path goes through a symbolic link that leads outside the workspace root")]
    SymlinkEscape,
    /// The run has no workspace root.
    #[error("this run has no workspace root, so no path can be used")]
    NoRoot,
    /// The root itself cannot be read.
    #[error("the workspace root is not available")]
    RootUnavailable,
}

impl PathViolation {
    /// A short stable identifier of the rule.
    pub fn rule(&self) -> &'static str {
        match self {
            PathViolation::Empty => "empty",
            PathViolation::ControlCharacter => "control_character",
            PathViolation::HomeShortcut => "home_shortcut",
            PathViolation::Backslash => "backslash",
            PathViolation::LookAlike(_) => "look_alike",
            PathViolation::EscapesRoot => "escapes_root",
            PathViolation::AbsoluteOutsideRoot => "absolute_outside_root",
            PathViolation::SymlinkEscape => "symlink_escape",
            PathViolation::NoRoot => "no_root",
            PathViolation::RootUnavailable => "root_unavailable",
        }
    }
}

/// Characters that render like `.`, `/` or `\` and could fool a reader or a
/// later normalisation step.
const LOOK_ALIKES: &[char] = &[
    '\u{2024}', // one dot leader
    '\u{2025}', // two dot leader
    '\u{2026}', // horizontal ellipsis
    '\u{FE52}', // small full stop
    '\u{FF0E}', // fullwidth full stop
    '\u{3002}', // ideographic full stop
    '\u{FF61}', // halfwidth ideographic full stop
    '\u{2215}', // division slash
    '\u{2044}', // fraction slash
    '\u{29F8}', // big solidus
    '\u{FF0F}', // fullwidth solidus
    '\u{2571}', // box drawings light diagonal
    '\u{FF3C}', // fullwidth reverse solidus
    '\u{2216}', // set minus
    '\u{29F5}', // reverse solidus operator
    '\u{FE68}', // small reverse solidus
];

/// Checks `raw` against the textual rules (no filesystem access).
fn check_text(raw: &str) -> Result<(), PathViolation> {
    if raw.is_empty() {
        return Err(PathViolation::Empty);
    }
    if raw.chars().any(char::is_control) {
        return Err(PathViolation::ControlCharacter);
    }
    if raw.starts_with('~') {
        return Err(PathViolation::HomeShortcut);
    }
    if raw.contains('\\') {
        return Err(PathViolation::Backslash);
    }
    if let Some(ch) = raw.chars().find(|c| LOOK_ALIKES.contains(c)) {
        return Err(PathViolation::LookAlike(ch));
    }
    Ok(())
}

/// Resolves `raw` against `root`, refusing anything that leaves it.
///
/// The result is an absolute path under the canonical root. It need not exist
/// (a tool may create it), but every part of it that exists is checked with
/// symbolic links followed.
pub fn resolve_in_root(root: &Path, raw: &str) -> Result<PathBuf, PathViolation> {
    check_text(raw)?;
    let root = root
        .canonicalize()
        .map_err(|_| PathViolation::RootUnavailable)?;
    let given = Path::new(raw);
    let relative: Cow<'_, Path> = if given.is_absolute() {
        match given.strip_prefix(&root) {
            Ok(rest) => Cow::Owned(rest.to_path_buf()),
            Err(_) => return Err(PathViolation::AbsoluteOutsideRoot),
        }
    } else {
        Cow::Borrowed(given)
    };
    // Lexical normalisation: `..` may not climb above the root.
    let mut parts: Vec<&std::ffi::OsStr> = Vec::new();
    for component in relative.components() {
        match component {
            Component::Normal(part) => parts.push(part),
            Component::CurDir => {}
            Component::ParentDir => {
                if parts.pop().is_none() {
                    return Err(PathViolation::EscapesRoot);
                }
            }
            Component::RootDir | Component::Prefix(_) => {
                return Err(PathViolation::AbsoluteOutsideRoot);
            }
        }
    }
    let mut joined = root.clone();
    joined.extend(&parts);
    // Follow symbolic links through the longest existing ancestor.
    let mut existing = joined.as_path();
    let mut rest = Vec::new();
    loop {
        match existing.symlink_metadata() {
            Ok(_) => break,
            Err(_) => match (existing.parent(), existing.file_name()) {
                (Some(parent), Some(name)) => {
                    rest.push(name.to_owned());
                    existing = parent;
                }
                _ => break,
            },
        }
    }
    let real = existing
        .canonicalize()
        .map_err(|_| PathViolation::SymlinkEscape)?;
    if !real.starts_with(&root) {
        return Err(PathViolation::SymlinkEscape);
    }
    let mut resolved = real;
    resolved.extend(rest.iter().rev());
    Ok(resolved)
}

/// A path argument confined to the run's workspace root.
///
/// In the schema it is a string with `"format": "workspace-path"`; the
/// workspace policy checks it before the tool runs. In the tool, resolve it:
///
/// ```
/// # use tinyagents_tools::policy::WorkspacePath;
/// let root = std::env::temp_dir();
/// let path: WorkspacePath = serde_json::from_str("\"notes/today.md\"").unwrap();
/// assert!(path.resolve(&root).unwrap().ends_with("notes/today.md"));
/// let escape: WorkspacePath = serde_json::from_str("\"../etc/passwd\"").unwrap();
/// assert!(escape.resolve(&root).is_err());
/// ```
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct WorkspacePath(String);

impl WorkspacePath {
    /// The path as the model wrote it.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Resolves the path under `root` (see [`resolve_in_root`]).
    pub fn resolve(&self, root: &Path) -> Result<PathBuf, PathViolation> {
        resolve_in_root(root, &self.0)
    }
}

impl fmt::Debug for WorkspacePath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.0, f)
    }
}

impl fmt::Display for WorkspacePath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl<'de> Deserialize<'de> for WorkspacePath {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        String::deserialize(deserializer).map(WorkspacePath)
    }
}

impl Serialize for WorkspacePath {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.0)
    }
}

impl JsonSchema for WorkspacePath {
    fn schema_name() -> Cow<'static, str> {
        Cow::Borrowed("WorkspacePath")
    }

    fn inline_schema() -> bool {
        true
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "type": "string",
            "format": WORKSPACE_PATH_FORMAT,
            "description": "A path relative to the workspace root, with `/` separators."
        })
    }
}

/// The policy name in refusals and events.
const POLICY: &str = "workspace_root";

/// How deep `$ref`s are followed while looking for path arguments.
const MAX_REF_DEPTH: usize = 32;

/// Middleware confining filesystem tools to the run's workspace root.
///
/// - A tool that declares filesystem access or `workspace` is refused when
///   the run has no workspace root.
/// - For a `workspace` tool, every argument whose schema is a
///   [`WorkspacePath`] (`"format": "workspace-path"`) is
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn textual_rules_refuse_before_touching_the_disk() {
        let root = Path::new("/definitely/not/there");
        for (raw, rule) in [
            ("", "empty"),
            ("a\0b", "control_character"),
            ("~/x", "home_shortcut"),
            ("a\\..\\b", "backslash"),
            ("\u{2025}/etc", "look_alike"),
            ("a\u{FF0F}b", "look_alike"),
        ] {
            assert_eq!(
                resolve_in_root(root, raw).unwrap_err().rule(),
                rule,
                "{raw:?}"
            );
        }
    }
}
