//! [`LineTransport`]: JSON-RPC messages one a line over any byte stream (stdio, a child's
//! pipes, an in-memory duplex), read within [`JsonLimits`].
//!
//! Unlike a transport that drops what it cannot read, a server-side `LineTransport` answers
//! it, as JSON-RPC asks, and keeps serving: a line that is not JSON gets `-32700` (parse
//! error), one too large, too deep, holding too many values or one of serde_json's private
//! keys gets `-32600` (too large, too many values, a private key) or `-32700` (too deep)
//! naming the limit, and JSON that
//! is not a message gets `-32600` (invalid request), with the request's id when it can be
//! read; an answer of the client's it cannot read (a `result` or an `error` under an id, no
//! `method`) is logged, not answered, as JSON-RPC never answers an answer. A client-side one
//! gives the call that an unreadable answer answers an error naming the problem, rather than
//! leaving the call to wait for its time limit, and answers an unreadable request of the
//! server's (one whose id it can read) as a server does.
//!
//! A server-side one also keeps from rmcp's handshake what it would end the connection over:
//! a notification or an answer of the client's before the lifecycle opens (`initialize`, or
//! a request carrying the 2026-07-28 revision's metadata) is logged and dropped, as JSON-RPC
//! answers neither, rather than end serving (on stdio, the process).

use std::marker::PhantomData;
use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{ProtocolVersion, RequestMetaObject};
use rmcp::service::{RxJsonRpcMessage, ServiceRole, TxJsonRpcMessage};
use rmcp::transport::Transport;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::{Mutex, Semaphore};

use super::json_limits::{INVALID_REQUEST, JsonLimits, PARSE_ERROR};
use super::unreadable::{Envelope, envelope_problem, is_request_id, unreadable_answer};

/// How much of a line over the size limit is kept to read its envelope (the id comes first
/// in what rmcp and the Python SDK write).
const HEAD_BYTES: usize = 4096;

/// How long closing waits for a write in progress and for the last bytes to go out. A peer
/// that stops reading (a client that closed the server's stdin and never reads its stdout)
/// leaves a write waiting for ever, and it holds the writer: closing would wait for it, and
/// serving would never end. A peer that reads gets what is left well within it.
const CLOSE_WAIT: Duration = Duration::from_secs(2);

/// How many answers to unreadable messages may wait to be written. Each waits in a task of
/// its own; a peer that sends unreadable requests and never reads (its input pipe full)
/// would otherwise have one task held for each line it sends, two bytes (`x` and a newline)
/// buying a task and its answer. At the bound, reading waits for an answer to go out (as
/// rmcp's own answers hold its reading), at most [`ANSWERS_STALLED`]: past that the peer is
/// taken not to read, and answers are not made (logged) until one goes out, so that its
/// end of input is still seen.
const MAX_WAITING_ANSWERS: usize = 64;

/// How long reading waits, with [`MAX_WAITING_ANSWERS`] answers waiting, for one to go out.
const ANSWERS_STALLED: Duration = Duration::from_secs(2);

/// The most characters of an unreadable line [`UnreadableLines`] quotes.
const MAX_QUOTED_LINE_CHARS: usize = 200;

/// The lines a client's transport read that are not JSON-RPC messages (neither a request
/// nor an answer: not JSON, or JSON of another shape), which it skips: how many, and the
/// start of the first, for the error of a connection that fails meanwhile. A server that
/// writes logs or a banner to its stdout otherwise only times out, or closes, without a
/// word of what it wrote.
#[derive(Clone, Debug, Default)]
pub(crate) struct UnreadableLines(Arc<std::sync::Mutex<UnreadableSeen>>);

#[derive(Debug, Default)]
struct UnreadableSeen {
    count: usize,
    /// The first line's start, quoted and cut.
    first: Option<String>,
}

impl UnreadableLines {
    fn record(&self, line: &[u8]) {
        let mut seen = self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        seen.count = seen.count.saturating_add(1);
        if seen.first.is_none() {
            // No character takes more than 4 bytes: one past the quote's length is kept, so
            // that a longer line is cut (and marked) by characters, not bytes.
            let start = &line[..line.len().min((MAX_QUOTED_LINE_CHARS + 1) * 4)];
            let text = String::from_utf8_lossy(start);
            let cut = toolsmith_core::provider::cut_to(&text, MAX_QUOTED_LINE_CHARS);
            seen.first = Some(format!("{cut:?}"));
        }
    }

    /// What was read that is not a message, as a failed connection's error says it, `None`
    /// when there was nothing of the kind: for a server in a child process, which wrote it
    /// to its stdout.
    pub(crate) fn account(&self) -> Option<String> {
        self.account_on("its stdout")
    }

    /// [`account`](Self::account) for a server that wrote it to `channel` ("its stdout",
    /// "the connection").
    pub(crate) fn account_on(&self, channel: &str) -> Option<String> {
        let seen = self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let first = seen.first.as_ref()?;
        Some(match seen.count {
            1 => format!(
                "the server wrote 1 line that is not a JSON-RPC message to {channel} (a \
                 server writes only those there): {first}"
            ),
            count => format!(
                "the server wrote {count} lines that are not JSON-RPC messages to {channel} \
                 (a server writes only those there), the first: {first}"
            ),
        })
    }
}

/// Newline-delimited JSON-RPC over a reader and a writer.
///
/// ```
/// use rmcp::RoleServer;
/// use toolsmith::harness::mcp::{JsonLimits, LineTransport};
///
/// let (client_end, server_end) = tokio::io::duplex(64 * 1024);
/// let (read, write) = tokio::io::split(server_end);
/// let transport: LineTransport<RoleServer, _, _> =
///     LineTransport::new(read, write).with_limits(JsonLimits::default().with_max_bytes(1 << 20));
/// # drop((transport, client_end));
/// ```
pub struct LineTransport<Role, R, W> {
    reader: BufReader<R>,
    writer: Arc<Mutex<Option<W>>>,
    /// The line read so far (kept across cancelled reads).
    line: Vec<u8>,
    /// Dropping the rest of a line that went over the limit.
    discarding: bool,
    /// The first [`HEAD_BYTES`] of the last line that went over the limit.
    head: Vec<u8>,
    /// A permit for each answer to an unreadable message that may wait to be written.
    waiting_answers: Arc<Semaphore>,
    /// The answers waiting stayed at their bound for [`ANSWERS_STALLED`]: reading no longer
    /// waits on them (until one goes out).
    answers_stalled: bool,
    /// A server's lifecycle has not opened yet: rmcp's handshake still reads, and takes
    /// anything but a request for a broken handshake ([`opening_effect`]).
    opening: bool,
    limits: JsonLimits,
    /// Where lines that are not messages are counted, if anywhere.
    unreadable_lines: Option<UnreadableLines>,
    _role: PhantomData<fn() -> Role>,
}

impl<Role, R, W> std::fmt::Debug for LineTransport<Role, R, W> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LineTransport")
            .field("limits", &self.limits)
            .field("buffered", &self.line.len())
            .finish_non_exhaustive()
    }
}

/// What one bounded read of a line gave.
enum LineRead {
    Line,
    Oversized,
    Eof,
}

impl<Role: ServiceRole, R, W> LineTransport<Role, R, W>
where
    R: AsyncRead + Unpin + Send,
    W: AsyncWrite + Unpin + Send + 'static,
    Role: 'static,
{
    /// A transport reading `read` and writing `write`, within its role's default limits: a
    /// server's [`JsonLimits::for_server`] (its clients' messages are mostly tool arguments,
    /// and it reads from many at once), a client's [`JsonLimits::default`].
    pub fn new(read: R, write: W) -> Self {
        Self {
            reader: BufReader::new(read),
            writer: Arc::new(Mutex::new(Some(write))),
            line: Vec::new(),
            discarding: false,
            head: Vec::new(),
            waiting_answers: Arc::new(Semaphore::new(MAX_WAITING_ANSWERS)),
            answers_stalled: false,
            opening: !Role::IS_CLIENT,
            limits: if Role::IS_CLIENT {
                JsonLimits::default()
            } else {
                JsonLimits::for_server()
            },
            unreadable_lines: None,
            _role: PhantomData,
        }
    }

    /// The same transport within `limits`.
    #[must_use]
    pub fn with_limits(mut self, limits: JsonLimits) -> Self {
        self.limits = limits;
        self
    }

    /// The same transport, counting the lines it reads that are not messages in `lines`.
    #[must_use]
    pub(crate) fn with_unreadable_lines(mut self, lines: UnreadableLines) -> Self {
        self.unreadable_lines = Some(lines);
        self
    }

    /// Reads one line into `self.line` without letting it grow past the limit (the line's
    /// end, `\n` or `\r\n`, not counted). Cancel-safe: what was read stays in `self.line`
    /// (or `self.discarding`) for the next call. A last line the peer ended with no newline
    /// before closing is a line all the same: it is answered, not dropped.
    async fn read_line(&mut self) -> std::io::Result<LineRead> {
        loop {
            let available = self.reader.fill_buf().await?;
            if available.is_empty() {
                if self.discarding || self.line.is_empty() {
                    return Ok(LineRead::Eof);
                }
                return Ok(LineRead::Line);
            }
            let newline = memchr::memchr(b'\n', available);
            let take = newline.map_or(available.len(), |at| at + 1);
            // The bytes of the message itself: a `\r` before the `\n`, or last in what has
            // come so far (it may be followed by one), is the line's end.
            let cr_before = |at: usize| match at.checked_sub(1) {
                Some(before) => available[before] == b'\r',
                None => self.line.last() == Some(&b'\r'),
            };
            let ending = match newline {
                Some(at) => 1 + usize::from(cr_before(at)),
                None => usize::from(cr_before(take)),
            };
            let message_bytes = self.line.len() + take - ending;
            let outcome = if self.discarding {
                if newline.is_some() {
                    self.discarding = false;
                }
                None
            } else if message_bytes > self.limits.max_bytes {
                self.head.clear();
                self.head
                    .extend_from_slice(&self.line[..self.line.len().min(HEAD_BYTES)]);
                let room = HEAD_BYTES - self.head.len();
                self.head.extend_from_slice(&available[..take.min(room)]);
                self.line.clear();
                self.discarding = newline.is_none();
                Some(LineRead::Oversized)
            } else {
                self.line.extend_from_slice(&available[..take]);
                newline.map(|_| LineRead::Line)
            };
            self.reader.consume(take);
            if let Some(outcome) = outcome {
                return Ok(outcome);
            }
        }
    }

    /// Writes one line (a message) and flushes it.
    async fn write_line(writer: &Mutex<Option<W>>, mut bytes: Vec<u8>) -> std::io::Result<()> {
        bytes.push(b'\n');
        let mut writer = writer.lock().await;
        let Some(writer) = writer.as_mut() else {
            return Err(std::io::Error::new(
                std::io::ErrorKind::NotConnected,
                "the transport is closed",
            ));
        };
        writer.write_all(&bytes).await?;
        writer.flush().await
    }

    /// What becomes of an unreadable message (`id` is the one read with it, if any). A server
    /// answers it, with the request's id when its envelope shows one, but for an answer of
    /// the client's (logged only). A client gives the request it answers an error saying why
    /// (the message to return from `receive`), answers it as a server does when it is a
    /// request with an id, and logs anything else.
    fn unreadable(
        &self,
        id: Value,
        code: i64,
        message: String,
        envelope: &Envelope,
    ) -> Option<RxJsonRpcMessage<Role>>
    where
        RxJsonRpcMessage<Role>: serde::de::DeserializeOwned,
    {
        if Role::IS_CLIENT {
            if let Some(request) = envelope.answered_request() {
                let error = unreadable_answer(request.clone(), code, &message);
                return match serde_json::from_value(error) {
                    Ok(error) => Some(error),
                    Err(error) => {
                        tracing::warn!(%error, %message, "could not hand an unreadable answer to its call");
                        None
                    }
                };
            }
            // A request of the server's is answered below, as a server answers the client's
            // (unanswered, the server would wait for it); anything else is only logged.
            if !(envelope.has_method && envelope.id.is_some()) {
                tracing::warn!(code, %message, "an unreadable message from the server, neither an answer nor a request");
                return None;
            }
        }
        // JSON-RPC never answers an answer: one of the client's that the server cannot read
        // is only logged, as rmcp drops an answer to no request of its own. An error under
        // its id would answer the client's own request of that id.
        if envelope.answered_request().is_some() {
            tracing::warn!(code, %message, "an unreadable answer from the client, not answered");
            return None;
        }
        let id = match (id, &envelope.id) {
            (Value::Null, Some(request)) if envelope.has_method => request.clone(),
            (id, _) => id,
        };
        self.answer(id, code, message);
        None
    }

    /// Whether a message read (`body`) goes to rmcp: always, once a server's lifecycle has
    /// opened; before, not a notification or an answer, which rmcp's handshake would end the
    /// connection over (JSON-RPC answers neither, so it is only logged).
    fn hand_over(&mut self, body: &[u8]) -> bool {
        if !self.opening {
            return true;
        }
        match opening_effect(body) {
            OpeningEffect::Wait => true,
            OpeningEffect::Open => {
                self.opening = false;
                true
            }
            OpeningEffect::Ignore(what) => {
                tracing::warn!("ignoring {what} of the client's sent before `initialize`");
                false
            }
        }
    }

    /// With [`MAX_WAITING_ANSWERS`] answers waiting, waits for one to go out, at most
    /// [`ANSWERS_STALLED`] (then not again until one has gone out): a peer that reads takes
    /// them at once (a burst of lines read from the buffer outpaces their writing), one that
    /// does not holds no more.
    async fn wait_for_answers_to_go_out(&mut self) {
        if self.waiting_answers.available_permits() > 0 {
            self.answers_stalled = false;
            return;
        }
        if self.answers_stalled {
            return;
        }
        let one_out = tokio::time::timeout(ANSWERS_STALLED, self.waiting_answers.acquire()).await;
        if one_out.is_err() {
            tracing::warn!(
                "{MAX_WAITING_ANSWERS} answers to unreadable messages have waited {ANSWERS_STALLED:?} for the peer to read them: not answering more until it does"
            );
            self.answers_stalled = true;
        }
    }

    /// Answers an unreadable message. The answer is written by a task of its own: `receive`
    /// is polled in a `select!` and may be dropped at any await, which must not lose the
    /// answer or cut it in half.
    fn answer(&self, id: Value, code: i64, message: String) {
        tracing::debug!(code, %message, "unreadable JSON-RPC message");
        let reply = json!({
            "jsonrpc": "2.0",
            "id": id,
            "error": {"code": code, "message": message},
        });
        let Ok(permit) = Arc::clone(&self.waiting_answers).try_acquire_owned() else {
            tracing::debug!(
                code,
                %message,
                "not answering an unreadable message: {MAX_WAITING_ANSWERS} answers wait for the peer to read them"
            );
            return;
        };
        let bytes = serde_json::to_vec(&reply).unwrap_or_default();
        let writer = Arc::clone(&self.writer);
        let write = async move {
            if let Err(error) = Self::write_line(&writer, bytes).await {
                tracing::debug!(%error, "could not answer an unreadable message");
            }
            drop(permit);
        };
        match tokio::runtime::Handle::try_current() {
            Ok(runtime) => drop(runtime.spawn(write)),
            Err(_) => tracing::debug!("no runtime to answer an unreadable message on"),
        }
    }
}

/// What one line holds.
enum Parsed<T> {
    Message(T),
    /// Blank, or an unreadable notification (which JSON-RPC never answers).
    Skip,
    /// Unreadable: answer with this error.
    Answer {
        id: Value,
        code: i64,
        message: String,
    },
}

/// Reads one line as a message within `limits`, or says how to answer it.
fn parse<T: serde::de::DeserializeOwned>(body: &[u8], limits: &JsonLimits) -> Parsed<T> {
    use serde_json::error::Category;
    if body.iter().all(u8::is_ascii_whitespace) {
        return Parsed::Skip;
    }
    // Before rmcp's reader, which recurses once per level and buffers every value.
    if let Some((code, message)) = limits.refusal(body) {
        return Parsed::Answer {
            id: Value::Null,
            code,
            message,
        };
    }
    let error = match serde_json::from_slice::<T>(body) {
        Ok(message) => return Parsed::Message(message),
        Err(error) => error,
    };
    match error.classify() {
        Category::Syntax | Category::Eof | Category::Io => Parsed::Answer {
            id: Value::Null,
            code: PARSE_ERROR,
            message: format!("Parse error: {error}"),
        },
        Category::Data => {
            let value: Option<Value> = serde_json::from_slice(body).ok();
            let is_notification = value
                .as_ref()
                .is_some_and(|v| v.get("method").is_some() && v.get("id").is_none());
            if is_notification {
                return Parsed::Skip;
            }
            let problem = value
                .as_ref()
                .and_then(envelope_problem)
                .unwrap_or_else(|| error.to_string());
            Parsed::Answer {
                id: request_id(value.as_ref()).unwrap_or(Value::Null),
                code: INVALID_REQUEST,
                message: format!("Invalid Request: {problem}"),
            }
        }
    }
}

/// What a message read before a server's lifecycle opened does to rmcp's handshake.
#[derive(Debug, PartialEq)]
enum OpeningEffect {
    /// Read by the handshake, which goes on waiting: a `ping`, a `server/discover`, or a
    /// request rmcp answers with an error (without the 2026-07-28 revision's metadata).
    Wait,
    /// Opens the lifecycle: `initialize`, or a request carrying the 2026-07-28 revision's
    /// metadata (which rmcp serves inline; one of a revision it refuses counts too, so that
    /// no message is dropped once the lifecycle may have opened).
    Open,
    /// A notification or an answer, which the handshake takes for a broken one and ends the
    /// connection over: not handed to rmcp.
    Ignore(&'static str),
}

/// The members of a message that say what it does to rmcp's handshake. `params` is read as
/// any value: a notification's or answer's params of a shape of its own must not keep it
/// from being told apart (it would be handed to the handshake, which ends over it).
#[derive(serde::Deserialize)]
struct OpeningHead {
    #[serde(default)]
    id: Option<serde::de::IgnoredAny>,
    #[serde(default)]
    method: Option<String>,
    #[serde(default)]
    params: Option<Value>,
}

/// What the message `body` (read as a message already) does to rmcp's handshake, as its
/// `serve_server` reads it: a ping or a discovery is answered and waited past, `initialize`
/// opens the lifecycle, another request opens it when its `_meta` has what the 2026-07-28
/// revision requires (else it is answered with an error and waited past), and anything else
/// ends the connection.
fn opening_effect(body: &[u8]) -> OpeningEffect {
    let Ok(head) = serde_json::from_slice::<OpeningHead>(body) else {
        return OpeningEffect::Wait;
    };
    match (head.method.as_deref(), head.id.is_some()) {
        (None, _) => OpeningEffect::Ignore("an answer"),
        (Some(_), false) => OpeningEffect::Ignore("a notification"),
        (Some("initialize"), true) => OpeningEffect::Open,
        (Some("ping" | "server/discover"), true) => OpeningEffect::Wait,
        (Some(_), true) => {
            // Metadata that does not read as such is missing what the revision requires.
            let meta = head
                .params
                .and_then(|mut params| params.get_mut("_meta").map(Value::take))
                .and_then(|meta| serde_json::from_value::<RequestMetaObject>(meta).ok())
                .unwrap_or_default();
            if meta
                .missing_required_keys(&ProtocolVersion::V_2026_07_28)
                .is_empty()
            {
                OpeningEffect::Open
            } else {
                OpeningEffect::Wait
            }
        }
    }
}

/// The line without its `\r\n` / `\n` and a leading UTF-8 byte order mark.
fn trimmed(line: &[u8]) -> &[u8] {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line)
}

/// The `id` of a message that could not be read as any known message, when it has a valid
/// one (a string or an integer).
fn request_id(message: Option<&Value>) -> Option<Value> {
    let id = message?.get("id")?;
    is_request_id(id).then(|| id.clone())
}

impl<Role, R, W> Transport<Role> for LineTransport<Role, R, W>
where
    Role: ServiceRole,
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
    RxJsonRpcMessage<Role>: serde::de::DeserializeOwned,
    TxJsonRpcMessage<Role>: serde::Serialize,
{
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<Role>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let writer = Arc::clone(&self.writer);
        let bytes = serde_json::to_vec(&item);
        async move {
            let bytes = bytes.map_err(std::io::Error::other)?;
            Self::write_line(&writer, bytes).await
        }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<Role>> {
        loop {
            // Before the line is read, so that a `receive` dropped here loses nothing.
            self.wait_for_answers_to_go_out().await;
            let (id, code, message, envelope) = match self.read_line().await {
                Ok(LineRead::Line) => {
                    let line = std::mem::take(&mut self.line);
                    let body = trimmed(&line);
                    let unreadable = match parse::<RxJsonRpcMessage<Role>>(body, &self.limits) {
                        Parsed::Message(message) if self.hand_over(body) => Ok(message),
                        Parsed::Message(_) => Err(None),
                        Parsed::Skip => Err(None),
                        Parsed::Answer { id, code, message } => {
                            let envelope = Envelope::of(body);
                            if let Some(lines) = &self.unreadable_lines
                                && !envelope.has_method
                                && !envelope.has_outcome
                            {
                                lines.record(body);
                            }
                            Err(Some((id, code, message, envelope)))
                        }
                    };
                    // Keep the buffer's capacity for the next line.
                    self.line = line;
                    self.line.clear();
                    match unreadable {
                        Ok(message) => return Some(message),
                        Err(None) => continue,
                        Err(Some(unreadable)) => unreadable,
                    }
                }
                Ok(LineRead::Oversized) => {
                    let message = format!(
                        "Invalid Request: the message is larger than the limit of {} bytes",
                        self.limits.max_bytes
                    );
                    let envelope = Envelope::of(trimmed(&self.head));
                    (Value::Null, INVALID_REQUEST, message, envelope)
                }
                Ok(LineRead::Eof) => return None,
                Err(error) => {
                    tracing::debug!(%error, "reading the transport failed");
                    return None;
                }
            };
            if let Some(error) = self.unreadable(id, code, message, &envelope) {
                return Some(error);
            }
        }
    }

    /// Closes the writer, waiting at most 2 s (`CLOSE_WAIT`) for a write in progress and the
    /// last bytes: past it, the close fails with [`TimedOut`](std::io::ErrorKind::TimedOut)
    /// and the writer is left to be dropped with the transport.
    async fn close(&mut self) -> Result<(), Self::Error> {
        let closing = async {
            let writer = self.writer.lock().await.take();
            if let Some(mut writer) = writer {
                writer.shutdown().await?;
            }
            Ok(())
        };
        tokio::time::timeout(CLOSE_WAIT, closing)
            .await
            .unwrap_or_else(|_| {
                Err(std::io::Error::new(
                    std::io::ErrorKind::TimedOut,
                    format!(
                        "the peer read none of what was written for {CLOSE_WAIT:?}: closing \
                         without the rest"
                    ),
                ))
            })
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use rmcp::RoleClient;
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

    use super::*;

    #[test]
    fn unreadable_lines_quote_the_first_cut_by_characters() {
        let lines = UnreadableLines::default();
        assert_eq!(lines.account(), None);
        let mut first = "é".repeat(300).into_bytes();
        first.push(b'"');
        lines.record(&first);
        lines.record(b"second");
        let account = lines.account().unwrap();
        assert!(
            account.ends_with(&format!("the first: \"{}…\"", "é".repeat(200))),
            "{account}"
        );
        assert!(account.contains("wrote 2 lines"), "{account}");
        // Quoted as Rust writes a string: a quote or a control character cannot end it.
        let odd = UnreadableLines::default();
        odd.record(b"say \"hi\"\x1b[31m");
        assert!(
            odd.account()
                .unwrap()
                .ends_with(r#": "say \"hi\"\u{1b}[31m""#),
            "{:?}",
            odd.account()
        );
    }

    /// A server's transport made without limits reads within a server's (as `serve_stdio`
    /// does), a client's within a client's: a server built on `LineTransport::new` read
    /// 16 times the values in a message that a server's default allows.
    #[test]
    fn a_transports_default_limits_are_its_roles() {
        let (server, client) = tokio::io::duplex(64);
        let (read, write) = tokio::io::split(server);
        let serving: LineTransport<rmcp::RoleServer, _, _> = LineTransport::new(read, write);
        assert_eq!(
            serving.limits.max_values,
            JsonLimits::for_server().max_values
        );
        let (read, write) = tokio::io::split(client);
        let calling: LineTransport<RoleClient, _, _> = LineTransport::new(read, write);
        assert_eq!(calling.limits.max_values, JsonLimits::default().max_values);
    }

    /// Before the lifecycle opens, only what rmcp's handshake would end the connection over
    /// is kept from it; `initialize`, or a request with the 2026-07-28 revision's metadata,
    /// opens it (after which a cancellation of that request must reach rmcp).
    #[test]
    fn only_what_would_break_the_handshake_is_kept_from_it() {
        let effect = |message: Value| opening_effect(message.to_string().as_bytes());
        let inline_meta = json!({
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {},
        });
        assert_eq!(
            effect(json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}})),
            OpeningEffect::Open
        );
        assert_eq!(
            effect(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list",
                "params": {"_meta": inline_meta}})),
            OpeningEffect::Open
        );
        for waited_past in [
            json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}),
            json!({"jsonrpc": "2.0", "id": "d", "method": "server/discover",
                "params": {"_meta": inline_meta}}),
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28"}}}),
        ] {
            assert_eq!(
                effect(waited_past.clone()),
                OpeningEffect::Wait,
                "{waited_past}"
            );
        }
        for (ignored, what) in [
            (
                json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
                "a notification",
            ),
            (
                json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                    "params": {"requestId": 1, "_meta": inline_meta}}),
                "a notification",
            ),
            (
                json!({"jsonrpc": "2.0", "id": 1, "result": {}}),
                "an answer",
            ),
            // Params of shapes of their own still leave it a notification.
            (
                json!({"jsonrpc": "2.0", "method": "notifications/initialized",
                    "params": {"_meta": 5}}),
                "a notification",
            ),
            (
                json!({"jsonrpc": "2.0", "method": "notifications/custom", "params": [1, 2]}),
                "a notification",
            ),
            (
                json!({"jsonrpc": "2.0", "id": 1, "error": {"code": 1, "message": "x"}}),
                "an answer",
            ),
        ] {
            assert_eq!(
                effect(ignored.clone()),
                OpeningEffect::Ignore(what),
                "{ignored}"
            );
        }
    }

    /// A request of the server's that the client cannot read is answered with an error
    /// under its id, as the server answers the client's: the server does not wait for ever.
    #[tokio::test]
    async fn a_client_answers_a_server_request_it_cannot_read() {
        let (client_end, server_end) = tokio::io::duplex(1 << 16);
        let (read, write) = tokio::io::split(client_end);
        let mut transport: LineTransport<RoleClient, _, _> =
            LineTransport::new(read, write).with_limits(JsonLimits::default().with_max_bytes(1024));
        let receiving = tokio::spawn(async move { transport.receive().await.is_some() });
        let (server_read, mut server_write) = tokio::io::split(server_end);
        let mut server_read = BufReader::new(server_read);
        for (id, line) in [
            (
                "s1",
                r#"{"jsonrpc":"2.0","id":"s1","method":"ping","params":5}"#.to_owned(),
            ),
            (
                "s2",
                format!(
                    r#"{{"jsonrpc":"2.0","id":"s2","method":"ping","params":{{"x":"{}"}}}}"#,
                    "y".repeat(2000)
                ),
            ),
            (
                "s3",
                format!(
                    r#"{{"jsonrpc":"2.0","id":"s3","method":"ping","params":{{"x":{}1{}}}}}"#,
                    "[".repeat(100),
                    "]".repeat(100)
                ),
            ),
        ] {
            server_write
                .write_all(format!("{line}\n").as_bytes())
                .await
                .unwrap();
            let mut answer = String::new();
            tokio::time::timeout(Duration::from_secs(5), server_read.read_line(&mut answer))
                .await
                .unwrap_or_else(|_| panic!("{id} was not answered"))
                .unwrap();
            let answer: Value = serde_json::from_str(&answer).unwrap();
            assert_eq!(answer["id"], id, "{answer}");
            assert!(answer["error"]["code"].is_i64(), "{answer}");
        }
        receiving.abort();
    }
}
