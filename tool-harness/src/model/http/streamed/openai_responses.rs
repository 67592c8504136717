//! OpenAI Responses streamed (`"stream": true`): typed events, each naming its `type`.
//! Text arrives as `response.output_text.delta` (and `response.refusal.delta`), a call's
//! arguments as `response.function_call_arguments.delta` after the call's
//! `response.output_item.added`; the last event, `response.completed` (or
//! `response.incomplete`, `response.failed`), carries the whole response, which is the
//! answer (named by `response.created`'s model where it names none). An `error` event ends
//! the stream with the API's message.

use std::collections::HashMap;

use serde_json::Value;

use super::{Assembler, Failed, OnDelta, ReportedError, text};
use crate::model::StreamDelta;

/// The answer so far: where each call is among the answer's calls, and the response once
/// the stream has given it whole.
#[derive(Default)]
pub(crate) struct ResponsesAssembler {
    began: bool,
    /// The calls' positions among the answer's calls, by their output index.
    calls: HashMap<u64, usize>,
    response: Option<Value>,
    /// The `model` of `response.created`'s response: the answer's, if the last event's
    /// response does not name it.
    model: Option<Value>,
}

impl Assembler for ResponsesAssembler {
    fn event(
        &mut self,
        name: Option<&str>,
        data: Value,
        on_delta: OnDelta<'_>,
    ) -> Result<(), Failed> {
        self.began = true;
        // The data names its event; the SSE name is the same where both are given.
        let kind = text(&data, "type").or(name).unwrap_or_default();
        let output_index = || data.get("output_index").and_then(Value::as_u64);
        let delta = || {
            data.get("delta")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned()
        };
        match kind {
            "response.output_text.delta" | "response.refusal.delta" => {
                let piece = delta();
                if !piece.is_empty() {
                    on_delta(StreamDelta::Text(piece));
                }
            }
            "response.output_item.added" => {
                let item = data.get("item").unwrap_or(&Value::Null);
                if text(item, "type") != Some("function_call") {
                    return Ok(());
                }
                let output_index = output_index().ok_or_else(|| {
                    Failed::Malformed(
                        "a `response.output_item.added` has no `output_index`".to_owned(),
                    )
                })?;
                // A second announcement would take the next call's index among the
                // deltas, which the call after it is then reported under too.
                let index = self.calls.len();
                if self.calls.insert(output_index, index).is_some() {
                    return Err(Failed::Malformed(format!(
                        "the stream announced the call at output {output_index} twice"
                    )));
                }
                let field = |key: &str| text(item, key).map(str::to_owned);
                on_delta(StreamDelta::ToolCallArguments {
                    index,
                    id: field("call_id"),
                    name: field("name"),
                    fragment: field("arguments").unwrap_or_default(),
                });
            }
            "response.function_call_arguments.delta" => {
                let index = output_index()
                    .and_then(|output_index| self.calls.get(&output_index).copied())
                    .ok_or_else(|| {
                        Failed::Malformed(
                            "arguments arrived for a call the stream had not begun".to_owned(),
                        )
                    })?;
                on_delta(StreamDelta::ToolCallArguments {
                    index,
                    id: None,
                    name: None,
                    fragment: delta(),
                });
            }
            "response.created" => {
                let model = data.pointer("/response/model").filter(|m| m.is_string());
                self.model = model.cloned();
            }
            "response.completed" | "response.incomplete" | "response.failed" => {
                let response = data
                    .get("response")
                    .filter(|r| r.is_object())
                    .ok_or_else(|| {
                        Failed::Malformed(format!("a `{kind}` event without its `response`"))
                    })?;
                if kind == "response.failed" {
                    return Err(Failed::Api(ReportedError::of_failed_response(response)));
                }
                self.response = Some(response.clone());
            }
            // Reasoning summaries, items done, and the rest: the last event carries them
            // all.
            _ => {}
        }
        Ok(())
    }

    fn finish(self) -> Result<Option<Value>, Failed> {
        match self.response {
            Some(mut response) => {
                if let (Some(model), Some(fields)) = (self.model, response.as_object_mut()) {
                    let named = fields.get("model").is_some_and(Value::is_string);
                    if !named {
                        fields.insert("model".to_owned(), model);
                    }
                }
                Ok(Some(response))
            }
            // Cut off before its last event, the answer may be cut too (a call's arguments
            // closed by repair would run on half their text): no answer.
            None if self.began => Err(Failed::Malformed(
                "the stream ended before its `response.completed` event".to_owned(),
            )),
            None => Ok(None),
        }
    }
}
