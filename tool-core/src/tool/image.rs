//! [`Image`]: a picture given to the model (by a tool's result or a user's message), as
//! base64 text of one of the types every provider takes.

use std::fmt;
use std::sync::Arc;

use base64::Engine as _;
use base64::prelude::BASE64_STANDARD;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::image_header::{self, ImageHeader};

/// The longest base64 text an [`Image`] holds: 5 MiB.
///
/// Anthropic refuses an image over 5 MB (docs.claude.com, "Vision"), the lowest cap of the
/// providers (OpenAI: 20 MB an image and 50 MB of images a request, platform.openai.com
/// "Images and vision"; Gemini: 20 MB a request of inline data). The bound is on the base64
/// text, the larger of the two measures, so that an image within it is within the cap
/// whichever a provider applies. It is checked when an image is made (and read back from a transcript): a tool
/// or a caller that makes one too large learns it there, naming the image, rather than
/// from a whole request refused later with the provider's message.
pub const MAX_IMAGE_BASE64_LEN: usize = 5 * 1024 * 1024;

/// The media types an [`Image`] may have: those every provider's API takes (Anthropic,
/// OpenAI and Gemini all take PNG, JPEG, GIF and WebP; OpenAI reads only a GIF's first
/// frame's worth: "non-animated GIF").
pub const IMAGE_MEDIA_TYPES: [&str; 4] = ["image/png", "image/jpeg", "image/gif", "image/webp"];

/// The types of [`IMAGE_MEDIA_TYPES`], each with how its files begin.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Kind {
    Png,
    Jpeg,
    Gif,
    Webp,
}

impl Kind {
    const ALL: [Kind; 4] = [Self::Png, Self::Jpeg, Self::Gif, Self::Webp];

    const fn media_type(self) -> &'static str {
        match self {
            Self::Png => "image/png",
            Self::Jpeg => "image/jpeg",
            Self::Gif => "image/gif",
            Self::Webp => "image/webp",
        }
    }

    /// What the header of `bytes`, a file of this kind, says of its size and frames.
    fn header(self, bytes: &[u8]) -> Option<ImageHeader> {
        match self {
            Self::Png => image_header::png(bytes),
            Self::Jpeg => image_header::jpeg(bytes),
            Self::Gif => image_header::gif(bytes),
            Self::Webp => image_header::webp(bytes),
        }
    }

    /// The kind named by `media_type` (any case, surrounding spaces ignored).
    fn named(media_type: &str) -> Option<Self> {
        let media_type = media_type.trim();
        Self::ALL
            .into_iter()
            .find(|kind| kind.media_type().eq_ignore_ascii_case(media_type))
    }

    /// The kind whose signature `bytes` begin with. The providers check the bytes against
    /// the declared type (Anthropic refuses a mismatch), so it is checked here first.
    fn of_bytes(bytes: &[u8]) -> Option<Self> {
        if bytes.starts_with(b"\x89PNG\r\n\x1a\n") {
            Some(Self::Png)
        } else if bytes.starts_with(&[0xFF, 0xD8, 0xFF]) {
            Some(Self::Jpeg)
        } else if bytes.starts_with(b"GIF87a") || bytes.starts_with(b"GIF89a") {
            Some(Self::Gif)
        } else if bytes.len() >= 12 && bytes.starts_with(b"RIFF") && &bytes[8..12] == b"WEBP" {
            Some(Self::Webp)
        } else {
            None
        }
    }
}

/// Why an [`Image`] could not be made: each names the image's media type and what is
/// wrong.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ImageError {
    /// The media type is not one of [`IMAGE_MEDIA_TYPES`].
    #[error(
        "unsupported image media type '{media_type}': an image must be image/png, image/jpeg, image/gif or image/webp"
    )]
    UnsupportedMediaType {
        /// The media type given.
        media_type: String,
    },
    /// The data is not standard, padded base64.
    #[error("the {media_type} image's data is not valid base64: {reason}")]
    InvalidBase64 {
        /// The media type given.
        media_type: &'static str,
        /// Where and how the base64 is wrong.
        reason: String,
    },
    /// The data is longer than [`MAX_IMAGE_BASE64_LEN`] as base64.
    #[error(
        "the {media_type} image is {len} bytes as base64, more than the {limit} an image may be (Anthropic's cap of 5 MB an image); make it smaller"
    )]
    TooLarge {
        /// The media type given.
        media_type: &'static str,
        /// The length of its base64 text.
        len: usize,
        /// [`MAX_IMAGE_BASE64_LEN`].
        limit: usize,
    },
    /// The bytes are not an image of the type given.
    #[error("the image's data is not {media_type}: its bytes begin as {found}")]
    NotOfType {
        /// The media type given.
        media_type: &'static str,
        /// What the bytes begin as: another image type, or "no supported image type".
        found: &'static str,
    },
}

/// A picture for the model: PNG, JPEG, GIF or WebP, held as base64 text (shared when
/// cloned: a conversation is copied on every run).
///
/// Every image was checked when made: a supported type, valid base64, bytes of that type,
/// and at most [`MAX_IMAGE_BASE64_LEN`] of base64. Its header is read then too: its size in
/// pixels ([`dimensions`](Self::dimensions)) and whether it is animated
/// ([`is_animated`](Self::is_animated)), which a model's limits on images are checked
/// against before a request is sent. A header that cannot be read (a file cut short, a
/// made-up one of a test) leaves the size unknown; the image is still taken, as its
/// signature is the type's. Serialized as `{"media_type": "image/png", "data":
/// "<base64>"}`, and checked (its header read) again when read.
///
/// ```
/// use toolsmith::{Image, ImageError};
///
/// let png = b"\x89PNG\r\n\x1a\n(the rest of the file)";
/// let image = Image::from_bytes("image/png", png).unwrap();
/// assert_eq!(image.media_type(), "image/png");
/// assert_eq!(Image::from_base64("image/png", image.data()).unwrap(), image);
/// assert!(image.data_url().starts_with("data:image/png;base64,iVBORw0KGgo"));
///
/// let refused = Image::from_bytes("image/tiff", png).unwrap_err();
/// assert!(matches!(refused, ImageError::UnsupportedMediaType { .. }));
/// assert!(Image::from_base64("image/png", "not base64!").is_err());
/// ```
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Image {
    kind: Kind,
    data: Arc<str>,
    /// Read from the bytes when made: equal data, equal header.
    header: Option<ImageHeader>,
}

impl Image {
    /// An image of `media_type` from its file's bytes, encoded as base64.
    pub fn from_bytes(media_type: &str, bytes: &[u8]) -> Result<Self, ImageError> {
        let kind = named(media_type)?;
        let len = base64::encoded_len(bytes.len(), true).unwrap_or(usize::MAX);
        check_len(kind, len)?;
        check_kind(kind, bytes)?;
        Ok(Self {
            kind,
            data: Arc::from(BASE64_STANDARD.encode(bytes)),
            header: kind.header(bytes),
        })
    }

    /// An image from its file's bytes, of the type their signature names (a file read from
    /// disk, whose name may not say).
    pub fn detect(bytes: &[u8]) -> Result<Self, ImageError> {
        let kind = Kind::of_bytes(bytes).ok_or_else(|| ImageError::UnsupportedMediaType {
            media_type: "(unknown: the bytes begin as no supported image type)".to_owned(),
        })?;
        Self::from_bytes(kind.media_type(), bytes)
    }

    /// The media type `bytes` begin as by their signature, when it is one an image may have
    /// (`image/png`, `image/jpeg`, `image/gif`, `image/webp`): a file's type told without
    /// encoding it, before deciding what to do with it.
    ///
    /// ```
    /// use toolsmith::Image;
    ///
    /// assert_eq!(Image::media_type_of(b"GIF89a\x01\0\x01\0"), Some("image/gif"));
    /// assert_eq!(Image::media_type_of(b"%PDF-1.7"), None);
    /// ```
    pub fn media_type_of(bytes: &[u8]) -> Option<&'static str> {
        Kind::of_bytes(bytes).map(Kind::media_type)
    }

    /// An image of `media_type` from base64 text (standard alphabet, padded, no line
    /// breaks), checked to decode into an image of that type.
    pub fn from_base64(media_type: &str, data: impl Into<Arc<str>>) -> Result<Self, ImageError> {
        let kind = named(media_type)?;
        let data = data.into();
        check_len(kind, data.len())?;
        let bytes =
            BASE64_STANDARD
                .decode(data.as_bytes())
                .map_err(|err| ImageError::InvalidBase64 {
                    media_type: kind.media_type(),
                    reason: err.to_string(),
                })?;
        check_kind(kind, &bytes)?;
        let header = kind.header(&bytes);
        Ok(Self { kind, data, header })
    }

    /// The media type: `image/png`, `image/jpeg`, `image/gif` or `image/webp`.
    pub fn media_type(&self) -> &'static str {
        self.kind.media_type()
    }

    /// The image's width and height in pixels, as its header says (a PNG's IHDR, a GIF's
    /// logical screen, a JPEG's start of frame, a WebP's `VP8X`, `VP8L` or `VP8 ` chunk):
    /// `None` when the header could not be read.
    ///
    /// ```
    /// use toolsmith::Image;
    ///
    /// // A GIF's logical screen: 640 x 480, one image, the trailer.
    /// let mut gif = b"GIF89a\x80\x02\xe0\x01\0\0\0".to_vec();
    /// gif.extend_from_slice(b"\x2c\0\0\0\0\x01\0\x01\0\0\x02\x01\0\0\x3b");
    /// let image = Image::from_bytes("image/gif", &gif).unwrap();
    /// assert_eq!(image.dimensions(), Some((640, 480)));
    /// assert!(!image.is_animated());
    /// // Only a signature: taken, its size unknown.
    /// assert_eq!(Image::from_bytes("image/gif", b"GIF89a").unwrap().dimensions(), None);
    /// ```
    pub fn dimensions(&self) -> Option<(u32, u32)> {
        self.header.map(|header| (header.width, header.height))
    }

    /// Whether the image has more than one frame: a GIF of more than one image, an APNG
    /// whose `acTL` counts more than one frame, a WebP whose `VP8X` flags animation (a
    /// JPEG never is). `false` when the header could not be read.
    pub fn is_animated(&self) -> bool {
        self.header.is_some_and(|header| header.animated)
    }

    /// The image as base64 text (standard alphabet, padded).
    pub fn data(&self) -> &str {
        &self.data
    }

    /// The image as a `data:` URL (`data:image/png;base64,…`), as OpenAI's APIs take one.
    pub fn data_url(&self) -> String {
        format!("data:{};base64,{}", self.media_type(), self.data)
    }

    /// The size of the image's file, in bytes (its base64 text decoded).
    pub fn byte_len(&self) -> usize {
        let padding = self.data.bytes().rev().take_while(|&b| b == b'=').count();
        (self.data.len() / 4 * 3).saturating_sub(padding)
    }

    /// A short stand-in for the image where only text can go: `[image: image/png, 1234
    /// bytes]`.
    pub fn placeholder(&self) -> String {
        format!("[image: {}, {} bytes]", self.media_type(), self.byte_len())
    }

    /// [`placeholder`](Self::placeholder) with a note of where the image is, or why it is
    /// not shown: `[image: image/png, 1234 bytes; {note}]`.
    pub(crate) fn placeholder_noting(&self, note: &str) -> String {
        format!(
            "[image: {}, {} bytes; {note}]",
            self.media_type(),
            self.byte_len()
        )
    }
}

fn named(media_type: &str) -> Result<Kind, ImageError> {
    Kind::named(media_type).ok_or_else(|| ImageError::UnsupportedMediaType {
        media_type: media_type.to_owned(),
    })
}

fn check_len(kind: Kind, len: usize) -> Result<(), ImageError> {
    if len > MAX_IMAGE_BASE64_LEN {
        return Err(ImageError::TooLarge {
            media_type: kind.media_type(),
            len,
            limit: MAX_IMAGE_BASE64_LEN,
        });
    }
    Ok(())
}

fn check_kind(kind: Kind, bytes: &[u8]) -> Result<(), ImageError> {
    match Kind::of_bytes(bytes) {
        Some(found) if found == kind => Ok(()),
        found => Err(ImageError::NotOfType {
            media_type: kind.media_type(),
            found: found.map_or("no supported image type", Kind::media_type),
        }),
    }
}

impl fmt::Debug for Image {
    /// The type and size, not the data (megabytes of base64 in a log help no one).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut debug = f.debug_struct("Image");
        debug
            .field("media_type", &self.media_type())
            .field("bytes", &self.byte_len());
        if let Some((width, height)) = self.dimensions() {
            debug.field("pixels", &format_args!("{width}x{height}"));
        }
        if self.is_animated() {
            debug.field("animated", &true);
        }
        debug.finish()
    }
}

/// The serialized form of an [`Image`].
#[derive(Serialize)]
struct Written<'a> {
    media_type: &'a str,
    data: &'a str,
}

/// The serialized form read back (owned: a reader may not lend its text).
#[derive(Deserialize)]
struct Read {
    media_type: String,
    data: String,
}

impl Serialize for Image {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        Written {
            media_type: self.media_type(),
            data: &self.data,
        }
        .serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for Image {
    /// Checked as [`Image::from_base64`] checks: a transcript edited by hand (or written by
    /// another program) cannot carry an image a provider would refuse.
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let read = Read::deserialize(deserializer)?;
        Self::from_base64(&read.media_type, read.data).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PNG: &[u8] = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR";

    #[test]
    fn every_supported_type_is_recognised_by_its_bytes() {
        let files: [(&str, &[u8]); 4] = [
            ("image/png", PNG),
            ("image/jpeg", b"\xFF\xD8\xFF\xE0\0\x10JFIF"),
            ("image/gif", b"GIF89a\x01\0\x01\0"),
            ("image/webp", b"RIFF\x24\0\0\0WEBPVP8 "),
        ];
        for (media_type, bytes) in files {
            let image = Image::from_bytes(media_type, bytes).unwrap();
            assert_eq!(image.media_type(), media_type);
            assert_eq!(image.byte_len(), bytes.len(), "{media_type}");
            assert_eq!(Image::detect(bytes).unwrap(), image);
            let back = Image::from_base64(&media_type.to_uppercase(), image.data()).unwrap();
            assert_eq!(back, image);
        }
    }

    #[test]
    fn bad_images_are_refused_naming_what_is_wrong() {
        let unsupported = Image::from_bytes("image/bmp", PNG).unwrap_err();
        assert!(
            unsupported.to_string().contains("'image/bmp'"),
            "{unsupported}"
        );

        let bad = Image::from_base64("image/png", "iVBORw0K$$$$").unwrap_err();
        assert!(matches!(bad, ImageError::InvalidBase64 { .. }), "{bad:?}");
        assert!(
            bad.to_string()
                .contains("image/png image's data is not valid base64")
        );

        let jpeg_as_png = Image::from_bytes("image/png", b"\xFF\xD8\xFF\xE0").unwrap_err();
        assert_eq!(
            jpeg_as_png.to_string(),
            "the image's data is not image/png: its bytes begin as image/jpeg"
        );
        assert!(Image::detect(b"plain text").is_err());
    }

    #[test]
    fn an_image_past_the_limit_is_refused_when_made() {
        // The largest file whose base64 fits, and one byte more.
        let fits = MAX_IMAGE_BASE64_LEN / 4 * 3;
        let mut bytes = PNG.to_vec();
        bytes.resize(fits, 0);
        let image = Image::from_bytes("image/png", &bytes).unwrap();
        assert_eq!(image.data().len(), MAX_IMAGE_BASE64_LEN);
        bytes.push(0);
        let refused = Image::from_bytes("image/png", &bytes).unwrap_err();
        assert!(
            matches!(refused, ImageError::TooLarge { .. }),
            "{refused:?}"
        );
        assert!(refused.to_string().contains("5 MB"), "{refused}");
        let text = format!("{}AAAA", image.data());
        let refused = Image::from_base64("image/png", text).unwrap_err();
        assert!(
            matches!(refused, ImageError::TooLarge { len, .. } if len == MAX_IMAGE_BASE64_LEN + 4)
        );
    }

    #[test]
    fn images_read_back_are_checked() {
        let image = Image::from_bytes("image/png", PNG).unwrap();
        let written = serde_json::to_value(&image).unwrap();
        assert_eq!(written["media_type"], "image/png");
        assert_eq!(serde_json::from_value::<Image>(written).unwrap(), image);
        let edited = serde_json::json!({"media_type": "image/png", "data": "AAAA"});
        let err = serde_json::from_value::<Image>(edited).unwrap_err();
        assert!(err.to_string().contains("not image/png"), "{err}");
        assert_eq!(
            format!("{image:?}"),
            r#"Image { media_type: "image/png", bytes: 16 }"#
        );
    }
}
