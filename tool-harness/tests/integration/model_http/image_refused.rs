//! A request whose image the API cannot read or will not take, as each API says so (its
//! real error bodies and stream events), is `ModelError::ImageRefused`, whole or streamed,
//! and is not asked again; an API's other 400s stay `Api`, and a request too long stays
//! `ContextTooLong`.

use serde_json::{Value, json};
use toolsmith_harness::model::ModelError;

use super::Api;
use super::conversation::first_request_answered;
use super::server::{Reply, error_stream};

/// The message each API gives a request with an image it cannot read.
fn refusal_message(api: Api) -> &'static str {
    match api {
        Api::Chat => "Invalid image.",
        Api::Responses => {
            "The image data you provided does not represent a valid image. Please check your input and try again with one of the supported image formats: ['image/jpeg', 'image/png', 'image/gif', 'image/webp']."
        }
        Api::Anthropic => {
            "messages.0.content.0.image.source.base64.data: At least one of the image dimensions exceed max allowed size: 8000 pixels"
        }
        Api::Gemini => {
            "Unable to process input image. Please retry or report in https://developers.generativeai.google/guide/troubleshooting"
        }
    }
}

/// The error object of each API's refusal (OpenAI's with its code).
fn refusal_error(api: Api) -> Value {
    let message = refusal_message(api);
    match api {
        Api::Chat => json!({"message": message, "type": "invalid_request_error",
            "param": null, "code": "invalid_image"}),
        Api::Responses => json!({"message": message, "type": "invalid_request_error",
            "param": "input", "code": "invalid_value"}),
        Api::Anthropic => json!({"type": "invalid_request_error", "message": message}),
        Api::Gemini => json!({"code": 400, "message": message, "status": "INVALID_ARGUMENT"}),
    }
}

/// The body of the 400 each API answers such a request with.
fn refusal_body(api: Api) -> Value {
    let error = refusal_error(api);
    match api {
        Api::Anthropic => json!({"type": "error", "error": error,
            "request_id": "req_011CV6WfUDyhWK5bmewu1Tnq"}),
        // As Gemini's streaming endpoint answers it: an array of one.
        Api::Gemini => json!([{"error": error}]),
        Api::Chat | Api::Responses => json!({"error": error}),
    }
}

/// `api`'s stream reporting, after its `200`, that it cannot read the image.
fn refusal_stream(api: Api) -> String {
    let error = match api {
        Api::Responses => json!({"code": "image_parse_error", "message": refusal_message(api)}),
        _ => refusal_error(api),
    };
    error_stream(api, error)
}

fn expect_refused(api: Api, answer: Result<(), ModelError>, message: &str) {
    match answer {
        Err(ModelError::ImageRefused {
            provider,
            status,
            message: quoted,
            ..
        }) => {
            assert_eq!(provider, api.name(), "{api:?}");
            assert_eq!(status, 400, "{api:?}");
            assert_eq!(quoted, message, "{api:?}");
        }
        other => panic!("{api:?}: expected ImageRefused, got {other:?}"),
    }
}

#[tokio::test]
async fn each_api_s_image_refusal_is_image_refused_and_not_retried() {
    for api in Api::ALL {
        for streamed in [false, true] {
            let (answer, requests) =
                first_request_answered(api, Reply::json(400, &refusal_body(api)), streamed).await;
            expect_refused(api, answer, refusal_message(api));
            assert_eq!(requests, 1, "{api:?} (streamed: {streamed})");
        }
    }
}

#[tokio::test]
async fn each_api_s_image_refusal_inside_a_stream_is_image_refused() {
    for api in Api::ALL {
        let (answer, requests) =
            first_request_answered(api, Reply::sse(&refusal_stream(api), 17), true).await;
        expect_refused(api, answer, refusal_message(api));
        assert_eq!(requests, 1, "{api:?}");
    }
}

#[tokio::test]
async fn openai_s_image_codes_are_read_whatever_the_message() {
    for code in [
        "invalid_image_format",
        "invalid_base64_image",
        "image_too_large",
    ] {
        for api in [Api::Chat, Api::Responses] {
            let body = json!({"error": {"message": "m", "type": "invalid_request_error",
                "param": null, "code": code}});
            let (answer, _) = first_request_answered(api, Reply::json(400, &body), false).await;
            expect_refused(api, answer, "m");
        }
    }
}

#[tokio::test]
async fn another_400_stays_an_api_error_and_too_long_stays_too_long() {
    for api in Api::ALL {
        let other = match api {
            // About an image's field, but no image the API could not read.
            Api::Chat | Api::Responses => json!({"error": {
                "message": "Invalid type for 'messages[1].content[1].image_url': expected an object, but got a string instead.",
                "type": "invalid_request_error", "param": "messages[1].content[1].image_url",
                "code": "invalid_type"}}),
            Api::Anthropic => json!({"type": "error", "error": {"type": "invalid_request_error",
                "message": "messages: text content blocks must be non-empty"}}),
            Api::Gemini => json!({"error": {"code": 400,
                "message": "Request contains an invalid argument.", "status": "INVALID_ARGUMENT"}}),
        };
        let (answer, requests) = first_request_answered(api, Reply::json(400, &other), false).await;
        assert!(
            matches!(answer, Err(ModelError::Api { status: 400, .. })),
            "{api:?}: {answer:?}"
        );
        assert_eq!(requests, 1, "{api:?}");
    }
    let too_long = json!({"type": "error", "error": {"type": "invalid_request_error",
        "message": "prompt is too long: 209353 tokens > 199999 maximum"}});
    let (answer, _) =
        first_request_answered(Api::Anthropic, Reply::json(400, &too_long), false).await;
    assert!(
        matches!(answer, Err(ModelError::ContextTooLong { .. })),
        "{answer:?}"
    );
}
