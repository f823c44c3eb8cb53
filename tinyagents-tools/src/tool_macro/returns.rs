//! What generated code does with a tool fn's return value: split it into
//! success or failure, turn the failure into a classified [`ToolError`], the
//! success into a [`ToolOutput`], and find the output schema. Each step picks
//! its conversion by autoref specialization on the concrete return type, so
//! that every `Result` alias works and a type that fits no conversion is
//! reported at the fn's return type.

use std::marker::PhantomData;

use schemars::JsonSchema;
use serde::Serialize;

use crate::error::{ClassifyError, ToolError};
use crate::output::{IntoToolOutput, Json, ToolOutput, ToolReturn};
use crate::spec::ToolSchema;

/// Picks how a tool fn's return value becomes a [`ToolOutput`], by autoref
/// specialization on a concrete type: [`IntoToolOutput`] first (a
/// `ToolOutput`, `()`, a `Json<T>`), then `Serialize`, else a compile error
/// naming the type.
pub struct OutputProbe<T>(PhantomData<T>);

impl<T> OutputProbe<T> {
    /// A probe for the value `_value`'s type.
    pub fn of(_value: &T) -> Self {
        OutputProbe(PhantomData)
    }
}

/// Chosen when the return value implements [`IntoToolOutput`].
pub struct DirectOutput;
/// Chosen when the return value implements `Serialize`.
pub struct SerializedOutput;
/// Chosen when neither applies; converting fails to compile.
pub struct UnsupportedOutput;

/// Highest priority: the value converts itself.
pub trait ViaIntoToolOutput {
    /// The conversion to use.
    fn output_kind(&self) -> DirectOutput {
        DirectOutput
    }
}
impl<T: IntoToolOutput> ViaIntoToolOutput for &&OutputProbe<T> {}

/// Second: the value is serialized as the structured result.
pub trait ViaSerialize {
    /// The conversion to use.
    fn output_kind(&self) -> SerializedOutput {
        SerializedOutput
    }
}
impl<T: Serialize> ViaSerialize for &OutputProbe<T> {}

/// Last: no conversion exists.
pub trait ViaUnsupported {
    /// The conversion to use.
    fn output_kind(&self) -> UnsupportedOutput {
        UnsupportedOutput
    }
}
impl<T> ViaUnsupported for OutputProbe<T> {}

impl DirectOutput {
    /// Converts the value.
    pub fn convert<T: IntoToolOutput>(self, value: T) -> Result<ToolOutput, ToolError> {
        value.into_tool_output()
    }
}

impl SerializedOutput {
    /// Converts the value.
    pub fn convert<T: Serialize>(self, value: T) -> Result<ToolOutput, ToolError> {
        Json(value).into_tool_output()
    }
}

impl UnsupportedOutput {
    /// Never compiles for a type that reaches it: the bound fails with
    /// [`IntoToolOutput`]'s message.
    pub fn convert<T: IntoToolOutput>(self, value: T) -> Result<ToolOutput, ToolError> {
        value.into_tool_output()
    }
}

/// Splits a tool fn's return value into success or failure, by autoref
/// specialization: a [`ToolReturn`] (any `Result`, whatever its name) is
/// split, any other value is a success.
pub struct ReturnProbe<T>(PhantomData<fn() -> T>);

impl<T> ReturnProbe<T> {
    /// A probe for the value `_value`'s type.
    pub fn of(_value: &T) -> Self {
        ReturnProbe(PhantomData)
    }
}

/// Chosen when the return value is a [`ToolReturn`].
pub trait SplitReturn<T: ToolReturn> {
    /// Success or failure, as the value says.
    fn split(&self, value: T) -> Result<T::Success, T::Failure> {
        value.into_result()
    }
}
impl<T: ToolReturn> SplitReturn<T> for &ReturnProbe<T> {}

/// Chosen for any other return value: always a success.
pub trait KeepReturn<T> {
    /// The value, as a success.
    fn split(&self, value: T) -> Result<T, std::convert::Infallible> {
        Ok(value)
    }
}
impl<T> KeepReturn<T> for ReturnProbe<T> {}

/// Picks how a tool fn's error becomes a [`ToolError`], by autoref
/// specialization: `Into<ToolError>` first, then a `std::error::Error` that
/// implements [`ClassifyError`], else [`ToolFailure`] (anything that boxes
/// into `Box<dyn Error + Send + Sync>`), or a compile error naming the type.
pub struct ErrorProbe<E>(PhantomData<fn() -> E>);

impl<E> ErrorProbe<E> {
    /// A probe for the value `_err`'s type.
    pub fn of(_err: &E) -> Self {
        ErrorProbe(PhantomData)
    }
}

/// Chosen when the error converts with `Into<ToolError>`.
pub struct IntoError;
/// Chosen when the error implements [`ClassifyError`].
pub struct ClassifiedError;
/// Chosen otherwise; converting needs [`ToolFailure`].
pub struct OtherError;

/// Highest priority: `From<E> for ToolError`.
pub trait ViaIntoToolError {
    /// The conversion to use.
    fn error_kind(&self) -> IntoError {
        IntoError
    }
}
impl<E: Into<ToolError>> ViaIntoToolError for &&ErrorProbe<E> {}

/// Second: an error type that chooses its class.
pub trait ViaClassifyError {
    /// The conversion to use.
    fn error_kind(&self) -> ClassifiedError {
        ClassifiedError
    }
}
impl<E: ClassifyError + std::error::Error + Send + Sync + 'static> ViaClassifyError
    for &ErrorProbe<E>
{
}

/// Last: any other error type.
pub trait ViaOtherError {
    /// The conversion to use.
    fn error_kind(&self) -> OtherError {
        OtherError
    }
}
impl<E> ViaOtherError for ErrorProbe<E> {}

impl IntoError {
    /// Converts the error.
    pub fn convert<E: Into<ToolError>>(self, err: E) -> ToolError {
        err.into()
    }
}

impl ClassifiedError {
    /// Converts the error with the class it chooses.
    pub fn convert<E: ClassifyError + std::error::Error + Send + Sync + 'static>(
        self,
        err: E,
    ) -> ToolError {
        let class = err.error_class();
        ToolError::from_error(err, class)
    }
}

impl OtherError {
    /// Converts the error through `Box<dyn Error + Send + Sync>`.
    pub fn convert<E: ToolFailure>(self, err: E) -> ToolError {
        ToolError::from(err.into_boxed_error())
    }
}

/// An error type a tool fn may return that has no conversion of its own:
/// anything that converts into `Box<dyn Error + Send + Sync>` (every
/// `std::error::Error + Send + Sync + 'static`, `anyhow::Error`, ...).
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a tool's error type",
    label = "the tool's error type",
    note = "a tool's error is `ToolError`, `String`, a type implementing `std::error::Error + Send + Sync + 'static` (a `thiserror` derive does), `Box<dyn std::error::Error + Send + Sync>` or `anyhow::Error`",
    note = "implement `std::error::Error` for `{Self}`, or `From<{Self}> for ToolError` to build the whole error yourself"
)]
pub trait ToolFailure {
    /// The error, boxed.
    fn into_boxed_error(self) -> Box<dyn std::error::Error + Send + Sync>;
}

impl<E: Into<Box<dyn std::error::Error + Send + Sync>>> ToolFailure for E {
    fn into_boxed_error(self) -> Box<dyn std::error::Error + Send + Sync> {
        self.into()
    }
}

/// Gives the output schema of a tool fn's return type `R`, by autoref
/// specialization: the success type's schema for a [`ToolReturn`], `R`'s own
/// schema otherwise, none for `()` or a type without a schema.
pub struct ReturnSchemaProbe<R>(PhantomData<fn() -> R>);

impl<R> ReturnSchemaProbe<R> {
    /// A probe for `R`.
    #[allow(clippy::new_without_default)]
    pub const fn new() -> Self {
        ReturnSchemaProbe(PhantomData)
    }
}

/// Chosen for `()` and `Result<(), E>`: no output schema.
pub trait UnitSchema {
    /// No schema.
    fn output_schema(&self) -> Option<ToolSchema> {
        None
    }
}
impl UnitSchema for &&&&ReturnSchemaProbe<()> {}
impl<R: ToolReturn<Success = ()>> UnitSchema for &&&&ReturnSchemaProbe<R> {}

/// Chosen for a [`ToolReturn`] whose success type has a schema.
pub trait SuccessSchema {
    /// The success type's schema.
    fn output_schema(&self) -> Option<ToolSchema>;
}
impl<R: ToolReturn> SuccessSchema for &&&ReturnSchemaProbe<R>
where
    R::Success: JsonSchema,
{
    fn output_schema(&self) -> Option<ToolSchema> {
        Some(ToolSchema::for_output::<R::Success>())
    }
}

/// Chosen for any other [`ToolReturn`]: no schema.
pub trait NoSuccessSchema {
    /// No schema.
    fn output_schema(&self) -> Option<ToolSchema> {
        None
    }
}
impl<R: ToolReturn> NoSuccessSchema for &&ReturnSchemaProbe<R> {}

/// Chosen for a plain return type with a schema.
pub trait ValueSchema {
    /// The type's schema.
    fn output_schema(&self) -> Option<ToolSchema>;
}
impl<R: JsonSchema> ValueSchema for &ReturnSchemaProbe<R> {
    fn output_schema(&self) -> Option<ToolSchema> {
        Some(ToolSchema::for_output::<R>())
    }
}

/// Chosen for a plain return type without a schema.
pub trait NoValueSchema {
    /// No schema.
    fn output_schema(&self) -> Option<ToolSchema> {
        None
    }
}
impl<R> NoValueSchema for ReturnSchemaProbe<R> {}
