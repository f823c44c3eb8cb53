//! The call's `tracing` span, after the OpenTelemetry GenAI conventions for
//! tool execution: made when a call starts, described once its tool is known.

use serde_json::Value;

use super::CallCx;
use crate::executor::ToolExecutor;
use crate::ids::{CallName, ToolCallId};
use crate::registry::RegisteredTool;
use crate::tool::Shared;

/// The call's span, after the OpenTelemetry GenAI conventions for a tool's
/// execution: named `execute_tool {tool}` for OpenTelemetry (`otel.name`;
/// a `tracing` span's own name is static: `execute_tool`), with the
/// operation, the tool's name and type, the call's id, and room for the
/// tool's description, the error type and status on failure, and (when the
/// executor's `trace_content` is on) the arguments and result. With no
/// subscriber interested, none of it is built.
pub(super) fn call_span(name: &CallName, id: &ToolCallId) -> tracing::Span {
    use tracing::field::Empty;
    tracing::info_span!(
        "execute_tool",
        otel.name = %format_args!("execute_tool {name}"),
        otel.status_code = Empty,
        gen_ai.operation.name = "execute_tool",
        gen_ai.tool.name = %name,
        gen_ai.tool.call.id = %id,
        gen_ai.tool.type = "function",
        gen_ai.tool.description = Empty,
        gen_ai.tool.call.arguments = Empty,
        gen_ai.tool.call.result = Empty,
        error.type = Empty,
        attempt = 1u32,
    )
}

impl<S: Shared, C: Shared> ToolExecutor<S, C> {
    /// Records what is known once the tool is: its description and, when
    /// the application opted in, the (redacted) arguments.
    pub(super) fn describe_span(
        &self,
        cx: &CallCx<'_, C>,
        registered: &RegisteredTool<S, C>,
        args: &Value,
    ) {
        let span = cx.span;
        span.record(
            "gen_ai.tool.description",
            registered.spec().description.as_str(),
        );
        if self.config.trace_content {
            let text = match &cx.redactor {
                Some(redactor) => {
                    let mut masked = args.clone();
                    redactor.json(&mut masked);
                    masked.to_string()
                }
                None => args.to_string(),
            };
            span.record("gen_ai.tool.call.arguments", text.as_str());
        }
    }
}
