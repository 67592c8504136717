//! A session over `FallbackModel`: Anthropic overloaded (529 `overloaded_error`, no retry
//! left), the run is answered by OpenAI Chat under its own model name; the next run asks
//! Anthropic first again, sent the OpenAI turn as Anthropic's own text. Streamed, an
//! overload inside Anthropic's `200` stream before any text moves on the same way.

use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use toolsmith_harness::agent::{AgentEvent, AgentSession};
use toolsmith_harness::model::{ChatModel as _, FallbackModel};

use super::server::{MockServer, Reply, error_stream, sse_text};
use super::{Api, Client};

/// Every key of `value`, at any depth.
fn keys(value: &Value, found: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            for (key, value) in map {
                found.push(key.clone());
                keys(value, found);
            }
        }
        Value::Array(items) => items.iter().for_each(|item| keys(item, found)),
        _ => {}
    }
}

#[tokio::test]
async fn an_overloaded_anthropic_is_followed_by_openai_and_asked_first_again() {
    let anthropic_server = MockServer::start([
        Reply::json(529, &Api::Anthropic.error_body(529, "Overloaded")),
        Reply::json(200, &Api::Anthropic.text_answer("Claude again")),
    ])
    .await;
    let openai_server =
        MockServer::start([Reply::json(200, &Api::Chat.text_answer("Hello from GPT"))]).await;
    // No retry: the overload is the client's answer at once.
    let client = Client {
        max_retries: 0,
        ..Client::default()
    };
    let model = FallbackModel::new(Api::Anthropic.model(&anthropic_server.base, &client))
        .or_as(Api::Chat.model(&openai_server.base, &client), "gpt-x");
    assert_eq!(model.name(), "fallback(anthropic, openai_chat)");
    let session = AgentSession::builder(model)
        .with_model(Api::Anthropic.model_name())
        .with_system_prompt("Be brief.")
        .build()
        .expect("builds");

    let first = session.send("Who are you?").await.unwrap();
    assert_eq!(first.text, "Hello from GPT");
    let asked = anthropic_server.requests();
    assert_eq!(asked.len(), 1, "no retry, then the next model");
    assert_eq!(asked[0].body["model"], "claude-sonnet-4-5");
    let answered = openai_server.requests();
    assert_eq!(answered.len(), 1);
    Api::Chat.check_request(&answered[0]);
    assert_eq!(answered[0].body["model"], "gpt-x");
    assert_eq!(
        answered[0].body["messages"],
        json!([
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "Who are you?"},
        ])
    );

    // The next run starts with the primary, which is sent the OpenAI turn as its own text.
    let second = session.send("And now?").await.unwrap();
    assert_eq!(second.text, "Claude again");
    let asked = anthropic_server.requests();
    assert_eq!(asked.len(), 2);
    Api::Anthropic.check_request(&asked[1]);
    let body = &asked[1].body;
    assert_eq!(body["model"], "claude-sonnet-4-5");
    assert_eq!(body["system"][0]["text"], "Be brief.", "{body:#}");
    let messages = body["messages"].as_array().expect("messages");
    let roles: Vec<&Value> = messages.iter().map(|message| &message["role"]).collect();
    assert_eq!(roles, ["user", "assistant", "user"], "{body:#}");
    assert_eq!(
        messages[1]["content"],
        json!([{"type": "text", "text": "Hello from GPT"}]),
        "{body:#}"
    );
    // Nothing of OpenAI's format reached Anthropic.
    let mut found = Vec::new();
    keys(body, &mut found);
    for openai_only in [
        "tool_calls",
        "refusal",
        "annotations",
        "finish_reason",
        "choices",
    ] {
        assert!(
            !found.iter().any(|key| key == openai_only),
            "{openai_only} in {body:#}"
        );
    }
    assert_eq!(openai_server.requests().len(), 1);
}

#[tokio::test]
async fn an_overload_inside_anthropic_s_stream_before_any_text_is_followed_by_openai_s_stream() {
    let overloaded = error_stream(
        Api::Anthropic,
        json!({"type": "overloaded_error", "message": "Overloaded"}),
    );
    let anthropic_server = MockServer::start([Reply::sse(&overloaded, 9)]).await;
    let chunk = |delta: Value, finish: Value| {
        (
            None,
            json!({"object": "chat.completion.chunk",
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}),
        )
    };
    let answer = sse_text([
        chunk(
            json!({"role": "assistant", "content": "Hello "}),
            Value::Null,
        ),
        chunk(json!({"content": "from GPT"}), json!("stop")),
    ]) + "data: [DONE]\n\n";
    let openai_server = MockServer::start([Reply::sse(&answer, 11)]).await;
    let client = Client {
        max_retries: 0,
        ..Client::default()
    };
    let model = FallbackModel::new(Api::Anthropic.model(&anthropic_server.base, &client))
        .or_as(Api::Chat.model(&openai_server.base, &client), "gpt-x");
    let deltas = Arc::new(Mutex::new(Vec::new()));
    let seen = Arc::clone(&deltas);
    let session = AgentSession::builder(model)
        .with_model(Api::Anthropic.model_name())
        .with_streaming(true)
        .with_event_handler(move |event: &AgentEvent| {
            if let AgentEvent::TextDelta(text) = event {
                seen.lock().unwrap().push(text.clone());
            }
        })
        .build()
        .expect("builds");

    let run = session.send("Who are you?").await.unwrap();
    assert_eq!(run.text, "Hello from GPT");
    // Only the answer's text: the overload came before any.
    assert_eq!(deltas.lock().unwrap().concat(), "Hello from GPT");
    assert_eq!(anthropic_server.requests().len(), 1);
    let answered = openai_server.requests();
    assert_eq!(answered[0].body["model"], "gpt-x");
    assert_eq!(answered[0].body["stream"], true);
}
