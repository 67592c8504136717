//! Bad input on the line transport: garbage, oversized and deeply nested messages, messages
//! of too many values, and a
//! wrong type in every field of `tools/call`, each answered with an error while the server
//! keeps serving. Nothing panics and nothing hangs.

use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{
    AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader, DuplexStream, ReadHalf, WriteHalf,
};
use toolsmith_harness::mcp::{JsonLimits, McpServer, McpServerOptions, serve_until_closed};

use super::demo_manager;

/// A client that writes raw lines and reads raw answers.
struct Raw {
    read: BufReader<ReadHalf<DuplexStream>>,
    write: WriteHalf<DuplexStream>,
    server: tokio::task::JoinHandle<()>,
}

/// A writer that is not ready on the first poll of each write and flush, as a pipe to a busy
/// reader is not: every write the server makes suspends once.
struct Yielding<W> {
    inner: W,
    ready: bool,
}

impl<W> Yielding<W> {
    fn poll_turn(&mut self, cx: &mut std::task::Context<'_>) -> bool {
        if self.ready {
            self.ready = false;
            return true;
        }
        self.ready = true;
        cx.waker().wake_by_ref();
        false
    }
}

impl<W: tokio::io::AsyncWrite + Unpin> tokio::io::AsyncWrite for Yielding<W> {
    fn poll_write(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &[u8],
    ) -> std::task::Poll<std::io::Result<usize>> {
        if !self.poll_turn(cx) {
            return std::task::Poll::Pending;
        }
        std::pin::Pin::new(&mut self.inner).poll_write(cx, buf)
    }

    fn poll_flush(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        if !self.poll_turn(cx) {
            return std::task::Poll::Pending;
        }
        std::pin::Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::pin::Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

impl Raw {
    async fn start(limits: JsonLimits) -> Self {
        Self::start_with(limits, false).await
    }

    /// With `slow_writes`, every write of the server suspends once.
    async fn start_with(limits: JsonLimits, slow_writes: bool) -> Self {
        let mut raw = Self::connect(limits, slow_writes).await;
        raw.handshake().await;
        raw
    }

    /// A server not yet initialized.
    async fn connect(limits: JsonLimits, slow_writes: bool) -> Self {
        let (manager, _) = demo_manager();
        let (client_end, server_end) = tokio::io::duplex(1 << 20);
        let server = tokio::spawn(async move {
            let (read, write) = tokio::io::split(server_end);
            let server = McpServer::with_options(manager, McpServerOptions::default());
            if slow_writes {
                let write = Yielding {
                    inner: write,
                    ready: false,
                };
                serve_until_closed(server, read, write, limits)
                    .await
                    .unwrap();
            } else {
                serve_until_closed(server, read, write, limits)
                    .await
                    .unwrap();
            }
        });
        let (read, write) = tokio::io::split(client_end);
        Self {
            read: BufReader::new(read),
            write,
            server,
        }
    }

    /// Initializes, as a client does first.
    async fn handshake(&mut self) {
        let init = self
            .ask(
                json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                "protocolVersion": "2025-06-18", "capabilities": {},
                "clientInfo": {"name": "raw", "version": "1"}}}),
            )
            .await;
        assert!(init.get("result").is_some(), "{init}");
        self.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string())
            .await;
    }

    async fn send(&mut self, line: &str) {
        self.write.write_all(line.as_bytes()).await.unwrap();
        self.write.write_all(b"\n").await.unwrap();
        self.write.flush().await.unwrap();
    }

    async fn next(&mut self) -> Value {
        let mut line = String::new();
        tokio::time::timeout(Duration::from_secs(5), self.read.read_line(&mut line))
            .await
            .expect("an answer within five seconds")
            .unwrap();
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"))
    }

    async fn ask(&mut self, message: Value) -> Value {
        self.send(&message.to_string()).await;
        self.next().await
    }

    /// The server still answers a normal request.
    async fn still_serving(&mut self) {
        let answer = self
            .ask(
                json!({"jsonrpc": "2.0", "id": "alive", "method": "tools/call",
                "params": {"name": "echo", "arguments": {"text": "still here"}}}),
            )
            .await;
        assert_eq!(answer["id"], "alive", "{answer}");
        assert_eq!(
            answer["result"]["content"][0]["text"], "still here",
            "{answer}"
        );
    }
}

fn error_of(answer: &Value) -> (i64, String) {
    let error = answer
        .get("error")
        .unwrap_or_else(|| panic!("not an error: {answer}"));
    (
        error["code"].as_i64().unwrap(),
        error["message"].as_str().unwrap().to_owned(),
    )
}

#[tokio::test]
async fn garbage_gets_a_parse_error_and_the_server_keeps_serving() {
    let mut raw = Raw::start(JsonLimits::default()).await;
    for garbage in [
        "this is not json",
        "{\"jsonrpc\": ",
        "[1, 2",
        "\u{0}\u{1}",
        "}",
    ] {
        raw.send(garbage).await;
        let answer = raw.next().await;
        assert_eq!(answer["id"], Value::Null, "{answer}");
        let (code, message) = error_of(&answer);
        assert_eq!(code, -32700, "{garbage}: {message}");
        assert!(message.starts_with("Parse error"), "{message}");
        raw.still_serving().await;
    }
    raw.write.shutdown().await.unwrap();
    tokio::time::timeout(Duration::from_secs(5), raw.server)
        .await
        .unwrap()
        .unwrap();
}

#[tokio::test]
async fn oversized_and_deep_messages_are_refused_with_the_limit_named() {
    let limits = JsonLimits::default()
        .with_max_bytes(4096)
        .with_max_depth(32);
    let mut raw = Raw::start(limits).await;
    let big = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "echo", "arguments": {"text": "x".repeat(10_000)}}});
    raw.send(&big.to_string()).await;
    let answer = raw.next().await;
    // The id is read from the head of the line, so the client can tell which call failed.
    assert_eq!(answer["id"], 1);
    let (code, message) = error_of(&answer);
    assert_eq!(code, -32600);
    assert!(
        message.contains("larger than the limit of 4096 bytes"),
        "{message}"
    );
    raw.still_serving().await;

    let deep = format!("{}{}", "[".repeat(2_000), "]".repeat(2_000));
    raw.send(&deep).await;
    let answer = raw.next().await;
    assert_eq!(answer["id"], Value::Null);
    let (code, message) = error_of(&answer);
    assert_eq!(code, -32700);
    assert!(message.contains("deeper than 32 levels"), "{message}");
    raw.still_serving().await;

    // Deep but within the byte limit, inside the arguments of a call.
    let nested = format!("{}1{}", "[".repeat(40), "]".repeat(40));
    let line = format!(
        r#"{{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{{"name":"echo","arguments":{{"text":{nested}}}}}}}"#
    );
    raw.send(&line).await;
    let answer = raw.next().await;
    assert_eq!(answer["id"], 2);
    let (code, _) = error_of(&answer);
    assert_eq!(code, -32700);
    raw.still_serving().await;
}

/// A message of many small values, within the byte limit, is refused before rmcp reads it
/// (which would buffer each value at 80 bytes or more), with the request's id, and the server
/// goes on serving.
#[tokio::test]
async fn messages_of_too_many_values_are_refused_with_the_limit_named() {
    let call = |id: u32, values: usize| {
        format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"echo","arguments":{{"text":[{}0]}}}}}}"#,
            "0,".repeat(values - 1)
        )
    };
    let mut raw = Raw::start(JsonLimits::default().with_max_values(1000)).await;
    raw.send(&call(3, 1000)).await;
    let answer = raw.next().await;
    assert_eq!(answer["id"], 3, "{answer}");
    let (code, message) = error_of(&answer);
    assert_eq!(code, -32600, "{message}");
    assert!(
        message.starts_with("Invalid Request: the message holds more than 1000 values (at byte "),
        "{message}"
    );
    raw.still_serving().await;

    // The default is core's bound on what is read from a model: 2,097,152 values, here in
    // some 4 MiB (of the 8 MiB a message may take).
    let mut raw = Raw::start(JsonLimits::default()).await;
    raw.send(&call(4, toolsmith_core::MAX_JSON_VALUES)).await;
    let answer = raw.next().await;
    assert_eq!(answer["id"], 4, "{answer}");
    let (code, message) = error_of(&answer);
    assert_eq!(code, -32600, "{message}");
    assert!(message.contains("more than 2097152 values"), "{message}");
    raw.still_serving().await;
}

/// serde_json reads an object keyed `$serde_json::private::RawValue` as the JSON its string
/// holds, with a recursion limit of its own: nested in strings, past any depth (a few KB
/// overflowed a 2 MiB stack), and even once, arguments the client never sent (`echo` would
/// run on `{"text": "hi"}`). Refused before rmcp reads the message, however it is escaped.
#[tokio::test]
async fn serde_jsons_private_keys_are_refused_before_rmcp_reads_them() {
    let mut raw = Raw::start(JsonLimits::default()).await;
    for (id, key) in [
        (5, "$serde_json::private::RawValue"),
        (6, "\\u0024serde_json::private::RawValue"),
        (7, "$serde_json::private::Number"),
    ] {
        raw.send(&format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"echo","arguments":{{"text":{{"{key}":"\"hi\""}}}}}}}}"#
        ))
        .await;
        let answer = raw.next().await;
        assert_eq!(answer["id"], id, "{answer}");
        let (code, message) = error_of(&answer);
        assert_eq!(code, -32600, "{message}");
        assert!(
            message.contains("a key serde_json keeps for itself"),
            "{message}"
        );
    }
    raw.still_serving().await;
}

/// An answer of the client's that the server cannot read (an id past rmcp's integers, a
/// result or an error of the wrong type) is not answered: JSON-RPC never answers an answer,
/// and an error under its id would answer the client's own request of that id (found by
/// the `mcp_peer` fuzz target).
#[tokio::test]
async fn an_unreadable_answer_of_the_clients_is_not_answered() {
    let mut raw = Raw::start(JsonLimits::default()).await;
    for answer in [
        r#"{"jsonrpc":"2.0","id":18446744073709551615,"result":{}}"#,
        r#"{"jsonrpc":"2.0","id":7,"result":5}"#,
        r#"{"jsonrpc":"2.0","id":"s1","error":"no"}"#,
        r#"{"jsonrpc":"1.0","id":8,"result":{}}"#,
    ] {
        raw.send(answer).await;
        // The next line is the ping's answer: nothing came for the answer before it.
        let pong = raw
            .ask(json!({"jsonrpc": "2.0", "id": "after", "method": "ping"}))
            .await;
        assert_eq!(pong["id"], "after", "{answer} was answered: {pong}");
        assert!(pong.get("result").is_some(), "{pong}");
    }
    raw.still_serving().await;
}

/// A request whose id is an integer past rmcp's (beyond -2^63..2^63-1) is refused naming
/// `id` and the range, under the id as sent: it was "unrecognized JSON-RPC message", which
/// names nothing.
#[tokio::test]
async fn a_request_id_past_rmcps_integers_is_refused_naming_the_id() {
    let mut raw = Raw::start(JsonLimits::default()).await;
    for id in ["18446744073709551615", "9223372036854775808"] {
        raw.send(&format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"ping"}}"#))
            .await;
        let answer = raw.next().await;
        assert_eq!(answer["id"].to_string(), id, "{answer}");
        let (code, message) = error_of(&answer);
        assert_eq!(code, -32600, "{message}");
        assert_eq!(
            message,
            format!(
                "Invalid Request: `id` must be a string or an integer from \
                 -9223372036854775808 to 9223372036854775807, not the number {id}"
            )
        );
    }
    raw.still_serving().await;
}

/// A progress token that is an integer past rmcp's (beyond i64) is refused naming it, as a
/// token of another type is: it was taken, and the call ran with its progress dropped
/// without a word (rmcp could not read the token to send progress under). The largest
/// token rmcp reads gets its progress.
#[tokio::test]
async fn a_progress_token_past_rmcps_integers_is_refused_naming_it() {
    let mut raw = Raw::start(JsonLimits::default()).await;
    let call = |id: &str, token: Value| {
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
            "name": "progress", "arguments": {"steps": 2}, "_meta": {"progressToken": token}}})
    };
    let answer = raw
        .ask(call("past", json!(9_223_372_036_854_775_808_u64)))
        .await;
    let (code, message) = error_of(&answer);
    assert_eq!(code, -32602, "{message}");
    assert!(
        message.contains(
            "params._meta.progressToken must be a string or an integer from \
             -9223372036854775808 to 9223372036854775807, got 9223372036854775808"
        ),
        "{message}"
    );
    raw.send(&call("largest", json!(i64::MAX)).to_string())
        .await;
    let mut reports = 0;
    loop {
        let message = raw.next().await;
        if message["id"] == "largest" {
            break;
        }
        assert_eq!(message["method"], "notifications/progress", "{message}");
        assert_eq!(
            message["params"]["progressToken"],
            json!(i64::MAX),
            "{message}"
        );
        reports += 1;
    }
    assert!(reports > 0, "no progress under the largest token");
    raw.still_serving().await;
}

#[tokio::test]
async fn a_wrong_type_in_any_field_of_tools_call_is_an_error() {
    let mut raw = Raw::start(JsonLimits::default()).await;
    let call = |patch: &dyn Fn(&mut Value)| {
        let mut message = json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call",
            "params": {"name": "echo", "arguments": {"text": "x"}}});
        patch(&mut message);
        message
    };
    let cases: Vec<(&str, Value)> = vec![
        ("jsonrpc: 1", call(&|m| m["jsonrpc"] = json!(1))),
        ("jsonrpc: \"1.0\"", call(&|m| m["jsonrpc"] = json!("1.0"))),
        ("id: {}", call(&|m| m["id"] = json!({}))),
        ("id: [1]", call(&|m| m["id"] = json!([1]))),
        ("id: true", call(&|m| m["id"] = json!(true))),
        ("id: 1.5", call(&|m| m["id"] = json!(1.5))),
        ("method: 5", call(&|m| m["method"] = json!(5))),
        ("method: null", call(&|m| m["method"] = Value::Null)),
        (
            "method missing",
            call(&|m| {
                m.as_object_mut().unwrap().remove("method");
            }),
        ),
        ("params: \"x\"", call(&|m| m["params"] = json!("x"))),
        ("params: []", call(&|m| m["params"] = json!([]))),
        ("params: null", call(&|m| m["params"] = Value::Null)),
        (
            "params missing",
            call(&|m| {
                m.as_object_mut().unwrap().remove("params");
            }),
        ),
        ("name: 5", call(&|m| m["params"]["name"] = json!(5))),
        ("name: null", call(&|m| m["params"]["name"] = Value::Null)),
        ("name: []", call(&|m| m["params"]["name"] = json!([]))),
        (
            "name missing",
            call(&|m| {
                m["params"].as_object_mut().unwrap().remove("name");
            }),
        ),
        (
            "arguments: \"x\"",
            call(&|m| m["params"]["arguments"] = json!("x")),
        ),
        (
            "arguments: [1]",
            call(&|m| m["params"]["arguments"] = json!([1])),
        ),
        (
            "arguments: 5",
            call(&|m| m["params"]["arguments"] = json!(5)),
        ),
        ("_meta: 5", call(&|m| m["params"]["_meta"] = json!(5))),
        (
            "_meta.progressToken: {}",
            call(&|m| m["params"]["_meta"] = json!({"progressToken": {}})),
        ),
        (
            "text: 5",
            call(&|m| m["params"]["arguments"]["text"] = json!(5)),
        ),
        (
            "text: null",
            call(&|m| m["params"]["arguments"]["text"] = Value::Null),
        ),
    ];
    for (case, message) in cases {
        let answer = raw.ask(message).await;
        let failed = answer.get("error").is_some() || answer["result"]["isError"] == json!(true);
        assert!(failed, "{case}: not refused: {answer}");
        // The message names the field that is wrong.
        let text = match answer.get("error") {
            Some(error) => error["message"].as_str().unwrap_or_default().to_owned(),
            None => answer["result"]["content"][0]["text"]
                .as_str()
                .unwrap_or_default()
                .to_owned(),
        };
        let field = case.split([':', ' ']).next().unwrap();
        let field = field.rsplit('.').next().unwrap();
        assert!(
            text.contains(field),
            "{case}: the message does not name `{field}`: {text}"
        );
        raw.still_serving().await;
    }
}

#[tokio::test]
async fn malformed_tools_call_parameters_are_invalid_params_naming_the_field() {
    let mut raw = Raw::start(JsonLimits::default()).await;
    let answer = raw
        .ask(json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
            "params": {"name": 5, "arguments": {}}}))
        .await;
    assert_eq!(answer["id"], 3, "{answer}");
    let (code, message) = error_of(&answer);
    assert_eq!(code, -32602, "{message}");
    assert!(message.contains("params.name"), "{message}");
}

#[tokio::test]
async fn closing_the_input_ends_the_server_cleanly() {
    let raw = Raw::start(JsonLimits::default()).await;
    let Raw {
        mut write,
        server,
        read,
    } = raw;
    write.shutdown().await.unwrap();
    tokio::time::timeout(Duration::from_secs(5), server)
        .await
        .unwrap()
        .unwrap();
    drop(read);
}

#[tokio::test]
async fn a_message_of_the_limit_is_read_whatever_its_line_ending() {
    let limit = 200;
    let mut raw = Raw::start(JsonLimits::default().with_max_bytes(limit)).await;
    let ping = r#"{"jsonrpc":"2.0","id":5,"method":"ping"}"#;
    let at_limit = format!("{ping}{}", " ".repeat(limit - ping.len()));
    for ending in ["\n", "\r\n"] {
        raw.write
            .write_all(format!("{at_limit}{ending}").as_bytes())
            .await
            .unwrap();
        let answer = raw.next().await;
        assert_eq!(answer["id"], 5, "{ending:?}: {answer}");
        assert!(answer.get("result").is_some(), "{ending:?}: {answer}");
    }
    // A byte more is over the limit, with either ending; a `\r` inside is the message's.
    for ending in ["\n", "\r\n", "\r\r\n"] {
        raw.write
            .write_all(format!("{at_limit} {ending}").as_bytes())
            .await
            .unwrap();
        let (code, message) = error_of(&raw.next().await);
        assert_eq!(code, -32600, "{ending:?}");
        assert!(message.contains("limit of 200 bytes"), "{message}");
    }
    raw.still_serving().await;
}

#[tokio::test]
async fn a_last_request_without_a_newline_is_answered_before_the_end() {
    let Raw {
        mut read,
        mut write,
        server,
    } = Raw::start(JsonLimits::default()).await;
    let call = r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"text":"last"}}}"#;
    write.write_all(call.as_bytes()).await.unwrap();
    write.shutdown().await.unwrap();
    let mut rest = String::new();
    tokio::time::timeout(Duration::from_secs(5), read.read_to_string(&mut rest))
        .await
        .expect("the server ends")
        .unwrap();
    let answer: Value = serde_json::from_str(rest.trim()).unwrap();
    assert_eq!(answer["id"], 7, "{rest}");
    assert_eq!(answer["result"]["content"][0]["text"], "last", "{rest}");
    tokio::time::timeout(Duration::from_secs(5), server)
        .await
        .unwrap()
        .unwrap();
}

#[tokio::test]
async fn garbage_amid_busy_output_is_answered_every_time() {
    // The answers to unreadable lines must not be lost when the transport is busy writing
    // other messages (here: a stream of progress notifications) while it reads.
    let mut raw = Raw::start_with(JsonLimits::default(), true).await;
    raw.send(
        &json!({"jsonrpc": "2.0", "id": "busy", "method": "tools/call",
            "params": {"name": "progress", "arguments": {"steps": 300},
                "_meta": {"progressToken": "p"}}})
        .to_string(),
    )
    .await;
    for _ in 0..50 {
        raw.send("not json").await;
    }
    let (mut parse_errors, mut done) = (0, false);
    while parse_errors < 50 || !done {
        let message = raw.next().await;
        if message["error"]["code"] == -32700 {
            parse_errors += 1;
        } else if message["id"] == "busy" {
            done = true;
        }
    }
    raw.still_serving().await;
}

/// A client that closes the server's input but never reads its output: the answers fill the
/// pipe, the write waiting on them holds the writer, and the server still ends, within the
/// drain of rmcp (5 s) and the transport's own bound on closing, not never. (The clock is
/// paused: tokio moves it on when every task waits.)
#[tokio::test(start_paused = true)]
async fn a_client_that_stops_reading_cannot_hold_the_server_at_shutdown() {
    let (manager, _) = demo_manager();
    let (mut to_server, server_input) = tokio::io::duplex(1 << 16);
    // Room for the handshake's answer, not for the answers to the requests below.
    let (server_output, from_server) = tokio::io::duplex(4096);
    let started = tokio::time::Instant::now();
    let server = tokio::spawn(async move {
        let server = McpServer::with_options(manager, McpServerOptions::default());
        serve_until_closed(server, server_input, server_output, JsonLimits::default()).await
    });
    let mut from_server = BufReader::new(from_server);
    let line = |message: Value| format!("{message}\n");
    to_server
        .write_all(
            line(
                json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                "protocolVersion": "2025-06-18", "capabilities": {},
                "clientInfo": {"name": "raw", "version": "1"}}}),
            )
            .as_bytes(),
        )
        .await
        .unwrap();
    let mut init = String::new();
    from_server.read_line(&mut init).await.unwrap();
    assert!(init.contains("\"result\""), "{init}");
    to_server
        .write_all(
            line(json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).as_bytes(),
        )
        .await
        .unwrap();
    // Answers of some 2 KB each, forty of them, none read.
    for id in 1..=40 {
        to_server
            .write_all(line(json!({"jsonrpc": "2.0", "id": id, "method": "tools/list"})).as_bytes())
            .await
            .unwrap();
    }
    tokio::time::sleep(Duration::from_millis(100)).await;
    drop(to_server);
    let ended = tokio::time::timeout(Duration::from_secs(60), server)
        .await
        .expect("the server never ended: a write nobody reads held it")
        .unwrap();
    assert!(ended.is_ok(), "{ended:?}");
    assert!(
        started.elapsed() < Duration::from_secs(15),
        "{:?}",
        started.elapsed()
    );
    drop(from_server);
}

/// A burst of unreadable lines, written at once, from a client that reads: every line is
/// answered, though the server reads them from its buffer faster than it writes answers
/// (the bound on answers waiting lets them be written as it reads on), on one thread and
/// with every write suspending once.
#[tokio::test]
async fn a_burst_of_garbage_from_a_reading_client_is_answered_line_by_line() {
    const LINES: usize = 1_000;
    for slow_writes in [false, true] {
        let mut raw = Raw::start_with(JsonLimits::default(), slow_writes).await;
        raw.send(&"not json\n".repeat(LINES)).await;
        for _ in 0..LINES {
            let (code, _) = error_of(&raw.next().await);
            assert_eq!(code, -32700);
        }
        raw.still_serving().await;
    }
}

/// A client that sends unreadable lines and reads none of the answers holds no more than a
/// bounded number of them (each waits in a task of its own): past the bound the rest are not
/// made. Each line was answered by a task that waited for ever, two bytes of input buying a
/// task. A client that reads gets an answer to every line (`garbage_amid_busy_output_…`).
#[tokio::test(start_paused = true)]
async fn a_client_sending_garbage_and_reading_nothing_holds_a_bounded_number_of_answers() {
    const LINES: usize = 10_000;
    let (manager, _) = demo_manager();
    let (mut to_server, server_input) = tokio::io::duplex(1 << 16);
    // Room for a few answers only.
    let (server_output, from_server) = tokio::io::duplex(1024);
    let server = tokio::spawn(async move {
        let server = McpServer::with_options(manager, McpServerOptions::default());
        serve_until_closed(server, server_input, server_output, JsonLimits::default()).await
    });
    to_server
        .write_all("not json\n".repeat(LINES).as_bytes())
        .await
        .unwrap();
    // Every line read (the clock is paused: tokio moves it on once every task waits).
    tokio::time::sleep(Duration::from_secs(5)).await;
    drop(to_server);
    // Then the answers that were made, read at last: the bound's, and what the pipe held.
    let mut from_server = BufReader::new(from_server);
    let mut answers = 0;
    let mut line = String::new();
    while let Ok(Ok(read)) =
        tokio::time::timeout(Duration::from_secs(5), from_server.read_line(&mut line)).await
    {
        if read == 0 {
            break;
        }
        assert!(line.contains("-32700"), "{line}");
        answers += 1;
        line.clear();
    }
    assert!(
        (64..=64 + 20).contains(&answers),
        "{answers} of {LINES} lines answered"
    );
    let ended = tokio::time::timeout(Duration::from_secs(60), server)
        .await
        .expect("the server ended")
        .unwrap();
    assert!(ended.is_ok(), "{ended:?}");
}

/// A client's text in a malformed request (an unknown method's name, a value of the wrong
/// type) is quoted cut, as a tool name or a cursor is: a name of 100,000 characters is not
/// echoed whole.
#[tokio::test]
async fn long_client_text_in_a_malformed_request_is_quoted_cut() {
    let mut raw = Raw::start(JsonLimits::default()).await;
    let long = "x".repeat(100_000);
    for (case, request) in [
        (
            "an unknown method",
            json!({"jsonrpc": "2.0", "id": 1, "method": long.clone(), "params": {}}),
        ),
        (
            "arguments of the wrong type",
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                "params": {"name": "echo", "arguments": long.clone()}}),
        ),
        (
            "params of the wrong type",
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": long.clone()}),
        ),
        (
            "a progress token of the wrong type",
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
                "name": "echo", "arguments": {"text": "x"},
                "_meta": {"progressToken": [long.clone()]}}}),
        ),
    ] {
        let answer = raw.ask(request).await;
        let (_, message) = error_of(&answer);
        assert!(
            message.contains("xxx"),
            "{case}: not quoted at all: {message}"
        );
        if case == "arguments of the wrong type" {
            assert!(message.contains("expected"), "{case}: {message}");
        }
        assert!(
            answer.to_string().len() < 2_000,
            "{case}: {} bytes",
            answer.to_string().len()
        );
        raw.still_serving().await;
    }
}

/// A notification or an answer sent before `initialize` is not answered (JSON-RPC answers
/// neither) and ends nothing: rmcp's handshake took it for a broken handshake and ended the
/// connection (on stdio, the process), so the `initialize` that followed went unanswered.
#[tokio::test]
async fn a_notification_or_an_answer_before_initialize_is_ignored() {
    for early in [
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
            "params": {"requestId": 0}}),
        json!({"jsonrpc": "2.0", "method": "no/such_notification"}),
        json!({"jsonrpc": "2.0", "id": 9, "result": {}}),
        json!({"jsonrpc": "2.0", "id": 9, "error": {"code": -1, "message": "no"}}),
    ] {
        let mut raw = Raw::connect(JsonLimits::default(), false).await;
        raw.send(&early.to_string()).await;
        raw.handshake().await;
        raw.still_serving().await;
    }
}
