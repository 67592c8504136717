//! A local HTTP server (axum on 127.0.0.1, port 0) that answers with scripted replies and
//! records every request; and a raw TCP server for answers no HTTP server would send.

use std::collections::{BTreeMap, VecDeque};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{HeaderMap, Method, StatusCode, Uri};
use axum::response::Response;
use axum::serve::ListenerExt;
use futures::StreamExt;
use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use tokio::task::JoinHandle;

/// One scripted answer.
#[derive(Debug, Clone)]
pub struct Reply {
    status: u16,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
    delay: Duration,
    /// A body sent in pieces, each after its pause (instead of `body`).
    pieces: Vec<(Duration, Vec<u8>)>,
    /// Bytes sent again and again after `pieces`, never ending the body.
    forever: Option<Bytes>,
}

/// Server-sent events as an API writes them: `event:` when named, `data:` the JSON.
pub fn sse_text<'a>(events: impl IntoIterator<Item = (Option<&'a str>, Value)>) -> String {
    events
        .into_iter()
        .map(|(name, data)| match name {
            Some(name) => format!("event: {name}\ndata: {data}\n\n"),
            None => format!("data: {data}\n\n"),
        })
        .collect()
}

/// `api`'s stream reporting, after its `200`, the error object `error` (what the API puts
/// under `error`): a Chat Completions chunk or a Gemini element carrying it, Responses'
/// `response.failed` after `response.created`, Anthropic's `error` event after
/// `message_start`.
pub fn error_stream(api: super::Api, error: Value) -> String {
    use serde_json::json;
    match api {
        super::Api::Chat | super::Api::Gemini => sse_text([(None, json!({"error": error}))]),
        super::Api::Responses => sse_text([
            (
                Some("response.created"),
                json!({"type": "response.created", "sequence_number": 0,
                    "response": {"id": "resp_1", "status": "in_progress", "output": []}}),
            ),
            (
                Some("response.failed"),
                json!({"type": "response.failed", "sequence_number": 1,
                    "response": {"id": "resp_1", "object": "response", "status": "failed",
                        "error": error, "output": []}}),
            ),
        ]),
        super::Api::Anthropic => sse_text([
            (
                Some("message_start"),
                json!({"type": "message_start", "message": {"id": "msg_1", "type": "message",
                    "role": "assistant", "model": "claude-sonnet-4-5", "content": [],
                    "stop_reason": null, "stop_sequence": null,
                    "usage": {"input_tokens": 10, "output_tokens": 1}}}),
            ),
            (Some("error"), json!({"type": "error", "error": error})),
        ]),
    }
}

impl Reply {
    /// `value` as a JSON body with `status`.
    pub fn json(status: u16, value: &Value) -> Self {
        Self::raw(status, value.to_string())
    }

    /// `body` as it is, labelled JSON, with `status`.
    pub fn raw(status: u16, body: impl Into<Vec<u8>>) -> Self {
        Self {
            status,
            headers: vec![("content-type".into(), "application/json".into())],
            body: body.into(),
            delay: Duration::ZERO,
            pieces: Vec::new(),
            forever: None,
        }
    }

    /// A `200` event stream of `text` (see [`sse_text`]), sent in pieces of `piece` bytes so
    /// that events and lines are cut across chunks.
    pub fn sse(text: &str, piece: usize) -> Self {
        let pieces = text
            .as_bytes()
            .chunks(piece.max(1))
            .map(|chunk| (Duration::ZERO, chunk.to_vec()))
            .collect();
        Self::streamed(pieces)
    }

    /// A `200` event stream sent as `pieces`, each after its pause.
    pub fn streamed(pieces: Vec<(Duration, Vec<u8>)>) -> Self {
        Self {
            headers: vec![("content-type".into(), "text/event-stream".into())],
            pieces,
            ..Self::raw(200, Vec::new())
        }
    }

    /// A `200` answer labelled `kind` (or with no `Content-Type`) whose body is `opening`,
    /// then `repeated` again and again: a body that never ends.
    pub fn endless(kind: Option<&str>, opening: &[u8], repeated: &[u8]) -> Self {
        Self {
            forever: Some(Bytes::copy_from_slice(repeated)),
            ..Self::streamed(vec![(Duration::ZERO, opening.to_vec())]).content_type(kind)
        }
    }

    /// The same reply labelled `kind` as its `Content-Type`, or with none.
    pub fn content_type(mut self, kind: Option<&str>) -> Self {
        self.headers.retain(|(name, _)| name != "content-type");
        if let Some(kind) = kind {
            self.headers.push(("content-type".into(), kind.into()));
        }
        self
    }

    /// The same reply with `status`.
    pub fn status(mut self, status: u16) -> Self {
        self.status = status;
        self
    }

    /// The same reply with one more header.
    pub fn header(mut self, name: &str, value: &str) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// The same reply sent after `delay`.
    pub fn after(mut self, delay: Duration) -> Self {
        self.delay = delay;
        self
    }
}

/// A request as the server saw it.
#[derive(Debug, Clone)]
pub struct Recorded {
    pub method: String,
    /// The path and query.
    pub path: String,
    /// Header names in lower case.
    pub headers: BTreeMap<String, String>,
    /// The body, parsed as JSON (`Null` when it was not JSON).
    pub body: Value,
}

impl Recorded {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).map(String::as_str)
    }
}

/// Picks the reply for a request before the script does: `Some` answers it out of turn.
pub type OutOfTurn = Arc<dyn Fn(&Recorded) -> Option<Reply> + Send + Sync>;

#[derive(Default)]
struct Script {
    replies: VecDeque<Reply>,
    requests: Vec<Recorded>,
    out_of_turn: Option<OutOfTurn>,
}

type Shared = Arc<Mutex<Script>>;

fn lock(shared: &Shared) -> std::sync::MutexGuard<'_, Script> {
    shared.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A server answering each request with the next scripted reply (a 500 naming the problem
/// when none is left); stopped when dropped.
pub struct MockServer {
    /// `http://127.0.0.1:<port>`.
    pub base: String,
    script: Shared,
    task: JoinHandle<()>,
}

impl MockServer {
    pub async fn start(replies: impl IntoIterator<Item = Reply>) -> Self {
        let script: Shared = Arc::new(Mutex::new(Script {
            replies: replies.into_iter().collect(),
            requests: Vec::new(),
            out_of_turn: None,
        }));
        let app = Router::new()
            .fallback(handle)
            .with_state(Arc::clone(&script));
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let base = format!("http://{}", listener.local_addr().expect("address"));
        // Each piece of a body sent as it comes: with Nagle's algorithm a small piece waits
        // for the client's (delayed) acknowledgement of the last one.
        let listener = listener.tap_io(|socket| {
            let _ = socket.set_nodelay(true);
        });
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Self { base, script, task }
    }

    /// Has `pick` look at each request first: a request it gives a reply for is answered
    /// with that one, the script left as it was (a summary request, which comes whenever
    /// the conversation grows long enough).
    pub fn answer_out_of_turn(
        &self,
        pick: impl Fn(&Recorded) -> Option<Reply> + Send + Sync + 'static,
    ) {
        lock(&self.script).out_of_turn = Some(Arc::new(pick));
    }

    /// Adds `reply` to the end of the script: one server for many requests decided as
    /// they come (a property test's cases).
    pub fn push(&self, reply: Reply) {
        lock(&self.script).replies.push_back(reply);
    }

    /// Every request so far, in order.
    pub fn requests(&self) -> Vec<Recorded> {
        lock(&self.script).requests.clone()
    }

    /// Returns once the server has read `count` requests, keeping the task ready until then:
    /// on a paused clock (`start_paused`), which moves only when no task is ready, no time
    /// passes before that, so a client's time limit cannot run out before its request is read.
    pub async fn hold_the_clock_until_read(&self, count: usize) {
        while lock(&self.script).requests.len() < count {
            tokio::task::yield_now().await;
        }
    }
}

impl Drop for MockServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn handle(
    State(script): State<Shared>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let recorded = Recorded {
        method: method.to_string(),
        path: uri
            .path_and_query()
            .map_or_else(|| uri.path().to_owned(), ToString::to_string),
        headers: headers
            .iter()
            .map(|(name, value)| {
                (
                    name.as_str().to_owned(),
                    String::from_utf8_lossy(value.as_bytes()).into_owned(),
                )
            })
            .collect(),
        body: serde_json::from_slice(&body).unwrap_or(Value::Null),
    };
    let reply = {
        let mut script = lock(&script);
        let out_of_turn = script.out_of_turn.as_ref().and_then(|pick| pick(&recorded));
        script.requests.push(recorded);
        out_of_turn.or_else(|| script.replies.pop_front())
    };
    let reply = reply.unwrap_or_else(|| {
        Reply::raw(
            500,
            r#"{"error": {"message": "the test server has no reply left"}}"#,
        )
    });
    if !reply.delay.is_zero() {
        tokio::time::sleep(reply.delay).await;
    }
    let mut response =
        Response::builder().status(StatusCode::from_u16(reply.status).expect("a status code"));
    for (name, value) in &reply.headers {
        response = response.header(name, value);
    }
    let body = if reply.pieces.is_empty() && reply.forever.is_none() {
        Body::from(reply.body)
    } else {
        let pieces = futures::stream::iter(reply.pieces).then(|(pause, piece)| async move {
            // Not even a zero sleep: it waits for the timer's next tick (a millisecond).
            if !pause.is_zero() {
                tokio::time::sleep(pause).await;
            }
            Ok::<_, std::convert::Infallible>(Bytes::from(piece))
        });
        match reply.forever {
            Some(repeated) => {
                Body::from_stream(pieces.chain(futures::stream::repeat(Ok(repeated))))
            }
            None => Body::from_stream(pieces),
        }
    };
    response.body(body).expect("a valid response")
}

/// A server that reads one request and writes `answer` (status line, headers and whatever
/// body, possibly less than its `Content-Length` says), then closes the connection.
pub async fn raw_server(answer: impl Into<Vec<u8>>) -> (String, JoinHandle<()>) {
    let answer = answer.into();
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let base = format!("http://{}", listener.local_addr().expect("address"));
    let task = tokio::spawn(async move {
        let Ok((mut socket, _)) = listener.accept().await else {
            return;
        };
        // Read the whole request first: closing with unread input would reset the
        // connection, and the client might lose the answer.
        read_request(&mut socket).await;
        let _ = socket.write_all(&answer).await;
        let _ = socket.shutdown().await;
    });
    (base, task)
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack
        .windows(needle.len())
        .position(|window| window == needle)
}

/// An address where nothing listens, and the socket that keeps it so: a port bound without
/// listening, which refuses connections for as long as the socket is held. (A port bound and
/// released could be taken meanwhile by a server of a test running beside.)
pub fn refused_base() -> (String, tokio::net::TcpSocket) {
    let socket = tokio::net::TcpSocket::new_v4().expect("a socket");
    socket
        .bind("127.0.0.1:0".parse().expect("an address"))
        .expect("bind");
    let address = socket.local_addr().expect("address");
    (format!("http://{address}"), socket)
}

/// What a [`connection_server`] does with one connection.
#[derive(Debug, Clone)]
pub enum OnConnection {
    /// Closes it at once, reading nothing (the client's request meets a reset or an end).
    Close,
    /// Reads the request, then closes without a byte of answer: a keep-alive connection the
    /// server had already closed.
    CloseAfterRequest,
    /// Reads the request, writes these bytes (status line, headers and whatever body) and
    /// closes.
    Answer(Vec<u8>),
    /// Writes these bytes as soon as the client's first bytes came (a TLS client's hello),
    /// then waits for the client to close.
    WriteAtOnce(Vec<u8>),
}

/// A server that takes each connection as the next of `script` says (closing the ones
/// past its end), counting them; it stops when the handle is dropped.
pub async fn connection_server(
    script: Vec<OnConnection>,
) -> (String, Arc<std::sync::atomic::AtomicUsize>, AbortOnDrop) {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let base = format!("http://{}", listener.local_addr().expect("address"));
    let accepted = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&accepted);
    let task = tokio::spawn(async move {
        let mut script = script.into_iter();
        loop {
            let Ok((mut socket, _)) = listener.accept().await else {
                return;
            };
            counted.fetch_add(1, Ordering::SeqCst);
            match script.next().unwrap_or(OnConnection::Close) {
                OnConnection::Close => drop(socket),
                OnConnection::CloseAfterRequest => {
                    read_request(&mut socket).await;
                    let _ = socket.shutdown().await;
                }
                OnConnection::Answer(answer) => {
                    read_request(&mut socket).await;
                    let _ = socket.write_all(&answer).await;
                    let _ = socket.shutdown().await;
                }
                OnConnection::WriteAtOnce(bytes) => {
                    let mut buffer = [0u8; 4096];
                    let _ = socket.read(&mut buffer).await;
                    let _ = socket.write_all(&bytes).await;
                    // Closing with the client's bytes unread would reset the connection
                    // before the client read these.
                    while matches!(socket.read(&mut buffer).await, Ok(1..)) {}
                }
            }
        }
    });
    (base, accepted, AbortOnDrop(task))
}

/// A task aborted when this is dropped.
pub struct AbortOnDrop(JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Reads one request, head and body (by its `Content-Length`), from `socket`.
async fn read_request(socket: &mut tokio::net::TcpStream) {
    let mut request = Vec::new();
    let mut buffer = [0u8; 4096];
    loop {
        let Ok(read) = socket.read(&mut buffer).await else {
            return;
        };
        if read == 0 {
            return;
        }
        request.extend_from_slice(&buffer[..read]);
        if let Some(end) = find(&request, b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&request[..end]).to_ascii_lowercase();
            let length: usize = head
                .lines()
                .find_map(|line| line.strip_prefix("content-length:"))
                .and_then(|n| n.trim().parse().ok())
                .unwrap_or(0);
            if request.len() >= end + 4 + length {
                return;
            }
        }
    }
}
