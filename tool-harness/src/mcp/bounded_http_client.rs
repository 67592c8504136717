//! [`BoundedHttpClient`]: the MCP client's streamable-HTTP requests, made as rmcp's own
//! reqwest client makes them, but with every JSON body and every event's data checked
//! against [`JsonLimits`] (bytes, depth, values, serde_json's private keys) before serde_json
//! reads it into rmcp's types. rmcp's client parses bodies itself, bounded in bytes only: a
//! body nested string in string under serde_json's private key overflowed the stack.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::Arc;

use futures::stream::{BoxStream, Stream, StreamExt as _};
use reqwest::StatusCode;
use reqwest::header::{
    ACCEPT, CONTENT_TYPE, HeaderMap, HeaderName, HeaderValue, RETRY_AFTER, WWW_AUTHENTICATE,
};
use rmcp::model::{
    ClientJsonRpcMessage, ClientRequest, ErrorData, RequestId, ServerJsonRpcMessage,
};
use rmcp::transport::common::http_header::{
    EVENT_STREAM_MIME_TYPE, HEADER_LAST_EVENT_ID, HEADER_SESSION_ID, JSON_MIME_TYPE,
};
use rmcp::transport::streamable_http_client::{
    AuthRequiredError, HttpStatusError, InsufficientScopeError, SseError, StreamableHttpClient,
    StreamableHttpError, StreamableHttpPostResponse, StreamableHttpResponseLimits,
};
use sse_stream::{Sse, SseStream};

use super::json_limits::JsonLimits;
use super::unreadable::{Envelope, unreadable_answer, unreadable_request};

type HttpError = StreamableHttpError<reqwest::Error>;
type Events = BoxStream<'static, Result<Sse, SseError>>;

/// What a POST or GET accepts: either form of answer.
const ACCEPT_EITHER: &str = "text/event-stream, application/json";

/// Headers this client sets itself, which custom headers may not replace (rmcp's list;
/// the protocol version, which rmcp's worker adds as a custom header, is not among them).
const RESERVED_HEADERS: [&str; 3] = ["accept", HEADER_SESSION_ID, HEADER_LAST_EVENT_ID];

/// How much of a body that is not a JSON-RPC message an error quotes.
const BODY_PREVIEW_BYTES: usize = 256;

/// A `StreamableHttpClient` over the client's reqwest client that reads nothing from the
/// server into rmcp's types before it passed [`JsonLimits::check`].
#[derive(Clone)]
pub(crate) struct BoundedHttpClient {
    http: reqwest::Client,
    limits: JsonLimits,
}

impl BoundedHttpClient {
    /// Requests through `http`; bodies and events checked against `limits`.
    pub(crate) fn new(http: reqwest::Client, limits: JsonLimits) -> Self {
        Self { http, limits }
    }

    /// A JSON body as a message, if it passes the limits and is one; else why not.
    fn read_message(&self, body: &[u8]) -> Result<ServerJsonRpcMessage, String> {
        self.limits.check(body)?;
        serde_json::from_slice(body).map_err(|error| {
            format!(
                "the answer is not a JSON-RPC message: {error}: {}",
                preview(body, BODY_PREVIEW_BYTES)
            )
        })
    }

    /// Each event's data checked before rmcp reads it. An answer that fails (its request's
    /// id read from its envelope) becomes an error for the call it answers, naming the
    /// limit, as on the line transport; a request of the server's that fails becomes a
    /// stand-in ([`unreadable_request`]) that the client's handler answers with an error
    /// under its id, as the line transport answers it; any other event that fails is
    /// dropped (and logged), as rmcp drops an event that is not JSON: failing its stream
    /// would have rmcp open it again, to the same event.
    fn checked_events(&self, events: Events) -> Events {
        let limits = self.limits;
        events
            .map(move |event| {
                let mut event = event?;
                let Some(data) = event.data.as_deref() else {
                    return Ok(Some(event));
                };
                let Some((code, reason)) = limits.refusal(data.as_bytes()) else {
                    return Ok(Some(event));
                };
                let envelope = Envelope::of(data.as_bytes());
                let stand_in = if let Some(id) = envelope.answered_request() {
                    unreadable_answer(id.clone(), code, &reason)
                } else if let Some(id) = envelope.request() {
                    unreadable_request(id.clone(), code, &reason)
                } else {
                    tracing::warn!(%reason, "dropped an unreadable event from the MCP server, neither an answer nor a request");
                    return Ok(None);
                };
                event.data = Some(stand_in.to_string());
                Ok(Some(event))
            })
            .filter_map(|event| std::future::ready(event.transpose()))
            .boxed()
    }

    /// The event stream of a response: each event bounded to `max_event_bytes` as it
    /// arrives (the parser would otherwise gather it without end), then checked.
    fn response_events(&self, response: reqwest::Response, max_event_bytes: usize) -> Events {
        let bytes = bounded_events(response.bytes_stream(), max_event_bytes);
        self.checked_events(SseStream::from_bytes_stream(bytes).boxed())
    }

    /// An answer that is not a success: the server's JSON-RPC error when it sent one that can
    /// be read, else an error with the status and the start of the body.
    async fn failure(
        &self,
        response: reqwest::Response,
        sent: &PostSent<'_>,
        status_error: Option<HttpStatusError>,
        limits: StreamableHttpResponseLimits,
    ) -> Result<StreamableHttpPostResponse, HttpError> {
        let status = response.status();
        let is_auth_failure = matches!(status, StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN);
        let mut server_error = None;
        let text = if is_json(response.headers()) && !is_auth_failure {
            match read_body(response, limits.max_json_response_size).await {
                Ok(body) => {
                    match self.read_message(&body) {
                        Ok(error @ ServerJsonRpcMessage::Error(_)) => server_error = Some(error),
                        Ok(_) | Err(_) => tracing::warn!(
                            "HTTP {status}: the JSON body is not a JSON-RPC error it can read"
                        ),
                    }
                    preview(&body, limits.max_error_response_size)
                }
                Err(too_large @ StreamableHttpError::ResponseBodyTooLarge { .. }) => {
                    return Err(status_error.map_or(too_large, HttpError::from));
                }
                Err(StreamableHttpError::Client(_)) => preview(
                    b"<failed to read response body>",
                    limits.max_error_response_size,
                ),
                Err(other) => return Err(other),
            }
        } else {
            match read_prefix(response, limits.max_error_response_size).await {
                Ok(prefix) => preview(&prefix, prefix.len()),
                Err(_) => preview(
                    b"<failed to read response body>",
                    limits.max_error_response_size,
                ),
            }
        };
        if let Some(refusal) = discover_refusal(sent, status, server_error.as_ref(), &text) {
            return Ok(refusal);
        }
        if let Some(error) = server_error {
            return Ok(StreamableHttpPostResponse::Json(
                error,
                sent.new_session_id.clone(),
            ));
        }
        if let Some(error) = status_error {
            return Err(error.into());
        }
        Err(StreamableHttpError::UnexpectedServerResponse(Cow::Owned(
            format!("HTTP {status}: {text}"),
        )))
    }
}

/// What a failed POST's answer is read against.
struct PostSent<'a> {
    message: &'a ClientJsonRpcMessage,
    session_was_attached: bool,
    /// The session id the answer gave, if any.
    new_session_id: Option<String>,
}

impl StreamableHttpClient for BoundedHttpClient {
    type Error = reqwest::Error;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<StreamableHttpPostResponse, HttpError> {
        self.post_message_with_response_limits(
            uri,
            message,
            session_id,
            auth_header,
            custom_headers,
            self.response_limits(None),
        )
        .await
    }

    async fn post_message_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<StreamableHttpPostResponse, HttpError> {
        self.post_message_with_response_limits(
            uri,
            message,
            session_id,
            auth_header,
            custom_headers,
            self.response_limits(Some(max_sse_event_size)),
        )
        .await
    }

    async fn post_message_with_response_limits(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        limits: StreamableHttpResponseLimits,
    ) -> Result<StreamableHttpPostResponse, HttpError> {
        let mut request = self.http.post(uri.as_ref()).header(ACCEPT, ACCEPT_EITHER);
        if let Some(token) = auth_header {
            request = request.bearer_auth(token);
        }
        request = with_custom_headers(request, custom_headers)?;
        let session_was_attached = session_id.is_some();
        if let Some(session_id) = session_id {
            request = request.header(HEADER_SESSION_ID, session_id.as_ref());
        }
        let response = request.json(&message).send().await?;
        let status = response.status();
        auth_challenge(status, response.headers())?;
        if matches!(status, StatusCode::ACCEPTED | StatusCode::NO_CONTENT) {
            return Ok(StreamableHttpPostResponse::Accepted);
        }
        if status == StatusCode::NOT_FOUND && session_was_attached {
            return Err(StreamableHttpError::SessionExpired);
        }
        let content_type = response
            .headers()
            .get(CONTENT_TYPE)
            .map(|value| String::from_utf8_lossy(value.as_bytes()).into_owned());
        let json = is_json(response.headers());
        // Rate limits and failures that are not JSON are told by their status alone.
        let status_error = match http_status_error(status, response.headers()) {
            Some(error) if !json || status == StatusCode::TOO_MANY_REQUESTS => {
                return Err(error.into());
            }
            other => other,
        };
        let new_session_id = response
            .headers()
            .get(HEADER_SESSION_ID)
            .and_then(|value| value.to_str().ok())
            .map(str::to_owned);
        // Nothing waits for an answer to a notification, a response or an error: an empty
        // 200 for one is as good as 202 (some servers send it).
        let awaits_no_response = !matches!(message, ClientJsonRpcMessage::Request(_));
        if status.is_success() && response.content_length() == Some(0) && awaits_no_response {
            return Ok(StreamableHttpPostResponse::Accepted);
        }
        if !status.is_success() {
            let sent = PostSent {
                message: &message,
                session_was_attached,
                new_session_id,
            };
            return self.failure(response, &sent, status_error, limits).await;
        }
        let media = content_type.as_deref().unwrap_or_default().as_bytes();
        if media_type_is(media, EVENT_STREAM_MIME_TYPE) {
            let mut events = self.response_events(response, limits.max_sse_event_size);
            if let ClientJsonRpcMessage::Request(request) = &message {
                events = own_answer_only(events, request.id.clone());
            }
            return Ok(StreamableHttpPostResponse::Sse(events, new_session_id));
        }
        if json {
            let body = read_body(response, limits.max_json_response_size).await?;
            return match self.read_message(&body) {
                Ok(answer) => Ok(StreamableHttpPostResponse::Json(answer, new_session_id)),
                Err(reason) if awaits_no_response => {
                    tracing::warn!(%reason, "an unreadable answer to a message that needs none, taken as accepted");
                    Ok(StreamableHttpPostResponse::Accepted)
                }
                Err(reason) => Err(StreamableHttpError::UnexpectedServerResponse(Cow::Owned(
                    reason,
                ))),
            };
        }
        if awaits_no_response {
            tracing::warn!(
                ?content_type,
                "ignored an answer of unexpected content type to a message that needs none"
            );
            return Ok(StreamableHttpPostResponse::Accepted);
        }
        Err(StreamableHttpError::UnexpectedContentType(content_type))
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<(), HttpError> {
        // Its answer is not read.
        self.http
            .delete_session(uri, session_id, auth_header, custom_headers)
            .await
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<Events, HttpError> {
        self.get_stream_with_max_sse_event_size(
            uri,
            session_id,
            last_event_id,
            auth_header,
            custom_headers,
            self.limits.max_bytes,
        )
        .await
    }

    async fn get_stream_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<Events, HttpError> {
        // rmcp's request and byte bound (an oversized event ends the stream for good);
        // the events it gives are not yet read into its types.
        let events = self
            .http
            .get_stream_with_max_sse_event_size(
                uri,
                session_id,
                last_event_id,
                auth_header,
                custom_headers,
                max_sse_event_size,
            )
            .await?;
        Ok(self.checked_events(events))
    }
}

impl BoundedHttpClient {
    /// rmcp's default limits, events and JSON bodies bounded as [`JsonLimits::max_bytes`]
    /// says unless rmcp passed an event size.
    fn response_limits(&self, max_sse_event_size: Option<usize>) -> StreamableHttpResponseLimits {
        let mut limits = StreamableHttpResponseLimits::default();
        limits.max_json_response_size = self.limits.max_bytes;
        limits.max_sse_event_size = max_sse_event_size.unwrap_or(self.limits.max_bytes);
        limits
    }
}

/// A request's event stream without answers to other requests. rmcp ends a request's stream
/// at the first answer in it, whatever its id, and drops what follows: a server's answer to a
/// request never sent (or one sent on another stream), before the call's own, failed the call
/// as a stream that ended without its answer. Such an answer is dropped, and logged.
fn own_answer_only(events: Events, own: RequestId) -> Events {
    events
        .filter(move |event| {
            let other = match event {
                Ok(Sse {
                    data: Some(data), ..
                }) => answered_elsewhere(data, &own),
                _ => None,
            };
            if let Some(id) = &other {
                tracing::warn!(%id, request = %own, "dropped an answer to another request from a request's event stream of the MCP server");
            }
            std::future::ready(other.is_none())
        })
        .boxed()
}

/// The id of the request the event `data` answers, when it is an answer (a `result` or an
/// `error`, no `method`) under an id rmcp reads (a string, or an integer however written)
/// other than `own`. An answer whose id cannot be read is left to rmcp, as the error a
/// server sends without an id (a request it could not read).
fn answered_elsewhere(data: &str, own: &RequestId) -> Option<RequestId> {
    let envelope = Envelope::of(data.as_bytes());
    if !envelope.is_answer() {
        return None;
    }
    // The id's value alone, read as rmcp reads it (`2.0` is 2): not the whole event again,
    // which may be a result of megabytes (it passed the limits already).
    let id = serde_json::from_str::<RequestId>(data.get(envelope.id_at?)?).ok()?;
    (id != *own).then_some(id)
}

/// `request` with the caller's headers, none of them one this client sets itself.
fn with_custom_headers(
    mut request: reqwest::RequestBuilder,
    headers: HashMap<HeaderName, HeaderValue>,
) -> Result<reqwest::RequestBuilder, HttpError> {
    for (name, value) in headers {
        if RESERVED_HEADERS
            .iter()
            .any(|reserved| name.as_str().eq_ignore_ascii_case(reserved))
        {
            return Err(StreamableHttpError::ReservedHeaderConflict(
                name.to_string(),
            ));
        }
        request = request.header(name, value);
    }
    Ok(request)
}

/// The error of a 401 or 403 that carries a challenge (`WWW-Authenticate`).
fn auth_challenge(status: StatusCode, headers: &HeaderMap) -> Result<(), HttpError> {
    if !matches!(status, StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN) {
        return Ok(());
    }
    let Some(challenge) = headers.get(WWW_AUTHENTICATE) else {
        return Ok(());
    };
    let challenge = challenge.to_str().map_err(|_| {
        StreamableHttpError::UnexpectedServerResponse(Cow::Borrowed(
            "invalid www-authenticate header value",
        ))
    })?;
    Err(if status == StatusCode::UNAUTHORIZED {
        StreamableHttpError::AuthRequired(AuthRequiredError::new(challenge.to_owned()))
    } else {
        StreamableHttpError::InsufficientScope(InsufficientScopeError::new(
            challenge.to_owned(),
            scope_of(challenge),
        ))
    })
}

/// The `scope` a challenge asks for (`scope="a b"` or `scope=a`), if it names one.
fn scope_of(challenge: &str) -> Option<String> {
    let start = challenge.to_ascii_lowercase().find("scope=")? + "scope=".len();
    let rest = &challenge[start..];
    if let Some(quoted) = rest.strip_prefix('"') {
        return Some(quoted[..quoted.find('"')?].to_owned());
    }
    let end = rest
        .find(|c: char| c == ',' || c == ';' || c.is_whitespace())
        .unwrap_or(rest.len());
    (end > 0).then(|| rest[..end].to_owned())
}

/// The status of a rate limit (429) or a server failure (5xx), with its `Retry-After`.
fn http_status_error(status: StatusCode, headers: &HeaderMap) -> Option<HttpStatusError> {
    if status != StatusCode::TOO_MANY_REQUESTS && !status.is_server_error() {
        return None;
    }
    let retry_after = headers
        .get(RETRY_AFTER)
        .and_then(|value| value.to_str().ok())
        .map(str::to_owned);
    // `new` keeps a `Retry-After` of 128 bytes at most.
    Some(HttpStatusError::new(status.as_u16(), retry_after))
}

/// A `server/discover` sent without a session and refused with a 4xx (not 401/403), as a
/// legacy server or a proxy refuses it: the refusal as an error answer with the request's
/// id (the refuser cannot echo it), so that rmcp's lifecycle can tell it from a failure.
fn discover_refusal(
    sent: &PostSent<'_>,
    status: StatusCode,
    server_error: Option<&ServerJsonRpcMessage>,
    text: &str,
) -> Option<StreamableHttpPostResponse> {
    if sent.session_was_attached
        || !status.is_client_error()
        || matches!(status, StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN)
    {
        return None;
    }
    let ClientJsonRpcMessage::Request(request) = sent.message else {
        return None;
    };
    if !matches!(request.request, ClientRequest::DiscoverRequest(_)) {
        return None;
    }
    let error = match server_error {
        Some(ServerJsonRpcMessage::Error(error)) => error.error.clone(),
        _ => ErrorData::invalid_request(
            format!("server/discover rejected with HTTP {status}: {text}"),
            None,
        ),
    };
    Some(StreamableHttpPostResponse::Json(
        ServerJsonRpcMessage::error(error, Some(request.id.clone())),
        None,
    ))
}

/// Whether the response's body is JSON (`application/json`, parameters aside).
fn is_json(headers: &HeaderMap) -> bool {
    headers
        .get(CONTENT_TYPE)
        .is_some_and(|value| media_type_is(value.as_bytes(), JSON_MIME_TYPE))
}

/// Whether a `Content-Type` names `expected`: its type and subtype compared without case,
/// its parameters (`; charset=utf-8`) aside.
fn media_type_is(value: &[u8], expected: &str) -> bool {
    let essence = value.split(|byte| *byte == b';').next().unwrap_or_default();
    std::str::from_utf8(essence).is_ok_and(|essence| {
        essence
            .trim_matches([' ', '\t'])
            .eq_ignore_ascii_case(expected)
    })
}

/// The whole body, failing once it passes `max_bytes` (at once when its length says so).
async fn read_body(
    mut response: reqwest::Response,
    max_bytes: usize,
) -> Result<Vec<u8>, HttpError> {
    let too_large = || StreamableHttpError::ResponseBodyTooLarge {
        max_size: max_bytes,
    };
    if response
        .content_length()
        .is_some_and(|length| length > max_bytes as u64)
    {
        return Err(too_large());
    }
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await? {
        if chunk.len() > max_bytes - body.len() {
            return Err(too_large());
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

/// The first `max_bytes` of the body, for a message; the rest is not read.
async fn read_prefix(
    mut response: reqwest::Response,
    max_bytes: usize,
) -> Result<Vec<u8>, reqwest::Error> {
    let mut prefix = Vec::new();
    while prefix.len() < max_bytes {
        let Some(chunk) = response.chunk().await? else {
            break;
        };
        let take = chunk.len().min(max_bytes - prefix.len());
        prefix.extend_from_slice(&chunk[..take]);
    }
    Ok(prefix)
}

/// At most `max_bytes` of `bytes` as text (cut at a character's boundary), or `<empty>`.
fn preview(bytes: &[u8], max_bytes: usize) -> String {
    if bytes.is_empty() {
        return "<empty>".to_owned();
    }
    let text = String::from_utf8_lossy(&bytes[..bytes.len().min(max_bytes)]);
    text.trim_end_matches('\u{FFFD}').to_owned()
}

/// Why an event stream's bytes stopped.
#[derive(Debug)]
enum EventBytesError {
    /// They could not be read.
    Read(reqwest::Error),
    /// One event went past the limit.
    TooLarge { max_bytes: usize },
}

impl std::fmt::Display for EventBytesError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Read(error) => write!(f, "reading the event stream failed: {error}"),
            Self::TooLarge { max_bytes } => write!(
                f,
                "an event of the server's stream is larger than the limit of {max_bytes} bytes"
            ),
        }
    }
}

impl std::error::Error for EventBytesError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Read(error) => Some(error),
            Self::TooLarge { .. } => None,
        }
    }
}

/// `bytes` until one event (its lines but comments, each with the newline the parser joins
/// them with) passes `max_bytes`: then an error, and the end. The parser gathers an event
/// whole before it gives it, whatever its size.
fn bounded_events<S, D>(
    bytes: S,
    max_bytes: usize,
) -> impl Stream<Item = Result<D, EventBytesError>> + Send + 'static
where
    S: Stream<Item = Result<D, reqwest::Error>> + Send + 'static,
    D: AsRef<[u8]> + Send + 'static,
{
    let mut size = EventSize::new(max_bytes);
    let mut ended = false;
    bytes
        .map(move |chunk| -> Option<Result<D, EventBytesError>> {
            if ended {
                return None;
            }
            let outcome = match chunk {
                Ok(chunk) if size.add(chunk.as_ref()) => Ok(chunk),
                Ok(_) => Err(EventBytesError::TooLarge { max_bytes }),
                Err(error) => Err(EventBytesError::Read(error)),
            };
            ended = outcome.is_err();
            Some(outcome)
        })
        .take_while(|chunk| std::future::ready(chunk.is_some()))
        .filter_map(std::future::ready)
}

/// The size of the event an event stream is in the middle of.
struct EventSize {
    max_bytes: usize,
    /// The event's finished lines (comments aside), a newline each.
    event: usize,
    /// The line being read.
    line: usize,
    line_is_comment: bool,
    /// The last byte was `\r`: a `\n` right after it ends no other line.
    after_cr: bool,
}

impl EventSize {
    fn new(max_bytes: usize) -> Self {
        Self {
            max_bytes,
            event: 0,
            line: 0,
            line_is_comment: false,
            after_cr: false,
        }
    }

    /// Counts `chunk`; false once an event passes the limit.
    fn add(&mut self, chunk: &[u8]) -> bool {
        for &byte in chunk {
            let after_cr = std::mem::replace(&mut self.after_cr, false);
            match byte {
                b'\n' if after_cr => {}
                b'\r' | b'\n' => {
                    self.after_cr = byte == b'\r';
                    if self.line == 0 {
                        // A blank line ends the event.
                        self.event = 0;
                    } else if !self.line_is_comment {
                        self.event = self.event.saturating_add(self.line + 1);
                    }
                    self.line = 0;
                    self.line_is_comment = false;
                }
                _ => {
                    if self.line == 0 {
                        self.line_is_comment = byte == b':';
                    }
                    self.line += 1;
                }
            }
            // A comment line too is held whole by the parser until it ends.
            if self.event.saturating_add(self.line) > self.max_bytes {
                return false;
            }
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::{EventSize, RequestId, answered_elsewhere, media_type_is, scope_of};

    #[test]
    fn an_answer_to_another_request_is_found_by_its_id_alone() {
        let own = RequestId::Number(2);
        let other = |data: &str| answered_elsewhere(data, &own);
        // Answers to another request, whatever the rest holds or how the id is written.
        let big = format!(
            r#"{{"jsonrpc":"2.0","result":{{"content":[{{"type":"text","text":"{}"}}]}},"id":7}}"#,
            "x".repeat(10_000)
        );
        assert_eq!(other(&big), Some(RequestId::Number(7)));
        assert_eq!(
            other(r#"{"jsonrpc":"2.0","id":"a-1","error":{"code":-1,"message":"no"}}"#),
            Some(RequestId::String("a-1".into()))
        );
        assert_eq!(
            other(r#"{"id" : 3.0 , "result":{}}"#),
            Some(RequestId::Number(3))
        );
        // The call's own answer, however its id is written.
        assert_eq!(other(r#"{"jsonrpc":"2.0","id":2,"result":{}}"#), None);
        assert_eq!(other(r#"{"id":2.0,"result":{}}"#), None);
        // Not an answer, or an id rmcp cannot read: left to rmcp.
        assert_eq!(other(r#"{"id":9,"method":"ping"}"#), None);
        assert_eq!(
            other(r#"{"method":"notifications/progress","params":{}}"#),
            None
        );
        assert_eq!(
            other(r#"{"id":null,"error":{"code":-32700,"message":"parse"}}"#),
            None
        );
        assert_eq!(other(r#"{"id":[1],"result":{}}"#), None);
        assert_eq!(other(r#"{"result":{}}"#), None);
    }

    #[test]
    fn an_event_is_counted_until_its_blank_line() {
        let mut size = EventSize::new(12);
        // "data: 12345\n" is 12 bytes: at the limit, not past it.
        assert!(size.add(b"data: 12345\n\n"));
        assert!(size.add(b"data: 1234"));
        assert!(size.add(b"5\r\n\r\n"));
        // A finished comment is not kept by the parser, and does not count.
        assert!(size.add(b": ping\ndata: 12345\n\n"));
        // Lines add up, a newline each; a comment line counts while it is read.
        assert!(!size.add(b"data: 1\ndata: 2\n"));
        assert!(!EventSize::new(12).add(b": a comment longer than twelve bytes"));
    }

    #[test]
    fn media_types_and_scopes_are_read_as_rmcp_reads_them() {
        assert!(media_type_is(
            b"Application/JSON; charset=utf-8",
            "application/json"
        ));
        assert!(!media_type_is(b"application/jsonl", "application/json"));
        assert_eq!(
            scope_of(r#"Bearer error="insufficient_scope", scope="files:read files:write""#),
            Some("files:read files:write".to_owned())
        );
        assert_eq!(
            scope_of("Bearer SCOPE=read:data, x=1"),
            Some("read:data".to_owned())
        );
        assert_eq!(scope_of("Bearer realm=x"), None);
    }
}
