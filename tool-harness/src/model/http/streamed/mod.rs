//! Streamed answers: each API's events reported as [`StreamDelta`]s and assembled into the
//! body the same request would have been answered with unstreamed, which the client then
//! reads as it reads any answer. Calls, text, usage and stop reasons therefore come out of
//! a streamed answer exactly as out of a whole one.

pub(crate) mod anthropic;
pub(crate) mod gemini;
pub(crate) mod openai_chat;
pub(crate) mod openai_responses;
mod reported_error;

use serde::Serialize;
use serde_json::Value;

pub(crate) use self::reported_error::ReportedError;
use super::context_overflow::OverflowShape;
use super::events::EventStream;
use super::transport::{AnswerBody, Transport, quote, with_attempts};
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

/// How one streamed attempt ended.
enum Attempt {
    /// The answer's body the events made (`None` when they made none), or an error that
    /// is final.
    Done(Result<Option<Value>, ModelError>),
    /// The API reported an error before the stream delivered anything.
    FailedEarly(ReportedError),
    /// The stream was cut off (its connection failed or closed) before it delivered
    /// anything: why.
    CutEarly(ModelError),
}

/// POSTs `body` to `path` for a streamed answer, reads its events to their end through a
/// new assembler `A`, and gives the answer `read` reads from the whole body they make. A
/// server that does not stream answers whole (labelled JSON or not): its answer is read the
/// same way, and its text reported as one delta (as [`ChatModel::stream`]'s default does).
///
/// An error the API reports in the stream before any text or call was delivered to
/// `on_delta` is retried as its status would be (an overload, a rate limit, a server
/// error), within the same `max_retries` as the error statuses, after the backoff; once
/// anything was delivered, the error is returned, since the consumer already has part of
/// an answer. A stream cut off (its connection failed or closed) before anything was
/// delivered is asked again the same way, after the backoff, as a request that got no
/// answer is; after anything was delivered it is a
/// [`MalformedResponse`](ModelError::MalformedResponse).
///
/// [`ChatModel::stream`]: crate::model::ChatModel::stream
pub(crate) async fn request_answer<A: Assembler + Default>(
    transport: &Transport,
    path: &str,
    body: &(impl Serialize + Sync),
    on_delta: OnDelta<'_>,
    read: impl FnOnce(&Value) -> Result<ChatResponse, ModelError>,
) -> Result<ChatResponse, ModelError> {
    let mut retries = 0;
    loop {
        let mut events = match transport.post_for_events(path, body, &mut retries).await? {
            AnswerBody::Events(events) => events,
            AnswerBody::Whole(answer) => return whole(&answer, on_delta, read),
        };
        let attempt = match events.whole_answer().await {
            Ok(Some(bytes)) => return whole(&transport.parse_json(&bytes)?, on_delta, read),
            Ok(None) => {
                read_events(&mut events, A::default(), on_delta, transport.overflow()).await
            }
            Err(error) if events.was_cut_off() => Attempt::CutEarly(error),
            Err(error) => return Err(error),
        };
        let answer = match attempt {
            Attempt::Done(Ok(answer)) => answer,
            Attempt::Done(Err(error)) => return Err(error),
            Attempt::CutEarly(error) => {
                let Some(wait) = transport.retry_wait_unanswered(retries) else {
                    return Err(with_attempts(error, retries + 1));
                };
                let wait = transport.next_retry(
                    wait,
                    &mut retries,
                    format_args!("the stream was cut off before any of the answer ({error})"),
                );
                wait.await;
                continue;
            }
            Attempt::FailedEarly(reported) => {
                let overflow = transport.overflow();
                // A request too long for the model, or with an image it cannot read, fails
                // the same way if asked again.
                let wait = if reported.refusal(overflow).is_some() {
                    None
                } else {
                    transport.retry_wait(reported.status, None, reported.quota_spent, retries)
                };
                let Some(wait) = wait else {
                    return Err(reported.into_error(events.provider(), overflow));
                };
                let wait = transport.next_retry(
                    wait,
                    &mut retries,
                    format_args!(
                        "the stream reported HTTP {} before any of the answer",
                        reported.status.as_u16()
                    ),
                );
                wait.await;
                continue;
            }
        };
        return match answer {
            Some(answer) => read(&answer),
            None => Err(events.no_answer()),
        };
    }
}

/// The answer of a server that does not stream, its text reported as one delta.
fn whole(
    answer: &Value,
    on_delta: OnDelta<'_>,
    read: impl FnOnce(&Value) -> Result<ChatResponse, ModelError>,
) -> Result<ChatResponse, ModelError> {
    let response = read(answer)?;
    if let Some(text) = &response.text {
        on_delta(StreamDelta::Text(text.clone()));
    }
    Ok(response)
}

/// Reads `events` to their end through `assembler`: the answer's body they make (`None`
/// when they made none), or why they made none (an error the API reported read in
/// `overflow`'s words).
async fn read_events<A: Assembler>(
    events: &mut EventStream,
    mut assembler: A,
    on_delta: OnDelta<'_>,
    overflow: OverflowShape,
) -> Attempt {
    // Whether a delta reached `on_delta`: an error after that is not retried.
    let mut delivered = false;
    let failed = |events: &EventStream, delivered: bool, failed: Failed| match failed {
        Failed::Malformed(reason) => Attempt::Done(Err(events.malformed(reason))),
        Failed::Api(reported) if !delivered => Attempt::FailedEarly(reported),
        Failed::Api(reported) => {
            Attempt::Done(Err(reported.into_error(events.provider(), overflow)))
        }
    };
    loop {
        let (name, data) = match events.next().await {
            Ok(Some(event)) => event,
            Ok(None) => break,
            Err(error) if !delivered && events.was_cut_off() => return Attempt::CutEarly(error),
            Err(error) => return Attempt::Done(Err(error)),
        };
        let outcome = match ReportedError::in_event(name.as_deref(), &data) {
            Some(reported) => Err(Failed::Api(reported)),
            None => assembler.event(name.as_deref(), data, &mut |delta| {
                delivered = true;
                on_delta(delta);
            }),
        };
        if let Err(error) = outcome {
            return failed(events, delivered, error);
        }
    }
    match assembler.finish() {
        Ok(answer) => Attempt::Done(Ok(answer)),
        Err(error) => failed(events, delivered, error),
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
