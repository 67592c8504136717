//! Gemini streamed (`streamGenerateContent?alt=sse`): each `data:` is a whole
//! `GenerateContentResponse` whose `candidates[0].content.parts` are the parts new in it;
//! the `finishReason` comes on the last candidate chunk, `usageMetadata` grows from chunk to
//! chunk (the last is the answer's), `promptFeedback` says when the prompt was blocked. No
//! event ends the stream: it ends with the body.

use serde_json::{Map, Value, json};

use super::{Assembler, Failed, OnDelta, first_of, quoted};
use crate::model::StreamDelta;

/// What a text part is, when it is text alone that the next text of its kind may join.
#[derive(Clone, Copy, PartialEq, Eq)]
enum TextKind {
    /// Text of the answer.
    Answer,
    /// A thought (`"thought": true`).
    Thought,
}

/// The kind of `part` when it is a bare text part: a `text` string, maybe marked as a
/// thought, and nothing else. A part with a `thoughtSignature` (or anything more) is no
/// bare text: it stays whole, so that the signature goes back on the part it came with.
fn text_kind(part: &Map<String, Value>) -> Option<TextKind> {
    part.get("text")?.as_str()?;
    if part.keys().any(|key| key != "text" && key != "thought") {
        return None;
    }
    Some(match part.get("thought") {
        Some(Value::Bool(true)) => TextKind::Thought,
        _ => TextKind::Answer,
    })
}

/// The answer so far.
#[derive(Default)]
pub(crate) struct GeminiAssembler {
    /// Whether any chunk arrived.
    began: bool,
    /// Whether any chunk carried a candidate (a blocked prompt has none).
    has_candidate: bool,
    /// The candidate's parts, bare text pieces of one kind joined.
    parts: Vec<Value>,
    /// How many `functionCall` parts came so far.
    calls: usize,
    /// The candidate's `finishReason`, once given.
    finish_reason: Option<Value>,
    /// The last `usageMetadata`: the counts of the whole answer by the end.
    usage: Option<Value>,
    /// The last `promptFeedback`.
    prompt_feedback: Option<Value>,
    /// The last `modelVersion`.
    model_version: Option<Value>,
    /// The last `responseId`.
    response_id: Option<Value>,
}

impl GeminiAssembler {
    /// Adds `part` to the answer's parts, reporting its text or call.
    fn part(&mut self, part: &Value, on_delta: OnDelta<'_>) -> Result<(), Failed> {
        let Value::Object(fields) = part else {
            return Err(Failed::Malformed(format!(
                "a chunk's part is not an object: {}",
                quoted(part)
            )));
        };
        if let Some(call) = fields.get("functionCall") {
            let text = |key: &str| call.get(key).and_then(Value::as_str).map(str::to_owned);
            // The parser reads absent arguments as none: `{}` in JSON text.
            let fragment = match call.get("args") {
                None | Some(Value::Null) => "{}".to_owned(),
                Some(args) => args.to_string(),
            };
            on_delta(StreamDelta::ToolCallArguments {
                index: self.calls,
                id: text("id"),
                name: text("name"),
                fragment,
            });
            self.calls += 1;
        }
        let piece = fields
            .get("text")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let thought = fields.get("thought") == Some(&Value::Bool(true));
        if !thought && !piece.is_empty() {
            on_delta(StreamDelta::Text(piece.to_owned()));
        }
        let Some(kind) = text_kind(fields) else {
            self.parts.push(part.clone());
            return Ok(());
        };
        // An empty bare piece adds nothing, and Gemini refuses an empty text part sent back.
        if piece.is_empty() {
            return Ok(());
        }
        let last = self.parts.last_mut().and_then(Value::as_object_mut);
        if let Some(last) = last.filter(|last| text_kind(last) == Some(kind))
            && let Some(Value::String(text)) = last.get_mut("text")
        {
            text.push_str(piece);
        } else {
            self.parts.push(part.clone());
        }
        Ok(())
    }

    /// Reads the first candidate of a chunk (index 0): its new parts and its finish reason.
    fn candidate(&mut self, candidate: &Value, on_delta: OnDelta<'_>) -> Result<(), Failed> {
        if !candidate.is_object() {
            return Err(Failed::Malformed(format!(
                "a chunk's candidate is not an object: {}",
                quoted(candidate)
            )));
        }
        self.has_candidate = true;
        if let Some(reason) = candidate.get("finishReason").filter(|r| !r.is_null()) {
            self.finish_reason = Some(reason.clone());
        }
        // A candidate without content, or a content without parts, adds nothing (a filtered
        // answer, a chunk that only finishes).
        let parts = match candidate.get("content") {
            None | Some(Value::Null) => return Ok(()),
            Some(Value::Object(content)) => content.get("parts"),
            Some(other) => {
                return Err(Failed::Malformed(format!(
                    "a chunk's candidate has a content that is not an object: {}",
                    quoted(other)
                )));
            }
        };
        match parts {
            None | Some(Value::Null) => Ok(()),
            Some(Value::Array(parts)) => parts
                .iter()
                .try_for_each(|part| self.part(part, &mut *on_delta)),
            Some(other) => Err(Failed::Malformed(format!(
                "a chunk's `content.parts` is not an array: {}",
                quoted(other)
            ))),
        }
    }
}

impl Assembler for GeminiAssembler {
    fn event(
        &mut self,
        _name: Option<&str>,
        data: Value,
        on_delta: OnDelta<'_>,
    ) -> Result<(), Failed> {
        if !data.is_object() {
            return Err(Failed::Malformed(format!(
                "a chunk is not a JSON object: {}",
                quoted(&data)
            )));
        }
        self.began = true;
        for (key, slot) in [
            ("usageMetadata", &mut self.usage),
            ("promptFeedback", &mut self.prompt_feedback),
            ("modelVersion", &mut self.model_version),
            ("responseId", &mut self.response_id),
        ] {
            if let Some(value) = data.get(key).filter(|value| !value.is_null()) {
                *slot = Some(value.clone());
            }
        }
        match data.get("candidates") {
            None | Some(Value::Null) => Ok(()),
            Some(Value::Array(candidates)) => match first_of(candidates) {
                None => Ok(()),
                Some(candidate) => self.candidate(candidate, on_delta),
            },
            Some(other) => Err(Failed::Malformed(format!(
                "a chunk's `candidates` is not an array: {}",
                quoted(other)
            ))),
        }
    }

    fn finish(self) -> Result<Option<Value>, Failed> {
        if !self.began {
            return Ok(None);
        }
        let mut answer = Map::new();
        if self.has_candidate {
            // Cut off before its `finishReason`, the answer may be cut too: no answer.
            if self.finish_reason.is_none() {
                return Err(Failed::Malformed(
                    "the stream ended before the answer's `finishReason`".to_owned(),
                ));
            }
            let mut candidate = Map::new();
            candidate.insert(
                "content".to_owned(),
                json!({"role": "model", "parts": self.parts}),
            );
            if let Some(reason) = self.finish_reason {
                candidate.insert("finishReason".to_owned(), reason);
            }
            candidate.insert("index".to_owned(), json!(0));
            answer.insert("candidates".to_owned(), json!([candidate]));
        } else if self.prompt_feedback.is_none() {
            // Without either, the answer would read as an empty one that ended well.
            return Err(Failed::Malformed(
                "no chunk of the stream carried a candidate or `promptFeedback`".to_owned(),
            ));
        }
        // Without candidates, `promptFeedback` is the blocked prompt's answer as Gemini
        // gives it unstreamed.
        for (key, value) in [
            ("promptFeedback", self.prompt_feedback),
            ("usageMetadata", self.usage),
            ("modelVersion", self.model_version),
            ("responseId", self.response_id),
        ] {
            if let Some(value) = value {
                answer.insert(key.to_owned(), value);
            }
        }
        Ok(Some(Value::Object(answer)))
    }
}
