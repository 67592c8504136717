//! Answers of a few bytes per JSON value (`[0,0,0,…]`): within the byte bound, but each
//! value takes 80 bytes or more once read, so that 32 MiB of them took 1.2 GB. A body, or
//! an event, of more values than a client reads is refused with an error saying so.

use toolsmith_harness::model::ModelError;

use super::conversation::first_request;
use super::server::{MockServer, Reply};
use super::{Api, Client};

/// More values than a client reads (2,097,152), in 6 MB.
const VALUES: usize = 3_000_000;

/// A JSON object whose `choices` are `VALUES` zeros.
fn crowded() -> String {
    format!("{{\"choices\": [{}0]}}", "0,".repeat(VALUES - 1))
}

/// Checks that `error` is `api`'s malformed answer saying it holds too many values.
fn assert_too_many(api: Api, error: &ModelError) {
    match error {
        ModelError::MalformedResponse { provider, reason } => {
            assert_eq!(provider, api.name());
            assert!(
                reason.contains("the JSON holds more than 2097152 values at line 1 column"),
                "{api:?}: {}",
                &reason[..reason.len().min(300)]
            );
        }
        other => panic!("{api:?}: {other:?}"),
    }
}

#[tokio::test]
async fn a_whole_answer_of_too_many_values_is_refused() {
    for api in Api::ALL {
        let server = MockServer::start([Reply::raw(200, crowded())]).await;
        let model = api.model(&server.base, &Client::default());
        let error = model.complete(&first_request(api)).await.unwrap_err();
        assert_too_many(api, &error);
        assert_eq!(server.requests().len(), 1, "{api:?}");
    }
}

#[tokio::test]
async fn an_event_of_too_many_values_is_refused() {
    for api in Api::ALL {
        let text = format!("data: {}\n\n", crowded());
        let server = MockServer::start([Reply::sse(&text, 64 * 1024)]).await;
        let model = api.model(&server.base, &Client::default());
        let mut deltas = Vec::new();
        let error = model
            .stream(&first_request(api), &mut |delta| deltas.push(delta))
            .await
            .unwrap_err();
        assert_too_many(api, &error);
        assert!(deltas.is_empty(), "{api:?}");
    }
}

/// A call's arguments, written as JSON text (OpenAI's formats), of more values than a client
/// reads: one string in the body, so the body passes; the call is refused, saying why, and
/// its text kept to echo back.
#[tokio::test]
async fn a_call_whose_arguments_hold_too_many_values_is_refused() {
    let arguments = format!("{{\"a\": [{}0]}}", "0,".repeat(VALUES - 1));
    for api in [Api::Chat, Api::Responses] {
        let answer = match api {
            Api::Chat => serde_json::json!({
                "id": "chatcmpl-1", "object": "chat.completion", "created": 1,
                "model": "gpt-4.1-mini",
                "choices": [{"index": 0, "finish_reason": "tool_calls",
                    "message": {"role": "assistant", "content": null, "tool_calls": [
                        {"id": "call_1", "type": "function",
                         "function": {"name": "add", "arguments": arguments}}]}}]
            }),
            _ => serde_json::json!({
                "id": "resp_1", "object": "response", "status": "completed",
                "model": "gpt-4.1-mini",
                "output": [{"type": "function_call", "id": "fc_1", "call_id": "call_1",
                    "name": "add", "arguments": arguments, "status": "completed"}]
            }),
        };
        let server = MockServer::start([Reply::json(200, &answer)]).await;
        let model = api.model(&server.base, &Client::default());
        let response = model.complete(&first_request(api)).await.unwrap();
        let Err(rejected) = &response.calls[0] else {
            panic!("{api:?}: the call was read");
        };
        assert_eq!(rejected.name, "add", "{api:?}");
        let error = rejected.error.to_string();
        assert!(
            error.contains("the JSON holds more than 2097152 values"),
            "{api:?}: {}",
            &error[..error.len().min(300)]
        );
        assert_eq!(rejected.as_written.as_deref(), Some(arguments.as_str()));
    }
}
