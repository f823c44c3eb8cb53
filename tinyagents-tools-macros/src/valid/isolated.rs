//! The rules of `isolated`, `max_memory` and `max_cpu`: the bounds the OS
//! enforces on an isolated tool's worker process.

use crate::attr::{ToolOptions, parse_duration_ms, parse_size_bytes};
use crate::util::Errors;

/// The resolved isolation of a tool.
pub struct Isolation {
    pub max_memory: Option<u64>,
    pub max_cpu_ms: Option<u64>,
}

/// Checks `isolated`, `max_memory` and `max_cpu`.
pub(super) fn check(o: &ToolOptions, errors: &mut Errors) -> Option<Isolation> {
    let isolated = o.isolated.is_present();
    let max_memory = o.max_memory.as_ref().and_then(|size| {
        bound(&size.0, "max_memory", "size", "256MiB", isolated, errors, |text| {
            parse_size_bytes(text).ok_or_else(|| {
                "this memory size is not a whole number and a unit: write for example \"256MiB\" (units KiB, MiB, GiB)"
                    .to_owned()
            })
        })
    });
    let max_cpu_ms = o.max_cpu.as_ref().and_then(|cpu| {
        bound(
            &cpu.0,
            "max_cpu",
            "duration",
            "2s",
            isolated,
            errors,
            |text| parse_duration_ms(text).map_err(|e| e.message("CPU time")),
        )
    });
    isolated.then_some(Isolation {
        max_memory,
        max_cpu_ms,
    })
}

/// One bound the OS enforces on the worker (`option`, a `what` such as
/// `example`): refused without `isolated`, when zero, or when `parse` refuses
/// it (with its message).
fn bound(
    lit: &syn::LitStr,
    option: &str,
    what: &str,
    example: &str,
    isolated: bool,
    errors: &mut Errors,
    parse: impl Fn(&str) -> Result<u64, String>,
) -> Option<u64> {
    if !isolated {
        errors.push(
            lit.span(),
            format_args!(
                "`{option}` is enforced by the OS in an isolated worker process: add `isolated` (`#[tool(isolated, {option} = \"{example}\")]`), or remove `{option}`"
            ),
        );
    }
    match parse(&lit.value()) {
        Ok(0) => errors.push(
            lit.span(),
            format_args!(
                "a zero `{option}` would fail every call: give a positive {what} such as \"{example}\", or remove `{option}`"
            ),
        ),
        Ok(value) => return Some(value),
        Err(message) => errors.push(lit.span(), message),
    }
    None
}
