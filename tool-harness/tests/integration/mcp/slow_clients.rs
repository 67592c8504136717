//! A client that sends its request slowly (headers or body cut off mid-way, then nothing)
//! cannot hold a connection of our HTTP server, and the task serving it, for ever: past the
//! request read timeout the head is dropped and the body answered `408`.

use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use toolsmith_harness::mcp::{McpHttpOptions, McpHttpServer, McpServer};

use super::demo_manager;

/// The timeout under test, and how long a test waits for it: far longer, however slow the
/// machine; a server that never times out fails there.
const READ_TIMEOUT: Duration = Duration::from_secs(1);
const PATIENCE: Duration = Duration::from_secs(20);

async fn start() -> McpHttpServer {
    let (manager, _) = demo_manager();
    let options = McpHttpOptions::default().with_request_read_timeout(READ_TIMEOUT);
    McpHttpServer::start(McpServer::new(manager), options)
        .await
        .unwrap()
}

/// Writes `sent` to a new connection to `server`, sends nothing more, and reads what the
/// server answers until it closes the connection.
async fn stall_after(server: &McpHttpServer, sent: String) -> String {
    let mut stream = tokio::net::TcpStream::connect(server.local_addr())
        .await
        .unwrap();
    stream.write_all(sent.as_bytes()).await.unwrap();
    let mut answer = Vec::new();
    tokio::time::timeout(PATIENCE, stream.read_to_end(&mut answer))
        .await
        .expect("the server kept the stalled connection open")
        .unwrap();
    String::from_utf8_lossy(&answer).into_owned()
}

#[tokio::test]
async fn a_request_head_that_stops_midway_is_dropped() {
    let server = start().await;
    let addr = server.local_addr();
    let answer = stall_after(
        &server,
        format!("POST /mcp HTTP/1.1\r\nHost: {addr}\r\nAccept: "),
    )
    .await;
    // hyper closes the connection without an answer, or answers 408.
    assert!(
        answer.is_empty() || answer.starts_with("HTTP/1.1 408"),
        "{answer}"
    );
    server.shutdown().await.unwrap();
}

#[tokio::test]
async fn a_body_that_stops_midway_is_answered_408() {
    let server = start().await;
    let addr = server.local_addr();
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nContent-Length: 100\r\n\r\n{{\"jsonrpc\""
    );
    let answer = stall_after(&server, head).await;
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    assert!(answer.contains("within 1s"), "{answer}");
    server.shutdown().await.unwrap();
}

/// A read timeout no instant reaches (`Duration::MAX`: "never") serves requests with no limit
/// on their reading. Adding it to the clock panicked in each connection's task, which served
/// nothing.
#[tokio::test]
async fn a_read_timeout_past_the_clock_means_no_limit() {
    use rmcp::model::ClientConfig;
    use rmcp::service::ServiceExt as _;
    use rmcp::transport::StreamableHttpClientTransport;

    let (manager, _) = demo_manager();
    let options = McpHttpOptions::default().with_request_read_timeout(Duration::MAX);
    let server = McpHttpServer::start(McpServer::new(manager), options)
        .await
        .unwrap();
    #[allow(deprecated)]
    let _ = rustls::crypto::ring::default_provider().install_default();
    let client = tokio::time::timeout(
        PATIENCE,
        ClientConfig::default().serve(StreamableHttpClientTransport::from_uri(server.url())),
    )
    .await
    .expect("no answer")
    .unwrap();
    assert!(!client.list_all_tools().await.unwrap().is_empty());
    client.cancel().await.unwrap();
    server.shutdown().await.unwrap();
}
