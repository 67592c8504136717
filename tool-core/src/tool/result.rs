//! [`ToolCallResult`]: what a tool gives back to the model.

use std::borrow::Cow;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::tool::content_part::{images_of, joined_text};
use crate::tool::nesting::check_depth;
use crate::{ContentPart, Image, JsonText, JsonWithImages};

/// The content of a tool's result.
///
/// Serialized as `{"type": "text", "value": "…"}` or `{"type": "json", "value": …}`; a
/// [`JsonText`](Self::JsonText) is serialized as the `json` it is, and so reads back as
/// [`Json`](Self::Json). [`Parts`](Self::Parts) (text and images) is
/// `{"type": "parts", "value": [<ContentPart>, …]}`, and
/// [`JsonWithImages`](Self::JsonWithImages)
/// `{"type": "json_with_images", "value": {"value": …, "parts": [<ContentPart>, …]}}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", content = "value", rename_all = "snake_case")]
#[non_exhaustive]
pub enum UserModelContent {
    /// Plain text.
    Text(String),
    /// Structured content (checked against the tool's `returns` schema when it has one).
    Json(Value),
    /// Structured content already written as JSON text: given to the model as it is, and
    /// parsed into a value only where one is needed (a `returns` schema to check, a provider
    /// format or an MCP result that carries the value itself). Otherwise it is treated as
    /// [`Json`](Self::Json) is; the two compare equal only to themselves, so compare
    /// [`json_value`](Self::json_value)s to compare the values.
    #[serde(rename = "json", skip_deserializing)]
    JsonText(JsonText),
    /// Text and images, in order (a screenshot with its caption, a page read as pictures):
    /// every provider format that takes images is given them; where only text can go (the
    /// text format, [`to_text`](Self::to_text)), each image is a
    /// [placeholder](Image::placeholder) saying it is there.
    Parts(Vec<ContentPart>),
    /// Structured content and images beside it (a page's `{url, title}` and its screenshot):
    /// the value is checked against the tool's `returns` schema as a [`Json`](Self::Json)
    /// one is, and MCP serves it as `structuredContent` with `image` blocks. Every provider
    /// format is given what [`Parts`](Self::Parts) of the value's JSON text, then the parts,
    /// would give it. Made by [`ToolCallResult::json_with_images`].
    JsonWithImages(JsonWithImages),
}

impl UserModelContent {
    /// The content as text: the text itself, the JSON serialised compactly, or the JSON
    /// text as it is (JSON nested deeper than [`MAX_JSON_DEPTH`](crate::MAX_JSON_DEPTH) is
    /// not serialised: the text says it is "nested deeper than 128 levels"); parts one a
    /// line, each image as its [placeholder](Image::placeholder); JSON with images, the
    /// JSON's line then the parts'.
    pub fn to_text(&self) -> String {
        match self {
            Self::Text(text) => text.clone(),
            Self::Json(value) => json_line(value),
            Self::JsonText(text) => text.as_str().to_owned(),
            Self::Parts(_) | Self::JsonWithImages(_) => {
                self.text_placing_images(Image::placeholder)
            }
        }
    }

    /// [`to_text`](Self::to_text), each image written by `placeholder` (where a format
    /// leaves images out, the text says so); no image is copied.
    pub(crate) fn text_placing_images(&self, placeholder: impl Fn(&Image) -> String) -> String {
        match self {
            Self::Parts(parts) => joined_text(parts, placeholder),
            Self::JsonWithImages(json) if json.parts().is_empty() => json_line(json.value()),
            Self::JsonWithImages(json) => format!(
                "{}\n{}",
                json_line(json.value()),
                joined_text(json.parts(), placeholder)
            ),
            other => other.to_text(),
        }
    }

    /// The images the content holds, in order (none but in [`Parts`](Self::Parts) and
    /// [`JsonWithImages`](Self::JsonWithImages)).
    pub fn images(&self) -> impl Iterator<Item = &Image> {
        images_of(match self {
            Self::Parts(parts) => parts,
            Self::JsonWithImages(json) => json.parts(),
            _ => &[],
        })
    }

    /// Whether the content is structured: [`Json`](Self::Json),
    /// [`JsonText`](Self::JsonText) or [`JsonWithImages`](Self::JsonWithImages).
    pub fn is_json(&self) -> bool {
        matches!(
            self,
            Self::Json(_) | Self::JsonText(_) | Self::JsonWithImages(_)
        )
    }

    /// The content as text and image parts, where a format gives the model images: the
    /// parts themselves, or a [`JsonWithImages`](Self::JsonWithImages)' value as its JSON
    /// text (as [`to_text`](Self::to_text) writes it) before its parts; any other content
    /// one text part.
    pub(crate) fn text_and_image_parts(&self) -> Vec<ContentPart> {
        match self {
            Self::Parts(parts) => parts.clone(),
            Self::JsonWithImages(json) => {
                std::iter::once(ContentPart::text(json_line(json.value())))
                    .chain(json.parts().iter().cloned())
                    .collect()
            }
            other => vec![ContentPart::text(other.to_text())],
        }
    }

    /// The structured content as a value (a [`JsonText`](Self::JsonText) parsed, a
    /// [`Json`](Self::Json) or [`JsonWithImages`](Self::JsonWithImages)' value borrowed);
    /// `None` for text and parts.
    ///
    /// ```
    /// use serde_json::json;
    /// use toolsmith::{JsonText, UserModelContent};
    ///
    /// let text = UserModelContent::JsonText(JsonText::new(r#"{"n":1}"#).unwrap());
    /// let value = UserModelContent::Json(json!({"n": 1}));
    /// assert_ne!(text, value);
    /// assert_eq!(text.json_value(), value.json_value());
    /// assert_eq!(UserModelContent::Text("n".into()).json_value(), None);
    /// ```
    pub fn json_value(&self) -> Option<Cow<'_, Value>> {
        match self {
            Self::Text(_) | Self::Parts(_) => None,
            Self::Json(value) => Some(Cow::Borrowed(value)),
            Self::JsonWithImages(json) => Some(Cow::Borrowed(json.value())),
            Self::JsonText(text) => Some(Cow::Owned(text.to_value())),
        }
    }
}

/// A value as compact JSON, or, nested deeper than
/// [`MAX_JSON_DEPTH`](crate::MAX_JSON_DEPTH), a text saying so (not serialised).
fn json_line(value: &Value) -> String {
    match check_depth(value) {
        Ok(()) => value.to_string(),
        Err(too_deep) => format!("(a JSON value {too_deep})"),
    }
}

/// A tool's result: its content, and an error detail when the tool reports a failure the
/// model should see and correct (rather than a [`ToolError`](crate::ToolError) the caller
/// handles).
///
/// ```
/// use toolsmith::ToolCallResult;
/// use serde_json::json;
///
/// assert_eq!(ToolCallResult::text("done").content.to_text(), "done");
/// assert_eq!(ToolCallResult::json(json!({"sum": 3})).content.to_text(), r#"{"sum":3}"#);
/// let failed = ToolCallResult::error("Division by zero");
/// assert!(failed.is_error());
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCallResult {
    /// The tool's output.
    pub content: UserModelContent,
    /// Set when the result reports a failure to the model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_detail: Option<String>,
}

impl ToolCallResult {
    /// A plain-text result.
    #[inline]
    pub fn text(text: impl Into<String>) -> Self {
        Self {
            content: UserModelContent::Text(text.into()),
            error_detail: None,
        }
    }

    /// A structured result.
    #[inline]
    pub fn json(value: Value) -> Self {
        Self {
            content: UserModelContent::Json(value),
            error_detail: None,
        }
    }

    /// A structured result already written as JSON text (see [`JsonText`]).
    #[inline]
    pub fn json_text(text: JsonText) -> Self {
        Self {
            content: UserModelContent::JsonText(text),
            error_detail: None,
        }
    }

    /// A result of one image (a screenshot, a picture read from a file).
    ///
    /// ```
    /// use toolsmith::{Image, ToolCallResult};
    ///
    /// let image = Image::from_bytes("image/png", b"\x89PNG\r\n\x1a\n").unwrap();
    /// let result = ToolCallResult::image(image.clone());
    /// assert_eq!(result.content.images().collect::<Vec<_>>(), [&image]);
    /// assert_eq!(result.content.to_text(), "[image: image/png, 8 bytes]");
    /// ```
    pub fn image(image: Image) -> Self {
        Self::parts([ContentPart::Image(image)])
    }

    /// A result of text and images, in order.
    ///
    /// ```
    /// use toolsmith::{ContentPart, Image, ToolCallResult};
    ///
    /// let shot = Image::from_bytes("image/png", b"\x89PNG\r\n\x1a\n").unwrap();
    /// let result = ToolCallResult::parts([ContentPart::text("The login page:"), shot.into()]);
    /// assert_eq!(result.content.to_text(), "The login page:\n[image: image/png, 8 bytes]");
    /// ```
    pub fn parts(parts: impl IntoIterator<Item = ContentPart>) -> Self {
        Self {
            content: UserModelContent::Parts(parts.into_iter().collect()),
            error_detail: None,
        }
    }

    /// A structured result with images beside it: a browser tool's `{url, title}` and its
    /// screenshot. The value is what the tool's `returns` schema checks (and what MCP serves
    /// as `structuredContent`); the model is given the value's JSON text, then the images,
    /// as [`parts`](Self::parts) of them would be given. A `#[tool_fn]` function returns a
    /// [`WithImages`](crate::WithImages) for this.
    ///
    /// ```
    /// use serde_json::json;
    /// use toolsmith::{Image, ToolCallResult};
    ///
    /// let shot = Image::from_bytes("image/png", b"\x89PNG\r\n\x1a\n").unwrap();
    /// let page = json!({"title": "Example Domain"});
    /// let result = ToolCallResult::json_with_images(page.clone(), [shot.clone()]);
    /// assert_eq!(result.content.json_value().as_deref(), Some(&page));
    /// assert_eq!(result.content.images().collect::<Vec<_>>(), [&shot]);
    /// assert_eq!(
    ///     result.content.to_text(),
    ///     "{\"title\":\"Example Domain\"}\n[image: image/png, 8 bytes]"
    /// );
    /// ```
    pub fn json_with_images(value: Value, images: impl IntoIterator<Item = Image>) -> Self {
        Self {
            content: UserModelContent::JsonWithImages(JsonWithImages::new(
                value,
                images.into_iter().map(ContentPart::Image),
            )),
            error_detail: None,
        }
    }

    /// A structured result from any serialisable value.
    pub fn to_json<T: Serialize + ?Sized>(value: &T) -> Result<Self, serde_json::Error> {
        serde_json::to_value(value).map(Self::json)
    }

    /// A successful result with nothing to say.
    pub fn empty() -> Self {
        Self::text("")
    }

    /// A failure the model sees as the tool's answer, so it can adjust and try again.
    pub fn error(message: impl Into<String>) -> Self {
        let message = message.into();
        Self {
            content: UserModelContent::Text(message.clone()),
            error_detail: Some(message),
        }
    }

    /// Whether this result reports a failure.
    pub fn is_error(&self) -> bool {
        self.error_detail.is_some()
    }
}

impl From<String> for ToolCallResult {
    fn from(text: String) -> Self {
        Self::text(text)
    }
}

impl From<&str> for ToolCallResult {
    fn from(text: &str) -> Self {
        Self::text(text)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::{ToolCallResult, UserModelContent};
    use crate::{ContentPart, Image, JsonText};

    #[test]
    fn json_text_serializes_as_the_json_it_is() {
        let text = ToolCallResult::json_text(JsonText::new(r#"{"n":[1,2]}"#).unwrap());
        let value = ToolCallResult::json(json!({"n": [1, 2]}));
        let written = serde_json::to_string(&text).unwrap();
        assert_eq!(written, serde_json::to_string(&value).unwrap());
        assert_eq!(
            written,
            r#"{"content":{"type":"json","value":{"n":[1,2]}}}"#
        );
        let back: ToolCallResult = serde_json::from_str(&written).unwrap();
        assert_eq!(back, value);
        assert!(text.content.is_json() && value.content.is_json());
        assert!(!UserModelContent::Text("{}".into()).is_json());
        assert_eq!(text.content.to_text(), value.content.to_text());
    }

    #[test]
    fn parts_round_trip_and_the_other_variants_are_written_as_before() {
        let image = Image::from_bytes("image/gif", b"GIF89a\x01\0").unwrap();
        let result = ToolCallResult::parts([ContentPart::text("a dot:"), image.into()]);
        let written = serde_json::to_value(&result).unwrap();
        assert_eq!(
            written,
            json!({"content": {"type": "parts", "value": [
                {"type": "text", "text": "a dot:"},
                {"type": "image", "media_type": "image/gif", "data": "R0lGODlhAQA="}
            ]}})
        );
        let back: ToolCallResult = serde_json::from_value(written).unwrap();
        assert_eq!(back, result);
        assert!(!result.content.is_json());
        assert_eq!(result.content.json_value(), None);
        assert_eq!(
            serde_json::to_string(&ToolCallResult::text("hi")).unwrap(),
            r#"{"content":{"type":"text","value":"hi"}}"#
        );
    }

    #[test]
    fn json_with_images_is_a_value_and_parts() {
        let image = Image::from_bytes("image/gif", b"GIF89a\x01\0").unwrap();
        let result = ToolCallResult::json_with_images(json!({"n": 1}), [image.clone()]);
        let written = serde_json::to_value(&result).unwrap();
        assert_eq!(
            written,
            json!({"content": {"type": "json_with_images", "value": {
                "value": {"n": 1},
                "parts": [{"type": "image", "media_type": "image/gif", "data": "R0lGODlhAQA="}]
            }}})
        );
        let back: ToolCallResult = serde_json::from_value(written).unwrap();
        assert_eq!(back, result);

        let content = &result.content;
        assert!(content.is_json());
        assert_eq!(content.json_value().as_deref(), Some(&json!({"n": 1})));
        assert_eq!(content.images().collect::<Vec<_>>(), [&image]);
        assert_eq!(content.to_text(), "{\"n\":1}\n[image: image/gif, 8 bytes]");
        assert_eq!(
            content.text_and_image_parts(),
            [ContentPart::text(r#"{"n":1}"#), image.into()]
        );
        // No image: the value's text alone.
        let bare = ToolCallResult::json_with_images(json!([1]), []);
        assert_eq!(bare.content.to_text(), "[1]");
    }

    #[test]
    fn json_with_images_leaves_every_result_its_size() {
        // The content without this kind: a result is moved several times on each call's way
        // back, so a kind that one tool in many returns must not make every result larger.
        #[allow(dead_code)]
        enum WithoutIt {
            Text(String),
            Json(serde_json::Value),
            JsonText(JsonText),
            Parts(Vec<ContentPart>),
        }
        assert_eq!(size_of::<UserModelContent>(), size_of::<WithoutIt>());
    }

    #[test]
    fn json_with_images_nested_too_deep_is_not_serialised_as_text() {
        use crate::tool::nesting::testing::{nested, on_small_stack};
        use crate::tool::nesting::{MAX_JSON_DEPTH, free_value};

        on_small_stack(|| {
            let result = ToolCallResult::json_with_images(nested(MAX_JSON_DEPTH + 1), []);
            assert_eq!(
                result.content.to_text(),
                "(a JSON value nested deeper than 128 levels)"
            );
            if let UserModelContent::JsonWithImages(json) = result.content {
                free_value(json.into_parts().0);
            }
        });
    }
}
