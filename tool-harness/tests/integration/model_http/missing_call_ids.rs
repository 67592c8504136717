//! Calls a server wrote with a part missing or empty (an id, a name, the arguments), or
//! with an id of the form given to calls without one: the turn that goes back as the
//! server wrote it carries the ids and names its results are sent with, in the form the
//! API takes.

use serde_json::{Value, json};

use super::Api;
use super::turns::{responses_answer, run_with};

/// The ids of `items` of `kind`, read at `key`; a missing one is `None`.
fn ids_of<'a>(items: &'a [Value], kind: &str, key: &str) -> Vec<Option<&'a str>> {
    items
        .iter()
        .filter(|item| item["type"] == kind)
        .map(|item| item.get(key).and_then(Value::as_str))
        .collect()
}

/// Asserts that the second request's Responses `input` holds two calls, each with an id of
/// its own (not empty), answered under those ids by the outputs "5" and "2" in order.
fn assert_responses_calls_answered(input: &[Value]) {
    let calls = ids_of(input, "function_call", "call_id");
    assert_eq!(calls.len(), 2, "{input:?}");
    assert!(
        calls.iter().all(|id| id.is_some_and(|id| !id.is_empty())),
        "{input:?}"
    );
    assert_eq!(
        calls,
        ids_of(input, "function_call_output", "call_id"),
        "{input:?}"
    );
    assert_ne!(calls[0], calls[1], "{input:?}");
    let answers: Vec<&Value> = input
        .iter()
        .filter(|item| item["type"] == "function_call_output")
        .map(|item| &item["output"])
        .collect();
    assert_eq!(answers, [&json!("5"), &json!("2")]);
}

/// Asserts that the second request's Anthropic `messages` hold a turn of two `tool_use`
/// blocks, each with an id of its own, answered under those ids by "5" and "2" in order.
fn assert_anthropic_calls_answered(messages: &[Value]) {
    let uses = ids_of(messages[1]["content"].as_array().unwrap(), "tool_use", "id");
    let results = messages[2]["content"].as_array().unwrap();
    assert_eq!(uses.len(), 2, "{messages:?}");
    assert!(
        uses.iter().all(|id| id.is_some_and(|id| !id.is_empty())),
        "{messages:?}"
    );
    assert_eq!(
        uses,
        ids_of(results, "tool_result", "tool_use_id"),
        "{messages:?}"
    );
    assert_ne!(uses[0], uses[1], "{messages:?}");
    let contents: Vec<&Value> = results.iter().map(|result| &result["content"]).collect();
    assert_eq!(contents, [&json!("5"), &json!("2")]);
}

#[tokio::test]
async fn a_responses_turn_sent_back_verbatim_carries_the_call_ids_its_outputs_name() {
    // A reasoning item sends the turn back as its output items; a compatible server left
    // out `call_id`, once with the item's own `id` (which does not go back), once without.
    let output = json!([
        {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "gAAAA-1"},
        {"type": "function_call", "id": "fc_1", "name": "add",
         "arguments": "{\"a\":2,\"b\":3}", "status": "completed"},
        {"type": "function_call", "name": "add", "arguments": "{\"a\":1,\"b\":1}"}]);
    let (_, requests) = run_with(Api::Responses, responses_answer(output)).await;
    assert_responses_calls_answered(requests[1].body["input"].as_array().unwrap());
}

#[tokio::test]
async fn an_anthropic_turn_sent_back_verbatim_carries_the_ids_its_results_name() {
    // A call without an id is given `toolsmith-call-0`, and one the model wrote with that
    // id is left it: the generated one is made distinct, in the turn as in its result.
    let answer = json!({"id": "msg_1", "type": "message", "role": "assistant",
        "model": "claude-sonnet-4-5", "stop_reason": "tool_use",
        "content": [
            {"type": "tool_use", "name": "add", "input": {"a": 2, "b": 3}},
            {"type": "tool_use", "id": "toolsmith-call-0", "name": "add",
             "input": {"a": 1, "b": 1}}],
        "usage": {"input_tokens": 50, "output_tokens": 80}});
    let (_, requests) = run_with(Api::Anthropic, answer).await;
    assert_anthropic_calls_answered(requests[1].body["messages"].as_array().unwrap());
}

#[tokio::test]
async fn calls_with_empty_ids_each_run_and_go_back_with_ids_of_their_own() {
    // Compatible servers that write `""` for ids: every such call of an answer had the one
    // id, so that only the first ran and the others were answered "an earlier call of this
    // answer has the id ''", as OpenAI Chat's and Gemini's are not.
    let responses = responses_answer(json!([
        {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "gAAAA-1"},
        {"type": "function_call", "call_id": "", "name": "add", "arguments": "{\"a\":2,\"b\":3}"},
        {"type": "function_call", "call_id": "", "name": "add", "arguments": "{\"a\":1,\"b\":1}"}]));
    let (_, requests) = run_with(Api::Responses, responses).await;
    assert_responses_calls_answered(requests[1].body["input"].as_array().unwrap());

    let anthropic = json!({"id": "msg_1", "type": "message", "role": "assistant",
        "model": "claude-sonnet-4-5", "stop_reason": "tool_use",
        "content": [
            {"type": "tool_use", "id": "", "name": "add", "input": {"a": 2, "b": 3}},
            {"type": "tool_use", "id": "", "name": "add", "input": {"a": 1, "b": 1}}],
        "usage": {"input_tokens": 50, "output_tokens": 80}});
    let (_, requests) = run_with(Api::Anthropic, anthropic).await;
    assert_anthropic_calls_answered(requests[1].body["messages"].as_array().unwrap());
}

#[tokio::test]
async fn a_call_that_named_no_tool_goes_back_verbatim_under_the_name_its_result_has() {
    use toolsmith_core::provider::UNNAMED_CALL_NAME;

    // Each API requires a call's name: a conversation holding a call without one has every
    // later request refused. The call is answered "did not name a tool", under the name
    // the rendering echoes it with; the turn sent back as written carries that name too.
    let responses = responses_answer(json!([
        {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "gAAAA-1"},
        {"type": "function_call", "call_id": "call_1", "name": "", "arguments": "{}"},
        {"type": "function_call", "call_id": "call_2", "arguments": "{}"}]));
    let (_, requests) = run_with(Api::Responses, responses).await;
    let input = requests[1].body["input"].as_array().unwrap();
    let names: Vec<&Value> = input
        .iter()
        .filter(|item| item["type"] == "function_call")
        .map(|item| &item["name"])
        .collect();
    assert_eq!(names, [UNNAMED_CALL_NAME, UNNAMED_CALL_NAME], "{input:?}");

    let anthropic = json!({"id": "msg_1", "type": "message", "role": "assistant",
        "model": "claude-sonnet-4-5", "stop_reason": "tool_use",
        "content": [
            {"type": "tool_use", "id": "toolu_1", "name": "", "input": {}},
            {"type": "tool_use", "id": "toolu_2", "input": {}}],
        "usage": {"input_tokens": 50, "output_tokens": 80}});
    let (_, requests) = run_with(Api::Anthropic, anthropic).await;
    let uses = &requests[1].body["messages"][1]["content"];
    assert_eq!(uses[0]["name"], UNNAMED_CALL_NAME, "{uses}");
    assert_eq!(uses[1]["name"], UNNAMED_CALL_NAME, "{uses}");

    // Gemini matches a result to its call by name.
    let gemini = json!({"candidates": [{"content": {"role": "model", "parts": [
            {"functionCall": {"name": "", "args": {}}, "thoughtSignature": "SIG"},
            {"functionCall": {"args": {}}}]},
        "finishReason": "STOP", "index": 0}],
        "usageMetadata": {"promptTokenCount": 50, "candidatesTokenCount": 20}});
    let (_, requests) = run_with(Api::Gemini, gemini).await;
    let contents = &requests[1].body["contents"];
    for place in 0..2 {
        let call = &contents[1]["parts"][place];
        assert_eq!(
            call["functionCall"]["name"], UNNAMED_CALL_NAME,
            "{contents}"
        );
        assert_eq!(
            contents[2]["parts"][place]["functionResponse"]["name"],
            UNNAMED_CALL_NAME
        );
    }
    assert_eq!(contents[1]["parts"][0]["thoughtSignature"], "SIG");
}

#[tokio::test]
async fn a_call_goes_back_verbatim_with_its_arguments_in_the_form_the_api_requires() {
    // A Responses-compatible server writing `arguments` as an object (as Chat-style servers
    // sometimes do) or not at all: the API takes back a string only. The call is read
    // from the object, and goes back with it as JSON text.
    let responses = responses_answer(json!([
        {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "gAAAA-1"},
        {"type": "function_call", "call_id": "call_1", "name": "add", "arguments": {"a": 2, "b": 3}},
        {"type": "function_call", "call_id": "call_2", "name": "add"}]));
    let (_, requests) = run_with(Api::Responses, responses).await;
    let input = requests[1].body["input"].as_array().unwrap();
    let calls: Vec<&Value> = input
        .iter()
        .filter(|item| item["type"] == "function_call")
        .collect();
    let sent: Value = serde_json::from_str(calls[0]["arguments"].as_str().unwrap()).unwrap();
    assert_eq!(sent, json!({"a": 2, "b": 3}));
    assert_eq!(calls[1]["arguments"], "{}", "{input:?}");
    assert_eq!(input[4]["output"], "5");

    // An Anthropic `tool_use` without `input`, which the API requires: `{}`.
    let anthropic = json!({"id": "msg_1", "type": "message", "role": "assistant",
        "model": "claude-sonnet-4-5", "stop_reason": "tool_use",
        "content": [{"type": "tool_use", "id": "toolu_1", "name": "add"}],
        "usage": {"input_tokens": 50, "output_tokens": 80}});
    let (_, requests) = run_with(Api::Anthropic, anthropic).await;
    assert_eq!(
        requests[1].body["messages"][1]["content"][0]["input"],
        json!({})
    );
}

#[tokio::test]
async fn an_anthropic_input_written_as_json_text_goes_back_as_the_object_the_call_ran_with() {
    // A compatible server writing `input` as JSON text: the call is read from it and runs
    // with a = 2, b = 3; its turn went back with `{}`, a history the model's result does
    // not match.
    let answer = json!({"id": "msg_1", "type": "message", "role": "assistant",
        "model": "claude-sonnet-4-5", "stop_reason": "tool_use",
        "content": [
            {"type": "tool_use", "id": "toolu_1", "name": "add", "input": "{\"a\": 2, \"b\": 3}"},
            {"type": "tool_use", "id": "toolu_2", "name": "add", "input": "not json at all {"}],
        "usage": {"input_tokens": 50, "output_tokens": 80}});
    let (_, requests) = run_with(Api::Anthropic, answer).await;
    let messages = requests[1].body["messages"].as_array().unwrap();
    let inputs: Vec<&Value> = messages[1]["content"]
        .as_array()
        .unwrap()
        .iter()
        .map(|block| &block["input"])
        .collect();
    // The text that does not read goes back as `{}`, its call refused.
    assert_eq!(
        inputs,
        [&json!({"a": 2, "b": 3}), &json!({})],
        "{messages:?}"
    );
    let results = messages[2]["content"].as_array().unwrap();
    assert_eq!(results[0]["content"], json!("5"), "{results:?}");
    assert_eq!(results[1]["is_error"], json!(true), "{results:?}");
}
