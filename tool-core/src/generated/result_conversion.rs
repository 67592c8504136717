//! How a `#[tool_fn]` function's return value becomes a tool result.
//!
//! The macro cannot see types, only their spelling, so the choice is made by the compiler at
//! the call site (autoref specialisation: the most specific impl that applies is taken). The
//! generated code borrows the value to pick a *tag*, and the tag consumes the value:
//!
//! - a `Result<T, E>` is split: `Err(e)` becomes a [`ToolError`] (kept as is when `E` is
//!   `ToolError`, converted when `E: Into<ToolError>`, otherwise
//!   [`ToolError::Execution`] carrying `e`'s `Display` text), `Ok(v)` goes on;
//! - `ToolCallResult` is kept, `String` / `&str` / `Cow<str>` become text, `()` an empty
//!   success, and any other `T: Serialize` structured JSON.
//!
//! Not part of the public API: the macro's generated code is its only user.

use std::borrow::Cow;
use std::convert::Infallible;
use std::fmt::Display;
use std::marker::PhantomData;

use schemars::JsonSchema;
use serde::Serialize;

use crate::schema::type_schema;
use crate::{Args, ToolCallResult, ToolError};

/// A borrowed return value, for picking its tag.
pub struct Returned<'a, T: ?Sized>(pub &'a T);

// ---- Result or not ----

/// Tag: the value is a `Result`.
pub struct SplitTag;
impl SplitTag {
    /// The result itself.
    pub fn split<T, E>(self, value: Result<T, E>) -> Result<T, E> {
        value
    }
}

/// Tag: the value is not a `Result`.
pub struct WholeTag;
impl WholeTag {
    /// The value as a success.
    pub fn split<T>(self, value: T) -> Result<T, Infallible> {
        Ok(value)
    }
}

/// Picks [`SplitTag`] for a `Result`.
pub trait SplitKind {
    /// The tag.
    fn split_kind(&self) -> SplitTag {
        SplitTag
    }
}
impl<T, E> SplitKind for &Returned<'_, Result<T, E>> {}

/// Picks [`WholeTag`] for anything else.
pub trait WholeKind {
    /// The tag.
    fn split_kind(&self) -> WholeTag {
        WholeTag
    }
}
impl<T: ?Sized> WholeKind for Returned<'_, T> {}

// ---- The error of a Result ----

/// Tag: the error is a `ToolError` already.
pub struct ToolErrorTag;
impl ToolErrorTag {
    /// The error itself.
    pub fn into_error(self, error: ToolError, _tool: &str) -> ToolError {
        error
    }
}

/// Tag: the error converts into a `ToolError`.
pub struct IntoToolErrorTag;
impl IntoToolErrorTag {
    /// The converted error.
    pub fn into_error<E: Into<ToolError>>(self, error: E, _tool: &str) -> ToolError {
        error.into()
    }
}

/// Tag: the error is shown as an execution failure.
pub struct DisplayErrorTag;
impl DisplayErrorTag {
    /// [`ToolError::Execution`] with the error's text.
    pub fn into_error<E: FailureMessage>(self, error: E, tool: &str) -> ToolError {
        ToolError::execution(tool, error.failure_message())
    }
}

/// An error a tool function may return: anything with a `Display` text.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a tool's error",
    label = "the error type of this tool's result",
    note = "a tool's `Result` error must implement `std::fmt::Display` or `Into<ToolError>`"
)]
pub trait FailureMessage {
    /// The text the model sees.
    fn failure_message(&self) -> String;
}
impl<E: Display> FailureMessage for E {
    fn failure_message(&self) -> String {
        self.to_string()
    }
}

/// Picks [`ToolErrorTag`].
pub trait KeepErrorKind {
    /// The tag.
    fn error_kind(&self) -> ToolErrorTag {
        ToolErrorTag
    }
}
impl KeepErrorKind for &&Returned<'_, ToolError> {}

/// Picks [`IntoToolErrorTag`].
pub trait IntoToolErrorKind {
    /// The tag.
    fn error_kind(&self) -> IntoToolErrorTag {
        IntoToolErrorTag
    }
}
impl<E: Into<ToolError>> IntoToolErrorKind for &Returned<'_, E> {}

/// Picks [`DisplayErrorTag`].
pub trait DisplayErrorKind {
    /// The tag.
    fn error_kind(&self) -> DisplayErrorTag {
        DisplayErrorTag
    }
}
impl<E> DisplayErrorKind for Returned<'_, E> {}

// ---- The success value ----

/// Tag: the value is a `ToolCallResult`.
pub struct AsIsTag;
impl AsIsTag {
    /// The result itself.
    pub fn into_result(
        self,
        value: ToolCallResult,
        _tool: &str,
    ) -> Result<ToolCallResult, ToolError> {
        Ok(value)
    }
}

/// Tag: the value is text.
pub struct TextTag;
impl TextTag {
    /// A text result.
    pub fn into_result<T: Into<String>>(
        self,
        value: T,
        _tool: &str,
    ) -> Result<ToolCallResult, ToolError> {
        Ok(ToolCallResult::text(value))
    }
}

/// Tag: the value is `()`.
pub struct EmptyTag;
impl EmptyTag {
    /// An empty success.
    pub fn into_result(self, _value: (), _tool: &str) -> Result<ToolCallResult, ToolError> {
        Ok(ToolCallResult::empty())
    }
}

/// Tag: the value is serialised as structured JSON.
pub struct JsonTag;
impl JsonTag {
    /// A structured result; a value that fails to serialise is an execution failure.
    pub fn into_result<T: StructuredResult>(
        self,
        value: T,
        tool: &str,
    ) -> Result<ToolCallResult, ToolError> {
        value.into_json().map(ToolCallResult::json).map_err(|err| {
            ToolError::execution(tool, format!("its result could not be serialised: {err}"))
        })
    }
}

/// A value a tool function may return as structured JSON: anything `Serialize`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a tool's result",
    label = "this return type",
    note = "a tool returns `String`, `&str`, `()`, `ToolCallResult`, or a type that implements `serde::Serialize` (sent as JSON), optionally inside a `Result` whose error implements `Display`"
)]
pub trait StructuredResult {
    /// The value as JSON.
    fn into_json(self) -> Result<serde_json::Value, serde_json::Error>;
}
impl<T: Serialize> StructuredResult for T {
    fn into_json(self) -> Result<serde_json::Value, serde_json::Error> {
        serde_json::to_value(&self)
    }
}

/// Picks [`AsIsTag`].
pub trait AsIsKind {
    /// The tag.
    fn result_kind(&self) -> AsIsTag {
        AsIsTag
    }
}
impl AsIsKind for &Returned<'_, ToolCallResult> {}

/// Picks [`TextTag`].
pub trait TextKind {
    /// The tag.
    fn result_kind(&self) -> TextTag {
        TextTag
    }
}
impl TextKind for &Returned<'_, String> {}
impl TextKind for &Returned<'_, &str> {}
impl TextKind for &Returned<'_, Cow<'_, str>> {}

/// Picks [`EmptyTag`].
pub trait EmptyKind {
    /// The tag.
    fn result_kind(&self) -> EmptyTag {
        EmptyTag
    }
}
impl EmptyKind for &Returned<'_, ()> {}

/// Picks [`JsonTag`].
pub trait JsonKind {
    /// The tag.
    fn result_kind(&self) -> JsonTag {
        JsonTag
    }
}
impl<T> JsonKind for Returned<'_, T> {}

// ---- The result schema, from the success type ----

/// The success type of a tool function, for picking its result schema.
pub struct ReturnType<T: ?Sized>(PhantomData<fn() -> PhantomData<T>>);

impl<T: ?Sized> ReturnType<T> {
    /// The marker.
    pub fn new() -> Self {
        Self(PhantomData)
    }
}

impl<T: ?Sized> Default for ReturnType<T> {
    fn default() -> Self {
        Self::new()
    }
}

/// No result schema: text, `()`, `ToolCallResult`, an untyped JSON value.
pub trait NoSchemaKind {
    /// No schema.
    fn returns_schema(&self) -> Option<Args> {
        None
    }
}
impl NoSchemaKind for &&ReturnType<String> {}
impl NoSchemaKind for &&ReturnType<&str> {}
impl NoSchemaKind for &&ReturnType<Cow<'_, str>> {}
impl NoSchemaKind for &&ReturnType<()> {}
impl NoSchemaKind for &&ReturnType<ToolCallResult> {}
impl NoSchemaKind for &&ReturnType<serde_json::Value> {}
impl<T, E> NoSchemaKind for &&ReturnType<Result<T, E>> {}

/// The type's schema, when it has one.
pub trait SchemaKind {
    /// The schema.
    fn returns_schema(&self) -> Option<Args>;
}
impl<T: JsonSchema> SchemaKind for &ReturnType<T> {
    fn returns_schema(&self) -> Option<Args> {
        Some(type_schema::returns_schema::<T>())
    }
}

/// No schema: the type does not describe itself.
pub trait UnknownSchemaKind {
    /// No schema.
    fn returns_schema(&self) -> Option<Args> {
        None
    }
}
impl<T: ?Sized> UnknownSchemaKind for ReturnType<T> {}
