//! How each API says that it could not read, or will not take, an image of the request,
//! read from its error (an error status's body, or an error reported inside a stream), so
//! that the client answers [`ModelError::ImageRefused`](crate::model::ModelError::ImageRefused)
//! rather than a plain `Api` error. Classified narrowly, as the "too long" refusal is
//! (`context_overflow.rs`): every other 400 stays `Api`.

use reqwest::StatusCode;

use super::context_overflow::{ErrorSigns, OverflowShape};

/// OpenAI's error codes for an image it could not read or will not take (the `code` of a
/// Chat Completions or Responses 400, and of a Responses stream's `response.failed`):
/// "Invalid image." is `invalid_image`; "You uploaded an unsupported image. Please make
/// sure your image has of one the following formats: ['png', 'jpeg', 'gif', 'webp']." is
/// `invalid_image_format`; the rest are the image codes of the Responses API's error
/// reference. `image_content_policy_violation` is not among them: a picture the policy
/// refuses is read, and removing it is the caller's decision, not a repair.
const OPENAI_IMAGE_CODES: &[&str] = &[
    "invalid_image",
    "invalid_image_format",
    "invalid_base64_image",
    "invalid_image_url",
    "invalid_image_mode",
    "image_too_large",
    "image_too_small",
    "image_parse_error",
    "image_file_too_large",
    "unsupported_image_media_type",
    "empty_image_file",
];

/// Anthropic's words, in an `invalid_request_error` 400's message, lower-cased: "Could not
/// process image"; "messages.6.content.5.image.source.base64.data: Image does not match
/// the provided media type image/png"; "messages.92.content.0.tool_result.content.1.image
/// .source.base64: The image was specified using the image/png media type, but the image
/// appears to be a image/jpeg image"; "messages.2.content.0.image.source.base64: image
/// exceeds 5 MB maximum: 8259148 bytes > 5242880 bytes"; "messages.7.content.2.image
/// .source.base64.data: At least one of the image dimensions exceed max allowed size: 8000
/// pixels" (and "… for many-image requests: 2000 pixels"). Reported in
/// anthropics/claude-code issues #8647, #15746, #12064, #19631, #4778, #9375, and
/// BerriAI/litellm#24900.
const ANTHROPIC_IMAGE_WORDS: &[&str] = &[
    "could not process image",
    "image does not match the provided media type",
    "but the image appears to be",
    "image exceeds",
    "image dimensions exceed",
];

impl OverflowShape {
    /// Whether `signs` say, in this API's words, that an image of the request could not be
    /// read or is not taken.
    pub(crate) fn says_image_refused(self, signs: &ErrorSigns<'_>) -> bool {
        let message = signs.message.to_ascii_lowercase();
        match self {
            // OpenAI: a code of `OPENAI_IMAGE_CODES`. The Responses API also answers a
            // corrupt image with the generic code `invalid_value` and "The image data you
            // provided does not represent a valid image. Please check your input and try
            // again with one of the supported image formats: […]" (openai/codex#4946), and
            // has answered "You uploaded an unsupported image…" under other codes
            // (`sanitizer_server_error`, CosmosShadow/gptpdf#6): those messages count too.
            Self::OpenAi => {
                [signs.code, signs.kind]
                    .iter()
                    .flatten()
                    .any(|name| OPENAI_IMAGE_CODES.contains(name))
                    || (signs.status == StatusCode::BAD_REQUEST
                        && (message.contains("does not represent a valid image")
                            || message.starts_with("you uploaded an unsupported image")))
            }
            // Anthropic: an `invalid_request_error` (a 400) in the words above. A media
            // type outside the four is refused too ("….image.source.base64.media_type:
            // Input should be 'image/jpeg', …"), which an `Image` cannot have.
            Self::Anthropic => {
                (signs.kind == Some("invalid_request_error")
                    || signs.status == StatusCode::BAD_REQUEST)
                    && ANTHROPIC_IMAGE_WORDS
                        .iter()
                        .any(|words| message.contains(words))
            }
            // Gemini's 400 `INVALID_ARGUMENT`: "Unable to process input image. Please retry
            // or report in https://developers.generativeai.google/guide/troubleshooting"
            // (google-gemini/gemini-cli#5064), and "Provided image is not valid"
            // (AmberSahdev/Open-Interface#64); an image of a type it does not take: "…
            // inline_data.mime_type: MIME type must be image/png, image/jpeg, …"
            // (EvanZhouDev/gemini-ai#3) or "Unsupported MIME type: image/gif"
            // (Mai-with-u/MaiBot#1435).
            Self::Gemini => {
                signs.status == StatusCode::BAD_REQUEST
                    && (message.contains("unable to process input image")
                        || message.contains("provided image is not valid")
                        || message.contains("mime_type: mime type must be image/")
                        || message.contains("unsupported mime type: image/"))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::super::context_overflow::error_object;
    use super::*;

    fn refused(shape: OverflowShape, status: u16, body: &Value) -> bool {
        let status = StatusCode::from_u16(status).unwrap();
        shape.says_image_refused(&ErrorSigns::of(status, error_object(body)))
    }

    #[test]
    fn each_api_s_own_words_are_read_and_no_other_400() {
        let invalid = json!({"error": {"message": "Invalid image.", "type": "invalid_request_error",
            "param": null, "code": "invalid_image"}});
        assert!(refused(OverflowShape::OpenAi, 400, &invalid));
        let format = json!({"error": {"message": "You uploaded an unsupported image. Please make sure your image has of one the following formats: ['png', 'jpeg', 'gif', 'webp'].",
            "type": "invalid_request_error", "param": null, "code": "invalid_image_format"}});
        assert!(refused(OverflowShape::OpenAi, 400, &format));
        let responses = json!({"error": {"message": "The image data you provided does not represent a valid image. Please check your input and try again with one of the supported image formats: ['image/jpeg', 'image/png', 'image/gif', 'image/webp'].",
            "type": "invalid_request_error", "param": "input", "code": "invalid_value"}});
        assert!(refused(OverflowShape::OpenAi, 400, &responses));
        // Another 400 about an image's field, which removing the image would not answer
        // rightly, and one about nothing of the kind.
        let typed = json!({"error": {"message": "Invalid type for 'messages[1].content[1].image_url': expected an object, but got a string instead.",
            "type": "invalid_request_error", "param": "messages[1].content[1].image_url", "code": "invalid_type"}});
        assert!(!refused(OverflowShape::OpenAi, 400, &typed));
        let too_long = json!({"error": {"message": "This model's maximum context length is 8192 tokens.",
            "type": "invalid_request_error", "code": "context_length_exceeded"}});
        assert!(!refused(OverflowShape::OpenAi, 400, &too_long));

        for message in [
            "Could not process image",
            "messages.6.content.5.image.source.base64.data: Image does not match the provided media type image/png",
            "messages.92.content.0.tool_result.content.1.image.source.base64: The image was specified using the image/png media type, but the image appears to be a image/jpeg image",
            "messages.2.content.0.image.source.base64: image exceeds 5 MB maximum: 8259148 bytes > 5242880 bytes",
            "messages.7.content.2.image.source.base64.data: At least one of the image dimensions exceed max allowed size: 8000 pixels",
        ] {
            let body = json!({"type": "error", "error": {"type": "invalid_request_error", "message": message}});
            assert!(refused(OverflowShape::Anthropic, 400, &body), "{message}");
        }
        let empty_text = json!({"type": "error", "error": {"type": "invalid_request_error",
            "message": "messages: text content blocks must be non-empty"}});
        assert!(!refused(OverflowShape::Anthropic, 400, &empty_text));
        let long = json!({"type": "error", "error": {"type": "invalid_request_error",
            "message": "prompt is too long: 209353 tokens > 199999 maximum"}});
        assert!(!refused(OverflowShape::Anthropic, 400, &long));

        let gemini = json!([{"error": {"code": 400, "message": "Unable to process input image. Please retry or report in https://developers.generativeai.google/guide/troubleshooting",
            "status": "INVALID_ARGUMENT"}}]);
        assert!(refused(OverflowShape::Gemini, 400, &gemini));
        let not_valid = json!({"error": {"code": 400, "message": "Provided image is not valid", "status": "INVALID_ARGUMENT"}});
        assert!(refused(OverflowShape::Gemini, 400, &not_valid));
        let mime = json!({"error": {"code": 400, "message": "* GenerateContentRequest.contents[0].parts[1].inline_data.mime_type: MIME type must be image/png, image/jpeg, image/webp, image/heic, or image/heif.\n", "status": "INVALID_ARGUMENT"}});
        assert!(refused(OverflowShape::Gemini, 400, &mime));
        let gif = json!({"error": {"code": 400, "message": "Unsupported MIME type: image/gif", "status": "INVALID_ARGUMENT"}});
        assert!(refused(OverflowShape::Gemini, 400, &gif));
        let pdf = json!({"error": {"code": 400, "message": "Unsupported MIME type: application/x-foo", "status": "INVALID_ARGUMENT"}});
        assert!(!refused(OverflowShape::Gemini, 400, &pdf));
        let key = json!({"error": {"code": 400, "message": "API key not valid.", "status": "INVALID_ARGUMENT"}});
        assert!(!refused(OverflowShape::Gemini, 400, &key));
        // Another API's words are not this one's.
        assert!(!refused(OverflowShape::Gemini, 400, &invalid));
    }
}
