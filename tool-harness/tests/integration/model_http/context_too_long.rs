//! A request longer than the model's context window, as each API says so (its real error
//! bodies and stream events), is `ModelError::ContextTooLong`, whole or streamed, and is not
//! asked again; an API's other 400s stay `Api`.

use serde_json::{Value, json};
use toolsmith_harness::model::ModelError;

use super::Api;
use super::conversation::first_request_answered;
use super::server::{Reply, error_stream, sse_text};

/// The message each API gives a request too long for its model.
fn too_long_message(api: Api) -> &'static str {
    match api {
        Api::Chat => {
            "This model's maximum context length is 128000 tokens. However, your messages resulted in 202868 tokens. Please reduce the length of the messages."
        }
        Api::Responses => {
            "Your input exceeds the context window of this model. Please adjust your input and try again."
        }
        Api::Anthropic => "prompt is too long: 209353 tokens > 199999 maximum",
        Api::Gemini => {
            "The input token count (1200293) exceeds the maximum number of tokens allowed (1048576)."
        }
    }
}

/// The body of the 400 each API answers a request too long for its model with.
fn too_long_body(api: Api) -> Value {
    let message = too_long_message(api);
    match api {
        Api::Chat => json!({"error": {"message": message, "type": "invalid_request_error",
            "param": "messages", "code": "context_length_exceeded"}}),
        Api::Responses => json!({"error": {"message": message, "type": "invalid_request_error",
            "param": "input", "code": "context_length_exceeded"}}),
        Api::Anthropic => json!({"type": "error", "error": {"type": "invalid_request_error",
            "message": message}, "request_id": "req_011CSPcw1jaHBKxvgq8Kga6G"}),
        // As Gemini's streaming endpoint answers it: an array of one.
        Api::Gemini => json!([{"error": {"code": 400, "message": message,
            "errors": [{"message": message, "domain": "global", "reason": "badRequest"}],
            "status": "INVALID_ARGUMENT"}}]),
    }
}

/// A 400 of each API about something else than the context, in its own words.
fn other_400(api: Api) -> Value {
    match api {
        Api::Chat | Api::Responses => json!({"error": {
            "message": "max_tokens is too large: 100000. This model supports at most 16384 completion tokens, whereas you provided 100000.",
            "type": "invalid_request_error", "param": "max_tokens", "code": "invalid_value"}}),
        Api::Anthropic => json!({"type": "error", "error": {"type": "invalid_request_error",
            "message": "max_tokens: 10000 > 4096, which is the maximum allowed number of output tokens for claude-3-5-sonnet-20240620"}}),
        Api::Gemini => json!({"error": {"code": 400,
            "message": "Request contains an invalid argument.", "status": "INVALID_ARGUMENT"}}),
    }
}

/// `api`'s stream reporting, after its `200`, that the request is too long.
fn too_long_stream(api: Api) -> String {
    let message = too_long_message(api);
    let error = match api {
        Api::Chat => json!({"message": message, "type": "invalid_request_error",
            "param": "messages", "code": "context_length_exceeded"}),
        Api::Responses => json!({"code": "context_length_exceeded", "message": message}),
        Api::Anthropic => json!({"type": "invalid_request_error", "message": message}),
        Api::Gemini => json!({"code": 400, "message": message, "status": "INVALID_ARGUMENT"}),
    };
    error_stream(api, error)
}

fn expect_too_long(api: Api, answer: Result<(), ModelError>, status: u16, message: &str) {
    match answer {
        Err(ModelError::ContextTooLong {
            provider,
            status: got,
            message: quoted,
        }) => {
            assert_eq!(provider, api.name(), "{api:?}");
            assert_eq!(got, status, "{api:?}");
            assert_eq!(quoted, message, "{api:?}");
        }
        other => panic!("{api:?}: expected ContextTooLong, got {other:?}"),
    }
}

#[tokio::test]
async fn each_api_s_too_long_answer_is_context_too_long_and_not_retried() {
    for api in Api::ALL {
        for streamed in [false, true] {
            let reply = Reply::json(400, &too_long_body(api));
            let (answer, requests) = first_request_answered(api, reply, streamed).await;
            expect_too_long(api, answer, 400, too_long_message(api));
            assert_eq!(requests, 1, "{api:?} (streamed: {streamed})");
        }
    }
}

#[tokio::test]
async fn anthropic_s_413_request_too_large_is_context_too_long() {
    // Answered by Cloudflare before the API: a request over the 32 MB a request may be.
    let body = json!({"error": {"type": "request_too_large",
        "message": "Request exceeds the maximum size"}});
    for streamed in [false, true] {
        let (answer, requests) =
            first_request_answered(Api::Anthropic, Reply::json(413, &body), streamed).await;
        expect_too_long(
            Api::Anthropic,
            answer,
            413,
            "Request exceeds the maximum size",
        );
        assert_eq!(requests, 1);
    }
}

#[tokio::test]
async fn each_api_s_too_long_error_inside_a_stream_is_context_too_long() {
    for api in Api::ALL {
        let (answer, requests) =
            first_request_answered(api, Reply::sse(&too_long_stream(api), 17), true).await;
        expect_too_long(api, answer, 400, too_long_message(api));
        assert_eq!(requests, 1, "{api:?}");
    }
}

#[tokio::test]
async fn a_responses_error_event_saying_so_is_context_too_long() {
    // The other way a Responses stream reports an error: an `error` event of its own.
    let message = too_long_message(Api::Responses);
    let stream = sse_text([(
        Some("error"),
        json!({"type": "error", "sequence_number": 0, "code": "context_length_exceeded",
            "message": message, "param": "input"}),
    )]);
    let (answer, _) = first_request_answered(Api::Responses, Reply::sse(&stream, 11), true).await;
    expect_too_long(Api::Responses, answer, 400, message);
}

#[tokio::test]
async fn another_400_stays_an_api_error() {
    for api in Api::ALL {
        for streamed in [false, true] {
            let (answer, requests) =
                first_request_answered(api, Reply::json(400, &other_400(api)), streamed).await;
            assert!(
                matches!(answer, Err(ModelError::Api { status: 400, .. })),
                "{api:?} (streamed: {streamed}): {answer:?}"
            );
            assert_eq!(requests, 1, "{api:?}");
        }
    }
}
