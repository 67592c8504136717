//! Anthropic's prompt cache through the Anthropic client: each request, whole or streamed,
//! carries the `cache_control` marks `PromptCaching` says (the last tool, the system prompt,
//! the last message's last block, and the previous request's end when a turn added more
//! blocks than the lookback; never more than the API's four; none when off), a set of
//! declarations is rendered once with its mark, and the usage counts cache reads and writes.

use std::sync::Arc;

use serde_json::{Value, json};
use toolsmith_core::provider::StrictMode;
use toolsmith_core::{ToolCallResult, ToolDeclarations};
use toolsmith_harness::model::http::{
    AnthropicModel, EXTENDED_CACHE_TTL_BETA, HttpModelBuilder, PromptCaching,
};
use toolsmith_harness::model::{
    ChatModel, ChatOptions, ChatRequest, ChatResponse, Message, ModelCall, ToolResultMessage, Usage,
};

use super::server::{MockServer, Recorded, Reply, sse_text};
use super::strict::tools;
use super::{Api, KEY};

/// The API's limit of marks in one request.
const MAX_MARKS: usize = 4;

const SYSTEM: &str = "You are a careful calculator.";

/// A client of the server at `base` with `caching`, or the default when `None`.
fn model(base: &str, caching: Option<PromptCaching>) -> AnthropicModel {
    let builder: HttpModelBuilder<AnthropicModel> = AnthropicModel::builder()
        .api_key(KEY)
        .base_url(base)
        .max_retries(0);
    match caching {
        Some(caching) => builder.prompt_caching(caching),
        None => builder,
    }
    .build()
    .expect("the client")
}

/// The paths (JSON pointers) of every `cache_control` in `body`, in document order.
fn marks(body: &Value) -> Vec<String> {
    fn walk(value: &Value, at: &str, found: &mut Vec<String>) {
        match value {
            Value::Object(map) => {
                for (key, value) in map {
                    let here = format!("{at}/{key}");
                    if key == "cache_control" {
                        found.push(here);
                    } else {
                        walk(value, &here, found);
                    }
                }
            }
            Value::Array(items) => {
                for (index, value) in items.iter().enumerate() {
                    walk(value, &format!("{at}/{index}"), found);
                }
            }
            _ => {}
        }
    }
    let mut found = Vec::new();
    walk(body, "", &mut found);
    found
}

/// An answer with a thinking block, text and a call of `add`, with `usage`.
fn calls_answer(usage: Value) -> Value {
    json!({"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
        "content": [
            {"type": "thinking", "thinking": "Add them.", "signature": "SIG"},
            {"type": "text", "text": "Adding."},
            {"type": "tool_use", "id": "toolu_1", "name": "add", "input": {"a": 2, "b": 3}}],
        "stop_reason": "tool_use", "stop_sequence": null, "usage": usage})
}

/// The same answer as Anthropic streams it: `message_start` carrying `start_usage`, the
/// blocks, then `message_delta` carrying `delta_usage`.
fn calls_stream(start_usage: Value, delta_usage: Value) -> String {
    let events = [
        json!({"type": "message_start", "message": {"id": "msg_1", "type": "message",
            "role": "assistant", "model": "claude-sonnet-4-5", "content": [],
            "stop_reason": null, "stop_sequence": null, "usage": start_usage}}),
        json!({"type": "content_block_start", "index": 0,
            "content_block": {"type": "thinking", "thinking": "", "signature": ""}}),
        json!({"type": "content_block_delta", "index": 0,
            "delta": {"type": "thinking_delta", "thinking": "Add them."}}),
        json!({"type": "content_block_delta", "index": 0,
            "delta": {"type": "signature_delta", "signature": "SIG"}}),
        json!({"type": "content_block_stop", "index": 0}),
        json!({"type": "content_block_start", "index": 1,
            "content_block": {"type": "text", "text": ""}}),
        json!({"type": "content_block_delta", "index": 1,
            "delta": {"type": "text_delta", "text": "Adding."}}),
        json!({"type": "content_block_stop", "index": 1}),
        json!({"type": "content_block_start", "index": 2,
            "content_block": {"type": "tool_use", "id": "toolu_1", "name": "add", "input": {}}}),
        json!({"type": "content_block_delta", "index": 2,
            "delta": {"type": "input_json_delta", "partial_json": "{\"a\": 2, \"b\": 3}"}}),
        json!({"type": "content_block_stop", "index": 2}),
        json!({"type": "message_delta",
            "delta": {"stop_reason": "tool_use", "stop_sequence": null}, "usage": delta_usage}),
        json!({"type": "message_stop"}),
    ];
    sse_text(
        events
            .iter()
            .map(|data| (data["type"].as_str(), data.clone())),
    )
}

/// The reply to one request, streamed or whole, with `usage` (the stream's `message_start`
/// carrying it, its `message_delta` the output count alone).
fn reply(streamed: bool, usage: &Value) -> Reply {
    if streamed {
        let delta = json!({"output_tokens": usage["output_tokens"]});
        let mut start = usage.clone();
        start["output_tokens"] = json!(1);
        Reply::sse(&calls_stream(start, delta), 7)
    } else {
        Reply::json(200, &calls_answer(usage.clone()))
    }
}

/// `request` asked of `model`, streamed or whole.
async fn ask(model: &AnthropicModel, request: &ChatRequest, streamed: bool) -> ChatResponse {
    let answer = if streamed {
        model.stream(request, &mut |_| {}).await
    } else {
        model.complete(request).await
    };
    answer.unwrap_or_else(|err| panic!("streamed {streamed}: {err}"))
}

fn first_request(set: &Arc<ToolDeclarations>, system: Option<&str>) -> ChatRequest {
    ChatRequest {
        model: Api::Anthropic.model_name().to_owned(),
        system: system.map(str::to_owned),
        messages: vec![Message::user("What is 2 + 3?")],
        tools: Arc::clone(set),
        options: ChatOptions {
            strict: StrictMode::Never,
            ..ChatOptions::default()
        },
    }
}

/// `request` followed by `answer`'s turn and the result of its call.
fn follow_up(request: &ChatRequest, answer: &ChatResponse) -> ChatRequest {
    let mut next = request.clone();
    next.messages.push(answer.to_message());
    let results = answer
        .calls
        .iter()
        .map(ModelCall::of)
        .map(|call| ToolResultMessage {
            call_id: call.id,
            name: call.name,
            result: ToolCallResult::json(json!({"sum": 5})),
        })
        .collect();
    next.messages.push(Message::ToolResults { results });
    next
}

/// Two turns of a conversation through a client with `caching`, streamed or not: the
/// bodies sent.
async fn two_turns(
    caching: Option<PromptCaching>,
    system: Option<&str>,
    set: &Arc<ToolDeclarations>,
    streamed: bool,
) -> Vec<Recorded> {
    let usage = json!({"input_tokens": 10, "output_tokens": 5});
    let server = MockServer::start([reply(streamed, &usage), reply(streamed, &usage)]).await;
    let model = model(&server.base, caching);
    let first = first_request(set, system);
    let answer = ask(&model, &first, streamed).await;
    ask(&model, &follow_up(&first, &answer), streamed).await;
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    for request in &requests {
        Api::Anthropic.check_request(request);
        assert_eq!(request.body.get("stream").is_some(), streamed);
    }
    requests
}

#[tokio::test]
async fn the_last_tool_the_system_and_the_last_block_are_marked_streamed_or_not() {
    let set = Arc::new(tools());
    let mark = json!({"type": "ephemeral"});
    for streamed in [false, true] {
        let sent = two_turns(None, Some(SYSTEM), &set, streamed).await;
        let (first, second) = (&sent[0].body, &sent[1].body);
        assert_eq!(
            marks(first),
            [
                "/system/0/cache_control",
                "/messages/0/content/0/cache_control",
                "/tools/1/cache_control"
            ],
            "streamed {streamed}"
        );
        assert_eq!(
            first["system"],
            json!([{"type": "text", "text": SYSTEM, "cache_control": mark}])
        );
        assert_eq!(
            first["messages"][0]["content"],
            json!([{"type": "text", "text": "What is 2 + 3?", "cache_control": mark}])
        );
        // The breakpoint moved to the result; the model's turn (thinking, text, call) went
        // back unmarked, the first message as a string again.
        assert_eq!(
            marks(second),
            [
                "/system/0/cache_control",
                "/messages/2/content/0/cache_control",
                "/tools/1/cache_control"
            ],
            "streamed {streamed}"
        );
        assert_eq!(second["messages"][0]["content"], "What is 2 + 3?");
        assert_eq!(second["messages"][1]["content"][0]["type"], "thinking");
        assert_eq!(second["messages"][2]["content"][0]["type"], "tool_result");
        assert_eq!(second["tools"], first["tools"], "streamed {streamed}");
        assert!(marks(second).len() <= MAX_MARKS);
    }
}

#[tokio::test]
async fn no_mark_is_spent_on_missing_tools_or_system() {
    let none = Arc::new(ToolDeclarations::default());
    for streamed in [false, true] {
        // Neither tools nor a system prompt: the moving breakpoint alone.
        let sent = two_turns(None, None, &none, streamed).await;
        for request in &sent {
            assert!(request.body.get("tools").is_none());
            assert!(request.body.get("system").is_none());
        }
        assert_eq!(
            marks(&sent[0].body),
            ["/messages/0/content/0/cache_control"]
        );
        assert_eq!(
            marks(&sent[1].body),
            ["/messages/2/content/0/cache_control"]
        );
        // An empty system prompt cannot carry one: it goes as it is.
        let sent = two_turns(None, Some(""), &none, streamed).await;
        assert_eq!(sent[0].body["system"], "");
        assert_eq!(marks(&sent[0].body).len(), 1);
    }
}

#[tokio::test]
async fn caching_off_marks_nothing_and_sends_the_system_as_a_string() {
    let set = Arc::new(tools());
    for streamed in [false, true] {
        let sent = two_turns(Some(PromptCaching::Off), Some(SYSTEM), &set, streamed).await;
        for request in &sent {
            assert_eq!(marks(&request.body), Vec::<String>::new());
            assert_eq!(request.body["system"], SYSTEM);
            assert_eq!(request.header("anthropic-beta"), None);
        }
        assert_eq!(sent[0].body["messages"][0]["content"], "What is 2 + 3?");
    }
}

#[tokio::test]
async fn the_one_hour_lifetime_is_written_on_every_mark_with_its_beta() {
    let set = Arc::new(tools());
    let sent = two_turns(Some(PromptCaching::OneHour), Some(SYSTEM), &set, true).await;
    for request in &sent {
        let body = &request.body;
        let found = marks(body);
        assert_eq!(found.len(), 3);
        for at in found {
            assert_eq!(
                body.pointer(&at),
                Some(&json!({"type": "ephemeral", "ttl": "1h"}))
            );
        }
        assert_eq!(
            request.header("anthropic-beta"),
            Some(EXTENDED_CACHE_TTL_BETA)
        );
    }
}

#[tokio::test]
async fn a_set_is_rendered_once_with_its_mark_and_otherwise_as_without_caching() {
    let set = Arc::new(tools());
    let usage = json!({"input_tokens": 10, "output_tokens": 5});
    let server = MockServer::start((0..4).map(|_| reply(false, &usage))).await;
    let cached = model(&server.base, None);
    let uncached = model(&server.base, Some(PromptCaching::Off));
    let request = first_request(&set, Some(SYSTEM));
    for _ in 0..2 {
        ask(&cached, &request, false).await;
        ask(&uncached, &request, false).await;
    }
    let sent: Vec<Value> = server.requests().into_iter().map(|r| r.body).collect();
    // The same array each time from each client.
    assert_eq!(sent[0]["tools"], sent[2]["tools"]);
    assert_eq!(sent[1]["tools"], sent[3]["tools"]);
    // The marked array is the unmarked one with the mark on its last tool.
    let mut unmarked = sent[0]["tools"].clone();
    let last = unmarked.as_array_mut().unwrap().last_mut().unwrap();
    assert_eq!(
        last.as_object_mut().unwrap().remove("cache_control"),
        Some(json!({"type": "ephemeral"}))
    );
    assert_eq!(unmarked, sent[1]["tools"]);
}

#[tokio::test]
async fn cache_reads_and_writes_are_counted_as_input_streamed_or_not() {
    let usage = json!({"input_tokens": 21, "cache_creation_input_tokens": 1500,
        "cache_read_input_tokens": 3000, "output_tokens": 7});
    let expected = Usage {
        input_tokens: 21 + 1500 + 3000,
        output_tokens: 7,
        cached_input_tokens: 3000,
    };
    let set = Arc::new(tools());
    for streamed in [false, true] {
        let server = MockServer::start([reply(streamed, &usage)]).await;
        let model = model(&server.base, None);
        let answer = ask(&model, &first_request(&set, Some(SYSTEM)), streamed).await;
        assert_eq!(answer.usage, expected, "streamed {streamed}");
    }
    // A stream whose `message_delta` repeats the input figures (as the API's now does)
    // counts them once.
    let start = usage.clone();
    let delta = usage;
    let server = MockServer::start([Reply::sse(&calls_stream(start, delta), 11)]).await;
    let model = model(&server.base, None);
    let answer = ask(&model, &first_request(&set, None), true).await;
    assert_eq!(answer.usage, expected);
}

/// The request after one answer of `calls` parallel calls of `add` (after the text
/// "Adding." when `text`), with their results: the turn adds `calls` results and the answer's
/// blocks.
fn after_parallel_calls(set: &Arc<ToolDeclarations>, text: bool, calls: usize) -> ChatRequest {
    let mut request = first_request(set, Some(SYSTEM));
    let arguments = || toolsmith_core::ToolArguments::try_from(json!({"a": 2, "b": 3})).unwrap();
    let calls: Vec<ModelCall> = (0..calls)
        .map(|n| ModelCall::new(format!("toolu_{n}"), "add", arguments()))
        .collect();
    let results = calls
        .iter()
        .map(|call| ToolResultMessage {
            call_id: call.id.clone(),
            name: call.name.clone(),
            result: ToolCallResult::json(json!({"sum": 5})),
        })
        .collect();
    request.messages.push(Message::assistant_calls(
        text.then(|| "Adding.".to_owned()),
        calls,
    ));
    request.messages.push(Message::ToolResults { results });
    request
}

/// The bodies `requests` are sent as by a client of the default caching with `fields`.
async fn sent(requests: &[ChatRequest], fields: &[(&str, Value)]) -> Vec<Value> {
    let usage = json!({"input_tokens": 10, "output_tokens": 5});
    let server = MockServer::start(requests.iter().map(|_| reply(false, &usage))).await;
    let builder = fields.iter().fold(
        AnthropicModel::builder()
            .api_key(KEY)
            .base_url(&server.base)
            .max_retries(0),
        |builder, (name, value)| builder.body_field(*name, value.clone()),
    );
    let model = builder.build().expect("the client");
    for request in requests {
        ask(&model, request, false).await;
    }
    let recorded = server.requests();
    for request in &recorded {
        Api::Anthropic.check_request(request);
    }
    recorded.into_iter().map(|request| request.body).collect()
}

#[tokio::test]
async fn a_turn_past_the_lookback_marks_the_previous_request_s_end_too() {
    let set = Arc::new(tools());
    // 12 calls at once: "Adding.", 12 `tool_use` and 12 `tool_result` blocks, 25 after the
    // question the previous request ended with (and marked); 10 calls without the text:
    // 20, the question just out of the lookback of the last result's mark; 9 calls and the
    // text: 19, within it.
    let bodies = sent(
        &[
            after_parallel_calls(&set, true, 12),
            after_parallel_calls(&set, false, 10),
            after_parallel_calls(&set, true, 9),
        ],
        &[],
    )
    .await;
    assert_eq!(
        marks(&bodies[0]),
        [
            "/system/0/cache_control",
            "/messages/0/content/0/cache_control",
            "/messages/2/content/11/cache_control",
            "/tools/1/cache_control"
        ]
    );
    assert_eq!(
        bodies[0]["messages"][0]["content"],
        json!([{"type": "text", "text": "What is 2 + 3?", "cache_control": {"type": "ephemeral"}}])
    );
    assert_eq!(
        bodies[0]["messages"][1]["content"]
            .as_array()
            .unwrap()
            .len(),
        13
    );
    assert_eq!(
        marks(&bodies[1]),
        [
            "/system/0/cache_control",
            "/messages/0/content/0/cache_control",
            "/messages/2/content/9/cache_control",
            "/tools/1/cache_control"
        ]
    );
    assert_eq!(
        marks(&bodies[2]),
        [
            "/system/0/cache_control",
            "/messages/2/content/8/cache_control",
            "/tools/1/cache_control"
        ]
    );
    assert_eq!(bodies[2]["messages"][0]["content"], "What is 2 + 3?");
    for body in &bodies {
        assert!(marks(body).len() <= MAX_MARKS);
    }
}

#[tokio::test]
async fn a_mark_of_the_body_fields_leaves_the_fourth_out_never_more_than_four() {
    let set = Arc::new(tools());
    // Anthropic's automatic caching asked through a body field: a mark of its own.
    let automatic = ("cache_control", json!({"type": "ephemeral"}));
    let bodies = sent(&[after_parallel_calls(&set, true, 12)], &[automatic]).await;
    assert_eq!(
        marks(&bodies[0]),
        [
            "/system/0/cache_control",
            "/messages/2/content/11/cache_control",
            "/tools/1/cache_control",
            "/cache_control"
        ]
    );
    // Without tools or a system prompt, the previous end's mark is the second.
    let none = Arc::new(ToolDeclarations::default());
    let mut request = after_parallel_calls(&none, true, 12);
    request.system = None;
    let bodies = sent(&[request], &[]).await;
    assert_eq!(
        marks(&bodies[0]),
        [
            "/messages/0/content/0/cache_control",
            "/messages/2/content/11/cache_control"
        ]
    );
}
