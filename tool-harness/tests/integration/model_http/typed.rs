//! A typed answer (`AgentSession::send_as`) through each API's client: the answer is asked
//! for with `final_answer` declared and forced in the API's words, and read from the call
//! the API answers with.

use serde_json::{Value, json};
use toolsmith_harness::agent::{AgentSession, AgenticError, FINAL_ANSWER_TOOL};
use toolsmith_harness::model::ModelError;

use super::server::{MockServer, Reply};
use super::{Api, Client};
use crate::typed_answers::Weather;

/// An answer of one call of `final_answer` with `arguments`, in the API's format.
fn answer_call(api: Api, arguments: &Value) -> Value {
    let name = FINAL_ANSWER_TOOL;
    match api {
        Api::Chat => json!({
            "id": "chatcmpl-2", "object": "chat.completion", "created": 1_700_000_000,
            "model": "gpt-4.1-mini",
            "choices": [{"index": 0, "logprobs": null, "finish_reason": "tool_calls",
                "message": {"role": "assistant", "content": null, "refusal": null,
                    "tool_calls": [{"id": "call_1", "type": "function",
                        "function": {"name": name, "arguments": arguments.to_string()}}]}}],
            "usage": {"prompt_tokens": 30, "completion_tokens": 9, "total_tokens": 39}
        }),
        Api::Responses => json!({
            "id": "resp_2", "object": "response", "created_at": 1_700_000_000,
            "status": "completed", "model": "gpt-4.1-mini",
            "output": [{"type": "function_call", "id": "fc_1", "call_id": "call_1",
                "name": name, "arguments": arguments.to_string(), "status": "completed"}],
            "usage": {"input_tokens": 30, "input_tokens_details": {"cached_tokens": 0},
                "output_tokens": 9, "output_tokens_details": {"reasoning_tokens": 0},
                "total_tokens": 39}
        }),
        Api::Anthropic => json!({
            "id": "msg_2", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
            "content": [{"type": "tool_use", "id": "toolu_1", "name": name, "input": arguments}],
            "stop_reason": "tool_use", "stop_sequence": null,
            "usage": {"input_tokens": 30, "output_tokens": 9}
        }),
        Api::Gemini => json!({
            "candidates": [{"content": {"role": "model", "parts": [
                    {"functionCall": {"name": name, "args": arguments}}]},
                "finishReason": "STOP", "index": 0}],
            "usageMetadata": {"promptTokenCount": 30, "candidatesTokenCount": 9,
                "totalTokenCount": 39},
            "modelVersion": "gemini-2.5-flash"
        }),
    }
}

#[tokio::test]
async fn a_typed_answer_through_every_client() {
    for api in Api::ALL {
        let server = MockServer::start([
            Reply::json(200, &api.text_answer("It is 21 °C in Paris.")),
            Reply::json(
                200,
                &answer_call(api, &json!({"city": "Paris", "celsius": 21.5})),
            ),
        ])
        .await;
        let session = AgentSession::builder(api.model(&server.base, &Client::default()))
            .with_model(api.model_name())
            .build()
            .unwrap();
        let typed = session
            .send_as::<Weather>("Weather in Paris?")
            .await
            .unwrap_or_else(|err| panic!("{api:?}: {err}"));
        assert_eq!(
            typed.value,
            Weather {
                city: "Paris".into(),
                celsius: 21.5
            },
            "{api:?}"
        );
        assert_eq!(typed.run.usage.output_tokens, 2 + 9, "{api:?}");
        let requests = server.requests();
        let asked = &requests[1].body;
        api.check_request(&requests[1]);
        let forced = match api {
            Api::Chat => json!({"type": "function", "function": {"name": FINAL_ANSWER_TOOL}}),
            Api::Responses => json!({"type": "function", "name": FINAL_ANSWER_TOOL}),
            Api::Anthropic => json!({"type": "tool", "name": FINAL_ANSWER_TOOL}),
            Api::Gemini => json!({"mode": "ANY", "allowedFunctionNames": [FINAL_ANSWER_TOOL]}),
        };
        let sent_choice = match api {
            Api::Gemini => &asked["toolConfig"]["functionCallingConfig"],
            _ => &asked["tool_choice"],
        };
        assert_eq!(sent_choice, &forced, "{api:?}");
        let body = asked.to_string();
        assert!(body.contains("Degrees Celsius."), "{api:?}: {body}");
        assert!(body.contains("It is 21 °C in Paris."), "{api:?}: {body}");
    }
}

#[tokio::test]
async fn an_api_error_while_the_answer_is_asked_for_ends_the_run_with_it_counted() {
    let no_retries = Client {
        max_retries: 0,
        ..Client::default()
    };
    for api in Api::ALL {
        for status in [500, 429] {
            let server = MockServer::start([
                Reply::json(200, &api.text_answer("It is 21 °C in Paris.")),
                Reply::json(status, &api.error_body(status, "try later")),
            ])
            .await;
            let session = AgentSession::builder(api.model(&server.base, &no_retries))
                .with_model(api.model_name())
                .build()
                .unwrap();
            let err = session
                .send_as::<Weather>("Weather in Paris?")
                .await
                .unwrap_err();
            let AgenticError::Model { source, run } = &err else {
                panic!("{api:?} {status}: {err}");
            };
            match status {
                429 => assert!(
                    matches!(source, ModelError::RateLimited { .. }),
                    "{api:?}: {source}"
                ),
                _ => assert!(
                    matches!(source, ModelError::Api { status: 500, .. }),
                    "{api:?}: {source}"
                ),
            }
            assert_eq!(run.model_calls, 2, "{api:?}");
            assert_eq!(run.usage.output_tokens, 2, "{api:?}");
            assert_eq!(run.text, "It is 21 °C in Paris.", "{api:?}");
            assert_eq!(session.transcript().await.len(), 2, "{api:?}");
            assert_eq!(server.requests().len(), 2, "{api:?}");
        }
    }
}
