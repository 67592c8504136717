//! Text-based backends (llama.cpp, Candle and other local models): tools as `{name,
//! description, parameters}` (a declared `returns` schema appended to the description as
//! `Returns: {schema}`), calls read from the model's text, results as `<tool_response>`
//! blocks.
//!
//! Calls are read from, in order of preference: `<tool_call>{…}</tool_call>` blocks (an
//! unclosed last block counts), fenced JSON blocks, or the whole text as a bare JSON object
//! or array. Each call is `{"name": …, "arguments": {…}}` (`parameters` is read as
//! `arguments`, and the arguments may be a JSON string); broken JSON is
//! [repaired](super::repair_json) where that is safe.

use serde_json::{Map, Value, json};

use super::answer::ParsedAnswer;
use super::calls::{ParsedCall, RejectedCall, call_id, generated_id, read_call};
use super::repair::{repair_json, strip_fence};
use super::reply::Reply;
use super::turns::{AssistantCall, StopReason};
use super::{Provider, ResponseError};
use crate::tool::arguments::json_type_name;
use crate::tool::nesting::check_depth;
use crate::{Image, ToolError, ToolFunctionSpec};

const OPEN_TAG: &str = "<tool_call>";
const CLOSE_TAG: &str = "</tool_call>";

pub(crate) fn render_tools(specs: impl Iterator<Item = ToolFunctionSpec>) -> Value {
    Value::Array(
        specs
            .map(|spec| {
                let mut description = spec.description;
                if let Some(returns) = &spec.returns {
                    description.push_str("\n\nReturns: ");
                    description.push_str(&returns.to_string());
                }
                json!({
                    "name": spec.name,
                    "description": description,
                    "parameters": spec.parameters,
                })
            })
            .collect(),
    )
}

/// A system prompt that declares rendered text tools (the array
/// [`Provider::Text`]`.render_tools` gives in `tools`) and tells the model how to call them: one
/// `<tool_call>` block per call, the format [`parse_text_calls`] reads.
///
/// ```
/// use toolsmith::provider::tools_prompt;
/// use serde_json::json;
///
/// let prompt = tools_prompt(&json!([{"name": "add", "description": "Add.", "parameters": {"type": "object"}}]));
/// assert!(prompt.contains("<tools>\n{\"name\":\"add\""));
/// assert!(prompt.contains("<tool_call>\n{\"name\": <tool name>, \"arguments\": <arguments object>}\n</tool_call>"));
/// ```
pub fn tools_prompt(tools: &Value) -> String {
    let mut prompt = String::from(
        "You can call tools. They are described as JSON between <tools> and </tools>:\n<tools>\n",
    );
    for tool in tools.as_array().into_iter().flatten() {
        // Printing recurses once per level: a tool nested too deep is named, not printed.
        match check_depth(tool) {
            Ok(()) => prompt.push_str(&tool.to_string()),
            Err(too_deep) => {
                let name = tool
                    .get("name")
                    .and_then(Value::as_str)
                    .unwrap_or("(unnamed)");
                prompt.push_str(&format!("(the tool {name:?} is {too_deep})"));
            }
        }
        prompt.push('\n');
    }
    prompt.push_str(
        "</tools>\nTo call tools, write one block per call, each a JSON object with the tool's name and its arguments:\n\
         <tool_call>\n{\"name\": <tool name>, \"arguments\": <arguments object>}\n</tool_call>\n\
         Each result comes back in a <tool_response> block.",
    );
    prompt
}

/// The completion's text: a JSON string, `{"content": …}`, or a chat or text completion.
fn completion_text(response: &Value) -> Result<&str, ResponseError> {
    let text = match response {
        Value::String(text) => Some(text.as_str()),
        Value::Object(fields) => fields.get("content").and_then(Value::as_str).or_else(|| {
            let choice = response.get("choices")?.get(0)?;
            choice
                .get("message")
                .and_then(|m| m.get("content"))
                .or_else(|| choice.get("text"))
                .and_then(Value::as_str)
        }),
        _ => None,
    };
    text.ok_or_else(|| {
        ResponseError::new(
            Provider::Text,
            "expected the completion text: a JSON string, `{\"content\": …}`, or a chat completion whose message content is text",
        )
    })
}

pub(crate) fn parse_response(response: &Value) -> Result<Vec<ParsedCall>, ResponseError> {
    Ok(TextReading::of(completion_text(response)?).calls)
}

/// Reads the tool calls a text-based model wrote: `<tool_call>{…}</tool_call>` blocks (an
/// unclosed last block counts), or else fenced JSON blocks, or else the whole text as a bare
/// JSON object or array. Each call is `{"name": …, "arguments": {…}}` (`parameters` is read
/// as `arguments`, arguments may be a JSON string, and OpenAI's `{"function": {…}}` shape is
/// read too); broken JSON is [repaired](super::repair_json) where that is safe. Outside
/// `<tool_call>` tags, an object with a `name` is a call only when it has `arguments` (or
/// `parameters`) or nothing else but an id: JSON data that has a `name` field is an answer.
/// A tag written about rather than as a call (in inline code, `` `<tool_call>` ``, or
/// unclosed and followed by words) is the answer's text. Calls without an id get one
/// starting with
/// [`GENERATED_CALL_ID_PREFIX`](super::GENERATED_CALL_ID_PREFIX).
///
/// A text with no call (a plain answer) gives none; a block that looks like a call but cannot
/// be read is a [`RejectedCall`] quoting the parse error.
///
/// ```
/// use toolsmith::provider::parse_text_calls;
/// use serde_json::json;
///
/// let text = "Let me add those.\n<tool_call>\n{\"name\": \"add\", \"arguments\": {\"a\": 2, \"b\": 3}}\n</tool_call>";
/// let calls = parse_text_calls(text);
/// let call = calls[0].as_ref().unwrap();
/// assert_eq!((call.name.as_str(), call.arguments.as_value()), ("add", &json!({"a": 2, "b": 3})));
/// assert!(parse_text_calls("The answer is 5.").is_empty());
/// ```
pub fn parse_text_calls(text: &str) -> Vec<ParsedCall> {
    TextReading::of(text).calls
}

/// One reading of a text model's completion: its calls ([`parse_text_calls`]) and the spans
/// of the text they were read from. The answer's calls, text and stop reason all come from
/// it, so that a completion is read once.
struct TextReading<'a> {
    text: &'a str,
    calls: Vec<ParsedCall>,
    /// Where the calls were written (`start..end`, in order): the `<tool_call>` blocks, the
    /// fenced blocks that held calls, or the whole text written as bare JSON. The rest is
    /// the answer's text.
    call_spans: Vec<(usize, usize)>,
}

impl<'a> TextReading<'a> {
    fn of(text: &'a str) -> Self {
        let mut calls = Vec::new();
        let tagged = tagged_parts(text);
        if !tagged.is_empty() {
            for part in &tagged {
                read_block(strip_fence(part.content.trim()), true, &mut calls);
            }
            let call_spans = tagged
                .iter()
                .map(|part| (part.start, part.resume))
                .collect();
            return Self {
                text,
                calls,
                call_spans,
            };
        }
        let mut call_spans = Vec::new();
        for part in &fenced_parts(text) {
            let before = calls.len();
            read_block(part.content.trim(), false, &mut calls);
            if calls.len() > before {
                call_spans.push((part.start, part.resume));
            }
        }
        if calls.is_empty() {
            let trimmed = text.trim();
            if trimmed.starts_with('{') || trimmed.starts_with('[') {
                read_block(trimmed, false, &mut calls);
            }
            if !calls.is_empty() {
                call_spans.push((0, text.len()));
            }
        }
        Self {
            text,
            calls,
            call_spans,
        }
    }

    /// The text around the calls: outside the `<tool_call>` blocks (an unclosed last block
    /// runs to the end), the fenced blocks that held calls, or the bare JSON that was the
    /// calls. A call is the answer's call, not its text too (echoed back, it would be
    /// written twice).
    fn prose(&self) -> String {
        let mut kept = String::new();
        let mut from = 0;
        for &(start, resume) in &self.call_spans {
            kept.push_str(&self.text[from..start]);
            from = resume;
        }
        kept.push_str(&self.text[from..]);
        kept.trim().to_owned()
    }

    /// Why the model stopped: the `finish_reason` of an OpenAI-style `response`, made
    /// [`StopReason::ToolCalls`] by the calls read; inferred from them where it names none.
    fn stop_reason(&self, response: &Value) -> StopReason {
        let has_calls = !self.calls.is_empty();
        let reason = response
            .get("choices")
            .and_then(|choices| choices.get(0))
            .and_then(|choice| choice.get("finish_reason"))
            .and_then(Value::as_str);
        match reason {
            Some(reason) => super::openai_chat::finish_reason(reason).with_calls(has_calls),
            None => StopReason::inferred(has_calls),
        }
    }
}

/// A `<tool_call>` block (or a fenced one) of a text: where its open tag starts, its
/// content, and where the text after it resumes (past its close tag, if it has one).
struct TaggedPart<'a> {
    start: usize,
    content: &'a str,
    resume: usize,
}

/// The `<tool_call>` blocks of `text`, in order; an unclosed last block runs to the end.
fn tagged_parts(text: &str) -> Vec<TaggedPart<'_>> {
    let mut parts = Vec::new();
    let mut from = 0;
    let mut may_look_past = true;
    while let Some(found) = text[from..].find(OPEN_TAG) {
        let start = from + found;
        let content_start = start + OPEN_TAG.len();
        let after = &text[content_start..];
        let markers = [CLOSE_TAG, OPEN_TAG];
        let end = block_end(
            after,
            &markers,
            |block| strip_fence(block.trim()),
            &mut may_look_past,
        );
        let closed = after[end..].starts_with(CLOSE_TAG);
        if is_mention(&text[..start], &after[..end], closed) {
            from = content_start;
            continue;
        }
        parts.push(TaggedPart {
            start,
            content: &after[..end],
            resume: content_start + end + if closed { CLOSE_TAG.len() } else { 0 },
        });
        from = parts.last().map_or(text.len(), |part| part.resume);
    }
    parts
}

/// Whether an open tag, with the text `before` it and the `content` of its block, is written
/// about rather than written as a call: in inline code (`` `<tool_call>` ``), or unclosed
/// with words after it ("I call tools with <tool_call> tags."), where a call, even one cut
/// short, starts with JSON or a fence. An empty unclosed block (a call cut off at its tag)
/// is a call.
fn is_mention(before: &str, content: &str, closed: bool) -> bool {
    let in_inline_code = before.ends_with('`') && content.starts_with('`');
    let content = content.trim_start();
    let words_after = !closed && !content.is_empty() && !content.starts_with(['{', '[', '`']);
    in_inline_code || words_after
}

/// The Markdown code fences of `text`, in order: where each starts, its content (after the
/// opening fence's line), and where the text after it resumes (past its closing fence, if
/// it has one).
fn fenced_parts(text: &str) -> Vec<TaggedPart<'_>> {
    let mut parts = Vec::new();
    let mut from = 0;
    let mut may_look_past = true;
    while let Some(found) = text[from..].find("```") {
        let start = from + found;
        let Some(newline) = text[start + 3..].find('\n') else {
            break;
        };
        let content_start = start + 3 + newline + 1;
        let body = &text[content_start..];
        let end = block_end(body, &["```"], str::trim, &mut may_look_past);
        let resume = (content_start + end + 3).min(text.len());
        parts.push(TaggedPart {
            start,
            content: &body[..end],
            resume,
        });
        from = resume;
    }
    parts
}

/// Where the block that `body` starts with ends: at the first of `markers`, unless that one
/// stands inside a JSON string of the block (a call that writes about fences or tags), the
/// block up to it is not JSON, and the block up to the first marker outside the strings is;
/// `json_of` is the JSON a block holds. Looking past a marker scans the rest of the text,
/// so once a look finds no JSON, `may_look_past` turns false and later blocks end at their
/// first marker: a text is read in linear time, whatever it holds.
fn block_end(
    body: &str,
    markers: &[&str],
    json_of: impl Fn(&str) -> &str,
    may_look_past: &mut bool,
) -> usize {
    let first = first_marker(body, markers);
    if !*may_look_past
        || first == body.len()
        || !StringScan::default().ends_in_string(&body[..first])
        || repair_json(json_of(&body[..first])).is_ok()
    {
        return first;
    }
    let outside = StringScan::default().first_marker_outside(body, markers);
    if repair_json(json_of(&body[..outside])).is_ok() {
        return outside;
    }
    *may_look_past = false;
    first
}

/// Where the first of `markers` starts in `body`, or its end, found in one scan that stops
/// there. Looking for each marker in turn would scan the rest of the text for a marker it
/// does not hold once per block: quadratic in a text of open tags that never close.
fn first_marker(body: &str, markers: &[&str]) -> usize {
    let starts_a_marker = |c: char| markers.iter().any(|marker| marker.starts_with(c));
    let mut from = 0;
    while let Some(found) = body[from..].find(starts_a_marker) {
        let at = from + found;
        if markers.iter().any(|marker| body[at..].starts_with(marker)) {
            return at;
        }
        from = at + body[at..].chars().next().map_or(1, char::len_utf8);
    }
    body.len()
}

/// A scan of text for double-quoted JSON strings. A string left open ends with its line, as
/// JSON strings hold no line break.
#[derive(Default)]
struct StringScan {
    in_string: bool,
    escaped: bool,
}

impl StringScan {
    fn step(&mut self, byte: u8) {
        if !self.in_string {
            self.in_string = byte == b'"';
        } else if self.escaped {
            self.escaped = false;
        } else {
            match byte {
                b'\\' => self.escaped = true,
                b'"' | b'\n' => self.in_string = false,
                _ => {}
            }
        }
    }

    /// Whether `text` ends inside a string.
    fn ends_in_string(mut self, text: &str) -> bool {
        text.bytes().for_each(|byte| self.step(byte));
        self.in_string
    }

    /// Where the first of `markers` starts in `body` outside strings, or its end.
    fn first_marker_outside(mut self, body: &str, markers: &[&str]) -> usize {
        let bytes = body.as_bytes();
        for (at, &byte) in bytes.iter().enumerate() {
            let at_marker = !self.in_string
                && markers
                    .iter()
                    .any(|marker| bytes[at..].starts_with(marker.as_bytes()));
            if at_marker {
                return at;
            }
            self.step(byte);
        }
        body.len()
    }
}

/// Reads one block's call(s) into `calls`. A block that is not JSON counts as a broken call
/// when it was explicitly tagged as one or [looks like a broken call](looks_like_broken_call);
/// otherwise it is ignored (prose, a code sample).
fn read_block(block: &str, tagged: bool, calls: &mut Vec<ParsedCall>) {
    let value = match repair_json(block) {
        Ok(value) => value,
        Err(err) => {
            if tagged || looks_like_broken_call(block) {
                let index = calls.len();
                let name = name_in(block).unwrap_or_default();
                let reason = if err.too_deep {
                    format!("the tool call is {err}; write its arguments with less nesting")
                } else {
                    format!(
                        "the tool call is not valid JSON ({err}); write it as {{\"name\": \"<tool>\", \"arguments\": {{…}}}}"
                    )
                };
                let error = if name.is_empty() {
                    ToolError::invalid_arguments("(unnamed)", reason)
                } else {
                    ToolError::invalid_arguments(name.clone(), reason)
                };
                calls.push(Err(RejectedCall {
                    id: generated_id(index),
                    name,
                    error,
                    as_written: arguments_in(block).map(Into::into),
                }));
            }
            return;
        }
    };
    let items = match value {
        // A block tagged as a call that lists none is answered too: the model meant one.
        Value::Array(items) if items.is_empty() && tagged => vec![Value::Array(items)],
        Value::Array(items) => items,
        other => vec![other],
    };
    for item in items {
        let Value::Object(fields) = item else {
            // A block tagged as a call is one: it is answered, not dropped.
            if tagged {
                let reason = format!(
                    "the tool call is not a JSON object but {}; write it as {{\"name\": \"<tool>\", \"arguments\": {{…}}}}",
                    json_type_name(&item)
                );
                calls.push(Err(RejectedCall {
                    id: generated_id(calls.len()),
                    name: String::new(),
                    error: ToolError::invalid_arguments("(unnamed)", reason),
                    as_written: None,
                }));
            }
            continue;
        };
        let fields = unwrap_function(fields);
        if !tagged && !looks_like_call(&fields) {
            continue;
        }
        let index = calls.len();
        let id = call_id(fields.get("id"), index);
        let arguments = fields.get("arguments").or_else(|| fields.get("parameters"));
        let call = read_call(id, fields.get("name").and_then(Value::as_str), arguments);
        // Arguments written as JSON that is no object (`[1, 2]`) are text the model wrote
        // too: kept, as a string's are.
        calls.push(call.map_err(|rejected| {
            RejectedCall {
                as_written: rejected
                    .as_written
                    .or_else(|| arguments.map(|value| value.to_string().into())),
                ..rejected
            }
        }));
    }
}

/// Whether an object written outside `<tool_call>` tags is a call rather than data that has
/// a `name` (an answer written as JSON, a code sample): it names a tool and carries its
/// arguments, or holds nothing but the name (and an id).
fn looks_like_call(fields: &Map<String, Value>) -> bool {
    fields.contains_key("name")
        && (fields.contains_key("arguments")
            || fields.contains_key("parameters")
            || fields
                .keys()
                .all(|key| matches!(key.as_str(), "name" | "id" | "type")))
}

/// Whether a block outside `<tool_call>` tags that is not JSON was meant as a call: it
/// starts as JSON does and names both a tool and its arguments, as [`looks_like_call`] asks
/// of a block that is JSON. A code sample that mentions a `"name"` (a Python dict, a
/// JavaScript object, broken JSON data) is the answer's, not a call to answer.
fn looks_like_broken_call(block: &str) -> bool {
    block.trim_start().starts_with(['{', '['])
        && block.contains("\"name\"")
        && (block.contains("\"arguments\"") || block.contains("\"parameters\""))
}

/// `{"function": {"name", "arguments"}, "id"}` (OpenAI's shape, as some models write it) as
/// `{"name", "arguments", "id"}`.
fn unwrap_function(mut fields: Map<String, Value>) -> Map<String, Value> {
    if !fields.contains_key("name")
        && let Some(Value::Object(function)) = fields.shift_remove("function")
    {
        let mut flat = function;
        if let Some(id) = fields.shift_remove("id") {
            flat.insert("id".to_owned(), id);
        }
        return flat;
    }
    fields
}

/// The arguments in a call too broken to parse, if they can be found: the text after
/// `"arguments":` (or `"parameters":`), without the brace that would close the call.
fn arguments_in(block: &str) -> Option<String> {
    let key = ["arguments", "parameters"]
        .into_iter()
        .find(|key| block.contains(&format!("\"{key}\"")))?;
    let after = value_after(block, key)?.trim_end();
    let arguments = after.strip_suffix('}').map_or(after, str::trim_end);
    (!arguments.is_empty()).then(|| arguments.to_owned())
}

/// The tool name in a call too broken to parse, if it can be found: `"name": "…"`.
fn name_in(block: &str) -> Option<String> {
    let after = value_after(block, "name")?.strip_prefix('"')?;
    let name = &after[..after.find('"')?];
    crate::check_name(name).is_ok().then(|| name.to_owned())
}

/// The text after the first `"key":` in `block`, its leading spaces left out.
fn value_after<'a>(block: &'a str, key: &str) -> Option<&'a str> {
    let quoted = format!("\"{key}\"");
    let after = &block[block.find(&quoted)? + quoted.len()..];
    Some(after.trim_start().strip_prefix(':')?.trim_start())
}

pub(crate) fn render_results(replies: &[Reply<'_>]) -> Vec<Value> {
    if replies.is_empty() {
        return Vec::new();
    }
    let blocks: Vec<String> = replies
        .iter()
        .map(|reply| {
            let mut response = Map::new();
            response.insert("id".to_owned(), json!(reply.id));
            response.insert("name".to_owned(), json!(reply.name));
            let content = match reply.body.json_value() {
                Some(value) => value,
                None => Value::String(reply.body.text_placing_images(not_carried)),
            };
            response.insert("content".to_owned(), content);
            if reply.body.is_error() {
                response.insert("is_error".to_owned(), Value::Bool(true));
            }
            format!(
                "<tool_response>\n{}\n</tool_response>",
                Value::Object(response)
            )
        })
        .collect();
    vec![json!({"role": "user", "content": blocks.join("\n")})]
}

pub(crate) fn render_user(text: &str) -> Value {
    json!({"role": "user", "content": text})
}

/// A user message with images: the format carries text only, so each image is a line
/// saying it was left out, after the text.
pub(crate) fn render_user_with_images(text: &str, images: &[Image]) -> Value {
    let lines: Vec<String> = (!text.is_empty())
        .then(|| text.to_owned())
        .into_iter()
        .chain(images.iter().map(not_carried))
        .collect();
    json!({"role": "user", "content": lines.join("\n")})
}

/// An image where the text format has only text: a placeholder saying it is not shown,
/// so that neither the model nor a reader of the request takes it as dropped by mistake.
fn not_carried(image: &Image) -> String {
    image.placeholder_noting("not shown: this model's text format carries no images")
}

pub(crate) fn render_assistant(text: Option<&str>, calls: &[AssistantCall<'_>]) -> Vec<Value> {
    // Calls written back the way the tools prompt asks for them; a call that could not be
    // read with the arguments it was written with (as JSON where they are, else as text).
    let blocks = calls.iter().map(|call| {
        let arguments = match call.as_written {
            // Read within bounds: what the model wrote.
            Some(text) => crate::value_from_str(text).unwrap_or_else(|_| json!(text)),
            None => call.echoed_arguments(),
        };
        let written = json!({"name": call.name, "arguments": arguments});
        format!("{OPEN_TAG}\n{written}\n{CLOSE_TAG}")
    });
    let content: Vec<String> = text.map(str::to_owned).into_iter().chain(blocks).collect();
    vec![json!({"role": "assistant", "content": content.join("\n")})]
}

pub(crate) fn parse_text(response: &Value) -> Result<Option<String>, ResponseError> {
    Ok(Some(TextReading::of(completion_text(response)?).prose()))
}

pub(crate) fn parse_stop_reason(response: &Value) -> Result<StopReason, ResponseError> {
    Ok(TextReading::of(completion_text(response)?).stop_reason(response))
}

/// The calls, text and stop reason of `response`, from one reading of its completion.
pub(crate) fn parse_answer(response: &Value) -> Result<ParsedAnswer, ResponseError> {
    let reading = TextReading::of(completion_text(response)?);
    let text = Some(reading.prose());
    let stop_reason = reading.stop_reason(response);
    Ok(ParsedAnswer {
        calls: reading.calls,
        text,
        stop_reason,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The answer's text of a completion.
    fn prose(text: &str) -> String {
        TextReading::of(text).prose()
    }

    fn names(calls: &[ParsedCall]) -> Vec<String> {
        calls
            .iter()
            .map(|c| match c {
                Ok(r) => r.name.clone(),
                Err(r) => format!("!{}", r.name),
            })
            .collect()
    }

    #[test]
    fn reads_every_text_form() {
        let tagged = "<tool_call>{\"name\": \"a\", \"arguments\": {}}</tool_call>\n<tool_call>\n{\"name\": \"b\", \"arguments\": \"{\\\"x\\\": 1}\"}";
        assert_eq!(names(&parse_text_calls(tagged)), ["a", "b"]);
        let fenced = "Sure:\n```json\n[{\"name\": \"a\", \"arguments\": {}}, {\"name\": \"b\", \"parameters\": {\"x\": 1}}]\n```";
        let calls = parse_text_calls(fenced);
        assert_eq!(names(&calls), ["a", "b"]);
        assert_eq!(
            calls[1].as_ref().unwrap().arguments.as_value(),
            &json!({"x": 1})
        );
        assert_eq!(calls[1].as_ref().unwrap().id, "toolsmith-call-1");
        assert_eq!(
            names(&parse_text_calls("{\"name\": \"c\", \"arguments\": {}}")),
            ["c"]
        );
        assert_eq!(
            names(&parse_text_calls(
                "{\"function\": {\"name\": \"d\", \"arguments\": \"{}\"}, \"id\": \"x\"}"
            )),
            ["d"]
        );
        assert!(parse_text_calls("```rust\nfn main() {}\n```").is_empty());
        assert!(parse_text_calls("{\"answer\": 42}").is_empty());
    }

    #[test]
    fn an_untagged_object_that_only_has_a_name_among_its_data_is_no_call() {
        // A plain answer written as JSON, and a code sample: data with a `name`.
        for text in [
            "{\"name\": \"Ada\", \"age\": 36}",
            "Here it is:\n```json\n{\"name\": \"my-app\", \"version\": \"1.0.0\"}\n```",
            "[{\"name\": \"Ada\", \"born\": 1815}, {\"name\": \"Alan\", \"born\": 1912}]",
        ] {
            assert!(parse_text_calls(text).is_empty(), "{text}");
            assert_eq!(
                parse_stop_reason(&json!(text)).unwrap(),
                StopReason::EndTurn,
                "{text}"
            );
        }
        // Calls still read: with arguments (and more), or a name alone.
        assert_eq!(names(&parse_text_calls("{\"name\": \"now\"}")), ["now"]);
        assert_eq!(
            names(&parse_text_calls(
                "{\"name\": \"add\", \"arguments\": {\"a\": 1}, \"reason\": \"sum\"}"
            )),
            ["add"]
        );
        assert_eq!(
            names(&parse_text_calls(
                "<tool_call>{\"name\": \"Ada\", \"age\": 36}</tool_call>"
            )),
            ["Ada"]
        );
    }

    #[test]
    fn an_untagged_code_sample_that_is_no_json_is_no_call_though_it_has_a_name() {
        // An answer's code: not JSON, and no call (it names no tool's arguments). It was a
        // rejected call, so the answer lost its code and the turn did not end.
        for text in [
            "Send it like this:\n```python\npayload = {\"name\": \"Ada\", \"age\": 36}\nrequests.post(url, json=payload)\n```",
            "```js\nconst user = {\"name\": \"Ada\"};\n```",
            "```json\n{\"name\": \"Ada\", \"age\": }\n```",
            "{\"name\": \"Ada\", \"age\": }",
        ] {
            assert!(parse_text_calls(text).is_empty(), "{text}");
            assert_eq!(prose(text), text);
            assert_eq!(
                parse_stop_reason(&json!(text)).unwrap(),
                StopReason::EndTurn,
                "{text}"
            );
        }
        // A broken call, fenced or bare, is still a rejected call.
        for text in [
            "```json\n{\"name\": \"add\", \"arguments\": {\"a\": }}\n```",
            "```\n[{\"name\": \"add\", \"parameters\": {\"a\": 1}} {}]\n```",
            "{\"function\": {\"name\": \"add\", \"arguments\": {\"a\": }}}",
        ] {
            assert_eq!(names(&parse_text_calls(text)), ["!add"], "{text}");
        }
    }

    #[test]
    fn a_tag_mentioned_in_prose_is_no_call() {
        // In inline code, or unclosed and followed by words: the answer talks about the
        // format. Each was a rejected call (and hid the fenced call after it).
        for text in [
            "Put `<tool_call>` and `</tool_call>` around the JSON.",
            "I can call tools with <tool_call> tags when needed.",
            "The tag is `<tool_call>`.",
        ] {
            assert!(parse_text_calls(text).is_empty(), "{text}");
            assert_eq!(prose(text), text);
        }
        let text = "Write `<tool_call>` tags, or a fence:\n```json\n{\"name\": \"a\", \"arguments\": {}}\n```";
        assert_eq!(names(&parse_text_calls(text)), ["a"]);
        let text =
            "Using `<tool_call>`:\n<tool_call>{\"name\": \"b\", \"arguments\": {}}</tool_call>";
        assert_eq!(names(&parse_text_calls(text)), ["b"]);
        assert_eq!(prose(text), "Using `<tool_call>`:");
        // A call cut short, or not JSON inside closed tags, is still a (rejected) call.
        assert_eq!(
            names(&parse_text_calls("<tool_call>{\"name\": \"c\", \"argu")),
            ["!c"]
        );
        assert_eq!(
            names(&parse_text_calls("<tool_call>get_time()</tool_call>")),
            ["!"]
        );
        assert_eq!(names(&parse_text_calls("Calling.<tool_call>")), ["!"]);
    }

    #[test]
    fn a_broken_block_is_rejected_alone() {
        let text = "<tool_call>{\"name\": \"a\", \"arguments\": {\"x\": }}</tool_call><tool_call>{'name': 'b', arguments: {x: 1,},}</tool_call>";
        let calls = parse_text_calls(text);
        assert_eq!(names(&calls), ["!a", "b"]);
        let rejected = calls[0].as_ref().unwrap_err();
        assert!(
            rejected
                .error
                .to_string()
                .contains("expected value at line 1"),
            "{}",
            rejected.error
        );
        assert_eq!(
            calls[1].as_ref().unwrap().arguments.as_value(),
            &json!({"x": 1})
        );
    }

    #[test]
    fn a_fence_or_tag_inside_a_json_string_does_not_end_the_block() {
        let code = "```rust\nfn main() {}\n```";
        let call = json!({"name": "write", "arguments": {"content": code}});
        let fenced = format!("Writing it:\n```json\n{call}\n```\nDone.");
        let calls = parse_text_calls(&fenced);
        assert_eq!(names(&calls), ["write"]);
        assert_eq!(
            calls[0].as_ref().unwrap().arguments.as_value()["content"],
            code
        );
        let fenced_in_tag = format!("<tool_call>\n```json\n{call}\n```\n</tool_call>");
        assert_eq!(names(&parse_text_calls(&fenced_in_tag)), ["write"]);

        let tags = "Wrap each call in <tool_call> and </tool_call>.";
        let call = json!({"name": "write", "arguments": {"content": tags}});
        let tagged = format!(
            "Sure.\n<tool_call>\n{call}\n</tool_call>\n<tool_call>{{\"name\": \"b\", \"arguments\": {{}}}}</tool_call>"
        );
        let calls = parse_text_calls(&tagged);
        assert_eq!(names(&calls), ["write", "b"]);
        assert_eq!(
            calls[0].as_ref().unwrap().arguments.as_value()["content"],
            tags
        );
        assert_eq!(prose(&tagged), "Sure.");
        // A string cut off before its tag still ends at the tag, as before.
        let cut = "<tool_call>{\"name\": \"a\", \"arguments\": {\"x\": \"cut</tool_call><tool_call>{\"name\": \"b\", \"arguments\": {}}</tool_call>";
        assert_eq!(names(&parse_text_calls(cut)), ["!a", "b"]);
        let cut = "```json\n{\"name\": \"a\", \"arguments\": {\"x\": \"cut```\n\n```json\n{\"name\": \"b\", \"arguments\": {}}\n```";
        assert_eq!(names(&parse_text_calls(cut)), ["!a", "b"]);
    }

    #[test]
    fn open_tags_that_never_close_are_read_in_linear_time() {
        // Each block looked for its close tag through the rest of the text: 40,000 open
        // tags (440 KB) took 85 s.
        let text = format!("Sure.{}", OPEN_TAG.repeat(40_000));
        let started = cpu_time::ThreadTime::now();
        let calls = parse_text_calls(&text);
        assert!(
            started.elapsed() < std::time::Duration::from_secs(5),
            "{:?}",
            started.elapsed()
        );
        assert_eq!(calls.len(), 40_000);
        assert!(calls.iter().all(Result::is_err));
        assert_eq!(prose(&text), "Sure.");
        // Markers are still found where they are, after text of any kind.
        assert_eq!(first_marker("é<b<tool_call>", &[CLOSE_TAG, OPEN_TAG]), 4);
        assert_eq!(first_marker("ab</tool_call>", &[CLOSE_TAG, OPEN_TAG]), 2);
        assert_eq!(first_marker("ab<tool", &[CLOSE_TAG, OPEN_TAG]), 7);
    }

    #[test]
    fn a_tagged_call_that_is_no_object_is_rejected_not_dropped() {
        for block in [
            "\"add\"",
            "42",
            "[{\"name\": \"a\", \"arguments\": {}}, \"b\"]",
            "[]",
        ] {
            let calls = parse_text_calls(&format!("<tool_call>{block}</tool_call>"));
            let rejected = calls.last().unwrap().as_ref().unwrap_err();
            assert_eq!(rejected.name, "", "{block}");
            assert!(
                rejected
                    .error
                    .to_string()
                    .contains("the tool call is not a JSON object"),
                "{block}: {}",
                rejected.error
            );
            assert_eq!(
                parse_stop_reason(&json!(format!("<tool_call>{block}</tool_call>"))).unwrap(),
                StopReason::ToolCalls
            );
        }
        // Untagged JSON that is no call is still prose.
        assert!(parse_text_calls("[1, 2]").is_empty());
        assert!(parse_text_calls("[]").is_empty());
    }

    #[test]
    fn calls_read_from_fences_or_bare_json_are_not_the_answer_s_text() {
        let call = "{\"name\": \"add\", \"arguments\": {\"a\": 1}}";
        let fenced = format!("Let me add.\n```json\n{call}\n```\nThen I answer.");
        assert_eq!(names(&parse_text_calls(&fenced)), ["add"]);
        assert_eq!(prose(&fenced), "Let me add.\n\nThen I answer.");
        assert_eq!(parse_text(&json!(call)).unwrap().as_deref(), Some(""));
        assert_eq!(Provider::Text.parse_text(&json!(call)).unwrap(), None);
        // A fenced block that holds no call stays, beside one that does.
        let data = "```json\n{\"name\": \"Ada\", \"age\": 36}\n```";
        let both = format!("{data}\nNow:\n```\n{call}\n```");
        assert_eq!(names(&parse_text_calls(&both)), ["add"]);
        assert_eq!(prose(&both), format!("{data}\nNow:"));
        // Without calls, the text is all prose, fences and JSON included.
        for text in [data, "{\"answer\": 42}", "```json\n{\"a\": 1}"] {
            assert_eq!(prose(text), text);
        }
        // Echoed back, the call is written once.
        let text = prose(&fenced);
        let arguments = json!({"a": 1});
        let echoed = render_assistant(Some(&text), &[AssistantCall::new("c", "add", &arguments)]);
        assert_eq!(
            echoed[0]["content"]
                .as_str()
                .map(|c| c.matches("add").count()),
            Some(2)
        );
    }

    #[test]
    fn echoes_calls_as_tool_call_blocks() {
        let arguments = json!({"a": 2});
        let call = AssistantCall::new("toolsmith-call-0", "add", &arguments);
        let turn = render_assistant(Some("Adding."), &[call]);
        let written =
            "Adding.\n<tool_call>\n{\"name\":\"add\",\"arguments\":{\"a\":2}}\n</tool_call>";
        assert_eq!(turn, vec![json!({"role": "assistant", "content": written})]);
        assert_eq!(names(&parse_text_calls(written)), ["add"]);
        assert_eq!(parse_text(&turn[0]).unwrap().as_deref(), Some("Adding."));
        assert_eq!(render_user("Hi"), json!({"role": "user", "content": "Hi"}));
    }

    #[test]
    fn reads_text_and_stop_reasons() {
        let text = "Sure.\n<tool_call>{\"name\": \"a\", \"arguments\": {}}</tool_call>\nThen <tool_call>{\"name\": \"b\"";
        assert_eq!(prose(text), "Sure.\n\nThen");
        assert_eq!(
            parse_stop_reason(&json!(text)).unwrap(),
            StopReason::ToolCalls
        );
        let cut = json!({"choices": [{"message": {"content": "The"}, "finish_reason": "length"}]});
        assert_eq!(parse_stop_reason(&cut).unwrap(), StopReason::MaxTokens);
        assert_eq!(
            parse_stop_reason(&json!({"content": "5"})).unwrap(),
            StopReason::EndTurn
        );
        assert!(parse_text(&json!([1])).is_err());
    }

    #[test]
    fn a_rejected_call_keeps_and_echoes_the_arguments_it_was_written_with() {
        let echo = |rejected: &RejectedCall| {
            let empty = json!({});
            let call = AssistantCall {
                as_written: rejected.as_written.as_deref(),
                ..AssistantCall::new(&rejected.id, &rejected.name, &empty)
            };
            render_assistant(None, &[call])[0]["content"].clone()
        };
        // A block too broken to read: its arguments found in the text.
        for (block, arguments) in [
            (
                "{\"name\": \"add\", \"arguments\": {\"a\": 2, \"b\"",
                "{\"a\": 2, \"b\"",
            ),
            (
                "{\"name\": \"add\", \"parameters\": {\"a\": 2, \"b\"}}",
                "{\"a\": 2, \"b\"}",
            ),
        ] {
            let calls = parse_text_calls(&format!("<tool_call>\n{block}\n</tool_call>"));
            let rejected = calls[0].as_ref().unwrap_err();
            assert_eq!(rejected.as_written.as_deref(), Some(arguments));
            assert_eq!(
                echo(rejected),
                json!(format!(
                    "<tool_call>\n{}\n</tool_call>",
                    json!({"name": "add", "arguments": arguments})
                ))
            );
        }
        // Read, but not an object: the string's text, or the JSON written.
        for (arguments, written) in [("\"2 and 3\"", "2 and 3"), ("[2, 3]", "[2,3]")] {
            let block =
                format!("<tool_call>{{\"name\": \"add\", \"arguments\": {arguments}}}</tool_call>");
            let calls = parse_text_calls(&block);
            let rejected = calls[0].as_ref().unwrap_err();
            assert_eq!(rejected.as_written.as_deref(), Some(written));
            let echoed: Value = serde_json::from_str(
                echo(rejected)
                    .as_str()
                    .unwrap()
                    .trim_start_matches("<tool_call>\n")
                    .trim_end_matches("\n</tool_call>"),
            )
            .unwrap();
            assert_eq!(
                echoed["arguments"],
                serde_json::from_str::<Value>(arguments).unwrap()
            );
        }
        // No arguments to be found: none kept.
        let calls = parse_text_calls("<tool_call>{\"name\": \"add\", ]] 2 3</tool_call>");
        assert_eq!(calls[0].as_ref().unwrap_err().as_written, None);
    }
}
