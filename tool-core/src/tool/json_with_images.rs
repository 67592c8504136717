//! [`JsonWithImages`]: structured content with images beside it.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::ContentPart;

/// Structured content and images beside it (a page's `{url, title}` and its screenshot):
/// what [`UserModelContent::JsonWithImages`](crate::UserModelContent::JsonWithImages)
/// holds. Made by [`ToolCallResult::json_with_images`](crate::ToolCallResult::json_with_images)
/// or [`new`](Self::new), read by [`value`](Self::value) and [`parts`](Self::parts), taken
/// apart by [`into_parts`](Self::into_parts).
///
/// Serialized as `{"value": …, "parts": [<ContentPart>, …]}`.
///
/// ```
/// use serde_json::json;
/// use toolsmith::{ContentPart, Image, JsonWithImages, UserModelContent};
///
/// let shot = Image::from_bytes("image/png", b"\x89PNG\r\n\x1a\n").unwrap();
/// let page = JsonWithImages::new(json!({"title": "Example Domain"}), [shot.clone().into()]);
/// let content = UserModelContent::JsonWithImages(page);
/// if let UserModelContent::JsonWithImages(page) = &content {
///     assert_eq!(page.value()["title"], "Example Domain");
///     assert_eq!(page.parts(), [ContentPart::Image(shot)]);
/// }
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JsonWithImages {
    // Boxed, so that every result is not made larger by this kind (a result is moved several
    // times on each call's way back; docs/PERFORMANCE.md, the dispatch row's session 40).
    value: Box<Value>,
    parts: Vec<ContentPart>,
}

impl JsonWithImages {
    /// `value` with `parts` beside it, in order.
    pub fn new(value: Value, parts: impl IntoIterator<Item = ContentPart>) -> Self {
        Self {
            value: Box::new(value),
            parts: parts.into_iter().collect(),
        }
    }

    /// The structured content, checked against the tool's `returns` schema as a
    /// [`Json`](crate::UserModelContent::Json) result's is.
    pub fn value(&self) -> &Value {
        &self.value
    }

    /// The structured content, to change in place.
    pub fn value_mut(&mut self) -> &mut Value {
        &mut self.value
    }

    /// The images, in order, and text among them: a text part stands where an image could
    /// not be given (one an MCP server sent that was unreadable, one a session took out for
    /// the model), or is text an MCP server gave beside the value (a caption).
    pub fn parts(&self) -> &[ContentPart] {
        &self.parts
    }

    /// The parts, to change in place (an image replaced by a text saying why it is not
    /// shown).
    pub fn parts_mut(&mut self) -> &mut [ContentPart] {
        &mut self.parts
    }

    /// The value and the parts.
    pub fn into_parts(self) -> (Value, Vec<ContentPart>) {
        (*self.value, self.parts)
    }
}
