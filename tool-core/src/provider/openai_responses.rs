//! OpenAI Responses: `tools: [{"type": "function", name, description, parameters, strict}]`;
//! calls as `{"type": "function_call", call_id, name, arguments}` output items; results as
//! `{"type": "function_call_output", call_id, output}` input items.

use serde_json::{Value, json};

use super::calls::{ParsedCall, generated_id, read_call};
use super::openai_chat::function_fields;
use super::reply::Reply;
use super::{Provider, RenderError, RenderOptions, ResponseError};
use crate::ToolFunctionSpec;

pub(crate) fn render_tools(
    specs: impl Iterator<Item = ToolFunctionSpec>,
    options: &RenderOptions,
) -> Result<Value, RenderError> {
    let tools = specs
        .map(|spec| {
            let mut tool = serde_json::Map::new();
            tool.insert("type".to_owned(), json!("function"));
            tool.extend(function_fields(Provider::OpenAiResponses, spec, options)?);
            Ok(Value::Object(tool))
        })
        .collect::<Result<Vec<_>, RenderError>>()?;
    Ok(Value::Array(tools))
}

pub(crate) fn parse_calls(response: &Value) -> Result<Vec<ParsedCall>, ResponseError> {
    let output = match response {
        Value::Array(items) => items,
        _ => response
            .get("output")
            .and_then(Value::as_array)
            .ok_or_else(|| {
                ResponseError::new(
                    Provider::OpenAiResponses,
                    "expected a response with an `output` array, or the array itself",
                )
            })?,
    };
    Ok(output
        .iter()
        .filter(|item| item.get("type").and_then(Value::as_str) == Some("function_call"))
        .enumerate()
        .map(|(index, item)| {
            // Results refer to `call_id`; `id` is the output item's own id.
            let id = item
                .get("call_id")
                .or_else(|| item.get("id"))
                .and_then(Value::as_str)
                .map_or_else(|| generated_id(index), str::to_owned);
            read_call(
                id,
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
            json!({
                "type": "function_call_output",
                "call_id": reply.id,
                "output": reply.body.text_marking_errors(),
            })
        })
        .collect()
}
