//! Streaming through the Anthropic client: the Messages API's events (`message_start`,
//! content blocks started, extended by deltas and stopped, `message_delta`, `message_stop`)
//! assembled into the message `complete` reads.

use serde_json::{Value, json};
use toolsmith_core::provider::Provider;
use toolsmith_harness::model::{ModelError, ProviderTurn, StopReason, StreamDelta};

use super::{Api, Client, PiecedCall, Reply, completed, pieced, sse_text, stream};

/// `events` as Anthropic writes them: each named by its data's `type`.
fn sse(events: &[Value]) -> String {
    sse_text(
        events
            .iter()
            .map(|data| (data["type"].as_str(), data.clone())),
    )
}

/// `message_start`, its usage as the first answer's.
fn message_start() -> Value {
    json!({"type": "message_start", "message": {"id": "msg_1", "type": "message",
        "role": "assistant", "model": "claude-sonnet-4-5", "content": [],
        "stop_reason": null, "stop_sequence": null,
        "usage": {"input_tokens": 56, "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 64, "output_tokens": 1}}})
}

/// `content_block_start` of `block` at `index`.
fn block_start(index: usize, block: Value) -> Value {
    json!({"type": "content_block_start", "index": index, "content_block": block})
}

/// `content_block_delta` of `delta` for block `index`.
fn block_delta(index: usize, delta: Value) -> Value {
    json!({"type": "content_block_delta", "index": index, "delta": delta})
}

/// A piece of a block's text.
fn text_delta(index: usize, text: &str) -> Value {
    block_delta(index, json!({"type": "text_delta", "text": text}))
}

/// A piece of a `tool_use` block's input.
fn input_delta(index: usize, partial_json: &str) -> Value {
    block_delta(
        index,
        json!({"type": "input_json_delta", "partial_json": partial_json}),
    )
}

/// `content_block_stop` of block `index`.
fn block_stop(index: usize) -> Value {
    json!({"type": "content_block_stop", "index": index})
}

/// A `tool_use` block as it starts, its input still empty.
fn tool_use(id: &str, name: &str) -> Value {
    json!({"type": "tool_use", "id": id, "name": name, "input": {}})
}

/// The end of an answer that stopped for its calls, having written `output_tokens`.
fn stopped_for_calls(output_tokens: u64) -> [Value; 2] {
    [
        json!({"type": "message_delta",
            "delta": {"stop_reason": "tool_use", "stop_sequence": null},
            "usage": {"output_tokens": output_tokens}}),
        json!({"type": "message_stop"}),
    ]
}

/// The first answer as Anthropic streams it: each call's input in several pieces (the
/// first empty, as the API sends it), a ping among the blocks.
fn first_answer_events() -> String {
    let mut events = vec![
        message_start(),
        block_start(0, json!({"type": "text", "text": ""})),
        text_delta(0, "Let me "),
        json!({"type": "ping"}),
        text_delta(0, "compute both."),
        block_stop(0),
        block_start(1, tool_use("toolu_add", "add")),
        input_delta(1, ""),
        input_delta(1, "{\"a\":"),
        input_delta(1, "2,\"b\""),
        input_delta(1, ":3}"),
        block_stop(1),
        block_start(2, tool_use("toolu_div", "divide")),
        input_delta(2, "{\"a\":1,"),
        input_delta(2, "\"b\":0}"),
        block_stop(2),
    ];
    events.extend(stopped_for_calls(40));
    sse(&events)
}

/// The calls of the first answer as the deltas must piece them together.
fn first_anthropic_calls() -> Vec<PiecedCall> {
    vec![
        (
            Some("toolu_add".into()),
            Some("add".into()),
            r#"{"a":2,"b":3}"#.into(),
        ),
        (
            Some("toolu_div".into()),
            Some("divide".into()),
            r#"{"a":1,"b":0}"#.into(),
        ),
    ]
}

#[tokio::test]
async fn streams_the_answer_complete_reads() {
    let reply = Reply::sse(&first_answer_events(), 7);
    let streamed = stream(Api::Anthropic, reply, &Client::default()).await;
    let answer = streamed.answer.expect("the streamed answer");
    // The content blocks too (`provider_turn`): the turn goes back as the model made it.
    assert_eq!(answer, completed(Api::Anthropic).await);
    let (text, calls) = pieced(&streamed.deltas);
    assert_eq!(text, "Let me compute both.");
    assert_eq!(calls, first_anthropic_calls());
    // Each call's id and name are reported as its block starts, before any of its input.
    assert_eq!(
        streamed.deltas[2],
        StreamDelta::ToolCallArguments {
            index: 0,
            id: Some("toolu_add".into()),
            name: Some("add".into()),
            fragment: String::new(),
        }
    );
    Api::Anthropic.check_request(&streamed.request);
    assert_eq!(streamed.request.body["stream"], true);
    assert_eq!(streamed.request.header("accept"), Some("text/event-stream"));
}

/// A citation of a text block, as a document the request carried is cited.
fn citation() -> Value {
    json!({"type": "char_location", "cited_text": "2 + 3", "document_index": 0,
        "document_title": "Sums", "start_char_index": 0, "end_char_index": 5})
}

#[tokio::test]
async fn thinking_and_citations_are_kept_and_thinking_is_not_text() {
    let mut events = vec![
        message_start(),
        block_start(0, json!({"type": "thinking", "thinking": ""})),
        block_delta(
            0,
            json!({"type": "thinking_delta", "thinking": "Two sums; "}),
        ),
        block_delta(
            0,
            json!({"type": "thinking_delta", "thinking": "the tools do them."}),
        ),
        block_delta(0, json!({"type": "signature_delta", "signature": "SIG-1"})),
        block_stop(0),
        block_start(
            1,
            json!({"type": "redacted_thinking", "data": "REDACTED-1"}),
        ),
        block_stop(1),
        block_start(2, json!({"type": "text", "text": ""})),
        text_delta(2, "Adding."),
        block_delta(
            2,
            json!({"type": "citations_delta", "citation": citation()}),
        ),
        block_stop(2),
        block_start(3, tool_use("toolu_add", "add")),
        input_delta(3, "{\"a\":2,\"b\":3}"),
        block_stop(3),
    ];
    events.extend(stopped_for_calls(30));
    let streamed = stream(
        Api::Anthropic,
        Reply::sse(&sse(&events), 11),
        &Client::default(),
    )
    .await;
    let answer = streamed.answer.expect("the streamed answer");
    assert_eq!(
        answer.provider_turn,
        Some(ProviderTurn {
            provider: Provider::Anthropic,
            entries: vec![json!({"role": "assistant", "content": [
                {"type": "thinking", "thinking": "Two sums; the tools do them.",
                    "signature": "SIG-1"},
                {"type": "redacted_thinking", "data": "REDACTED-1"},
                {"type": "text", "text": "Adding.", "citations": [citation()]},
                {"type": "tool_use", "id": "toolu_add", "name": "add",
                    "input": {"a": 2, "b": 3}}]})],
        })
    );
    assert_eq!(answer.text.as_deref(), Some("Adding."));
    assert_eq!(answer.stop_reason, StopReason::ToolCalls);
    assert_eq!(answer.usage.output_tokens, 30);
    let (text, calls) = pieced(&streamed.deltas);
    assert_eq!(text, "Adding.");
    assert_eq!(
        calls,
        [(
            Some("toolu_add".into()),
            Some("add".into()),
            r#"{"a":2,"b":3}"#.into()
        )]
    );
}

#[tokio::test]
async fn an_error_event_is_the_api_s_error_with_the_status_its_type_means() {
    let events = [
        message_start(),
        block_start(0, json!({"type": "text", "text": ""})),
        text_delta(0, "Hi"),
        json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}),
    ];
    let streamed = stream(
        Api::Anthropic,
        Reply::sse(&sse(&events), 13),
        &Client::default(),
    )
    .await;
    assert_eq!(
        streamed.answer.expect_err("an error"),
        ModelError::Api {
            provider: "anthropic".into(),
            status: 529,
            message: "Overloaded".into(),
        }
    );
    // What came before the error was reported.
    assert_eq!(streamed.deltas, [StreamDelta::Text("Hi".into())]);
}

#[tokio::test]
async fn a_call_cut_off_is_rejected_with_what_was_written() {
    let partial = r#"{"a":2,"b":"#;
    let cut = [
        message_start(),
        block_start(0, tool_use("toolu_add", "add")),
        input_delta(0, r#"{"a":2,"#),
        input_delta(0, r#""b":"#),
    ];
    // The stream cut off: no answer, since the call may be cut.
    let streamed = stream(
        Api::Anthropic,
        Reply::sse(&sse(&cut), 7),
        &Client::default(),
    )
    .await;
    let error = streamed.answer.expect_err("no answer");
    assert!(
        matches!(&error, ModelError::MalformedResponse { reason, .. }
            if reason == "the stream ended before its message_stop event"),
        "{error}"
    );
    // The answer ended by the API at its output limit, inside the call: whole, with the call
    // rejected as it was written.
    let mut events = cut.to_vec();
    events.extend([
        block_stop(0),
        json!({"type": "message_delta",
            "delta": {"stop_reason": "max_tokens", "stop_sequence": null},
            "usage": {"output_tokens": 9}}),
        json!({"type": "message_stop"}),
    ]);
    let streamed = stream(
        Api::Anthropic,
        Reply::sse(&sse(&events), 7),
        &Client::default(),
    )
    .await;
    let answer = streamed.answer.expect("the answer");
    assert_eq!(answer.stop_reason, StopReason::MaxTokens);
    // Sent back, the cut call's input is an object, as the API requires.
    let turn = answer.provider_turn.as_ref().expect("the provider's turn");
    assert_eq!(turn.entries[0]["content"][0]["input"], json!({}));
    assert_eq!(answer.calls.len(), 1);
    let rejected = answer.calls[0].as_ref().expect_err("a call cut off");
    assert_eq!(
        (rejected.id.as_str(), rejected.name.as_str()),
        ("toolu_add", "add")
    );
    assert_eq!(rejected.as_written.as_deref(), Some(partial));
    let (_, calls) = pieced(&streamed.deltas);
    assert_eq!(
        calls,
        [(
            Some("toolu_add".into()),
            Some("add".into()),
            partial.to_owned()
        )]
    );
}

#[tokio::test]
async fn blocks_out_of_place_are_malformed() {
    let cases = [
        (
            vec![message_start(), text_delta(3, "Hi")],
            "a content_block_delta for content block 3, which never started",
        ),
        (
            vec![
                message_start(),
                block_start(1, json!({"type": "text", "text": ""})),
            ],
            "content block 1 started where block 0 was next",
        ),
        (
            vec![
                message_start(),
                block_start(0, json!({"type": "text", "text": ""})),
                block_stop(0),
                text_delta(0, "late"),
            ],
            "a content_block_delta for content block 0, after its content_block_stop",
        ),
        (
            vec![
                message_start(),
                block_start(0, tool_use("toolu_add", "add")),
                text_delta(0, "Hi"),
            ],
            "a text_delta for content block 0, a `tool_use` block",
        ),
        (
            vec![block_start(0, json!({"type": "text", "text": ""}))],
            "a content_block_start before message_start",
        ),
    ];
    for (events, expected) in cases {
        let streamed = stream(
            Api::Anthropic,
            Reply::sse(&sse(&events), 1000),
            &Client::default(),
        )
        .await;
        let error = streamed.answer.expect_err("malformed");
        assert!(
            matches!(&error, ModelError::MalformedResponse { provider, reason }
                if provider == "anthropic" && reason == expected),
            "{expected:?}: {error}"
        );
    }
}
