//! Anthropic Messages: `tools: [{name, description, input_schema, strict}]` (no slot for a
//! result schema); calls as `tool_use` content blocks; results as `tool_result` blocks (with
//! `is_error`) in one user message. The model's earlier calls are echoed as `tool_use` blocks
//! of an assistant message; the answer's text is its `text` blocks, its stop reason
//! `stop_reason`.
//!
//! Strict tools follow Anthropic's documented request-wide limits, checked here: a tool that
//! would break one is declared non-strict (so the request is not refused), and reported
//! naming the limit.

use serde_json::{Map, Value, json};

use super::calls::{
    ParsedCall, call_id, distinct_generated_call_ids, echoed_name, named_as_echoed, read_call,
};
use super::reply::{Body, Reply};
use super::strict::{SchemaError, StrictDialect, StrictSchema, transform};
use super::turns::{AssistantCall, StopReason};
use super::{Provider, RenderOptions, RenderedTools, ResponseError};
use crate::tool::names::is_name_char;
use crate::tool::stable_hash::fnv1a;
use crate::{ContentPart, Image, ToolFunctionSpec};

/// Strict tools allowed in one request.
pub(crate) const MAX_STRICT_TOOLS: usize = 20;
/// Optional parameters allowed across all strict schemas of one request.
pub(crate) const MAX_OPTIONAL_PARAMETERS: usize = 24;
/// Union-typed parameters (`anyOf`, type arrays) allowed across all strict schemas.
pub(crate) const MAX_UNION_PARAMETERS: usize = 16;

pub(crate) fn render_tools(
    specs: impl Iterator<Item = ToolFunctionSpec>,
    options: &RenderOptions,
) -> RenderedTools {
    let mut strict_tools = 0;
    let mut optional = 0;
    let mut unions = 0;
    let mut tools = Vec::new();
    let mut not_strict = Vec::new();
    for spec in specs {
        let mut input_schema = None;
        if options.is_strict(spec.returns.is_some()) {
            // A tool that cannot be strict, or that would take the request past Anthropic's
            // limits on strict tools, is declared as it is: the request still goes through.
            let converted =
                transform(StrictDialect::Anthropic, &spec.parameters).and_then(|converted| {
                    strict_limit(strict_tools, optional, unions, &converted)
                        .map_or(Ok(converted), |reason| Err(SchemaError::new("", reason)))
                });
            match converted {
                Ok(converted) => {
                    strict_tools += 1;
                    optional += converted.optional;
                    unions += converted.unions;
                    input_schema = Some(converted.schema);
                }
                Err(err) => {
                    not_strict.push(err.into_render_error(Provider::Anthropic, &spec.name));
                }
            }
        }
        let strict = input_schema.is_some();
        let mut tool = Map::new();
        tool.insert("name".to_owned(), Value::String(spec.name));
        tool.insert("description".to_owned(), Value::String(spec.description));
        tool.insert(
            "input_schema".to_owned(),
            input_schema.unwrap_or(spec.parameters),
        );
        if strict {
            tool.insert("strict".to_owned(), Value::Bool(true));
        }
        tools.push(Value::Object(tool));
    }
    RenderedTools {
        tools: Value::Array(tools),
        not_strict,
    }
}

/// The limit of Anthropic's that one more strict tool, `converted`, would break, given the
/// strict tools, optional and union-typed parameters counted so far.
fn strict_limit(
    strict_tools: usize,
    optional: usize,
    unions: usize,
    converted: &StrictSchema,
) -> Option<String> {
    if strict_tools >= MAX_STRICT_TOOLS {
        return Some(format!(
            "Anthropic allows at most {MAX_STRICT_TOOLS} strict tools in one request, and {strict_tools} are strict already"
        ));
    }
    if optional + converted.optional > MAX_OPTIONAL_PARAMETERS {
        return Some(format!(
            "Anthropic allows at most {MAX_OPTIONAL_PARAMETERS} optional parameters across the strict tools of a request; the strict tools before this one have {optional} and this one has {}",
            converted.optional
        ));
    }
    if unions + converted.unions > MAX_UNION_PARAMETERS {
        return Some(format!(
            "Anthropic allows at most {MAX_UNION_PARAMETERS} union-typed parameters across the strict tools of a request; the strict tools before this one have {unions} and this one has {}",
            converted.unions
        ));
    }
    None
}

/// The content blocks of a message, or the array itself.
fn content_of(response: &Value) -> Result<&Vec<Value>, ResponseError> {
    match response {
        Value::Array(blocks) => Ok(blocks),
        _ => response
            .get("content")
            .and_then(Value::as_array)
            .ok_or_else(|| {
                ResponseError::new(
                    Provider::Anthropic,
                    "expected a message with a `content` array of blocks, or the array itself",
                )
            }),
    }
}

fn is_type(block: &Value, kind: &str) -> bool {
    block.get("type").and_then(Value::as_str) == Some(kind)
}

pub(crate) fn parse_turn_entries(response: &Value) -> Result<Option<Vec<Value>>, ResponseError> {
    let blocks = content_of(response)?;
    // The ids its results are sent with (`render_results`), those `parse_calls` gives: an id
    // the API refuses (another server's `functions.add:0`, an empty one), none, or a
    // generated one made distinct went back as it was, and the result named a call the
    // turn did not have.
    let mut ids: Vec<String> = blocks
        .iter()
        .filter(|block| is_type(block, "tool_use"))
        .enumerate()
        .map(|(index, block)| tool_use_id(block, index))
        .collect();
    distinct_generated_call_ids(&mut ids.iter_mut().collect::<Vec<_>>());
    let mut ids = ids.into_iter();
    let content: Vec<Value> = blocks
        .iter()
        // A text block of whitespace alone (the model may write one before its calls) is
        // refused when sent back: "text content blocks must contain non-whitespace text".
        .filter(|block| {
            !(is_type(block, "text")
                && block
                    .get("text")
                    .and_then(Value::as_str)
                    .is_some_and(|text| text.trim().is_empty()))
        })
        .map(|block| {
            if !is_type(block, "tool_use") {
                return block.clone();
            }
            // One id was read for each `tool_use` block.
            let Some(id) = ids.next() else {
                return block.clone();
            };
            let sent_as = wire_id(&id);
            let mut block = block.clone();
            if block.get("id").and_then(Value::as_str) != Some(sent_as.as_ref()) {
                block["id"] = Value::String(sent_as.into_owned());
            }
            // A `tool_use` requires a name: the call goes back as it is rendered.
            named_as_echoed(&mut block, "name");
            block
        })
        .collect();
    Ok((!content.is_empty()).then(|| vec![json!({"role": "assistant", "content": content})]))
}

/// The id of a `tool_use` block, the `index`-th of its answer: as written, or a generated
/// one where it has none or an empty one (which every such call would share, so that only
/// the first would run); the turn goes back with it (`parse_turn_entries`).
fn tool_use_id(block: &Value, index: usize) -> String {
    call_id(block.get("id"), index)
}

pub(crate) fn parse_calls(response: &Value) -> Result<Vec<ParsedCall>, ResponseError> {
    let content = content_of(response)?;
    Ok(content
        .iter()
        .filter(|block| is_type(block, "tool_use"))
        .enumerate()
        .map(|(index, block)| {
            read_call(
                tool_use_id(block, index),
                block.get("name").and_then(Value::as_str),
                block.get("input"),
            )
        })
        .collect())
}

/// `id` as Anthropic takes a `tool_use` id (and the `tool_use_id` answering it): as it is
/// when it matches `^[a-zA-Z0-9_-]+$`, else each other character made `_` and a hash of
/// the whole id appended, so that ids that differ still differ. A call made by another
/// provider may have one the API refuses, and the request with it ("String should match
/// pattern"): an OpenAI-compatible server for Kimi writes `functions.add:0`, a text model
/// writes what it likes. Anthropic's own ids all match, so its turns go back unchanged.
pub(crate) fn wire_id(id: &str) -> std::borrow::Cow<'_, str> {
    if !id.is_empty() && id.chars().all(is_name_char) {
        return std::borrow::Cow::Borrowed(id);
    }
    // Stable across runs and builds, so a conversation's ids render the same on every
    // request (and its cached prefix stays the same).
    let hash = fnv1a(id.as_bytes());
    let kept: String = id
        .chars()
        .map(|c| if is_name_char(c) { c } else { '_' })
        .collect();
    std::borrow::Cow::Owned(format!("{kept}_{hash:016x}"))
}

pub(crate) fn render_results(replies: &[Reply<'_>]) -> Vec<Value> {
    if replies.is_empty() {
        return Vec::new();
    }
    let blocks: Vec<Value> = replies
        .iter()
        .map(|reply| {
            let content = match &reply.body {
                // A `tool_result`'s `content` may be an array of `text` and `image` blocks
                // (Messages API, "tool_result" content block).
                Body::Parts(parts) => Body::parts_content(parts, part_block),
                body => Value::String(body.text()),
            };
            let mut block = json!({
                "type": "tool_result",
                "tool_use_id": wire_id(reply.id),
                "content": content,
            });
            if reply.body.is_error() {
                block["is_error"] = Value::Bool(true);
            }
            block
        })
        .collect();
    vec![json!({"role": "user", "content": blocks})]
}

pub(crate) fn render_user(text: &str) -> Value {
    json!({"role": "user", "content": text})
}

/// A user message of images and text: the images first, as Anthropic's vision guide
/// advises ("Claude works best when images come before text").
pub(crate) fn render_user_with_images(text: &str, images: &[Image]) -> Value {
    let blocks: Vec<Value> = images
        .iter()
        .map(image_block)
        .chain(text_block(text))
        .collect();
    json!({"role": "user", "content": blocks})
}

/// An image as a Messages API content block:
/// `{"type": "image", "source": {"type": "base64", "media_type": …, "data": …}}`.
fn image_block(image: &Image) -> Value {
    json!({"type": "image", "source": {
        "type": "base64", "media_type": image.media_type(), "data": image.data()}})
}

/// Text as a content block; none for text of whitespace alone, which the API refuses in a
/// block ("text content blocks must contain non-whitespace text") and which says nothing.
fn text_block(text: &str) -> Option<Value> {
    (!text.trim().is_empty()).then(|| json!({"type": "text", "text": text}))
}

fn part_block(part: &ContentPart) -> Option<Value> {
    match part {
        ContentPart::Image(image) => Some(image_block(image)),
        other => text_block(&other.to_text()),
    }
}

pub(crate) fn render_assistant(text: Option<&str>, calls: &[AssistantCall<'_>]) -> Vec<Value> {
    let text_block = text.map(|text| json!({"type": "text", "text": text}));
    let blocks: Vec<Value> = text_block
        .into_iter()
        .chain(calls.iter().map(|call| {
            json!({"type": "tool_use", "id": wire_id(call.id), "name": echoed_name(call.name), "input": call.echoed_arguments()})
        }))
        .collect();
    if blocks.is_empty() {
        // Anthropic refuses an assistant message without content.
        return Vec::new();
    }
    vec![json!({"role": "assistant", "content": blocks})]
}

pub(crate) fn parse_text(response: &Value) -> Result<Option<String>, ResponseError> {
    let pieces: Vec<&str> = content_of(response)?
        .iter()
        .filter(|block| is_type(block, "text"))
        .filter_map(|block| block.get("text").and_then(Value::as_str))
        .collect();
    Ok((!pieces.is_empty()).then(|| pieces.concat()))
}

pub(crate) fn parse_stop_reason(response: &Value) -> Result<StopReason, ResponseError> {
    let has_calls = content_of(response)?
        .iter()
        .any(|block| is_type(block, "tool_use"));
    let Some(reason) = response.get("stop_reason").and_then(Value::as_str) else {
        return Ok(StopReason::inferred(has_calls));
    };
    let reason = match reason {
        "end_turn" | "stop_sequence" => StopReason::EndTurn,
        "tool_use" => StopReason::ToolCalls,
        "max_tokens" | "model_context_window_exceeded" => StopReason::MaxTokens,
        "refusal" => StopReason::ContentFilter,
        other => StopReason::Other(other.to_owned()),
    };
    Ok(reason.with_calls(has_calls))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn echoes_calls_as_tool_use_blocks() {
        let arguments = json!({"a": 2});
        let call = AssistantCall::new("toolu_1", "add", &arguments);
        let turn = render_assistant(None, &[call]);
        assert_eq!(
            turn,
            vec![json!({"role": "assistant", "content": [
                {"type": "tool_use", "id": "toolu_1", "name": "add", "input": {"a": 2}}]})]
        );
        assert_eq!(
            parse_calls(&turn[0]).unwrap()[0].as_ref().unwrap().id,
            "toolu_1"
        );
        assert!(render_assistant(None, &[]).is_empty());
        assert_eq!(
            render_assistant(Some("5"), &[]),
            vec![json!({"role": "assistant", "content": [{"type": "text", "text": "5"}]})]
        );
    }

    #[test]
    fn an_error_result_without_a_message_still_says_something() {
        use crate::{ToolCallResult, ToolError};
        // Anthropic refuses a `tool_result` with `is_error` and empty content.
        for result in [
            Ok(ToolCallResult::error("")),
            Ok(ToolCallResult::error(" \n")),
            Err(ToolError::Cancelled(String::new())),
        ] {
            let messages = Provider::Anthropic.render_results([("toolu_1", "sync", &result)]);
            let block = &messages[0]["content"][0];
            assert_eq!(block["is_error"], true);
            let content = block["content"].as_str().unwrap();
            assert!(!content.trim().is_empty(), "{result:?}");
        }
        let result = Ok(ToolCallResult::error(""));
        let messages = Provider::Anthropic.render_results([("toolu_1", "sync", &result)]);
        assert_eq!(
            messages[0]["content"][0]["content"],
            "Tool 'sync' failed: it reported an error without a message"
        );
    }

    #[test]
    fn whitespace_only_text_is_not_sent_back() {
        // Anthropic refuses a text block of whitespace alone ("text content blocks must
        // contain non-whitespace text").
        let arguments = json!({"a": 2});
        let call = AssistantCall::new("toolu_1", "add", &arguments);
        assert_eq!(
            Provider::Anthropic.render_assistant(Some("\n\n"), [call]),
            vec![json!({"role": "assistant", "content": [
                {"type": "tool_use", "id": "toolu_1", "name": "add", "input": {"a": 2}}]})]
        );
        assert!(
            Provider::Anthropic
                .render_assistant(Some(" \n"), Vec::<AssistantCall<'_>>::new())
                .is_empty()
        );
        let answer = json!({"content": [
            {"type": "thinking", "thinking": "2 + 3", "signature": "EqQB"},
            {"type": "text", "text": "\n\n"},
            {"type": "tool_use", "id": "toolu_1", "name": "add", "input": {"a": 2}}]});
        assert_eq!(
            parse_turn_entries(&answer).unwrap(),
            Some(vec![json!({"role": "assistant", "content": [
                {"type": "thinking", "thinking": "2 + 3", "signature": "EqQB"},
                {"type": "tool_use", "id": "toolu_1", "name": "add", "input": {"a": 2}}]})])
        );
        let blank = json!({"content": [{"type": "text", "text": " "}]});
        assert_eq!(parse_turn_entries(&blank).unwrap(), None);
    }

    #[test]
    fn reads_text_and_stop_reasons() {
        let message = json!({"type": "message", "role": "assistant", "content": [
            {"type": "thinking", "thinking": "hmm", "signature": "s"},
            {"type": "text", "text": "Let me add. "},
            {"type": "tool_use", "id": "toolu_1", "name": "add", "input": {}},
        ], "stop_reason": "tool_use"});
        assert_eq!(
            parse_text(&message).unwrap().as_deref(),
            Some("Let me add. ")
        );
        assert_eq!(parse_stop_reason(&message).unwrap(), StopReason::ToolCalls);
        let stop = |reason: &str| {
            parse_stop_reason(&json!({"content": [], "stop_reason": reason})).unwrap()
        };
        assert_eq!(stop("end_turn"), StopReason::EndTurn);
        assert_eq!(stop("stop_sequence"), StopReason::EndTurn);
        assert_eq!(stop("max_tokens"), StopReason::MaxTokens);
        assert_eq!(stop("refusal"), StopReason::ContentFilter);
        assert_eq!(stop("pause_turn"), StopReason::Other("pause_turn".into()));
        assert_eq!(parse_text(&json!({"content": []})).unwrap(), None);
        assert!(parse_stop_reason(&json!({"stop_reason": "end_turn"})).is_err());
    }

    #[test]
    fn a_turn_sent_back_has_the_call_ids_its_results_are_sent_with() {
        use crate::provider::CallReply;

        // An Anthropic-compatible server may write ids the API refuses, or none; the turn
        // went back with them as written while its results went with `wire_id`'s, so each
        // result named a call the turn did not have.
        let answer = json!({"content": [
            {"type": "tool_use", "id": "functions.add:0", "name": "add", "input": {}},
            {"type": "tool_use", "id": "", "name": "add", "input": {}},
            {"type": "tool_use", "name": "add", "input": {}},
            {"type": "tool_use", "id": "toolu_1", "name": "add", "input": {}}]});
        let entries = parse_turn_entries(&answer).unwrap().unwrap();
        let turn_ids: Vec<&Value> = entries[0]["content"]
            .as_array()
            .unwrap()
            .iter()
            .map(|block| &block["id"])
            .collect();
        let outcome = Ok(crate::ToolCallResult::text("5"));
        let call_ids: Vec<String> = parse_calls(&answer)
            .unwrap()
            .into_iter()
            .map(|call| call.unwrap().id)
            .collect();
        let results = Provider::Anthropic.render_results(call_ids.iter().map(|id| CallReply {
            id,
            name: "add",
            result: &outcome,
        }));
        let result_ids: Vec<&Value> = results[0]["content"]
            .as_array()
            .unwrap()
            .iter()
            .map(|block| &block["tool_use_id"])
            .collect();
        assert_eq!(turn_ids, result_ids);
        // Anthropic's own ids go back unchanged.
        assert_eq!(turn_ids[3], "toolu_1");
        assert!(turn_ids.iter().all(|id| {
            id.as_str()
                .is_some_and(|id| !id.is_empty() && id.chars().all(is_name_char))
        }));
    }

    #[test]
    fn the_turn_goes_back_as_its_content_blocks() {
        let content = json!([
            {"type": "thinking", "thinking": "2 + 3", "signature": "EqQB"},
            {"type": "redacted_thinking", "data": "EmwK"},
            {"type": "text", "text": "Adding."},
            {"type": "tool_use", "id": "toolu_1", "name": "add", "input": {"a": 2, "b": 3}}]);
        let message = json!({"role": "assistant", "content": content, "stop_reason": "tool_use"});
        assert_eq!(
            parse_turn_entries(&message).unwrap(),
            Some(vec![json!({"role": "assistant", "content": content})])
        );
        assert_eq!(parse_turn_entries(&json!({"content": []})).unwrap(), None);
        assert!(parse_turn_entries(&json!({"stop_reason": "end_turn"})).is_err());
    }
}
