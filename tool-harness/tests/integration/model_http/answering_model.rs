//! Which model answered: each API names it in its answer (OpenAI's `model`, Anthropic's
//! `model`, Gemini's `modelVersion`), whole or streamed, and `ChatResponse::model` gives
//! that name, not the one the request asked for.

use serde_json::{Value, json};
use toolsmith_harness::model::ChatResponse;

use super::conversation::first_request;
use super::server::{MockServer, Reply, sse_text};
use super::streaming::stream;
use super::{Api, Client};

/// The dated model each API says answered: another name than the one the tests ask for
/// ([`Api::model_name`]), as the APIs answer an alias with the version behind it.
fn answering(api: Api) -> &'static str {
    match api {
        Api::Chat | Api::Responses => "gpt-4.1-mini-2025-04-14",
        Api::Anthropic => "claude-sonnet-4-5-20250929",
        Api::Gemini => "gemini-2.5-flash-001",
    }
}

/// `api`'s whole answer "5", naming `model` where the API does (none for `None`).
fn whole(api: Api, model: Option<&str>) -> Value {
    let mut answer = match api {
        Api::Chat => json!({"id": "chatcmpl-9", "object": "chat.completion", "created": 1,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": "5"},
                "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 3, "completion_tokens": 1}}),
        Api::Responses => json!({"id": "resp_9", "object": "response", "status": "completed",
            "output": [{"type": "message", "id": "msg_9", "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": "5", "annotations": []}]}],
            "usage": {"input_tokens": 3, "output_tokens": 1}}),
        Api::Anthropic => json!({"id": "msg_9", "type": "message", "role": "assistant",
            "content": [{"type": "text", "text": "5"}], "stop_reason": "end_turn",
            "stop_sequence": null, "usage": {"input_tokens": 3, "output_tokens": 1}}),
        Api::Gemini => json!({"candidates": [{"content": {"role": "model",
                "parts": [{"text": "5"}]}, "finishReason": "STOP", "index": 0}],
            "usageMetadata": {"promptTokenCount": 3, "candidatesTokenCount": 1,
                "totalTokenCount": 4},
            "responseId": "r9"}),
    };
    if let Some(model) = model {
        let key = if api == Api::Gemini {
            "modelVersion"
        } else {
            "model"
        };
        answer[key] = json!(model);
    }
    answer
}

/// `api`'s answer "5" streamed, naming `answering(api)` where the API's stream does.
fn streamed(api: Api) -> String {
    let model = answering(api);
    match api {
        Api::Chat => {
            let chunk = |delta: Value, finish: Value| {
                (
                    None,
                    json!({"id": "chatcmpl-9", "object": "chat.completion.chunk",
                        "model": model,
                        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}),
                )
            };
            sse_text([
                chunk(json!({"role": "assistant", "content": "5"}), Value::Null),
                chunk(json!({}), json!("stop")),
            ]) + "data: [DONE]\n\n"
        }
        Api::Responses => responses_stream(&whole(Api::Responses, Some(model))),
        Api::Anthropic => sse_text([
            (
                Some("message_start"),
                json!({"type": "message_start", "message": {"id": "msg_9", "type": "message",
                    "role": "assistant", "model": model, "content": [], "stop_reason": null,
                    "stop_sequence": null, "usage": {"input_tokens": 3, "output_tokens": 1}}}),
            ),
            (
                Some("content_block_start"),
                json!({"type": "content_block_start", "index": 0,
                    "content_block": {"type": "text", "text": ""}}),
            ),
            (
                Some("content_block_delta"),
                json!({"type": "content_block_delta", "index": 0,
                    "delta": {"type": "text_delta", "text": "5"}}),
            ),
            (
                Some("content_block_stop"),
                json!({"type": "content_block_stop", "index": 0}),
            ),
            (
                Some("message_delta"),
                json!({"type": "message_delta",
                    "delta": {"stop_reason": "end_turn", "stop_sequence": null},
                    "usage": {"output_tokens": 1}}),
            ),
            (Some("message_stop"), json!({"type": "message_stop"})),
        ]),
        Api::Gemini => sse_text([
            (
                None,
                json!({"candidates": [{"content": {"role": "model", "parts": [{"text": "5"}]},
                    "index": 0}], "modelVersion": model, "responseId": "r9"}),
            ),
            (
                None,
                json!({"candidates": [{"content": {"role": "model", "parts": [{"text": ""}]},
                    "finishReason": "STOP", "index": 0}],
                    "usageMetadata": {"promptTokenCount": 3, "candidatesTokenCount": 1,
                        "totalTokenCount": 4},
                    "modelVersion": model, "responseId": "r9"}),
            ),
        ]),
    }
}

/// A Responses stream of the answer "5": `response.created` naming
/// `answering(Api::Responses)`, the text, then `response.completed` carrying `last`.
fn responses_stream(last: &Value) -> String {
    let event = |kind: &'static str, data: Value| (Some(kind), data);
    sse_text([
        event(
            "response.created",
            json!({"type": "response.created", "response": {"id": "resp_9",
                "object": "response", "status": "in_progress",
                "model": answering(Api::Responses), "output": []}}),
        ),
        event(
            "response.output_text.delta",
            json!({"type": "response.output_text.delta", "output_index": 0,
                "content_index": 0, "delta": "5"}),
        ),
        event(
            "response.completed",
            json!({"type": "response.completed", "response": last}),
        ),
    ])
}

/// What `complete` reads from `api`'s whole `answer`.
async fn completed(api: Api, answer: &Value) -> ChatResponse {
    let server = MockServer::start([Reply::json(200, answer)]).await;
    api.model(&server.base, &Client::default())
        .complete(&first_request(api))
        .await
        .unwrap_or_else(|err| panic!("{api:?}: the whole answer: {err}"))
}

#[tokio::test]
async fn each_api_s_whole_answer_names_the_model_that_answered() {
    for api in Api::ALL {
        let answer = completed(api, &whole(api, Some(answering(api)))).await;
        assert_eq!(answer.text.as_deref(), Some("5"), "{api:?}");
        assert_eq!(answer.model.as_deref(), Some(answering(api)), "{api:?}");
    }
}

#[tokio::test]
async fn an_answer_that_names_no_model_gives_none_not_the_one_asked_for() {
    for api in Api::ALL {
        let answer = completed(api, &whole(api, None)).await;
        assert_eq!(answer.model, None, "{api:?}");
    }
}

#[tokio::test]
async fn each_api_s_streamed_answer_names_the_model_that_answered() {
    for api in Api::ALL {
        let streamed = stream(api, Reply::sse(&streamed(api), 9), &Client::default()).await;
        let answer = streamed
            .answer
            .unwrap_or_else(|err| panic!("{api:?}: the streamed answer: {err}"));
        assert_eq!(answer.text.as_deref(), Some("5"), "{api:?}");
        assert_eq!(answer.model.as_deref(), Some(answering(api)), "{api:?}");
    }
}

#[tokio::test]
async fn a_responses_stream_whose_last_response_names_no_model_keeps_the_first_s() {
    let text = responses_stream(&whole(Api::Responses, None));
    let streamed = stream(Api::Responses, Reply::sse(&text, 9), &Client::default()).await;
    let answer = streamed.answer.expect("the streamed answer");
    assert_eq!(answer.model.as_deref(), Some(answering(Api::Responses)));
}
