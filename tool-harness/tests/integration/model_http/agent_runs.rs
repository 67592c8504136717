//! Whole agent runs, several turns each, through every API's client against the local
//! server scripted turn by turn (answers whole or streamed): what the server is sent on each
//! turn, read back into one shape for every API ([`Sent`]), and what the run gives.

use std::time::Duration;

use serde_json::{Value, json};
use toolsmith_core::ToolShed;
use toolsmith_harness::agent::{AgentSession, AgentSessionBuilder};

use super::server::{MockServer, Reply, sse_text};
use super::{Api, Client};

/// One call of a scripted answer.
#[derive(Debug, Clone)]
pub(super) struct Call {
    pub(super) id: &'static str,
    pub(super) name: &'static str,
    pub(super) arguments: Value,
}

pub(super) fn call(id: &'static str, name: &'static str, arguments: Value) -> Call {
    Call {
        id,
        name,
        arguments,
    }
}

/// A scripted answer of the model: text, calls, and the tokens it reports.
#[derive(Debug, Clone)]
pub(super) struct Answer {
    pub(super) text: Option<&'static str>,
    pub(super) calls: Vec<Call>,
    pub(super) input_tokens: u64,
    pub(super) output_tokens: u64,
}

impl Answer {
    pub(super) fn calls(calls: Vec<Call>) -> Self {
        Self {
            text: None,
            calls,
            input_tokens: 100,
            output_tokens: 20,
        }
    }

    pub(super) fn text(text: &'static str) -> Self {
        Self {
            text: Some(text),
            calls: Vec::new(),
            input_tokens: 100,
            output_tokens: 20,
        }
    }

    pub(super) fn with_text(mut self, text: &'static str) -> Self {
        self.text = Some(text);
        self
    }

    pub(super) fn with_usage(mut self, input_tokens: u64, output_tokens: u64) -> Self {
        self.input_tokens = input_tokens;
        self.output_tokens = output_tokens;
        self
    }

    /// The answer as `api` writes it whole.
    pub(super) fn whole(&self, api: Api) -> Value {
        let (input, output) = (self.input_tokens, self.output_tokens);
        match api {
            Api::Chat => {
                let mut message = json!({"role": "assistant", "content": self.text});
                if !self.calls.is_empty() {
                    message["tool_calls"] = self
                        .calls
                        .iter()
                        .map(|call| {
                            json!({"id": call.id, "type": "function", "function":
                                {"name": call.name, "arguments": call.arguments.to_string()}})
                        })
                        .collect();
                }
                json!({"id": "chatcmpl-1", "object": "chat.completion", "model": "gpt-4.1-mini",
                    "choices": [{"index": 0, "message": message,
                        "finish_reason": self.finish(api)}],
                    "usage": {"prompt_tokens": input, "completion_tokens": output,
                        "total_tokens": input + output}})
            }
            Api::Responses => json!({"id": "resp_1", "object": "response",
                "status": "completed", "model": "gpt-4.1-mini",
                "output": self.responses_output(),
                "usage": {"input_tokens": input, "output_tokens": output,
                    "total_tokens": input + output}}),
            Api::Anthropic => json!({"id": "msg_1", "type": "message", "role": "assistant",
                "model": "claude-sonnet-4-5", "content": self.anthropic_content(),
                "stop_reason": self.finish(api), "stop_sequence": null,
                "usage": {"input_tokens": input, "output_tokens": output}}),
            Api::Gemini => json!({"candidates": [{"content": {"role": "model",
                    "parts": self.gemini_parts()}, "finishReason": "STOP", "index": 0}],
                "usageMetadata": {"promptTokenCount": input, "candidatesTokenCount": output,
                    "totalTokenCount": input + output},
                "modelVersion": "gemini-2.5-flash"}),
        }
    }

    /// The answer as `api` streams it: text and each call's arguments in pieces where the
    /// API streams them so.
    pub(super) fn streamed(&self, api: Api) -> String {
        let (input, output) = (self.input_tokens, self.output_tokens);
        let halves = |text: &str| {
            let cut = text
                .char_indices()
                .nth(text.chars().count() / 2)
                .map_or(0, |(i, _)| i);
            [text[..cut].to_owned(), text[cut..].to_owned()]
        };
        match api {
            Api::Chat => {
                let chunk = |delta: Value, finish: Value| {
                    (
                        None,
                        json!({"id": "chatcmpl-1", "object": "chat.completion.chunk",
                            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}),
                    )
                };
                let mut events = vec![chunk(
                    json!({"role": "assistant", "content": ""}),
                    Value::Null,
                )];
                if let Some(text) = self.text {
                    for piece in halves(text) {
                        events.push(chunk(json!({"content": piece}), Value::Null));
                    }
                }
                for (index, call) in self.calls.iter().enumerate() {
                    events.push(chunk(
                        json!({"tool_calls": [{"index": index, "id": call.id, "type": "function",
                            "function": {"name": call.name, "arguments": ""}}]}),
                        Value::Null,
                    ));
                    for piece in halves(&call.arguments.to_string()) {
                        events.push(chunk(
                            json!({"tool_calls": [{"index": index,
                                "function": {"arguments": piece}}]}),
                            Value::Null,
                        ));
                    }
                }
                events.push(chunk(json!({}), json!(self.finish(api))));
                events.push((
                    None,
                    json!({"id": "chatcmpl-1", "object": "chat.completion.chunk", "choices": [],
                        "usage": {"prompt_tokens": input, "completion_tokens": output,
                            "total_tokens": input + output}}),
                ));
                sse_text(events) + "data: [DONE]\n\n"
            }
            Api::Responses => {
                let event = |kind: &'static str, mut data: Value| {
                    data["type"] = json!(kind);
                    (Some(kind), data)
                };
                let mut events = vec![event(
                    "response.created",
                    json!({"response": {"id": "resp_1", "status": "in_progress", "output": []}}),
                )];
                for (index, item) in self.responses_output().iter().enumerate() {
                    let mut opening = item.clone();
                    if item["type"] == "function_call" {
                        opening["arguments"] = json!("");
                    } else {
                        opening["content"] = json!([]);
                    }
                    events.push(event(
                        "response.output_item.added",
                        json!({"output_index": index, "item": opening}),
                    ));
                    let (kind, whole) = if item["type"] == "function_call" {
                        ("response.function_call_arguments.delta", &item["arguments"])
                    } else {
                        ("response.output_text.delta", &item["content"][0]["text"])
                    };
                    for piece in halves(whole.as_str().unwrap_or_default()) {
                        events.push(event(
                            kind,
                            json!({"output_index": index, "item_id": item["id"],
                                "content_index": 0, "delta": piece}),
                        ));
                    }
                    events.push(event(
                        "response.output_item.done",
                        json!({"output_index": index, "item": item}),
                    ));
                }
                events.push(event(
                    "response.completed",
                    json!({"response": self.whole(api)}),
                ));
                sse_text(events)
            }
            Api::Anthropic => {
                let mut events = vec![json!({"type": "message_start", "message": {
                    "id": "msg_1", "type": "message", "role": "assistant",
                    "model": "claude-sonnet-4-5", "content": [], "stop_reason": null,
                    "stop_sequence": null, "usage": {"input_tokens": input, "output_tokens": 1}}})];
                for (index, block) in self.anthropic_content().iter().enumerate() {
                    let (opening, kind, key, whole) = if block["type"] == "tool_use" {
                        let mut opening = block.clone();
                        opening["input"] = json!({});
                        let whole = block["input"].to_string();
                        (opening, "input_json_delta", "partial_json", whole)
                    } else {
                        let whole = block["text"].as_str().unwrap_or_default().to_owned();
                        (
                            json!({"type": "text", "text": ""}),
                            "text_delta",
                            "text",
                            whole,
                        )
                    };
                    events.push(json!({"type": "content_block_start", "index": index,
                        "content_block": opening}));
                    for piece in halves(&whole) {
                        let mut delta = json!({"type": kind});
                        delta[key] = json!(piece);
                        events.push(json!({"type": "content_block_delta", "index": index,
                            "delta": delta}));
                    }
                    events.push(json!({"type": "content_block_stop", "index": index}));
                }
                events.push(json!({"type": "message_delta", "delta": {
                    "stop_reason": self.finish(api), "stop_sequence": null},
                    "usage": {"output_tokens": output}}));
                events.push(json!({"type": "message_stop"}));
                sse_text(
                    events
                        .iter()
                        .map(|data| (data["type"].as_str(), data.clone())),
                )
            }
            Api::Gemini => {
                let chunk = |parts: Value, last: bool| {
                    let mut chunk = json!({"candidates": [{"content": {"role": "model",
                            "parts": parts}, "index": 0}],
                        "modelVersion": "gemini-2.5-flash"});
                    if last {
                        chunk["candidates"][0]["finishReason"] = json!("STOP");
                        chunk["usageMetadata"] = json!({"promptTokenCount": input,
                            "candidatesTokenCount": output, "totalTokenCount": input + output});
                    }
                    (None, chunk)
                };
                let mut events = Vec::new();
                if let Some(text) = self.text {
                    for piece in halves(text) {
                        events.push(chunk(json!([{"text": piece}]), false));
                    }
                }
                // Gemini sends each call whole, in a chunk of its own.
                for part in self
                    .gemini_parts()
                    .into_iter()
                    .filter(|part| part.get("functionCall").is_some())
                {
                    events.push(chunk(json!([part]), false));
                }
                events.push(chunk(json!([{"text": ""}]), true));
                sse_text(events)
            }
        }
    }

    /// The server's reply with this answer, streamed or whole.
    pub(super) fn reply(&self, api: Api, streamed: bool) -> Reply {
        if streamed {
            Reply::sse(&self.streamed(api), 29)
        } else {
            Reply::json(200, &self.whole(api))
        }
    }

    fn finish(&self, api: Api) -> &'static str {
        match (api, self.calls.is_empty()) {
            (Api::Anthropic, true) => "end_turn",
            (Api::Anthropic, false) => "tool_use",
            (_, true) => "stop",
            (_, false) => "tool_calls",
        }
    }

    fn responses_output(&self) -> Vec<Value> {
        let mut output = Vec::new();
        if let Some(text) = self.text {
            output.push(
                json!({"type": "message", "id": "msg_1", "status": "completed",
                "role": "assistant",
                "content": [{"type": "output_text", "text": text, "annotations": []}]}),
            );
        }
        for call in &self.calls {
            output.push(
                json!({"type": "function_call", "id": format!("fc_{}", call.id),
                "call_id": call.id, "name": call.name,
                "arguments": call.arguments.to_string(), "status": "completed"}),
            );
        }
        output
    }

    fn anthropic_content(&self) -> Vec<Value> {
        let mut content = Vec::new();
        if let Some(text) = self.text {
            content.push(json!({"type": "text", "text": text}));
        }
        for call in &self.calls {
            content.push(json!({"type": "tool_use", "id": call.id, "name": call.name,
                "input": call.arguments}));
        }
        content
    }

    fn gemini_parts(&self) -> Vec<Value> {
        let mut parts = Vec::new();
        if let Some(text) = self.text {
            parts.push(json!({"text": text}));
        }
        for call in &self.calls {
            parts.push(json!({"functionCall": {"id": call.id, "name": call.name,
                "args": call.arguments}}));
        }
        parts
    }
}

/// One result as a request carried it: the call's id, the text, and whether it was marked
/// an error where the API marks them (Anthropic's `is_error`, Gemini's `error`).
#[derive(Debug, Clone, PartialEq)]
pub(super) struct SentResult {
    pub(super) id: String,
    pub(super) text: String,
    pub(super) marked_error: bool,
}

/// A request's conversation, read into one shape for every API.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Sent {
    User(String),
    /// The model's text and calls `(id, name, arguments)`.
    Model(Option<String>, Vec<(String, String, Value)>),
    Results(Vec<SentResult>),
}

fn text_of(content: &Value) -> String {
    match content {
        Value::String(text) => text.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|part| part["text"].as_str())
            .collect::<Vec<_>>()
            .join(""),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

fn arguments_of(value: &Value) -> Value {
    match value {
        Value::String(text) => serde_json::from_str(text).unwrap_or_else(|_| json!(text)),
        other => other.clone(),
    }
}

/// Appends `call` to the model turn at the end of `sent`, or starts one.
fn push_call(sent: &mut Vec<Sent>, call: (String, String, Value)) {
    if let Some(Sent::Model(_, calls)) = sent.last_mut() {
        calls.push(call);
    } else {
        sent.push(Sent::Model(None, vec![call]));
    }
}

/// Appends `result` to the results at the end of `sent`, or starts them.
fn push_result(sent: &mut Vec<Sent>, result: SentResult) {
    if let Some(Sent::Results(results)) = sent.last_mut() {
        results.push(result);
    } else {
        sent.push(Sent::Results(vec![result]));
    }
}

/// The conversation `api`'s request `body` carried.
pub(super) fn sent(api: Api, body: &Value) -> Vec<Sent> {
    let mut sent = Vec::new();
    let items = |key: &str| body[key].as_array().cloned().unwrap_or_default();
    match api {
        Api::Chat => {
            for message in items("messages") {
                match message["role"].as_str() {
                    Some("user") => sent.push(Sent::User(text_of(&message["content"]))),
                    Some("assistant") => {
                        let text = message["content"].as_str().map(str::to_owned);
                        let calls = message["tool_calls"]
                            .as_array()
                            .into_iter()
                            .flatten()
                            .map(|call| {
                                (
                                    call["id"].as_str().unwrap_or_default().to_owned(),
                                    call["function"]["name"]
                                        .as_str()
                                        .unwrap_or_default()
                                        .to_owned(),
                                    arguments_of(&call["function"]["arguments"]),
                                )
                            })
                            .collect();
                        sent.push(Sent::Model(text, calls));
                    }
                    Some("tool") => push_result(
                        &mut sent,
                        SentResult {
                            id: message["tool_call_id"]
                                .as_str()
                                .unwrap_or_default()
                                .to_owned(),
                            text: text_of(&message["content"]),
                            marked_error: false,
                        },
                    ),
                    _ => {}
                }
            }
        }
        Api::Responses => {
            for item in items("input") {
                match (item["type"].as_str(), item["role"].as_str()) {
                    (Some("function_call"), _) => push_call(
                        &mut sent,
                        (
                            item["call_id"].as_str().unwrap_or_default().to_owned(),
                            item["name"].as_str().unwrap_or_default().to_owned(),
                            arguments_of(&item["arguments"]),
                        ),
                    ),
                    (Some("function_call_output"), _) => push_result(
                        &mut sent,
                        SentResult {
                            id: item["call_id"].as_str().unwrap_or_default().to_owned(),
                            text: text_of(&item["output"]),
                            marked_error: false,
                        },
                    ),
                    (_, Some("user")) => sent.push(Sent::User(text_of(&item["content"]))),
                    (_, Some("assistant")) => {
                        sent.push(Sent::Model(Some(text_of(&item["content"])), Vec::new()));
                    }
                    _ => {}
                }
            }
        }
        Api::Anthropic => {
            for message in items("messages") {
                let blocks = match &message["content"] {
                    Value::String(text) => vec![json!({"type": "text", "text": text})],
                    Value::Array(blocks) => blocks.clone(),
                    _ => Vec::new(),
                };
                if message["role"] == "assistant" {
                    let text: String = blocks
                        .iter()
                        .filter(|block| block["type"] == "text")
                        .filter_map(|block| block["text"].as_str())
                        .collect();
                    let calls = blocks
                        .iter()
                        .filter(|block| block["type"] == "tool_use")
                        .map(|block| {
                            (
                                block["id"].as_str().unwrap_or_default().to_owned(),
                                block["name"].as_str().unwrap_or_default().to_owned(),
                                block["input"].clone(),
                            )
                        })
                        .collect();
                    sent.push(Sent::Model((!text.is_empty()).then_some(text), calls));
                    continue;
                }
                for block in blocks {
                    match block["type"].as_str() {
                        Some("tool_result") => push_result(
                            &mut sent,
                            SentResult {
                                id: block["tool_use_id"].as_str().unwrap_or_default().to_owned(),
                                text: text_of(&block["content"]),
                                marked_error: block["is_error"] == true,
                            },
                        ),
                        Some("text") => sent.push(Sent::User(text_of(&block["text"]))),
                        _ => {}
                    }
                }
            }
        }
        Api::Gemini => {
            for content in items("contents") {
                let parts = content["parts"].as_array().cloned().unwrap_or_default();
                if content["role"] == "model" {
                    let text: String = parts
                        .iter()
                        .filter(|part| part["thought"] != true)
                        .filter_map(|part| part["text"].as_str())
                        .collect();
                    let calls = parts
                        .iter()
                        .filter_map(|part| part.get("functionCall"))
                        .map(|call| {
                            (
                                call["id"].as_str().unwrap_or_default().to_owned(),
                                call["name"].as_str().unwrap_or_default().to_owned(),
                                call["args"].clone(),
                            )
                        })
                        .collect();
                    sent.push(Sent::Model((!text.is_empty()).then_some(text), calls));
                    continue;
                }
                for part in parts {
                    if let Some(response) = part.get("functionResponse") {
                        let body = &response["response"];
                        let marked_error = body.get("error").is_some();
                        let text = if marked_error {
                            text_of(&body["error"])
                        } else {
                            text_of(&body["output"])
                        };
                        push_result(
                            &mut sent,
                            SentResult {
                                id: response["id"].as_str().unwrap_or_default().to_owned(),
                                text,
                                marked_error,
                            },
                        );
                    } else if let Some(text) = part["text"].as_str() {
                        sent.push(Sent::User(text.to_owned()));
                    }
                }
            }
        }
    }
    sent
}

/// The names of the tools `api`'s request `body` declared.
pub(super) fn declared(api: Api, body: &Value) -> Vec<String> {
    let tools = body["tools"].as_array().cloned().unwrap_or_default();
    let names = |tools: &[Value], at: &dyn Fn(&Value) -> &Value| -> Vec<String> {
        tools
            .iter()
            .filter_map(|tool| at(tool).as_str().map(str::to_owned))
            .collect()
    };
    match api {
        Api::Chat => names(&tools, &|tool| &tool["function"]["name"]),
        Api::Responses | Api::Anthropic => names(&tools, &|tool| &tool["name"]),
        Api::Gemini => tools
            .iter()
            .flat_map(|tool| {
                names(
                    tool["functionDeclarations"]
                        .as_array()
                        .map_or(&[], Vec::as_slice),
                    &|d| &d["name"],
                )
            })
            .collect(),
    }
}

/// Every call of `sent` has exactly one result, in the results right after its turn, in the
/// order of the calls, and no result answers a call that was not made.
pub(super) fn assert_calls_answered_in_order(api: Api, sent: &[Sent]) {
    let mut entries = sent.iter().peekable();
    while let Some(entry) = entries.next() {
        match entry {
            Sent::Model(_, calls) if !calls.is_empty() => {
                let Some(Sent::Results(results)) = entries.next() else {
                    panic!("{api:?}: calls without results right after them: {sent:#?}");
                };
                let made: Vec<&str> = calls.iter().map(|call| call.0.as_str()).collect();
                let answered: Vec<&str> = results.iter().map(|r| r.id.as_str()).collect();
                assert_eq!(made, answered, "{api:?}: {sent:#?}");
            }
            Sent::Results(_) => panic!("{api:?}: results without calls: {sent:#?}"),
            _ => {}
        }
    }
}

/// A session of `api`'s client on `server`, streamed or not, built from `tools` further by
/// `more`.
pub(super) fn session_on(
    api: Api,
    server: &MockServer,
    streamed: bool,
    tools: ToolShed,
    more: impl FnOnce(AgentSessionBuilder) -> AgentSessionBuilder,
) -> AgentSession {
    let builder = AgentSession::builder(api.model(&server.base, &Client::default()))
        .with_model(api.model_name())
        .with_toolshed(tools)
        .with_streaming(streamed);
    more(builder).build().expect("builds")
}

/// Each API, whole and streamed.
pub(super) fn every_api_and_mode() -> Vec<(Api, bool)> {
    Api::ALL
        .into_iter()
        .flat_map(|api| [(api, false), (api, true)])
        .collect()
}

// ---- parallel calls of one answer -------------------------------------------------------

/// Add two integers.
#[toolsmith_core::tool_fn]
fn add(a: i64, b: i64) -> i64 {
    a + b
}

/// Break.
#[toolsmith_core::tool_fn]
fn boom() -> String {
    panic!("boom broke")
}

/// Take a long time.
#[toolsmith_core::tool_fn(timeout = "50ms")]
async fn slow() -> String {
    tokio::time::sleep(Duration::from_secs(30)).await;
    "late".to_owned()
}

fn parallel_tools() -> ToolShed {
    ToolShed::new().tool(Add).tool(Boom).tool(Slow)
}

/// One answer with five calls: one that runs, one whose arguments do not validate, one
/// whose tool panics, one that times out, one to a tool that does not exist; each is
/// answered under its own id, in the order of the calls, the run goes on to its answer.
#[tokio::test]
async fn parallel_calls_each_answered_under_their_own_id_in_order() {
    let calls = Answer::calls(vec![
        call("c_ok", "add", json!({"a": 2, "b": 3})),
        call("c_bad", "add", json!({"a": "two", "b": 3})),
        call("c_boom", "boom", json!({})),
        call("c_slow", "slow", json!({})),
        call("c_none", "nope", json!({})),
    ])
    .with_text("Trying them all.");
    for (api, streamed) in every_api_and_mode() {
        let server = MockServer::start([
            calls.reply(api, streamed),
            Answer::text("Done.").reply(api, streamed),
        ])
        .await;
        let session = session_on(api, &server, streamed, parallel_tools(), |b| b);
        session
            .tool_manager()
            .activate(&["add".into(), "boom".into(), "slow".into()]);
        let run = session
            .run("Try them.")
            .await
            .unwrap_or_else(|err| panic!("{api:?} streamed {streamed}: {err}"));
        assert_eq!(run.text, "Done.", "{api:?} {streamed}");
        let requests = server.requests();
        assert_eq!(requests.len(), 2, "{api:?} {streamed}");
        let second = sent(api, &requests[1].body);
        assert_calls_answered_in_order(api, &second);
        assert_eq!(second.len(), 3, "{api:?} {streamed}: {second:#?}");
        assert_eq!(second[0], Sent::User("Try them.".into()), "{api:?}");
        let Sent::Results(results) = &second[2] else {
            panic!("{api:?}: {second:#?}");
        };
        assert_eq!(results[0].text, "5", "{api:?} {streamed}");
        assert!(!results[0].marked_error, "{api:?}");
        for (result, says) in
            results[1..]
                .iter()
                .zip(["/a", "panic", "timed out", "unknown tool 'nope'"])
        {
            assert!(
                result.text.to_lowercase().contains(says),
                "{api:?} {streamed}: {result:?} should say {says}"
            );
            if matches!(api, Api::Anthropic | Api::Gemini) {
                assert!(result.marked_error, "{api:?} {streamed}: {result:?}");
            }
        }
        assert_eq!(run.tool_calls.len(), 5, "{api:?}");
        crate::common::assert_every_call_answered(&run.transcript);
    }
}

// ---- `shed` mid-run ----------------------------------------------------------------------

/// `shed` finds `add` on the first turn: the second request offers it, and the model's call
/// of it runs; a search and a call of the tool it finds in one answer run in that order.
#[tokio::test]
async fn shed_finds_tools_mid_run_and_the_next_request_offers_them() {
    for (api, streamed) in every_api_and_mode() {
        let server = MockServer::start([
            Answer::calls(vec![call(
                "s1",
                "shed",
                json!({"description": "add two numbers"}),
            )])
            .reply(api, streamed),
            Answer::calls(vec![call("a1", "add", json!({"a": 2, "b": 3}))]).reply(api, streamed),
            Answer::text("5").reply(api, streamed),
        ])
        .await;
        let session = session_on(api, &server, streamed, parallel_tools(), |b| b);
        let run = session
            .run("2 + 3?")
            .await
            .unwrap_or_else(|err| panic!("{api:?} {streamed}: {err}"));
        assert_eq!(run.text, "5", "{api:?} {streamed}");
        let requests = server.requests();
        let offered: Vec<Vec<String>> = requests
            .iter()
            .map(|request| declared(api, &request.body))
            .collect();
        assert_eq!(offered[0], ["shed"], "{api:?} {streamed}");
        assert_eq!(offered[1], ["shed", "add"], "{api:?} {streamed}");
        assert_eq!(offered[2], ["shed", "add"], "{api:?} {streamed}");
        let third = sent(api, &requests[2].body);
        assert_calls_answered_in_order(api, &third);
        let Sent::Results(results) = &third[4] else {
            panic!("{api:?}: {third:#?}");
        };
        assert_eq!(results[0].text, "5", "{api:?} {streamed}");

        // One answer: the search, then the call of what it finds.
        let server = MockServer::start([
            Answer::calls(vec![
                call("s1", "shed", json!({"description": "add two numbers"})),
                call("a1", "add", json!({"a": 2, "b": 3})),
            ])
            .reply(api, streamed),
            Answer::text("5").reply(api, streamed),
        ])
        .await;
        let session = session_on(api, &server, streamed, parallel_tools(), |b| b);
        let run = session.run("2 + 3?").await.unwrap();
        assert_eq!(run.tool_calls[1].result.content.to_text(), "5", "{api:?}");
        let second = sent(api, &server.requests()[1].body);
        assert_calls_answered_in_order(api, &second);
        assert_eq!(declared(api, &server.requests()[1].body), ["shed", "add"]);
    }
}

// ---- a sub-agent as a tool --------------------------------------------------------------

/// An `AgentTool` whose agent talks to a server of its own: its failure (the API's 400) is
/// an error result the parent's model reads and the parent goes on; its tokens count in the
/// parent's `child_usage` and its events reach the parent's handlers nested under the call.
#[tokio::test]
async fn a_sub_agent_s_failure_is_told_to_the_parent_and_its_tokens_counted() {
    use std::sync::{Arc, Mutex};
    use toolsmith_harness::agent::{AgentEvent, AgentTool};

    for (api, streamed) in every_api_and_mode() {
        let child_server = MockServer::start([
            Reply::json(400, &api.error_body(400, "the child's request is bad")),
            Answer::text("Rust 1.0: May 2015.")
                .with_usage(30, 5)
                .reply(api, streamed),
        ])
        .await;
        let child = session_on(api, &child_server, streamed, ToolShed::new(), |b| b);
        let research = AgentTool::new(Arc::new(child), "research", "Research a question.");
        let parent_server = MockServer::start([
            Answer::calls(vec![call("r1", "research", json!({"input": "Rust 1.0?"}))])
                .reply(api, streamed),
            Answer::calls(vec![call(
                "r2",
                "research",
                json!({"input": "Rust 1.0, again?"}),
            )])
            .reply(api, streamed),
            Answer::text("May 2015.").reply(api, streamed),
        ])
        .await;
        let events = Arc::new(Mutex::new(Vec::new()));
        let heard = Arc::clone(&events);
        let parent = session_on(
            api,
            &parent_server,
            streamed,
            ToolShed::new().tool(research),
            |b| {
                b.with_event_handler(move |event: &AgentEvent| {
                    heard.lock().unwrap().push(event.clone());
                })
            },
        );
        parent.tool_manager().activate(&["research".into()]);
        let run = parent
            .run("When was Rust 1.0 released?")
            .await
            .unwrap_or_else(|err| panic!("{api:?} {streamed}: {err}"));
        assert_eq!(run.text, "May 2015.", "{api:?} {streamed}");
        assert_eq!(run.child_usage.total_tokens(), 35, "{api:?} {streamed}");
        let requests = parent_server.requests();
        assert_eq!(requests.len(), 3);
        let second = sent(api, &requests[1].body);
        let Some(Sent::Results(failed)) = second.last() else {
            panic!("{api:?}: {second:#?}");
        };
        assert_eq!(failed[0].id, "r1");
        assert!(
            failed[0].text.contains("the child's request is bad"),
            "{api:?} {streamed}: {failed:?}"
        );
        let third = sent(api, &requests[2].body);
        assert_calls_answered_in_order(api, &third);
        let Some(Sent::Results(answered)) = third.last() else {
            panic!("{api:?}: {third:#?}");
        };
        assert_eq!(
            answered[0].text, "Rust 1.0: May 2015.",
            "{api:?} {streamed}"
        );
        let events = events.lock().unwrap();
        let nested: Vec<&str> = events
            .iter()
            .filter_map(|event| match event {
                AgentEvent::SubAgent { agent, .. } => Some(agent.as_str()),
                _ => None,
            })
            .collect();
        assert!(
            nested.contains(&"r1") && nested.contains(&"r2"),
            "{api:?}: {nested:?}"
        );
    }
}

/// The sub-agent's tokens push the parent past its budget: the parent's next model call is
/// not made, and its transcript ends with the sub-agent's result.
#[tokio::test]
async fn a_sub_agent_s_tokens_spend_the_parent_s_budget() {
    use std::sync::Arc;
    use toolsmith_harness::agent::{AgentTool, AgenticError};

    for (api, streamed) in every_api_and_mode() {
        let child_server = MockServer::start([Answer::text("Found it.")
            .with_usage(50, 40)
            .reply(api, streamed)])
        .await;
        let child = session_on(api, &child_server, streamed, ToolShed::new(), |b| b);
        let research = AgentTool::new(Arc::new(child), "research", "Research a question.");
        let parent_server = MockServer::start([
            Answer::calls(vec![call("r1", "research", json!({"input": "Find it."}))])
                .with_usage(100, 20)
                .reply(api, streamed),
            Answer::text("unused").reply(api, streamed),
        ])
        .await;
        let parent = session_on(
            api,
            &parent_server,
            streamed,
            ToolShed::new().tool(research),
            |b| b.with_token_budget(200),
        );
        parent.tool_manager().activate(&["research".into()]);
        let err = parent.run("Find it.").await.unwrap_err();
        let AgenticError::TokenBudget { limit, spent, run } = &err else {
            panic!("{api:?} {streamed}: {err}");
        };
        assert_eq!((*limit, *spent), (200, 210), "{api:?} {streamed}");
        assert_eq!(run.child_usage.total_tokens(), 90);
        assert_eq!(parent_server.requests().len(), 1, "{api:?} {streamed}");
        crate::common::assert_every_call_answered(&run.transcript);
    }
}

// ---- cancelled, dropped, limits: the session reused --------------------------------------

/// A `send` stopped while its second model call is under way keeps the first turn, calls
/// and results together; the next `send` continues from there, its question after the
/// results. A `send` dropped at the same point keeps nothing, and the next one starts from
/// the conversation as it was.
#[tokio::test]
async fn a_send_stopped_or_dropped_midway_leaves_a_session_that_goes_on() {
    use toolsmith_core::CancellationToken;
    use toolsmith_harness::agent::AgenticError;

    for (api, streamed) in every_api_and_mode() {
        let first = Answer::calls(vec![
            call("c1", "add", json!({"a": 2, "b": 3})),
            call("c2", "add", json!({"a": 1, "b": 1})),
        ]);
        let server = MockServer::start([
            first.reply(api, streamed),
            Answer::text("late")
                .reply(api, streamed)
                .after(Duration::from_secs(30)),
            Answer::text("Going on.").reply(api, streamed),
            first.reply(api, streamed),
            Answer::text("late")
                .reply(api, streamed)
                .after(Duration::from_secs(30)),
            Answer::text("Fresh.").reply(api, streamed),
        ])
        .await;
        let session = session_on(api, &server, streamed, parallel_tools(), |b| b);
        session.tool_manager().activate(&["add".into()]);

        let stop = CancellationToken::new();
        let pressed = stop.clone();
        let (stopped, ()) = tokio::join!(session.send_with_cancellation("Add.", stop), async {
            server.hold_the_clock_until_read(2).await;
            pressed.cancel();
        });
        assert!(
            matches!(stopped, Err(AgenticError::Cancelled { .. })),
            "{api:?} {streamed}: {stopped:?}"
        );
        let run = session.send("Go on.").await.unwrap();
        assert_eq!(run.text, "Going on.", "{api:?} {streamed}");
        let third = sent(api, &server.requests()[2].body);
        assert_calls_answered_in_order(api, &third);
        assert_eq!(third.len(), 4, "{api:?} {streamed}: {third:#?}");
        assert_eq!(third[3], Sent::User("Go on.".into()), "{api:?} {streamed}");

        // Dropped: nothing of it kept.
        session.reset().await;
        let dropped = tokio::select! {
            ended = session.send("Add again.") => Some(ended),
            () = server.hold_the_clock_until_read(5) => None,
        };
        assert!(dropped.is_none(), "{api:?} {streamed}");
        assert!(session.transcript().await.is_empty(), "{api:?} {streamed}");
        let run = session.send("Afresh.").await.unwrap();
        assert_eq!(run.text, "Fresh.", "{api:?} {streamed}");
        let sixth = sent(api, &server.requests()[5].body);
        assert_eq!(sixth, [Sent::User("Afresh.".into())], "{api:?} {streamed}");
    }
}

/// Turns spent with calls still coming: the run ends with every call answered; the next
/// `send` continues. With a final answer on the limit, the extra request asks for none
/// of the tools, and the model's text is the answer even when it calls anyway.
#[tokio::test]
async fn turns_spent_mid_run_leave_every_call_answered_and_the_final_answer_asks_no_calls() {
    use toolsmith_harness::agent::AgenticError;

    for (api, streamed) in every_api_and_mode() {
        let adding = |id| Answer::calls(vec![call(id, "add", json!({"a": 1, "b": 2}))]);
        let server = MockServer::start([
            adding("t1").reply(api, streamed),
            adding("t2").reply(api, streamed),
            Answer::text("Three.").reply(api, streamed),
        ])
        .await;
        let session = session_on(api, &server, streamed, parallel_tools(), |b| {
            b.with_max_turns(2)
        });
        session.tool_manager().activate(&["add".into()]);
        let err = session.send("Keep adding.").await.unwrap_err();
        let AgenticError::MaxTurns { run, .. } = &err else {
            panic!("{api:?} {streamed}: {err}");
        };
        crate::common::assert_every_call_answered(&run.transcript);
        assert_eq!(session.transcript().await, run.transcript, "{api:?}");
        session.send("Enough.").await.unwrap();
        let third = sent(api, &server.requests()[2].body);
        assert_calls_answered_in_order(api, &third);
        assert_eq!(third.last(), Some(&Sent::User("Enough.".into())), "{api:?}");

        let server = MockServer::start([
            adding("t1").reply(api, streamed),
            adding("t2").reply(api, streamed),
            adding("t3").with_text("It is 3.").reply(api, streamed),
            Answer::text("Yes.").reply(api, streamed),
        ])
        .await;
        let session = session_on(api, &server, streamed, parallel_tools(), |b| {
            b.with_max_turns(2).with_final_answer_on_limit(true)
        });
        session.tool_manager().activate(&["add".into()]);
        let run = session
            .send("Keep adding.")
            .await
            .unwrap_or_else(|err| panic!("{api:?} {streamed}: {err}"));
        assert_eq!(run.text, "It is 3.", "{api:?} {streamed}");
        let requests = server.requests();
        let choice = match api {
            Api::Gemini => requests[2].body["toolConfig"]["functionCallingConfig"]["mode"].clone(),
            Api::Anthropic => requests[2].body["tool_choice"]["type"].clone(),
            Api::Chat | Api::Responses => requests[2].body["tool_choice"].clone(),
        };
        assert_eq!(
            choice.as_str().map(str::to_lowercase).as_deref(),
            Some("none"),
            "{api:?}"
        );
        session.send("Sure?").await.unwrap();
        let fourth = sent(api, &server.requests()[3].body);
        assert_calls_answered_in_order(api, &fourth);
        assert_eq!(
            fourth[fourth.len() - 2],
            Sent::Model(Some("It is 3.".into()), Vec::new()),
            "{api:?} {streamed}: {fourth:#?}"
        );
    }
}

/// A typed answer whose arguments do not fit: sent back under its call's id with what was
/// wrong, then mended.
#[tokio::test]
async fn a_typed_answer_that_does_not_validate_goes_back_under_its_id() {
    use crate::typed_answers::Weather;
    use toolsmith_harness::agent::FINAL_ANSWER_TOOL;

    for (api, streamed) in every_api_and_mode() {
        let server = MockServer::start([
            Answer::text("21 °C in Paris.").reply(api, streamed),
            Answer::calls(vec![call(
                "f1",
                FINAL_ANSWER_TOOL,
                json!({"city": "Paris"}),
            )])
            .reply(api, streamed),
            Answer::calls(vec![call(
                "f2",
                FINAL_ANSWER_TOOL,
                json!({"city": "Paris", "celsius": 21}),
            )])
            .reply(api, streamed),
        ])
        .await;
        let session = session_on(api, &server, streamed, ToolShed::new(), |b| b);
        let typed = session
            .send_as::<Weather>("Weather?")
            .await
            .unwrap_or_else(|err| panic!("{api:?} {streamed}: {err}"));
        assert_eq!(typed.value.celsius, 21.0);
        let third = sent(api, &server.requests()[2].body);
        assert_calls_answered_in_order(api, &third);
        let Some(Sent::Results(results)) = third.last() else {
            panic!("{api:?} {streamed}: {third:#?}");
        };
        assert_eq!(results[0].id, "f1");
        assert!(results[0].text.contains("celsius"), "{api:?}: {results:?}");
        assert_eq!(session.transcript().await.len(), 2, "{api:?}");
    }
}

// ---- the context: overflow and compaction mid-run ----------------------------------------

/// The 400 each API answers a request a few tokens too long with, in its words.
fn too_long_by_a_little(api: Api) -> Value {
    let message = match api {
        Api::Chat => {
            "This model's maximum context length is 128000 tokens. However, your messages \
             resulted in 128004 tokens. Please reduce the length of the messages."
        }
        // Without counts: the policy halves.
        Api::Responses => {
            "Your input exceeds the context window of this model. Please adjust your input \
             and try again."
        }
        Api::Anthropic => "prompt is too long: 200003 tokens > 199999 maximum",
        Api::Gemini => {
            "The input token count (1048580) exceeds the maximum number of tokens allowed \
             (1048576)."
        }
    };
    match api {
        Api::Chat | Api::Responses => json!({"error": {"message": message,
            "type": "invalid_request_error", "param": null, "code": "context_length_exceeded"}}),
        Api::Anthropic => json!({"type": "error", "error": {"type": "invalid_request_error",
            "message": message}}),
        Api::Gemini => json!({"error": {"code": 400, "message": message,
            "status": "INVALID_ARGUMENT"}}),
    }
}

/// Three turns of calls, then the API refuses the request as too long: the policy drops
/// what it must and the request is asked again, every call still with its result, the
/// conversation still opening with the user's message.
#[tokio::test]
async fn a_context_overflow_mid_run_is_recovered_without_splitting_calls_from_results() {
    use toolsmith_harness::agent::DropOldestExchanges;

    for (api, streamed) in every_api_and_mode() {
        let adding = |id| Answer::calls(vec![call(id, "add", json!({"a": 1, "b": 2}))]);
        let server = MockServer::start([
            Answer::text("First.").reply(api, streamed),
            adding("t1").reply(api, streamed),
            adding("t2").reply(api, streamed),
            Reply::json(400, &too_long_by_a_little(api)),
            Answer::text("Done.").reply(api, streamed),
        ])
        .await;
        let session = session_on(api, &server, streamed, parallel_tools(), |b| {
            b.with_context_overflow(DropOldestExchanges::new())
        });
        session.tool_manager().activate(&["add".into()]);
        session.send("Hello.").await.unwrap();
        let run = session
            .send("Add twice.")
            .await
            .unwrap_or_else(|err| panic!("{api:?} {streamed}: {err}"));
        assert_eq!(run.text, "Done.", "{api:?} {streamed}");
        let requests = server.requests();
        assert_eq!(requests.len(), 5, "{api:?} {streamed}");
        // Asked again without the first exchange.
        let again = sent(api, &requests[4].body);
        assert_eq!(
            again[0],
            Sent::User("Add twice.".into()),
            "{api:?} {streamed}"
        );
        for request in &requests[3..] {
            let conversation = sent(api, &request.body);
            assert_calls_answered_in_order(api, &conversation);
            assert!(
                matches!(conversation.first(), Some(Sent::User(_))),
                "{api:?} {streamed}: {conversation:#?}"
            );
        }
        crate::common::assert_every_call_answered(&session.transcript().await);
    }
}

/// A run whose tool results grow the conversation past the compaction's threshold: each
/// summary request carries no tools, and every request after it goes on from the summary
/// with every call it keeps answered.
#[tokio::test]
async fn a_run_compacted_between_its_turns_keeps_calls_with_their_results() {
    use toolsmith_harness::agent::{Compaction, SUMMARY_HEADING};
    use toolsmith_harness::model::ChatOptions;

    /// Read a page.
    #[toolsmith_core::tool_fn]
    fn page(n: i64) -> String {
        format!("page {n}: {}", "lorem ipsum dolor sit amet ".repeat(16))
    }

    const IDS: [&str; 8] = ["p1", "p2", "p3", "p4", "p5", "p6", "p7", "p8"];
    for (api, streamed) in every_api_and_mode() {
        let mut replies = Vec::new();
        for (n, id) in (1..).zip(IDS) {
            let reading = Answer::calls(vec![call(id, "page", json!({"n": n}))]);
            replies.push(reading.with_usage(0, 0).reply(api, streamed));
        }
        replies.push(Answer::text("Read them all.").reply(api, streamed));
        let server = MockServer::start(replies).await;
        let summary = Answer::text("The user asked to read pages; some were read.");
        // Asked for whole: a summary is not streamed.
        let summary = summary.with_usage(0, 0).reply(api, false);
        server.answer_out_of_turn(move |request| {
            request.body.get("tools").is_none().then(|| summary.clone())
        });
        let session = session_on(api, &server, streamed, ToolShed::new().tool(Page), |b| {
            b.with_context_window(1_500)
                .with_options(ChatOptions {
                    max_output_tokens: Some(100),
                    ..ChatOptions::default()
                })
                .with_compaction(Compaction::new())
        });
        session.tool_manager().activate(&["page".into()]);
        let run = session
            .run("Read the pages.")
            .await
            .unwrap_or_else(|err| panic!("{api:?} {streamed}: {err}"));
        assert_eq!(run.text, "Read them all.", "{api:?} {streamed}");
        let requests = server.requests();
        let summaries: Vec<usize> = (0..requests.len())
            .filter(|&at| requests[at].body.get("tools").is_none())
            .collect();
        assert!(!summaries.is_empty(), "{api:?} {streamed}: no summary");
        for at in summaries {
            let next = sent(api, &requests[at + 1].body);
            let Some(Sent::User(first)) = next.first() else {
                panic!("{api:?} {streamed}: {next:#?}");
            };
            assert!(first.starts_with(SUMMARY_HEADING), "{api:?} {streamed}");
            assert!(
                next.len() > 1,
                "{api:?} {streamed}: nothing kept: {next:#?}"
            );
        }
        for request in &requests {
            assert_calls_answered_in_order(api, &sent(api, &request.body));
        }
        crate::common::assert_every_call_answered(&run.transcript);
    }
}

// ---- streamed and whole -----------------------------------------------------------------

/// The same scripted run, streamed and whole: the same transcript, and the same requests
/// but for the streaming fields.
#[tokio::test]
async fn streamed_and_whole_runs_give_the_same_transcript_and_requests() {
    for api in Api::ALL {
        let mut seen = Vec::new();
        for streamed in [false, true] {
            let server = MockServer::start([
                Answer::calls(vec![
                    call("c_ok", "add", json!({"a": 2, "b": 3})),
                    call("c_bad", "add", json!({"a": "two", "b": 3})),
                    call("c_none", "nope", json!({"x": "日本 🦀"})),
                ])
                .with_text("Trying: 日本 🦀.")
                .reply(api, streamed),
                Answer::calls(vec![call("c_2", "add", json!({"a": 5, "b": 5}))])
                    .reply(api, streamed),
                Answer::text("Ten, 🦀.").reply(api, streamed),
            ])
            .await;
            let session = session_on(api, &server, streamed, parallel_tools(), |b| b);
            session.tool_manager().activate(&["add".into()]);
            let run = session.run("Try.").await.unwrap();
            let bodies: Vec<Value> = server
                .requests()
                .into_iter()
                .map(|request| {
                    let mut body = request.body;
                    if let Some(body) = body.as_object_mut() {
                        body.remove("stream");
                        body.remove("stream_options");
                    }
                    body
                })
                .collect();
            seen.push((run, bodies));
        }
        let (whole, streamed) = (&seen[0], &seen[1]);
        assert_eq!(whole.0.transcript, streamed.0.transcript, "{api:?}");
        assert_eq!(whole.0.usage, streamed.0.usage, "{api:?}");
        assert_eq!(whole.1, streamed.1, "{api:?}");
    }
}

// ---- the turn's deadline ------------------------------------------------------------------

/// Write slowly (destructive: one at a time).
#[toolsmith_core::tool_fn(destructive = true)]
async fn slow_write(n: i64) -> String {
    tokio::time::sleep(Duration::from_secs(30)).await;
    format!("wrote {n}")
}

/// The turn's deadline passes with one call done, one running and one not started: each is
/// answered under its id, in order, saying which, and the run goes on.
#[tokio::test]
async fn the_turn_s_deadline_mid_turn_answers_each_call_as_it_stood() {
    for (api, streamed) in every_api_and_mode() {
        let server = MockServer::start([
            Answer::calls(vec![
                call("w1", "slow_write", json!({"n": 1})),
                call("a1", "add", json!({"a": 2, "b": 3})),
                call("w2", "slow_write", json!({"n": 2})),
            ])
            .reply(api, streamed),
            Answer::text("Some were slow.").reply(api, streamed),
        ])
        .await;
        let tools = ToolShed::new().tool(Add).tool(SlowWrite);
        let session = session_on(api, &server, streamed, tools, |b| {
            b.with_turn_deadline(Duration::from_millis(200))
        });
        session
            .tool_manager()
            .activate(&["add".into(), "slow_write".into()]);
        let run = session
            .run("Write both.")
            .await
            .unwrap_or_else(|err| panic!("{api:?} {streamed}: {err}"));
        assert_eq!(run.text, "Some were slow.");
        let second = sent(api, &server.requests()[1].body);
        assert_calls_answered_in_order(api, &second);
        let Some(Sent::Results(results)) = second.last() else {
            panic!("{api:?}: {second:#?}");
        };
        let texts: Vec<&str> = results.iter().map(|r| r.text.as_str()).collect();
        assert!(texts[0].contains("turn's deadline"), "{api:?}: {texts:?}");
        assert!(texts[0].contains("timed out"), "{api:?}: {texts:?}");
        assert_eq!(texts[1], "5", "{api:?}");
        assert!(texts[2].contains("not run"), "{api:?}: {texts:?}");
    }
}

/// Gemini calls without ids, two of one tool in each of two turns (one failing): each turn's
/// responses go back named, in the order of its calls, whatever ids the calls were given.
#[tokio::test]
async fn gemini_calls_without_ids_are_answered_by_name_in_order_turn_after_turn() {
    let api = Api::Gemini;
    let unnamed = |calls: &[(i64, Value)]| {
        let parts: Vec<Value> = calls
            .iter()
            .map(|(_, args)| json!({"functionCall": {"name": "add", "args": args}}))
            .collect();
        json!({"candidates": [{"content": {"role": "model", "parts": parts},
            "finishReason": "STOP", "index": 0}],
            "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 2}})
    };
    for streamed in [false, true] {
        let turn = |calls: &[(i64, Value)]| {
            let answer = unnamed(calls);
            if streamed {
                Reply::sse(&sse_text([(None, answer)]), 13)
            } else {
                Reply::json(200, &answer)
            }
        };
        let server = MockServer::start([
            turn(&[(0, json!({"a": 1, "b": 2})), (1, json!({"a": "x", "b": 2}))]),
            turn(&[(0, json!({"a": 3, "b": 4})), (1, json!({"a": 5, "b": 6}))]),
            Answer::text("Done.").reply(api, streamed),
        ])
        .await;
        let session = session_on(api, &server, streamed, parallel_tools(), |b| b);
        session.tool_manager().activate(&["add".into()]);
        let run = session.run("Add.").await.unwrap();
        assert_eq!(run.text, "Done.");
        crate::common::assert_every_call_answered(&run.transcript);
        let third = &server.requests()[2].body["contents"];
        let responses: Vec<&Value> = third
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|content| content["parts"].as_array().unwrap())
            .filter_map(|part| part.get("functionResponse"))
            .collect();
        assert_eq!(responses.len(), 4, "{third:#}");
        for response in &responses {
            assert_eq!(response["name"], "add");
            assert_eq!(response.get("id"), None, "{response}");
        }
        assert_eq!(responses[0]["response"]["output"], 3);
        assert!(responses[1]["response"].get("error").is_some());
        assert_eq!(responses[2]["response"]["output"], 7);
        assert_eq!(responses[3]["response"]["output"], 11);
    }
}
