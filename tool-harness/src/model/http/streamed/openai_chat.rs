//! OpenAI Chat Completions streamed (`"stream": true`, with `stream_options.include_usage`):
//! `data:` chunks whose first choice's `delta` (`index` 0) carries pieces of `content`,
//! `refusal` and `tool_calls` (each by its `index`, or by its id from servers that send no
//! index; the id and name in its first piece), the `finish_reason` on the last, the usage on
//! a chunk of its own, the answering `model` on each; `data: [DONE]` ends it. A piece that
//! opens a call (it names the tool) under an index holding a call of another id or tool
//! begins a new call: some servers send every call under index 0. What `complete` reads of
//! older or looser servers is read too: `content` written as parts, the deprecated single
//! `function_call`, arguments written as an object.

use std::collections::HashMap;

use serde_json::{Map, Value, json};

use super::{Assembler, Failed, OnDelta, first_of, quoted, text};
use crate::model::StreamDelta;

/// A call as its pieces arrive.
#[derive(Default)]
struct CallPieces {
    id: Option<String>,
    name: Option<String>,
    arguments: String,
}

/// The answer so far.
#[derive(Default)]
pub(crate) struct ChatAssembler {
    began: bool,
    content: Option<String>,
    refusal: Option<String>,
    calls: Vec<CallPieces>,
    /// The first call given each id, by id: where a piece without an `index` goes (found by
    /// a look-up, not by going through every call for every piece).
    ids: HashMap<String, usize>,
    /// The call each `index` of the stream stands for, by index: the last call begun under
    /// it.
    indexed: Vec<usize>,
    /// The deprecated single `function_call` of older servers, as its pieces arrive.
    function_call: Option<CallPieces>,
    finish_reason: Option<Value>,
    usage: Option<Value>,
    /// The `model` the chunks name (each names it; the last one given is kept).
    model: Option<Value>,
}

impl ChatAssembler {
    /// Which call a tool-call piece without an `index` belongs to (Gemini's
    /// OpenAI-compatible endpoint sends none): the call with the piece's id, a new call for
    /// an id not seen yet, else the last call (a new one when there is none).
    fn unindexed_call(&self, id: Option<&str>) -> usize {
        match id {
            Some(id) => self.ids.get(id).copied().unwrap_or(self.calls.len()),
            None => self.calls.len().saturating_sub(1),
        }
    }

    /// Which call a tool-call piece with `index` belongs to: the call the index stands for,
    /// unless the piece opens another call (it names a tool, with another id or name than
    /// that call's: a server that sends every call under one index), which begins a new
    /// call. A piece naming no tool continues the call.
    fn indexed_call(
        &mut self,
        index: usize,
        id: Option<&str>,
        name: Option<&str>,
    ) -> Result<usize, Failed> {
        // Indexes count up from 0, one call after another: a larger one is no call of this
        // answer (and would make room for it).
        if index > self.indexed.len() {
            return Err(Failed::Malformed(format!(
                "a tool call's piece has index {index}, after {} calls",
                self.indexed.len()
            )));
        }
        if index == self.indexed.len() {
            self.indexed.push(self.calls.len());
            return Ok(self.calls.len());
        }
        let call = &self.calls[self.indexed[index]];
        let another = |given: Option<&str>, known: Option<&str>| {
            given
                .zip(known)
                .is_some_and(|(given, known)| given != known)
        };
        if name.is_some()
            && (another(id, call.id.as_deref()) || another(name, call.name.as_deref()))
        {
            self.indexed[index] = self.calls.len();
        }
        Ok(self.indexed[index])
    }
}

impl Assembler for ChatAssembler {
    fn event(
        &mut self,
        _name: Option<&str>,
        data: Value,
        on_delta: OnDelta<'_>,
    ) -> Result<(), Failed> {
        self.began = true;
        if let Some(usage) = data.get("usage").filter(|usage| usage.is_object()) {
            self.usage = Some(usage.clone());
        }
        if let Some(model) = data.get("model").filter(|model| model.is_string()) {
            self.model = Some(model.clone());
        }
        let choices = data.get("choices").and_then(Value::as_array);
        let Some(choice) = choices.and_then(|choices| first_of(choices)) else {
            return Ok(());
        };
        if let Some(reason) = choice.get("finish_reason").filter(|r| !r.is_null()) {
            self.finish_reason = Some(reason.clone());
        }
        let Some(delta) = choice.get("delta") else {
            return Ok(());
        };
        for (key, slot) in [
            ("content", &mut self.content),
            ("refusal", &mut self.refusal),
        ] {
            // Text, or content parts (as some compatible servers write them): their text.
            let piece = match delta.get(key) {
                Some(Value::Array(parts)) => {
                    parts.iter().filter_map(|part| text(part, "text")).collect()
                }
                _ => text(delta, key).unwrap_or_default().to_owned(),
            };
            if !piece.is_empty() {
                slot.get_or_insert_with(String::new).push_str(&piece);
                on_delta(StreamDelta::Text(piece));
            }
        }
        if let Some(function) = delta.get("function_call").filter(|call| call.is_object()) {
            // The only call of its answer, its name in its first piece.
            let call = self.function_call.get_or_insert_with(CallPieces::default);
            let name = text(function, "name").map(str::to_owned);
            if call.name.is_none() {
                call.name.clone_from(&name);
            }
            let fragment = arguments_text(function);
            call.arguments.push_str(&fragment);
            on_delta(StreamDelta::ToolCallArguments {
                index: 0,
                id: None,
                name,
                fragment,
            });
        }
        let Some(pieces) = delta.get("tool_calls").and_then(Value::as_array) else {
            return Ok(());
        };
        for piece in pieces {
            // An empty id (some proxies send one on each later piece) names no call.
            let id = text(piece, "id").filter(|id| !id.is_empty());
            let function = piece.get("function").unwrap_or(&Value::Null);
            let name = text(function, "name");
            let index = match piece.get("index").filter(|index| !index.is_null()) {
                Some(index) => {
                    let index = index
                        .as_u64()
                        .and_then(|index| usize::try_from(index).ok())
                        .ok_or_else(|| {
                            Failed::Malformed(format!(
                                "a tool call's piece has an `index` that is not a count: {}",
                                quoted(index)
                            ))
                        })?;
                    self.indexed_call(index, id, name.filter(|name| !name.is_empty()))?
                }
                None => self.unindexed_call(id),
            };
            if index == self.calls.len() {
                self.calls.push(CallPieces::default());
            }
            let call = &mut self.calls[index];
            let id = id.map(str::to_owned);
            let name = name.map(str::to_owned);
            let fragment = arguments_text(function);
            if let Some(id) = &id {
                call.id = Some(id.clone());
                self.ids.entry(id.clone()).or_insert(index);
            }
            // The name comes whole, in the call's first piece.
            if call.name.is_none() {
                call.name.clone_from(&name);
            }
            call.arguments.push_str(&fragment);
            on_delta(StreamDelta::ToolCallArguments {
                index,
                id,
                name,
                fragment,
            });
        }
        Ok(())
    }

    fn finish(self) -> Result<Option<Value>, Failed> {
        if !self.began {
            return Ok(None);
        }
        // Cut off before its `finish_reason`, the answer may be cut too (a call's arguments
        // closed by repair would run on half their text): no answer.
        if self.finish_reason.is_none() {
            return Err(Failed::Malformed(
                "the stream ended before the answer's `finish_reason`".to_owned(),
            ));
        }
        let mut message = Map::new();
        message.insert("role".to_owned(), json!("assistant"));
        message.insert("content".to_owned(), json!(self.content));
        if let Some(refusal) = self.refusal {
            message.insert("refusal".to_owned(), json!(refusal));
        }
        if let Some(call) = self.function_call {
            message.insert(
                "function_call".to_owned(),
                json!({"name": call.name, "arguments": call.arguments}),
            );
        }
        if !self.calls.is_empty() {
            let calls: Vec<Value> = self
                .calls
                .into_iter()
                .map(|call| {
                    let mut written = Map::new();
                    if let Some(id) = call.id {
                        written.insert("id".to_owned(), json!(id));
                    }
                    written.insert("type".to_owned(), json!("function"));
                    written.insert(
                        "function".to_owned(),
                        json!({"name": call.name, "arguments": call.arguments}),
                    );
                    Value::Object(written)
                })
                .collect();
            message.insert("tool_calls".to_owned(), Value::Array(calls));
        }
        let mut answer = json!({"choices": [{
            "index": 0,
            "message": message,
            "finish_reason": self.finish_reason,
        }]});
        if let Some(usage) = self.usage {
            answer["usage"] = usage;
        }
        if let Some(model) = self.model {
            answer["model"] = model;
        }
        Ok(Some(answer))
    }
}

/// The piece of a call's arguments in `function`: its `arguments` text, or the text of
/// arguments written as an object (which `complete` reads too).
fn arguments_text(function: &Value) -> String {
    match function.get("arguments") {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(fragment)) => fragment.clone(),
        Some(arguments) => arguments.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pieces_without_an_index_find_their_call_in_linear_time() {
        // Each piece looked for its id through every call so far: quadratic in the calls
        // (50,000 calls took 65 s).
        let calls = 50_000;
        let chunk =
            |piece: Value| json!({"choices": [{"index": 0, "delta": {"tool_calls": [piece]}}]});
        let chunks: Vec<Value> = (0..calls)
            .flat_map(|call| {
                let id = format!("call_{call}");
                [
                    chunk(json!({"id": id, "function": {"name": "t", "arguments": "{"}})),
                    chunk(json!({"id": id, "function": {"arguments": "}"}})),
                ]
            })
            .collect();
        let mut assembler = ChatAssembler::default();
        let mut deltas = 0;
        let mut on_delta = |_: StreamDelta| deltas += 1;
        let started = cpu_time::ThreadTime::now();
        for chunk in chunks {
            assert!(assembler.event(None, chunk, &mut on_delta).is_ok());
        }
        let elapsed = started.elapsed();
        assert!(elapsed < std::time::Duration::from_secs(10), "{elapsed:?}");
        let finish = json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]});
        assert!(assembler.event(None, finish, &mut on_delta).is_ok());
        let Ok(Some(answer)) = assembler.finish() else {
            panic!("no answer");
        };
        let written = &answer["choices"][0]["message"]["tool_calls"];
        assert_eq!(written.as_array().map(Vec::len), Some(calls));
        assert_eq!(written[7]["function"]["arguments"], "{}");
        assert_eq!(written[7]["id"], "call_7");
        assert_eq!(deltas, 2 * calls);
    }
}
