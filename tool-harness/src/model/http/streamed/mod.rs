//! Streamed answers: each API's events reported as [`StreamDelta`]s and assembled into the
//! body the same request would have been answered with unstreamed, which the client then
//! reads as it reads any answer. Calls, text, usage and stop reasons therefore come out of
//! a streamed answer exactly as out of a whole one.

pub(crate) mod anthropic;
pub(crate) mod gemini;
pub(crate) mod openai_chat;
pub(crate) mod openai_responses;

use serde_json::Value;

use super::events::EventStream;
use super::transport::Transport;
use crate::model::{ModelError, StreamDelta};

/// A sink of [`StreamDelta`]s, as [`ChatModel::stream`](crate::model::ChatModel::stream)
/// takes it.
pub(crate) type OnDelta<'a> = &'a mut (dyn FnMut(StreamDelta) + Send);

/// One API's way of reading its stream.
pub(crate) trait Assembler {
    /// Reads one event (its `event:` name, if any, and its data), reporting what it adds.
    fn event(
        &mut self,
        name: Option<&str>,
        data: Value,
        on_delta: OnDelta<'_>,
    ) -> Result<(), Failed>;

    /// The answer the events made, as the API answers unstreamed; `None` when they made
    /// none (the stream ended before the answer began).
    fn finish(self) -> Result<Option<Value>, Failed>;
}

/// Why an assembly stopped.
pub(crate) enum Failed {
    /// The events do not follow the API's format: what was wrong.
    Malformed(String),
    /// The API reported an error in the stream: its message.
    Api(String),
}

/// POSTs `body` to `path` for a streamed answer, reads its events to their end through
/// `assembler`, and gives the whole answer.
pub(crate) async fn request_answer<A: Assembler>(
    transport: &Transport,
    path: &str,
    body: &Value,
    mut assembler: A,
    on_delta: OnDelta<'_>,
) -> Result<Value, ModelError> {
    let mut events = transport.post_for_events(path, body).await?;
    let failed = |events: &EventStream, failed: Failed| match failed {
        Failed::Malformed(reason) => events.malformed(reason),
        Failed::Api(message) => events.api_error(message),
    };
    while let Some((name, data)) = events.next().await? {
        if let Err(error) = assembler.event(name.as_deref(), data, on_delta) {
            return Err(failed(&events, error));
        }
    }
    match assembler.finish() {
        Ok(Some(answer)) => Ok(answer),
        Ok(None) => Err(events.malformed("the stream ended before the answer began")),
        Err(error) => Err(failed(&events, error)),
    }
}

/// The first of a chunk's choices (Chat) or candidates (Gemini): the one whose `index` is 0
/// or absent. When more than one is asked for (`n`, `candidateCount`), each streams under
/// its own index, and a chunk may carry another alone; the answer is the first, as
/// `complete` reads it.
pub(crate) fn first_of(items: &[Value]) -> Option<&Value> {
    items
        .iter()
        .find(|item| item.get("index").and_then(Value::as_u64).unwrap_or(0) == 0)
}

/// The error message an event carries (`error.message`, or `error` itself as text).
pub(crate) fn error_message(error: &Value) -> String {
    error
        .get("message")
        .and_then(Value::as_str)
        .map_or_else(|| error.to_string(), str::to_owned)
}
