//! Anthropic Messages streamed (`"stream": true`): events whose data's `type` says what they
//! are. `message_start` carries the message without content (its id, model and input
//! usage); each content block is `content_block_start` (by its `index`), pieces of it in
//! `content_block_delta`s (`text_delta`, `input_json_delta`, `thinking_delta`,
//! `signature_delta`, `citations_delta`) and `content_block_stop`; `message_delta` carries
//! the stop reason and the output usage, `message_stop` ends it. `ping`s keep the
//! connection alive; an `error` event is the API's error after its `200` (its `type` says
//! which status it stands for).

use serde_json::{Map, Value, json};

use super::{Assembler, Failed, OnDelta, text};
use crate::model::StreamDelta;

/// A content block as its pieces arrive: the block as it started, extended by each delta.
struct BlockPieces {
    /// The block's fields so far.
    block: Map<String, Value>,
    /// The `input` as JSON text, once an `input_json_delta` came (`tool_use` and the
    /// server's tool blocks stream their input this way).
    input_json: Option<String>,
    /// The block's position among the answer's calls, for a `tool_use` block.
    call: Option<usize>,
    /// Whether its `content_block_stop` came: nothing more may extend it.
    stopped: bool,
}

impl BlockPieces {
    /// The block's `type`.
    fn kind(&self) -> &str {
        self.block
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or_default()
    }

    /// Appends `piece` to the block's text field `key` (absent until now, or a string).
    fn extend_text(&mut self, index: usize, key: &str, piece: &str) -> Result<(), Failed> {
        match self
            .block
            .entry(key)
            .or_insert_with(|| Value::String(String::new()))
        {
            Value::String(text) => {
                text.push_str(piece);
                Ok(())
            }
            _ => Err(Failed::Malformed(format!(
                "a delta adds to `{key}` of content block {index} ({}), which is not text",
                self.kind()
            ))),
        }
    }

    /// The block as the unstreamed answer holds it: a streamed `input` read as JSON, or
    /// kept as text when it is not JSON (a stream cut off inside it), for the call reader
    /// to repair or reject while keeping what the model wrote.
    fn into_block(mut self) -> Value {
        if let Some(text) = self.input_json {
            let input = if text.trim().is_empty() {
                json!({})
            } else {
                // Read as a whole answer is: within serde_json's recursion limit and core's
                // bound on values, serde_json's private keys refused.
                toolsmith_core::value_from_str(&text).unwrap_or(Value::String(text))
            };
            self.block.insert("input".to_owned(), input);
        }
        Value::Object(self.block)
    }
}

/// The answer so far.
#[derive(Default)]
pub(crate) struct AnthropicAssembler {
    /// The message of `message_start` (`None` until it came).
    message: Option<Map<String, Value>>,
    /// The content blocks, by their index.
    blocks: Vec<BlockPieces>,
    /// How many `tool_use` blocks started: the next call's index.
    calls: usize,
    stop_reason: Option<Value>,
    stop_sequence: Option<Value>,
    /// The usage of `message_start`, updated by each `message_delta`'s (whose counts are
    /// cumulative).
    usage: Map<String, Value>,
    /// Whether `message_stop` came: the answer is whole.
    ended: bool,
}

/// The content block index an event names.
fn block_index(data: &Value, event: &str) -> Result<usize, Failed> {
    data.get("index")
        .and_then(Value::as_u64)
        .and_then(|index| usize::try_from(index).ok())
        .ok_or_else(|| Failed::Malformed(format!("a {event} event has no block `index`")))
}

/// Copies the counts of `usage` into `into`, later counts replacing earlier ones.
fn merge_usage(into: &mut Map<String, Value>, usage: Option<&Value>) {
    let Some(usage) = usage.and_then(Value::as_object) else {
        return;
    };
    for (key, count) in usage {
        if !count.is_null() {
            into.insert(key.clone(), count.clone());
        }
    }
}

impl AnthropicAssembler {
    /// `message_start`: the message, without its content yet.
    fn start_message(&mut self, data: &Value) -> Result<(), Failed> {
        if self.message.is_some() {
            return Err(Failed::Malformed(
                "a second message_start in one stream".to_owned(),
            ));
        }
        let message = data
            .get("message")
            .and_then(Value::as_object)
            .ok_or_else(|| Failed::Malformed("a message_start without a `message`".to_owned()))?;
        merge_usage(&mut self.usage, message.get("usage"));
        self.stop_reason = message.get("stop_reason").cloned();
        self.stop_sequence = message.get("stop_sequence").cloned();
        self.message = Some(message.clone());
        Ok(())
    }

    /// `content_block_start`: the next block, as it begins.
    fn start_block(&mut self, data: &Value, on_delta: OnDelta<'_>) -> Result<(), Failed> {
        let index = block_index(data, "content_block_start")?;
        // Blocks start in order, from 0: any other index is a block out of place (and would
        // leave gaps in the content).
        if index != self.blocks.len() {
            return Err(Failed::Malformed(format!(
                "content block {index} started where block {} was next",
                self.blocks.len()
            )));
        }
        let block = data
            .get("content_block")
            .and_then(Value::as_object)
            .ok_or_else(|| {
                Failed::Malformed(format!(
                    "content block {index} started without a `content_block`"
                ))
            })?;
        let block = block.clone();
        let field = |key: &str| block.get(key).and_then(Value::as_str);
        let mut call = None;
        match field("type") {
            Some("text") => {
                if let Some(piece) = field("text").filter(|piece| !piece.is_empty()) {
                    on_delta(StreamDelta::Text(piece.to_owned()));
                }
            }
            Some("tool_use") => {
                // The call's id and name come whole here: reported before its input.
                on_delta(StreamDelta::ToolCallArguments {
                    index: self.calls,
                    id: field("id").map(str::to_owned),
                    name: field("name").map(str::to_owned),
                    fragment: String::new(),
                });
                call = Some(self.calls);
                self.calls += 1;
            }
            _ => {}
        }
        self.blocks.push(BlockPieces {
            block,
            input_json: None,
            call,
            stopped: false,
        });
        Ok(())
    }

    /// The started, unstopped block an event names.
    fn open_block(
        &mut self,
        data: &Value,
        event: &str,
    ) -> Result<(usize, &mut BlockPieces), Failed> {
        let index = block_index(data, event)?;
        let Some(block) = self.blocks.get_mut(index) else {
            return Err(Failed::Malformed(format!(
                "a {event} for content block {index}, which never started"
            )));
        };
        if block.stopped {
            return Err(Failed::Malformed(format!(
                "a {event} for content block {index}, after its content_block_stop"
            )));
        }
        Ok((index, block))
    }

    /// `content_block_delta`: a piece of a block, of the kind the delta extends.
    fn extend_block(&mut self, data: &Value, on_delta: OnDelta<'_>) -> Result<(), Failed> {
        let (index, block) = self.open_block(data, "content_block_delta")?;
        let delta = data.get("delta").unwrap_or(&Value::Null);
        let Some(kind) = text(delta, "type") else {
            return Err(Failed::Malformed(format!(
                "a content_block_delta for content block {index} without a delta `type`"
            )));
        };
        let takes = match kind {
            "text_delta" | "citations_delta" => block.kind() == "text",
            "thinking_delta" | "signature_delta" => block.kind() == "thinking",
            // `tool_use`, and the server's tool blocks, start with an (empty) `input`.
            "input_json_delta" => block.block.contains_key("input"),
            // Delta types added to the API later carry nothing this client reads.
            _ => return Ok(()),
        };
        if !takes {
            return Err(Failed::Malformed(format!(
                "a {kind} for content block {index}, a `{}` block",
                block.kind()
            )));
        }
        match kind {
            "text_delta" => {
                let piece = text(delta, "text").unwrap_or_default();
                block.extend_text(index, "text", piece)?;
                if !piece.is_empty() {
                    on_delta(StreamDelta::Text(piece.to_owned()));
                }
            }
            // Thinking is kept for the turn sent back, not reported as the answer's text.
            "thinking_delta" => {
                let piece = text(delta, "thinking").unwrap_or_default();
                block.extend_text(index, "thinking", piece)?;
            }
            "signature_delta" => {
                let piece = text(delta, "signature").unwrap_or_default();
                block.extend_text(index, "signature", piece)?;
            }
            "input_json_delta" => {
                let fragment = text(delta, "partial_json").unwrap_or_default();
                block
                    .input_json
                    .get_or_insert_with(String::new)
                    .push_str(fragment);
                if let Some(call) = block.call.filter(|_| !fragment.is_empty()) {
                    on_delta(StreamDelta::ToolCallArguments {
                        index: call,
                        id: None,
                        name: None,
                        fragment: fragment.to_owned(),
                    });
                }
            }
            "citations_delta" => {
                // The unstreamed block lists its citations in `citations`.
                if let Some(citation) = delta.get("citation") {
                    let citations = block.block.entry("citations").or_insert(Value::Null);
                    if !citations.is_array() {
                        *citations = Value::Array(Vec::new());
                    }
                    if let Value::Array(citations) = citations {
                        citations.push(citation.clone());
                    }
                }
            }
            // Other delta types returned above.
            _ => {}
        }
        Ok(())
    }
}

impl Assembler for AnthropicAssembler {
    fn event(
        &mut self,
        name: Option<&str>,
        data: Value,
        on_delta: OnDelta<'_>,
    ) -> Result<(), Failed> {
        let kind = text(&data, "type").or(name).unwrap_or_default();
        if kind == "message_start" {
            return self.start_message(&data);
        }
        let known = matches!(
            kind,
            "content_block_start"
                | "content_block_delta"
                | "content_block_stop"
                | "message_delta"
                | "message_stop"
        );
        if known && self.message.is_none() {
            return Err(Failed::Malformed(format!("a {kind} before message_start")));
        }
        match kind {
            "content_block_start" => self.start_block(&data, on_delta),
            "content_block_delta" => self.extend_block(&data, on_delta),
            "content_block_stop" => {
                self.open_block(&data, "content_block_stop")?.1.stopped = true;
                Ok(())
            }
            "message_delta" => {
                if let Some(delta) = data.get("delta") {
                    if let Some(reason) = delta.get("stop_reason") {
                        self.stop_reason = Some(reason.clone());
                    }
                    if let Some(sequence) = delta.get("stop_sequence") {
                        self.stop_sequence = Some(sequence.clone());
                    }
                }
                merge_usage(&mut self.usage, data.get("usage"));
                Ok(())
            }
            "message_stop" => {
                self.ended = true;
                Ok(())
            }
            // `ping`, and event types added later, are passed over.
            _ => Ok(()),
        }
    }

    fn finish(self) -> Result<Option<Value>, Failed> {
        let Some(mut message) = self.message else {
            return Ok(None);
        };
        // Cut off before its end, the answer may be cut too (a call's input closed by repair
        // would run on half its text): no answer. One the API ended while writing a call
        // (`max_tokens`) is whole, and its cut call is rejected.
        if !self.ended {
            return Err(Failed::Malformed(
                "the stream ended before its message_stop event".to_owned(),
            ));
        }
        message.entry("type").or_insert_with(|| json!("message"));
        message.entry("role").or_insert_with(|| json!("assistant"));
        let content = self
            .blocks
            .into_iter()
            .map(BlockPieces::into_block)
            .collect();
        message.insert("content".to_owned(), Value::Array(content));
        message.insert(
            "stop_reason".to_owned(),
            self.stop_reason.unwrap_or(Value::Null),
        );
        message.insert(
            "stop_sequence".to_owned(),
            self.stop_sequence.unwrap_or(Value::Null),
        );
        message.insert("usage".to_owned(), Value::Object(self.usage));
        Ok(Some(Value::Object(message)))
    }
}
