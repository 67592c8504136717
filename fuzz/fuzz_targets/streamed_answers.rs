//! Streamed answers: a server-sent event stream (the API's own events edited, events built
//! from arbitrary JSON, and arbitrary bytes, with `\n`, `\r\n` or `\r` line ends) cut into arbitrary chunks, read by
//! the real HTTP clients (`ChatModel::stream` of each API) from an in-process server on
//! 127.0.0.1 that sends each chunk as one HTTP chunk.
//!
//! Asserts, beyond "no panic, no hang": how the stream is cut changes nothing: the same
//! bytes sent whole and sent in the fuzzer's pieces give the same deltas and the same
//! answer or error. Every call of an answer read has an id.

#![no_main]

use std::sync::LazyLock;
use std::time::Duration;

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use serde_json::{Map, Number, Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use toolsmith::harness::model::http::{
    AnthropicModel, GeminiModel, HttpModelBuilder, OpenAiChatModel, OpenAiResponsesModel,
};
use toolsmith::harness::model::{ChatModel, ChatRequest, Message, StreamDelta};

/// Field names and values of the four APIs' events, so that arbitrary objects are often
/// events a client reads.
const KEYS: &[&str] = &[
    "choices",
    "delta",
    "message",
    "tool_calls",
    "index",
    "id",
    "type",
    "function",
    "name",
    "arguments",
    "content",
    "role",
    "finish_reason",
    "usage",
    "prompt_tokens",
    "completion_tokens",
    "error",
    "content_block",
    "content_block_start",
    "text",
    "input_json_delta",
    "partial_json",
    "input",
    "stop_reason",
    "output_tokens",
    "input_tokens",
    "candidates",
    "parts",
    "functionCall",
    "args",
    "finishReason",
    "usageMetadata",
    "response",
    "item",
    "output_index",
    "output",
    "call_id",
    "status",
    "sequence_number",
    "item_id",
    "code",
    "thoughtSignature",
    "refusal",
    "reasoning_content",
];
const WORDS: &[&str] = &[
    "message_start",
    "content_block_start",
    "content_block_delta",
    "content_block_stop",
    "message_delta",
    "message_stop",
    "ping",
    "error",
    "tool_use",
    "text",
    "text_delta",
    "input_json_delta",
    "function",
    "function_call",
    "assistant",
    "stop",
    "tool_calls",
    "length",
    "STOP",
    "MAX_TOKENS",
    "response.created",
    "response.output_item.added",
    "response.function_call_arguments.delta",
    "response.output_text.delta",
    "response.output_item.done",
    "response.completed",
    "response.failed",
    "completed",
    "overloaded_error",
    "{\"a\":",
    "1}",
    "",
];
/// The event names written on `event:` lines.
const NAMES: &[&str] = &[
    "message_start",
    "content_block_start",
    "content_block_delta",
    "content_block_stop",
    "message_delta",
    "message_stop",
    "ping",
    "error",
    "response.created",
    "response.output_item.added",
    "response.function_call_arguments.delta",
    "response.output_text.delta",
    "response.output_item.done",
    "response.completed",
    "response.failed",
    "x",
];

#[derive(Debug, Arbitrary)]
enum Json {
    Null,
    Bool(bool),
    Int(u8),
    Big(i64),
    Float(f64),
    Word(u8),
    Text(String),
    Array(Vec<Json>),
    Object(Vec<(Key, Json)>),
}

#[derive(Debug, Arbitrary)]
enum Key {
    Known(u8),
    Other(String),
}

impl Json {
    fn value(&self) -> Value {
        match self {
            Json::Null => Value::Null,
            Json::Bool(b) => Value::Bool(*b),
            Json::Int(i) => Value::from(*i),
            Json::Big(i) => Value::from(*i),
            Json::Float(f) => Number::from_f64(*f).map_or(Value::Null, Value::Number),
            Json::Word(i) => Value::from(WORDS[usize::from(*i) % WORDS.len()]),
            Json::Text(text) => Value::from(text.as_str()),
            Json::Array(items) => Value::Array(items.iter().map(Json::value).collect()),
            Json::Object(members) => Value::Object(
                members
                    .iter()
                    .map(|(key, value)| (key.name(), value.value()))
                    .collect::<Map<_, _>>(),
            ),
        }
    }
}

/// Events each API sends (`event:` name, data), from its documented streams: arbitrary JSON
/// alone rarely makes an event a client reads on, so most inputs edit these.
fn templates(api: usize) -> Vec<(Option<&'static str>, Value)> {
    let named = |name: &'static str, mut data: Value| {
        data["type"] = json!(name);
        (Some(name), data)
    };
    match api {
        0 => [
            json!({"choices": [{"index": 0, "delta": {"role": "assistant", "content": "Let me "}, "finish_reason": null}]}),
            json!({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "id": "call_add", "type": "function",
                "function": {"name": "add", "arguments": "{\"a\":2,"}}]}, "finish_reason": null}]}),
            json!({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "function": {"arguments": "\"b\":3}"}}]},
                "finish_reason": null}]}),
            json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}],
                "usage": {"prompt_tokens": 120, "completion_tokens": 40}}),
        ]
        .into_iter()
        .map(|data| (None, data))
        .collect(),
        1 => vec![
            named("response.created", json!({"response": {"id": "resp_1", "status": "in_progress", "output": []}})),
            named("response.output_item.added", json!({"output_index": 0, "item": {"type": "message",
                "id": "msg_1", "status": "in_progress", "role": "assistant", "content": []}})),
            named("response.output_text.delta", json!({"output_index": 0, "item_id": "msg_1",
                "content_index": 0, "delta": "Let me "})),
            named("response.output_item.added", json!({"output_index": 1, "item": {"type": "function_call",
                "id": "fc_1", "call_id": "call_add", "name": "add", "arguments": "", "status": "in_progress"}})),
            named("response.function_call_arguments.delta", json!({"output_index": 1, "item_id": "fc_1",
                "delta": "{\"a\":2}"})),
            named("response.completed", json!({"response": {"id": "resp_1", "status": "completed", "output": [
                {"type": "message", "id": "msg_1", "role": "assistant", "content": [{"type": "output_text", "text": "Let me "}]},
                {"type": "function_call", "id": "fc_1", "call_id": "call_add", "name": "add", "arguments": "{\"a\":2}",
                 "status": "completed"}], "usage": {"input_tokens": 10, "output_tokens": 5}}})),
        ],
        2 => vec![
            named("message_start", json!({"message": {"id": "msg_1", "type": "message", "role": "assistant",
                "content": [], "stop_reason": null, "usage": {"input_tokens": 56, "output_tokens": 1}}})),
            named("content_block_start", json!({"index": 0, "content_block": {"type": "text", "text": ""}})),
            named("content_block_delta", json!({"index": 0, "delta": {"type": "text_delta", "text": "Let me "}})),
            named("content_block_start", json!({"index": 1, "content_block": {"type": "tool_use",
                "id": "toolu_add", "name": "add", "input": {}}})),
            named("content_block_delta", json!({"index": 1, "delta": {"type": "input_json_delta",
                "partial_json": "{\"a\":2}"}})),
            named("content_block_stop", json!({"index": 1})),
            named("message_delta", json!({"delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 40}})),
            named("message_stop", json!({})),
            named("ping", json!({})),
        ],
        _ => [
            json!({"candidates": [{"content": {"role": "model", "parts": [{"text": "Let me "}]}, "index": 0}]}),
            json!({"candidates": [{"content": {"role": "model", "parts": [{"functionCall": {"name": "add",
                "args": {"a": 2}}}]}, "index": 0}]}),
            json!({"candidates": [{"content": {"role": "model", "parts": [{"text": ""}]}, "finishReason": "STOP",
                "index": 0}], "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5}}),
        ]
        .into_iter()
        .map(|data| (None, data))
        .collect(),
    }
}

/// A change to a template event: a value set, or removed, at a path.
#[derive(Debug, Arbitrary)]
struct Edit {
    path: Vec<Step>,
    set: Option<Json>,
}

/// One step of a path to edit (see `toolsmith_fuzz::apply`).
type Step = toolsmith_fuzz::Step<Key>;

impl Key {
    fn name(&self) -> String {
        match self {
            Key::Known(i) => KEYS[usize::from(*i) % KEYS.len()].to_owned(),
            Key::Other(name) => name.clone(),
        }
    }
}

#[derive(Debug, Arbitrary)]
enum Event {
    /// One of the API's own events, edited.
    Template { index: u8, edits: Vec<Edit> },
    /// `event:` (when named) and `data:` lines, then a blank line.
    Data {
        name: Option<u8>,
        data: Json,
        ends: u8,
    },
    /// `data: [DONE]`.
    Done,
    /// Bytes as they are.
    Raw(Vec<u8>),
}

#[derive(Debug, Arbitrary)]
struct Input {
    api: u8,
    /// 0: an event stream; 1: labelled JSON (an answer sent whole); else no label.
    label: u8,
    events: Vec<Event>,
    /// The length of each piece, cycled (0 is read as 1).
    pieces: Vec<u8>,
}

fn body(api: usize, events: &[Event]) -> Vec<u8> {
    let templates = templates(api);
    let mut body = Vec::new();
    for event in events {
        match event {
            Event::Template { index, edits } => {
                let (name, mut data) = templates[usize::from(*index) % templates.len()].clone();
                for edit in edits {
                    toolsmith_fuzz::apply(
                        &mut data,
                        &edit.path,
                        edit.set.as_ref().map(Json::value),
                        Key::name,
                    );
                }
                if let Some(name) = name {
                    body.extend_from_slice(format!("event: {name}\n").as_bytes());
                }
                body.extend_from_slice(format!("data: {data}\n\n").as_bytes());
            }
            Event::Data { name, data, ends } => {
                let end: &[u8] = match ends % 3 {
                    0 => b"\n",
                    1 => b"\r\n",
                    _ => b"\r",
                };
                if let Some(name) = name {
                    body.extend_from_slice(b"event: ");
                    body.extend_from_slice(NAMES[usize::from(*name) % NAMES.len()].as_bytes());
                    body.extend_from_slice(end);
                }
                body.extend_from_slice(b"data: ");
                body.extend_from_slice(data.value().to_string().as_bytes());
                body.extend_from_slice(end);
                body.extend_from_slice(end);
            }
            Event::Done => body.extend_from_slice(b"data: [DONE]\n\n"),
            Event::Raw(bytes) => body.extend_from_slice(bytes),
        }
    }
    body
}

struct Fixture {
    runtime: tokio::runtime::Runtime,
    listener: TcpListener,
    models: Vec<Box<dyn ChatModel>>,
}

fn configure<M>(builder: HttpModelBuilder<M>, base: String) -> HttpModelBuilder<M> {
    builder
        .api_key("fuzz-key")
        .base_url(base)
        .timeout(Duration::from_secs(5))
        .max_retries(0)
}

static FIXTURE: LazyLock<Fixture> = LazyLock::new(|| {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let listener = runtime.block_on(TcpListener::bind("127.0.0.1:0")).unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let models: Vec<Box<dyn ChatModel>> = {
        let _entered = runtime.enter();
        vec![
            Box::new(
                configure(OpenAiChatModel::builder(), format!("{base}/v1"))
                    .build()
                    .unwrap(),
            ),
            Box::new(
                configure(OpenAiResponsesModel::builder(), format!("{base}/v1/"))
                    .build()
                    .unwrap(),
            ),
            Box::new(
                configure(AnthropicModel::builder(), base.clone())
                    .build()
                    .unwrap(),
            ),
            Box::new(configure(GeminiModel::builder(), base).build().unwrap()),
        ]
    };
    Fixture {
        runtime,
        listener,
        models,
    }
});

/// Serves one request: reads it whole, then answers `pieces`, each as one HTTP chunk.
async fn serve(listener: &TcpListener, label: Option<&str>, pieces: &[&[u8]]) {
    let (mut socket, _) = listener.accept().await.unwrap();
    let mut request = Vec::new();
    let mut buffer = [0u8; 8192];
    // The headers, then as much body as they announce.
    let needed = loop {
        let read = socket.read(&mut buffer).await.unwrap();
        assert!(read > 0, "the client closed before its request ended");
        request.extend_from_slice(&buffer[..read]);
        if let Some(end) = request.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&request[..end]).to_ascii_lowercase();
            let length = head
                .lines()
                .find_map(|line| line.strip_prefix("content-length:"))
                .map_or(0, |n| n.trim().parse::<usize>().unwrap());
            break end + 4 + length;
        }
    };
    while request.len() < needed {
        let read = socket.read(&mut buffer).await.unwrap();
        assert!(read > 0, "the client closed before its request ended");
        request.extend_from_slice(&buffer[..read]);
    }
    let mut head =
        String::from("HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\nconnection: close\r\n");
    if let Some(label) = label {
        head.push_str(&format!("content-type: {label}\r\n"));
    }
    head.push_str("\r\n");
    // The client may stop reading early (a malformed event ends its reading): writes may fail.
    if socket.write_all(head.as_bytes()).await.is_err() {
        return;
    }
    for piece in pieces.iter().filter(|piece| !piece.is_empty()) {
        let mut chunk = format!("{:x}\r\n", piece.len()).into_bytes();
        chunk.extend_from_slice(piece);
        chunk.extend_from_slice(b"\r\n");
        if socket.write_all(&chunk).await.is_err() || socket.flush().await.is_err() {
            return;
        }
        // Let the client read this piece before the next is written.
        tokio::task::yield_now().await;
    }
    let _ = socket.write_all(b"0\r\n\r\n").await;
    let _ = socket.shutdown().await;
}

/// What one streamed request gave: its deltas, and its answer or error (as text).
fn stream(
    model: &dyn ChatModel,
    label: Option<&str>,
    pieces: &[&[u8]],
) -> (Vec<StreamDelta>, String) {
    let fixture = &*FIXTURE;
    let request = ChatRequest {
        model: "fuzz-model".to_owned(),
        messages: vec![Message::user("hi")],
        ..ChatRequest::default()
    };
    let mut deltas = Vec::new();
    let answer = fixture.runtime.block_on(async {
        let served = serve(&fixture.listener, label, pieces);
        let mut on_delta = |delta| deltas.push(delta);
        let asked = model.stream(&request, &mut on_delta);
        let ((), answer) = tokio::time::timeout(Duration::from_secs(8), async {
            tokio::join!(served, asked)
        })
        .await
        .expect("the stream was read within 8 s");
        answer
    });
    if let Ok(response) = &answer {
        for call in &response.calls {
            let id = match call {
                Ok(request) => &request.id,
                Err(rejected) => &rejected.id,
            };
            assert!(
                !id.is_empty(),
                "a call of the answer has no id: {response:?}"
            );
        }
    }
    (deltas, format!("{answer:?}"))
}

fuzz_target!(|input: Input| {
    let fixture = &*FIXTURE;
    let api = usize::from(input.api) % fixture.models.len();
    let model = &*fixture.models[api];
    let label = match input.label {
        0..=200 => Some("text/event-stream"),
        201..=240 => Some("application/json"),
        _ => None,
    };
    let body = body(api, &input.events);
    if body.len() > 1 << 16 {
        return;
    }
    let whole = stream(model, label, &[&body]);
    // `FUZZ_SHOW=1 cargo fuzz run streamed_answers corpus/streamed_answers -- -runs=0`
    // tells what the corpus's streams are read as.
    if std::env::var_os("FUZZ_SHOW").is_some() {
        let read: String = whole.1.chars().take(70).collect();
        eprintln!("{} deltas: {read}", whole.0.len());
    }
    let mut pieces: Vec<&[u8]> = Vec::new();
    let mut rest = &body[..];
    let mut sizes = input.pieces.iter().cycle();
    while !rest.is_empty() {
        let size = sizes
            .next()
            .map_or(rest.len(), |size| usize::from(*size).max(1));
        let (piece, after) = rest.split_at(size.min(rest.len()));
        pieces.push(piece);
        rest = after;
    }
    let cut = stream(model, label, &pieces);
    assert_eq!(
        whole,
        cut,
        "the stream cut in {} pieces read otherwise",
        pieces.len()
    );
});
