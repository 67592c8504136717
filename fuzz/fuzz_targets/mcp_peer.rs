//! The fuzzer as an MCP peer, both ways, through every entrance a peer's bytes have:
//!
//! - a client of an `McpServer` (a small ToolShed: a `#[tool_fn]` that echoes its text and
//!   an `FnTool` of a strict hand-written schema that echoes its arguments), over the line
//!   transport (an in-memory duplex, a connection per input) and over streamable HTTP (the
//!   axum `router`, called in process, a session per input): after a valid handshake
//!   (mostly) the input's messages, built structurally as JSON-RPC (requests, notifications,
//!   answers to requests never sent, batches, duplicate ids, cancellations, huge numbers,
//!   deep nesting, serde_json's private keys) or arbitrary bytes;
//! - a server to an `McpClient` (streamable HTTP on 127.0.0.1, connected once): `tools/call`
//!   and, when the input asks, `tools/list` are answered with the fuzzer's messages as events
//!   (server requests and notifications interleaved), then its answer, structured or not, as
//!   an event stream or one JSON body.
//!
//! Asserts, beyond no panic: every input ends within a few seconds (a hang is a panic, not
//! libFuzzer's timeout); the server answers only in JSON-RPC, and after a handshake every
//! message with a readable request id and a method is answered under that id exactly once
//! (a request's id repeated, or named by a cancellation, at most as many times as sent), and
//! nothing is answered under an id never sent; a tool never runs on arguments its schema
//! refuses (the strict tool checks what it got against `jsonschema`, as core compiles
//! schemas); a client's call (through a `ToolCallManager`, which enforces the bridge's time
//! limit: the bridge's own `execute` has none) ends with its result or a `ToolError` naming
//! the tool, within its time limit, and a readable `CallToolResult` that answers it is kept
//! as `mcp_mapping` asserts (text blocks one a line; `isError` an error naming the tool).
//!
//! `MCP_PEER_TIMEOUT_MS` sets the client's call time limit (default 500 ms): the answers the
//! fuzzer withholds cost that much each.

#![no_main]

use std::collections::HashMap;
use std::sync::{Arc, LazyLock, Mutex};
use std::time::Duration;

use arbitrary::Arbitrary;
use axum::body::Body;
use axum::http::{Request, StatusCode, header};
use axum::response::IntoResponse;
use libfuzzer_sys::fuzz_target;
use rmcp::model::{CallToolResult, ClientJsonRpcMessage, ContentBlock, ServerResult};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use toolsmith::harness::mcp::{
    JsonLimits, McpClient, McpClientOptions, McpHttpOptions, McpNames, McpServer, McpTransport,
    router, serve_until_closed,
};
use toolsmith::{
    Args, FnTool, ToolArgs, ToolArguments, ToolCallManager, ToolCallRequest, ToolCallResult,
    ToolError, UserModelContent, tool_fn,
};
use tower::ServiceExt as _;

/// How long a peer's answers may take before the input counts as a hang.
const ANSWER_WAIT: Duration = Duration::from_secs(5);

/// Member names: the tools' arguments, MCP's fields, a few others.
const KEYS: &[&str] = &[
    "text",
    "times",
    "size",
    "kind",
    "tags",
    "opts",
    "deep",
    "name",
    "arguments",
    "content",
    "type",
    "isError",
    "structuredContent",
    "_meta",
    "progressToken",
    "requestId",
    "reason",
    "cursor",
    "tools",
    "inputSchema",
    "protocolVersion",
    "capabilities",
    "clientInfo",
    "task",
    "a",
    "",
];

/// Method names, MCP's both ways and one of none.
const METHODS: &[&str] = &[
    "tools/call",
    "tools/list",
    "ping",
    "initialize",
    "notifications/initialized",
    "notifications/cancelled",
    "notifications/progress",
    "notifications/message",
    "notifications/tools/list_changed",
    "notifications/roots/list_changed",
    "resources/list",
    "prompts/list",
    "logging/setLevel",
    "completion/complete",
    "roots/list",
    "sampling/createMessage",
    "elicitation/create",
    "tasks/get",
    "no/such",
];

const TOOLS: &[&str] = &["echo", "strict", "missing", ""];

const VERSIONS: &[&str] = &[
    "2025-06-18",
    "2025-03-26",
    "2024-11-05",
    "2025-11-25",
    "1999-01-01",
];

/// What the strict tool's arguments must be (its schema is this).
fn strict_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "size": {"type": "integer", "minimum": 1, "maximum": 100},
            "kind": {"enum": ["a", "b", 3]},
            "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 3},
            "opts": {"type": "object", "properties": {"deep": {"type": "boolean"}},
                     "required": ["deep"], "additionalProperties": false},
            "name": {"type": "string", "maxLength": 5}
        },
        "required": ["size"],
        "additionalProperties": false
    })
}

/// Echoes its text.
#[tool_fn]
fn echo(
    /// What to echo.
    text: String,
    /// How many times, if more than once.
    times: Option<u8>,
) -> String {
    text.repeat(usize::from(times.unwrap_or(1).min(3)))
}

/// Arguments a tool ran on that its schema refuses (the strict tool's check).
static REFUSED_BUT_RAN: Mutex<Vec<String>> = Mutex::new(Vec::new());

// ---------------------------------------------------------------- the fuzzer's messages

/// JSON built structurally; markers stand for what `Value` cannot hold (huge numbers).
#[derive(Debug, Clone, Arbitrary)]
enum Json {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(u8),
    Text(String),
    Array(Vec<Json>),
    Object(Vec<(u8, Json)>),
    /// A number past `u64` and `f64` (`1` and this many groups of zeros, or an exponent).
    Huge(u8),
    /// `{"$serde_json::private::RawValue": "<the inner JSON's text>"}` (or `Number`'s key).
    Private(bool, Box<Json>),
    /// This many arrays (or objects) around the inner value.
    Deep(u16, bool, Box<Json>),
}

const HUGE_MARK: &str = "\u{1}huge";

/// How deep the fuzzer's JSON may nest in all (its own recursion, not the server's, is bounded).
const JSON_BUDGET: usize = 300;

impl Json {
    fn value(&self) -> Value {
        self.value_within(JSON_BUDGET)
    }

    fn value_within(&self, budget: usize) -> Value {
        let Some(budget) = budget.checked_sub(1) else {
            return Value::Null;
        };
        match self {
            Json::Null => Value::Null,
            Json::Bool(b) => Value::Bool(*b),
            Json::Int(i) => json!(i),
            Json::Float(f) => json!(f),
            Json::Str(k) => json!(KEYS[usize::from(*k) % KEYS.len()]),
            Json::Text(s) => json!(s),
            Json::Array(items) => {
                Value::Array(items.iter().map(|item| item.value_within(budget)).collect())
            }
            Json::Object(members) => Value::Object(
                members
                    .iter()
                    .map(|(k, v)| {
                        (
                            KEYS[usize::from(*k) % KEYS.len()].to_owned(),
                            v.value_within(budget),
                        )
                    })
                    .collect(),
            ),
            Json::Huge(n) => json!(format!("{HUGE_MARK}{n}")),
            Json::Private(number, inner) => {
                let key = if *number {
                    "$serde_json::private::Number"
                } else {
                    "$serde_json::private::RawValue"
                };
                // Each level escapes the text again, doubling it: a quarter of the budget.
                json!({ key: text_of(&inner.value_within(budget / 4)) })
            }
            Json::Deep(levels, objects, inner) => {
                let levels = usize::from(*levels % 400).min(budget);
                let mut value = inner.value_within(budget - levels);
                for _ in 0..levels {
                    value = if *objects {
                        json!({ "a": value })
                    } else {
                        json!([value])
                    };
                }
                value
            }
        }
    }
}

/// The JSON text of `value`, huge numbers written in.
fn text_of(value: &Value) -> String {
    let text = value.to_string();
    if !text.contains("\\u0001huge") {
        return text;
    }
    let mut out = String::new();
    let mut rest = text.as_str();
    while let Some(at) = rest.find("\"\\u0001huge") {
        out.push_str(&rest[..at]);
        let after = &rest[at + "\"\\u0001huge".len()..];
        let end = after.find('"').unwrap_or(after.len());
        let n: usize = after[..end].parse().unwrap_or(0);
        match n % 4 {
            0 => out.push_str(&format!("1{}", "0".repeat(20 + n * 8))),
            1 => out.push_str(&format!("-1{}", "0".repeat(20 + n * 8))),
            2 => out.push_str(&format!("1e{}", 400 + n)),
            _ => out.push_str(&format!("0.{}1e-400", "0".repeat(n))),
        }
        rest = &after[(end + 1).min(after.len())..];
    }
    out.push_str(rest);
    out
}

/// A request id as sent (ids of valid types mostly, from a few so that they repeat).
#[derive(Debug, Clone, Copy, Arbitrary)]
enum Id {
    Int(u8),
    Str(u8),
    Negative(u8),
    /// Past `i64`, still an integer.
    Big,
    Float,
    Null,
    Bool,
    Object,
    /// The id of the request being answered (the client way; an integer elsewhere).
    Pending,
}

impl Id {
    fn value(self, pending: &Value) -> Value {
        match self {
            Id::Int(n) => json!(n % 8),
            Id::Str(n) => json!(format!("r{}", n % 8)),
            Id::Negative(n) => json!(-i64::from(n % 8) - 1),
            Id::Big => json!(u64::MAX),
            Id::Float => json!(1.5),
            Id::Null => Value::Null,
            Id::Bool => json!(true),
            Id::Object => json!({"id": 1}),
            Id::Pending => pending.clone(),
        }
    }
}

/// A message's `params`.
#[derive(Debug, Clone, Arbitrary)]
enum Params {
    None,
    /// `tools/call`'s: a tool's name and arguments, perhaps `_meta`.
    Call {
        tool: u8,
        arguments: Json,
        meta: Option<Json>,
    },
    /// `initialize`'s, of a protocol version.
    Initialize(u8),
    /// `notifications/cancelled`'s, naming a request.
    Cancel(Id),
    /// A result built structurally (for the client way's answers).
    Listing(Vec<ToolShape>),
    Any(Json),
}

/// A tool in a listing (the client way).
#[derive(Debug, Clone, Arbitrary)]
struct ToolShape {
    name: u8,
    schema: Json,
    object_schema: bool,
}

impl Params {
    fn value(&self, pending: &Value) -> Option<Value> {
        match self {
            Params::None => None,
            Params::Call {
                tool,
                arguments,
                meta,
            } => {
                let mut params = json!({
                    "name": TOOLS[usize::from(*tool) % TOOLS.len()],
                    "arguments": arguments.value(),
                });
                if let Some(meta) = meta {
                    params["_meta"] = meta.value();
                }
                Some(params)
            }
            Params::Initialize(version) => Some(json!({
                "protocolVersion": VERSIONS[usize::from(*version) % VERSIONS.len()],
                "capabilities": {},
                "clientInfo": {"name": "fuzz", "version": "1"},
            })),
            Params::Cancel(id) => Some(json!({"requestId": id.value(pending), "reason": "fuzz"})),
            Params::Listing(tools) => Some(json!({"tools": tools.iter().map(|tool| {
                let mut schema = tool.schema.value();
                if tool.object_schema {
                    schema = json!({"type": "object", "properties": {"text": schema}});
                }
                json!({"name": KEYS[usize::from(tool.name) % KEYS.len()], "inputSchema": schema})
            }).collect::<Vec<_>>()})),
            Params::Any(json) => Some(json.value()),
        }
    }
}

/// A call's result, built to read as rmcp's `CallToolResult` (the client way).
#[derive(Debug, Clone, Arbitrary)]
struct CallShape {
    texts: Vec<String>,
    structured: Option<Json>,
    is_error: Option<bool>,
}

impl CallShape {
    fn value(&self) -> Value {
        let mut result = json!({
            "content": self.texts.iter().map(|t| json!({"type": "text", "text": t})).collect::<Vec<_>>(),
        });
        if let Some(structured) = &self.structured {
            result["structuredContent"] = json!({"v": structured.value()});
        }
        if let Some(is_error) = self.is_error {
            result["isError"] = json!(is_error);
        }
        result
    }
}

/// One message of the peer's.
#[derive(Debug, Clone, Arbitrary)]
enum Message {
    Request {
        id: Id,
        method: u8,
        params: Params,
    },
    Notification {
        method: u8,
        params: Params,
    },
    /// An answer (to a request never sent, on the server ways).
    Result {
        id: Id,
        result: Params,
    },
    Call {
        id: Id,
        result: CallShape,
    },
    Error {
        id: Id,
        code: i32,
        message: String,
    },
    /// JSON-RPC's batch (the 2025-03-26 revision's), of requests and notifications.
    Batch(Vec<(Option<Id>, u8, Params)>),
    /// A well-formed message with one member changed or left out.
    Edited {
        id: Id,
        method: u8,
        params: Params,
        key: u8,
        value: Option<Json>,
    },
    /// Arbitrary bytes (one line or body, or several lines).
    Raw(Vec<u8>),
}

impl Message {
    fn text(&self, pending: &Value) -> Vec<u8> {
        let method = |m: &u8| METHODS[usize::from(*m) % METHODS.len()];
        let value = match self {
            Message::Request {
                id,
                method: m,
                params,
            } => {
                let mut message =
                    json!({"jsonrpc": "2.0", "id": id.value(pending), "method": method(m)});
                if let Some(params) = params.value(pending) {
                    message["params"] = params;
                }
                message
            }
            Message::Notification { method: m, params } => {
                let mut message = json!({"jsonrpc": "2.0", "method": method(m)});
                if let Some(params) = params.value(pending) {
                    message["params"] = params;
                }
                message
            }
            Message::Result { id, result } => json!({"jsonrpc": "2.0", "id": id.value(pending),
                "result": result.value(pending).unwrap_or_else(|| json!({}))}),
            Message::Call { id, result } => {
                json!({"jsonrpc": "2.0", "id": id.value(pending), "result": result.value()})
            }
            Message::Error { id, code, message } => json!({"jsonrpc": "2.0",
                "id": id.value(pending), "error": {"code": code, "message": message}}),
            Message::Batch(items) => Value::Array(
                items
                    .iter()
                    .map(|(id, m, params)| {
                        let mut message = json!({"jsonrpc": "2.0", "method": method(m)});
                        if let Some(id) = id {
                            message["id"] = id.value(pending);
                        }
                        if let Some(params) = params.value(pending) {
                            message["params"] = params;
                        }
                        message
                    })
                    .collect(),
            ),
            Message::Edited {
                id,
                method: m,
                params,
                key,
                value,
            } => {
                let mut message =
                    json!({"jsonrpc": "2.0", "id": id.value(pending), "method": method(m)});
                if let Some(params) = params.value(pending) {
                    message["params"] = params;
                }
                let key =
                    ["jsonrpc", "id", "method", "params", "result", "error"][usize::from(*key) % 6];
                match value {
                    Some(value) => message[key] = value.value(),
                    None => {
                        message.as_object_mut().unwrap().shift_remove(key);
                    }
                }
                message
            }
            Message::Raw(bytes) => return bytes.clone(),
        };
        text_of(&value).into_bytes()
    }
}

#[derive(Debug, Arbitrary)]
enum Way {
    /// A client of the server, over the line transport.
    Lines,
    /// A client of the server, over streamable HTTP.
    Http,
    /// A server to the client, over streamable HTTP.
    Client,
    /// A server to the client, over the line transport (`McpClient::connect_io`).
    ClientLines,
}

#[derive(Debug, Arbitrary)]
struct Input {
    way: Way,
    /// Below 16: no handshake first (the fuzzer's messages are the first the peer reads).
    handshake: u8,
    messages: Vec<Message>,
    /// The client way: its answer to the call (after `messages` as events), as one JSON body
    /// rather than an event stream, and whether `tools/list` is asked (and answered so) too.
    answer: Message,
    json_body: bool,
    list_too: bool,
}

// ---------------------------------------------------------------- what is expected

impl Message {
    /// The id a request built structurally carries (its answer may come under it even when
    /// the message is refused unread, its envelope read for the id).
    fn id(&self, pending: &Value) -> Option<Value> {
        match self {
            Message::Request { id, .. } => Some(id.value(pending)),
            // The edit may be of the id itself (to something, or away).
            Message::Edited { key, value, .. } if usize::from(*key) % 6 == 1 => {
                value.as_ref().map(Json::value)
            }
            Message::Edited { id, .. } => Some(id.value(pending)),
            _ => None,
        }
    }
}

/// Whether `id` has a JSON-RPC request id's type (a string or an integer).
fn is_request_id(id: &Value) -> bool {
    id.is_string() || id.is_i64() || id.is_u64()
}

/// The answers a server owes, from what it was sent, by id (its JSON text).
#[derive(Default, Debug)]
struct Expected {
    /// Messages that must be answered under an id: a readable request id and a `method`.
    asked: HashMap<String, usize>,
    /// Messages refused before they were read (past a limit) whose envelope shows this id:
    /// answered under it or under none.
    refused: HashMap<String, usize>,
    /// Messages refused with no id this side could read: answered under the envelope's id.
    refused_unread: usize,
    /// Ids a `notifications/cancelled` named: the request may go unanswered.
    cancelled: Vec<String>,
}

impl Expected {
    /// Notes one line or body the server reads; `hint` is the id it was built with.
    ///
    /// A message with a readable request id (a string or an integer) and a `method`, or with
    /// neither a `result` nor an `error`, asks for an answer under that id, read or refused
    /// (JSON-RPC's error, under the id); an answer, a notification, an array or bytes that
    /// are not JSON ask for none under an id.
    fn note(&mut self, message: &[u8], hint: Option<Value>, limits: &JsonLimits) {
        // Read here only within the limits: serde_json's private keys make it recurse.
        let within = message.len() <= limits.max_bytes && limits.check(message).is_ok();
        let value = if within {
            serde_json::from_slice::<Value>(message).ok()
        } else {
            None
        };
        let Some(value) = value else {
            match hint {
                Some(id) if is_request_id(&id) => {
                    *self.refused.entry(id.to_string()).or_default() += 1
                }
                _ => self.refused_unread += 1,
            }
            return;
        };
        let Value::Object(object) = value else {
            return;
        };
        if object.get("method").and_then(Value::as_str) == Some("notifications/cancelled")
            && let Some(id) = object.get("params").and_then(|p| p.get("requestId"))
        {
            self.cancelled.push(id.to_string());
        }
        let Some(id) = object.get("id").filter(|id| is_request_id(id)) else {
            return;
        };
        let asks = match serde_json::from_slice::<ClientJsonRpcMessage>(message) {
            Ok(ClientJsonRpcMessage::Request(_)) => true,
            Ok(_) => false,
            Err(_) => {
                object.contains_key("method")
                    || !(object.contains_key("result") || object.contains_key("error"))
            }
        };
        if asks {
            *self.asked.entry(id.to_string()).or_default() += 1;
        }
    }

    /// Checks the answers, counted by id, against what was asked.
    fn check(&self, answers: &HashMap<String, usize>) {
        let mut unexplained = 0;
        for (id, &count) in answers {
            if id == "null" {
                continue;
            }
            let asked = self.asked.get(id).copied().unwrap_or(0);
            let refused = self.refused.get(id).copied().unwrap_or(0);
            unexplained += count.saturating_sub(asked + refused);
            if asked == 1 && refused == 0 && !self.cancelled.contains(id) {
                assert_eq!(count, 1, "{id} was asked once and answered {count} times");
            }
        }
        assert!(
            unexplained <= self.refused_unread,
            "{unexplained} answers under ids never asked for: {answers:?} for {self:?}"
        );
        for (id, _) in &self.asked {
            assert!(
                answers.contains_key(id) || self.cancelled.contains(id),
                "{id} was never answered: {answers:?} for {self:?}"
            );
        }
    }
}

/// Reads one message of the server's: JSON-RPC; for an answer (a result or an error, no
/// `method`), its id's JSON text. Server requests and notifications give `None`.
fn answer_id(line: &[u8]) -> Option<String> {
    let value: Value = serde_json::from_slice(line).unwrap_or_else(|e| {
        panic!(
            "the server wrote what is not JSON ({e}): {:?}",
            String::from_utf8_lossy(line)
        )
    });
    assert_eq!(value["jsonrpc"], "2.0", "{value}");
    if value.get("method").is_some() {
        return None;
    }
    assert!(
        value.get("result").is_some() != value.get("error").is_some(),
        "an answer is a result or an error: {value}"
    );
    if let Some(error) = value.get("error") {
        assert!(error["code"].is_i64(), "{value}");
        assert!(error["message"].is_string(), "{value}");
    }
    Some(value.get("id").unwrap_or(&Value::Null).to_string())
}

// ---------------------------------------------------------------- the fixture

struct Fixture {
    runtime: tokio::runtime::Runtime,
    server: McpServer,
    limits: JsonLimits,
    app: axum::Router,
    /// The client of the scripted server over streamable HTTP.
    http: ClientSide,
    /// The client of the scripted server over the line transport.
    lines: ClientSide,
    call_timeout: Duration,
}

/// A client of the scripted server, and its bridge.
struct ClientSide {
    client: McpClient,
    /// Holds the client's first bridge: the manager enforces its time limit.
    calls: ToolCallManager,
    /// The bridge's local name.
    local: String,
}

impl ClientSide {
    fn new(client: McpClient) -> Self {
        let bridge = client
            .tools()
            .into_iter()
            .next()
            .expect("the scripted tool");
        let local = bridge.name().to_owned();
        let calls = ToolCallManager::new("client");
        calls.register(Arc::new(bridge)).unwrap();
        Self {
            client,
            calls,
            local,
        }
    }
}

/// What the scripted server answers the client's requests with, set for each input.
struct Script {
    events: Vec<Message>,
    answer: Message,
    json_body: bool,
}

static SCRIPT: Mutex<Option<Script>> = Mutex::new(None);

/// Compiles a schema as core compiles argument schemas (formats asserted where known).
fn reference(schema: &Value) -> jsonschema::Validator {
    jsonschema::options()
        .should_validate_formats(true)
        .should_ignore_unknown_formats(true)
        .build(schema)
        .unwrap()
}

static STRICT: LazyLock<jsonschema::Validator> = LazyLock::new(|| reference(&strict_schema()));

static FIXTURE: LazyLock<Fixture> = LazyLock::new(|| {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let manager = ToolCallManager::new("fuzz");
    manager.register(Arc::new(Echo)).unwrap();
    manager
        .register(Arc::new(FnTool::new(
            "strict",
            "Echoes its arguments, which its schema bounds.",
            Args::new(strict_schema()),
            |args: ToolArgs<'_>| {
                let received = args.arguments().as_value().clone();
                if !STRICT.is_valid(&received) {
                    REFUSED_BUT_RAN.lock().unwrap().push(received.to_string());
                }
                async move { Ok(ToolCallResult::text(received.to_string())) }
            },
        )))
        .unwrap();
    let server = McpServer::new(Arc::new(manager));
    // Small limits, so that inputs reach them.
    let limits = JsonLimits::default()
        .with_max_bytes(64 * 1024)
        .with_max_depth(48)
        .with_max_values(4096);
    let call_timeout = Duration::from_millis(
        std::env::var("MCP_PEER_TIMEOUT_MS")
            .ok()
            .and_then(|ms| ms.parse().ok())
            .unwrap_or(500),
    );
    let (app, http, lines) = runtime.block_on(async {
        let app = router(
            server.clone(),
            &McpHttpOptions::default().with_limits(limits),
            "127.0.0.1:9".parse().unwrap(),
            toolsmith::CancellationToken::new(),
        );
        let scripted = axum::Router::new().route(
            "/mcp",
            axum::routing::post(scripted_answer)
                .get(|| async { StatusCode::METHOD_NOT_ALLOWED })
                .delete(|| async { StatusCode::OK }),
        );
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/mcp", listener.local_addr().unwrap());
        tokio::spawn(async move { axum::serve(listener, scripted).await.unwrap() });
        let names = McpNames::new();
        let options = || {
            McpClientOptions::default()
                .with_names(names.clone())
                .with_limits(limits)
                .with_call_timeout(Some(call_timeout))
                .with_connect_timeout(call_timeout.max(Duration::from_millis(100)))
        };
        let http = McpClient::connect_with(McpTransport::http(url), options())
            .await
            .unwrap();
        let (client_end, server_end) = tokio::io::duplex(1 << 16);
        tokio::spawn(scripted_lines(server_end));
        let (read, write) = tokio::io::split(client_end);
        let lines = McpClient::connect_io("the scripted server", read, write, options())
            .await
            .unwrap();
        (app, ClientSide::new(http), ClientSide::new(lines))
    });
    Fixture {
        runtime,
        server,
        limits,
        app,
        http,
        lines,
        call_timeout,
    }
});

/// What the scripted server answers `request` (a readable request) with: its events, then
/// its answer; `None` for anything else (a notification, an answer of the client's).
fn scripted(message: &Value) -> Option<(Vec<Vec<u8>>, Vec<u8>)> {
    let (Some(id), Some(method)) = (
        message.get("id").cloned(),
        message.get("method").and_then(Value::as_str),
    ) else {
        return None;
    };
    let script = SCRIPT.lock().unwrap();
    Some(match (method, script.as_ref()) {
        ("initialize", _) => (
            Vec::new(),
            json!({"jsonrpc": "2.0", "id": id, "result": {
                "protocolVersion": message["params"]["protocolVersion"],
                "capabilities": {"tools": {"listChanged": true}},
                "serverInfo": {"name": "fuzz", "version": "1"}}})
            .to_string()
            .into_bytes(),
        ),
        (_, Some(script)) => (
            script.events.iter().map(|e| e.text(&id)).collect(),
            script.answer.text(&id),
        ),
        (_, None) => (
            Vec::new(),
            json!({"jsonrpc": "2.0", "id": id, "result": {"tools": [
                {"name": "remote", "inputSchema": {"type": "object"}}]}})
            .to_string()
            .into_bytes(),
        ),
    })
}

/// The scripted server over the line transport (the `ClientLines` way): each message a line.
async fn scripted_lines(end: tokio::io::DuplexStream) {
    let (read, mut write) = tokio::io::split(end);
    let mut lines = BufReader::new(read).lines();
    while let Ok(Some(line)) = lines.next_line().await {
        let message: Value = serde_json::from_str(&line).unwrap_or(Value::Null);
        let Some((events, answer)) = scripted(&message) else {
            continue;
        };
        for message in events.into_iter().chain([answer]) {
            if write.write_all(&message).await.is_err() || write.write_all(b"\n").await.is_err()
            {
                return;
            }
        }
    }
}

/// The scripted server (the client way): the handshake and the first listing valid, then,
/// to each request, the script's events and answer with the request's id where they have
/// `Id::Pending`.
async fn scripted_answer(body: axum::body::Bytes) -> axum::response::Response {
    let message: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    // A notification, or the client's answer to a request of the script's.
    let Some((events, answer)) = scripted(&message) else {
        return StatusCode::ACCEPTED.into_response();
    };
    let session = (header::HeaderName::from_static("mcp-session-id"), "s1");
    let script = SCRIPT.lock().unwrap();
    if script.as_ref().is_some_and(|s| s.json_body) {
        return (
            [(header::CONTENT_TYPE, "application/json"), session],
            answer,
        )
            .into_response();
    }
    let mut stream = Vec::new();
    for event in events.into_iter().chain([answer]) {
        stream.extend_from_slice(b"data: ");
        stream.extend_from_slice(&event);
        stream.extend_from_slice(b"\n\n");
    }
    (
        [(header::CONTENT_TYPE, "text/event-stream"), session],
        stream,
    )
        .into_response()
}

// ---------------------------------------------------------------- the server ways

const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":"fuzz-init","method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"fuzz","version":"1"}}}"#;
const INITIALIZED: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
const LAST_PING: &str = r#"{"jsonrpc":"2.0","id":"fuzz-end","method":"ping"}"#;

/// The fuzzer as a client over the line transport: a connection per input. After a
/// handshake, the messages and a last `ping`; once the ping and every request are answered,
/// the client closes and reads to the end.
async fn over_lines(fixture: &Fixture, input: &Input) {
    let limits = fixture.limits;
    let (client_end, server_end) = tokio::io::duplex(1 << 16);
    let (read, write) = tokio::io::split(server_end);
    let serving = tokio::spawn(serve_until_closed(
        fixture.server.for_connection(),
        read,
        write,
        limits,
    ));
    let (client_read, mut client_write) = tokio::io::split(client_end);
    let handshake = input.handshake >= 16;
    let mut expected = Expected::default();
    let mut bytes = Vec::new();
    if handshake {
        bytes.extend_from_slice(INITIALIZE.as_bytes());
        bytes.push(b'\n');
        bytes.extend_from_slice(INITIALIZED.as_bytes());
        bytes.push(b'\n');
    }
    for message in &input.messages {
        let text = message.text(&json!(0));
        // As the transport reads lines: a `\r` before the end, and a leading byte order
        // mark, are not the message's.
        let mut lines: Vec<&[u8]> = text.split(|b| *b == b'\n').collect();
        let hint = (lines.len() == 1).then(|| message.id(&json!(0))).flatten();
        for line in lines.drain(..) {
            let line = line.strip_suffix(b"\r").unwrap_or(line);
            let line = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line);
            if !line.iter().all(u8::is_ascii_whitespace) {
                expected.note(line, hint.clone(), &limits);
            }
        }
        bytes.extend_from_slice(&text);
        bytes.push(b'\n');
    }
    if handshake {
        bytes.extend_from_slice(LAST_PING.as_bytes());
        bytes.push(b'\n');
    }
    // Written beside the reading (answers must not fill the pipe unread); without a
    // handshake the client closes once it has written.
    let writing = tokio::spawn(async move {
        let _ = client_write.write_all(&bytes).await;
        if !handshake {
            let _ = client_write.shutdown().await;
        }
        client_write
    });
    let mut writing = Some(writing);
    let mut reader = BufReader::new(client_read);
    let mut answers: HashMap<String, usize> = HashMap::new();
    let mut line = Vec::new();
    let mut writer = None;
    let mut closed = !handshake;
    let deadline = tokio::time::Instant::now() + ANSWER_WAIT;
    loop {
        if !closed
            && answers.contains_key("\"fuzz-end\"")
            && expected
                .asked
                .keys()
                .all(|id| answers.contains_key(id) || expected.cancelled.contains(id))
            && let Some(mut write) = writer.take()
        {
            let _ = AsyncWriteExt::shutdown(&mut write).await;
            closed = true;
        }
        // What `read_until` read before it was cancelled stays in `line`.
        let read = tokio::time::timeout_at(deadline, reader.read_until(b'\n', &mut line));
        let read = match writing.as_mut() {
            Some(task) => tokio::select! {
                written = task => {
                    writing = None;
                    writer = Some(written.unwrap_or_else(|e| panic!("writing: {e}")));
                    continue;
                }
                read = read => read,
            },
            None => read.await,
        };
        match read {
            Ok(Ok(0)) => break,
            Ok(Ok(_)) => {
                if let Some(id) = answer_id(&line) {
                    *answers.entry(id).or_default() += 1;
                }
                line.clear();
            }
            Ok(Err(e)) => panic!("reading the server: {e}"),
            Err(_) => {
                panic!("no end within {ANSWER_WAIT:?}: asked {expected:?}, answered {answers:?}")
            }
        }
    }
    drop(writer);
    let served = tokio::time::timeout(ANSWER_WAIT, serving)
        .await
        .unwrap_or_else(|_| panic!("the server did not end when the client closed"))
        .unwrap_or_else(|e| panic!("the server's task: {e}"));
    if handshake {
        served.unwrap_or_else(|e| panic!("after a valid handshake: {e}"));
        assert_eq!(answers.remove("\"fuzz-init\""), Some(1), "{answers:?}");
        assert_eq!(answers.remove("\"fuzz-end\""), Some(1), "{answers:?}");
        expected.check(&answers);
    }
}

/// One POST to the in-process router: its status, the session it names and the JSON-RPC
/// messages its body carried (an event stream's events, or a JSON body).
async fn post(
    app: &axum::Router,
    session: Option<&str>,
    body: Vec<u8>,
) -> (StatusCode, Option<String>, Vec<Vec<u8>>) {
    let mut request = Request::post("/mcp")
        .header(header::HOST, "127.0.0.1")
        .header(header::CONTENT_TYPE, "application/json")
        .header(header::ACCEPT, "application/json, text/event-stream");
    if let Some(session) = session {
        request = request
            .header("mcp-session-id", session)
            .header("mcp-protocol-version", "2025-06-18");
    }
    let request = request.body(Body::from(body)).unwrap();
    let exchange = async {
        let response = app.clone().oneshot(request).await.unwrap();
        let status = response.status();
        let headers = response.headers();
        let session = headers
            .get("mcp-session-id")
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        let kind = |mime: &[u8]| {
            headers
                .get(header::CONTENT_TYPE)
                .is_some_and(|v| v.as_bytes().starts_with(mime))
        };
        let (sse, json) = (kind(b"text/event-stream"), kind(b"application/json"));
        let bytes = axum::body::to_bytes(response.into_body(), usize::MAX)
            .await
            .unwrap();
        let messages = if sse {
            bytes
                .split(|b| *b == b'\n')
                .filter_map(|line| line.strip_prefix(b"data:"))
                .map(|data| data.strip_prefix(b" ").unwrap_or(data))
                .filter(|data| !data.is_empty())
                .map(<[u8]>::to_vec)
                .collect()
        } else if json {
            vec![bytes.to_vec()]
        } else {
            Vec::new()
        };
        (status, session, messages)
    };
    tokio::time::timeout(ANSWER_WAIT, exchange)
        .await
        .unwrap_or_else(|_| panic!("a POST took over {ANSWER_WAIT:?}"))
}

/// Ends a session of the router's.
async fn delete(app: &axum::Router, session: &str) {
    let request = Request::delete("/mcp")
        .header(header::HOST, "127.0.0.1")
        .header("mcp-session-id", session)
        .body(Body::empty())
        .unwrap();
    let response = tokio::time::timeout(ANSWER_WAIT, app.clone().oneshot(request))
        .await
        .unwrap_or_else(|_| panic!("ending a session took over {ANSWER_WAIT:?}"))
        .unwrap();
    assert!(response.status().is_success(), "{}", response.status());
}

/// The fuzzer as a client over streamable HTTP: a session per input, a message a POST, each
/// checked on its own (a request is answered in its POST's own stream, or refused in
/// HTTP's words, a `4xx`).
async fn over_http(fixture: &Fixture, input: &Input) {
    let app = &fixture.app;
    let mut sessions = Vec::new();
    let mut session = None;
    if input.handshake >= 16 {
        let (status, id, messages) = post(app, None, INITIALIZE.as_bytes().to_vec()).await;
        assert_eq!(status, StatusCode::OK, "{messages:?}");
        session = Some(id.expect("a session id"));
        sessions.extend(session.clone());
        let (status, _, _) = post(app, session.as_deref(), INITIALIZED.as_bytes().to_vec()).await;
        assert_eq!(status, StatusCode::ACCEPTED);
    }
    for message in &input.messages {
        let body = message.text(&json!(0));
        let mut expected = Expected::default();
        expected.note(&body, message.id(&json!(0)), &fixture.limits);
        let (status, opened, messages) = post(app, session.as_deref(), body).await;
        // An `initialize` of the fuzzer's opens a session too: ended below.
        sessions.extend(opened);
        assert!(
            status.is_success() || status.is_client_error(),
            "answered {status}: {messages:?}"
        );
        let mut answers: HashMap<String, usize> = HashMap::new();
        for message in messages {
            if let Some(id) = answer_id(&message) {
                *answers.entry(id).or_default() += 1;
            }
        }
        if status.is_client_error() {
            // Refused: at most one answer, under the request's id or none.
            expected.refused_unread += 1;
            for (id, count) in expected.asked.drain() {
                *expected.refused.entry(id).or_default() += count;
            }
        }
        if session.is_some() {
            expected.cancelled.clear();
            expected.check(&answers);
        }
    }
    for session in sessions {
        delete(app, &session).await;
    }
}

// ---------------------------------------------------------------- the client way

/// The text blocks' text, as `mcp_mapping` compares it.
fn text_blocks(result: &CallToolResult) -> Vec<&str> {
    result
        .content
        .iter()
        .filter_map(|block| match block {
            ContentBlock::Text(text) => Some(text.text.as_str()),
            _ => None,
        })
        .collect()
}

/// The fuzzer as a server to `McpClient`: to a listing (when asked) and to a call, its
/// messages as events, then its answer.
async fn as_server(fixture: &Fixture, side: &ClientSide, input: &Input) {
    *SCRIPT.lock().unwrap() = Some(Script {
        events: input.messages.clone(),
        answer: input.answer.clone(),
        json_body: input.json_body,
    });
    let limit = fixture.call_timeout + Duration::from_secs(3);
    if input.list_too
        && tokio::time::timeout(limit, side.client.refresh_tools())
            .await
            .is_err()
    {
        panic!("a listing took over {limit:?}");
    }
    let local = side.local.clone();
    let request = ToolCallRequest::new("fuzz-call", &local, ToolArguments::default());
    let outcome = tokio::time::timeout(limit, side.calls.execute_one(&request))
        .await
        .unwrap_or_else(|_| panic!("a call took over {limit:?}"));
    if let Err(error) = &outcome {
        match error {
            ToolError::InvalidArguments { tool, .. }
            | ToolError::Execution { tool, .. }
            | ToolError::Timeout { tool }
            | ToolError::Network { tool, .. } => {
                assert_eq!(tool, &local, "{error:?} names another tool")
            }
            other => panic!("{local}: {other:?}"),
        }
    }
    // Compared when the answer is a call's result built to be read, and nothing before it
    // (an event with the request's id, or bytes that may hold it) answers the call first.
    let Message::Call {
        id: Id::Pending,
        result: shape,
    } = &input.answer
    else {
        return;
    };
    // Over HTTP a JSON body holds the answer alone; lines always carry the events first.
    let answer_alone = input.json_body && std::ptr::eq(side, &fixture.http);
    let answered_before = !answer_alone
        && input.messages.iter().any(|m| match m {
            Message::Result { id, .. } | Message::Call { id, .. } | Message::Error { id, .. } => {
                matches!(id, Id::Pending)
            }
            Message::Raw(_) | Message::Edited { .. } => true,
            _ => false,
        });
    let value = shape.value();
    if answered_before || fixture.limits.check(text_of(&value).as_bytes()).is_err() {
        return;
    }
    let Ok(result) = serde_json::from_value::<CallToolResult>(value.clone()) else {
        return;
    };
    // rmcp reads a result by its shape (see `mcp_mapping`): another result type fails the call.
    if !matches!(
        serde_json::from_value::<ServerResult>(value),
        Ok(ServerResult::CallToolResult(_))
    ) {
        return;
    }
    if result.is_error == Some(true) {
        assert!(
            outcome.is_err(),
            "{local}: an error came back as {outcome:?}"
        );
        return;
    }
    let outcome = outcome.unwrap_or_else(|e| panic!("{local}: {e}"));
    match (&result.structured_content, &outcome.content) {
        (Some(value), UserModelContent::Json(kept)) => {
            assert_eq!(value, kept, "{local}: structured content changed")
        }
        (None, UserModelContent::Text(text)) => assert_eq!(
            *text,
            text_blocks(&result).join("\n"),
            "{local}: the text changed"
        ),
        (expected, kept) => panic!("{local}: {expected:?} came back as {kept:?}"),
    }
}

fuzz_target!(|data: &[u8]| {
    let Ok(input) = Input::arbitrary_take_rest(arbitrary::Unstructured::new(data)) else {
        return;
    };
    if std::env::var_os("FUZZ_SHOW").is_some() {
        eprintln!("{:?}, handshake {}", input.way, input.handshake >= 16);
        for message in input.messages.iter().chain([&input.answer]) {
            eprintln!("  {}", String::from_utf8_lossy(&message.text(&json!(0))));
        }
    }
    let fixture = &*FIXTURE;
    REFUSED_BUT_RAN.lock().unwrap().clear();
    let started = std::time::Instant::now();
    fixture.runtime.block_on(async {
        match input.way {
            Way::Lines => over_lines(fixture, &input).await,
            Way::Http => over_http(fixture, &input).await,
            Way::Client => as_server(fixture, &fixture.http, &input).await,
            Way::ClientLines => as_server(fixture, &fixture.lines, &input).await,
        }
    });
    if std::env::var_os("FUZZ_TIME").is_some() {
        eprintln!("{:?} {:?}", input.way, started.elapsed());
    }
    let refused = REFUSED_BUT_RAN.lock().unwrap();
    assert!(refused.is_empty(), "the strict tool ran on {refused:?}");
});
