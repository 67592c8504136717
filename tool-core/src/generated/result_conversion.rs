//! How a `#[tool_fn]` function's return value becomes a tool result.
//!
//! The macro cannot see types, only their spelling, so the choice is made by the compiler at
//! the call site (autoref specialisation: the most specific impl that applies is taken). From
//! the return type alone (a marker, [`Returned`]), the generated code picks *tags*, and each
//! tag gives a function of this module, so that what runs is a [`Conversion`]: three function
//! pointers to functions generic over the types alone. Tools returning the same type share
//! one copy of them, and no tool has a conversion body of its own (which would cost compile
//! time in every tool).
//!
//! - a `Result<T, E>` is split: `Err(e)` becomes a [`ToolError`] (kept as is when `E` is
//!   `ToolError`, converted when `E: Into<ToolError>`, otherwise
//!   [`ToolError::Execution`] carrying `e`'s `Display` text), `Ok(v)` goes on;
//! - `ToolCallResult` is kept, `String` / `&str` / `Cow<str>` become text, `()` an empty
//!   success, and any other `T: Serialize` structured JSON.
//!
//! The generated code, for a return type `O`:
//!
//! ```ignore
//! let split = (&&Returned::<O>::new()).split_kind();
//! let ok = (&&split.ok_type()).result_kind().converter();
//! let err = (&&&split.err_type()).error_kind().converter();
//! let conversion = split.conversion(ok, err);
//! ```
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

/// A return type, as a value to pick its tags with (it holds nothing).
pub struct Returned<T: ?Sized>(PhantomData<fn() -> PhantomData<T>>);

impl<T: ?Sized> Returned<T> {
    /// The marker.
    #[inline]
    pub fn new() -> Self {
        Self(PhantomData)
    }
}

impl<T: ?Sized> Default for Returned<T> {
    fn default() -> Self {
        Self::new()
    }
}

/// How a success value of type `T` becomes the result.
pub struct OkConverter<T>(fn(T, &str) -> Result<ToolCallResult, ToolError>);

/// How an error of type `E` becomes the call's [`ToolError`].
pub struct ErrConverter<E>(fn(E, &str) -> ToolError);

/// How a returned `O` becomes the call's result: split into success or error (`T` or `E`),
/// then each converted. Generic over the types alone, so that tools returning the same type
/// share one copy of [`apply`](Self::apply).
pub struct Conversion<O, T, E> {
    split: fn(O) -> Result<T, E>,
    ok: fn(T, &str) -> Result<ToolCallResult, ToolError>,
    err: fn(E, &str) -> ToolError,
}

impl<O, T, E> Clone for Conversion<O, T, E> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<O, T, E> Copy for Conversion<O, T, E> {}

impl<O, T, E> Conversion<O, T, E> {
    /// The result of a call to `tool` that returned `value`.
    #[inline]
    pub fn apply(self, value: O, tool: &str) -> Result<ToolCallResult, ToolError> {
        match (self.split)(value) {
            Ok(value) => (self.ok)(value, tool),
            Err(error) => Err((self.err)(error, tool)),
        }
    }
}

// ---- Result or not ----

/// Tag: the return type is a `Result`.
pub struct SplitTag<T, E>(PhantomData<fn() -> Result<T, E>>);
impl<T, E> SplitTag<T, E> {
    /// The success type, to pick its tag.
    #[inline]
    pub fn ok_type(&self) -> Returned<T> {
        Returned::new()
    }

    /// The error type, to pick its tag.
    #[inline]
    pub fn err_type(&self) -> Returned<E> {
        Returned::new()
    }

    /// The conversion of the whole `Result`.
    #[inline]
    pub fn conversion(
        self,
        ok: OkConverter<T>,
        err: ErrConverter<E>,
    ) -> Conversion<Result<T, E>, T, E> {
        Conversion {
            split: std::convert::identity,
            ok: ok.0,
            err: err.0,
        }
    }
}

/// Tag: the return type is not a `Result`: every value is a success.
pub struct WholeTag<T>(PhantomData<fn() -> T>);
impl<T> WholeTag<T> {
    /// The success type (the type itself), to pick its tag.
    #[inline]
    pub fn ok_type(&self) -> Returned<T> {
        Returned::new()
    }

    /// No error: an error type no value has.
    #[inline]
    pub fn err_type(&self) -> Returned<Infallible> {
        Returned::new()
    }

    /// The conversion of the value.
    #[inline]
    pub fn conversion(
        self,
        ok: OkConverter<T>,
        err: ErrConverter<Infallible>,
    ) -> Conversion<T, T, Infallible> {
        Conversion {
            split: Ok,
            ok: ok.0,
            err: err.0,
        }
    }
}

/// Picks [`SplitTag`] for a `Result`.
pub trait SplitKind<T, E> {
    /// The tag.
    #[inline]
    fn split_kind(&self) -> SplitTag<T, E> {
        SplitTag(PhantomData)
    }
}
impl<T, E> SplitKind<T, E> for &Returned<Result<T, E>> {}

/// Picks [`WholeTag`] for anything else.
pub trait WholeKind<T> {
    /// The tag.
    #[inline]
    fn split_kind(&self) -> WholeTag<T> {
        WholeTag(PhantomData)
    }
}
impl<T> WholeKind<T> for Returned<T> {}

// ---- The error of a Result ----

/// Tag: the error is a `ToolError` already.
pub struct ToolErrorTag;
impl ToolErrorTag {
    /// The error itself.
    #[inline]
    pub fn converter(self) -> ErrConverter<ToolError> {
        ErrConverter(|error, _tool| error)
    }
}

/// Tag: the error converts into a `ToolError`.
pub struct IntoToolErrorTag<E>(PhantomData<fn() -> E>);
impl<E> IntoToolErrorTag<E> {
    /// The converted error.
    #[inline]
    pub fn converter(self) -> ErrConverter<E>
    where
        E: Into<ToolError>,
    {
        ErrConverter(|error, _tool| error.into())
    }
}

/// Tag: the error is shown as an execution failure.
pub struct DisplayErrorTag<E>(PhantomData<fn() -> E>);
impl<E> DisplayErrorTag<E> {
    /// [`ToolError::Execution`] with the error's text.
    #[inline]
    pub fn converter(self) -> ErrConverter<E>
    where
        E: FailureMessage,
    {
        ErrConverter(|error, tool| ToolError::execution(tool, error.failure_message()))
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
    #[inline]
    fn error_kind(&self) -> ToolErrorTag {
        ToolErrorTag
    }
}
impl KeepErrorKind for &&Returned<ToolError> {}

/// Picks [`IntoToolErrorTag`].
pub trait IntoToolErrorKind<E> {
    /// The tag.
    #[inline]
    fn error_kind(&self) -> IntoToolErrorTag<E> {
        IntoToolErrorTag(PhantomData)
    }
}
impl<E: Into<ToolError>> IntoToolErrorKind<E> for &Returned<E> {}

/// Picks [`DisplayErrorTag`].
pub trait DisplayErrorKind<E> {
    /// The tag.
    #[inline]
    fn error_kind(&self) -> DisplayErrorTag<E> {
        DisplayErrorTag(PhantomData)
    }
}
impl<E> DisplayErrorKind<E> for Returned<E> {}

// ---- The success value ----

/// Tag: the value is a `ToolCallResult`.
pub struct AsIsTag;
impl AsIsTag {
    /// The result itself.
    #[inline]
    pub fn converter(self) -> OkConverter<ToolCallResult> {
        OkConverter(|value, _tool| Ok(value))
    }
}

/// Tag: the value is text.
pub struct TextTag<T>(PhantomData<fn() -> T>);
impl<T> TextTag<T> {
    /// A text result.
    #[inline]
    pub fn converter(self) -> OkConverter<T>
    where
        T: Into<String>,
    {
        OkConverter(|value, _tool| Ok(ToolCallResult::text(value)))
    }
}

/// Tag: the value is `()`.
pub struct EmptyTag;
impl EmptyTag {
    /// An empty success.
    #[inline]
    pub fn converter(self) -> OkConverter<()> {
        OkConverter(|(), _tool| Ok(ToolCallResult::empty()))
    }
}

/// Tag: the value is serialised as structured JSON.
pub struct JsonTag<T>(PhantomData<fn() -> T>);
impl<T> JsonTag<T> {
    /// A structured result; a value that fails to serialise is an execution failure.
    #[inline]
    pub fn converter(self) -> OkConverter<T>
    where
        T: StructuredResult,
    {
        OkConverter(json_result::<T>)
    }
}

/// `value` as a structured result of `tool`.
fn json_result<T: StructuredResult>(value: T, tool: &str) -> Result<ToolCallResult, ToolError> {
    value.into_json().map(ToolCallResult::json).map_err(|err| {
        ToolError::execution(tool, format!("its result could not be serialised: {err}"))
    })
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
    #[inline]
    fn result_kind(&self) -> AsIsTag {
        AsIsTag
    }
}
impl AsIsKind for &Returned<ToolCallResult> {}

/// Picks [`TextTag`].
pub trait TextKind<T> {
    /// The tag.
    #[inline]
    fn result_kind(&self) -> TextTag<T> {
        TextTag(PhantomData)
    }
}
impl TextKind<String> for &Returned<String> {}
impl<'a> TextKind<&'a str> for &Returned<&'a str> {}
impl<'a> TextKind<Cow<'a, str>> for &Returned<Cow<'a, str>> {}

/// Picks [`EmptyTag`].
pub trait EmptyKind {
    /// The tag.
    #[inline]
    fn result_kind(&self) -> EmptyTag {
        EmptyTag
    }
}
impl EmptyKind for &Returned<()> {}

/// Picks [`JsonTag`].
pub trait JsonKind<T> {
    /// The tag.
    #[inline]
    fn result_kind(&self) -> JsonTag<T> {
        JsonTag(PhantomData)
    }
}
impl<T> JsonKind<T> for Returned<T> {}

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
