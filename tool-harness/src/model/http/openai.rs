//! What OpenAI's three APIs (Chat Completions, Responses, embeddings) share as one account:
//! the official base URL, the environment variables that configure it, and how the key is
//! sent.

use super::builder::Endpoint;
use super::context_overflow::OverflowShape;

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
