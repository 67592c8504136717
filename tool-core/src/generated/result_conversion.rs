//! How a `#[tool_fn]` function's return value becomes a tool result.
//!
//! The macro cannot see types, only their spelling, so the choice is made by the compiler at
//! the call site (autoref specialisation: the most specific impl that applies is taken). From
//! the return type alone (a marker, [`Returned`]), the generated code picks how to split it
//! (a `Result` or not) together with the converter for its error type, then a converter for
//! its success type, each a function of this module, so that what runs is a [`Conversion`]:
//! three function pointers to functions generic over the types alone. Tools returning the
//! same type share one copy of them, and no tool has a conversion body of its own (which
//! would cost compile time in every tool). Two picks, not three: each is a method look-up
//! the compiler does for every tool.
//!
//! - a `Result<T, E>` is split: `Err(e)` becomes a [`ToolError`] (kept as is when `E` is
//!   `ToolError`, converted when `E: Into<ToolError>`, otherwise
//!   [`ToolError::Execution`] carrying `e`'s `Display` text, `{:#}`), `Ok(v)` goes on;
//! - `ToolCallResult` is kept, `String` / `&str` / `Cow<str>` become text, `()` an empty
//!   success, an `Image`, a `Vec<Image>`, an `Option<Image>` (`None` is `null`) or a
//!   `Vec<ContentPart>` a result the model sees as images and text (never their JSON:
//!   megabytes of base64 text), a [`WithImages<T>`] structured JSON with images beside it
//!   (`T`'s schema the tool's result schema), and any other `T: Serialize` structured JSON.
//!
//! The generated code, for a return type `O`:
//!
//! ```ignore
//! let (ok, err, split) = (&&&&Returned::<O>::NEW).split_kind();
//! let conversion = split.conversion((&&ok).result_kind(), err);
//! // and, for the tool's definition, the success type's schema:
//! let returns = (&&&&&ReturnType::<O>::NEW).returns_schema(); // a `ReturnsSchema`
//! ```
//!
//! Not part of the public API: the macro's generated code is its only user.

// Markers and function pointers that the generated code makes and uses at once; public only
// so that errors name them by a readable path. Their `Debug` would show nothing.
#![allow(missing_debug_implementations)]

use std::borrow::Cow;
use std::convert::Infallible;
use std::fmt::Display;
use std::marker::PhantomData;

use schemars::JsonSchema;
use serde::Serialize;

use crate::schema::type_schema;
use crate::{Args, ContentPart, Image, ToolCallResult, ToolError, WithImages};

/// A return type, as a value to pick its tags with (it holds nothing).
pub struct Returned<T: ?Sized>(PhantomData<fn() -> PhantomData<T>>);

impl<T: ?Sized> Returned<T> {
    /// The marker, as a constant (no call to compile where it is written).
    pub const NEW: Self = Self(PhantomData);
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

/// What a return type splits into: the success type (as a marker to pick its converter
/// with), the error's converter, and the tag that assembles the conversion. One call gives
/// all three, so that the generated code makes as few calls as the choice allows (each is
/// code compiled in every tool of a debug build).
pub type Split<T, E, Tag> = (Returned<T>, ErrConverter<E>, Tag);

// ---- Result or not, and the error of a Result ----
//
// Called on `&&&&Returned<O>`: the first kind below that applies is taken (a `&self`
// method is found by value on one reference fewer than the call's four first, then on
// each reference fewer). A bound the error type must meet is on the method (not the impl)
// for the last `Result` kind, so that the kind is still chosen and the error names the
// bound.

/// Picks the error itself, for a `Result<T, ToolError>`.
pub trait KeepErrorKind<T> {
    /// The parts.
    #[inline]
    fn split_kind(&self) -> Split<T, ToolError, SplitTag<T, ToolError>> {
        (
            Returned::NEW,
            ErrConverter(|error, _tool| error),
            SplitTag(PhantomData),
        )
    }
}
impl<T> KeepErrorKind<T> for &&&Returned<Result<T, ToolError>> {}

/// Picks the conversion into a `ToolError`, for a `Result<T, E>` with `E: Into<ToolError>`.
pub trait IntoToolErrorKind<T, E> {
    /// The parts.
    #[inline]
    fn split_kind(&self) -> Split<T, E, SplitTag<T, E>>
    where
        E: Into<ToolError>,
    {
        (
            Returned::NEW,
            ErrConverter(|error, _tool| error.into()),
            SplitTag(PhantomData),
        )
    }
}
impl<T, E: Into<ToolError>> IntoToolErrorKind<T, E> for &&Returned<Result<T, E>> {}

/// Picks [`ToolError::Execution`] with the error's text, for any other `Result<T, E>`.
pub trait DisplayErrorKind<T, E> {
    /// The parts.
    #[inline]
    fn split_kind(&self) -> Split<T, E, SplitTag<T, E>>
    where
        E: FailureMessage,
    {
        (
            Returned::NEW,
            ErrConverter(|error, tool| failed_with(tool, error.failure_message())),
            SplitTag(PhantomData),
        )
    }
}
impl<T, E> DisplayErrorKind<T, E> for &Returned<Result<T, E>> {}

/// Picks [`WholeTag`] for anything but a `Result`: no error to convert.
pub trait WholeKind<T> {
    /// The parts.
    #[inline]
    fn split_kind(&self) -> Split<T, Infallible, WholeTag<T>> {
        (
            Returned::NEW,
            ErrConverter(|never, _tool| match never {}),
            WholeTag(PhantomData),
        )
    }
}
impl<T> WholeKind<T> for Returned<T> {}

/// [`ToolError::Execution`] with `message`, or with a note that there was none: "Tool 'x'
/// failed: " told a model nothing, not even that the tool said nothing.
fn failed_with(tool: &str, message: String) -> ToolError {
    if crate::is_blank(&message) {
        ToolError::execution(tool, "its error gave no message")
    } else {
        ToolError::execution(tool, message)
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
    /// The alternate form (`{:#}`): the same text for most errors, and for those that keep
    /// their causes there (`anyhow::Error`: "reading config: file not found" where `{}`
    /// gives "reading config"), the whole chain, which a model needs to act on.
    fn failure_message(&self) -> String {
        format!("{self:#}")
    }
}

// ---- The success value ----

/// Picks the conversion of a success type that has one of its own (not sent as its JSON):
/// one trait with an impl per type, so that the method's look-up has one candidate for all
/// of them rather than one trait each.
pub trait OwnResultKind {
    /// The success type.
    type Value;
    /// The converter.
    fn result_kind(&self) -> OkConverter<Self::Value>;
}

/// The result itself, for a `ToolCallResult`.
impl OwnResultKind for &Returned<ToolCallResult> {
    type Value = ToolCallResult;
    #[inline]
    fn result_kind(&self) -> OkConverter<ToolCallResult> {
        OkConverter(|value, _tool| Ok(value))
    }
}

/// An image result, for an [`Image`]: shown to the model as the image (as
/// [`ToolCallResult::image`]), not sent as its JSON (megabytes of base64 text).
impl OwnResultKind for &Returned<Image> {
    type Value = Image;
    #[inline]
    fn result_kind(&self) -> OkConverter<Image> {
        OkConverter(|image, _tool| Ok(ToolCallResult::image(image)))
    }
}

/// A result of images, for a `Vec<Image>`: shown to the model as the images, in order, not
/// sent as their JSON.
impl OwnResultKind for &Returned<Vec<Image>> {
    type Value = Vec<Image>;
    #[inline]
    fn result_kind(&self) -> OkConverter<Vec<Image>> {
        OkConverter(|images, _tool| {
            Ok(ToolCallResult::parts(
                images.into_iter().map(ContentPart::Image),
            ))
        })
    }
}

/// An image result or none, for an `Option<Image>`: the image shown as an [`Image`] is;
/// `None` is `null`, as any other `Option` returned is.
impl OwnResultKind for &Returned<Option<Image>> {
    type Value = Option<Image>;
    #[inline]
    fn result_kind(&self) -> OkConverter<Option<Image>> {
        OkConverter(|image, _tool| {
            Ok(match image {
                Some(image) => ToolCallResult::image(image),
                None => ToolCallResult::json(serde_json::Value::Null),
            })
        })
    }
}

/// A result of text and images, for a `Vec<ContentPart>` (as [`ToolCallResult::parts`]),
/// not sent as its JSON.
impl OwnResultKind for &Returned<Vec<ContentPart>> {
    type Value = Vec<ContentPart>;
    #[inline]
    fn result_kind(&self) -> OkConverter<Vec<ContentPart>> {
        OkConverter(|parts, _tool| Ok(ToolCallResult::parts(parts)))
    }
}

/// A text result.
impl OwnResultKind for &Returned<String> {
    type Value = String;
    #[inline]
    fn result_kind(&self) -> OkConverter<String> {
        OkConverter(text_result)
    }
}

/// A text result.
impl<'a> OwnResultKind for &Returned<&'a str> {
    type Value = &'a str;
    #[inline]
    fn result_kind(&self) -> OkConverter<&'a str> {
        OkConverter(text_result)
    }
}

/// A text result.
impl<'a> OwnResultKind for &Returned<Cow<'a, str>> {
    type Value = Cow<'a, str>;
    #[inline]
    fn result_kind(&self) -> OkConverter<Cow<'a, str>> {
        OkConverter(text_result)
    }
}

/// `value` as a text result (of any of the text types above).
fn text_result<T: Into<String>>(value: T, _tool: &str) -> Result<ToolCallResult, ToolError> {
    Ok(ToolCallResult::text(value))
}

/// An empty success, for `()`.
impl OwnResultKind for &Returned<()> {
    type Value = ();
    #[inline]
    fn result_kind(&self) -> OkConverter<()> {
        OkConverter(|(), _tool| Ok(ToolCallResult::empty()))
    }
}

/// Picks a structured result with images, for a [`WithImages`] (as
/// [`ToolCallResult::json_with_images`]); a value that fails to serialise is an execution
/// failure, as a plain structured result's is.
pub trait WithImagesKind<T> {
    /// The converter.
    #[inline]
    fn result_kind(&self) -> OkConverter<WithImages<T>>
    where
        T: Serialize,
    {
        OkConverter(json_with_images_result::<T>)
    }
}
impl<T> WithImagesKind<T> for &Returned<WithImages<T>> {}

/// `result` as a structured result with images of `tool`.
fn json_with_images_result<T: Serialize>(
    result: WithImages<T>,
    tool: &str,
) -> Result<ToolCallResult, ToolError> {
    result.into_result().map_err(|err| {
        ToolError::execution(tool, format!("its result could not be serialised: {err}"))
    })
}

/// Picks a structured result; a value that fails to serialise is an execution failure.
pub trait JsonKind<T> {
    /// The converter.
    #[inline]
    fn result_kind(&self) -> OkConverter<T>
    where
        T: StructuredResult,
    {
        OkConverter(json_result::<T>)
    }
}
impl<T> JsonKind<T> for Returned<T> {}

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
    note = "a tool returns `String`, `&str`, `()`, `ToolCallResult`, an `Image` (or a `Vec` or `Option` of them), a `Vec<ContentPart>`, a `WithImages<T>`, or a type that implements `serde::Serialize` (sent as JSON), optionally inside a `Result` whose error implements `Display`"
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

// ---- The result schema, from the success type ----

/// A tool function's return type, for picking its result schema: the success type's, a
/// `Result` split by its type as its conversion splits it (so an alias of `Result` is split,
/// and a user's own type named `Result` is not). From the most specific kind:
///
/// 1. a `Result` whose success is text, `()`, a `ToolCallResult` or a JSON value: none;
/// 2. a `Result` whose success type describes itself: that schema;
/// 3. any other `Result`, and text, `()`, a `ToolCallResult` or a JSON value: none;
/// 4. a type that describes itself: its schema;
/// 5. anything else: none.
///
/// A [`WithImages<T>`] (alone or a `Result`'s success; kind 1 never applies to it) is picked
/// before kinds 2 to 5, by its `T`: none when `T` is text, `()`, a `ToolCallResult` or a
/// JSON value, else `T`'s schema when `T` describes itself, else none (kinds 3 and 5).
pub struct ReturnType<T: ?Sized>(PhantomData<fn() -> PhantomData<T>>);

impl<T: ?Sized> ReturnType<T> {
    /// The marker, as a constant (no call to compile where it is written).
    pub const NEW: Self = Self(PhantomData);
}

/// A success value sent without a result schema: text, `()`, a `ToolCallResult`, an untyped
/// JSON value.
pub trait Unschematic {}
impl Unschematic for String {}
impl Unschematic for &str {}
impl Unschematic for Cow<'_, str> {}
impl Unschematic for () {}
impl Unschematic for ToolCallResult {}
impl Unschematic for Image {}
impl Unschematic for Vec<Image> {}
impl Unschematic for Option<Image> {}
impl Unschematic for Vec<ContentPart> {}
impl Unschematic for serde_json::Value {}

/// How a tool's result schema is built: a function, not the schema, so that the generated
/// definition picks it before it builds any value to drop (a cleanup path in every tool's
/// `definition` otherwise, should the pick unwind with the argument schema built).
pub type ReturnsSchema = fn() -> Option<Args>;

/// No result schema: the [`ReturnsSchema`] of the kinds without one.
fn no_schema() -> Option<Args> {
    None
}

/// `T`'s result schema: the [`ReturnsSchema`] of the kinds with one.
fn schema_of<T: JsonSchema>() -> Option<Args> {
    Some(type_schema::returns_schema::<T>())
}

/// No result schema (kinds 1 and 3 of [`ReturnType`]).
pub trait NoSchemaKind {
    /// No schema.
    fn returns_schema(&self) -> ReturnsSchema {
        no_schema
    }
}
impl<T: Unschematic, E> NoSchemaKind for &&&&ReturnType<Result<T, E>> {}
impl<T, E> NoSchemaKind for &&ReturnType<Result<T, E>> {}
impl<T: Unschematic> NoSchemaKind for &&ReturnType<T> {}

// Tried right after kind 1 (a `&self` method is found by value on one reference fewer than
// the call's five first), and before the `JsonSchema` impls of `WithImages` below: a
// `serde_json::Value` describes itself as any value, which is no schema to declare.
impl<T: Unschematic> NoSchemaKind for &&&&&ReturnType<WithImages<T>> {}
impl<T: Unschematic, E> NoSchemaKind for &&&&&ReturnType<Result<WithImages<T>, E>> {}

/// The success type's schema, for a `Result` whose success type has one.
pub trait SuccessSchemaKind {
    /// The schema.
    fn returns_schema(&self) -> ReturnsSchema;
}
impl<T: JsonSchema, E> SuccessSchemaKind for &&&ReturnType<Result<T, E>> {
    fn returns_schema(&self) -> ReturnsSchema {
        schema_of::<T>
    }
}

/// The type's schema, when it has one.
pub trait SchemaKind {
    /// The schema.
    fn returns_schema(&self) -> ReturnsSchema;
}
impl<T: JsonSchema> SchemaKind for &ReturnType<T> {
    fn returns_schema(&self) -> ReturnsSchema {
        schema_of::<T>
    }
}
// The value's schema: the images are not part of the structured result.
impl<T: JsonSchema> SchemaKind for &&&ReturnType<WithImages<T>> {
    fn returns_schema(&self) -> ReturnsSchema {
        schema_of::<T>
    }
}
impl<T: JsonSchema, E> SchemaKind for &&&ReturnType<Result<WithImages<T>, E>> {
    fn returns_schema(&self) -> ReturnsSchema {
        schema_of::<T>
    }
}

/// No schema: the type does not describe itself.
pub trait UnknownSchemaKind {
    /// No schema.
    fn returns_schema(&self) -> ReturnsSchema {
        no_schema
    }
}
impl<T: ?Sized> UnknownSchemaKind for ReturnType<T> {}
