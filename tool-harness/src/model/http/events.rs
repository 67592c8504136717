//! [`EventStream`]: the server-sent events of a streamed answer, read within the clients'
//! bounds (no more than [`MAX_RESPONSE_BYTES`] in all, no wait for more longer than the time
//! limit), each event's data read as JSON.

use std::io;
use std::pin::Pin;
use std::time::Duration;

use futures::{Stream, StreamExt};
use serde_json::Value;
use sse_stream::{Sse, SseStream};
use toolsmith_core::provider::Provider;

use super::MAX_RESPONSE_BYTES;
use super::transport::chain;
use crate::model::ModelError;

/// The events of one streamed answer, in order.
pub(crate) struct EventStream {
    events: Pin<Box<dyn Stream<Item = Result<Sse, sse_stream::Error>> + Send>>,
    provider: Provider,
    idle: Duration,
}

/// What the bytes of the body are read through: the response while it lasts, and how much
/// of it was read.
struct Body {
    response: Option<reqwest::Response>,
    read: usize,
}

impl EventStream {
    /// The events of `response`'s body; waiting longer than `idle` for the next one is a
    /// [`ModelError::Timeout`].
    pub(crate) fn new(response: reqwest::Response, provider: Provider, idle: Duration) -> Self {
        let body = Body {
            response: Some(response),
            read: 0,
        };
        let chunks = futures::stream::unfold(body, |mut body| async move {
            let response = body.response.as_mut()?;
            let chunk = match response.chunk().await {
                Ok(Some(chunk)) => chunk,
                Ok(None) => return None,
                Err(err) => {
                    body.response = None;
                    let reason = format!(
                        "the stream was cut off after {} bytes: {}",
                        body.read,
                        chain(&err)
                    );
                    return Some((Err(io::Error::other(reason)), body));
                }
            };
            body.read = body.read.saturating_add(chunk.len());
            if body.read > MAX_RESPONSE_BYTES {
                body.response = None;
                let reason = format!(
                    "the stream is longer than the {} MiB a client reads",
                    MAX_RESPONSE_BYTES / (1024 * 1024)
                );
                return Some((Err(io::Error::other(reason)), body));
            }
            Some((Ok(chunk), body))
        });
        Self {
            events: Box::pin(SseStream::from_bytes_stream(chunks)),
            provider,
            idle,
        }
    }

    /// The next event's name (`event:`, if it had one) and data read as JSON; `None` when
    /// the stream ends, or at OpenAI's `data: [DONE]`. Events without data (comments, keep
    /// alives) are passed over.
    pub(crate) async fn next(&mut self) -> Result<Option<(Option<String>, Value)>, ModelError> {
        loop {
            let next = tokio::time::timeout(self.idle, self.events.next())
                .await
                .map_err(|_| ModelError::Timeout {
                    provider: self.provider.name().to_owned(),
                    after: self.idle,
                })?;
            let sse = match next {
                None => return Ok(None),
                Some(Ok(sse)) => sse,
                Some(Err(err)) => {
                    return Err(self.malformed(format!("the event stream is unreadable: {err}")));
                }
            };
            let Some(data) = sse.data else { continue };
            if data.trim() == "[DONE]" {
                return Ok(None);
            }
            // serde_json's recursion limit bounds the depth, as for a whole answer.
            let value = serde_json::from_str(&data)
                .map_err(|err| self.malformed(format!("an event's data is not JSON ({err})")))?;
            return Ok(Some((sse.event, value)));
        }
    }

    /// A [`ModelError::Api`] for an error the API reported in the stream, after its `200`.
    pub(crate) fn api_error(&self, message: String) -> ModelError {
        ModelError::Api {
            provider: self.provider.name().to_owned(),
            status: 200,
            message,
        }
    }

    /// A [`ModelError::MalformedResponse`] of this stream.
    pub(crate) fn malformed(&self, reason: impl Into<String>) -> ModelError {
        ModelError::MalformedResponse {
            provider: self.provider.name().to_owned(),
            reason: reason.into(),
        }
    }
}
