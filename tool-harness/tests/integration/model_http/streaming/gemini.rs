//! Streaming through the Gemini client (`streamGenerateContent?alt=sse`): each event a whole
//! response chunk holding the parts new in it.

use serde_json::{Value, json};
use toolsmith_core::provider::Provider;
use toolsmith_harness::model::{
    ChatModel, ChatResponse, ModelError, ProviderTurn, StopReason, StreamDelta,
};

use super::{
    Api, Client, FIRST_USAGE, MockServer, PiecedCall, Reply, completed, first_request, pieced,
    sse_text, stream,
};

/// Chunks as Gemini streams them, one `data:` event each.
fn chunk_events(chunks: impl IntoIterator<Item = Value>) -> String {
    sse_text(chunks.into_iter().map(|chunk| (None, chunk)))
}

/// A chunk of the first candidate holding `parts`, with `more` fields beside them.
fn candidate_chunk(parts: Value, more: Value) -> Value {
    let mut chunk = json!({"candidates": [{"content": {"role": "model", "parts": parts},
        "index": 0}], "modelVersion": "gemini-2.5-flash", "responseId": "resp-1"});
    if let Value::Object(more) = more {
        for (key, value) in more {
            match key.as_str() {
                "finishReason" => chunk["candidates"][0][key] = value,
                _ => chunk[key] = value,
            }
        }
    }
    chunk
}

/// What `complete` reads when Gemini answers `answer` unstreamed.
async fn read_unstreamed(answer: &Value) -> ChatResponse {
    let server = MockServer::start([Reply::json(200, answer)]).await;
    Api::Gemini
        .model(&server.base, &Client::default())
        .complete(&first_request(Api::Gemini))
        .await
        .expect("the unstreamed answer")
}

/// The body `complete` sends for the first request.
async fn unstreamed_request_body() -> Value {
    let server = MockServer::start([Reply::json(200, &Api::Gemini.text_answer("a"))]).await;
    Api::Gemini
        .model(&server.base, &Client::default())
        .complete(&first_request(Api::Gemini))
        .await
        .expect("an answer");
    server.requests().remove(0).body
}

#[tokio::test]
async fn gemini_streams_the_answer_complete_reads() {
    let text = chunk_events([
        candidate_chunk(
            json!([{"text": "Let me "}]),
            json!({"usageMetadata": {"promptTokenCount": 120, "cachedContentTokenCount": 64,
                "totalTokenCount": 120}}),
        ),
        candidate_chunk(
            json!([{"text": "compute both."}]),
            json!({"usageMetadata": {"promptTokenCount": 120, "candidatesTokenCount": 4,
                "thoughtsTokenCount": 10, "cachedContentTokenCount": 64, "totalTokenCount": 134}}),
        ),
        candidate_chunk(
            json!([
                {"functionCall": {"name": "add", "args": {"a": 2, "b": 3}},
                 "thoughtSignature": "SIG-add"},
                {"functionCall": {"name": "divide", "args": {"a": 1, "b": 0}}}]),
            json!({"usageMetadata": {"promptTokenCount": 120, "candidatesTokenCount": 29,
                "thoughtsTokenCount": 10, "cachedContentTokenCount": 64, "totalTokenCount": 159}}),
        ),
        // The last chunk finishes with an empty text part, which the answer leaves out.
        candidate_chunk(
            json!([{"text": ""}]),
            json!({"finishReason": "STOP",
                "usageMetadata": {"promptTokenCount": 120, "candidatesTokenCount": 30,
                "thoughtsTokenCount": 10, "cachedContentTokenCount": 64, "totalTokenCount": 160}}),
        ),
    ]);
    let streamed = stream(Api::Gemini, Reply::sse(&text, 7), &Client::default()).await;
    let answer = streamed.answer.expect("the streamed answer");
    // The provider's turn included: the text pieces make one part, as unstreamed.
    assert_eq!(answer, completed(Api::Gemini).await);
    assert_eq!(answer.usage, FIRST_USAGE);
    assert_eq!(answer.stop_reason, StopReason::ToolCalls);
    let (text, calls) = pieced(&streamed.deltas);
    assert_eq!(text, "Let me compute both.");
    let expected: Vec<PiecedCall> = vec![
        (None, Some("add".into()), r#"{"a":2,"b":3}"#.into()),
        (None, Some("divide".into()), r#"{"a":1,"b":0}"#.into()),
    ];
    assert_eq!(calls, expected);
    // Each call whole in one delta.
    assert_eq!(streamed.deltas.len(), 4);
    let request = &streamed.request;
    assert_eq!(request.method, "POST");
    assert_eq!(
        request.path,
        "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse"
    );
    assert_eq!(request.header("accept"), Some("text/event-stream"));
    assert_eq!(request.header("x-goog-api-key"), Some(super::super::KEY));
    assert_eq!(request.body, unstreamed_request_body().await);
}

#[tokio::test]
async fn gemini_thoughts_join_and_signatures_stay_on_their_parts() {
    let text = chunk_events([
        candidate_chunk(json!([{"text": "Adding ", "thought": true}]), json!({})),
        candidate_chunk(
            json!([{"text": "two numbers.", "thought": true}, {"text": "2 + 3 "}]),
            json!({}),
        ),
        // A signed piece does not join the text before it, nor the text after it.
        candidate_chunk(
            json!([{"text": "= 5", "thoughtSignature": "SIG-text"}]),
            json!({}),
        ),
        candidate_chunk(json!([{"text": "."}, {"text": ""}]), json!({})),
        // The signature alone, on an empty part at the end.
        candidate_chunk(
            json!([{"text": "", "thoughtSignature": "SIG-end"}]),
            json!({"finishReason": "STOP",
                "usageMetadata": {"promptTokenCount": 20, "candidatesTokenCount": 4,
                "thoughtsTokenCount": 3, "totalTokenCount": 27}}),
        ),
    ]);
    let streamed = stream(Api::Gemini, Reply::sse(&text, 5), &Client::default()).await;
    let answer = streamed.answer.expect("the streamed answer");
    let parts = json!([
        {"text": "Adding two numbers.", "thought": true},
        {"text": "2 + 3 "},
        {"text": "= 5", "thoughtSignature": "SIG-text"},
        {"text": "."},
        {"text": "", "thoughtSignature": "SIG-end"}]);
    assert_eq!(
        answer.provider_turn,
        Some(ProviderTurn {
            provider: Provider::Gemini,
            entries: vec![json!({"role": "model", "parts": parts})],
        })
    );
    let unstreamed = json!({
        "candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP",
            "index": 0}],
        "usageMetadata": {"promptTokenCount": 20, "candidatesTokenCount": 4,
            "thoughtsTokenCount": 3, "totalTokenCount": 27},
        "modelVersion": "gemini-2.5-flash"});
    assert_eq!(answer, read_unstreamed(&unstreamed).await);
    assert_eq!(answer.text.as_deref(), Some("2 + 3 = 5."));
    assert_eq!(answer.usage.output_tokens, 7);
    // The thoughts are not the answer's text.
    assert_eq!(
        streamed.deltas,
        [
            StreamDelta::Text("2 + 3 ".into()),
            StreamDelta::Text("= 5".into()),
            StreamDelta::Text(".".into()),
        ]
    );
}

#[tokio::test]
async fn gemini_calls_with_ids_and_without_arguments() {
    let text = chunk_events([candidate_chunk(
        json!([
            {"functionCall": {"id": "fc-1", "name": "now"}},
            {"functionCall": {"id": "fc-2", "name": "add", "args": {"a": 1, "b": 1}}}]),
        json!({"finishReason": "STOP"}),
    )]);
    let streamed = stream(Api::Gemini, Reply::sse(&text, 11), &Client::default()).await;
    let answer = streamed.answer.expect("the streamed answer");
    assert_eq!(
        streamed.deltas,
        [
            StreamDelta::ToolCallArguments {
                index: 0,
                id: Some("fc-1".into()),
                name: Some("now".into()),
                fragment: "{}".into(),
            },
            StreamDelta::ToolCallArguments {
                index: 1,
                id: Some("fc-2".into()),
                name: Some("add".into()),
                fragment: r#"{"a":1,"b":1}"#.into(),
            },
        ]
    );
    let ids: Vec<&str> = answer
        .calls
        .iter()
        .map(|call| call.as_ref().expect("a readable call").id.as_str())
        .collect();
    assert_eq!(ids, ["fc-1", "fc-2"]);
    assert_eq!(answer.stop_reason, StopReason::ToolCalls);
}

#[tokio::test]
async fn gemini_error_in_the_stream_is_the_api_s_error() {
    let text = chunk_events([
        candidate_chunk(json!([{"text": "Hi"}]), json!({})),
        json!({"error": {"code": 500, "message": "An internal error has occurred.",
            "status": "INTERNAL"}}),
    ]);
    let streamed = stream(Api::Gemini, Reply::sse(&text, 9), &Client::default()).await;
    assert_eq!(
        streamed.answer.expect_err("an error"),
        ModelError::Api {
            provider: "gemini".into(),
            status: 500,
            message: "An internal error has occurred.".into(),
        }
    );
    assert_eq!(streamed.deltas, [StreamDelta::Text("Hi".into())]);
}

#[tokio::test]
async fn gemini_blocked_prompt_streams_as_complete_reads_it() {
    let blocked = json!({"promptFeedback": {"blockReason": "SAFETY"},
        "usageMetadata": {"promptTokenCount": 9, "totalTokenCount": 9},
        "modelVersion": "gemini-2.5-flash", "responseId": "resp-2"});
    let streamed = stream(
        Api::Gemini,
        Reply::sse(&chunk_events([blocked.clone()]), 8),
        &Client::default(),
    )
    .await;
    let answer = streamed.answer.expect("the streamed answer");
    assert_eq!(answer, read_unstreamed(&blocked).await);
    assert_eq!(answer.stop_reason, StopReason::ContentFilter);
    assert_eq!(answer.text, None);
    assert!(answer.calls.is_empty());
    assert_eq!(answer.usage.input_tokens, 9);
    assert!(streamed.deltas.is_empty());
}

#[tokio::test]
async fn gemini_streams_without_an_answer_are_malformed() {
    for (text, expected) in [
        (String::new(), "the stream ended before the answer began"),
        (
            chunk_events([json!({"usageMetadata": {"promptTokenCount": 9}})]),
            "no chunk of the stream carried a candidate or `promptFeedback`",
        ),
        (
            chunk_events([json!({"candidates": {"content": {}}})]),
            "a chunk's `candidates` is not an array",
        ),
        (
            chunk_events([json!({"candidates": [{"content": {"parts": {"text": "Hi"}}}]})]),
            "a chunk's `content.parts` is not an array",
        ),
        (
            chunk_events([json!({"candidates": [{"content": {"parts": ["Hi"]}}]})]),
            "a chunk's part is not an object",
        ),
        (
            chunk_events([json!(["Hi"])]),
            "a chunk is not a JSON object",
        ),
        // Cut off before its last chunk: the answer may be cut too.
        (
            chunk_events([json!({"candidates": [{"content": {"role": "model",
                "parts": [{"text": "Paris is the capi"}]}}]})]),
            "the stream ended before the answer's `finishReason`",
        ),
    ] {
        let streamed = stream(Api::Gemini, Reply::sse(&text, 1000), &Client::default()).await;
        let error = streamed.answer.expect_err("malformed");
        assert!(
            matches!(&error, ModelError::MalformedResponse { provider, reason }
                if provider == "gemini" && reason.contains(expected)),
            "{text:?}: {error}"
        );
    }
}

#[tokio::test]
async fn a_malformed_chunk_is_quoted_short() {
    let long = "x".repeat(100_000);
    let text = chunk_events([json!({"candidates": [{"content": {"parts": [long]}}]})]);
    let streamed = stream(Api::Gemini, Reply::sse(&text, 4096), &Client::default()).await;
    let error = streamed.answer.expect_err("malformed");
    let ModelError::MalformedResponse { reason, .. } = &error else {
        panic!("{error}");
    };
    assert!(
        reason.starts_with("a chunk's part is not an object: \"xxx"),
        "{reason}"
    );
    assert!(reason.ends_with('…') && reason.len() < 200, "{reason}");
}
