//! Each client's stream cut into chunks at arbitrary byte offsets (proptest picks them,
//! favouring the awkward places: inside a UTF-8 sequence, between `\r` and `\n`, right
//! after a line's end, inside a field name), its lines ended by `\n`, `\r\n`, `\r` or a
//! mix, with or without `: keep-alive` comment lines, its data on one line or two: the
//! answer and the deltas must be those of the stream sent whole. One server and one client
//! serve all of a test's cases.

use std::time::Duration;

use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestRunner};
use serde_json::{Value, json};
use toolsmith_harness::model::{ChatModel, ChatResponse, ModelError, StreamDelta, Usage};

use super::{Api, Client, MockServer, Reply, first_request, sse_text};

/// How many cut-up streams each client is given.
const CASES: u32 = 32;

/// The answer's text pieces, as the model streams them: multi-byte UTF-8 in each.
const TEXT_PIECES: [&str; 5] = ["Café ", "crème — ", "日本", "語 🦀", " ok"];

/// The call's arguments as they stream, in pieces: multi-byte text inside the JSON string.
const ARGUMENT_PIECES: [&str; 3] = ["{\"text\": \"", "日本 ", "🦀\"}"];

/// What every stream below reports as its usage.
const USAGE: Usage = Usage {
    input_tokens: 21,
    output_tokens: 13,
    cached_input_tokens: 5,
};

/// The call's arguments whole.
fn arguments() -> Value {
    json!({"text": "日本 🦀"})
}

/// OpenAI Chat: role, text pieces, one call in pieces, its `finish_reason`, the usage on a
/// chunk of its own, `[DONE]`.
fn chat_stream() -> String {
    let delta = |delta: Value, finish: Value| {
        (
            None,
            json!({"id": "chatcmpl-7", "object": "chat.completion.chunk",
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}),
        )
    };
    let mut events = vec![delta(
        json!({"role": "assistant", "content": ""}),
        Value::Null,
    )];
    events.extend(
        TEXT_PIECES
            .iter()
            .map(|piece| delta(json!({"content": piece}), Value::Null)),
    );
    events.push(delta(
        json!({"tool_calls": [{"index": 0, "id": "call_note", "type": "function",
            "function": {"name": "note", "arguments": ""}}]}),
        Value::Null,
    ));
    events.extend(ARGUMENT_PIECES.iter().map(|piece| {
        delta(
            json!({"tool_calls": [{"index": 0, "function": {"arguments": piece}}]}),
            Value::Null,
        )
    }));
    events.push(delta(json!({}), json!("tool_calls")));
    events.push((
        None,
        json!({"id": "chatcmpl-7", "object": "chat.completion.chunk", "choices": [],
            "usage": {"prompt_tokens": 21, "completion_tokens": 13, "total_tokens": 34,
                "prompt_tokens_details": {"cached_tokens": 5}}}),
    ));
    sse_text(events) + "data: [DONE]\n\n"
}

/// OpenAI Responses: typed events named as their data's `type`, ending with the whole
/// response in `response.completed`.
fn responses_stream() -> String {
    let event = |kind: &'static str, mut data: Value| {
        data["type"] = json!(kind);
        (Some(kind), data)
    };
    let text: String = TEXT_PIECES.concat();
    let message = json!({"type": "message", "id": "msg_7", "status": "completed",
        "role": "assistant", "content": [{"type": "output_text", "text": text, "annotations": []}]});
    let call = json!({"type": "function_call", "id": "fc_7", "call_id": "call_note",
        "name": "note", "arguments": ARGUMENT_PIECES.concat(), "status": "completed"});
    let response = |status: &str, output: Value| {
        json!({"id": "resp_7", "object": "response", "status": status, "model": "gpt-4.1-mini",
            "output": output,
            "usage": {"input_tokens": 21, "input_tokens_details": {"cached_tokens": 5},
                "output_tokens": 13, "output_tokens_details": {"reasoning_tokens": 0},
                "total_tokens": 34}})
    };
    let mut events = vec![
        event(
            "response.created",
            json!({"response": response("in_progress", json!([]))}),
        ),
        event(
            "response.output_item.added",
            json!({"output_index": 0, "item": {"type": "message", "id": "msg_7",
                "status": "in_progress", "role": "assistant", "content": []}}),
        ),
    ];
    events.extend(TEXT_PIECES.iter().map(|piece| {
        event(
            "response.output_text.delta",
            json!({"output_index": 0, "item_id": "msg_7", "content_index": 0, "delta": piece}),
        )
    }));
    events.push(event(
        "response.output_item.done",
        json!({"output_index": 0, "item": message}),
    ));
    events.push(event(
        "response.output_item.added",
        json!({"output_index": 1, "item": {"type": "function_call", "id": "fc_7",
            "call_id": "call_note", "name": "note", "arguments": "", "status": "in_progress"}}),
    ));
    events.extend(ARGUMENT_PIECES.iter().map(|piece| {
        event(
            "response.function_call_arguments.delta",
            json!({"output_index": 1, "item_id": "fc_7", "delta": piece}),
        )
    }));
    events.push(event(
        "response.output_item.done",
        json!({"output_index": 1, "item": call}),
    ));
    events.push(event(
        "response.completed",
        json!({"response": response("completed", json!([message, call]))}),
    ));
    sse_text(events)
}

/// Anthropic: `message_start`, a text block and a `tool_use` block in pieces, a `ping`
/// between them, `message_delta` with the stop reason and output usage, `message_stop`.
fn anthropic_stream() -> String {
    let delta = |index: u64, delta: Value| json!({"type": "content_block_delta", "index": index, "delta": delta});
    let mut events = vec![
        json!({"type": "message_start", "message": {"id": "msg_7", "type": "message",
            "role": "assistant", "model": "claude-sonnet-4-5", "content": [],
            "stop_reason": null, "stop_sequence": null,
            "usage": {"input_tokens": 16, "cache_creation_input_tokens": 0,
                "cache_read_input_tokens": 5, "output_tokens": 1}}}),
        json!({"type": "content_block_start", "index": 0,
            "content_block": {"type": "text", "text": ""}}),
    ];
    events.extend(
        TEXT_PIECES
            .iter()
            .map(|piece| delta(0, json!({"type": "text_delta", "text": piece}))),
    );
    events.extend([
        json!({"type": "content_block_stop", "index": 0}),
        json!({"type": "ping"}),
        json!({"type": "content_block_start", "index": 1, "content_block":
            {"type": "tool_use", "id": "toolu_note", "name": "note", "input": {}}}),
    ]);
    events.extend(ARGUMENT_PIECES.iter().map(|piece| {
        delta(
            1,
            json!({"type": "input_json_delta", "partial_json": piece}),
        )
    }));
    events.extend([
        json!({"type": "content_block_stop", "index": 1}),
        json!({"type": "message_delta", "delta": {"stop_reason": "tool_use",
            "stop_sequence": null}, "usage": {"output_tokens": 13}}),
        json!({"type": "message_stop"}),
    ]);
    sse_text(
        events
            .iter()
            .map(|data| (data["type"].as_str(), data.clone())),
    )
}

/// Gemini: chunks of text parts with growing usage, the call whole in its own chunk (Gemini
/// does not stream a call's arguments in pieces), the finish reason on the last.
fn gemini_stream() -> String {
    let chunk = |parts: Value, finish: Option<&str>, output_tokens: u64| {
        let mut chunk = json!({"candidates": [{"content": {"role": "model", "parts": parts},
                "index": 0}],
            "usageMetadata": {"promptTokenCount": 21, "candidatesTokenCount": output_tokens,
                "cachedContentTokenCount": 5, "totalTokenCount": 21 + output_tokens},
            "modelVersion": "gemini-2.5-flash", "responseId": "resp-7"});
        if let Some(finish) = finish {
            chunk["candidates"][0]["finishReason"] = json!(finish);
        }
        (None, chunk)
    };
    let mut events: Vec<_> = (0u64..)
        .zip(TEXT_PIECES)
        .map(|(count, piece)| chunk(json!([{"text": piece}]), None, count + 1))
        .collect();
    events.push(chunk(
        json!([{"functionCall": {"name": "note", "args": arguments()}}]),
        None,
        12,
    ));
    events.push(chunk(json!([{"text": ""}]), Some("STOP"), 13));
    sse_text(events)
}

/// How a case ends the stream's lines.
#[derive(Debug, Clone, Copy)]
enum LineEnd {
    Lf,
    CrLf,
    Cr,
    /// `\r\n` and `\n` in turn (never `\r` then `\n`, which would be one line end).
    Mixed,
}

/// How a case writes the stream, before cutting it.
#[derive(Debug, Clone, Copy)]
struct Layout {
    end: LineEnd,
    /// A `: keep-alive` comment line before each line.
    keep_alive: bool,
    /// Each event's JSON on two `data:` lines, cut after its opening `{` (the lines are
    /// joined by a newline, which JSON reads as a space): a line end read where there is
    /// none, or missed, splits or joins the event.
    two_data_lines: bool,
}

impl Layout {
    /// `stream` (lines ended by `\n`) written this way.
    fn apply(self, stream: &str) -> Vec<u8> {
        let mut ends = match self.end {
            LineEnd::Lf => ["\n", "\n"],
            LineEnd::CrLf => ["\r\n", "\r\n"],
            LineEnd::Cr => ["\r", "\r"],
            LineEnd::Mixed => ["\r\n", "\n"],
        }
        .into_iter()
        .cycle();
        let mut end = || ends.next().unwrap_or("\n");
        let mut laid = String::with_capacity(stream.len() * 2);
        for line in stream.split_terminator('\n') {
            if self.keep_alive {
                laid.push_str(": keep-alive");
                laid.push_str(end());
            }
            if self.two_data_lines
                && let Some(rest) = line.strip_prefix("data: {")
            {
                laid.push_str("data: {");
                laid.push_str(end());
                laid.push_str("data: ");
                laid.push_str(rest);
            } else {
                laid.push_str(line);
            }
            laid.push_str(end());
        }
        laid.into_bytes()
    }
}

/// The offsets in `bytes` where a cut is awkward: inside a multi-byte UTF-8 sequence,
/// between a `\r` and its `\n`, right after a line's end, inside a field's name or a
/// comment's colon and text.
fn awkward_offsets(bytes: &[u8]) -> Vec<usize> {
    let mut offsets = Vec::new();
    for (at, byte) in bytes.iter().enumerate().skip(1) {
        let continuation = byte & 0b1100_0000 == 0b1000_0000;
        let after_an_end = matches!(bytes[at - 1], b'\r' | b'\n');
        if continuation || after_an_end {
            offsets.push(at);
        }
    }
    for field in [&b"data:"[..], b"event:", b": keep-alive"] {
        for start in (0..bytes.len()).filter(|&at| bytes[at..].starts_with(field)) {
            offsets.extend(start + 1..start + field.len());
        }
    }
    offsets
}

/// What one streamed request gave.
#[derive(Debug, PartialEq)]
struct Streamed {
    answer: Result<ChatResponse, ModelError>,
    deltas: Vec<StreamDelta>,
}

impl Streamed {
    /// The text the deltas carried, joined.
    fn delta_text(&self) -> String {
        self.deltas
            .iter()
            .filter_map(|delta| match delta {
                StreamDelta::Text(piece) => Some(piece.as_str()),
                _ => None,
            })
            .collect()
    }
}

/// `model`'s answer to the first request when `server` sends `pieces` as its next body.
async fn streamed(
    api: Api,
    model: &dyn ChatModel,
    server: &MockServer,
    pieces: Vec<Vec<u8>>,
) -> Streamed {
    server.push(Reply::streamed(
        pieces
            .into_iter()
            .map(|piece| (Duration::ZERO, piece))
            .collect(),
    ));
    let mut deltas = Vec::new();
    let answer = model
        .stream(&first_request(api), &mut |delta| deltas.push(delta))
        .await;
    Streamed { answer, deltas }
}

/// `bytes` cut at `offsets` (in any order; repeated, `0` and the end cut nothing).
fn cut(bytes: &[u8], mut offsets: Vec<usize>) -> Vec<Vec<u8>> {
    offsets.sort_unstable();
    offsets.dedup();
    let mut pieces = Vec::with_capacity(offsets.len() + 1);
    let mut from = 0;
    for at in offsets.into_iter().filter(|&at| at > 0 && at < bytes.len()) {
        pieces.push(bytes[from..at].to_vec());
        from = at;
    }
    pieces.push(bytes[from..].to_vec());
    pieces
}

/// Checks that `api`'s client reads `stream` (lines ended by `\n`, sent whole) as the
/// answer these streams all make, and reads it the same however it is laid out and cut.
fn reads_the_same_however_cut(api: Api, stream: &str) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    let (server, model) = runtime.block_on(async {
        let server = MockServer::start([]).await;
        let model = api.model(&server.base, &Client::default());
        (server, model)
    });
    let whole = runtime.block_on(streamed(
        api,
        model.as_ref(),
        &server,
        vec![stream.as_bytes().to_vec()],
    ));
    // The stream sent whole is read as the answer it is.
    let answer = whole.answer.as_ref().expect("the whole stream's answer");
    let text = TEXT_PIECES.concat();
    assert_eq!(answer.text.as_deref(), Some(text.as_str()), "{api:?}");
    assert_eq!(whole.delta_text(), text, "{api:?}");
    assert_eq!(answer.usage, USAGE, "{api:?}");
    assert_eq!(answer.calls.len(), 1, "{api:?}");
    let call = answer.calls[0].as_ref().expect("the call read");
    assert_eq!(call.name, "note", "{api:?}");
    assert_eq!(call.arguments.as_value(), &arguments(), "{api:?}");

    let layouts = (
        prop_oneof![
            Just(LineEnd::Lf),
            Just(LineEnd::CrLf),
            Just(LineEnd::Cr),
            Just(LineEnd::Mixed)
        ],
        any::<bool>(),
        any::<bool>(),
    )
        .prop_map(|(end, keep_alive, two_data_lines)| Layout {
            end,
            keep_alive,
            two_data_lines,
        });
    let stream_text = stream.to_owned();
    let cases = layouts.prop_flat_map(move |layout| {
        let bytes = layout.apply(&stream_text);
        let offset = prop_oneof![
            1..bytes.len(),
            proptest::sample::select(awkward_offsets(&bytes)),
        ];
        (Just(layout), proptest::collection::vec(offset, 1..64))
    });
    let mut runner = TestRunner::new(Config {
        cases: CASES,
        failure_persistence: None,
        ..Config::default()
    });
    let outcome = runner.run(&cases, |(layout, offsets)| {
        let pieces = cut(&layout.apply(stream), offsets);
        let split = runtime.block_on(streamed(api, model.as_ref(), &server, pieces));
        if split != whole {
            return Err(TestCaseError::fail(format!(
                "{api:?}: cut up, the stream gave {split:#?}\nwhole, {whole:#?}"
            )));
        }
        Ok(())
    });
    if let Err(failure) = outcome {
        panic!("{failure}");
    }
    drop(server);
}

#[test]
fn openai_chat_reads_its_stream_the_same_however_cut() {
    reads_the_same_however_cut(Api::Chat, &chat_stream());
}

#[test]
fn openai_responses_reads_its_stream_the_same_however_cut() {
    reads_the_same_however_cut(Api::Responses, &responses_stream());
}

#[test]
fn anthropic_reads_its_stream_the_same_however_cut() {
    reads_the_same_however_cut(Api::Anthropic, &anthropic_stream());
}

#[test]
fn gemini_reads_its_stream_the_same_however_cut() {
    reads_the_same_however_cut(Api::Gemini, &gemini_stream());
}

#[tokio::test]
async fn a_blank_line_after_a_piece_ending_in_crlf_ends_the_event() {
    // Found by the property above: a piece that ended with a whole `\r\n` left the parser
    // waiting for a `\n` to pass over, so the `\n` of the blank line opening the next piece
    // was lost, and the event ran into the next one (whose data then was no JSON).
    let chunk = |delta: Value, finish: Value| json!({"choices": [{"index": 0, "delta": delta, "finish_reason": finish}]});
    let pieces = [
        format!(
            "data: {}\r\n",
            chunk(json!({"content": "Café"}), Value::Null)
        ),
        format!("\ndata: {}\r\n", chunk(json!({}), json!("stop"))),
        "\ndata: [DONE]\r\n".to_owned(),
        "\n".to_owned(),
    ];
    let reply = Reply::streamed(
        pieces
            .into_iter()
            .map(|piece| (Duration::ZERO, piece.into_bytes()))
            .collect(),
    );
    let streamed = super::stream(Api::Chat, reply, &Client::default()).await;
    let answer = streamed.answer.expect("the answer");
    assert_eq!(answer.text.as_deref(), Some("Café"));
    assert_eq!(streamed.deltas, [StreamDelta::Text("Café".into())]);
}

#[tokio::test]
async fn a_line_that_is_not_utf8_fails_the_stream_after_the_events_before_it() {
    // Found by the `streamed_answers` fuzz target (docs/FUZZING.md): a line that is not
    // UTF-8 failed the whole chunk it came in, so the events before it in that chunk were
    // never read, and what the stream gave (its deltas, which error) depended on where the
    // network cut it.
    let event = sse_text([(
        None,
        json!({"choices": [{"index": 0, "delta": {"content": "Hi"}, "finish_reason": null}]}),
    )]);
    let bad = b"data: \xff\n\n".to_vec();
    let whole = [event.as_bytes(), &bad].concat();
    for pieces in [vec![whole], vec![event.clone().into_bytes(), bad.clone()]] {
        let count = pieces.len();
        let reply = Reply::streamed(
            pieces
                .into_iter()
                .map(|piece| (Duration::ZERO, piece))
                .collect(),
        );
        let streamed = super::stream(Api::Chat, reply, &Client::default()).await;
        assert_eq!(
            streamed.deltas,
            [StreamDelta::Text("Hi".into())],
            "in {count} pieces"
        );
        assert_eq!(
            streamed.answer.expect_err("a malformed stream"),
            ModelError::MalformedResponse {
                provider: "openai_chat".into(),
                reason: "a line of the event stream is not UTF-8".into(),
            },
            "in {count} pieces"
        );
    }
}
