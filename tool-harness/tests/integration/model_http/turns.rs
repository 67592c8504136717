//! The model's turns as they go back to it: each provider's own turn verbatim where its
//! format keeps what a rendering would lose (Responses reasoning, Anthropic thinking, Gemini
//! thoughts), the rendered turn for another provider, and a call that could not be read
//! echoed and replayed as the model wrote it.

use serde_json::{Value, json};
use toolsmith_core::ToolShed;
use toolsmith_core::provider::Provider;
use toolsmith_harness::agent::{AgentRun, AgentSession};
use toolsmith_harness::model::{ChatModel, ChatRequest, Message, ScriptedModel};

use super::server::{MockServer, Recorded, Reply};
use super::{Api, Client};

/// Add two integers.
#[toolsmith_core::tool_fn]
fn add(a: i64, b: i64) -> i64 {
    a + b
}

const QUESTION: &str = "What is 2 + 3?";

/// A session of `model` with `add` active.
pub(super) fn session(model: Box<dyn ChatModel>, api: Api) -> AgentSession {
    let session = AgentSession::builder(model)
        .with_model(api.model_name())
        .with_toolshed(ToolShed::new().tool(Add))
        .build()
        .expect("builds");
    session.tool_manager().activate(&["add".into()]);
    session
}

/// A run of `api`'s client against a server that answers `first`, then "5"; what it sent.
pub(super) async fn run_with(api: Api, first: Value) -> (AgentRun, Vec<Recorded>) {
    let server = MockServer::start([
        Reply::json(200, &first),
        Reply::json(200, &api.text_answer("5")),
    ])
    .await;
    let run = session(api.model(&server.base, &Client::default()), api)
        .run(QUESTION)
        .await
        .unwrap_or_else(|err| panic!("{api:?}: {err}"));
    assert_eq!(run.text, "5", "{api:?}");
    let requests = server.requests();
    assert_eq!(requests.len(), 2, "{api:?}");
    (run, requests)
}

pub(super) fn responses_answer(output: Value) -> Value {
    json!({"id": "resp_1", "object": "response", "status": "completed", "model": "o4-mini",
        "output": output,
        "usage": {"input_tokens": 50, "output_tokens": 80,
            "output_tokens_details": {"reasoning_tokens": 64}}})
}

#[tokio::test]
async fn responses_reasoning_goes_back_with_its_encrypted_content_and_no_ids() {
    let output = json!([
        {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "gAAAA-1"},
        {"type": "function_call", "id": "fc_1", "call_id": "call_add", "name": "add",
         "arguments": "{\"a\":2,\"b\":3}", "status": "completed"}]);
    let (run, requests) = run_with(Api::Responses, responses_answer(output)).await;
    let input = &requests[1].body["input"];
    assert_eq!(
        input,
        &json!([
            {"role": "user", "content": QUESTION},
            {"type": "reasoning", "summary": [], "encrypted_content": "gAAAA-1"},
            {"type": "function_call", "call_id": "call_add", "name": "add",
             "arguments": "{\"a\":2,\"b\":3}", "status": "completed"},
            {"type": "function_call_output", "call_id": "call_add", "output": "5"}
        ])
    );
    let Message::Assistant { provider_turn, .. } = &run.transcript[1] else {
        panic!("an assistant message: {:?}", run.transcript[1]);
    };
    let turn = provider_turn.as_ref().expect("the provider's turn is kept");
    assert_eq!(turn.provider, Provider::OpenAiResponses);
    assert_eq!(turn.entries.len(), 2);
    assert_replays(&run, Api::Responses).await;
}

#[tokio::test]
async fn responses_reasoning_without_its_content_leaves_the_rendered_turn() {
    // A reasoning item without `encrypted_content` cannot be sent back to a request that
    // stores nothing: the turn goes back as its text and calls.
    let output = json!([
        {"type": "reasoning", "id": "rs_1", "summary": []},
        {"type": "function_call", "id": "fc_1", "call_id": "call_add", "name": "add",
         "arguments": "{\"a\":2,\"b\":3}", "status": "completed"}]);
    let (run, requests) = run_with(Api::Responses, responses_answer(output)).await;
    assert_eq!(
        requests[1].body["input"][1],
        json!({"type": "function_call", "call_id": "call_add", "name": "add",
            "arguments": "{\"a\":2,\"b\":3}"})
    );
    assert!(!requests[1].body.to_string().contains("rs_1"));
    let Message::Assistant { provider_turn, .. } = &run.transcript[1] else {
        panic!("an assistant message: {:?}", run.transcript[1]);
    };
    assert_eq!(provider_turn, &None);
}

#[tokio::test]
async fn anthropic_thinking_goes_back_verbatim_and_another_provider_gets_the_rendered_turn() {
    let content = json!([
        {"type": "thinking", "thinking": "The user wants 2 + 3.", "signature": "EqQBCkYIBRgC"},
        {"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix"},
        {"type": "tool_use", "id": "toolu_1", "name": "add", "input": {"a": 2, "b": 3}}]);
    let answer = json!({"id": "msg_1", "type": "message", "role": "assistant",
        "model": "claude-sonnet-4-5", "content": content, "stop_reason": "tool_use",
        "usage": {"input_tokens": 50, "output_tokens": 80}});
    let (run, requests) = run_with(Api::Anthropic, answer).await;
    let messages = &requests[1].body["messages"];
    assert_eq!(
        messages[1],
        json!({"role": "assistant", "content": content})
    );
    assert_eq!(messages[2]["content"][0]["tool_use_id"], "toolu_1");
    assert_replays(&run, Api::Anthropic).await;

    // The same transcript sent to OpenAI: the turn rendered from its text and calls.
    let server = MockServer::start([Reply::json(200, &Api::Chat.text_answer("5"))]).await;
    let request = ChatRequest {
        model: Api::Chat.model_name().to_owned(),
        messages: run.transcript,
        ..ChatRequest::default()
    };
    Api::Chat
        .model(&server.base, &Client::default())
        .complete(&request)
        .await
        .expect("answers");
    let sent = &server.requests()[0].body["messages"];
    assert_eq!(
        sent[1],
        json!({"role": "assistant", "content": null, "tool_calls": [
            {"id": "toolu_1", "type": "function",
             "function": {"name": "add", "arguments": "{\"a\":2,\"b\":3}"}}]})
    );
    assert!(!sent.to_string().contains("thinking"));
}

#[tokio::test]
async fn gemini_thoughts_go_back_with_their_signatures() {
    let parts = json!([
        {"text": "Adding the two numbers.", "thought": true},
        {"text": "Let me add them.", "thoughtSignature": "SIG-text"},
        {"functionCall": {"name": "add", "args": {"a": 2, "b": 3}}, "thoughtSignature": "SIG-call"}]);
    let answer = json!({"candidates": [{"content": {"role": "model", "parts": parts},
        "finishReason": "STOP", "index": 0}],
        "usageMetadata": {"promptTokenCount": 50, "candidatesTokenCount": 20,
            "toolUsePromptTokenCount": 7, "thoughtsTokenCount": 30}});
    let (run, requests) = run_with(Api::Gemini, answer).await;
    assert_eq!(
        requests[1].body["contents"][1],
        json!({"role": "model", "parts": parts})
    );
    // `toolUsePromptTokenCount` is input too: 50 + 7, then the answer's 10.
    assert_eq!(run.usage.input_tokens, 50 + 7 + 10);
    assert_eq!(run.usage.output_tokens, 20 + 30 + 2);
    assert_eq!(
        run.transcript[1].calls()[0].thought_signature.as_deref(),
        Some("SIG-call")
    );
    assert_replays(&run, Api::Gemini).await;
}

/// Replayed through a `ScriptedModel`, `run` records the same transcript: the provider's
/// turns, Gemini's signatures and the calls as written come back as they were.
async fn assert_replays(run: &AgentRun, api: Api) {
    let replay = session(Box::new(ScriptedModel::replaying(&run.transcript)), api)
        .run(QUESTION)
        .await
        .expect("replays");
    assert_eq!(replay.transcript, run.transcript, "{api:?}");
}

#[tokio::test]
async fn a_call_that_could_not_be_read_goes_back_and_replays_as_written() {
    let broken = "{\"a\": 2, \"b\"";
    let answer = json!({"id": "chatcmpl-1", "object": "chat.completion",
        "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
            "role": "assistant", "content": null, "tool_calls": [
                {"id": "call_1", "type": "function",
                 "function": {"name": "add", "arguments": broken}}]}}],
        "usage": {"prompt_tokens": 50, "completion_tokens": 10}});
    let (run, requests) = run_with(Api::Chat, answer).await;
    let second = &requests[1].body["messages"];
    assert_eq!(second[1]["tool_calls"][0]["function"]["arguments"], broken);
    assert!(
        second[2]["content"]
            .as_str()
            .is_some_and(|text| text.contains("not valid JSON")),
        "the error goes back: {}",
        second[2]
    );
    assert_eq!(
        run.transcript[1].calls()[0].as_written.as_deref(),
        Some(broken)
    );

    // Replayed, the call is rejected the same way: the same transcript.
    assert_replays(&run, Api::Chat).await;
}

#[tokio::test]
async fn body_fields_fill_in_what_the_clients_leave_out() {
    use toolsmith_harness::model::ChatOptions;
    use toolsmith_harness::model::http::{AnthropicModel, GeminiModel};

    let request = |api: Api| ChatRequest {
        model: api.model_name().to_owned(),
        messages: vec![Message::user(QUESTION)],
        options: ChatOptions {
            temperature: Some(0.5),
            max_output_tokens: Some(16_000),
            ..ChatOptions::default()
        },
        ..ChatRequest::default()
    };

    let server = MockServer::start([Reply::json(200, &Api::Anthropic.text_answer("5"))]).await;
    let anthropic = AnthropicModel::builder()
        .api_key(super::KEY)
        .base_url(&server.base)
        .body_field(
            "thinking",
            json!({"type": "enabled", "budget_tokens": 10_000}),
        )
        .body_field("max_tokens", json!(1))
        .build()
        .expect("builds");
    anthropic
        .complete(&request(Api::Anthropic))
        .await
        .expect("answers");
    let sent = &server.requests()[0].body;
    assert_eq!(
        sent["thinking"],
        json!({"type": "enabled", "budget_tokens": 10_000})
    );
    // The request's own limit stays.
    assert_eq!(sent["max_tokens"], 16_000);

    let server = MockServer::start([Reply::json(200, &Api::Gemini.text_answer("5"))]).await;
    let gemini = GeminiModel::builder()
        .api_key(super::KEY)
        .base_url(&server.base)
        .body_field(
            "generationConfig",
            json!({"temperature": 2.0, "thinkingConfig": {"thinkingBudget": 0}}),
        )
        .build()
        .expect("builds");
    gemini
        .complete(&request(Api::Gemini))
        .await
        .expect("answers");
    let config = &server.requests()[0].body["generationConfig"];
    assert_eq!(config["temperature"], 0.5);
    assert_eq!(config["maxOutputTokens"], 16_000);
    assert_eq!(config["thinkingConfig"], json!({"thinkingBudget": 0}));
}

#[tokio::test]
async fn gemini_sends_no_system_instruction_for_an_empty_system_prompt() {
    // Gemini refuses a part of empty text ("Unable to submit request because it has an
    // empty text parameter"), the request with it; an empty system prompt says nothing.
    for (system, sent) in [
        ("", None),
        (" \n", None),
        ("Be brief.", Some(json!({"parts": [{"text": "Be brief."}]}))),
    ] {
        let request = ChatRequest {
            model: Api::Gemini.model_name().to_owned(),
            system: Some(system.to_owned()),
            messages: vec![Message::user(QUESTION)],
            ..ChatRequest::default()
        };
        let body = &Api::Gemini.body_sent(&request).await;
        assert_eq!(body.get("systemInstruction"), sent.as_ref(), "{system:?}");
    }
}

#[tokio::test]
async fn anthropic_is_sent_call_ids_it_takes_from_a_conversation_made_elsewhere() {
    use toolsmith_core::{ToolArguments, ToolCallResult};
    use toolsmith_harness::model::{ModelCall, ToolResultMessage};

    // Ids as an OpenAI-compatible server for Kimi writes them, and as a text model may:
    // Anthropic refuses the request for an id outside `^[a-zA-Z0-9_-]+$` ("tool_use.id:
    // String should match pattern"). Ids it takes go as they are.
    let ids = [
        "functions.add:0",
        "functions_add_0",
        "functions:add.0",
        "toolu_01A",
    ];
    let calls: Vec<ModelCall> = ids
        .iter()
        .map(|id| ModelCall::new(*id, "add", ToolArguments::new()))
        .collect();
    let results = ids
        .iter()
        .map(|id| ToolResultMessage {
            call_id: (*id).to_owned(),
            name: "add".to_owned(),
            result: ToolCallResult::text("5"),
        })
        .collect();
    let request = ChatRequest {
        model: Api::Anthropic.model_name().to_owned(),
        messages: vec![
            Message::user(QUESTION),
            Message::assistant_calls(None, calls),
            Message::ToolResults { results },
        ],
        ..ChatRequest::default()
    };
    let body = &Api::Anthropic.body_sent(&request).await;
    let uses: Vec<&str> = body["messages"][1]["content"]
        .as_array()
        .unwrap()
        .iter()
        .map(|block| block["id"].as_str().unwrap())
        .collect();
    let answered: Vec<&str> = body["messages"][2]["content"]
        .as_array()
        .unwrap()
        .iter()
        .map(|block| block["tool_use_id"].as_str().unwrap())
        .collect();
    assert_eq!(uses, answered);
    for id in &uses {
        assert!(
            !id.is_empty()
                && id
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-'),
            "{id}"
        );
    }
    let distinct: std::collections::HashSet<&&str> = uses.iter().collect();
    assert_eq!(distinct.len(), uses.len(), "{uses:?}");
    // Valid ids are kept, and an id rewritten is no id of the conversation already.
    assert_eq!(uses[1], "functions_add_0");
    assert_eq!(uses[3], "toolu_01A");
}

#[tokio::test]
async fn anthropic_and_responses_are_sent_each_call_id_once_when_another_provider_repeated_them() {
    use toolsmith_core::{ToolArguments, ToolCallResult};
    use toolsmith_harness::model::{ModelCall, ToolResultMessage};

    // An OpenAI-compatible server for Kimi numbers each turn's calls from 0: after a
    // fallback to Anthropic, the conversation holds `functions.add:0` in two turns, and
    // Anthropic refuses it ("`tool_use` ids must be unique"). The third turn also repeats
    // an id within itself, as a model may; its second call was answered without running.
    let turns: [&[&str]; 3] = [
        &["functions.add:0"],
        &["functions.add:0", "functions.add:1"],
        &["functions.add:1", "functions.add:1"],
    ];
    let mut messages = vec![Message::user(QUESTION)];
    for (turn, ids) in turns.iter().enumerate() {
        let calls = ids
            .iter()
            .map(|id| ModelCall::new(*id, "add", ToolArguments::new()))
            .collect();
        messages.push(Message::assistant_calls(None, calls));
        // Each result says which call it answers: turn and place.
        let results = ids
            .iter()
            .enumerate()
            .map(|(place, id)| ToolResultMessage {
                call_id: (*id).to_owned(),
                name: "add".to_owned(),
                result: ToolCallResult::text(format!("{turn}.{place}")),
            })
            .collect();
        messages.push(Message::ToolResults { results });
    }
    let request = ChatRequest {
        model: Api::Anthropic.model_name().to_owned(),
        messages,
        ..ChatRequest::default()
    };
    let body = Api::Anthropic.body_sent(&request).await;
    let mut every_use = std::collections::HashSet::new();
    for (turn, ids) in turns.iter().enumerate() {
        let uses = body["messages"][1 + 2 * turn]["content"]
            .as_array()
            .unwrap();
        let results = body["messages"][2 + 2 * turn]["content"]
            .as_array()
            .unwrap();
        assert_eq!(uses.len(), ids.len());
        for (place, (call, result)) in uses.iter().zip(results).enumerate() {
            let id = call["id"].as_str().unwrap();
            assert!(every_use.insert(id.to_owned()), "{id} sent twice: {body}");
            assert_eq!(result["tool_use_id"], id, "{body}");
            assert_eq!(result["content"], format!("{turn}.{place}"));
        }
    }
    // A conversation renders its ids the same on every request: the cached prefix holds.
    assert_eq!(Api::Anthropic.body_sent(&request).await, body);
    // The first turn is sent as before, its id the one the call-id rewrite gives alone.
    let alone = ChatRequest {
        messages: request.messages[..3].to_vec(),
        ..request.clone()
    };
    let first = Api::Anthropic.body_sent(&alone).await;
    assert_eq!(first["messages"][1], body["messages"][1]);

    // OpenAI's Responses API refuses a repeated `call_id` too: each goes once, its output
    // with it.
    let to_responses = ChatRequest {
        model: Api::Responses.model_name().to_owned(),
        ..request.clone()
    };
    let responses = Api::Responses.body_sent(&to_responses).await;
    let items = responses["input"].as_array().unwrap();
    let call_ids: Vec<&str> = items
        .iter()
        .filter(|item| item["type"] == "function_call")
        .map(|item| item["call_id"].as_str().unwrap())
        .collect();
    let output_ids: Vec<&str> = items
        .iter()
        .filter(|item| item["type"] == "function_call_output")
        .map(|item| item["call_id"].as_str().unwrap())
        .collect();
    let distinct: std::collections::HashSet<&&str> = call_ids.iter().collect();
    assert_eq!(distinct.len(), 5, "{call_ids:?}");
    assert_eq!(call_ids, output_ids);
    assert_eq!(call_ids[0], "functions.add:0", "the first use keeps its id");
    let outputs: Vec<&str> = items
        .iter()
        .filter(|item| item["type"] == "function_call_output")
        .map(|item| item["output"].as_str().unwrap())
        .collect();
    assert_eq!(outputs, ["0.0", "1.0", "1.1", "2.0", "2.1"]);

    // OpenAI Chat documents no such refusal: its ids go as they are.
    let to_chat = ChatRequest {
        model: Api::Chat.model_name().to_owned(),
        ..request.clone()
    };
    let chat = Api::Chat.body_sent(&to_chat).await;
    assert_eq!(
        chat["messages"][3]["tool_calls"][0]["id"],
        "functions.add:0"
    );
}

#[tokio::test]
async fn an_empty_user_message_is_refused_before_sending_where_the_api_refuses_it() {
    use toolsmith_core::Image;
    use toolsmith_harness::model::ModelError;

    // Anthropic ("all messages must have non-empty content except for the optional final
    // assistant message") and Gemini (a part of empty text) refuse the whole request; the
    // caller is told which message, before anything is sent. OpenAI takes it.
    for text in ["", " \n"] {
        let messages = vec![
            Message::user(QUESTION),
            Message::assistant("5"),
            Message::user(text),
        ];
        for api in Api::ALL {
            let request = ChatRequest {
                model: api.model_name().to_owned(),
                messages: messages.clone(),
                ..ChatRequest::default()
            };
            if matches!(api, Api::Chat | Api::Responses) {
                let body = api.body_sent(&request).await;
                let key = if api == Api::Chat {
                    "messages"
                } else {
                    "input"
                };
                assert_eq!(body[key][2], json!({"role": "user", "content": text}));
                continue;
            }
            let server = MockServer::start([]).await;
            let model = api.model(&server.base, &Client::default());
            let error = model.complete(&request).await.unwrap_err();
            let ModelError::InvalidRequest { provider, reason } = &error else {
                panic!("{api:?}: {error:?}");
            };
            assert_eq!(provider, api.name());
            assert!(
                reason.starts_with("messages[2], a user message, is empty"),
                "{reason}"
            );
            assert!(reason.contains(api.name()), "{reason}");
            assert!(server.requests().is_empty(), "{api:?}");
        }
    }

    // Images alone are content; an assistant message without text or calls is left out,
    // as it was (it says nothing, and both APIs take two user messages in a row).
    let photo = Image::from_bytes("image/png", b"\x89PNG\r\n\x1a\n").unwrap();
    for api in [Api::Anthropic, Api::Gemini] {
        let request = ChatRequest {
            model: api.model_name().to_owned(),
            messages: vec![
                Message::user(QUESTION),
                Message::assistant_calls(Some(" ".to_owned()), Vec::new()),
                Message::user_with_images(" ", vec![photo.clone()]),
            ],
            ..ChatRequest::default()
        };
        let body = api.body_sent(&request).await;
        let key = if api == Api::Anthropic {
            "messages"
        } else {
            "contents"
        };
        let sent = body[key].as_array().unwrap();
        assert_eq!(sent.len(), 2, "{api:?}: {body}");
        assert_eq!(sent[1]["role"], "user", "{api:?}");
    }
}

#[tokio::test]
async fn turns_sent_back_as_written_are_sent_each_call_id_once_too() {
    use toolsmith_core::{ToolArguments, ToolCallResult};
    use toolsmith_harness::model::{ModelCall, ProviderTurn, ToolResultMessage};

    // An Anthropic-compatible server numbering each turn's calls from 0: its turns go back
    // as it wrote them, to it or, after a fallback, to Anthropic, which refuses a repeat.
    let answer = json!({"content": [
        {"type": "tool_use", "id": "functions.add:0", "name": "add", "input": {}}]});
    let entries = Provider::Anthropic
        .parse_turn_entries(&answer)
        .unwrap()
        .unwrap();
    let mut messages = vec![Message::user(QUESTION)];
    for turn in 0..2 {
        messages.push(Message::Assistant {
            text: None,
            calls: vec![ModelCall::new(
                "functions.add:0",
                "add",
                ToolArguments::new(),
            )],
            provider_turn: Some(ProviderTurn {
                provider: Provider::Anthropic,
                entries: entries.clone(),
            }),
            stop_reason: None,
        });
        messages.push(Message::ToolResults {
            results: vec![ToolResultMessage {
                call_id: "functions.add:0".to_owned(),
                name: "add".to_owned(),
                result: ToolCallResult::text(format!("{turn}")),
            }],
        });
    }
    let request = ChatRequest {
        model: Api::Anthropic.model_name().to_owned(),
        messages,
        ..ChatRequest::default()
    };
    let body = Api::Anthropic.body_sent(&request).await;
    let id_of = |at: usize, key: &str| body["messages"][at]["content"][0][key].clone();
    assert_ne!(id_of(1, "id"), id_of(3, "id"), "{body}");
    assert_eq!(id_of(1, "id"), id_of(2, "tool_use_id"));
    assert_eq!(id_of(3, "id"), id_of(4, "tool_use_id"));
    assert_eq!(body["messages"][4]["content"][0]["content"], "1");
}
