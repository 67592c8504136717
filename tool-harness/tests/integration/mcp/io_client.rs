//! `McpClient::connect_io`: our client over any reader and writer, here one end of a duplex
//! whose other end our server serves in process, or a scripted server: its tools bridged,
//! its handshake bounded by the connect timeout, its answers by the client's limits.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use toolsmith_core::{ToolArguments, ToolCallManager, ToolCallRequest, ToolErrorKind};
use toolsmith_harness::mcp::{McpClient, McpClientOptions, McpError, McpNames};

use super::demo_manager;

fn options() -> McpClientOptions {
    McpClientOptions::default().with_names(McpNames::new())
}

fn request(name: &str, arguments: Value) -> ToolCallRequest {
    ToolCallRequest::new("c1", name, ToolArguments::try_from(arguments).unwrap())
}

#[tokio::test]
async fn a_client_over_a_duplex_calls_a_server_in_the_same_process() {
    let (manager, _) = demo_manager();
    let (client, serving) = super::our_client_of(manager, "in-process").await;

    let local = ToolCallManager::new("consumer");
    for tool in client.tools() {
        local.register(Arc::new(tool)).unwrap();
    }
    let result = local
        .execute_one(&request("add", json!({"a": 2, "b": 3})))
        .await
        .unwrap();
    assert_eq!(result.content.to_text(), "5");
    // The server's schema refuses it: an error naming the local tool, not a run.
    let refused = local
        .execute_one(&request("add", json!({"a": -1, "b": 3})))
        .await
        .unwrap_err();
    assert_eq!(refused.kind(), ToolErrorKind::InvalidArguments, "{refused}");

    client.close().await;
    tokio::time::timeout(Duration::from_secs(5), serving)
        .await
        .expect("the server ends with the connection")
        .unwrap()
        .unwrap();
}

#[tokio::test]
async fn a_peer_that_never_answers_the_handshake_fails_within_the_connect_timeout() {
    let (client_end, _silent) = tokio::io::duplex(1 << 16);
    let (read, write) = tokio::io::split(client_end);
    let started = std::time::Instant::now();
    let error = McpClient::connect_io(
        "the silent peer",
        read,
        write,
        options().with_connect_timeout(Duration::from_millis(200)),
    )
    .await
    .unwrap_err();
    assert!(matches!(error, McpError::Timeout { .. }), "{error:?}");
    assert!(error.to_string().contains("the silent peer"), "{error}");
    assert!(started.elapsed() < Duration::from_secs(5));
}

/// A peer that writes lines that are not messages (no MCP server, or one logging on the
/// same stream): the failed connection's error counts them and quotes the first, whether it
/// times out or the peer closes the connection.
#[tokio::test]
async fn a_peer_writing_lines_that_are_not_messages_is_named_in_the_error() {
    let (client_end, mut server_end) = tokio::io::duplex(1 << 16);
    let (read, write) = tokio::io::split(client_end);
    server_end
        .write_all(b"starting up\nlistening on stdio\n")
        .await
        .unwrap();
    let error = McpClient::connect_io(
        "the chatty peer",
        read,
        write,
        options().with_connect_timeout(Duration::from_millis(300)),
    )
    .await
    .unwrap_err();
    assert!(matches!(error, McpError::Timeout { .. }), "{error:?}");
    let message = error.to_string();
    assert!(
        message
            .contains("the server wrote 2 lines that are not JSON-RPC messages to the connection"),
        "{message}"
    );
    assert!(message.contains("the first: \"starting up\""), "{message}");

    // The same, the peer ending its output (a program that printed its usage and exited): a
    // failed handshake.
    let (client_end, server_end) = tokio::io::duplex(1 << 16);
    let (read, write) = tokio::io::split(client_end);
    let (_server_read, mut server_write) = tokio::io::split(server_end);
    server_write
        .write_all(b"usage: server [--stdio]\n")
        .await
        .unwrap();
    server_write.shutdown().await.unwrap();
    let error = McpClient::connect_io("the closing peer", read, write, options())
        .await
        .unwrap_err();
    assert!(matches!(error, McpError::Handshake { .. }), "{error:?}");
    let message = error.to_string();
    assert!(
        message
            .contains("the server wrote 1 line that is not a JSON-RPC message to the connection"),
        "{message}"
    );
    assert!(message.contains("\"usage: server [--stdio]\""), "{message}");
}

/// A scripted server: answers the handshake and `tools/list` with one tool, then each
/// `tools/call` with `result`.
async fn scripted_server(end: tokio::io::DuplexStream, result: String) {
    let (read, mut write) = tokio::io::split(end);
    let mut lines = BufReader::new(read).lines();
    while let Ok(Some(line)) = lines.next_line().await {
        let message: Value = serde_json::from_str(&line).unwrap();
        let Some(id) = message.get("id").cloned() else {
            continue;
        };
        let answer = match message["method"].as_str() {
            Some("initialize") => json!({"jsonrpc": "2.0", "id": id, "result": {
                "protocolVersion": message["params"]["protocolVersion"],
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "scripted", "version": "1"}}})
            .to_string(),
            Some("tools/list") => json!({"jsonrpc": "2.0", "id": id, "result": {"tools": [
                {"name": "echo", "description": "Echoes.",
                 "inputSchema": {"type": "object"}}]}})
            .to_string(),
            Some("tools/call") => format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{result}}}"#),
            _ => json!({"jsonrpc": "2.0", "id": id, "result": {}}).to_string(),
        };
        write.write_all(answer.as_bytes()).await.unwrap();
        write.write_all(b"\n").await.unwrap();
    }
}

#[tokio::test]
async fn a_servers_answer_past_the_clients_limits_fails_its_call_naming_the_limit() {
    let deep = format!(
        r#"{{"content":[],"structuredContent":{{"x":{}1{}}}}}"#,
        "[".repeat(100),
        "]".repeat(100)
    );
    let (client_end, server_end) = tokio::io::duplex(1 << 16);
    tokio::spawn(scripted_server(server_end, deep));
    let (read, write) = tokio::io::split(client_end);
    let client = McpClient::connect_io("scripted", read, write, options())
        .await
        .unwrap();
    let local = ToolCallManager::new("consumer");
    for tool in client.tools() {
        local.register(Arc::new(tool)).unwrap();
    }
    let error = tokio::time::timeout(
        Duration::from_secs(5),
        local.execute_one(&request("echo", json!({}))),
    )
    .await
    .expect("the call ends at once, not at its time limit")
    .unwrap_err();
    assert!(
        error.to_string().contains("nests deeper than 64 levels"),
        "{error}"
    );
}
