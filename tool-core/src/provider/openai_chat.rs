//! OpenAI Chat Completions: `tools: [{"type": "function", "function": {name, description,
//! parameters, strict}}]`; calls in `choices[0].message.tool_calls` with arguments as a JSON
//! string; results as `{"role": "tool", "tool_call_id", "content"}` messages.

use serde_json::{Map, Value, json};

use super::calls::{ParsedCall, generated_id, read_call};
use super::reply::Reply;
use super::strict::{StrictDialect, transform};
use super::{Provider, RenderError, RenderOptions, ResponseError};
use crate::ToolFunctionSpec;

/// The `{name, description, parameters, strict}` of one function, as both OpenAI APIs
/// declare it; `parameters` made strict when the tool is rendered strict.
pub(crate) fn function_fields(
    provider: Provider,
    spec: ToolFunctionSpec,
    options: &RenderOptions,
) -> Result<Map<String, Value>, RenderError> {
    let strict = options.is_strict(spec.returns.is_some());
    let parameters = if strict {
        transform(StrictDialect::OpenAi, &spec.parameters)
            .map_err(|err| err.into_render_error(provider, &spec.name))?
            .schema
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
    Ok(function)
}

pub(crate) fn render_tools(
    specs: impl Iterator<Item = ToolFunctionSpec>,
    options: &RenderOptions,
) -> Result<Value, RenderError> {
    let tools = specs
        .map(|spec| {
            let function = function_fields(Provider::OpenAiChat, spec, options)?;
            Ok(json!({"type": "function", "function": function}))
        })
        .collect::<Result<Vec<_>, RenderError>>()?;
    Ok(Value::Array(tools))
}

pub(crate) fn parse_calls(response: &Value) -> Result<Vec<ParsedCall>, ResponseError> {
    let shape = || {
        ResponseError::new(
            Provider::OpenAiChat,
            "expected a chat completion (`choices[0].message`), an assistant message, or its `tool_calls` array",
        )
    };
    let message = match response.get("choices") {
        Some(choices) => choices
            .get(0)
            .and_then(|choice| choice.get("message"))
            .ok_or_else(shape)?,
        None => response,
    };
    let calls = match message {
        Value::Array(calls) => calls,
        Value::Object(fields) => match fields.get("tool_calls") {
            Some(Value::Array(calls)) => calls,
            Some(Value::Null) | None => {
                // The deprecated single `function_call` of older chat completions.
                if let Some(call) = fields.get("function_call").filter(|c| c.is_object()) {
                    return Ok(vec![read_call(
                        generated_id(0),
                        call.get("name").and_then(Value::as_str),
                        call.get("arguments"),
                    )]);
                }
                if fields.contains_key("role") || fields.contains_key("content") {
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
            let id = call
                .get("id")
                .and_then(Value::as_str)
                .map_or_else(|| generated_id(index), str::to_owned);
            let function = call.get("function");
            read_call(
                id,
                function.and_then(|f| f.get("name")).and_then(Value::as_str),
                function.and_then(|f| f.get("arguments")),
            )
        })
        .collect())
}

pub(crate) fn render_results(replies: &[Reply<'_>]) -> Vec<Value> {
    replies
        .iter()
        .map(|reply| {
            json!({
                "role": "tool",
                "tool_call_id": reply.id,
                "content": reply.body.text_marking_errors(),
            })
        })
        .collect()
}
