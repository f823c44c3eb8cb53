//! What a tool gives back: [`ToolOutput`] from the tool, [`ToolResult`] from
//! the executor, and the model-facing [`ToolMessage`].

use std::borrow::Cow;
use std::time::Duration;

use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::ToolError;
use crate::ids::{CallName, ToolCallId};

/// One block of content.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ContentBlock {
    /// Plain text.
    Text {
        /// The text.
        text: String,
    },
    /// A JSON value.
    Json {
        /// The value.
        value: Value,
    },
    /// An image, base64-encoded.
    Image {
        /// Base64 data.
        data: String,
        /// The MIME type (`image/png`, ...).
        mime_type: String,
    },
    /// A link to a resource the model or the application can fetch.
    ResourceLink {
        /// The resource URI.
        uri: String,
        /// A short name.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        name: Option<String>,
        /// The MIME type, when known.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        mime_type: Option<String>,
        /// A description.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        description: Option<String>,
    },
}

impl ContentBlock {
    /// A text block.
    pub fn text(text: impl Into<String>) -> Self {
        ContentBlock::Text { text: text.into() }
    }

    /// A JSON block.
    pub fn json(value: Value) -> Self {
        ContentBlock::Json { value }
    }

    /// The block as text, as a provider that takes only text would see it.
    pub fn to_text(&self) -> String {
        match self {
            ContentBlock::Text { text } => text.clone(),
            ContentBlock::Json { value } => value.to_string(),
            ContentBlock::Image { mime_type, .. } => format!("[image: {mime_type}]"),
            ContentBlock::ResourceLink { uri, name, .. } => match name {
                Some(name) => format!("[{name}]({uri})"),
                None => uri.clone(),
            },
        }
    }
}

/// A stored artifact: large output kept out of the model's context.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ArtifactRef {
    /// The store's key (content-addressed: the same bytes give the same key).
    pub key: String,
    /// The MIME type of the stored bytes.
    pub mime_type: String,
    /// The size in bytes.
    pub size: u64,
}

/// What a tool returns, before the executor bounds and redacts it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ToolOutput {
    /// Content blocks (may be empty when `structured` says it all).
    pub content: Vec<ContentBlock>,
    /// The structured value, when the tool returns data.
    pub structured: Option<Value>,
    /// Artifacts the tool stored itself.
    pub artifacts: Vec<ArtifactRef>,
}

impl ToolOutput {
    /// An output with nothing in it.
    pub fn empty() -> Self {
        ToolOutput::default()
    }

    /// A text-only output.
    pub fn text(text: impl Into<String>) -> Self {
        ToolOutput {
            content: vec![ContentBlock::text(text)],
            ..ToolOutput::default()
        }
    }

    /// A structured output (its text copy is made by the executor).
    pub fn structured(value: Value) -> Self {
        ToolOutput {
            structured: Some(value),
            ..ToolOutput::default()
        }
    }

    /// A structured output with a separate model-facing view: the model
    /// reads `view`, while the application ([`ToolMessage::structured`]) and
    /// MCP (`structuredContent`) keep `value`, which is what an output
    /// schema checks.
    pub fn rendered(value: Value, view: impl Into<String>) -> Self {
        ToolOutput {
            content: vec![ContentBlock::text(view)],
            structured: Some(value),
            ..ToolOutput::default()
        }
    }

    /// Adds a content block.
    pub fn with_block(mut self, block: ContentBlock) -> Self {
        self.content.push(block);
        self
    }

    /// Adds an artifact reference.
    pub fn with_artifact(mut self, artifact: ArtifactRef) -> Self {
        self.artifacts.push(artifact);
        self
    }
}

/// Turns a tool fn's return value into a [`ToolOutput`].
///
/// Implemented for [`ToolOutput`] itself and, through [`Json`], for any
/// serializable value; `#[tool]` picks the right one from the return type.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be returned from a tool",
    label = "the tool's return type",
    note = "return a type that implements `serde::Serialize`, a `ToolOutput`, or `()`, optionally inside a `Result<_, E>` (under any name, such as `anyhow::Result<_>`)"
)]
pub trait IntoToolOutput {
    /// Converts the value.
    fn into_tool_output(self) -> Result<ToolOutput, ToolError>;
}

impl IntoToolOutput for ToolOutput {
    fn into_tool_output(self) -> Result<ToolOutput, ToolError> {
        Ok(self)
    }
}

impl IntoToolOutput for () {
    fn into_tool_output(self) -> Result<ToolOutput, ToolError> {
        Ok(ToolOutput::empty())
    }
}

/// A tool fn's return value that is either a success or a failure.
///
/// Implemented for `Result<T, E>` whatever it is called (`anyhow::Result<T>`,
/// `std::io::Result<T>`, `type Outcome<T> = Result<T, String>`): `#[tool]`
/// finds it through this trait, not by the word `Result`, so every alias
/// works. `Ok` is the tool's output; `Err` becomes a classified
/// [`ToolError`] (see [`ClassifyError`](crate::ClassifyError) for the error
/// types accepted). A return type that does not implement it is always a
/// success. Implement it for a result type of your own to return it from a
/// tool.
pub trait ToolReturn {
    /// The success value.
    type Success;
    /// The error value.
    type Failure;
    /// Splits the value into success or failure.
    fn into_result(self) -> Result<Self::Success, Self::Failure>;
}

impl<T, E> ToolReturn for Result<T, E> {
    type Success = T;
    type Failure = E;
    fn into_result(self) -> Result<T, E> {
        self
    }
}

/// Wraps a serializable value as a structured tool output.
///
/// A value that serializes to a JSON string (`String`, `&str`, `Cow<str>`)
/// reaches the model as that plain text, not as JSON-quoted text; the
/// string stays the structured value. `null` is an empty output. Any
/// other value is structured, and the model reads its compact JSON.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Json<T>(pub T);

impl<T: Serialize> IntoToolOutput for Json<T> {
    fn into_tool_output(self) -> Result<ToolOutput, ToolError> {
        let value = serde_json::to_value(&self.0)?;
        Ok(match value {
            Value::Null => ToolOutput::empty(),
            Value::String(text) => ToolOutput {
                content: vec![ContentBlock::text(text.clone())],
                structured: Some(Value::String(text)),
                ..ToolOutput::default()
            },
            value => ToolOutput::structured(value),
        })
    }
}

/// A tool's return value with a separate model-facing view.
///
/// The model reads `view`; the application ([`ToolMessage::structured`])
/// and MCP (`structuredContent`) keep `value`. The output schema is
/// `T`'s own, and the executor checks `value` against it.
///
/// ```
/// use tinyagents_tools::prelude::*;
/// use tinyagents_tools::Rendered;
///
/// #[derive(Serialize, JsonSchema)]
/// struct Forecast { city: String, celsius: f64 }
///
/// /// Today's forecast for a city.
/// #[tool]
/// async fn forecast(args: ForecastArgs) -> Rendered<Forecast> {
///     let view = format!("{}: {} °C", args.city, 21.5);
///     Rendered::new(Forecast { city: args.city, celsius: 21.5 }, view)
/// }
///
/// #[derive(Deserialize, JsonSchema)]
/// struct ForecastArgs {
///     /// The city.
///     city: String,
/// }
/// let spec = ForecastTool::spec();
/// assert_eq!(spec.output_schema.as_ref().unwrap().as_value()["properties"]["celsius"]["type"], "number");
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Rendered<T> {
    /// The structured value, for the application and MCP.
    pub value: T,
    /// The text the model reads.
    pub view: String,
}

impl<T> Rendered<T> {
    /// `value` shown to the model as `view`.
    pub fn new(value: T, view: impl Into<String>) -> Self {
        Rendered {
            value,
            view: view.into(),
        }
    }
}

impl<T: Serialize> IntoToolOutput for Rendered<T> {
    fn into_tool_output(self) -> Result<ToolOutput, ToolError> {
        let value = serde_json::to_value(&self.value)?;
        Ok(ToolOutput::rendered(value, self.view))
    }
}

impl<T: JsonSchema> JsonSchema for Rendered<T> {
    fn schema_name() -> Cow<'static, str> {
        T::schema_name()
    }

    fn schema_id() -> Cow<'static, str> {
        T::schema_id()
    }

    fn inline_schema() -> bool {
        T::inline_schema()
    }

    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        T::json_schema(generator)
    }
}

/// The answer to one tool call, as the executor hands it to the application:
/// the canonical [`ToolMessage`] for the model, and what only the
/// application sees (the error's class, artifacts, timings).
///
/// A `ToolResult` dereferences to its [`message`](Self::message), so
/// `result.is_error`, `result.content` and `result.text()` read the
/// message, and every result formatter of [`providers`](crate::providers)
/// takes `&result` as well as `&result.message`.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolResult {
    /// What the model is sent: the call's id, the name as called, the
    /// bounded and redacted content, the structured value and whether the
    /// call failed.
    pub message: ToolMessage,
    /// References to stored artifacts.
    pub artifacts: Vec<ArtifactRef>,
    /// The classified error, when the call failed or was refused.
    pub error: Option<ToolError>,
    /// Provider-specific data to send back with the result (for example a
    /// Gemini thought signature), passed through untouched.
    pub provider_metadata: Option<Value>,
    /// The call's own time: wall time from receipt of the call to its
    /// answer, less [`waited`](Self::waited). A slow approver or a full
    /// batch never shows here.
    pub elapsed: Duration,
    /// Time the call spent waiting rather than running: in its batch's
    /// queue for a place among the calls in flight, for a concurrency
    /// permit (`sequential`, a tool's `max_concurrency`) and in `before_tool`
    /// middleware (an approver deciding). Measured on tokio's clock, so a
    /// paused test clock (`tokio::time::pause`) shows it.
    pub waited: Duration,
}

impl ToolResult {
    /// The result that answers with `message`, with no error, artifact or
    /// timing of its own.
    pub fn new(message: ToolMessage) -> Self {
        ToolResult {
            message,
            artifacts: Vec::new(),
            error: None,
            provider_metadata: None,
            elapsed: Duration::ZERO,
            waited: Duration::ZERO,
        }
    }

    /// A failed result for `tool_call_id` carrying `error` (its message is the
    /// content).
    pub fn from_error(
        tool_call_id: ToolCallId,
        name: impl Into<CallName>,
        error: ToolError,
        elapsed: Duration,
    ) -> Self {
        let message = ToolMessage {
            tool_call_id,
            name: name.into(),
            content: vec![ContentBlock::text(error.message())],
            structured: None,
            is_error: true,
        };
        ToolResult {
            error: Some(error),
            elapsed,
            ..ToolResult::new(message)
        }
    }

    /// `"ok"` for a success, otherwise the error's kind
    /// (`"invalid_arguments"`, `"timeout"`, `"denied"`, ...): one word for
    /// logs, metrics and tests.
    pub fn outcome(&self) -> &'static str {
        self.error.as_ref().map_or("ok", |e| e.kind().as_str())
    }

    /// A copy of the canonical message to send back to the model.
    pub fn to_message(&self) -> ToolMessage {
        self.message.clone()
    }

    /// The canonical message to send back to the model.
    pub fn into_message(self) -> ToolMessage {
        self.message
    }
}

impl std::ops::Deref for ToolResult {
    type Target = ToolMessage;

    fn deref(&self) -> &ToolMessage {
        &self.message
    }
}

impl std::ops::DerefMut for ToolResult {
    fn deref_mut(&mut self) -> &mut ToolMessage {
        &mut self.message
    }
}

impl AsRef<ToolMessage> for ToolResult {
    fn as_ref(&self) -> &ToolMessage {
        &self.message
    }
}

/// The provider-neutral message that answers a tool call in the
/// conversation: what every result formatter of
/// [`providers`](crate::providers) and the MCP server send, and nothing the
/// model must not see.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolMessage {
    /// The call this answers.
    pub tool_call_id: ToolCallId,
    /// The tool name as called.
    pub name: CallName,
    /// Model-facing content, bounded and redacted by the executor.
    pub content: Vec<ContentBlock>,
    /// The whole structured value, when the tool returned data (redacted,
    /// not bounded): providers that take data (Gemini's `response`, MCP's
    /// `structuredContent`) send it when it is small, and the content
    /// otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub structured: Option<Value>,
    /// True when the call failed or was refused.
    pub is_error: bool,
}

impl ToolMessage {
    /// The content as one text (blocks joined by newlines).
    pub fn text(&self) -> String {
        self.content
            .iter()
            .map(ContentBlock::to_text)
            .collect::<Vec<_>>()
            .join("\n")
    }
}

impl AsRef<ToolMessage> for ToolMessage {
    fn as_ref(&self) -> &ToolMessage {
        self
    }
}
