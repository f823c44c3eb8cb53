//! `x-mcp-header` (SEP-2243, MCP 2026-07-28): a property of a tool's input
//! schema annotated `"x-mcp-header": "Region"` is mirrored by the client into
//! an `Mcp-Param-Region` HTTP header of each `tools/call`, so that a proxy can
//! route on the value without reading the body; the server checks that the
//! header and the body agree.
//!
//! With schemars, annotate a field of the argument struct:
//! `#[schemars(extend("x-mcp-header" = "Region"))]`. The MCP export refuses an
//! annotation that clients refuse (they leave such a tool out): a value that
//! is not an HTTP token, two properties naming one header (in any case), an
//! annotation on a property whose `type` is not `"string"`, `"integer"` or
//! `"boolean"`, or one anywhere but on a property of the root object (this
//! server mirrors top-level arguments only).

use serde_json::{Map, Value};

use crate::providers::transform::Cx;
use crate::providers::{ExportError, McpHeaderProblem};
use crate::spec::schema::{escape_pointer, walk_schemas};

/// The schema keyword that names the header mirroring a property.
pub const MCP_HEADER_KEYWORD: &str = "x-mcp-header";

/// Checks every `x-mcp-header` annotation of an input schema.
pub(crate) fn check(schema: &Value, cx: &Cx) -> Result<(), ExportError> {
    let refuse = |pointer: String, problem| ExportError::McpHeader {
        tool: cx.tool(),
        provider: cx.provider,
        pointer,
        problem,
    };
    let mut misplaced = None;
    walk_schemas(schema, &mut |pointer, obj| {
        let on_root_property = pointer
            .strip_prefix("/properties/")
            .is_some_and(|name| !name.contains('/'));
        if misplaced.is_none() && obj.contains_key(MCP_HEADER_KEYWORD) && !on_root_property {
            misplaced = Some(pointer.to_owned());
        }
    });
    if let Some(pointer) = misplaced {
        return Err(refuse(pointer, McpHeaderProblem::NotARootProperty));
    }
    let mut named: Vec<(&str, &str)> = Vec::new();
    for (property, header, schema) in annotated(schema) {
        let pointer = || format!("/properties/{}", escape_pointer(property));
        let Some(header) = header.as_str().filter(|h| is_token(h)) else {
            return Err(refuse(pointer(), McpHeaderProblem::NotAToken));
        };
        let primitive = schema
            .get("type")
            .and_then(Value::as_str)
            .is_some_and(|t| matches!(t, "string" | "integer" | "boolean"));
        if !primitive {
            return Err(refuse(pointer(), McpHeaderProblem::NotPrimitive));
        }
        if let Some((first, _)) = named.iter().find(|(_, h)| h.eq_ignore_ascii_case(header)) {
            let problem = McpHeaderProblem::Duplicate {
                property: (*first).to_owned(),
            };
            return Err(refuse(pointer(), problem));
        }
        named.push((property, header));
    }
    Ok(())
}

/// The root properties of `schema` that name a header with
/// [`MCP_HEADER_KEYWORD`]: `(property, header)`, in the schema's order, as
/// a streamable HTTP server checks a call's `Mcp-Param-*` headers against
/// its arguments. (The annotations of an exported schema are checked: each
/// is a token on a primitive property, and no header is named twice.)
pub fn header_params(schema: &Map<String, Value>) -> Vec<(String, String)> {
    annotated_in(schema)
        .filter_map(|(property, header, _)| {
            Some((property.to_owned(), header.as_str()?.to_owned()))
        })
        .collect()
}

/// The root properties of `schema` with an annotation: the name, the
/// annotation's value and the property's schema.
fn annotated(schema: &Value) -> impl Iterator<Item = (&str, &Value, &Value)> {
    schema.as_object().into_iter().flat_map(annotated_in)
}

fn annotated_in(schema: &Map<String, Value>) -> impl Iterator<Item = (&str, &Value, &Value)> {
    schema
        .get("properties")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .filter_map(|(name, property)| {
            Some((name.as_str(), property.get(MCP_HEADER_KEYWORD)?, property))
        })
}

/// True for an RFC 9110 token: one or more of ASCII letters, digits and
/// ``!#$%&'*+-.^_`|~``.
fn is_token(s: &str) -> bool {
    !s.is_empty()
        && s.bytes()
            .all(|c| c.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&c))
}
