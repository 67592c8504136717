//! Our server over streamable HTTP on 127.0.0.1, under rmcp's client: calls, the bearer
//! token, the Host / Origin checks against DNS rebinding, the cap on open sessions, and the
//! limits on a body's depth and values.

use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{CallToolRequestParams, ClientConfig};
use rmcp::service::ServiceExt as _;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use toolsmith_harness::mcp::{DEFAULT_SERVER_MAX_VALUES, McpHttpOptions, McpHttpServer, McpServer};

use super::demo_manager;

async fn start(options: McpHttpOptions) -> McpHttpServer {
    let (manager, _) = demo_manager();
    McpHttpServer::start(McpServer::new(manager), options)
        .await
        .unwrap()
}

/// rmcp's own HTTP client builds reqwest's default client, which in this build (reqwest's
/// `rustls-no-provider`) needs a process-wide rustls provider; Toolsmith's clients never do.
/// (The ring provider is deprecated since rustls 0.23.48 for want of post-quantum key exchange;
/// it is the one this build has.)
#[allow(deprecated)]
fn install_tls_provider() {
    let _ = rustls::crypto::ring::default_provider().install_default();
}

/// rmcp's client connected over HTTP, sending `token` if given.
async fn rmcp_client(
    url: &str,
    token: Option<&str>,
) -> Result<
    rmcp::service::RunningService<rmcp::RoleClient, ClientConfig>,
    rmcp::service::ClientInitializeError,
> {
    install_tls_provider();
    let mut config = StreamableHttpClientTransportConfig::with_uri(url);
    if let Some(token) = token {
        config = config.auth_header(token);
    }
    ClientConfig::default()
        .serve(StreamableHttpClientTransport::from_config(config))
        .await
}

/// A raw `initialize` POST to `addr` with these extra headers (`Host` is `addr` unless one
/// is given), written to a new connection.
async fn send_raw_initialize(
    addr: std::net::SocketAddr,
    headers: &[(&str, String)],
) -> tokio::net::TcpStream {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "raw", "version": "1"}}})
    .to_string();
    let mut request = format!(
        "POST /mcp HTTP/1.1\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n",
        body.len()
    );
    let has_host = headers
        .iter()
        .any(|(name, _)| name.eq_ignore_ascii_case("host"));
    if !has_host {
        request.push_str(&format!("Host: {addr}\r\n"));
    }
    for (name, value) in headers {
        request.push_str(&format!("{name}: {value}\r\n"));
    }
    request.push_str("\r\n");
    request.push_str(&body);
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    stream.write_all(request.as_bytes()).await.unwrap();
    stream
}

/// The status code of a raw `initialize` POST to `server` with these extra headers.
async fn raw_status(server: &McpHttpServer, headers: &[(&str, String)]) -> u16 {
    raw_status_at(server.local_addr(), headers).await
}

/// The status code of a raw `initialize` POST to `addr` with these extra headers.
async fn raw_status_at(addr: std::net::SocketAddr, headers: &[(&str, String)]) -> u16 {
    let mut stream = send_raw_initialize(addr, headers).await;
    let mut head = vec![0u8; 12];
    tokio::time::timeout(Duration::from_secs(5), stream.read_exact(&mut head))
        .await
        .unwrap()
        .unwrap();
    // "HTTP/1.1 200"
    String::from_utf8_lossy(&head[9..12]).parse().unwrap()
}

#[tokio::test]
async fn calls_over_http_on_localhost() {
    let server = start(McpHttpOptions::default()).await;
    assert!(server.local_addr().ip().is_loopback());
    install_tls_provider();
    let client = ClientConfig::default()
        .serve(StreamableHttpClientTransport::from_uri(server.url()))
        .await
        .unwrap();
    assert_eq!(client.list_all_tools().await.unwrap().len(), 6);
    let sum = client
        .call_tool(
            CallToolRequestParams::new("add")
                .with_arguments(json!({"a": 1, "b": 2}).as_object().cloned().unwrap()),
        )
        .await
        .unwrap();
    assert_eq!(sum.structured_content, Some(json!({"result": 3})));
    client.cancel().await.unwrap();
    server.shutdown().await.unwrap();
}

#[tokio::test]
async fn a_bearer_token_is_required_when_set() {
    let server = start(McpHttpOptions::default().with_bearer_token("s3cret")).await;
    assert!(rmcp_client(&server.url(), None).await.is_err());
    assert!(rmcp_client(&server.url(), Some("wrong")).await.is_err());
    let client = rmcp_client(&server.url(), Some("s3cret")).await.unwrap();
    assert_eq!(client.list_all_tools().await.unwrap().len(), 6);
    client.cancel().await.unwrap();
    assert_eq!(raw_status(&server, &[]).await, 401);
    assert_eq!(
        raw_status(&server, &[("Authorization", "Bearer s3cret".into())]).await,
        200
    );
    server.shutdown().await.unwrap();
}

#[tokio::test]
async fn the_bearer_scheme_may_be_written_in_any_case() {
    let server = start(McpHttpOptions::default().with_bearer_token("s3cret")).await;
    for value in ["bearer s3cret", "BEARER s3cret", "Bearer  s3cret "] {
        assert_eq!(
            raw_status(&server, &[("Authorization", value.into())]).await,
            200,
            "{value:?}"
        );
    }
    for value in ["Bearer", "Bearer ", "Basic s3cret", "Bearers3cret"] {
        assert_eq!(
            raw_status(&server, &[("Authorization", value.into())]).await,
            401,
            "{value:?}"
        );
    }
    server.shutdown().await.unwrap();
}

#[tokio::test]
async fn spaces_around_a_configured_token_are_not_part_of_it() {
    for token in [" s3cret", "s3cret\n", "\ts3cret  "] {
        let server = start(McpHttpOptions::default().with_bearer_token(token)).await;
        assert_eq!(
            raw_status(&server, &[("Authorization", "Bearer s3cret".into())]).await,
            200,
            "{token:?}"
        );
        assert_eq!(raw_status(&server, &[]).await, 401, "{token:?}");
        server.shutdown().await.unwrap();
    }
}

#[tokio::test]
async fn an_empty_bearer_token_is_refused_not_taken_for_none() {
    let (manager, _) = demo_manager();
    for token in ["", "  "] {
        let error = McpHttpServer::start(
            McpServer::new(Arc::clone(&manager)),
            McpHttpOptions::default().with_bearer_token(token),
        )
        .await
        .unwrap_err();
        assert!(
            error.to_string().contains("bearer token is empty"),
            "{error}"
        );
    }
    for host in ["", " "] {
        let error = McpHttpServer::start(
            McpServer::new(Arc::clone(&manager)),
            McpHttpOptions::default().allow_host(host),
        )
        .await
        .unwrap_err();
        assert!(
            error.to_string().contains("an allowed host is empty"),
            "{error}"
        );
    }
    // A host no request's `Host` could be, and a token no header could carry.
    for (options, says) in [
        (
            McpHttpOptions::default().allow_host("http://tools.lan"),
            "the allowed host \"http://tools.lan\" is a URL",
        ),
        (
            McpHttpOptions::default().with_bearer_token("s3\r\ncret"),
            "the bearer token holds a control character (\\r)",
        ),
    ] {
        let error = McpHttpServer::start(McpServer::new(Arc::clone(&manager)), options)
            .await
            .unwrap_err();
        assert!(error.to_string().contains(says), "{error}");
    }
    // A router mounted with one refuses every request, with or without a header.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let bound = listener.local_addr().unwrap();
    let app = toolsmith_harness::mcp::router(
        McpServer::new(manager),
        &McpHttpOptions::default().with_bearer_token(""),
        bound,
        toolsmith_core::CancellationToken::new(),
    );
    let serving = tokio::spawn(async move { axum::serve(listener, app).await });
    for headers in [
        vec![],
        vec![("Authorization", "Bearer ".to_owned())],
        vec![("Authorization", "Bearer  ".to_owned())],
    ] {
        assert_eq!(raw_status_at(bound, &headers).await, 401, "{headers:?}");
    }
    serving.abort();
}

#[tokio::test]
async fn a_server_on_every_address_takes_the_hosts_it_is_given() {
    let (manager, _) = demo_manager();
    // The router as `toolsmith serve --http 0.0.0.0:PORT` builds it, served on 127.0.0.1
    // only (nothing is reachable from outside this machine).
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let local = listener.local_addr().unwrap();
    let bound: std::net::SocketAddr = format!("0.0.0.0:{}", local.port()).parse().unwrap();
    let options = McpHttpOptions::default()
        .with_addr(bound)
        .allow_host("192.0.2.7")
        .allow_host("tools.example");
    let app = toolsmith_harness::mcp::router(
        McpServer::new(manager),
        &options,
        bound,
        toolsmith_core::CancellationToken::new(),
    );
    let serving = tokio::spawn(async move { axum::serve(listener, app).await });
    let port = local.port();
    for (host, status) in [
        (format!("127.0.0.1:{port}"), 200),
        (format!("192.0.2.7:{port}"), 200),
        (format!("tools.example:{port}"), 200),
        // Not given: refused (a rebinding name, or an address clients were not told of).
        (format!("192.0.2.8:{port}"), 403),
        (format!("evil.example:{port}"), 403),
    ] {
        assert_eq!(
            raw_status_at(local, &[("Host", host.clone())]).await,
            status,
            "{host}"
        );
    }
    serving.abort();
}

#[tokio::test]
async fn foreign_hosts_and_origins_are_refused() {
    let server = start(McpHttpOptions::default().allow_host("tools.test")).await;
    let port = server.local_addr().port();
    assert_eq!(raw_status(&server, &[]).await, 200);
    assert_eq!(
        raw_status(&server, &[("Host", format!("localhost:{port}"))]).await,
        200
    );
    // DNS rebinding: a page of evil.test resolved to 127.0.0.1 sends its own Host and Origin.
    assert_eq!(
        raw_status(&server, &[("Host", format!("evil.test:{port}"))]).await,
        403
    );
    assert_eq!(
        raw_status(&server, &[("Origin", "http://evil.test".into())]).await,
        403
    );
    assert_eq!(
        raw_status(&server, &[("Origin", format!("http://localhost:{port}"))]).await,
        200
    );
    // A host allowed by the options.
    assert_eq!(
        raw_status(&server, &[("Host", "tools.test".into())]).await,
        200
    );
    server.shutdown().await.unwrap();
}

/// rmcp's client connected to `server`, after listing its tools and calling `add`.
async fn working_client(
    server: &McpHttpServer,
) -> rmcp::service::RunningService<rmcp::RoleClient, ClientConfig> {
    let client = rmcp_client(&server.url(), None).await.unwrap();
    assert_still_works(&client).await;
    client
}

/// Lists the demo tools and calls `add` through `client`.
async fn assert_still_works(
    client: &rmcp::service::RunningService<rmcp::RoleClient, ClientConfig>,
) {
    assert_eq!(client.list_all_tools().await.unwrap().len(), 6);
    let sum = client
        .call_tool(
            CallToolRequestParams::new("add")
                .with_arguments(json!({"a": 2, "b": 3}).as_object().cloned().unwrap()),
        )
        .await
        .unwrap();
    assert_eq!(sum.structured_content, Some(json!({"result": 5})));
}

#[tokio::test]
async fn sessions_past_the_cap_are_refused_until_one_ends() {
    let server = start(McpHttpOptions::default().with_max_sessions(2)).await;
    let first = working_client(&server).await;
    let second = working_client(&server).await;

    // A third client's handshake fails with the server's reason, which names the limit.
    let refused = rmcp_client(&server.url(), None).await.err().unwrap();
    let reason = refused.to_string();
    assert!(
        reason.contains("too many open sessions") && reason.contains("its limit is 2"),
        "{reason}"
    );
    // On the wire: 503, and a JSON-RPC error to the request.
    let mut raw = send_raw_initialize(server.local_addr(), &[]).await;
    let mut answer = String::new();
    tokio::time::timeout(Duration::from_secs(5), raw.read_to_string(&mut answer))
        .await
        .unwrap()
        .unwrap();
    assert!(answer.starts_with("HTTP/1.1 503"), "{answer}");
    assert!(
        answer.contains("content-type: application/json"),
        "{answer}"
    );
    let body: serde_json::Value =
        serde_json::from_str(answer.split("\r\n\r\n").nth(1).unwrap()).unwrap();
    assert_eq!(body["id"], json!(1));
    assert_eq!(body["error"]["code"], json!(-32000));
    assert_eq!(body["error"]["data"], json!({"maxSessions": 2}));
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("too many open sessions (its limit is 2)"),
        "{body}"
    );

    // The open sessions go on.
    assert_still_works(&first).await;
    assert_still_works(&second).await;

    // Closing a client (rmcp's client sends DELETE) frees its place.
    first.cancel().await.unwrap();
    let third = working_client(&server).await;
    assert_still_works(&second).await;
    assert!(rmcp_client(&server.url(), None).await.is_err());

    second.cancel().await.unwrap();
    third.cancel().await.unwrap();
    server.shutdown().await.unwrap();
}

#[tokio::test]
async fn a_full_server_refuses_a_foreign_host_before_saying_it_is_full() {
    // A cap of 0 is full from the start. The Host / Origin check is the security check: a
    // page rebinding its name to 127.0.0.1 learns nothing about the server's load.
    let server = start(McpHttpOptions::default().with_max_sessions(0)).await;
    let port = server.local_addr().port();
    assert_eq!(
        raw_status(&server, &[("Host", format!("evil.test:{port}"))]).await,
        403
    );
    assert_eq!(
        raw_status(&server, &[("Origin", "http://evil.test".into())]).await,
        403
    );
    assert_eq!(raw_status(&server, &[("Host", "[::1".into())]).await, 400);
    assert_eq!(raw_status(&server, &[]).await, 503);
    server.shutdown().await.unwrap();

    // With a token, the token is still checked first; then the Host; then the cap.
    let server = start(
        McpHttpOptions::default()
            .with_max_sessions(0)
            .with_bearer_token("s3cret"),
    )
    .await;
    let port = server.local_addr().port();
    let token = ("Authorization", "Bearer s3cret".to_owned());
    let foreign = ("Host", format!("evil.test:{port}"));
    assert_eq!(
        raw_status(&server, std::slice::from_ref(&foreign)).await,
        401
    );
    assert_eq!(raw_status(&server, &[foreign, token.clone()]).await, 403);
    assert_eq!(raw_status(&server, &[token]).await, 503);
    server.shutdown().await.unwrap();
}

#[tokio::test]
async fn clients_of_the_stateless_revision_are_served_at_the_cap() {
    use rmcp::model::ProtocolVersion;
    use rmcp::{ClientLifecycleMode, ClientServiceExt as _};

    let server = start(McpHttpOptions::default().with_max_sessions(1)).await;
    let with_session = working_client(&server).await;
    assert!(rmcp_client(&server.url(), None).await.is_err());
    // 2026-07-28 has no session: its requests carry no Mcp-Session-Id and open none.
    let stateless = ClientConfig::default()
        .serve_with_lifecycle(
            StreamableHttpClientTransport::from_uri(server.url()),
            ClientLifecycleMode::Discover {
                preferred_versions: vec![ProtocolVersion::V_2026_07_28],
            },
        )
        .await
        .unwrap();
    assert_eq!(stateless.list_all_tools().await.unwrap().len(), 6);
    let sum = stateless
        .call_tool(
            CallToolRequestParams::new("add")
                .with_arguments(json!({"a": 40, "b": 2}).as_object().cloned().unwrap()),
        )
        .await
        .unwrap();
    assert_eq!(sum.structured_content, Some(json!(42)));
    stateless.cancel().await.unwrap();
    with_session.cancel().await.unwrap();
    server.shutdown().await.unwrap();
}

/// A server whose sessions end after `idle` without traffic, at most one open, with one tool:
/// `nap`, which sleeps `nap` and answers "rested".
async fn start_napping(idle: Duration, nap: Duration) -> McpHttpServer {
    use toolsmith_core::{Args, FnTool, ToolArgs, ToolCallManager, ToolCallResult};

    let manager = ToolCallManager::new("naps");
    manager
        .register(Arc::new(FnTool::new(
            "nap",
            "Sleep a while, then answer.",
            Args::empty(),
            move |_: ToolArgs<'_>| async move {
                tokio::time::sleep(nap).await;
                Ok(ToolCallResult::text("rested"))
            },
        )))
        .unwrap();
    let options = McpHttpOptions::default()
        .with_max_sessions(1)
        .with_session_idle_timeout(Some(idle));
    McpHttpServer::start(McpServer::new(Arc::new(manager)), options)
        .await
        .unwrap()
}

/// A call longer than the idle timeout keeps its session: it is running, not idle, and its
/// result arrives. Once the session is idle for the timeout, it ends, and its place under the
/// cap of one is free for the next client.
#[tokio::test]
async fn a_call_longer_than_the_idle_timeout_keeps_its_session() {
    use std::time::Instant;

    let (idle, nap) = (Duration::from_secs(1), Duration::from_millis(2_500));
    let server = start_napping(idle, nap).await;
    let client = rmcp_client(&server.url(), None).await.unwrap();
    let called = Instant::now();
    let answer = tokio::time::timeout(
        Duration::from_secs(10),
        client.call_tool(CallToolRequestParams::new("nap")),
    )
    .await
    .expect("the call never ended")
    .expect("the call lost its session");
    assert_eq!(answer.content[0].as_text().unwrap().text, "rested");
    // The session lives on after the call, till it has been idle a second: another client
    // is refused for the cap until then, and served once the idle session ended. Its last
    // traffic was the answer, which the nap came before: a client served before the nap and
    // the idle timeout had passed since the call took a session that ended too soon. (Not
    // "refused at once": a loaded machine may open the next client a second after.)
    let deadline = Instant::now() + Duration::from_secs(20);
    let next = loop {
        match rmcp_client(&server.url(), None).await {
            Ok(next) => break next,
            Err(error) => {
                assert!(
                    Instant::now() < deadline,
                    "the idle session never ended: {error}"
                );
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
    };
    assert!(
        called.elapsed() >= nap + idle,
        "a client was served {:?} after the call: the session was not kept",
        called.elapsed()
    );
    next.cancel().await.unwrap();
    drop(client);
    server.shutdown().await.unwrap();
}

/// A raw POST of `body` to `server`: the answer's status and body.
async fn raw_post(server: &McpHttpServer, body: &str) -> (u16, String) {
    let addr = server.local_addr();
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nContent-Length: {}\r\n\
         Connection: close\r\n\r\n{body}",
        body.len()
    );
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut answer = Vec::new();
    tokio::time::timeout(Duration::from_secs(10), stream.read_to_end(&mut answer))
        .await
        .unwrap()
        .unwrap();
    let answer = String::from_utf8_lossy(&answer).into_owned();
    let status = answer[9..12].parse().unwrap();
    let body = answer
        .split_once("\r\n\r\n")
        .map(|(_, body)| body.to_owned())
        .unwrap_or_default();
    (status, body)
}

/// A body of too many values (or nested too deeply) is answered `400` with a JSON-RPC error
/// naming the limit before rmcp reads it (which would buffer each value at 80 bytes or
/// more), and the server goes on serving.
#[tokio::test]
async fn bodies_past_the_json_limits_are_refused_before_rmcp_reads_them() {
    use toolsmith_harness::mcp::JsonLimits;

    let call = |id: u32, arguments: String| {
        format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"add","arguments":{{"a":{arguments},"b":1}}}}}}"#
        )
    };
    let zeros = |count: usize| format!("[{}0]", "0,".repeat(count - 1));
    let server = start(
        McpHttpOptions::default().with_limits(
            JsonLimits::default()
                .with_max_values(1000)
                .with_max_depth(16),
        ),
    )
    .await;
    let (status, body) = raw_post(&server, &call(7, zeros(1000))).await;
    assert_eq!(status, 400, "{body}");
    let answer: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(answer["id"], 7, "{answer}");
    assert_eq!(answer["error"]["code"], -32600, "{answer}");
    let message = answer["error"]["message"].as_str().unwrap();
    assert!(
        message.starts_with("Invalid Request: the message holds more than 1000 values"),
        "{message}"
    );
    let deep = format!("{}1{}", "[".repeat(20), "]".repeat(20));
    let (status, body) = raw_post(&server, &call(8, deep)).await;
    assert_eq!(status, 400, "{body}");
    let answer: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(answer["id"], 8, "{answer}");
    assert_eq!(answer["error"]["code"], -32700, "{answer}");
    let message = answer["error"]["message"].as_str().unwrap();
    assert!(message.contains("deeper than 16 levels"), "{message}");
    let client = working_client(&server).await;
    client.cancel().await.unwrap();
    server.shutdown().await.unwrap();

    // By default: a server's bound, 131,072 values (`JsonLimits::for_server`).
    let server = start(McpHttpOptions::default()).await;
    let (status, body) = raw_post(&server, &call(9, zeros(DEFAULT_SERVER_MAX_VALUES))).await;
    assert_eq!(status, 400, "{body}");
    assert!(body.contains("more than 131072 values"), "{body}");
    let client = working_client(&server).await;
    client.cancel().await.unwrap();
    server.shutdown().await.unwrap();
}

/// A JSON body that is not a JSON-RPC message is `400` with a JSON-RPC error saying what is
/// wrong (`-32700` not JSON, `-32600` not a message, under its id when it shows one), as on
/// the line transport: rmcp answered `415 Unsupported Media Type`, which blames the
/// `Content-Type`, in plain text. A wrong `Content-Type` is still `415`.
#[tokio::test]
async fn a_body_that_is_no_message_is_a_json_rpc_error() {
    let server = start(McpHttpOptions::default()).await;
    let (status, body) = raw_post(&server, "{garbage").await;
    assert_eq!(status, 400, "{body}");
    let answer: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(answer["id"], serde_json::Value::Null, "{answer}");
    assert_eq!(answer["error"]["code"], -32700, "{answer}");
    let message = answer["error"]["message"].as_str().unwrap();
    assert!(message.contains("line 1 column 2"), "{message}");

    let (status, body) = raw_post(
        &server,
        r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":"x"}"#,
    )
    .await;
    assert_eq!(status, 400, "{body}");
    let answer: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(answer["id"], 4, "{answer}");
    assert_eq!(answer["error"]["code"], -32600, "{answer}");
    // What is wrong, named as the line transport names it.
    assert_eq!(
        answer["error"]["message"],
        "Invalid Request: `params` must be an object, not the string \"x\"",
        "{answer}"
    );
    // An integer id past rmcp's.
    let (status, body) = raw_post(
        &server,
        r#"{"jsonrpc":"2.0","id":18446744073709551615,"method":"ping"}"#,
    )
    .await;
    assert_eq!(status, 400, "{body}");
    let answer: serde_json::Value = serde_json::from_str(&body).expect(&body);
    assert_eq!(
        answer["error"]["message"],
        "Invalid Request: `id` must be a string or an integer from -9223372036854775808 to \
         9223372036854775807, not the number 18446744073709551615",
        "{answer}"
    );
    // Neither a request nor a response.
    let (status, body) = raw_post(&server, r#"{"jsonrpc":"2.0","id":5}"#).await;
    assert_eq!(status, 400, "{body}");
    let answer: serde_json::Value = serde_json::from_str(&body).expect(&body);
    assert_eq!(
        answer["error"]["message"],
        "Invalid Request: a message needs a `method` (a request or a notification), or a \
         `result` or an `error` (a response)",
        "{answer}"
    );

    let addr = server.local_addr();
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: text/plain\r\n\
         Accept: application/json, text/event-stream\r\nContent-Length: 8\r\n\
         Connection: close\r\n\r\n{{garbage"
    );
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).await.unwrap();
    assert!(answer.starts_with("HTTP/1.1 415"), "{answer}");
    let client = working_client(&server).await;
    client.cancel().await.unwrap();
    server.shutdown().await.unwrap();
}

/// At the cap, only a real `initialize` request is told the server is full: one whose id is
/// not a request id (an object, an array, none) is no request, and gets the answer it gets
/// below the cap (`400`), not `503` with its malformed id echoed.
#[tokio::test]
async fn a_malformed_initialize_at_the_cap_is_answered_as_below_it() {
    let full = start(McpHttpOptions::default().with_max_sessions(0)).await;
    let open = start(McpHttpOptions::default()).await;
    let params = r#""params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}"#;
    for id in [r#""id":{"x":1},"#, r#""id":[1],"#, ""] {
        let body = format!(r#"{{"jsonrpc":"2.0",{id}"method":"initialize",{params}}}"#);
        let (status, answer) = raw_post(&full, &body).await;
        assert_eq!(status, 400, "{id}: {answer}");
        assert_eq!((status, answer), raw_post(&open, &body).await, "{id}");
    }
    // A well-formed one is still refused for the cap.
    let body = format!(r#"{{"jsonrpc":"2.0","id":1,"method":"initialize",{params}}}"#);
    assert_eq!(raw_post(&full, &body).await.0, 503);
    full.shutdown().await.unwrap();
    open.shutdown().await.unwrap();
}

/// A path axum cannot route (a brace, a segment of its old capture syntax) is a
/// configuration error of `start`, naming the path, not a panic.
#[tokio::test]
async fn a_path_that_cannot_be_routed_is_a_config_error() {
    let (manager, _) = demo_manager();
    for path in ["/mcp/{", "/a/{b}", "/a/*rest", "/a/:id", "/a b"] {
        let started = McpHttpServer::start(
            McpServer::new(Arc::clone(&manager)),
            McpHttpOptions::default().with_path(path),
        );
        let error = tokio::spawn(started)
            .await
            .unwrap_or_else(|panic| panic!("{path}: {panic}"))
            .unwrap_err();
        assert!(error.to_string().contains(path), "{path}: {error}");
    }
    for path in ["/", "/tools/v1.2", "/a%20b/x:y"] {
        let server = McpHttpServer::start(
            McpServer::new(Arc::clone(&manager)),
            McpHttpOptions::default().with_path(path),
        )
        .await
        .unwrap();
        server.shutdown().await.unwrap();
    }
}
