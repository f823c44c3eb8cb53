//! A `tools/call` answer as rmcp's [`CallToolResult`]: built from the
//! canonical message's own values, and saying exactly what the MCP JSON
//! result of [`providers::mcp`](tinyagents_tools::providers::mcp) says.

use rmcp::model::CallToolResult;

use tinyagents_tools::output::{ContentBlock, ToolMessage};
use tinyagents_tools::providers::mcp::{
    ResultBlock, WRAPPED_RESULT_MEMBER, content_block, result_parts,
};

/// rmcp's `CallToolResult` for `message`: what
/// [`call_tool_result_for`](tinyagents_tools::providers::mcp::call_tool_result_for)
/// writes as JSON (`wrap`: the tool's output is wrapped, as
/// [`wraps_result`](tinyagents_tools::providers::mcp::wraps_result) says),
/// built directly from the message's own values (text blocks and the
/// structured value moved, not copied or written as JSON).
pub(crate) fn rmcp_result(
    message: ToolMessage,
    max_structured_bytes: usize,
    wrap: bool,
) -> Result<CallToolResult, serde_json::Error> {
    let parts = result_parts(&message, max_structured_bytes, wrap);
    let (is_error, send_structured) = (parts.is_error, parts.structured.is_some());
    // The parts list the message's blocks, in order, then at most one text
    // block of their own.
    let own = message.content.len();
    debug_assert!(
        parts.content[..own]
            .iter()
            .all(|block| matches!(block, ResultBlock::Block(_)))
    );
    let added = parts
        .content
        .into_iter()
        .skip(own)
        .find_map(|block| match block {
            ResultBlock::Text(text) => Some(text),
            ResultBlock::Block(_) => None,
        });
    let ToolMessage {
        content,
        structured,
        ..
    } = message;
    let mut blocks = Vec::with_capacity(own + usize::from(added.is_some()));
    for block in content {
        blocks.push(match block {
            ContentBlock::Text { text } => rmcp::model::ContentBlock::text(text),
            ContentBlock::Json { value } => rmcp::model::ContentBlock::text(value.to_string()),
            other => serde_json::from_value(content_block(&other))?,
        });
    }
    blocks.extend(added.map(rmcp::model::ContentBlock::text));
    let mut answer = CallToolResult::success(blocks);
    answer.structured_content = match (send_structured, wrap) {
        (false, _) => None,
        (true, false) => structured,
        (true, true) => {
            let mut wrapper = serde_json::Map::with_capacity(1);
            wrapper.insert(
                WRAPPED_RESULT_MEMBER.to_owned(),
                structured.unwrap_or_default(),
            );
            Some(wrapper.into())
        }
    };
    answer.is_error = Some(is_error);
    Ok(answer)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use rmcp::model::ResultType;
    use serde_json::Value;

    use super::*;
    use tinyagents_tools::ids::{CallName, ToolCallId};
    use tinyagents_tools::providers::mcp::{call_tool_result_bounded, call_tool_result_for};
    use tinyagents_tools::spec::{ToolSchema, ToolSpec};

    fn message(
        content: Vec<ContentBlock>,
        structured: Option<Value>,
        is_error: bool,
    ) -> ToolMessage {
        ToolMessage {
            tool_call_id: ToolCallId::new("c"),
            name: CallName::new("t"),
            content,
            structured,
            is_error,
        }
    }

    #[test]
    fn the_rmcp_result_says_what_the_mcp_json_result_says() {
        let text = |t: &str| ContentBlock::Text { text: t.into() };
        let every_block = vec![
            text("hi"),
            ContentBlock::Json {
                value: json!({"a": [1, 2]}),
            },
            ContentBlock::Image {
                data: "aGk=".into(),
                mime_type: "image/png".into(),
            },
            ContentBlock::Audio {
                data: "aGk=".into(),
                mime_type: "audio/wav".into(),
            },
            ContentBlock::Resource {
                uri: "file:///a".into(),
                mime_type: Some("text/plain".into()),
                text: "body".into(),
            },
            ContentBlock::ResourceBlob {
                uri: "file:///b".into(),
                mime_type: None,
                blob: "aGk=".into(),
            },
            ContentBlock::ResourceLink {
                uri: "file:///c".into(),
                name: None,
                mime_type: Some("text/plain".into()),
                description: Some("a file".into()),
            },
        ];
        let big = json!({"s": "x".repeat(200)});
        let cases = [
            message(vec![], Some(json!({"sum": 42})), false),
            message(vec![text(r#"{"sum":42}"#)], Some(json!({"sum": 42})), false),
            message(vec![], Some(json!([1, 2])), false),
            message(vec![], Some(big.clone()), false),
            message(vec![text("preview")], Some(big), false),
            message(vec![text("failed")], None, true),
            message(every_block, Some(json!({"k": "v"})), false),
            message(vec![], None, false),
        ];
        for case in &cases {
            let typed = rmcp_result(case.clone(), 100, false).expect("valid MCP");
            assert_eq!(typed.result_type, Some(ResultType::COMPLETE));
            let mut written = serde_json::to_value(&typed).unwrap();
            written.as_object_mut().unwrap().remove("resultType");
            assert_eq!(written, call_tool_result_bounded(case, 100), "{case:?}");
        }
        // A tool whose output is a list: wrapped, as its declaration says.
        let spec = ToolSpec::builder("t", "A list.")
            .output_schema(ToolSchema::from_value(
                json!({"type": "array", "items": {"type": "integer"}}),
            ))
            .build()
            .unwrap();
        for case in &cases {
            let typed = rmcp_result(case.clone(), 100, true).expect("valid MCP");
            let mut written = serde_json::to_value(&typed).unwrap();
            written.as_object_mut().unwrap().remove("resultType");
            assert_eq!(written, call_tool_result_for(&spec, case, 100), "{case:?}");
        }
    }
}
