//! Streamed answers (`ChatModel::stream`) through each client: the deltas as they arrive,
//! and the answer assembled from them, which must be the answer `complete` reads from the
//! same answer unstreamed. Events are sent cut across chunks, as a network cuts them.

mod anthropic;
mod gemini;
mod openai_responses;
mod retries;
mod split_anywhere;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use toolsmith_harness::model::{ChatModel, ChatResponse, ModelError, StreamDelta};

use super::conversation::{FIRST_USAGE, calls_answer, first_request};
use super::server::{MockServer, Recorded, Reply, sse_text};
use super::{Api, Client};

/// What a stream reported and gave, and the request it sent.
pub(super) struct Streamed {
    pub(super) deltas: Vec<StreamDelta>,
    pub(super) answer: Result<ChatResponse, ModelError>,
    pub(super) request: Recorded,
}

/// `api`'s client streaming `reply`.
pub(super) async fn stream(api: Api, reply: Reply, client: &Client) -> Streamed {
    let server = MockServer::start([reply]).await;
    let model = api.model(&server.base, client);
    let mut deltas = Vec::new();
    let answer = model
        .stream(&first_request(api), &mut |delta| deltas.push(delta))
        .await;
    let mut requests = server.requests();
    assert_eq!(requests.len(), 1, "{api:?}");
    Streamed {
        deltas,
        answer,
        request: requests.remove(0),
    }
}

/// What `complete` reads from `api`'s unstreamed first answer.
pub(super) async fn completed(api: Api) -> ChatResponse {
    let server = MockServer::start([Reply::json(200, &calls_answer(api))]).await;
    api.model(&server.base, &Client::default())
        .complete(&first_request(api))
        .await
        .expect("the unstreamed answer")
}

/// A call as its deltas piece it together: `(id, name, arguments)`.
pub(super) type PiecedCall = (Option<String>, Option<String>, String);

/// The text the deltas carried, and each call pieced together.
pub(super) fn pieced(deltas: &[StreamDelta]) -> (String, Vec<PiecedCall>) {
    let mut text = String::new();
    let mut calls: Vec<PiecedCall> = Vec::new();
    for delta in deltas {
        match delta {
            StreamDelta::Text(piece) => text.push_str(piece),
            StreamDelta::ToolCallArguments {
                index,
                id,
                name,
                fragment,
            } => {
                if *index == calls.len() {
                    calls.push((None, None, String::new()));
                }
                let call = &mut calls[*index];
                if id.is_some() {
                    call.0.clone_from(id);
                }
                if name.is_some() {
                    call.1.clone_from(name);
                }
                call.2.push_str(fragment);
            }
            other => panic!("an unexpected delta: {other:?}"),
        }
    }
    (text, calls)
}

/// The calls of the first answer as the deltas must piece them together.
pub(super) fn first_calls() -> Vec<PiecedCall> {
    vec![
        (
            Some("call_add".into()),
            Some("add".into()),
            r#"{"a":2,"b":3}"#.into(),
        ),
        (
            Some("call_div".into()),
            Some("divide".into()),
            r#"{"a":1,"b":0}"#.into(),
        ),
    ]
}

/// The first answer as OpenAI Chat streams it.
fn chat_events() -> String {
    let chunk = |choice: Value| {
        (
            None,
            json!({"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1_700_000_000,
                "model": "gpt-4.1-mini", "choices": [choice]}),
        )
    };
    let delta = |delta: Value| chunk(json!({"index": 0, "delta": delta, "finish_reason": null}));
    let mut text = sse_text([
        delta(json!({"role": "assistant", "content": ""})),
        delta(json!({"content": "Let me "})),
        delta(json!({"content": "compute both."})),
        delta(
            json!({"tool_calls": [{"index": 0, "id": "call_add", "type": "function",
            "function": {"name": "add", "arguments": ""}}]}),
        ),
        delta(json!({"tool_calls": [{"index": 0, "function": {"arguments": "{\"a\":2,"}}]})),
        delta(json!({"tool_calls": [{"index": 0, "function": {"arguments": "\"b\":3}"}}]})),
        delta(
            json!({"tool_calls": [{"index": 1, "id": "call_div", "type": "function",
            "function": {"name": "divide", "arguments": "{\"a\":1,\"b\":0}"}}]}),
        ),
        chunk(json!({"index": 0, "delta": {}, "finish_reason": "tool_calls"})),
        (
            None,
            json!({"id": "chatcmpl-1", "object": "chat.completion.chunk", "choices": [],
            "usage": {"prompt_tokens": 120, "completion_tokens": 40, "total_tokens": 160,
                "prompt_tokens_details": {"cached_tokens": 64}}}),
        ),
    ]);
    text.push_str("data: [DONE]\n\n");
    text
}

/// An OpenAI Chat stream's chunk: `delta` of choice `index`, with its `finish_reason`.
fn chat_chunk(index: u32, delta: Value, finish: Value) -> (Option<&'static str>, Value) {
    (
        None,
        json!({"choices": [{"index": index, "delta": delta, "finish_reason": finish}]}),
    )
}
/// A Chat stream of `pieces` that ends as the first answer's does: the calls finished by
/// the model that answered, the answer's usage, `[DONE]`.
fn first_answer_stream(pieces: impl IntoIterator<Item = (Option<&'static str>, Value)>) -> String {
    let finished = (
        None,
        json!({"model": "gpt-4.1-mini",
        "choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}],
        "usage": {"prompt_tokens": 120, "completion_tokens": 40,
            "prompt_tokens_details": {"cached_tokens": 64}}}),
    );
    sse_text(pieces.into_iter().chain([finished])) + "data: [DONE]\n\n"
}

/// Streams `text` and checks it gives the first answer, as `complete` reads it, and its calls
/// as deltas.
async fn assert_streams_the_first_answer(text: &str) {
    let streamed = stream(Api::Chat, Reply::sse(text, 11), &Client::default()).await;
    assert_eq!(
        streamed.answer.expect("the streamed answer"),
        completed(Api::Chat).await,
        "{text}"
    );
    assert_eq!(pieced(&streamed.deltas).1, first_calls(), "{text}");
}

#[tokio::test]
async fn openai_chat_streams_the_answer_complete_reads() {
    let streamed = stream(Api::Chat, Reply::sse(&chat_events(), 7), &Client::default()).await;
    let answer = streamed.answer.expect("the streamed answer");
    assert_eq!(answer, completed(Api::Chat).await);
    assert_eq!(answer.usage, FIRST_USAGE);
    let (text, calls) = pieced(&streamed.deltas);
    assert_eq!(text, "Let me compute both.");
    assert_eq!(calls, first_calls());
    assert_eq!(streamed.request.body["stream"], true);
    assert_eq!(
        streamed.request.body["stream_options"],
        json!({"include_usage": true})
    );
    assert_eq!(streamed.request.header("accept"), Some("text/event-stream"));
}

#[tokio::test]
async fn tool_call_pieces_without_an_index_are_matched_by_their_id() {
    // Gemini's OpenAI-compatible endpoint sends no `index`: a new id begins a call, and a
    // piece without one (or with an empty one) continues the last.
    let delta = |delta: Value| chat_chunk(0, delta, Value::Null);
    let text = first_answer_stream([
        delta(json!({"role": "assistant", "content": "Let me compute both."})),
        delta(json!({"tool_calls": [{"id": "call_add", "type": "function",
            "function": {"name": "add", "arguments": "{\"a\":2,\"b\":3}"}}]})),
        delta(json!({"tool_calls": [{"id": "call_div", "type": "function",
            "function": {"name": "divide", "arguments": "{\"a\":1,"}}]})),
        delta(json!({"tool_calls": [{"id": "", "function": {"arguments": "\"b\":0}"}}]})),
    ]);
    assert_streams_the_first_answer(&text).await;
}

#[tokio::test]
async fn calls_that_share_an_index_are_told_apart_by_their_ids() {
    // Some servers (Ollama through LiteLLM, SGLang, proxies flattening parallel calls) send
    // every call under index 0: a piece opening a call of another id or tool begins the next
    // call, and the pieces after it continue that call.
    let delta = |delta: Value| chat_chunk(0, delta, Value::Null);
    let whole = first_answer_stream([
        delta(json!({"role": "assistant", "content": "Let me compute both."})),
        delta(
            json!({"tool_calls": [{"index": 0, "id": "call_add", "type": "function",
            "function": {"name": "add", "arguments": "{\"a\":2,\"b\":3}"}}]}),
        ),
        delta(
            json!({"tool_calls": [{"index": 0, "id": "call_div", "type": "function",
            "function": {"name": "divide", "arguments": "{\"a\":1,\"b\":0}"}}]}),
        ),
    ]);
    let in_pieces = first_answer_stream([
        delta(json!({"role": "assistant", "content": "Let me compute both."})),
        delta(
            json!({"tool_calls": [{"index": 0, "id": "call_add", "type": "function",
            "function": {"name": "add", "arguments": ""}}]}),
        ),
        delta(
            json!({"tool_calls": [{"index": 0, "function": {"arguments": "{\"a\":2,\"b\":3}"}}]}),
        ),
        delta(
            json!({"tool_calls": [{"index": 0, "id": "call_div", "type": "function",
            "function": {"name": "divide", "arguments": "{\"a\":1,"}}]}),
        ),
        delta(json!({"tool_calls": [{"index": 0, "function": {"arguments": "\"b\":0}"}}]})),
    ]);
    for text in [whole, in_pieces] {
        assert_streams_the_first_answer(&text).await;
    }
}

#[tokio::test]
async fn call_arguments_sent_as_an_object_are_read_as_complete_reads_them() {
    // Some servers write a call's arguments as a JSON object rather than its text; `complete`
    // reads them, and so must the stream (they were dropped, and the call ran without them).
    let delta = |delta: Value| chat_chunk(0, delta, Value::Null);
    let text = first_answer_stream([
        delta(json!({"role": "assistant", "content": "Let me compute both."})),
        delta(
            json!({"tool_calls": [{"index": 0, "id": "call_add", "type": "function",
            "function": {"name": "add", "arguments": {"a": 2, "b": 3}}}]}),
        ),
        delta(
            json!({"tool_calls": [{"index": 1, "id": "call_div", "type": "function",
            "function": {"name": "divide", "arguments": {"a": 1, "b": 0}}}]}),
        ),
    ]);
    assert_streams_the_first_answer(&text).await;
}

#[tokio::test]
async fn a_legacy_function_call_and_content_parts_stream_as_complete_reads_them() {
    // Older servers stream the deprecated single `function_call`, and some write `content`
    // as parts; `complete` reads both, and so must the stream (they were dropped).
    let delta = |delta: Value, finish: Value| chat_chunk(0, delta, finish);
    let text = sse_text([
        delta(
            json!({"role": "assistant", "content": [{"type": "text", "text": "Let me "}]}),
            Value::Null,
        ),
        delta(
            json!({"content": [{"type": "text", "text": "add."}]}),
            Value::Null,
        ),
        delta(
            json!({"function_call": {"name": "add", "arguments": ""}}),
            Value::Null,
        ),
        delta(
            json!({"function_call": {"arguments": "{\"a\":2,"}}),
            Value::Null,
        ),
        delta(
            json!({"function_call": {"arguments": "\"b\":3}"}}),
            json!("function_call"),
        ),
    ]) + "data: [DONE]\n\n";
    let whole = json!({"choices": [{"index": 0, "finish_reason": "function_call",
        "message": {"role": "assistant", "content": [{"type": "text", "text": "Let me add."}],
            "function_call": {"name": "add", "arguments": "{\"a\":2,\"b\":3}"}}}]});
    let server = MockServer::start([Reply::json(200, &whole)]).await;
    let completed = Api::Chat
        .model(&server.base, &Client::default())
        .complete(&first_request(Api::Chat))
        .await
        .expect("the unstreamed answer");
    assert_eq!(completed.calls.len(), 1);
    let streamed = stream(Api::Chat, Reply::sse(&text, 11), &Client::default()).await;
    assert_eq!(streamed.answer.expect("the streamed answer"), completed);
    let (text, calls) = pieced(&streamed.deltas);
    assert_eq!(text, "Let me add.");
    assert_eq!(
        calls,
        [(None, Some("add".to_owned()), r#"{"a":2,"b":3}"#.to_owned())]
    );
}

#[tokio::test]
async fn events_without_data_are_passed_over() {
    // Proxies keep a quiet stream alive with empty `data:` lines; an event that carries no
    // data carries no chunk, and the stream goes on.
    let mut text = String::from("data:\n\n");
    for event in chat_events().split_inclusive("\n\n") {
        text.push_str(event);
        text.push_str("data: \n\nevent: ping\ndata:\n\n");
    }
    let streamed = stream(Api::Chat, Reply::sse(&text, 7), &Client::default()).await;
    assert_eq!(
        streamed.answer.expect("the streamed answer"),
        completed(Api::Chat).await
    );
    assert_eq!(pieced(&streamed.deltas).1, first_calls());
}

#[tokio::test]
async fn an_error_in_the_stream_is_the_api_s_error_with_the_status_its_type_means() {
    let text = sse_text([
        (
            None,
            json!({"choices": [{"index": 0, "delta": {"content": "Hi"}, "finish_reason": null}]}),
        ),
        (
            None,
            json!({"error": {"message": "The server had an error while processing your request.",
                "type": "server_error", "param": null, "code": null}}),
        ),
    ]);
    let streamed = stream(Api::Chat, Reply::sse(&text, 1000), &Client::default()).await;
    let error = streamed.answer.expect_err("an error");
    assert_eq!(
        error,
        ModelError::Api {
            provider: "openai_chat".into(),
            status: 500,
            message: "The server had an error while processing your request.".into(),
        }
    );
    assert!(error.is_transient());
    // What came before the error was reported.
    assert_eq!(streamed.deltas, [StreamDelta::Text("Hi".into())]);
}

#[tokio::test]
async fn an_error_given_as_text_in_the_stream_is_quoted_as_it_is() {
    // It names no type: it keeps the answer's 200, and is not retried.
    let text = "data: {\"error\": \"the context is full\"}\n\n";
    let streamed = stream(Api::Chat, Reply::sse(text, 1000), &Client::default()).await;
    assert_eq!(
        streamed.answer.expect_err("an error"),
        ModelError::Api {
            provider: "openai_chat".into(),
            status: 200,
            message: "the context is full".into(),
        }
    );
}

#[tokio::test]
async fn a_long_error_in_the_stream_is_quoted_cut() {
    // Not retried: each is the only answer the server has.
    let client = Client {
        max_retries: 0,
        ..Client::default()
    };
    let long = "e".repeat(100_000);
    let events = [
        sse_text([(None, json!({"error": {"message": long}}))]),
        sse_text([(None, json!({"error": long}))]),
        sse_text([(Some("error"), json!({"code": 500, "detail": long}))]),
    ];
    for (text, status) in events.into_iter().zip([200, 200, 500]) {
        let streamed = stream(Api::Chat, Reply::sse(&text, 4096), &client).await;
        match streamed.answer.expect_err("an error") {
            ModelError::Api {
                status: given,
                message,
                ..
            } => {
                assert_eq!(given, status);
                assert!(message.chars().count() <= 2_001, "{}", message.len());
                assert!(message.ends_with('…'), "{}", &message[..50]);
            }
            other => panic!("{other:?}"),
        }
    }
    // A failed response, streamed or whole.
    let failed = json!({"id": "resp_1", "object": "response", "status": "failed", "output": [],
        "error": {"code": "server_error", "message": long}});
    let text = sse_text([(
        Some("response.failed"),
        json!({"type": "response.failed", "response": failed}),
    )]);
    let streamed = stream(Api::Responses, Reply::sse(&text, 4096), &client).await;
    let server = MockServer::start([Reply::json(200, &failed)]).await;
    let whole = Api::Responses
        .model(&server.base, &client)
        .complete(&first_request(Api::Responses))
        .await;
    for answer in [streamed.answer, whole] {
        match answer.expect_err("an error") {
            // `server_error`: the status it means.
            ModelError::Api {
                status: 500,
                message,
                ..
            } => assert!(message.chars().count() <= 2_001, "{}", message.len()),
            other => panic!("{other:?}"),
        }
    }
}

#[tokio::test]
async fn only_the_first_choice_or_candidate_is_streamed() {
    // With `n` (or Gemini's `candidateCount`) above 1, each choice streams under its own
    // index, alone in its chunk: the answer is the first, as `complete` reads it.
    let other = |delta: Value, finish: Value| chat_chunk(1, delta, finish);
    let chat = sse_text([
        other(
            json!({"role": "assistant", "content": "Another answer"}),
            Value::Null,
        ),
        other(
            json!({"tool_calls": [{"index": 0, "id": "call_other", "type": "function",
                "function": {"name": "add", "arguments": "{}"}}]}),
            json!("length"),
        ),
    ]) + &chat_events();
    let streamed = stream(Api::Chat, Reply::sse(&chat, 13), &Client::default()).await;
    assert_eq!(streamed.answer.expect("read"), completed(Api::Chat).await);
    let (text, calls) = pieced(&streamed.deltas);
    assert_eq!(text, "Let me compute both.");
    assert_eq!(calls, first_calls());

    let candidate = |index: u64, text: &str, finish: Option<&str>| {
        let mut candidate =
            json!({"content": {"role": "model", "parts": [{"text": text}]}, "index": index});
        if let Some(finish) = finish {
            candidate["finishReason"] = json!(finish);
        }
        candidate
    };
    let gemini = sse_text([
        (
            None,
            json!({"candidates": [candidate(0, "Zero ", None), candidate(1, "One ", None)]}),
        ),
        (
            None,
            json!({"candidates": [candidate(1, "ends.", Some("STOP"))]}),
        ),
        (
            None,
            json!({"candidates": [candidate(0, "ends.", Some("STOP"))]}),
        ),
    ]);
    let streamed = stream(Api::Gemini, Reply::sse(&gemini, 13), &Client::default()).await;
    assert_eq!(
        streamed.answer.expect("read").text.as_deref(),
        Some("Zero ends.")
    );
    assert_eq!(pieced(&streamed.deltas).0, "Zero ends.");
}

#[tokio::test]
async fn a_null_error_beside_a_chunk_is_no_error() {
    let chat = sse_text([(
        None,
        json!({"object": "chat.completion.chunk", "error": null, "choices": [{"index": 0,
            "delta": {"content": "5"}, "finish_reason": "stop"}]}),
    )]) + "data: [DONE]\n\n";
    let gemini = sse_text([(
        None,
        json!({"error": null, "candidates": [{"content": {"role": "model",
            "parts": [{"text": "5"}]}, "finishReason": "STOP", "index": 0}]}),
    )]);
    for (api, text) in [(Api::Chat, chat), (Api::Gemini, gemini)] {
        let streamed = stream(api, Reply::sse(&text, 9), &Client::default()).await;
        let answer = streamed.answer.expect("an answer");
        assert_eq!(answer.text.as_deref(), Some("5"), "{api:?}");
    }
}

#[tokio::test]
async fn a_stream_without_an_answer_or_with_bad_data_is_malformed() {
    for (text, expected) in [
        ("", "the stream ended before the answer began"),
        (
            ": keep-alive\n\n",
            "the stream ended before the answer began",
        ),
        ("data: {\"choices\": [\n\n", "an event's data is not JSON"),
        (
            "data: {\"choices\": [{\"delta\": {\"tool_calls\": [{\"index\": 5}]}}]}\n\n",
            "a tool call's piece has index 5, after 0 calls",
        ),
        // Cut off before its end, the last call's arguments may be cut too: no answer.
        (
            "data: {\"choices\": [{\"delta\": {\"tool_calls\": [{\"index\": 0, \"id\": \"c\", \"function\": {\"name\": \"rm\", \"arguments\": \"{\\\"path\\\": \\\"/tmp\"}}]}}]}\n\n",
            "the stream ended before the answer's `finish_reason`",
        ),
    ] {
        let streamed = stream(Api::Chat, Reply::sse(text, 1000), &Client::default()).await;
        let error = streamed.answer.expect_err("malformed");
        assert!(
            matches!(&error, ModelError::MalformedResponse { reason, .. } if reason.contains(expected)),
            "{text:?}: {error}"
        );
    }
}

#[tokio::test]
async fn a_server_that_does_not_stream_gives_its_whole_answer() {
    // A server that ignores `"stream": true` answers as `complete` would: that answer, its
    // text reported as one piece.
    for api in Api::ALL {
        let reply = Reply::json(200, &api.text_answer("unstreamed"));
        let streamed = stream(api, reply, &Client::default()).await;
        let answer = streamed.answer.expect("the whole answer");
        assert_eq!(answer.text.as_deref(), Some("unstreamed"), "{api:?}");
        assert_eq!(
            streamed.deltas,
            [StreamDelta::Text("unstreamed".into())],
            "{api:?}"
        );
    }
    let reply = Reply::json(200, &calls_answer(Api::Chat));
    let streamed = stream(Api::Chat, reply, &Client::default()).await;
    assert_eq!(streamed.answer.expect("whole"), completed(Api::Chat).await);
}

#[tokio::test]
async fn a_whole_answer_not_labelled_json_is_read_whole() {
    // A server that ignores `"stream": true` and labels its JSON answer as events, as text,
    // or not at all: the body is one JSON answer, not events.
    for api in Api::ALL {
        let body = format!("\n  {}\n", api.text_answer("unstreamed"));
        for kind in [Some("text/event-stream"), Some("text/plain"), None] {
            let pieces = body
                .as_bytes()
                .chunks(5)
                .map(|piece| (Duration::ZERO, piece.to_vec()))
                .collect();
            let reply = Reply::streamed(pieces).content_type(kind);
            let streamed = stream(api, reply, &Client::default()).await;
            let answer = streamed
                .answer
                .unwrap_or_else(|e| panic!("{api:?}, {kind:?}: {e}"));
            assert_eq!(answer.text.as_deref(), Some("unstreamed"), "{api:?}");
            assert_eq!(
                streamed.deltas,
                [StreamDelta::Text("unstreamed".into())],
                "{api:?}, {kind:?}"
            );
        }
    }
    let reply = Reply::raw(200, calls_answer(Api::Chat).to_string()).content_type(None);
    let streamed = stream(Api::Chat, reply, &Client::default()).await;
    assert_eq!(streamed.answer.expect("whole"), completed(Api::Chat).await);
}

#[tokio::test]
async fn a_body_that_is_neither_events_nor_an_answer_says_what_it_was() {
    let page = Reply::raw(200, "<html><body>Sign in to continue</body></html>")
        .content_type(Some("text/html"));
    let array = Reply::raw(200, r#"[{"candidates": []}]"#).content_type(None);
    let cut = Reply::raw(200, r#"{"choices": [{"index": 0, "#).content_type(None);
    for (reply, expected) in [
        (
            page,
            "the stream ended before the answer began (the body held no events; it begins: <html><body>Sign in to continue</body></html>)",
        ),
        (
            array,
            r#"the response body is not a JSON object; it begins: [{"candidates": []}]"#,
        ),
        (cut, "the response body is not valid JSON"),
        (
            Reply::raw(200, "").content_type(None),
            "the stream ended before the answer began (the body was empty)",
        ),
    ] {
        let streamed = stream(Api::Chat, reply, &Client::default()).await;
        let error = streamed.answer.expect_err("no answer");
        assert!(
            matches!(&error, ModelError::MalformedResponse { reason, .. } if reason.starts_with(expected)),
            "{expected}: {error}"
        );
    }
}

#[tokio::test]
async fn a_llama_cpp_error_line_is_the_server_s_error() {
    let text = "data: {\"choices\": [{\"index\": 0, \"delta\": {\"content\": \"Hi\"}}]}\n\n\
        error: {\"code\": 500, \"message\": \"the context is full\", \"type\": \"server_error\"}\n\n";
    let streamed = stream(Api::Chat, Reply::sse(text, 9), &Client::default()).await;
    assert_eq!(
        streamed.answer.expect_err("an error"),
        ModelError::Api {
            provider: "openai_chat".into(),
            status: 500,
            message: "the context is full".into(),
        }
    );
}

/// The client's time limit in the slow-stream tests: what is measured against it is the wait
/// for the next bytes, which are [`SLOW_GAP`] apart. A second of margin, as a loaded machine
/// needs (300 ms against gaps of 200 ms timed out beside a CPU hog).
const SLOW_LIMIT: Duration = Duration::from_millis(1200);
/// The pause before each piece of a slow stream.
const SLOW_GAP: Duration = Duration::from_millis(200);

#[tokio::test]
async fn bytes_that_keep_coming_keep_a_slow_stream_alive() {
    let client = Client {
        timeout: SLOW_LIMIT,
        ..Client::default()
    };
    // Keep-alive comments while the model thinks, then one event arriving slowly in pieces:
    // every wait is within the limit, the whole (2 s) beyond it.
    let text = chat_events();
    let mut pieces = vec![(SLOW_GAP, b": keep-alive\n\n".to_vec()); 4];
    pieces.extend(
        text.as_bytes()
            .chunks(text.len() / 6 + 1)
            .map(|piece| (SLOW_GAP, piece.to_vec())),
    );
    assert!(SLOW_GAP * pieces.len() as u32 > SLOW_LIMIT);
    let streamed = stream(Api::Chat, Reply::streamed(pieces), &client).await;
    assert_eq!(streamed.answer.expect("read"), completed(Api::Chat).await);
}

#[tokio::test]
async fn a_stream_that_stops_coming_times_out_and_a_slow_one_does_not() {
    let client = Client {
        timeout: SLOW_LIMIT,
        ..Client::default()
    };
    let text = chat_events();
    // Each piece within the limit: the whole answer takes longer than it, and is read.
    let pieces: Vec<_> = text
        .as_bytes()
        .chunks(text.len() / 8 + 1)
        .map(|piece| (SLOW_GAP, piece.to_vec()))
        .collect();
    assert!(SLOW_GAP * pieces.len() as u32 > SLOW_LIMIT);
    let streamed = stream(Api::Chat, Reply::streamed(pieces), &client).await;
    assert_eq!(streamed.answer.expect("read"), completed(Api::Chat).await);
    // A pause longer than the limit ends the stream.
    let (first, rest) = text.split_at(text.len() / 2);
    let stalled = Reply::streamed(vec![
        (Duration::ZERO, first.as_bytes().to_vec()),
        (Duration::from_secs(5), rest.as_bytes().to_vec()),
    ]);
    let streamed = stream(Api::Chat, stalled, &client).await;
    assert_eq!(
        streamed.answer.expect_err("timed out"),
        ModelError::Timeout {
            provider: "openai_chat".into(),
            after: SLOW_LIMIT,
        }
    );
}

/// A server that keeps a stream alive without ending it (a keep-alive comment every
/// [`SLOW_GAP`], each wait within the client's time limit) is cut off at the client's stream
/// deadline, with an error naming the API, the model and the deadline, and not asked again.
#[tokio::test]
async fn a_stream_kept_alive_without_an_end_is_cut_off_at_its_deadline() {
    const DEADLINE: Duration = Duration::from_millis(1500);
    let client = Client {
        timeout: SLOW_LIMIT,
        stream_deadline: Some(DEADLINE),
        ..Client::default()
    };
    for api in Api::ALL {
        // 20 s of keep-alives, far past the deadline.
        let trickle = Reply::streamed(vec![(SLOW_GAP, b": keep-alive\n\n".to_vec()); 100]);
        let started = std::time::Instant::now();
        let streamed = tokio::time::timeout(Duration::from_secs(10), stream(api, trickle, &client))
            .await
            .unwrap_or_else(|_| panic!("{api:?}: still streaming 10 s into a 1.5 s deadline"));
        assert!(started.elapsed() >= DEADLINE, "{api:?}");
        let error = streamed.answer.expect_err("cut off");
        assert_eq!(
            error,
            ModelError::StreamDeadline {
                provider: api.name().into(),
                model: api.model_name().into(),
                after: DEADLINE,
            },
            "{api:?}"
        );
        assert_eq!(
            error.to_string(),
            format!(
                "{}: the streamed answer of model '{}' did not end within 1.5 s (the \
                 client's stream deadline)",
                api.name(),
                api.model_name()
            )
        );
        assert!(error.is_transient());
    }
}

#[tokio::test]
async fn an_error_status_before_the_stream_is_retried_then_quoted() {
    let server = MockServer::start([
        Reply::json(503, &Api::Chat.error_body(503, "overloaded")),
        Reply::sse(&chat_events(), 64),
    ])
    .await;
    let model = Api::Chat.model(&server.base, &Client::default());
    let answer = model
        .stream(&first_request(Api::Chat), &mut |_| {})
        .await
        .expect("answered after a retry");
    assert_eq!(answer, completed(Api::Chat).await);
    assert_eq!(server.requests().len(), 2);

    let server =
        MockServer::start([Reply::json(400, &Api::Chat.error_body(400, "bad tools"))]).await;
    let error = Api::Chat
        .model(&server.base, &Client::default())
        .stream(&first_request(Api::Chat), &mut |_| {})
        .await
        .expect_err("refused");
    assert_eq!(
        error,
        ModelError::Api {
            provider: "openai_chat".into(),
            status: 400,
            message: "bad tools".into(),
        }
    );
}

#[tokio::test]
async fn an_agent_session_reports_the_streamed_text() {
    use toolsmith_core::ToolShed;
    use toolsmith_harness::agent::{AgentEvent, AgentSession};

    let text = sse_text([
        (
            None,
            json!({"choices": [{"index": 0, "delta": {"content": "2 + 3 "}, "finish_reason": null}]}),
        ),
        (
            None,
            json!({"choices": [{"index": 0, "delta": {"content": "= 5"}, "finish_reason": "stop"}]}),
        ),
    ]) + "data: [DONE]\n\n";
    let server = MockServer::start([Reply::sse(&text, 5)]).await;
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&seen);
    let session = AgentSession::builder(Api::Chat.model(&server.base, &Client::default()))
        .with_model(Api::Chat.model_name())
        .with_toolshed(ToolShed::new())
        .with_streaming(true)
        .with_event_handler(move |event: &AgentEvent| {
            if let AgentEvent::TextDelta(piece) = event {
                sink.lock().unwrap().push(piece.clone());
            }
        })
        .build()
        .unwrap();
    let run = session.run("What is 2 + 3?").await.unwrap();
    assert_eq!(run.text, "2 + 3 = 5");
    assert_eq!(*seen.lock().unwrap(), ["2 + 3 ", "= 5"]);
}
