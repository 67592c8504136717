//! [`ContentPart`]: one piece of content that mixes text and images.

use serde::{Deserialize, Serialize};

use crate::Image;

/// One piece of a result (or a message) that mixes text and images, in order.
///
/// Serialized as `{"type": "text", "text": "…"}` or
/// `{"type": "image", "media_type": "image/png", "data": "<base64>"}`.
///
/// ```
/// use toolsmith::{ContentPart, Image};
///
/// let image = Image::from_bytes("image/png", b"\x89PNG\r\n\x1a\n").unwrap();
/// let parts = [ContentPart::text("The page:"), ContentPart::from(image)];
/// assert_eq!(parts[0].to_text(), "The page:");
/// assert_eq!(parts[1].to_text(), "[image: image/png, 8 bytes]");
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
#[non_exhaustive]
pub enum ContentPart {
    /// Text.
    Text {
        /// The text.
        text: String,
    },
    /// An image.
    Image(Image),
}

impl ContentPart {
    /// A text part.
    pub fn text(text: impl Into<String>) -> Self {
        Self::Text { text: text.into() }
    }

    /// The part as text: the text, or the image's [placeholder](Image::placeholder).
    pub fn to_text(&self) -> String {
        match self {
            Self::Text { text } => text.clone(),
            Self::Image(image) => image.placeholder(),
        }
    }

    /// The image, for an image part.
    pub fn as_image(&self) -> Option<&Image> {
        match self {
            Self::Image(image) => Some(image),
            Self::Text { .. } => None,
        }
    }
}

impl From<Image> for ContentPart {
    fn from(image: Image) -> Self {
        Self::Image(image)
    }
}

impl From<String> for ContentPart {
    fn from(text: String) -> Self {
        Self::text(text)
    }
}

impl From<&str> for ContentPart {
    fn from(text: &str) -> Self {
        Self::text(text)
    }
}

/// `parts` as one text, a part a line, each image written by `placeholder` (its
/// [`placeholder`](Image::placeholder), or one saying where a format put it).
pub(crate) fn joined_text(parts: &[ContentPart], placeholder: impl Fn(&Image) -> String) -> String {
    parts
        .iter()
        .map(|part| match part {
            ContentPart::Image(image) => placeholder(image),
            other => other.to_text(),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The images among `parts`, in order.
pub(crate) fn images_of(parts: &[ContentPart]) -> impl Iterator<Item = &Image> {
    parts.iter().filter_map(ContentPart::as_image)
}
