//! Answers our client cannot read (too deep, too large, not JSON) from a misbehaving server:
//! the call they answer fails at once with an error naming the problem, not after its time
//! limit and not as a network failure to retry (except where rmcp drops the cause: an
//! event stream that ends without its answer), and the next call on the same connection
//! still works. Over stdio (a shell script as the server) and streamable HTTP (an axum
//! handler on 127.0.0.1).

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use serde_json::{Value, json};
use toolsmith_core::{ToolArguments, ToolErrorKind, ToolImpl};
use toolsmith_harness::mcp::{
    JsonLimits, McpClient, McpClientOptions, McpCommand, McpNames, McpToolBridge, McpTransport,
};

use super::fake_http::{FakeAnswer, FakeHttpServer};

/// Far from any answer in these tests: a call that waits for it has failed the test.
const CALL_TIMEOUT: Duration = Duration::from_secs(30);

fn options() -> McpClientOptions {
    McpClientOptions::default()
        .with_names(McpNames::new())
        .with_call_timeout(Some(CALL_TIMEOUT))
        .with_limits(
            JsonLimits::default()
                .with_max_bytes(4096)
                .with_max_values(500),
        )
}

fn nested(levels: usize) -> String {
    format!("{}1{}", "[".repeat(levels), "]".repeat(levels))
}

/// A server on stdio that answers its tools' calls, in turn: too deep for the client's
/// limit (64), over its size limit (4096 bytes), not JSON, of more values than its limit
/// (500) within its size, then as it should.
fn misbehaving_stdio_server() -> McpCommand {
    let deep = format!(
        r#"{{"jsonrpc":"2.0","id":%s,"result":{{"content":[],"structuredContent":{{"x":{}}}}}}}"#,
        nested(80)
    );
    let large = format!(
        r#"{{"jsonrpc":"2.0","id":%s,"result":{{"content":[{{"type":"text","text":"{}"}}]}}}}"#,
        "x".repeat(10_000)
    );
    let many = format!(
        r#"{{"jsonrpc":"2.0","id":%s,"result":{{"content":[],"structuredContent":{{"x":[{}0]}}}}}}"#,
        "0,".repeat(1000)
    );
    let script = format!(
        r#"
calls=0
while IFS= read -r line; do
  id=$(printf '%s' "$line" | sed -n 's/.*"id":\([0-9]*\).*/\1/p')
  case "$line" in
    *'"method":"initialize"'*)
      version=$(printf '%s' "$line" | sed -n 's/.*"protocolVersion":"\([^"]*\)".*/\1/p')
      printf '{{"jsonrpc":"2.0","id":%s,"result":{{"protocolVersion":"%s","capabilities":{{"tools":{{}}}},"serverInfo":{{"name":"misbehaving","version":"1"}}}}}}\n' "$id" "$version" ;;
    *'"method":"tools/list"'*)
      printf '{{"jsonrpc":"2.0","id":%s,"result":{{"tools":[{{"name":"t","description":"A tool.","inputSchema":{{"type":"object"}}}}]}}}}\n' "$id" ;;
    *'"method":"tools/call"'*)
      calls=$((calls + 1))
      case $calls in
        1) printf '{deep}\n' "$id" ;;
        2) printf '{large}\n' "$id" ;;
        3) printf '{{"jsonrpc":"2.0","id":%s,"result":{{"content": tru}}}}\n' "$id" ;;
        4) printf '{many}\n' "$id" ;;
        *) printf '{{"jsonrpc":"2.0","id":%s,"result":{{"content":[{{"type":"text","text":"ok"}}]}}}}\n' "$id" ;;
      esac ;;
  esac
done
"#
    );
    McpCommand::new("sh").arg("-c").arg(script).quiet()
}

/// Calls the bridged tool `t` and returns the error's text, checking it came at once.
async fn failing_call(tool: &impl ToolImpl) -> String {
    let error = tokio::time::timeout(CALL_TIMEOUT / 3, tool.execute(ToolArguments::new()))
        .await
        .expect("the call is answered at once, not left to wait for its time limit")
        .unwrap_err();
    assert_eq!(error.kind(), ToolErrorKind::Execution, "{error}");
    let text = error.to_string();
    assert!(text.contains("could not be read"), "{text}");
    text
}

#[tokio::test]
async fn over_stdio_an_unreadable_answer_fails_its_call_at_once() {
    let client =
        McpClient::connect_with(McpTransport::child(misbehaving_stdio_server()), options())
            .await
            .unwrap();
    let tool = client.tools().into_iter().next().unwrap();

    let deep = failing_call(&tool).await;
    assert!(deep.contains("deeper than 64 levels"), "{deep}");
    let large = failing_call(&tool).await;
    assert!(
        large.contains("larger than the limit of 4096 bytes"),
        "{large}"
    );
    let garbage = failing_call(&tool).await;
    assert!(garbage.contains("Parse error"), "{garbage}");
    let many = failing_call(&tool).await;
    assert!(many.contains("more than 500 values"), "{many}");

    let fine = tool.execute(ToolArguments::new()).await.unwrap();
    assert_eq!(fine.content.to_text(), "ok");
    client.close().await;
}

/// An answer to call `id` of some 10,000 bytes.
fn large_answer(id: impl std::fmt::Display) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"result":{{"content":[{{"type":"text","text":"{}"}}]}}}}"#,
        "x".repeat(10_000)
    )
}

/// A streamable-HTTP server listing one tool, `t`, that answers each call of it with
/// `call(id)` (`id` the request's) and any other request with an empty result.
async fn one_tool_server<F>(call: F) -> FakeHttpServer
where
    F: Fn(&Value) -> FakeAnswer + Send + Sync + 'static,
{
    FakeHttpServer::start(move |method, id| match method {
        "tools/list" => FakeAnswer::Result(json!({"tools": [
            {"name": "t", "description": "A tool.", "inputSchema": {"type": "object"}}
        ]})),
        "tools/call" => call(id),
        _ => FakeAnswer::Result(json!({})),
    })
    .await
}

/// A streamable-HTTP server whose first `tools/call` answer nests 200 levels (past the
/// client's limit, and serde_json's), whose second is an event stream of text that is not JSON, whose third and
/// fourth (a body, an event) are over the client's size limit, and whose others are right.
async fn misbehaving_http_server() -> FakeHttpServer {
    let calls = Arc::new(AtomicUsize::new(0));
    one_tool_server(move |id| match calls.fetch_add(1, Ordering::SeqCst) {
            0 => FakeAnswer::Raw(
                format!(
                    r#"{{"jsonrpc":"2.0","id":{id},"result":{{"content":[],"structuredContent":{{"x":{}}}}}}}"#,
                    nested(200)
                ),
                "application/json",
            ),
            1 => FakeAnswer::Raw("event: message\ndata: not json {\n\n".into(), "text/event-stream"),
            // Over the client's 4096 bytes, in a body and in an event.
            2 => FakeAnswer::Raw(large_answer(id), "application/json"),
            3 => FakeAnswer::Raw(
                format!("event: message\ndata: {}\n\n", large_answer(id)),
                "text/event-stream",
            ),
        _ => FakeAnswer::Result(json!({"content": [{"type": "text", "text": "ok"}]})),
    })
    .await
}

#[tokio::test]
async fn over_http_an_unreadable_answer_is_not_a_closed_connection() {
    let server = misbehaving_http_server().await;
    let (client, tool) = connected(&server).await;

    let deep = failing_call(&tool).await;
    assert!(deep.contains("deeper than 64 levels"), "{deep}");
    // rmcp drops an event it cannot read and reports the stream's end without its cause:
    // not an unreadable answer, but not a closed connection either.
    let garbage = tool.execute(ToolArguments::new()).await.unwrap_err();
    assert_eq!(garbage.kind(), ToolErrorKind::Network);
    assert!(
        garbage
            .to_string()
            .contains("ended the answer's stream without an answer it could read"),
        "{garbage}"
    );

    // The client's byte limit bounds bodies and events (rmcp's own would be 16 MiB).
    let large = failing_call(&tool).await;
    assert!(large.contains("maximum size of 4096 bytes"), "{large}");
    let large_event = tool.execute(ToolArguments::new()).await.unwrap_err();
    // As for the event that is not JSON: the stream ends without the answer.
    assert_eq!(large_event.kind(), ToolErrorKind::Network, "{large_event}");
    assert!(
        large_event
            .to_string()
            .contains("ended the answer's stream without an answer it could read"),
        "{large_event}"
    );

    let fine = tool.execute(ToolArguments::new()).await.unwrap();
    assert_eq!(fine.content.to_text(), "ok");
    client.close().await;
}

/// A client of `server` with the client's limits of these tests, and its first tool.
async fn connected(server: &FakeHttpServer) -> (McpClient, McpToolBridge) {
    let client = McpClient::connect_with(McpTransport::http(server.url()), options())
        .await
        .unwrap();
    let tool = client.tools().into_iter().next().unwrap();
    (client, tool)
}

/// `body` as the one event of an event stream.
fn event_answer(body: String) -> FakeAnswer {
    FakeAnswer::Raw(
        format!("event: message\ndata: {body}\n\n"),
        "text/event-stream",
    )
}

/// `{"v": {"$serde_json::private::RawValue": "\"x\""}}`: serde_json (with `raw_value`, which
/// axum turns on) reads it as `{"v": "x"}`, a value the server never wrote.
const PRIVATE_KEY_CONTENT: &str = r#"{"v": {"$serde_json::private::RawValue": "\"x\""}}"#;

/// An answer to call `id` whose structured content is `structured` (JSON text).
fn structured_answer(id: impl std::fmt::Display, structured: &str) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"result":{{"content":[],"structuredContent":{structured}}}}}"#
    )
}

/// A streamable-HTTP server whose `tools/call` answers go past the client's limits other
/// than bytes, in turn: serde_json's private key in a body and in an event, a body and an
/// event nested past 64 levels (within serde_json's 128), a body and an event of more than
/// 500 values (within 4096 bytes); then right answers.
async fn unbounded_http_server() -> FakeHttpServer {
    let calls = Arc::new(AtomicUsize::new(0));
    one_tool_server(move |id| {
        let json = |body: String| FakeAnswer::Raw(body, "application/json");
        let many = format!("[{}0]", "0,".repeat(1000));
        match calls.fetch_add(1, Ordering::SeqCst) {
            0 => json(structured_answer(id, PRIVATE_KEY_CONTENT)),
            1 => event_answer(structured_answer(id, PRIVATE_KEY_CONTENT)),
            2 => json(structured_answer(id, &format!(r#"{{"x":{}}}"#, nested(80)))),
            3 => event_answer(structured_answer(id, &format!(r#"{{"x":{}}}"#, nested(80)))),
            4 => json(structured_answer(id, &format!(r#"{{"x":{many}}}"#))),
            5 => event_answer(structured_answer(id, &format!(r#"{{"x":{many}}}"#))),
            _ => FakeAnswer::Result(json!({"content": [{"type": "text", "text": "ok"}]})),
        }
    })
    .await
}

#[tokio::test]
async fn over_http_answers_are_bounded_in_depth_values_and_keys_before_they_are_read() {
    let server = unbounded_http_server().await;
    let (client, tool) = connected(&server).await;

    for (what, expected) in [
        ("a body", "$serde_json::private::"),
        ("an event", "$serde_json::private::"),
        ("a body", "deeper than 64 levels"),
        ("an event", "deeper than 64 levels"),
        ("a body", "more than 500 values"),
        ("an event", "more than 500 values"),
    ] {
        let text = failing_call(&tool).await;
        assert!(text.contains(expected), "{what}: {text}");
    }

    let fine = tool.execute(ToolArguments::new()).await.unwrap();
    assert_eq!(fine.content.to_text(), "ok");
    client.close().await;
}

/// serde_json's private keys spelled as string values, not keys: strings serde_json reads
/// as strings, so answers holding them (a text block that is one, a structured value) come
/// through whole, in a body and in an event (the byte scan refused them until session 44).
#[tokio::test]
async fn over_http_a_private_key_spelled_as_a_value_is_read_as_a_string() {
    let calls = Arc::new(AtomicUsize::new(0));
    let server = one_tool_server(move |id| {
        let call = calls.fetch_add(1, Ordering::SeqCst);
        let result = if call < 2 {
            r#"{"content":[{"type":"text","text":"$serde_json::private::RawValue"}]}"#
        } else {
            r#"{"content":[],"structuredContent":{"v":["$serde_json::private::Number" ]}}"#
        };
        let body = format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{result}}}"#);
        match call % 2 {
            0 => FakeAnswer::Raw(body, "application/json"),
            _ => event_answer(body),
        }
    })
    .await;
    let (client, tool) = connected(&server).await;
    let call = || async {
        tool.execute(ToolArguments::new())
            .await
            .unwrap_or_else(|error| panic!("{error}"))
    };
    for what in ["a body", "an event"] {
        let text = call().await;
        assert_eq!(
            text.content.to_text(),
            "$serde_json::private::RawValue",
            "{what}"
        );
    }
    for what in ["a body", "an event"] {
        let structured = call().await;
        assert_eq!(
            structured.content.json_value().as_deref(),
            Some(&json!({"v": ["$serde_json::private::Number"]})),
            "{what}: {structured:?}"
        );
    }
    client.close().await;
}

/// A request of the server's that the client cannot read, sent among a call's events, is
/// answered with an error under its id that names the limit (unanswered, the server would
/// wait for it); a request of a method the client does not know is refused as such; the
/// call's own answer still comes through.
#[tokio::test]
async fn over_http_an_unreadable_request_of_the_servers_is_answered_with_an_error() {
    let server = one_tool_server(|id| {
        FakeAnswer::Raw(
            format!(
                "event: message\ndata: {{\"jsonrpc\":\"2.0\",\"id\":\"s1\",\"method\":\"roots/list\",\"params\":{{\"x\":{}}}}}\n\n\
                 event: message\ndata: {{\"jsonrpc\":\"2.0\",\"id\":\"s2\",\"method\":\"x/unknown\"}}\n\n\
                 event: message\ndata: {{\"jsonrpc\":\"2.0\",\"id\":{id},\"result\":{{\"content\":[{{\"type\":\"text\",\"text\":\"ok\"}}]}}}}\n\n",
                nested(200)
            ),
            "text/event-stream",
        )
    })
    .await;
    let (client, tool) = connected(&server).await;
    let result = tool.execute(ToolArguments::new()).await.unwrap();
    assert_eq!(result.content.to_text(), "ok");
    // The client answers on a POST of its own, which may come just after the call's answer.
    let answer_to = |id: &'static str| {
        let server = &server;
        async move {
            tokio::time::timeout(Duration::from_secs(5), async {
                loop {
                    if let Some(answer) = server.answers().into_iter().find(|a| a["id"] == id) {
                        return answer;
                    }
                    tokio::time::sleep(Duration::from_millis(5)).await;
                }
            })
            .await
            .unwrap_or_else(|_| panic!("the server's request {id} was not answered"))
        }
    };
    let unreadable = answer_to("s1").await;
    assert!(unreadable.get("result").is_none(), "{unreadable}");
    let message = unreadable["error"]["message"].as_str().unwrap();
    assert!(message.contains("deeper than 64 levels"), "{unreadable}");
    let unknown = answer_to("s2").await;
    assert_eq!(unknown["error"]["code"], -32601, "{unknown}");
    assert_eq!(server.answers().len(), 2);
    client.close().await;
}

/// Answers to requests the client never sent, in a call's event stream before the call's
/// own: a result under another id, one under the call's id written as a string, one under
/// another integer written as a float (which rmcp reads as that integer), an error under a
/// string id. rmcp ends a request's stream at the first answer in it, whatever its id, and
/// drops what follows: the call failed as a stream that ended without its answer (found by
/// the `mcp_peer` fuzz target). They are passed over; the call's own answer comes through,
/// and the connection serves the next call.
#[tokio::test]
async fn over_http_answers_to_other_requests_before_a_calls_own_are_passed_over() {
    let server = one_tool_server(|id| {
        let event = |message: serde_json::Value| format!("event: message\ndata: {message}\n\n");
        let text = |text: &str| json!({"content": [{"type": "text", "text": text}]});
        let mut stream = [
            event(json!({"jsonrpc": "2.0", "id": -8, "result": text("not yours")})),
            event(json!({"jsonrpc": "2.0", "id": id.to_string(), "result": text("not yours")})),
            event(json!({"jsonrpc": "2.0", "id": "other",
                    "error": {"code": -32603, "message": "not yours"}})),
        ]
        .concat();
        stream.push_str(&format!(
            "event: message\ndata: {{\"jsonrpc\":\"2.0\",\"id\":{}.0,\"result\":{}}}\n\n",
            id.as_i64().unwrap() + 1000,
            text("not yours")
        ));
        stream.push_str(&event(
            json!({"jsonrpc": "2.0", "id": id, "result": text("ok")}),
        ));
        FakeAnswer::Raw(stream, "text/event-stream")
    })
    .await;
    let (client, tool) = connected(&server).await;
    for _ in 0..2 {
        let result = tool.execute(ToolArguments::new()).await.unwrap();
        assert_eq!(result.content.to_text(), "ok");
    }
    client.close().await;
}
