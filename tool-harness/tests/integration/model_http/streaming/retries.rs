//! A stream whose API reports a transient error (an overload, a rate limit, a server error)
//! before any of the answer reached the consumer is asked again, as an error status is,
//! within the same `max_retries`; once anything was delivered, the error is the answer.

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use toolsmith_harness::model::{ChatResponse, ModelError, StreamDelta};

use super::super::conversation::first_request;
use super::super::server::{MockServer, Recorded, Reply, sse_text};
use super::super::{Api, Client};

/// A stream of `text` as `api` streams a short answer.
fn text_stream(api: Api, text: &str) -> String {
    match api {
        Api::Chat => {
            let chunk = |delta: Value, finish: Value| {
                (
                    None,
                    json!({"object": "chat.completion.chunk",
                        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}),
                )
            };
            sse_text([
                chunk(json!({"role": "assistant", "content": text}), Value::Null),
                chunk(json!({}), json!("stop")),
            ]) + "data: [DONE]\n\n"
        }
        Api::Responses => sse_text([
            (
                Some("response.output_text.delta"),
                json!({"type": "response.output_text.delta", "output_index": 0,
                    "content_index": 0, "delta": text}),
            ),
            (
                Some("response.completed"),
                json!({"type": "response.completed", "response": api.text_answer(text)}),
            ),
        ]),
        Api::Anthropic => anthropic_events(&[
            json!({"type": "content_block_start", "index": 0,
                "content_block": {"type": "text", "text": ""}}),
            json!({"type": "content_block_delta", "index": 0,
                "delta": {"type": "text_delta", "text": text}}),
            json!({"type": "content_block_stop", "index": 0}),
            json!({"type": "message_delta", "delta": {"stop_reason": "end_turn"},
                "usage": {"output_tokens": 2}}),
            json!({"type": "message_stop"}),
        ]),
        Api::Gemini => sse_text([(
            None,
            json!({"candidates": [{"content": {"role": "model", "parts": [{"text": text}]},
                "finishReason": "STOP", "index": 0}]}),
        )]),
    }
}

/// Anthropic's `message_start` and a `ping`, then `events`, each named by its `type`.
fn anthropic_events(events: &[Value]) -> String {
    let start = json!({"type": "message_start", "message": {"id": "msg_1", "type": "message",
        "role": "assistant", "model": "claude-sonnet-4-5", "content": [],
        "stop_reason": null, "stop_sequence": null,
        "usage": {"input_tokens": 10, "output_tokens": 1}}});
    let ping = json!({"type": "ping"});
    sse_text(
        [start, ping]
            .iter()
            .chain(events)
            .map(|data| (data["type"].as_str(), data.clone())),
    )
}

/// Anthropic's overload, reported after the stream began (with nothing of the answer).
fn overloaded() -> String {
    anthropic_events(&[json!({"type": "error",
        "error": {"type": "overloaded_error", "message": "Overloaded"}})])
}

/// A transient error as `api` reports it in its stream before any of the answer, and the
/// error it is when no retry is left.
fn early_failure(api: Api) -> (String, ModelError) {
    let provider = api.name().to_owned();
    match api {
        Api::Chat => (
            sse_text([(
                None,
                json!({"error": {"message": "The server had an error.", "type": "server_error",
                    "param": null, "code": null}}),
            )]),
            ModelError::Api {
                provider,
                status: 500,
                message: "The server had an error.".into(),
            },
        ),
        Api::Responses => (
            sse_text([
                (
                    Some("response.created"),
                    json!({"type": "response.created",
                        "response": {"id": "resp_1", "status": "in_progress", "output": []}}),
                ),
                (
                    Some("error"),
                    json!({"type": "error", "code": "rate_limit_exceeded",
                        "message": "Slow down.", "param": null}),
                ),
            ]),
            ModelError::RateLimited {
                provider,
                retry_after: None,
                message: "Slow down.".into(),
            },
        ),
        Api::Anthropic => (
            overloaded(),
            ModelError::Api {
                provider,
                status: 529,
                message: "Overloaded".into(),
            },
        ),
        Api::Gemini => (
            sse_text([(
                None,
                json!({"error": {"code": 503, "message": "The model is overloaded.",
                    "status": "UNAVAILABLE"}}),
            )]),
            ModelError::Api {
                provider,
                status: 503,
                message: "The model is overloaded.".into(),
            },
        ),
    }
}

/// What `api`'s client streamed from a server answering with `replies` in turn.
struct Asked {
    answer: Result<ChatResponse, ModelError>,
    deltas: Vec<StreamDelta>,
    requests: Vec<Recorded>,
    took: Duration,
}

async fn ask(api: Api, replies: Vec<Reply>, client: &Client) -> Asked {
    let server = MockServer::start(replies).await;
    let model = api.model(&server.base, client);
    let mut deltas = Vec::new();
    let started = Instant::now();
    let answer = model
        .stream(&first_request(api), &mut |delta| deltas.push(delta))
        .await;
    Asked {
        answer,
        deltas,
        requests: server.requests(),
        took: started.elapsed(),
    }
}

#[tokio::test]
async fn a_transient_error_before_anything_was_delivered_is_retried() {
    for api in Api::ALL {
        let (failure, _) = early_failure(api);
        let replies = vec![
            Reply::sse(&failure, 11),
            Reply::sse(&failure, 11),
            Reply::sse(&text_stream(api, "fine"), 11),
        ];
        let asked = ask(api, replies, &Client::default()).await;
        let answer = asked.answer.unwrap_or_else(|e| panic!("{api:?}: {e}"));
        assert_eq!(answer.text.as_deref(), Some("fine"), "{api:?}");
        // The failed attempts delivered nothing: the answer's text, once.
        assert_eq!(asked.deltas, [StreamDelta::Text("fine".into())], "{api:?}");
        assert_eq!(asked.requests.len(), 3, "{api:?}");
        for request in &asked.requests {
            assert_eq!(
                request.body, asked.requests[0].body,
                "{api:?}: the same request"
            );
        }
    }
}

#[tokio::test]
async fn when_the_retries_run_out_the_error_has_the_status_its_type_means() {
    for api in Api::ALL {
        let (failure, expected) = early_failure(api);
        let replies = vec![Reply::sse(&failure, 64); 3];
        let asked = ask(api, replies, &Client::default()).await;
        let error = asked.answer.expect_err("no answer");
        assert_eq!(error, expected, "{api:?}");
        assert!(error.is_transient(), "{api:?}");
        // `max_retries` is 2: three attempts.
        assert_eq!(asked.requests.len(), 3, "{api:?}");
        assert!(asked.deltas.is_empty(), "{api:?}");
    }
}

#[tokio::test]
async fn an_error_after_text_was_delivered_is_returned_not_retried() {
    let after_text = anthropic_events(&[
        json!({"type": "content_block_start", "index": 0,
            "content_block": {"type": "text", "text": ""}}),
        json!({"type": "content_block_delta", "index": 0,
            "delta": {"type": "text_delta", "text": "Half an"}}),
        json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}),
    ]);
    let replies = vec![
        Reply::sse(&after_text, 13),
        Reply::sse(&text_stream(Api::Anthropic, "unused"), 13),
    ];
    let asked = ask(Api::Anthropic, replies, &Client::default()).await;
    assert_eq!(
        asked.answer.expect_err("the error"),
        ModelError::Api {
            provider: "anthropic".into(),
            status: 529,
            message: "Overloaded".into(),
        }
    );
    assert_eq!(asked.deltas, [StreamDelta::Text("Half an".into())]);
    assert_eq!(asked.requests.len(), 1);

    // A call's start is delivered too.
    let after_call = anthropic_events(&[
        json!({"type": "content_block_start", "index": 0,
            "content_block": {"type": "tool_use", "id": "toolu_1", "name": "add", "input": {}}}),
        json!({"type": "error", "error": {"type": "api_error", "message": "Internal"}}),
    ]);
    let replies = vec![
        Reply::sse(&after_call, 13),
        Reply::sse(&text_stream(Api::Anthropic, "unused"), 13),
    ];
    let asked = ask(Api::Anthropic, replies, &Client::default()).await;
    assert!(
        matches!(asked.answer, Err(ModelError::Api { status: 500, .. })),
        "{:?}",
        asked.answer
    );
    assert_eq!(asked.deltas.len(), 1);
    assert_eq!(asked.requests.len(), 1);
}

#[tokio::test]
async fn an_error_that_is_not_transient_is_not_retried() {
    let invalid = anthropic_events(&[json!({"type": "error",
        "error": {"type": "invalid_request_error", "message": "messages: at least one message is required"}})]);
    let replies = vec![
        Reply::sse(&invalid, 13),
        Reply::sse(&text_stream(Api::Anthropic, "unused"), 13),
    ];
    let asked = ask(Api::Anthropic, replies, &Client::default()).await;
    let error = asked.answer.expect_err("the error");
    assert_eq!(
        error,
        ModelError::Api {
            provider: "anthropic".into(),
            status: 400,
            message: "messages: at least one message is required".into(),
        }
    );
    assert!(!error.is_transient());
    assert_eq!(asked.requests.len(), 1);
}

#[tokio::test]
async fn stream_failures_and_error_statuses_share_the_retries_and_wait_the_backoff() {
    let error_status = || {
        Reply::json(
            529,
            &Api::Anthropic.error_body(529, "Overloaded before the stream"),
        )
    };
    let replies = || {
        vec![
            error_status(),
            Reply::sse(&overloaded(), 13),
            Reply::sse(&text_stream(Api::Anthropic, "fine"), 13),
        ]
    };
    let client = Client {
        max_retries: 2,
        retry_delay: Duration::from_millis(150),
        ..Client::default()
    };
    let asked = ask(Api::Anthropic, replies(), &client).await;
    assert_eq!(
        asked.answer.expect("the answer").text.as_deref(),
        Some("fine")
    );
    assert_eq!(asked.requests.len(), 3);
    // Two backoffs: 150 ms, then 300 ms (each with up to a quarter more).
    assert!(asked.took >= Duration::from_millis(450), "{:?}", asked.took);

    // One retry in all: the error status takes it, and the stream's overload is the error.
    let one = Client {
        max_retries: 1,
        ..Client::default()
    };
    let asked = ask(Api::Anthropic, replies(), &one).await;
    assert_eq!(
        asked.answer.expect_err("no retry left"),
        ModelError::Api {
            provider: "anthropic".into(),
            status: 529,
            message: "Overloaded".into(),
        }
    );
    assert_eq!(asked.requests.len(), 2);
}
