//! What OpenAI's three APIs (Chat Completions, Responses, embeddings) share as one account:
//! the official base URL, the environment variables that configure it, and how the key is
//! sent.

use super::builder::Endpoint;
use super::context_overflow::OverflowShape;
use crate::model::ImageLimits;

/// The images Chat Completions and Responses take: PNG, JPEG, WebP and "non-animated GIF",
/// "up to 500 individual images per request", and no limit on pixels (a large image is
/// scaled down) (platform.openai.com, "Images and vision", "Image input requirements").
/// An animated GIF is refused as `invalid_image_format` (see `image_refusal.rs`).
pub(super) const IMAGE_LIMITS: ImageLimits = ImageLimits::none()
    .with_max_images(500)
    .with_animated(false);

/// The official endpoint of an OpenAI API that errors call `name`, configured from
/// `OPENAI_API_KEY` and `OPENAI_BASE_URL`.
pub(super) const fn endpoint(name: &'static str) -> Endpoint {
    Endpoint {
        name,
        default_base_url: "https://api.openai.com/v1",
        key_vars: &["OPENAI_API_KEY"],
        base_url_var: "OPENAI_BASE_URL",
        overflow: OverflowShape::OpenAi,
    }
}

/// The header that carries `key`: `Authorization: Bearer {key}`.
pub(super) fn bearer(key: &str) -> Vec<(String, String)> {
    vec![("authorization".to_owned(), format!("Bearer {key}"))]
}
