//! Anthropic Messages: `tools: [{name, description, input_schema, strict}]` (no slot for a
//! result schema); calls as `tool_use` content blocks; results as `tool_result` blocks (with
//! `is_error`) in one user message.
//!
//! Strict tools follow Anthropic's documented request-wide limits, checked here so that a
//! request that would be refused fails at render time naming the tool that broke them.

use serde_json::{Map, Value, json};

use super::calls::{ParsedCall, generated_id, read_call};
use super::reply::Reply;
use super::strict::{SchemaError, StrictDialect, transform};
use super::{Provider, RenderError, RenderOptions, ResponseError};
use crate::ToolFunctionSpec;

/// Strict tools allowed in one request.
pub(crate) const MAX_STRICT_TOOLS: usize = 20;
/// Optional parameters allowed across all strict schemas of one request.
pub(crate) const MAX_OPTIONAL_PARAMETERS: usize = 24;
/// Union-typed parameters (`anyOf`, type arrays) allowed across all strict schemas.
pub(crate) const MAX_UNION_PARAMETERS: usize = 16;

pub(crate) fn render_tools(
    specs: impl Iterator<Item = ToolFunctionSpec>,
    options: &RenderOptions,
) -> Result<Value, RenderError> {
    let mut strict_tools = 0;
    let mut optional = 0;
    let mut unions = 0;
    let mut tools = Vec::new();
    for spec in specs {
        let strict = options.is_strict(spec.returns.is_some());
        let limit = |reason: String| {
            SchemaError::new("", reason).into_render_error(Provider::Anthropic, &spec.name)
        };
        let input_schema = if strict {
            let converted = transform(StrictDialect::Anthropic, &spec.parameters)
                .map_err(|err| err.into_render_error(Provider::Anthropic, &spec.name))?;
            strict_tools += 1;
            optional += converted.optional;
            unions += converted.unions;
            if strict_tools > MAX_STRICT_TOOLS {
                return Err(limit(format!(
                    "Anthropic allows at most {MAX_STRICT_TOOLS} strict tools in one request; this is strict tool number {strict_tools}"
                )));
            }
            if optional > MAX_OPTIONAL_PARAMETERS {
                return Err(limit(format!(
                    "Anthropic allows at most {MAX_OPTIONAL_PARAMETERS} optional parameters across the strict tools of a request; with this tool's {} there are {optional}",
                    converted.optional
                )));
            }
            if unions > MAX_UNION_PARAMETERS {
                return Err(limit(format!(
                    "Anthropic allows at most {MAX_UNION_PARAMETERS} union-typed parameters across the strict tools of a request; with this tool's {} there are {unions}",
                    converted.unions
                )));
            }
            converted.schema
        } else {
            spec.parameters
        };
        let mut tool = Map::new();
        tool.insert("name".to_owned(), Value::String(spec.name));
        tool.insert("description".to_owned(), Value::String(spec.description));
        tool.insert("input_schema".to_owned(), input_schema);
        if strict {
            tool.insert("strict".to_owned(), Value::Bool(true));
        }
        tools.push(Value::Object(tool));
    }
    Ok(Value::Array(tools))
}

pub(crate) fn parse_calls(response: &Value) -> Result<Vec<ParsedCall>, ResponseError> {
    let content = match response {
        Value::Array(blocks) => blocks,
        _ => response
            .get("content")
            .and_then(Value::as_array)
            .ok_or_else(|| {
                ResponseError::new(
                    Provider::Anthropic,
                    "expected a message with a `content` array of blocks, or the array itself",
                )
            })?,
    };
    Ok(content
        .iter()
        .filter(|block| block.get("type").and_then(Value::as_str) == Some("tool_use"))
        .enumerate()
        .map(|(index, block)| {
            let id = block
                .get("id")
                .and_then(Value::as_str)
                .map_or_else(|| generated_id(index), str::to_owned);
            read_call(
                id,
                block.get("name").and_then(Value::as_str),
                block.get("input"),
            )
        })
        .collect())
}

pub(crate) fn render_results(replies: &[Reply<'_>]) -> Vec<Value> {
    if replies.is_empty() {
        return Vec::new();
    }
    let blocks: Vec<Value> = replies
        .iter()
        .map(|reply| {
            let mut block = json!({
                "type": "tool_result",
                "tool_use_id": reply.id,
                "content": reply.body.text(),
            });
            if reply.body.is_error() {
                block["is_error"] = Value::Bool(true);
            }
            block
        })
        .collect();
    vec![json!({"role": "user", "content": blocks})]
}
