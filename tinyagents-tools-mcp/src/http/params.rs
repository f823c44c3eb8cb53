//! `Mcp-Param-{Name}` headers (SEP-2243, protocol 2026-07-28 and later).
//!
//! A client mirrors each argument whose input-schema property carries
//! `"x-mcp-header": "{Name}"` into an `Mcp-Param-{Name}` header of the
//! `tools/call`, so a proxy can route on it without reading the body. A proxy
//! that routes on a header the body contradicts routes wrong, so the server
//! refuses the call, with HTTP 400 and JSON-RPC `-32020` (header mismatch),
//! before anything runs, when:
//!
//! - the body has the argument (not `null`) and the header is missing;
//! - the header is present and the argument is absent or `null` (a client
//!   leaves the header out then);
//! - the header's value differs from the argument's: a string compares as
//!   text, a boolean as `true`/`false`, a number by value (`5` and `5.0`
//!   agree). A value written `=?base64?{Base64}?=` is compared decoded; its
//!   Base64 must be strict (standard alphabet, padded, no stray bits) and
//!   decode to UTF-8, or the call is refused. Any other value is literal, a
//!   `=?base64?` without its closing `?=` included;
//! - the header is sent twice.
//!
//! Requests that declare an older protocol (or none) are not checked: those
//! clients send no such headers. Annotations count on the root properties of
//! a tool's schema only (the MCP export refuses them elsewhere).

use std::collections::HashMap;

use http::{HeaderMap, HeaderName};
use rmcp::model::Tool;
use serde_json::Value;

use crate::screen::{call_view, error};
use tinyagents_tools::providers::mcp::header_params;

/// The first protocol version with `Mcp-Param-*` headers.
const FIRST_VERSION: &str = "2026-07-28";

/// The JSON-RPC code of a header that contradicts the body.
const HEADER_MISMATCH: i32 = -32020;

/// The mirrored arguments of each tool that has any: the property and the
/// header that carries it.
#[derive(Default)]
pub(super) struct ParamHeaders {
    tools: HashMap<String, Vec<(String, HeaderName)>>,
}

impl ParamHeaders {
    /// The annotations of `tools` (the server's `tools/list`).
    pub(super) fn new(tools: &[Tool]) -> Self {
        let tools = tools
            .iter()
            .filter_map(|tool| {
                let params: Vec<_> = header_params(&tool.input_schema)
                    .into_iter()
                    .filter_map(|(property, header)| {
                        // A token: always a valid header name.
                        let name = HeaderName::try_from(format!("mcp-param-{header}")).ok()?;
                        Some((property, name))
                    })
                    .collect();
                (!params.is_empty()).then(|| (tool.name.to_string(), params))
            })
            .collect();
        ParamHeaders { tools }
    }

    /// Checks the `Mcp-Param-*` headers of a request whose body is `body`;
    /// the JSON-RPC error to answer when they contradict it.
    pub(super) fn check(&self, headers: &HeaderMap, body: &[u8]) -> Result<(), Value> {
        if self.tools.is_empty() || !declares_headers(headers) {
            return Ok(());
        }
        let Some(call) = call_view(body) else {
            return Ok(());
        };
        let Some(params) = self.tools.get(call.name.as_ref()) else {
            return Ok(());
        };
        for (property, header) in params {
            let argument = call
                .arguments
                .iter()
                .find(|(key, _)| key == property)
                .map(|(_, raw)| *raw);
            if let Err(why) = agree(headers, header, argument) {
                let message = format!("Header mismatch: {why} (argument `{property}`)");
                return Err(error(call.id, HEADER_MISMATCH, &message));
            }
        }
        Ok(())
    }
}

/// True when the request declares a protocol with `Mcp-Param-*` headers.
fn declares_headers(headers: &HeaderMap) -> bool {
    headers
        .get("mcp-protocol-version")
        .and_then(|v| v.to_str().ok())
        .map(str::trim)
        .is_some_and(|version| {
            // A date, `YYYY-MM-DD`: such strings sort as their dates do.
            version.len() == FIRST_VERSION.len()
                && version.bytes().all(|c| c.is_ascii_digit() || c == b'-')
                && version >= FIRST_VERSION
        })
}

/// Whether header `name` agrees with the argument whose JSON text is
/// `argument`; why not, when it does not.
fn agree(headers: &HeaderMap, name: &HeaderName, argument: Option<&[u8]>) -> Result<(), String> {
    let mut values = headers.get_all(name).iter();
    let sent = values.next();
    if values.next().is_some() {
        return Err(format!("{name} is sent more than once"));
    }
    let argument = argument
        .and_then(|raw| serde_json::from_slice::<Value>(raw).ok())
        .filter(|value| matches!(value, Value::String(_) | Value::Bool(_) | Value::Number(_)));
    let (sent, argument) = match (sent, argument) {
        (None, None) => return Ok(()),
        (Some(_), None) => {
            return Err(format!("{name} is sent but the argument is absent or null"));
        }
        (None, Some(_)) => return Err(format!("{name} is missing")),
        (Some(sent), Some(argument)) => (sent, argument),
    };
    let text = sent
        .to_str()
        .map_err(|_| {
            format!("{name} holds bytes outside visible ASCII; wrap the value as =?base64?...?=")
        })?
        .trim_matches([' ', '\t']);
    let decoded = match text
        .strip_prefix("=?base64?")
        .and_then(|rest| rest.strip_suffix("?="))
    {
        Some(encoded) => decode_base64(encoded)
            .and_then(|bytes| String::from_utf8(bytes).ok())
            .ok_or_else(|| format!("{name} is not valid Base64 of UTF-8 text"))?,
        None => text.to_owned(),
    };
    let same = match &argument {
        Value::String(s) => *s == decoded,
        Value::Bool(b) => decoded == if *b { "true" } else { "false" },
        Value::Number(n) => same_number(n, &decoded),
        _ => false,
    };
    if same {
        Ok(())
    } else {
        Err(format!("{name} does not match the body's value"))
    }
}

/// True when `text` is a number equal to `n`.
fn same_number(n: &serde_json::Number, text: &str) -> bool {
    let whole = n
        .as_i64()
        .map(i128::from)
        .or_else(|| n.as_u64().map(i128::from));
    if let (Some(whole), Ok(sent)) = (whole, text.parse::<i128>()) {
        return whole == sent;
    }
    match (n.as_f64(), text.parse::<f64>()) {
        (Some(value), Ok(sent)) => sent.is_finite() && value == sent,
        _ => false,
    }
}

/// Strict standard Base64 (RFC 4648 section 4): the length a multiple of
/// four, padding only at the end and only as much as needed, and the unused
/// bits of the last character zero.
fn decode_base64(text: &str) -> Option<Vec<u8>> {
    fn sextet(c: u8) -> Option<u32> {
        Some(match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return None,
        } as u32)
    }
    let bytes = text.as_bytes();
    if !bytes.len().is_multiple_of(4) {
        return None;
    }
    let mut out = Vec::with_capacity(bytes.len() / 4 * 3);
    let quads = bytes.len() / 4;
    for (i, quad) in bytes.chunks_exact(4).enumerate() {
        let padding = quad.iter().rev().take_while(|&&c| c == b'=').count();
        if padding > 2 || (padding > 0 && i + 1 != quads) {
            return None;
        }
        let mut bits = 0u32;
        for &c in &quad[..4 - padding] {
            bits = (bits << 6) | sextet(c)?;
        }
        bits <<= 6 * padding as u32;
        let [_, a, b, c] = bits.to_be_bytes();
        let kept = [a, b, c];
        let dropped = &kept[3 - padding..];
        if dropped.iter().any(|&d| d != 0) {
            return None;
        }
        out.extend_from_slice(&kept[..3 - padding]);
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::decode_base64;

    #[test]
    fn base64_is_decoded_strictly() {
        assert_eq!(decode_base64("SGVsbG8=").as_deref(), Some(&b"Hello"[..]));
        assert_eq!(decode_base64("SGk=").as_deref(), Some(&b"Hi"[..]));
        assert_eq!(decode_base64("SA==").as_deref(), Some(&b"H"[..]));
        assert_eq!(decode_base64("").as_deref(), Some(&b""[..]));
        assert_eq!(decode_base64("w6k=").as_deref(), Some("é".as_bytes()));
        // Missing padding, characters outside the alphabet, padding in the
        // middle, too much padding, stray bits after the data.
        for bad in [
            "SGVsbG8",
            "SGVs!!!bG8=",
            "SA==SA==",
            "S===",
            "SGVsbG9=",
            "SB==",
            "SGV sbG8=",
        ] {
            assert_eq!(decode_base64(bad), None, "{bad}");
        }
    }
}
