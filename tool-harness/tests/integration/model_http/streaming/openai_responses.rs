//! Streaming through the OpenAI Responses client.

use serde_json::{Value, json};
use toolsmith_harness::model::ModelError;

use super::super::conversation::calls_answer;
use super::super::server::{Reply, sse_text};
use super::super::{Api, Client};
use super::{completed, first_calls, pieced, stream};

/// One Responses event: its `type` both as the SSE event's name and in its data.
fn event(kind: &str, mut data: Value) -> (Option<&str>, Value) {
    data["type"] = json!(kind);
    (Some(kind), data)
}

/// The first answer as the Responses API streams it, ending with `last` (the whole
/// response in `response.completed`, unless a test ends it otherwise).
fn events(last: Option<(Option<&str>, Value)>) -> String {
    let whole = calls_answer(Api::Responses);
    let mut begun = whole.clone();
    begun["status"] = json!("in_progress");
    begun["output"] = json!([]);
    let call = |index: u64, id: &str, call_id: &str, name: &str| {
        event(
            "response.output_item.added",
            json!({"output_index": index, "item": {"type": "function_call", "id": id,
                "call_id": call_id, "name": name, "arguments": "", "status": "in_progress"}}),
        )
    };
    let arguments = |index: u64, id: &str, delta: &str| {
        event(
            "response.function_call_arguments.delta",
            json!({"output_index": index, "item_id": id, "delta": delta}),
        )
    };
    let text = |delta: &str| {
        event(
            "response.output_text.delta",
            json!({"output_index": 0, "item_id": "msg_1", "content_index": 0, "delta": delta}),
        )
    };
    let mut all = vec![
        event("response.created", json!({"response": begun})),
        event(
            "response.output_item.added",
            json!({"output_index": 0, "item": {"type": "message", "id": "msg_1",
                "status": "in_progress", "role": "assistant", "content": []}}),
        ),
        text("Let me "),
        text("compute both."),
        event(
            "response.output_item.done",
            json!({"output_index": 0, "item": whole["output"][0]}),
        ),
        call(1, "fc_1", "call_add", "add"),
        arguments(1, "fc_1", "{\"a\":2,"),
        arguments(1, "fc_1", "\"b\":3}"),
        call(2, "fc_2", "call_div", "divide"),
        arguments(2, "fc_2", "{\"a\":1,\"b\":0}"),
    ];
    all.extend(last.or_else(|| Some(event("response.completed", json!({"response": whole})))));
    sse_text(all)
}

#[tokio::test]
async fn openai_responses_streams_the_answer_complete_reads() {
    let streamed = stream(
        Api::Responses,
        Reply::sse(&events(None), 7),
        &Client::default(),
    )
    .await;
    let answer = streamed.answer.expect("the streamed answer");
    assert_eq!(answer, completed(Api::Responses).await);
    let (text, calls) = pieced(&streamed.deltas);
    assert_eq!(text, "Let me compute both.");
    assert_eq!(calls, first_calls());
    assert_eq!(streamed.request.path, "/v1/responses");
    assert_eq!(streamed.request.body["stream"], true);
}

#[tokio::test]
async fn a_failed_response_or_an_error_event_is_the_api_s_error() {
    let failed = event(
        "response.failed",
        json!({"response": {"status": "failed",
            "error": {"code": "server_error", "message": "The model crashed."}, "output": []}}),
    );
    let error = event(
        "error",
        json!({"code": "rate_limit_exceeded", "message": "Slow down.", "param": null}),
    );
    // As the API also sends it: the error nested.
    let nested = event(
        "error",
        json!({"sequence_number": 2, "error": {"type": "too_many_requests",
            "code": "too_many_requests", "message": "Too Many Requests", "param": null}}),
    );
    let rate_limited = |message: &str| ModelError::RateLimited {
        provider: "openai_responses".into(),
        retry_after: None,
        message: message.into(),
    };
    for (last, expected) in [
        (
            failed,
            ModelError::Api {
                provider: "openai_responses".into(),
                status: 500,
                message: "The model crashed.".into(),
            },
        ),
        (error, rate_limited("Slow down.")),
        (nested, rate_limited("Too Many Requests")),
    ] {
        let streamed = stream(
            Api::Responses,
            Reply::sse(&events(Some(last)), 64),
            &Client::default(),
        )
        .await;
        let error = streamed.answer.expect_err("an error");
        assert_eq!(error, expected);
        assert!(error.is_transient());
    }
}

#[tokio::test]
async fn a_stream_cut_off_before_its_response_is_no_answer() {
    // The last call's arguments may be cut too: nothing may run on them.
    let cut = events(Some(event(
        "response.in_progress",
        json!({"response": {"status": "in_progress"}}),
    )));
    let unknown = sse_text([event(
        "response.function_call_arguments.delta",
        json!({"output_index": 4, "item_id": "fc_9", "delta": "{"}),
    )]);
    for (text, expected) in [
        (
            cut,
            "the stream ended before its `response.completed` event",
        ),
        (
            unknown,
            "arguments arrived for a call the stream had not begun",
        ),
    ] {
        let streamed = stream(Api::Responses, Reply::sse(&text, 64), &Client::default()).await;
        let error = streamed.answer.expect_err("malformed");
        assert!(
            matches!(&error, ModelError::MalformedResponse { reason, .. } if reason.contains(expected)),
            "{error}"
        );
    }
}

#[tokio::test]
async fn events_named_only_by_their_sse_name_are_read_and_empty_pieces_not_reported() {
    let text = sse_text([
        (
            Some("response.output_text.delta"),
            json!({"output_index": 0, "delta": ""}),
        ),
        (
            Some("response.output_text.delta"),
            json!({"output_index": 0, "delta": "unstreamed"}),
        ),
        (
            Some("response.completed"),
            json!({"response": Api::Responses.text_answer("unstreamed")}),
        ),
    ]);
    let streamed = stream(Api::Responses, Reply::sse(&text, 16), &Client::default()).await;
    let answer = streamed.answer.expect("the answer");
    assert_eq!(answer.text.as_deref(), Some("unstreamed"));
    assert_eq!(
        streamed.deltas,
        [toolsmith_harness::model::StreamDelta::Text(
            "unstreamed".into()
        )]
    );
}

#[tokio::test]
async fn a_call_announced_twice_at_one_output_index_is_malformed() {
    // The second announcement of output 1 took the next call's place among the deltas, and
    // the call at output 2 was then reported under the same index: two calls' names and
    // arguments pieced into one.
    let call = |index: u64, call_id: &str, name: &str| {
        event(
            "response.output_item.added",
            json!({"output_index": index, "item": {"type": "function_call",
                "call_id": call_id, "name": name, "arguments": ""}}),
        )
    };
    let text = sse_text([
        call(1, "call_add", "add"),
        call(1, "call_add", "add"),
        call(2, "call_div", "divide"),
        event(
            "response.completed",
            json!({"response": calls_answer(Api::Responses)}),
        ),
    ]);
    let streamed = stream(Api::Responses, Reply::sse(&text, 64), &Client::default()).await;
    let error = streamed.answer.expect_err("malformed");
    assert!(
        matches!(&error, ModelError::MalformedResponse { reason, .. }
            if reason.contains("output 1") && reason.contains("twice")),
        "{error}"
    );
    let indexes: Vec<usize> = streamed
        .deltas
        .iter()
        .filter_map(|delta| match delta {
            toolsmith_harness::model::StreamDelta::ToolCallArguments { index, .. } => Some(*index),
            _ => None,
        })
        .collect();
    assert_eq!(indexes, [0], "{:?}", streamed.deltas);
}
