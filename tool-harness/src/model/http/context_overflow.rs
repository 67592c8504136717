//! How each API says that a request is longer than the model's context window, read from
//! its error (an error status's body, or an error reported inside a stream), so that the
//! client answers [`ModelError::ContextTooLong`](crate::model::ModelError::ContextTooLong)
//! rather than a plain `Api` error. Classified narrowly: every other 400 stays `Api`.

use reqwest::StatusCode;
use serde_json::Value;

/// What an API's error says about itself, whatever its format.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ErrorSigns<'a> {
    /// The HTTP status the error came with, or (inside a stream) the one it stands for.
    pub(crate) status: StatusCode,
    /// The error's `code`, when it is text (OpenAI's `context_length_exceeded`).
    pub(crate) code: Option<&'a str>,
    /// The error's `type` (OpenAI, Anthropic), else its `status` (Gemini's
    /// `INVALID_ARGUMENT`).
    pub(crate) kind: Option<&'a str>,
    /// The API's message (empty when it gave none).
    pub(crate) message: &'a str,
}

impl<'a> ErrorSigns<'a> {
    /// The signs of `error`, an API's error object (the `error` of a body, or the data of
    /// an error event), given with `status`.
    pub(crate) fn of(status: StatusCode, error: &'a Value) -> Self {
        let text = |key: &str| error.get(key).and_then(Value::as_str);
        Self {
            status,
            code: text("code"),
            kind: text("type").or_else(|| text("status")),
            message: text("message").unwrap_or_default(),
        }
    }
}

/// The error object of an error status's body: Gemini's may come as an array of one
/// (its streaming endpoint answers so), and every API nests it under `error` (Anthropic
/// beside a `"type": "error"`); a body without one is its own.
pub(crate) fn error_object(body: &Value) -> &Value {
    let body = match body {
        Value::Array(items) => items.first().unwrap_or(body),
        _ => body,
    };
    body.get("error").filter(|e| e.is_object()).unwrap_or(body)
}

/// Which API's words an error is read in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum OverflowShape {
    /// OpenAI's Chat Completions, Responses and embeddings, and the servers that speak
    /// Chat Completions (vLLM, DeepSeek).
    OpenAi,
    /// Anthropic's Messages API.
    Anthropic,
    /// Gemini's `generateContent`.
    Gemini,
}

impl OverflowShape {
    /// Whether `signs` say the request did not fit the model's context window.
    pub(crate) fn says_too_long(self, signs: &ErrorSigns<'_>) -> bool {
        let message = signs.message.to_ascii_lowercase();
        match self {
            // OpenAI's 400 (Chat: `"code": "context_length_exceeded"`, "This model's
            // maximum context length is 8192 tokens. However, your messages resulted in
            // 8227 tokens…"; Responses: the same code, "Your input exceeds the context
            // window of this model…", also as the `error` of a streamed `response.failed`).
            // vLLM and DeepSeek give OpenAI's old message with no such code.
            Self::OpenAi => {
                signs.code == Some("context_length_exceeded")
                    || signs.kind == Some("context_length_exceeded")
                    || (signs.status == StatusCode::BAD_REQUEST
                        && message.starts_with("this model's maximum context length is"))
            }
            // Anthropic (https://docs.claude.com/en/api/errors): 413 `request_too_large`
            // ("Request exceeds the maximum size": the body passed 32 MB); 400
            // `invalid_request_error` "prompt is too long: 209353 tokens > 199999
            // maximum", or "input length and `max_tokens` exceed context limit: 199759 +
            // 8192 > 200000, decrease input length or `max_tokens` and try again"; and
            // "Request size exceeds model context window". The `max_tokens` one stays too
            // long, though a lower `max_tokens` alone would also do: the input is what a
            // session's policy can shorten (the request's `max_tokens` is the caller's), and
            // the input alone past the window is the "prompt is too long" error, so the
            // input shortened by the difference is sent. An output limit past the model's
            // own is another error ("max_tokens: 10000 > 4096, which is the maximum
            // allowed…"), not read as too long. The policy sees the counts in the message.
            Self::Anthropic => {
                signs.status == StatusCode::PAYLOAD_TOO_LARGE
                    || signs.kind == Some("request_too_large")
                    || (signs.kind == Some("invalid_request_error")
                        && (message.starts_with("prompt is too long")
                            || message.contains("exceed context limit")
                            || message.contains("exceeds model context window")))
            }
            // Gemini's 400 `INVALID_ARGUMENT`: "The input token count (1200293) exceeds
            // the maximum number of tokens allowed (1048576)."
            Self::Gemini => {
                signs.status == StatusCode::BAD_REQUEST
                    && message.contains("input token count")
                    && message.contains("exceeds the maximum number of tokens")
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn too_long(shape: OverflowShape, status: u16, body: &Value) -> bool {
        let status = StatusCode::from_u16(status).unwrap();
        shape.says_too_long(&ErrorSigns::of(status, error_object(body)))
    }

    #[test]
    fn each_api_s_own_words_are_read_and_no_other_400() {
        let chat = json!({"error": {"message": "This model's maximum context length is 8192 tokens. However, your messages resulted in 8227 tokens. Please reduce the length of the messages.",
            "type": "invalid_request_error", "param": "messages", "code": "context_length_exceeded"}});
        assert!(too_long(OverflowShape::OpenAi, 400, &chat));
        let vllm = json!({"object": "error", "message": "This model's maximum context length is 8192 tokens. However, you requested 8203 tokens (7691 in the messages, 512 in the completion). Please reduce the length of the messages or completion.",
            "type": "BadRequestError", "param": null, "code": 400});
        assert!(too_long(OverflowShape::OpenAi, 400, &vllm));
        let other = json!({"error": {"message": "Invalid 'messages[1]'", "type": "invalid_request_error", "param": null, "code": null}});
        assert!(!too_long(OverflowShape::OpenAi, 400, &other));

        let anthropic = json!({"type": "error", "error": {"type": "invalid_request_error",
            "message": "prompt is too long: 209353 tokens > 199999 maximum"}});
        assert!(too_long(OverflowShape::Anthropic, 400, &anthropic));
        // The input and the output reserved together: too long as well (the policy can
        // shorten the input).
        let with_output = json!({"type": "error", "error": {"type": "invalid_request_error",
            "message": "input length and `max_tokens` exceed context limit: 199759 + 8192 > 200000, decrease input length or `max_tokens` and try again"}});
        assert!(too_long(OverflowShape::Anthropic, 400, &with_output));
        let size = json!({"error": {"type": "request_too_large", "message": "Request exceeds the maximum size"}});
        assert!(too_long(OverflowShape::Anthropic, 413, &size));
        let tokens = json!({"type": "error", "error": {"type": "invalid_request_error",
            "message": "max_tokens: 10000 > 4096, which is the maximum allowed number of output tokens for claude-3-5-sonnet-20240620"}});
        assert!(!too_long(OverflowShape::Anthropic, 400, &tokens));

        let gemini = json!([{"error": {"code": 400, "message": "The input token count (1200293) exceeds the maximum number of tokens allowed (1048576).",
            "status": "INVALID_ARGUMENT"}}]);
        assert!(too_long(OverflowShape::Gemini, 400, &gemini));
        let key = json!({"error": {"code": 400, "message": "API key not valid.", "status": "INVALID_ARGUMENT"}});
        assert!(!too_long(OverflowShape::Gemini, 400, &key));
        // Another API's words are not this one's.
        assert!(!too_long(OverflowShape::Gemini, 400, &chat));
    }
}
