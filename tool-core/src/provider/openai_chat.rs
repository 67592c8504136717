//! OpenAI Chat Completions: `tools: [{"type": "function", "function": {name, description,
//! parameters, strict}}]`; calls in `choices[0].message.tool_calls` with arguments as a JSON
//! string; results as `{"role": "tool", "tool_call_id", "content"}` messages. The model's
//! earlier calls are echoed as an assistant message's `tool_calls`; the answer's text is
//! `message.content`, its stop reason `finish_reason`.

use serde_json::{Map, Value, json};

use super::calls::{ParsedCall, call_id, echoed_name, generated_id, read_call};
use super::reply::{Reply, images_after_results};
use super::strict::{StrictDialect, transform};
use super::turns::{AssistantCall, StopReason};
use super::{Provider, RenderError, RenderOptions, RenderedTools, ResponseError};
use crate::{Image, ToolFunctionSpec};

/// The `{name, description, parameters, strict}` of one function, as both OpenAI APIs
/// declare it; `parameters` made strict when the tool is to be rendered strict and can be.
/// A tool that cannot be strict is rendered as it is (no `strict`), and why is pushed to
/// `not_strict`.
pub(crate) fn function_fields(
    provider: Provider,
    spec: ToolFunctionSpec,
    options: &RenderOptions,
    not_strict: &mut Vec<RenderError>,
) -> Map<String, Value> {
    let mut strict = options.is_strict(spec.returns.is_some());
    let parameters = if strict {
        match transform(StrictDialect::OpenAi, &spec.parameters) {
            Ok(converted) => converted.schema,
            Err(err) => {
                not_strict.push(err.into_render_error(provider, &spec.name));
                strict = false;
                spec.parameters
            }
        }
    } else {
        spec.parameters
    };
    let mut function = Map::new();
    function.insert("name".to_owned(), Value::String(spec.name));
    function.insert("description".to_owned(), Value::String(spec.description));
    function.insert("parameters".to_owned(), parameters);
    if strict {
        function.insert("strict".to_owned(), Value::Bool(true));
    }
    function
}

pub(crate) fn render_tools(
    specs: impl Iterator<Item = ToolFunctionSpec>,
    options: &RenderOptions,
) -> RenderedTools {
    let mut not_strict = Vec::new();
    let tools = specs
        .map(|spec| {
            let function = function_fields(Provider::OpenAiChat, spec, options, &mut not_strict);
            json!({"type": "function", "function": function})
        })
        .collect();
    RenderedTools {
        tools: Value::Array(tools),
        not_strict,
    }
}

fn shape_error() -> ResponseError {
    ResponseError::new(
        Provider::OpenAiChat,
        "expected a chat completion (`choices[0].message`), an assistant message, or its `tool_calls` array",
    )
}

/// The assistant message of a chat completion, or the value itself when it is not one.
fn message_of(response: &Value) -> Result<&Value, ResponseError> {
    match response.get("choices") {
        Some(choices) => choices
            .get(0)
            .and_then(|choice| choice.get("message"))
            .ok_or_else(shape_error),
        None => Ok(response),
    }
}

pub(crate) fn parse_calls(response: &Value) -> Result<Vec<ParsedCall>, ResponseError> {
    let shape = shape_error;
    let message = message_of(response)?;
    let calls = match message {
        Value::Array(calls) => calls,
        Value::Object(fields) => match fields.get("tool_calls") {
            Some(Value::Array(calls)) if !calls.is_empty() => calls,
            tool_calls @ (Some(Value::Array(_) | Value::Null) | None) => {
                // The deprecated single `function_call` of older chat completions (beside
                // the empty `tool_calls` some compatible servers write on every message).
                if let Some(call) = fields.get("function_call").filter(|c| c.is_object()) {
                    return Ok(vec![read_call(
                        generated_id(0),
                        call.get("name").and_then(Value::as_str),
                        call.get("arguments"),
                    )]);
                }
                let empty_calls = matches!(tool_calls, Some(Value::Array(_)));
                if empty_calls || fields.contains_key("role") || fields.contains_key("content") {
                    return Ok(Vec::new());
                }
                return Err(shape());
            }
            Some(_) => return Err(shape()),
        },
        _ => return Err(shape()),
    };
    Ok(calls
        .iter()
        .enumerate()
        .map(|(index, call)| {
            let id = call_id(call.get("id"), index);
            let function = call.get("function");
            read_call(
                id,
                function.and_then(|f| f.get("name")).and_then(Value::as_str),
                function.and_then(|f| f.get("arguments")),
            )
        })
        .collect())
}

/// Where a result's image is in its `tool` message: in the user message after the results.
fn placed_below(image: &Image) -> String {
    image.placeholder_noting("shown in the user message after these results")
}

pub(crate) fn render_results(replies: &[Reply<'_>]) -> Vec<Value> {
    let mut messages: Vec<Value> = replies
        .iter()
        .map(|reply| {
            let content = match reply.body.images().next() {
                Some(_) => reply.body.text_placing_images(placed_below),
                None => reply.body.text_marking_errors(),
            };
            json!({
                "role": "tool",
                "tool_call_id": reply.id,
                "content": content,
            })
        })
        .collect();
    // A `tool` message's content is text only (its content parts may only be `text`), and
    // the API wants every call of a turn answered by the `tool` messages right after it; so
    // the results' images follow, in one user message (`image_url` parts, each result's
    // introduced by a text part naming its call), which the API takes after tool messages.
    let intro = |reply: &Reply<'_>| {
        let text = format!(
            "The images of the result of call {} ({}):",
            reply.id, reply.name
        );
        json!({"type": "text", "text": text})
    };
    let parts = images_after_results(replies, intro, image_part);
    if !parts.is_empty() {
        messages.push(json!({"role": "user", "content": parts}));
    }
    messages
}

pub(crate) fn render_user(text: &str) -> Value {
    json!({"role": "user", "content": text})
}

/// A user message of `image_url` parts (data URLs) and the text, as a `text` part after
/// them.
pub(crate) fn render_user_with_images(text: &str, images: &[Image]) -> Value {
    let text_part = (!text.is_empty()).then(|| json!({"type": "text", "text": text}));
    let parts: Vec<Value> = images.iter().map(image_part).chain(text_part).collect();
    json!({"role": "user", "content": parts})
}

/// An image as a Chat Completions content part:
/// `{"type": "image_url", "image_url": {"url": "data:image/png;base64,…"}}`.
fn image_part(image: &Image) -> Value {
    json!({"type": "image_url", "image_url": {"url": image.data_url()}})
}

pub(crate) fn render_assistant(text: Option<&str>, calls: &[AssistantCall<'_>]) -> Vec<Value> {
    let mut message = Map::new();
    message.insert("role".to_owned(), json!("assistant"));
    let content = match text {
        Some(text) => json!(text),
        // `content` may be null only beside `tool_calls`.
        None if calls.is_empty() => json!(""),
        None => Value::Null,
    };
    message.insert("content".to_owned(), content);
    if !calls.is_empty() {
        let tool_calls: Vec<Value> = calls
            .iter()
            .map(|call| {
                json!({
                    "id": call.id,
                    "type": "function",
                    "function": {"name": echoed_name(call.name), "arguments": call.written_arguments()},
                })
            })
            .collect();
        message.insert("tool_calls".to_owned(), Value::Array(tool_calls));
    }
    vec![Value::Object(message)]
}

pub(crate) fn parse_text(response: &Value) -> Result<Option<String>, ResponseError> {
    let message = match message_of(response)? {
        Value::Object(message) => message,
        // The `tool_calls` array alone.
        Value::Array(_) => return Ok(None),
        _ => return Err(shape_error()),
    };
    let text = match message.get("content") {
        Some(Value::String(text)) => Some(text.clone()),
        // Content parts, as some compatible servers write them.
        Some(Value::Array(parts)) => Some(
            parts
                .iter()
                .filter_map(|part| part.get("text").and_then(Value::as_str))
                .collect(),
        ),
        _ => None,
    };
    let refusal = || {
        message
            .get("refusal")
            .and_then(Value::as_str)
            .map(str::to_owned)
    };
    Ok(text.filter(|t| !t.is_empty()).or_else(refusal))
}

/// Whether an assistant message (or its `tool_calls` array) carries calls.
fn has_calls(message: &Value) -> bool {
    match message {
        Value::Array(calls) => !calls.is_empty(),
        _ => {
            message
                .get("tool_calls")
                .and_then(Value::as_array)
                .is_some_and(|calls| !calls.is_empty())
                || message.get("function_call").is_some_and(Value::is_object)
        }
    }
}

/// A `finish_reason` of OpenAI's vocabulary (which compatible servers share).
pub(crate) fn finish_reason(reason: &str) -> StopReason {
    match reason {
        "stop" => StopReason::EndTurn,
        "tool_calls" | "function_call" => StopReason::ToolCalls,
        "length" => StopReason::MaxTokens,
        "content_filter" => StopReason::ContentFilter,
        other => StopReason::Other(other.to_owned()),
    }
}

pub(crate) fn parse_stop_reason(response: &Value) -> Result<StopReason, ResponseError> {
    let message = message_of(response)?;
    // A refusal (the model declined to answer) ends the answer as a filter would.
    if message.get("refusal").is_some_and(Value::is_string) {
        return Ok(StopReason::ContentFilter);
    }
    let has_calls = has_calls(message);
    let reason = response
        .get("choices")
        .and_then(|choices| choices.get(0))
        .and_then(|choice| choice.get("finish_reason"))
        .and_then(Value::as_str);
    Ok(match reason {
        Some(reason) => finish_reason(reason).with_calls(has_calls),
        None => StopReason::inferred(has_calls),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn completion(message: Value, finish_reason: &str) -> Value {
        json!({"choices": [{"index": 0, "message": message, "finish_reason": finish_reason}]})
    }

    #[test]
    fn a_legacy_function_call_beside_an_empty_tool_calls_array_is_read() {
        // Compatible servers may write `tool_calls: []` on every message: the call was
        // dropped, while the stop reason counted it.
        let message = json!({"role": "assistant", "content": null, "tool_calls": [],
            "function_call": {"name": "add", "arguments": "{\"a\": 1}"}});
        let response = completion(message.clone(), "function_call");
        for read in [&response, &message] {
            let calls = parse_calls(read).unwrap();
            assert_eq!(calls.len(), 1, "{read}");
            let call = calls[0].as_ref().unwrap();
            assert_eq!(
                (call.name.as_str(), call.arguments.as_value()),
                ("add", &json!({"a": 1}))
            );
            assert_eq!(parse_stop_reason(read).unwrap(), StopReason::ToolCalls);
        }
        // An empty `tool_calls` alone is still no call, not a malformed message.
        assert!(parse_calls(&json!({"tool_calls": []})).unwrap().is_empty());
        // Calls in `tool_calls` are the calls.
        let both = json!({"role": "assistant", "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "b", "arguments": "{}"}}],
            "function_call": {"name": "add", "arguments": "{}"}});
        let calls = parse_calls(&both).unwrap();
        assert_eq!(calls.len(), 1);
        assert_eq!(calls[0].as_ref().unwrap().name, "b");
    }

    #[test]
    fn echoes_calls_with_arguments_as_a_json_string() {
        let arguments = json!({"path": "a.txt", "limit": 2});
        let call = AssistantCall::new("call_1", "read", &arguments);
        assert_eq!(
            render_assistant(None, &[call]),
            vec![json!({"role": "assistant", "content": null, "tool_calls": [
                {"id": "call_1", "type": "function",
                 "function": {"name": "read", "arguments": "{\"path\":\"a.txt\",\"limit\":2}"}}
            ]})]
        );
        assert_eq!(
            render_assistant(Some("Done."), &[]),
            vec![json!({"role": "assistant", "content": "Done."})]
        );
        assert_eq!(
            render_assistant(None, &[]),
            vec![json!({"role": "assistant", "content": ""})]
        );
        // What is echoed reads back as the same call.
        let echoed = &render_assistant(None, &[call])[0];
        let read = parse_calls(echoed).unwrap();
        assert_eq!(read[0].as_ref().unwrap().arguments.as_value(), &arguments);
        assert_eq!(render_user("Hi"), json!({"role": "user", "content": "Hi"}));
    }

    #[test]
    fn reads_text_and_refusals() {
        let text = |message| parse_text(&completion(message, "stop")).unwrap();
        assert_eq!(
            text(json!({"role": "assistant", "content": "5"})).as_deref(),
            Some("5")
        );
        assert_eq!(
            text(json!({"role": "assistant", "content": null, "tool_calls": []})),
            None
        );
        assert_eq!(
            text(json!({"role": "assistant", "content": null, "refusal": "I can't."})).as_deref(),
            Some("I can't.")
        );
        assert_eq!(
            parse_stop_reason(&completion(
                json!({"role": "assistant", "content": null, "refusal": "I can't."}),
                "stop"
            ))
            .unwrap(),
            StopReason::ContentFilter
        );
        assert_eq!(
            parse_stop_reason(&completion(
                json!({"role": "assistant", "content": "5", "refusal": null}),
                "stop"
            ))
            .unwrap(),
            StopReason::EndTurn
        );
        assert_eq!(
            text(json!({"role": "assistant", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]}))
                .as_deref(),
            Some("ab")
        );
        assert!(parse_text(&json!({"choices": []})).is_err());
        assert!(parse_text(&json!("text")).is_err());
    }

    #[test]
    fn reads_stop_reasons() {
        let calls = json!({"role": "assistant", "content": null,
            "tool_calls": [{"id": "c", "type": "function", "function": {"name": "t", "arguments": "{}"}}]});
        let plain = json!({"role": "assistant", "content": "x"});
        let stop = |message: &Value, reason| {
            parse_stop_reason(&completion(message.clone(), reason)).unwrap()
        };
        assert_eq!(stop(&plain, "stop"), StopReason::EndTurn);
        assert_eq!(stop(&calls, "tool_calls"), StopReason::ToolCalls);
        // Servers that say `stop` beside calls.
        assert_eq!(stop(&calls, "stop"), StopReason::ToolCalls);
        assert_eq!(stop(&plain, "length"), StopReason::MaxTokens);
        assert_eq!(stop(&plain, "content_filter"), StopReason::ContentFilter);
        assert_eq!(stop(&plain, "eos"), StopReason::Other("eos".into()));
        assert_eq!(parse_stop_reason(&calls).unwrap(), StopReason::ToolCalls);
        assert_eq!(parse_stop_reason(&plain).unwrap(), StopReason::EndTurn);
        assert!(parse_stop_reason(&json!({"choices": {}})).is_err());
    }

    #[test]
    fn a_rejected_call_goes_back_with_the_arguments_it_was_sent_with() {
        let response = completion(
            json!({"role": "assistant", "content": null, "tool_calls": [
                {"id": "call_1", "type": "function",
                 "function": {"name": "add", "arguments": "{\"a\": 2, \"b\""}}]}),
            "tool_calls",
        );
        let calls = parse_calls(&response).unwrap();
        let rejected = calls[0].as_ref().unwrap_err();
        let empty = json!({});
        let call = AssistantCall {
            as_written: rejected.as_written.as_deref(),
            ..AssistantCall::new(&rejected.id, &rejected.name, &empty)
        };
        let echoed = render_assistant(None, &[call]);
        assert_eq!(
            echoed[0]["tool_calls"][0]["function"]["arguments"],
            "{\"a\": 2, \"b\""
        );
        assert_eq!(
            Provider::OpenAiChat.parse_turn_entries(&response).unwrap(),
            None
        );
    }
}
