//! An error an API reports inside a successful (`200`) answer: an event of its stream, or a
//! Responses answer whose `status` is `failed`. The answer's status says nothing of it; the
//! error's numeric `code`, or the name of its `code` or `type`, says which HTTP status the
//! API gives the same error unstreamed, so that it becomes the same [`ModelError`] (and
//! [`ModelError::is_transient`] is as right for it).

use reqwest::StatusCode;
use serde_json::Value;

use super::super::context_overflow::{ErrorSigns, OverflowShape};
use super::super::refusal::Refusal;
use super::super::transport::{MAX_QUOTED_CHARS, error_for_status, quote};
use crate::model::ModelError;

/// An error the API reported after its `200`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ReportedError {
    /// The status the error's code or type means; the answer's own `200` when it names
    /// none this client knows.
    pub(crate) status: StatusCode,
    /// The API's message, cut as an error status's message is.
    pub(crate) message: String,
    /// Whether it says the account's quota is spent (OpenAI's `insufficient_quota`): a
    /// rate limit no wait ends.
    pub(crate) quota_spent: bool,
    /// The error's `code`, when it is text.
    pub(crate) code: Option<String>,
    /// The error's `type`, else its `status` (Gemini).
    pub(crate) kind: Option<String>,
}

/// The HTTP status each documented error name means.
///
/// Anthropic's error types (<https://docs.claude.com/en/api/errors>); OpenAI's (the
/// Responses `error.code` of `response.failed` and `error` events, and the `type` or `code`
/// of Chat Completions errors, where the image codes name a bad input); the rest of the
/// servers that stream OpenAI's format (llama.cpp, vLLM) and Gemini give a numeric `code`,
/// read first.
const STATUS_OF_NAME: &[(&str, u16)] = &[
    // Anthropic.
    ("invalid_request_error", 400),
    ("authentication_error", 401),
    ("billing_error", 402),
    ("permission_error", 403),
    ("not_found_error", 404),
    ("conflict_error", 409),
    ("request_too_large", 413),
    ("rate_limit_error", 429),
    ("api_error", 500),
    ("timeout_error", 504),
    ("overloaded_error", 529),
    // OpenAI.
    ("invalid_prompt", 400),
    ("rate_limit_exceeded", 429),
    ("too_many_requests", 429),
    ("insufficient_quota", 429),
    ("server_error", 500),
    // The request is longer than the model's context window: the code of the 400 it
    // answers unstreamed, and of a Responses stream's `response.failed`.
    ("context_length_exceeded", 400),
    // A time-out on the server's side, searching a vector store.
    ("vector_store_timeout", 504),
    ("invalid_image", 400),
    ("invalid_image_format", 400),
    ("invalid_base64_image", 400),
    ("invalid_image_url", 400),
    ("image_too_large", 400),
    ("image_too_small", 400),
    ("image_parse_error", 400),
    ("image_content_policy_violation", 400),
    ("invalid_image_mode", 400),
    ("image_file_too_large", 400),
    ("unsupported_image_media_type", 400),
    ("empty_image_file", 400),
    ("failed_to_download_image", 400),
    ("image_file_not_found", 400),
];

impl ReportedError {
    /// The error an event reports, if it reports one: an event named `error` (Anthropic,
    /// Responses, llama.cpp), or whose data's `type` is `error`, or whose data carries an
    /// `error` (OpenAI Chat, Gemini; some servers send `"error": null` in every chunk,
    /// which is none). The error is the data's `error`, else the data itself (a Responses
    /// `error` event writes its `code` and `message` beside its `type`).
    pub(crate) fn in_event(name: Option<&str>, data: &Value) -> Option<Self> {
        let error = data.get("error").filter(|error| !error.is_null());
        let named =
            name == Some("error") || data.get("type").and_then(Value::as_str) == Some("error");
        (named || error.is_some()).then(|| Self::from_error(error.unwrap_or(data)))
    }

    /// The error `error` describes: its message (`message`, or `error` itself as text: a
    /// string as it is, anything else as JSON) and the status its code or type means.
    pub(crate) fn from_error(error: &Value) -> Self {
        let message = match error.get("message").or(Some(error)).and_then(Value::as_str) {
            Some(message) => quote(message, MAX_QUOTED_CHARS),
            None => quote(&error.to_string(), MAX_QUOTED_CHARS),
        };
        let status = status_of(error).unwrap_or(StatusCode::OK);
        let signs = ErrorSigns::of(status, error);
        Self {
            status,
            message,
            quota_spent: [signs.code, signs.kind].contains(&Some("insufficient_quota")),
            code: signs.code.map(str::to_owned),
            kind: signs.kind.map(str::to_owned),
        }
    }

    /// The error of a Responses `response` whose `status` is `failed`: its `error`, or,
    /// when it gives none, a failure with the answer's `200`.
    pub(crate) fn of_failed_response(response: &Value) -> Self {
        match response.get("error").filter(|error| !error.is_null()) {
            Some(error) => Self::from_error(error),
            None => Self {
                status: StatusCode::OK,
                message: "the response failed without a message".to_owned(),
                quota_spent: false,
                code: None,
                kind: None,
            },
        }
    }

    /// The [`ModelError`] an error status of this status and message is, from `provider`,
    /// whose API says in `overflow`'s words that a request is too long or that it cannot
    /// read an image: [`ContextTooLong`](ModelError::ContextTooLong) or
    /// [`ImageRefused`](ModelError::ImageRefused) when it says so, else 401 and 403
    /// [`Auth`](ModelError::Auth), 429 [`RateLimited`](ModelError::RateLimited) (unless the
    /// quota is spent), any other [`Api`](ModelError::Api).
    pub(crate) fn into_error(self, provider: &str, overflow: OverflowShape) -> ModelError {
        if let Some(refusal) = self.refusal(overflow) {
            return refusal.into_error(provider.to_owned(), self.status.as_u16(), self.message);
        }
        error_for_status(
            provider.to_owned(),
            self.status,
            None,
            self.message,
            self.quota_spent,
        )
    }

    /// What it says, in `overflow`'s words, of the request itself: longer than the model's
    /// context window, or with an image it cannot read (not retried then, whatever its
    /// status).
    pub(crate) fn refusal(&self, overflow: OverflowShape) -> Option<Refusal> {
        Refusal::of(overflow, &self.signs())
    }

    /// What it says about itself.
    fn signs(&self) -> ErrorSigns<'_> {
        ErrorSigns {
            status: self.status,
            code: self.code.as_deref(),
            kind: self.kind.as_deref(),
            message: &self.message,
        }
    }
}

/// The error status `error` names: its numeric `code` (also written as text) when that is
/// an error status, else the status its `code` or `type` names.
fn status_of(error: &Value) -> Option<StatusCode> {
    let code = error.get("code");
    let numeric = code
        .and_then(Value::as_u64)
        .or_else(|| code.and_then(Value::as_str)?.trim().parse().ok())
        .filter(|code| (400..=599).contains(code))
        .and_then(|code| StatusCode::from_u16(u16::try_from(code).ok()?).ok());
    if numeric.is_some() {
        return numeric;
    }
    ["code", "type"].iter().find_map(|key| {
        let name = error.get(key)?.as_str()?;
        let (_, status) = STATUS_OF_NAME.iter().find(|(known, _)| *known == name)?;
        StatusCode::from_u16(*status).ok()
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn status(error: Value) -> u16 {
        ReportedError::from_error(&error).status.as_u16()
    }

    #[test]
    fn the_status_is_the_one_the_error_names() {
        // Anthropic's documented types.
        for (kind, expected) in [
            ("invalid_request_error", 400),
            ("authentication_error", 401),
            ("permission_error", 403),
            ("not_found_error", 404),
            ("request_too_large", 413),
            ("rate_limit_error", 429),
            ("api_error", 500),
            ("timeout_error", 504),
            ("overloaded_error", 529),
        ] {
            let error = json!({"type": kind, "message": "m"});
            assert_eq!(status(error), expected, "{kind}");
        }
        // A numeric code (llama.cpp, vLLM, Gemini) wins over a type.
        let llama = json!({"code": 503, "message": "Loading model", "type": "unavailable_error"});
        assert_eq!(status(llama), 503);
        let vllm = json!({"object": "error", "message": "m", "type": "BadRequestError",
            "param": null, "code": 400});
        assert_eq!(status(vllm), 400);
        assert_eq!(status(json!({"code": "502", "message": "m"})), 502);
        // OpenAI's codes; the code wins over the type.
        let responses = json!({"code": "rate_limit_exceeded", "message": "m"});
        assert_eq!(status(responses), 429);
        let chat = json!({"type": "invalid_request_error", "code": "server_error"});
        assert_eq!(status(chat), 500);
        assert_eq!(status(json!({"code": "invalid_image_url"})), 400);
        // Nothing known, or a code that is no error status: the answer's 200.
        for unknown in [
            json!({"type": "mystery_error", "message": "m"}),
            json!({"code": 7, "message": "m"}),
            json!({"code": 200}),
            json!("the context is full"),
            json!({"type": "error"}),
        ] {
            assert_eq!(status(unknown.clone()), 200, "{unknown}");
        }
    }

    #[test]
    fn each_status_becomes_the_error_an_error_status_is() {
        let error = |value: Value| {
            ReportedError::from_error(&value).into_error("anthropic", OverflowShape::Anthropic)
        };
        assert!(matches!(
            error(json!({"type": "overloaded_error", "message": "Overloaded"})),
            ModelError::Api { status: 529, ref message, .. } if message == "Overloaded"
        ));
        assert!(matches!(
            error(json!({"type": "rate_limit_error", "message": "slow"})),
            ModelError::RateLimited { retry_after: None, ref message, .. } if message == "slow"
        ));
        assert!(matches!(
            error(json!({"type": "authentication_error", "message": "key"})),
            ModelError::Auth { status: 401, .. }
        ));
        // A spent quota is no rate limit: no wait ends it.
        let spent = error(json!({"code": "insufficient_quota", "message": "quota"}));
        assert!(
            matches!(spent, ModelError::Api { status: 429, .. }),
            "{spent:?}"
        );
        assert!(!spent.is_transient());
        assert!(error(json!({"type": "overloaded_error"})).is_transient());
        assert!(error(json!({"code": "rate_limit_exceeded"})).is_transient());
        assert!(!error(json!({"type": "invalid_request_error"})).is_transient());
        assert!(!error(json!({"message": "unknown"})).is_transient());
    }

    #[test]
    fn an_event_reports_an_error_by_its_name_its_type_or_its_error() {
        let by_name =
            ReportedError::in_event(Some("error"), &json!({"code": 500, "message": "boom"}));
        assert_eq!(
            by_name.map(|e| (e.status.as_u16(), e.message)),
            Some((500, "boom".into()))
        );
        let anthropic = json!({"type": "error", "error": {"type": "overloaded_error",
            "message": "Overloaded"}});
        let by_type = ReportedError::in_event(Some("error"), &anthropic);
        assert_eq!(
            by_type.map(|e| (e.status.as_u16(), e.message)),
            Some((529, "Overloaded".into()))
        );
        let flat = json!({"type": "error", "code": "server_error", "message": "m"});
        assert_eq!(
            ReportedError::in_event(None, &flat).map(|e| e.status.as_u16()),
            Some(500)
        );
        assert_eq!(
            ReportedError::in_event(None, &json!({"error": null, "choices": []})),
            None
        );
    }
}
