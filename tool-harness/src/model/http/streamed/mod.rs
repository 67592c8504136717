//! Streamed answers: each API's events reported as [`StreamDelta`]s and assembled into the
//! body the same request would have been answered with unstreamed, which the client then
//! reads as it reads any answer. Calls, text, usage and stop reasons therefore come out of
//! a streamed answer exactly as out of a whole one.

pub(crate) mod anthropic;
pub(crate) mod gemini;
pub(crate) mod openai_chat;
pub(crate) mod openai_responses;
mod reported_error;

use serde_json::Value;

pub(crate) use self::reported_error::ReportedError;
use super::events::EventStream;
use super::transport::{AnswerBody, Transport, quote};
use crate::model::{ChatResponse, ModelError, StreamDelta};

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
    /// The API reported an error in the stream.
    Api(ReportedError),
}

/// POSTs `body` to `path` for a streamed answer, reads its events to their end through
/// `assembler`, and gives the answer `read` reads from the whole body they make. A server
/// that does not stream answers whole: its answer is read the same way, and its text
/// reported as one delta (as [`ChatModel::stream`]'s default does).
///
/// [`ChatModel::stream`]: crate::model::ChatModel::stream
pub(crate) async fn request_answer<A: Assembler>(
    transport: &Transport,
    path: &str,
    body: &Value,
    mut assembler: A,
    on_delta: OnDelta<'_>,
    read: impl FnOnce(&Value) -> Result<ChatResponse, ModelError>,
) -> Result<ChatResponse, ModelError> {
    let mut events = match transport.post_for_events(path, body).await? {
        AnswerBody::Events(events) => events,
        AnswerBody::Whole(answer) => {
            let response = read(&answer)?;
            if let Some(text) = &response.text {
                on_delta(StreamDelta::Text(text.clone()));
            }
            return Ok(response);
        }
    };
    let failed = |events: &EventStream, failed: Failed| match failed {
        Failed::Malformed(reason) => events.malformed(reason),
        Failed::Api(reported) => reported.into_error(events.provider()),
    };
    while let Some((name, data)) = events.next().await? {
        if let Some(reported) = ReportedError::in_event(name.as_deref(), &data) {
            return Err(reported.into_error(events.provider()));
        }
        if let Err(error) = assembler.event(name.as_deref(), data, on_delta) {
            return Err(failed(&events, error));
        }
    }
    match assembler.finish() {
        Ok(Some(answer)) => read(&answer),
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

/// `value` as JSON text for an error message, cut after 100 characters.
pub(crate) fn quoted(value: &Value) -> String {
    quote(&value.to_string(), 100)
}

/// The text of `value`'s `key`, when it is a string.
pub(crate) fn text<'a>(value: &'a Value, key: &str) -> Option<&'a str> {
    value.get(key).and_then(Value::as_str)
}
