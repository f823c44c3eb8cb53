//! `$ref` handling: inlining references, refusing recursion, and dropping
//! definitions nothing uses.

use std::collections::{BTreeSet, HashSet};

use serde_json::{Map, Value};

use super::ExportError;
use super::transform::{Cx, children, for_each_child_mut};
use crate::spec::schema::walk_schemas;

/// Which references to inline.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum InlineMode {
    /// Every reference (the schema ends without `$defs`).
    All,
    /// Only references with sibling keywords (`{"$ref": .., "description": ..}`).
    WithSiblings,
}

/// Resolves a local reference (`#`, `#/$defs/X`, any `#/...` pointer).
pub(crate) fn resolve<'a>(root: &'a Value, reference: &str) -> Option<&'a Value> {
    let pointer = reference.strip_prefix('#')?;
    if pointer.is_empty() {
        Some(root)
    } else {
        root.pointer(pointer)
    }
}

/// True when a child's pointer suffix leads into `$defs` or `definitions`.
pub(crate) fn is_defs(suffix: &str) -> bool {
    suffix.starts_with("/$defs/") || suffix.starts_with("/definitions/")
}

/// Replaces references by the schema they point to (siblings of the `$ref`
/// win over the target's keywords). A reference met again while inlining
/// itself is recursion, which cannot be inlined.
pub(crate) fn inline_refs(
    schema: &mut Value,
    cx: &Cx,
    mode: InlineMode,
) -> Result<(), ExportError> {
    prune_unused_defs(schema);
    let original = schema.clone();
    let mut stack = vec!["#".to_owned()];
    inline_at(schema, &original, "", cx, mode, &mut stack)?;
    match mode {
        InlineMode::All => {
            if let Value::Object(obj) = schema {
                obj.remove("$defs");
                obj.remove("definitions");
            }
        }
        InlineMode::WithSiblings => prune_unused_defs(schema),
    }
    Ok(())
}

fn inline_at(
    node: &mut Value,
    root: &Value,
    ptr: &str,
    cx: &Cx,
    mode: InlineMode,
    stack: &mut Vec<String>,
) -> Result<(), ExportError> {
    let Value::Object(obj) = node else {
        return Ok(());
    };
    if let Some(Value::String(reference)) = obj.get("$ref")
        && (mode == InlineMode::All || obj.len() > 1)
    {
        let reference = reference.clone();
        if stack.contains(&reference) {
            return Err(ExportError::Recursion {
                tool: cx.tool(),
                provider: cx.provider,
                pointer: ptr.to_owned(),
                reference,
            });
        }
        let mut merged = match resolve(root, &reference) {
            Some(Value::Object(target)) => target.clone(),
            Some(Value::Bool(true)) => Map::new(),
            _ => {
                return Err(ExportError::UnresolvedRef {
                    tool: cx.tool(),
                    provider: cx.provider,
                    pointer: ptr.to_owned(),
                    reference,
                });
            }
        };
        for key in ["$defs", "definitions", "$schema", "$id"] {
            merged.remove(key);
        }
        obj.remove("$ref");
        for (k, v) in std::mem::take(obj) {
            merged.insert(k, v);
        }
        *obj = merged;
        stack.push(reference);
        let result = inline_at(node, root, ptr, cx, mode, stack);
        stack.pop();
        return result;
    }
    for_each_child_mut(obj, &mut |suffix, child| {
        if mode == InlineMode::All && is_defs(&suffix) {
            return Ok(());
        }
        inline_at(child, root, &format!("{ptr}{suffix}"), cx, mode, stack)
    })
}

/// Refuses a reference that leads back into itself, following references
/// from the root (unused definitions are not looked at).
pub(crate) fn refuse_recursion(schema: &Value, cx: &Cx) -> Result<(), ExportError> {
    fn visit(
        node: &Value,
        root: &Value,
        ptr: &str,
        cx: &Cx,
        stack: &mut Vec<String>,
        done: &mut HashSet<String>,
    ) -> Result<(), ExportError> {
        let Value::Object(obj) = node else {
            return Ok(());
        };
        if let Some(Value::String(reference)) = obj.get("$ref") {
            if stack.contains(reference) {
                return Err(ExportError::Recursion {
                    tool: cx.tool(),
                    provider: cx.provider,
                    pointer: ptr.to_owned(),
                    reference: reference.clone(),
                });
            }
            if !done.contains(reference) {
                let Some(target) = resolve(root, reference) else {
                    return Err(ExportError::UnresolvedRef {
                        tool: cx.tool(),
                        provider: cx.provider,
                        pointer: ptr.to_owned(),
                        reference: reference.clone(),
                    });
                };
                stack.push(reference.clone());
                visit(target, root, ptr, cx, stack, done)?;
                stack.pop();
                done.insert(reference.clone());
            }
        }
        for (suffix, child) in children(obj) {
            if !is_defs(&suffix) {
                visit(child, root, &format!("{ptr}{suffix}"), cx, stack, done)?;
            }
        }
        Ok(())
    }
    visit(
        schema,
        schema,
        "",
        cx,
        &mut vec!["#".to_owned()],
        &mut HashSet::new(),
    )
}

/// Removes `$defs` entries that nothing reachable from the root refers to.
/// Leaves the definitions alone when some reference is not of the form
/// `#/$defs/Name`.
pub(crate) fn prune_unused_defs(schema: &mut Value) {
    let Some(defs) = schema.get("$defs").and_then(Value::as_object) else {
        return;
    };
    let refs_of = |node: &Value, skip_defs: bool| -> Option<BTreeSet<String>> {
        let mut found = BTreeSet::new();
        let mut plain = true;
        walk_schemas(node, &mut |ptr, obj| {
            if skip_defs && ptr.starts_with("/$defs") {
                return;
            }
            if let Some(Value::String(r)) = obj.get("$ref") {
                match r.strip_prefix("#/$defs/") {
                    Some(name) if !name.contains('/') => {
                        found.insert(name.replace("~1", "/").replace("~0", "~"));
                    }
                    _ => plain = false,
                }
            }
        });
        plain.then_some(found)
    };
    let Some(mut todo) = refs_of(schema, true) else {
        return;
    };
    let mut reachable = BTreeSet::new();
    while let Some(name) = todo.pop_first() {
        if !reachable.insert(name.clone()) {
            continue;
        }
        let Some(def) = defs.get(&name) else { continue };
        let Some(more) = refs_of(def, false) else {
            return;
        };
        todo.extend(more.into_iter().filter(|n| !reachable.contains(n)));
    }
    if let Some(Value::Object(defs)) = schema.get_mut("$defs") {
        defs.retain(|name, _| reachable.contains(name));
        if defs.is_empty() {
            schema.as_object_mut().map(|o| o.remove("$defs"));
        }
    }
}
