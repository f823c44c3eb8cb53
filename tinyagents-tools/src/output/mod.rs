//! What a tool gives back: [`ToolOutput`] from the tool, [`ToolResult`] from
//! the executor, and the model-facing [`ToolMessage`].

use std::borrow::Cow;

use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::ToolError;

mod message;
pub use message::{ToolMessage, ToolResult};

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
    /// Audio, base64-encoded. Providers without audio in tool results show
    /// the model `[audio: <mime type>]` instead.
    Audio {
        /// Base64 data.
        data: String,
        /// The MIME type (`audio/wav`, ...).
        mime_type: String,
    },
    /// An embedded resource with text contents (MCP's `resource` block).
    /// Its URI and text are redacted like a text block.
    Resource {
        /// The resource URI.
        uri: String,
        /// The MIME type, when known.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        mime_type: Option<String>,
        /// The contents.
        text: String,
    },
    /// An embedded resource with binary contents (MCP's `resource` block
    /// with a `blob`). Providers other than MCP show the model a note
    /// naming it instead.
    ResourceBlob {
        /// The resource URI.
        uri: String,
        /// The MIME type, when known.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        mime_type: Option<String>,
        /// Base64 data.
        blob: String,
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

    /// An image block from base64 `data`.
    pub fn image(data: impl Into<String>, mime_type: impl Into<String>) -> Self {
        ContentBlock::Image {
            data: data.into(),
            mime_type: mime_type.into(),
        }
    }

    /// An audio block from base64 `data`.
    pub fn audio(data: impl Into<String>, mime_type: impl Into<String>) -> Self {
        ContentBlock::Audio {
            data: data.into(),
            mime_type: mime_type.into(),
        }
    }

    /// An embedded resource holding `text`.
    pub fn resource(
        uri: impl Into<String>,
        mime_type: Option<&str>,
        text: impl Into<String>,
    ) -> Self {
        ContentBlock::Resource {
            uri: uri.into(),
            mime_type: mime_type.map(str::to_owned),
            text: text.into(),
        }
    }

    /// The block as text, as a provider that takes only text would see it.
    /// Media (image, audio, binary resources) becomes a short note naming
    /// it; an embedded text resource is its URI, then its text.
    pub fn to_text(&self) -> String {
        match self {
            ContentBlock::Text { text } => text.clone(),
            ContentBlock::Json { value } => value.to_string(),
            ContentBlock::Image { mime_type, .. } => format!("[image: {mime_type}]"),
            ContentBlock::Audio { mime_type, .. } => format!("[audio: {mime_type}]"),
            ContentBlock::Resource { uri, text, .. } => format!("[resource: {uri}]\n{text}"),
            ContentBlock::ResourceBlob { uri, .. } => {
                format!("[resource: {uri}, binary contents not shown]")
            }
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
/// [`ToolError`] (see [`ClassifyError`](crate::error::ClassifyError) for the error
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
