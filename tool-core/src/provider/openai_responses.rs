//! OpenAI Responses: `tools: [{"type": "function", name, description, parameters, strict}]`
//! (`strict` always written: the API's default is `true`);
//! calls as `{"type": "function_call", call_id, name, arguments}` output items; results as
//! `{"type": "function_call_output", call_id, output}` input items. The model's earlier calls
//! are echoed as `function_call` input items; the answer's text is the `output_text` parts of
//! its `message` items, its stop reason the response's `status`.

use serde_json::{Value, json};

use super::calls::{
    ParsedCall, call_id, distinct_generated_call_ids, echoed_name, named_as_echoed, read_call,
};
use super::openai_chat::function_fields;
use super::reply::{Body, Reply};
use super::turns::{AssistantCall, StopReason};
use super::{Provider, RenderOptions, RenderedTools, ResponseError};
use crate::{ContentPart, Image, ToolFunctionSpec};

pub(crate) fn render_tools(
    specs: impl Iterator<Item = ToolFunctionSpec>,
    options: &RenderOptions,
) -> RenderedTools {
    let mut not_strict = Vec::new();
    let tools = specs
        .map(|spec| {
            let mut tool = serde_json::Map::new();
            tool.insert("type".to_owned(), json!("function"));
            tool.extend(function_fields(
                Provider::OpenAiResponses,
                spec,
                options,
                &mut not_strict,
            ));
            // The Responses API makes a function strict unless told otherwise (Chat
            // Completions does the opposite): a schema not rewritten for strict mode would be
            // refused.
            tool.entry("strict").or_insert(Value::Bool(false));
            Value::Object(tool)
        })
        .collect();
    RenderedTools {
        tools: Value::Array(tools),
        not_strict,
    }
}

/// The `output` items of a response, or the array itself.
fn output_of(response: &Value) -> Result<&Vec<Value>, ResponseError> {
    match response {
        Value::Array(items) => Ok(items),
        _ => response
            .get("output")
            .and_then(Value::as_array)
            .ok_or_else(|| {
                ResponseError::new(
                    Provider::OpenAiResponses,
                    "expected a response with an `output` array, or the array itself",
                )
            }),
    }
}

fn is_type(item: &Value, kind: &str) -> bool {
    item.get("type").and_then(Value::as_str) == Some(kind)
}

/// The output items, each `function_call` with the `call_id` its result is sent with (the
/// id [`parse_calls`] gives the call): a compatible server may leave `call_id` out, and the
/// item would go back without one (its `id` does not go back, see the harness's stateless
/// turns) while its output named the id the call was given. A call without a name goes
/// back under [`UNNAMED_CALL_NAME`](super::UNNAMED_CALL_NAME), as it is rendered, and its
/// arguments as text ([`arguments_as_text`]).
pub(crate) fn parse_turn_entries(response: &Value) -> Result<Option<Vec<Value>>, ResponseError> {
    let output = output_of(response)?;
    if output.is_empty() {
        return Ok(None);
    }
    let mut entries = output.clone();
    let mut ids: Vec<String> = entries
        .iter()
        .filter(|item| is_type(item, "function_call"))
        .enumerate()
        .map(|(index, item)| function_call_id(item, index))
        .collect();
    distinct_generated_call_ids(&mut ids.iter_mut().collect::<Vec<_>>());
    let calls = entries
        .iter_mut()
        .filter(|item| is_type(item, "function_call"));
    for (item, id) in calls.zip(ids) {
        if item.get("call_id").and_then(Value::as_str) != Some(id.as_str()) {
            item["call_id"] = Value::String(id);
        }
        named_as_echoed(item, "name");
        arguments_as_text(item);
    }
    Ok(Some(entries))
}

/// `item`'s `arguments` as the API takes them back, JSON text: a compatible server may
/// write an object (read as the call's arguments, and sent as their text) or none (`{}`).
/// Text, even text that is not JSON, stays as the model wrote it.
fn arguments_as_text(item: &mut Value) {
    let text = match item.get("arguments") {
        Some(Value::String(_)) => return,
        Some(Value::Null) | None => "{}".to_owned(),
        Some(other) => other.to_string(),
    };
    item["arguments"] = Value::String(text);
}

/// The id of the `index`-th `function_call` item: its `call_id`, which results refer to, or
/// else its own `id`, or else a generated one ([`call_id`]: an empty id counts as none).
/// The item goes back with the id (`parse_turn_entries`), as its results name it.
fn function_call_id(item: &Value, index: usize) -> String {
    let named = |key: &str| {
        item.get(key)
            .filter(|id| id.as_str().is_some_and(|id| !id.is_empty()))
    };
    call_id(named("call_id").or_else(|| named("id")), index)
}

pub(crate) fn parse_calls(response: &Value) -> Result<Vec<ParsedCall>, ResponseError> {
    let output = output_of(response)?;
    Ok(output
        .iter()
        .filter(|item| is_type(item, "function_call"))
        .enumerate()
        .map(|(index, item)| {
            read_call(
                function_call_id(item, index),
                item.get("name").and_then(Value::as_str),
                item.get("arguments"),
            )
        })
        .collect())
}

pub(crate) fn render_results(replies: &[Reply<'_>]) -> Vec<Value> {
    replies
        .iter()
        .map(|reply| {
            let output = match &reply.body {
                // `output` is "a string or a list of output content": `input_text`,
                // `input_image` (with `image_url` a data URL) and `input_file` items.
                Body::Parts(parts) => Body::parts_content(parts, part_item),
                body => Value::String(body.text_marking_errors()),
            };
            json!({
                "type": "function_call_output",
                "call_id": reply.id,
                "output": output,
            })
        })
        .collect()
}

pub(crate) fn render_user(text: &str) -> Value {
    json!({"role": "user", "content": text})
}

/// A user input message of `input_image` items (data URLs) and the text, as an
/// `input_text` item after them.
pub(crate) fn render_user_with_images(text: &str, images: &[Image]) -> Value {
    let content: Vec<Value> = images
        .iter()
        .map(image_item)
        .chain(text_item(text))
        .collect();
    json!({"role": "user", "content": content})
}

fn image_item(image: &Image) -> Value {
    json!({"type": "input_image", "image_url": image.data_url()})
}

/// Text as an `input_text` item; none for empty text.
fn text_item(text: &str) -> Option<Value> {
    (!text.is_empty()).then(|| json!({"type": "input_text", "text": text}))
}

fn part_item(part: &ContentPart) -> Option<Value> {
    match part {
        ContentPart::Image(image) => Some(image_item(image)),
        other => text_item(&other.to_text()),
    }
}

pub(crate) fn render_assistant(text: Option<&str>, calls: &[AssistantCall<'_>]) -> Vec<Value> {
    let message = text.map(|text| json!({"role": "assistant", "content": text}));
    message
        .into_iter()
        .chain(calls.iter().map(|call| {
            json!({
                "type": "function_call",
                "call_id": call.id,
                "name": echoed_name(call.name),
                "arguments": call.written_arguments(),
            })
        }))
        .collect()
}

pub(crate) fn parse_text(response: &Value) -> Result<Option<String>, ResponseError> {
    let pieces: Vec<&str> = output_of(response)?
        .iter()
        .filter(|item| is_type(item, "message"))
        .filter_map(|item| item.get("content").and_then(Value::as_array))
        .flatten()
        .filter_map(|part| match part.get("type").and_then(Value::as_str) {
            Some("output_text") => part.get("text").and_then(Value::as_str),
            Some("refusal") => part.get("refusal").and_then(Value::as_str),
            _ => None,
        })
        .collect();
    Ok((!pieces.is_empty()).then(|| pieces.concat()))
}

pub(crate) fn parse_stop_reason(response: &Value) -> Result<StopReason, ResponseError> {
    let has_calls = output_of(response)?
        .iter()
        .any(|item| is_type(item, "function_call"));
    // A refusal (the model declined to answer) ends the answer as a filter would.
    let refused = output_of(response)?
        .iter()
        .filter(|item| is_type(item, "message"))
        .filter_map(|item| item.get("content").and_then(Value::as_array))
        .flatten()
        .any(|part| is_type(part, "refusal"));
    if refused {
        return Ok(StopReason::ContentFilter);
    }
    let Some(status) = response.get("status").and_then(Value::as_str) else {
        return Ok(StopReason::inferred(has_calls));
    };
    let reason = match status {
        "completed" => StopReason::EndTurn,
        "incomplete" => {
            let why = response
                .get("incomplete_details")
                .and_then(|details| details.get("reason"))
                .and_then(Value::as_str);
            match why {
                Some("max_output_tokens") => StopReason::MaxTokens,
                Some("content_filter") => StopReason::ContentFilter,
                Some(other) => StopReason::Other(other.to_owned()),
                None => StopReason::Other(status.to_owned()),
            }
        }
        other => StopReason::Other(other.to_owned()),
    };
    Ok(reason.with_calls(has_calls))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tools_not_rendered_strict_say_so() {
        use crate::{Args, Tool, ToolDeclarations, ToolDefinition, scheme};
        let tool = |name: &str| {
            ToolDefinition::new(
                name,
                "A tool.",
                Args::new(scheme::object().optional("x", scheme::integer()).build()),
            )
        };
        let declarations = ToolDeclarations {
            shed: None,
            tools: vec![
                Tool::SingleCommand(tool("loose")),
                Tool::SingleCommand(
                    tool("tight").with_returns(Args::new(scheme::object().build())),
                ),
            ],
        };
        let tools = Provider::OpenAiResponses
            .render_tools(&declarations, &RenderOptions::default())
            .unwrap()
            .tools;
        assert_eq!(tools[0]["strict"], false);
        // Not rewritten: `x` stays optional and not nullable.
        assert_eq!(
            tools[0]["parameters"]["properties"]["x"],
            json!({"type": "integer"})
        );
        assert_eq!(tools[1]["strict"], true);
        assert_eq!(tools[1]["parameters"]["required"], json!(["x"]));
    }

    #[test]
    fn echoes_calls_as_function_call_items() {
        let arguments = json!({"a": 2});
        let call = AssistantCall::new("call_1", "add", &arguments);
        let items = render_assistant(Some("Adding."), &[call]);
        assert_eq!(
            items,
            vec![
                json!({"role": "assistant", "content": "Adding."}),
                json!({"type": "function_call", "call_id": "call_1", "name": "add", "arguments": "{\"a\":2}"}),
            ]
        );
        assert_eq!(
            parse_calls(&Value::Array(items)).unwrap()[0]
                .as_ref()
                .unwrap()
                .id,
            "call_1"
        );
        assert!(render_assistant(None, &[]).is_empty());
        assert_eq!(render_user("Hi"), json!({"role": "user", "content": "Hi"}));
    }

    #[test]
    fn reads_text_and_stop_reasons() {
        let response = json!({"status": "completed", "output": [
            {"type": "reasoning", "id": "rs_1", "summary": []},
            {"type": "message", "role": "assistant", "content": [
                {"type": "output_text", "text": "2 + 3 = ", "annotations": []},
                {"type": "output_text", "text": "5", "annotations": []}]}
        ]});
        assert_eq!(parse_text(&response).unwrap().as_deref(), Some("2 + 3 = 5"));
        assert_eq!(parse_stop_reason(&response).unwrap(), StopReason::EndTurn);

        let calls = json!({"status": "completed", "output": [
            {"type": "function_call", "call_id": "c", "name": "t", "arguments": "{}"}]});
        assert_eq!(parse_text(&calls).unwrap(), None);
        assert_eq!(parse_stop_reason(&calls).unwrap(), StopReason::ToolCalls);

        let refused = json!({"status": "completed", "output": [{"type": "message", "content": [
            {"type": "refusal", "refusal": "No."}]}]});
        assert_eq!(parse_text(&refused).unwrap().as_deref(), Some("No."));
        assert_eq!(
            parse_stop_reason(&refused).unwrap(),
            StopReason::ContentFilter
        );

        let cut = |reason: &str| {
            parse_stop_reason(&json!({"status": "incomplete", "output": [],
                "incomplete_details": {"reason": reason}}))
            .unwrap()
        };
        assert_eq!(cut("max_output_tokens"), StopReason::MaxTokens);
        assert_eq!(cut("content_filter"), StopReason::ContentFilter);
        assert_eq!(
            parse_stop_reason(&json!({"status": "failed", "output": []})).unwrap(),
            StopReason::Other("failed".into())
        );
        assert!(parse_text(&json!({"status": "completed"})).is_err());
    }

    #[test]
    fn the_turn_goes_back_as_its_output_items() {
        let output = json!([
            {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "gAAA"},
            {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "add",
             "arguments": "{\"a\": 2, \"b\"", "status": "completed"}]);
        let response = json!({"status": "completed", "output": output});
        assert_eq!(
            parse_turn_entries(&response).unwrap(),
            Some(output.as_array().unwrap().clone())
        );
        assert_eq!(parse_turn_entries(&json!({"output": []})).unwrap(), None);
        assert!(parse_turn_entries(&json!({"status": "completed"})).is_err());
        // Its rejected call, rendered rather than echoed, keeps the text it was sent with.
        let calls = parse_calls(&response).unwrap();
        let rejected = calls[0].as_ref().unwrap_err();
        let empty = json!({});
        let call = AssistantCall {
            as_written: rejected.as_written.as_deref(),
            ..AssistantCall::new(&rejected.id, &rejected.name, &empty)
        };
        assert_eq!(
            render_assistant(None, &[call])[0]["arguments"],
            "{\"a\": 2, \"b\""
        );
    }
}
