//! One fixed conversation through each client: the user asks, the model calls two tools,
//! one result is an error, the model answers. Checks what each client sent (path, auth,
//! body shape, against a golden file) and what it read (text, calls, usage, stop reason).

use std::path::PathBuf;

use serde_json::{Value, json};
use toolsmith_core::{Args, Tool, ToolCallResult, ToolDeclarations, ToolDefinition, scheme};
use toolsmith_harness::model::{
    ChatModel as _, ChatOptions, ChatRequest, ChatResponse, Message, ModelCall, ModelError,
    StopReason, ToolChoice, ToolResultMessage, Usage,
};

use super::server::{MockServer, Recorded, Reply};
use super::{Api, Client};

/// `add` declares a result schema (so it is rendered strict where the format has a strict
/// mode); `divide` does not.
fn tools() -> ToolDeclarations {
    let add = ToolDefinition::new(
        "add",
        "Add two integers.",
        Args::new(
            scheme::object()
                .required("a", scheme::integer())
                .required("b", scheme::integer())
                .build(),
        ),
    )
    .with_returns(Args::new(
        scheme::object().required("sum", scheme::integer()).build(),
    ));
    let divide = ToolDefinition::new(
        "divide",
        "Divide a by b.",
        Args::new(
            scheme::object()
                .required("a", scheme::number().describe("The dividend."))
                .required("b", scheme::number().describe("The divisor."))
                .optional("digits", scheme::integer().minimum(0))
                .build(),
        ),
    );
    ToolDeclarations {
        shed: None,
        tools: vec![Tool::SingleCommand(add), Tool::SingleCommand(divide)],
    }
}

pub(super) fn first_request(api: Api) -> ChatRequest {
    ChatRequest {
        model: api.model_name().to_owned(),
        system: Some("You are a careful calculator. Use the tools.".to_owned()),
        messages: vec![Message::user("What is 2 + 3, and 1 / 0?")],
        tools: tools().into(),
        options: ChatOptions {
            temperature: Some(0.2),
            max_output_tokens: Some(512),
            ..ChatOptions::default()
        },
    }
}

/// What `api`'s client gives for [`first_request`] (streamed or not) when the server
/// answers `reply`, and how many requests it made: the error cases' shared probe (spare
/// answers follow, so that a retry would succeed and show).
pub(super) async fn first_request_answered(
    api: Api,
    reply: Reply,
    streamed: bool,
) -> (Result<(), ModelError>, usize) {
    let spare = Reply::json(200, &api.text_answer("unused"));
    let server = MockServer::start([reply, spare.clone(), spare]).await;
    let model = api.model(&server.base, &Client::default());
    let request = first_request(api);
    let answer = if streamed {
        model.stream(&request, &mut |_| {}).await
    } else {
        model.complete(&request).await
    };
    (answer.map(drop), server.requests().len())
}

/// The model's first answer: a sentence and two calls, in the API's format. Gemini gives no
/// call ids (as its API usually does not).
pub(super) fn calls_answer(api: Api) -> Value {
    let (add, divide) = (json!({"a": 2, "b": 3}), json!({"a": 1, "b": 0}));
    match api {
        Api::Chat => json!({
            "id": "chatcmpl-1", "object": "chat.completion", "created": 1_700_000_000,
            "model": "gpt-4.1-mini",
            "choices": [{"index": 0, "logprobs": null, "finish_reason": "tool_calls",
                "message": {"role": "assistant", "content": "Let me compute both.", "refusal": null,
                    "tool_calls": [
                        {"id": "call_add", "type": "function",
                         "function": {"name": "add", "arguments": add.to_string()}},
                        {"id": "call_div", "type": "function",
                         "function": {"name": "divide", "arguments": divide.to_string()}}]}}],
            "usage": {"prompt_tokens": 120, "completion_tokens": 40, "total_tokens": 160,
                "prompt_tokens_details": {"cached_tokens": 64, "audio_tokens": 0},
                "completion_tokens_details": {"reasoning_tokens": 0}}
        }),
        Api::Responses => json!({
            "id": "resp_1", "object": "response", "created_at": 1_700_000_000,
            "status": "completed", "model": "gpt-4.1-mini", "error": null,
            "incomplete_details": null,
            "output": [
                {"type": "message", "id": "msg_1", "status": "completed", "role": "assistant",
                 "content": [{"type": "output_text", "text": "Let me compute both.", "annotations": []}]},
                {"type": "function_call", "id": "fc_1", "call_id": "call_add", "name": "add",
                 "arguments": add.to_string(), "status": "completed"},
                {"type": "function_call", "id": "fc_2", "call_id": "call_div", "name": "divide",
                 "arguments": divide.to_string(), "status": "completed"}],
            "usage": {"input_tokens": 120, "input_tokens_details": {"cached_tokens": 64},
                "output_tokens": 40, "output_tokens_details": {"reasoning_tokens": 0},
                "total_tokens": 160}
        }),
        Api::Anthropic => json!({
            "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
            "content": [
                {"type": "text", "text": "Let me compute both."},
                {"type": "tool_use", "id": "toolu_add", "name": "add", "input": add},
                {"type": "tool_use", "id": "toolu_div", "name": "divide", "input": divide}],
            "stop_reason": "tool_use", "stop_sequence": null,
            "usage": {"input_tokens": 56, "cache_creation_input_tokens": 0,
                "cache_read_input_tokens": 64, "output_tokens": 40}
        }),
        Api::Gemini => json!({
            "candidates": [{"content": {"role": "model", "parts": [
                    {"text": "Let me compute both."},
                    // Gemini 3 signs the first call of a step; the signature must go back.
                    {"functionCall": {"name": "add", "args": add}, "thoughtSignature": "SIG-add"},
                    {"functionCall": {"name": "divide", "args": divide}}]},
                "finishReason": "STOP", "index": 0}],
            "usageMetadata": {"promptTokenCount": 120, "candidatesTokenCount": 30,
                "thoughtsTokenCount": 10, "cachedContentTokenCount": 64, "totalTokenCount": 160},
            "modelVersion": "gemini-2.5-flash"
        }),
    }
}

const FINAL_TEXT: &str = "2 + 3 = 5. 1 / 0 has no answer: division by zero.";

/// The usage every API's first answer reports, in its own fields.
pub(super) const FIRST_USAGE: Usage = Usage {
    input_tokens: 120,
    output_tokens: 40,
    cached_input_tokens: 64,
};

/// The ids each API gave the two calls.
fn call_ids(api: Api) -> [&'static str; 2] {
    match api {
        Api::Chat | Api::Responses => ["call_add", "call_div"],
        Api::Anthropic => ["toolu_add", "toolu_div"],
        Api::Gemini => ["toolsmith-call-0", "toolsmith-call-1"],
    }
}

/// What each client sent and read over the conversation.
struct Conversation {
    requests: Vec<Recorded>,
    first: ChatResponse,
    last: ChatResponse,
}

/// The conversation that follows the first answer: the assistant's turn as the model made
/// it, then the results (`divide` failed, an error result written for the model).
fn follow_up(first_request: &ChatRequest, first: &ChatResponse) -> ChatRequest {
    let calls: Vec<ModelCall> = first.calls.iter().map(ModelCall::of).collect();
    let results = calls
        .iter()
        .map(|call| ToolResultMessage {
            call_id: call.id.clone(),
            name: call.name.clone(),
            result: match call.name.as_str() {
                "add" => ToolCallResult::json(json!({"sum": 5})),
                _ => ToolCallResult::error("Division by zero: `b` must not be 0."),
            },
        })
        .collect();
    let mut request = first_request.clone();
    request.messages.push(first.to_message());
    request.messages.push(Message::ToolResults { results });
    request
}

async fn converse(api: Api) -> Conversation {
    let server = MockServer::start([
        Reply::json(200, &calls_answer(api)),
        Reply::json(200, &api.text_answer(FINAL_TEXT)),
    ])
    .await;
    let model = api.model(&server.base, &Client::default());
    assert_eq!(model.name(), api.name());
    let request = first_request(api);
    let first = model
        .complete(&request)
        .await
        .unwrap_or_else(|err| panic!("{api:?} first request: {err}"));
    let last = model
        .complete(&follow_up(&request, &first))
        .await
        .unwrap_or_else(|err| panic!("{api:?} second request: {err}"));
    let requests = server.requests();
    assert_eq!(requests.len(), 2, "{api:?}");
    for recorded in &requests {
        api.check_request(recorded);
    }
    Conversation {
        requests,
        first,
        last,
    }
}

/// Checks what every client must have read, whatever its format.
fn check_answers(api: Api, conversation: &Conversation) {
    let first = &conversation.first;
    assert_eq!(
        first.text.as_deref(),
        Some("Let me compute both."),
        "{api:?}"
    );
    assert_eq!(first.stop_reason, StopReason::ToolCalls, "{api:?}");
    assert_eq!(first.usage, FIRST_USAGE, "{api:?}");
    let calls: Vec<(String, String, Value)> = first
        .calls
        .iter()
        .map(|call| {
            let call = call.as_ref().expect("a readable call");
            (
                call.id.clone(),
                call.name.clone(),
                call.arguments.as_value().clone(),
            )
        })
        .collect();
    let [add_id, divide_id] = call_ids(api);
    assert_eq!(
        calls,
        vec![
            (add_id.to_owned(), "add".to_owned(), json!({"a": 2, "b": 3})),
            (
                divide_id.to_owned(),
                "divide".to_owned(),
                json!({"a": 1, "b": 0})
            ),
        ],
        "{api:?}"
    );
    let last = &conversation.last;
    assert_eq!(last.text.as_deref(), Some(FINAL_TEXT), "{api:?}");
    assert!(last.calls.is_empty(), "{api:?}");
    assert_eq!(last.stop_reason, StopReason::EndTurn, "{api:?}");
    assert_eq!(last.usage.input_tokens, 10, "{api:?}");
    assert_eq!(last.usage.output_tokens, 2, "{api:?}");
}

/// Compares the request bodies with `tests/fixtures/model_http/<name>.json`;
/// `UPDATE_GOLDEN=1` rewrites the file instead.
fn check_golden(api: Api, requests: &[Recorded]) {
    let bodies = Value::Array(requests.iter().map(|r| r.body.clone()).collect());
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/model_http")
        .join(format!("{}.json", api.name()));
    let pretty = serde_json::to_string_pretty(&bodies).expect("JSON") + "\n";
    if std::env::var_os("UPDATE_GOLDEN").is_some_and(|v| v == "1") {
        std::fs::create_dir_all(path.parent().expect("a folder")).expect("create the folder");
        std::fs::write(&path, pretty).expect("write the golden file");
        return;
    }
    let golden = std::fs::read_to_string(&path).unwrap_or_else(|err| {
        panic!(
            "{}: {err}; run with UPDATE_GOLDEN=1 to write it",
            path.display()
        )
    });
    let golden: Value = serde_json::from_str(&golden)
        .unwrap_or_else(|err| panic!("{}: not JSON: {err}", path.display()));
    if golden != bodies {
        let at = first_difference(&golden, &bodies, String::new());
        panic!(
            "{api:?}: the request bodies differ from {} at {at:?} (UPDATE_GOLDEN=1 rewrites it after review).\nsent:\n{pretty}",
            path.display()
        );
    }
}

/// The JSON pointer of the first place where `a` and `b` differ.
fn first_difference(a: &Value, b: &Value, at: String) -> String {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            let keys_x: Vec<&String> = x.keys().collect();
            let keys_y: Vec<&String> = y.keys().collect();
            if keys_x != keys_y {
                return format!("{at} (keys {keys_x:?} vs {keys_y:?})");
            }
            x.iter()
                .find(|(k, v)| y.get(*k) != Some(v))
                .map_or(at.clone(), |(k, v)| {
                    first_difference(v, &y[k], format!("{at}/{k}"))
                })
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => x
            .iter()
            .zip(y)
            .position(|(p, q)| p != q)
            .map_or(at.clone(), |i| {
                first_difference(&x[i], &y[i], format!("{at}/{i}"))
            }),
        _ => format!("{at} ({a} vs {b})"),
    }
}

#[tokio::test]
async fn openai_chat_conversation() {
    let api = Api::Chat;
    let conversation = converse(api).await;
    check_answers(api, &conversation);
    let [first, second] = [
        &conversation.requests[0].body,
        &conversation.requests[1].body,
    ];
    assert_eq!(first["model"], "gpt-4.1-mini");
    assert_eq!(
        first["messages"][0],
        json!({"role": "system", "content": "You are a careful calculator. Use the tools."})
    );
    assert_eq!(
        first["messages"][1],
        json!({"role": "user", "content": "What is 2 + 3, and 1 / 0?"})
    );
    assert_eq!(first["tools"][0]["function"]["name"], "add");
    assert_eq!(first["tools"][0]["function"]["strict"], true);
    assert_eq!(first["tools"][1]["function"].get("strict"), None);
    assert_eq!(first["temperature"], json!(0.2));
    assert_eq!(first["max_completion_tokens"], 512);
    assert_eq!(first.get("tool_choice"), None);
    // The assistant's calls echoed, arguments as a JSON string; results under their ids.
    let echoed = &second["messages"][2];
    assert_eq!(echoed["role"], "assistant");
    assert_eq!(echoed["content"], "Let me compute both.");
    assert_eq!(echoed["tool_calls"][0]["id"], "call_add");
    assert_eq!(
        echoed["tool_calls"][0]["function"]["arguments"],
        r#"{"a":2,"b":3}"#
    );
    assert_eq!(
        second["messages"][3],
        json!({"role": "tool", "tool_call_id": "call_add", "content": r#"{"sum":5}"#})
    );
    assert_eq!(second["messages"][4]["tool_call_id"], "call_div");
    assert_eq!(
        second["messages"][4]["content"],
        "Error: Division by zero: `b` must not be 0."
    );
    check_golden(api, &conversation.requests);
}

#[tokio::test]
async fn openai_responses_conversation() {
    let api = Api::Responses;
    let conversation = converse(api).await;
    check_answers(api, &conversation);
    let [first, second] = [
        &conversation.requests[0].body,
        &conversation.requests[1].body,
    ];
    assert_eq!(
        first["instructions"],
        "You are a careful calculator. Use the tools."
    );
    assert_eq!(
        first["input"],
        json!([{"role": "user", "content": "What is 2 + 3, and 1 / 0?"}])
    );
    assert_eq!(first["tools"][0]["type"], "function");
    assert_eq!(first["tools"][0]["name"], "add");
    assert_eq!(first["tools"][0]["strict"], true);
    assert_eq!(first["max_output_tokens"], 512);
    assert_eq!(first["store"], false);
    let input = second["input"].as_array().expect("input items");
    assert_eq!(
        input[1],
        json!({"role": "assistant", "content": "Let me compute both."})
    );
    assert_eq!(
        input[2],
        json!({"type": "function_call", "call_id": "call_add", "name": "add", "arguments": r#"{"a":2,"b":3}"#})
    );
    assert_eq!(input[3]["call_id"], "call_div");
    assert_eq!(
        input[4],
        json!({"type": "function_call_output", "call_id": "call_add", "output": r#"{"sum":5}"#})
    );
    assert_eq!(input[5]["call_id"], "call_div");
    assert_eq!(
        input[5]["output"],
        "Error: Division by zero: `b` must not be 0."
    );
    check_golden(api, &conversation.requests);
}

#[tokio::test]
async fn anthropic_conversation() {
    let api = Api::Anthropic;
    let conversation = converse(api).await;
    check_answers(api, &conversation);
    let [first, second] = [
        &conversation.requests[0].body,
        &conversation.requests[1].body,
    ];
    // Marked for the prompt cache (on by default): the system prompt as a marked block,
    // the last message's last block, the last tool.
    let mark = json!({"type": "ephemeral"});
    assert_eq!(
        first["system"],
        json!([{"type": "text", "text": "You are a careful calculator. Use the tools.",
            "cache_control": mark}])
    );
    assert_eq!(first["max_tokens"], 512);
    assert_eq!(
        first["messages"],
        json!([{"role": "user", "content": [{"type": "text",
            "text": "What is 2 + 3, and 1 / 0?", "cache_control": mark}]}])
    );
    let tools = first["tools"].as_array().expect("tools");
    assert_eq!(tools.last().unwrap()["cache_control"], mark);
    assert!(
        tools[..tools.len() - 1]
            .iter()
            .all(|t| t.get("cache_control").is_none())
    );
    assert_eq!(first["tools"][0]["name"], "add");
    assert_eq!(
        first["tools"][0]["input_schema"]["required"],
        json!(["a", "b"])
    );
    assert_eq!(first["tools"][0]["strict"], true);
    let messages = second["messages"].as_array().expect("messages");
    assert_eq!(
        messages[1],
        json!({"role": "assistant", "content": [
        {"type": "text", "text": "Let me compute both."},
        {"type": "tool_use", "id": "toolu_add", "name": "add", "input": {"a": 2, "b": 3}},
        {"type": "tool_use", "id": "toolu_div", "name": "divide", "input": {"a": 1, "b": 0}}]})
    );
    // The breakpoint moved: the first message is a string again (the same prefix), the
    // last result carries the mark.
    assert_eq!(
        messages[0],
        json!({"role": "user", "content": "What is 2 + 3, and 1 / 0?"})
    );
    assert_eq!(
        messages[2],
        json!({"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "toolu_add", "content": r#"{"sum":5}"#},
        {"type": "tool_result", "tool_use_id": "toolu_div",
         "content": "Division by zero: `b` must not be 0.", "is_error": true,
         "cache_control": mark}]})
    );
    assert_eq!(second["tools"], first["tools"]);
    check_golden(api, &conversation.requests);
}

#[tokio::test]
async fn gemini_conversation() {
    let api = Api::Gemini;
    let conversation = converse(api).await;
    check_answers(api, &conversation);
    let [first, second] = [
        &conversation.requests[0].body,
        &conversation.requests[1].body,
    ];
    // The model's turn goes back with its calls' thought signatures, where they were.
    let echoed = &second["contents"][1]["parts"];
    assert_eq!(echoed[1]["thoughtSignature"], "SIG-add");
    assert_eq!(echoed[2].get("thoughtSignature"), None);
    assert_eq!(first.get("model"), None, "the model is in the path");
    assert_eq!(
        first["systemInstruction"],
        json!({"parts": [{"text": "You are a careful calculator. Use the tools."}]})
    );
    assert_eq!(
        first["contents"],
        json!([{"role": "user", "parts": [{"text": "What is 2 + 3, and 1 / 0?"}]}])
    );
    assert_eq!(
        first["tools"][0]["functionDeclarations"][1]["name"],
        "divide"
    );
    assert_eq!(
        first["generationConfig"],
        json!({"temperature": 0.2, "maxOutputTokens": 512})
    );
    let contents = second["contents"].as_array().expect("contents");
    // Gemini gave no ids: none are echoed, calls and results match by name and order.
    assert_eq!(
        contents[1],
        json!({"role": "model", "parts": [
        {"text": "Let me compute both."},
        {"functionCall": {"name": "add", "args": {"a": 2, "b": 3}}, "thoughtSignature": "SIG-add"},
        {"functionCall": {"name": "divide", "args": {"a": 1, "b": 0}}}]})
    );
    assert_eq!(
        contents[2],
        json!({"role": "user", "parts": [
        {"functionResponse": {"name": "add", "response": {"output": {"sum": 5}}}},
        {"functionResponse": {"name": "divide", "response": {"error": "Division by zero: `b` must not be 0."}}}]})
    );
    check_golden(api, &conversation.requests);
}

/// Gemini ids, when the API gives them, are echoed in the calls and the results.
#[tokio::test]
async fn gemini_call_ids_are_echoed() {
    let answer = json!({"candidates": [{"content": {"role": "model", "parts": [
        {"functionCall": {"id": "fc-7", "name": "add", "args": {"a": 1, "b": 1}}}]},
        "finishReason": "STOP"}]});
    let server = MockServer::start([
        Reply::json(200, &answer),
        Reply::json(200, &Api::Gemini.text_answer("2")),
    ])
    .await;
    let model = Api::Gemini.model(&server.base, &Client::default());
    let request = first_request(Api::Gemini);
    let first = model.complete(&request).await.expect("first answer");
    assert_eq!(first.calls[0].as_ref().expect("a call").id, "fc-7");
    model
        .complete(&follow_up(&request, &first))
        .await
        .expect("second answer");
    let sent = &server.requests()[1].body["contents"];
    assert_eq!(sent[1]["parts"][0]["functionCall"]["id"], "fc-7");
    assert_eq!(sent[2]["parts"][0]["functionResponse"]["id"], "fc-7");
}

/// `ToolChoice::None` in each API's words; no `tools` (nor a choice) when none are declared.
#[tokio::test]
async fn tool_choice_none_and_no_tools() {
    for api in Api::ALL {
        let server = MockServer::start([
            Reply::json(200, &api.text_answer("a")),
            Reply::json(200, &api.text_answer("b")),
        ])
        .await;
        let model = api.model(&server.base, &Client::default());
        let mut request = first_request(api);
        request.options.tool_choice = ToolChoice::None;
        model.complete(&request).await.expect("an answer");
        request.tools = ToolDeclarations::default().into();
        model.complete(&request).await.expect("an answer");
        let sent = server.requests();
        let (with_tools, without) = (&sent[0].body, &sent[1].body);
        match api {
            Api::Chat | Api::Responses => assert_eq!(with_tools["tool_choice"], "none"),
            Api::Anthropic => assert_eq!(with_tools["tool_choice"], json!({"type": "none"})),
            Api::Gemini => assert_eq!(
                with_tools["toolConfig"],
                json!({"functionCallingConfig": {"mode": "NONE"}})
            ),
        }
        for key in ["tools", "tool_choice", "toolConfig"] {
            assert_eq!(without.get(key), None, "{api:?} {key}");
        }
    }
}

/// `ToolChoice::Required` and `ToolChoice::Tool` in each API's words; a choice no declared
/// tool can answer fails before anything is sent, naming what is wrong.
#[tokio::test]
async fn tool_choice_required_and_one_tool() {
    for api in Api::ALL {
        let server = MockServer::start([
            Reply::json(200, &api.text_answer("a")),
            Reply::json(200, &api.text_answer("b")),
        ])
        .await;
        let model = api.model(&server.base, &Client::default());
        let mut request = first_request(api);
        let declared = request.tool_names()[0].to_owned();
        request.options.tool_choice = ToolChoice::Required;
        model.complete(&request).await.expect("an answer");
        request.options.tool_choice = ToolChoice::Tool(declared.clone());
        model.complete(&request).await.expect("an answer");
        let sent = server.requests();
        let (required, one) = (&sent[0].body, &sent[1].body);
        match api {
            Api::Chat => {
                assert_eq!(required["tool_choice"], "required");
                assert_eq!(
                    one["tool_choice"],
                    json!({"type": "function", "function": {"name": declared}})
                );
            }
            Api::Responses => {
                assert_eq!(required["tool_choice"], "required");
                assert_eq!(
                    one["tool_choice"],
                    json!({"type": "function", "name": declared})
                );
            }
            Api::Anthropic => {
                assert_eq!(required["tool_choice"], json!({"type": "any"}));
                assert_eq!(
                    one["tool_choice"],
                    json!({"type": "tool", "name": declared})
                );
            }
            Api::Gemini => {
                assert_eq!(
                    required["toolConfig"],
                    json!({"functionCallingConfig": {"mode": "ANY"}})
                );
                assert_eq!(
                    one["toolConfig"],
                    json!({"functionCallingConfig":
                        {"mode": "ANY", "allowedFunctionNames": [declared]}})
                );
            }
        }

        request.options.tool_choice = ToolChoice::Tool("launch".to_owned());
        let err = model.complete(&request).await.unwrap_err();
        assert!(
            err.to_string()
                .contains("forces a call of 'launch', which the request does not declare"),
            "{api:?}: {err}"
        );
        request.options.tool_choice = ToolChoice::Required;
        request.tools = ToolDeclarations::default().into();
        let err = model.complete(&request).await.unwrap_err();
        assert!(
            err.to_string()
                .contains("requires a tool call, but no tool is declared"),
            "{api:?}: {err}"
        );
        assert_eq!(server.requests().len(), 2, "{api:?}: nothing more was sent");
    }
}

/// Anthropic requires `max_tokens`: the default fills in when the request sets none.
#[tokio::test]
async fn anthropic_max_tokens_default() {
    let server = MockServer::start([Reply::json(200, &Api::Anthropic.text_answer("a"))]).await;
    let model = Api::Anthropic.model(&server.base, &Client::default());
    let mut request = first_request(Api::Anthropic);
    request.options = ChatOptions::default();
    model.complete(&request).await.expect("an answer");
    let body = &server.requests()[0].body;
    assert_eq!(body["max_tokens"], 4096);
    assert_eq!(body.get("temperature"), None);
}

/// Other stop reasons and answers without text, read through the same clients.
#[tokio::test]
async fn stop_reasons_beyond_the_conversation() {
    let cases = [
        (
            Api::Chat,
            json!({"choices": [{"index": 0, "message": {"role": "assistant", "content": "The"}, "finish_reason": "length"}]}),
            StopReason::MaxTokens,
        ),
        (
            Api::Responses,
            json!({"status": "incomplete", "incomplete_details": {"reason": "max_output_tokens"}, "output": []}),
            StopReason::MaxTokens,
        ),
        (
            Api::Anthropic,
            json!({"type": "message", "role": "assistant", "content": [], "stop_reason": "refusal"}),
            StopReason::ContentFilter,
        ),
        (
            Api::Gemini,
            json!({"promptFeedback": {"blockReason": "SAFETY"}, "usageMetadata": {"promptTokenCount": 9}}),
            StopReason::ContentFilter,
        ),
    ];
    for (api, answer, expected) in cases {
        let server = MockServer::start([Reply::json(200, &answer)]).await;
        let model = api.model(&server.base, &Client::default());
        let response = model
            .complete(&first_request(api))
            .await
            .unwrap_or_else(|err| panic!("{api:?}: {err}"));
        assert_eq!(response.stop_reason, expected, "{api:?}");
        assert!(response.calls.is_empty(), "{api:?}");
    }
}

/// Add two integers.
#[toolsmith_core::tool_fn]
fn add(a: i64, b: i64) -> i64 {
    a + b
}

/// Divide a by b.
#[toolsmith_core::tool_fn]
fn divide(
    /// The dividend.
    a: f64,
    /// The divisor.
    b: f64,
) -> Result<f64, String> {
    if b == 0.0 {
        Err("division by zero".to_owned())
    } else {
        Ok(a / b)
    }
}

/// The first answer of `api` with the call ids every API is given here (`call_add`,
/// `call_div`), so that the four transcripts can be compared whole.
fn calls_answer_with_common_ids(api: Api) -> Value {
    let mut answer = calls_answer(api);
    match api {
        Api::Anthropic => {
            let text = answer
                .to_string()
                .replace("toolu_add", "call_add")
                .replace("toolu_div", "call_div");
            answer = serde_json::from_str(&text).unwrap();
        }
        Api::Gemini => {
            let parts = answer["candidates"][0]["content"]["parts"]
                .as_array_mut()
                .unwrap();
            parts[1]["functionCall"]["id"] = json!("call_add");
            parts[2]["functionCall"]["id"] = json!("call_div");
        }
        Api::Chat | Api::Responses => {}
    }
    answer
}

// Acceptance 10 of the agent-session issue.
/// The same scripted conversation, run by an `AgentSession` through each API's client against
/// the local server, gives the same transcript: the calls run, one fails, the results go back
/// under their ids, the answer ends the run.
#[tokio::test]
async fn an_agent_session_gives_the_same_transcript_through_every_client() {
    use toolsmith_core::ToolShed;
    use toolsmith_harness::agent::AgentSession;

    let mut transcripts = Vec::new();
    for api in Api::ALL {
        let server = MockServer::start([
            Reply::json(200, &calls_answer_with_common_ids(api)),
            Reply::json(200, &api.text_answer(FINAL_TEXT)),
        ])
        .await;
        let session = AgentSession::builder(api.model(&server.base, &Client::default()))
            .with_model(api.model_name())
            .with_toolshed(ToolShed::new().tool(Add).tool(Divide))
            .build()
            .unwrap();
        session
            .tool_manager()
            .activate(&["add".into(), "divide".into()]);
        let run = session
            .run("What is 2 + 3, and 1 / 0?")
            .await
            .unwrap_or_else(|err| panic!("{api:?}: {err}"));
        assert_eq!(run.text, FINAL_TEXT, "{api:?}");
        assert_eq!(run.model_calls, 2, "{api:?}");
        assert_eq!(run.usage.cached_input_tokens, 64, "{api:?}");
        let requests = server.requests();
        assert_eq!(requests.len(), 2, "{api:?}");
        for recorded in &requests {
            api.check_request(recorded);
        }
        // The second request carries both results under the calls' ids.
        let sent = requests[1].body.to_string();
        for id in ["call_add", "call_div"] {
            assert!(sent.contains(id), "{api:?}: {id} missing from {sent}");
        }
        assert!(sent.contains("division by zero"), "{api:?}");
        let mut transcript = run.transcript;
        // Each provider's own turn and Gemini's thought signatures are the provider's; the
        // rest is the same everywhere.
        for message in &mut transcript {
            if let Message::Assistant {
                calls,
                provider_turn,
                ..
            } = message
            {
                *provider_turn = None;
                for call in calls {
                    call.thought_signature = None;
                }
            }
        }
        transcripts.push((api, transcript));
    }
    let (first_api, first) = &transcripts[0];
    for (api, transcript) in &transcripts[1..] {
        assert_eq!(transcript, first, "{api:?} differs from {first_api:?}");
    }
    assert_eq!(first.len(), 4);
    let results = first[2].results();
    assert_eq!(results[0].result.content.to_text(), "5");
    assert!(results[1].result.is_error());
}
