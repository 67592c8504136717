//! [`ImageLimits`]: what images a model takes in one request, so that the ones it would
//! refuse are found before the request is sent.

use toolsmith_core::IMAGE_MEDIA_TYPES;

/// The default list of media types, one address for every `ImageLimits::none()`, so that
/// [`ImageLimits::is_none`] knows it without comparing strings.
static EVERY_MEDIA_TYPE: [&str; 4] = IMAGE_MEDIA_TYPES;

/// What images a model takes in one request: how large a side may be, how many images a
/// request may carry, and whether an animated one is taken. A provider refuses the whole
/// request when one image breaks a limit; an [`AgentSession`](crate::agent::AgentSession)
/// asks [`ChatModel::image_limits`](super::ChatModel::image_limits) before each request and
/// replaces the images these limits refuse by a note saying why
/// ([`AgentEvent::ImagesOverLimits`](crate::agent::AgentEvent::ImagesOverLimits)).
///
/// Only what an [`Image`](toolsmith_core::Image) knows is checked: an image whose header
/// could not be read ([`Image::dimensions`](toolsmith_core::Image::dimensions) is `None`)
/// passes the size limits.
///
/// ```
/// use toolsmith::harness::model::ImageLimits;
///
/// // Anthropic's: 8000 px a side, 2000 px when a request has more than 20 images, 100
/// // images a request.
/// let limits = ImageLimits::none()
///     .with_max_side(8000)
///     .with_max_side_beyond(20, 2000)
///     .with_max_images(100);
/// assert_eq!(limits.max_side, Some(8000));
/// assert!(limits.animated);
/// assert_eq!(ImageLimits::default(), ImageLimits::none());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct ImageLimits {
    /// The largest width or height, in pixels, the model takes (`None`: no limit).
    pub max_side: Option<u32>,
    /// The largest side the model takes when a request carries more images than a number:
    /// (that number, the side in pixels). Anthropic's "more than 20 images: 2000 px".
    pub max_side_beyond: Option<(usize, u32)>,
    /// The most images one request may carry (`None`: no limit).
    pub max_images: Option<usize>,
    /// The most bytes of images one request may carry, counted as the base64 text they are
    /// sent as (`None`: no limit): a provider's bound on a request's whole body, less room
    /// for its text.
    pub max_image_bytes: Option<usize>,
    /// Whether an animated image (more than one frame) is taken.
    pub animated: bool,
    /// The media types taken, of [`IMAGE_MEDIA_TYPES`] (all of them by default; Gemini
    /// takes no GIF). Read as an [`Image`](toolsmith_core::Image) reads a media type: in
    /// any case, spaces around ignored (`image/PNG` takes a PNG); a name of no type an
    /// image may have (`image/jpg`, `image/tiff`) takes nothing.
    pub media_types: &'static [&'static str],
}

impl ImageLimits {
    /// No limits: what a model that does not say takes (the default).
    #[must_use]
    pub const fn none() -> Self {
        Self {
            max_side: None,
            max_side_beyond: None,
            max_images: None,
            max_image_bytes: None,
            animated: true,
            media_types: &EVERY_MEDIA_TYPE,
        }
    }

    /// Anthropic's Messages API: "The maximal dimensions per image are 8000x8000 px. If you
    /// submit more than 20 images in one API request, this limit is reduced to 2000x2000
    /// px", and at most 100 images a request for a model of a 200k-token window (600 for
    /// the others): the lower count, which every model takes (docs.claude.com, "Vision",
    /// "General limits"). Its refusals: "At least one of the image dimensions exceed max
    /// allowed size: 8000 pixels" and "… for many-image requests: 2000 pixels". Animated
    /// images are not refused: Claude reads a GIF's first frame. A request is at most 32 MB
    /// (413 `request_too_large` past it; docs.claude.com, "Errors", "Request size limits"):
    /// its images at most 30,000,000 bytes of base64, 2 MB left for the rest. What
    /// [`AnthropicModel`](crate::model::http::AnthropicModel) reports unless told otherwise.
    #[must_use]
    pub const fn anthropic() -> Self {
        Self::none()
            .with_max_side(8000)
            .with_max_side_beyond(20, 2000)
            .with_max_images(100)
            .with_max_image_bytes(30_000_000)
    }

    /// OpenAI's Chat Completions and Responses APIs: PNG, JPEG, WebP and "non-animated
    /// GIF", "up to 500 individual images per request", "up to 50 MB total payload size per
    /// request" (its images at most 48,000,000 bytes of base64, 2 MB left for the rest),
    /// and no limit on pixels (a large image is scaled down) (platform.openai.com, "Images
    /// and vision", "Image input requirements"); an animated GIF is refused as
    /// `invalid_image_format`. What
    /// [`OpenAiChatModel`](crate::model::http::OpenAiChatModel) and
    /// [`OpenAiResponsesModel`](crate::model::http::OpenAiResponsesModel) report unless told
    /// otherwise.
    #[must_use]
    pub const fn openai() -> Self {
        Self::none()
            .with_max_images(500)
            .with_max_image_bytes(48_000_000)
            .with_animated(false)
    }

    /// Google's Gemini API: at most 900 images a prompt (Gemini 3 Pro; 3,000 for Gemini 2.5
    /// Pro and Flash: the lower, which every model takes), no limit on pixels ("larger
    /// images are scaled down"; cloud.google.com, Vertex AI "Image understanding",
    /// "Supported models"; the Gemini API serves the same models), and of the types an
    /// [`Image`](toolsmith_core::Image) may be, PNG, JPEG and WebP: "MIME type must be
    /// image/png, image/jpeg, image/webp, image/heic, or image/heif" (the API's own 400,
    /// as reported in EvanZhouDev/gemini-ai#3; ai.google.dev "Image understanding",
    /// "Supported image formats"), a GIF refused as "Unsupported MIME type: image/gif".
    /// Inline data is at most 100 MB a request, as base64 (raised from 20 MB; blog.google,
    /// "Increased file size limits and expanded inputs support in Gemini API", January
    /// 2026): its images at most 98,000,000 bytes, 2 MB left for the rest.
    /// What [`GeminiModel`](crate::model::http::GeminiModel) reports unless told otherwise.
    #[must_use]
    pub const fn gemini() -> Self {
        Self::none()
            .with_max_images(900)
            .with_max_image_bytes(98_000_000)
            .with_media_types(&["image/png", "image/jpeg", "image/webp"])
    }

    /// With the largest side, in pixels, of any image.
    #[must_use]
    pub const fn with_max_side(mut self, pixels: u32) -> Self {
        self.max_side = Some(pixels);
        self
    }

    /// With the largest side, in pixels, of an image in a request of more than `images`
    /// images.
    #[must_use]
    pub const fn with_max_side_beyond(mut self, images: usize, pixels: u32) -> Self {
        self.max_side_beyond = Some((images, pixels));
        self
    }

    /// With the most images a request may carry.
    #[must_use]
    pub const fn with_max_images(mut self, images: usize) -> Self {
        self.max_images = Some(images);
        self
    }

    /// With the most bytes of images (as base64) a request may carry.
    #[must_use]
    pub const fn with_max_image_bytes(mut self, bytes: usize) -> Self {
        self.max_image_bytes = Some(bytes);
        self
    }

    /// With whether animated images are taken.
    #[must_use]
    pub const fn with_animated(mut self, taken: bool) -> Self {
        self.animated = taken;
        self
    }

    /// With the media types taken (an image of another type is removed before sending).
    #[must_use]
    pub const fn with_media_types(mut self, media_types: &'static [&'static str]) -> Self {
        self.media_types = media_types;
        self
    }

    /// What both `self` and `other` take: the tighter of each limit (the smaller count and
    /// side, the smaller number of images past which the smaller side applies), an animated
    /// image only if both take one, the media types both take (of [`IMAGE_MEDIA_TYPES`], the only types an
    /// [`Image`](toolsmith_core::Image) has, in its order). What a
    /// request that may go to either model must keep to
    /// ([`FallbackModel`](super::FallbackModel)).
    ///
    /// Two "more than N images: S pixels" rules combine into the stricter of both: more than
    /// the smaller N, the smaller S. That refuses a little more than the two would (an image
    /// of a side between the two S in a request between the two N), never less.
    ///
    /// ```
    /// use toolsmith::harness::model::ImageLimits;
    ///
    /// let both = ImageLimits::anthropic().intersect(ImageLimits::gemini());
    /// assert_eq!(both.max_side, Some(8000));
    /// assert_eq!(both.max_images, Some(100));
    /// assert_eq!(both.media_types, ["image/png", "image/jpeg", "image/webp"]);
    /// assert!(!ImageLimits::anthropic().intersect(ImageLimits::openai()).animated);
    /// ```
    #[must_use]
    pub fn intersect(self, other: Self) -> Self {
        /// The smaller of two limits, `None` being none.
        fn tighter<T: Ord>(a: Option<T>, b: Option<T>) -> Option<T> {
            match (a, b) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            }
        }
        let max_side_beyond = match (self.max_side_beyond, other.max_side_beyond) {
            (Some((images, side)), Some((other_images, other_side))) => {
                Some((images.min(other_images), side.min(other_side)))
            }
            (one, another) => one.or(another),
        };
        Self {
            max_side: tighter(self.max_side, other.max_side),
            max_side_beyond,
            max_images: tighter(self.max_images, other.max_images),
            max_image_bytes: tighter(self.max_image_bytes, other.max_image_bytes),
            animated: self.animated && other.animated,
            media_types: media_types_of_both(self.media_types, other.media_types),
        }
    }

    /// Whether these limits refuse no image at all, so that a request need not be walked.
    /// Asked before every request: the media types are compared by address first (the
    /// default's list), by content only when the list is another.
    pub(crate) fn is_none(&self) -> bool {
        let Self {
            max_side,
            max_side_beyond,
            max_images,
            max_image_bytes,
            animated,
            media_types,
        } = *self;
        max_side.is_none()
            && max_side_beyond.is_none()
            && max_images.is_none()
            && max_image_bytes.is_none()
            && animated
            && (std::ptr::eq(media_types, EVERY_MEDIA_TYPE.as_slice())
                || mask_of(media_types) == EVERY_TYPE_MASK)
    }

    /// The media types taken, as an [`Image`](toolsmith_core::Image) names them (of
    /// [`IMAGE_MEDIA_TYPES`], in its order): [`media_types`](Self::media_types) read in any
    /// case. What an image's [`media_type`](toolsmith_core::Image::media_type) is looked
    /// up in, and a note names.
    pub(crate) fn taken_media_types(&self) -> &'static [&'static str] {
        if std::ptr::eq(self.media_types, EVERY_MEDIA_TYPE.as_slice()) {
            return self.media_types;
        }
        subset(mask_of(self.media_types))
    }
}

/// The bit mask of every type of [`IMAGE_MEDIA_TYPES`].
const EVERY_TYPE_MASK: usize = (1 << IMAGE_MEDIA_TYPES.len()) - 1;

/// The bit mask (bit `i`: `IMAGE_MEDIA_TYPES[i]`) of the types `media_types` names, in any
/// case and spaces around ignored, as an [`Image`](toolsmith_core::Image) reads a name.
fn mask_of(media_types: &[&str]) -> usize {
    IMAGE_MEDIA_TYPES
        .iter()
        .enumerate()
        .filter(|(_, known)| {
            media_types
                .iter()
                .any(|named| named.trim().eq_ignore_ascii_case(known))
        })
        .fold(0, |mask, (at, _)| mask | (1 << at))
}

/// The types of `mask` (see [`mask_of`]), in [`IMAGE_MEDIA_TYPES`]' order.
fn subset(mask: usize) -> &'static [&'static str] {
    let (types, len) = &MEDIA_TYPE_SUBSETS[mask];
    &types[..*len]
}

/// Every subset of [`IMAGE_MEDIA_TYPES`], in its order, indexed by the bit mask of the types
/// it holds (bit `i`: `IMAGE_MEDIA_TYPES[i]`), with its length: the intersection of two
/// lists of media types is one of these, so a `'static` list without allocating.
static MEDIA_TYPE_SUBSETS: [([&str; 4], usize); 16] = {
    let mut subsets = [([""; 4], 0); 16];
    let mut mask = 0;
    while mask < 16 {
        let mut at = 0;
        while at < 4 {
            if mask & (1 << at) != 0 {
                subsets[mask].0[subsets[mask].1] = IMAGE_MEDIA_TYPES[at];
                subsets[mask].1 += 1;
            }
            at += 1;
        }
        mask += 1;
    }
    subsets
};

/// The media types of [`IMAGE_MEDIA_TYPES`] both `one` and `other` list (in any case).
fn media_types_of_both(
    one: &'static [&'static str],
    other: &'static [&'static str],
) -> &'static [&'static str] {
    if std::ptr::eq(one, other) {
        return one;
    }
    subset(mask_of(one) & mask_of(other))
}

impl Default for ImageLimits {
    fn default() -> Self {
        Self::none()
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    #[test]
    fn media_types_are_read_in_any_case() {
        let shouting = ImageLimits::none().with_media_types(&["IMAGE/PNG", " image/Gif "]);
        assert_eq!(shouting.taken_media_types(), ["image/png", "image/gif"]);
        assert_eq!(
            shouting.intersect(ImageLimits::none()).media_types,
            ["image/png", "image/gif"]
        );
        assert_eq!(
            shouting.intersect(ImageLimits::gemini()).media_types,
            ["image/png"]
        );
        let every = ImageLimits::none().with_media_types(&[
            "image/WEBP",
            "image/GIF",
            "image/JPEG",
            "image/PNG",
        ]);
        assert!(every.is_none());
        // A name of no type an image may have takes nothing.
        let aliased = ImageLimits::none().with_media_types(&["image/jpg"]);
        assert!(aliased.taken_media_types().is_empty());
    }

    /// Any limits, their media types one of the subsets of [`IMAGE_MEDIA_TYPES`] in its
    /// order (as `intersect` gives them).
    fn any_limits() -> impl Strategy<Value = ImageLimits> {
        (
            proptest::option::of(0u32..10),
            proptest::option::of((0usize..10, 0u32..10)),
            proptest::option::of(0usize..10),
            proptest::option::of(0usize..10),
            any::<bool>(),
            0usize..16,
        )
            .prop_map(
                |(max_side, max_side_beyond, max_images, max_image_bytes, animated, types)| {
                    ImageLimits {
                        max_side,
                        max_side_beyond,
                        max_images,
                        max_image_bytes,
                        animated,
                        media_types: subset(types),
                    }
                },
            )
    }

    proptest! {
        /// `intersect` is what both take, whatever the order or grouping: commutative,
        /// associative, idempotent, `none()` its identity.
        #[test]
        fn intersect_is_a_meet(a in any_limits(), b in any_limits(), c in any_limits()) {
            prop_assert_eq!(a.intersect(b), b.intersect(a));
            prop_assert_eq!(a.intersect(b).intersect(c), a.intersect(b.intersect(c)));
            prop_assert_eq!(a.intersect(a), a);
            prop_assert_eq!(a.intersect(ImageLimits::none()), a);
            prop_assert_eq!(ImageLimits::none().intersect(a), a);
        }
    }

    #[test]
    fn only_limits_that_refuse_nothing_are_none() {
        assert!(ImageLimits::none().is_none());
        assert!(ImageLimits::default().is_none());
        // Every type taken, listed otherwise: still none.
        let all = ImageLimits::none().with_media_types(&[
            "image/webp",
            "image/gif",
            "image/jpeg",
            "image/png",
        ]);
        assert!(all.is_none());
        assert!(
            !ImageLimits::none()
                .with_media_types(&["image/png"])
                .is_none()
        );
        assert!(!ImageLimits::none().with_animated(false).is_none());
        assert!(!ImageLimits::none().with_max_side(8000).is_none());
        assert!(!ImageLimits::none().with_max_side_beyond(20, 2000).is_none());
        assert!(!ImageLimits::none().with_max_images(10).is_none());
        assert!(!ImageLimits::none().with_max_image_bytes(1).is_none());
        for provider in [
            ImageLimits::anthropic(),
            ImageLimits::openai(),
            ImageLimits::gemini(),
        ] {
            assert!(!provider.is_none(), "{provider:?}");
        }
    }

    #[test]
    fn limits_of_both_are_the_tighter_of_each() {
        let one = ImageLimits::none()
            .with_max_side(8000)
            .with_max_side_beyond(20, 2000)
            .with_max_images(100)
            .with_media_types(&["image/gif", "image/png", "image/webp"]);
        let other = ImageLimits::none()
            .with_max_side_beyond(50, 1000)
            .with_max_images(500)
            .with_max_image_bytes(48)
            .with_animated(false)
            .with_media_types(&["image/webp", "image/jpeg", "image/png"]);
        let expected = ImageLimits::none()
            .with_max_side(8000)
            .with_max_side_beyond(20, 1000)
            .with_max_images(100)
            .with_max_image_bytes(48)
            .with_animated(false);
        for both in [one.intersect(other), other.intersect(one)] {
            assert_eq!(both.media_types, ["image/png", "image/webp"]);
            assert_eq!(
                both.with_media_types(expected.media_types),
                expected,
                "{both:?}"
            );
        }
        assert!(ImageLimits::none().intersect(ImageLimits::none()).is_none());
        let nothing_in_common = ImageLimits::none()
            .with_media_types(&["image/gif"])
            .intersect(ImageLimits::gemini());
        assert!(nothing_in_common.media_types.is_empty());
    }
}
