//! Our client against our server over HTTP: the bridges carry the server's tools into a
//! manager and a shed, errors and structured results come back, names stay distinct across
//! servers, and cancellation and time limits reach the server.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use serde_json::json;
use toolsmith_core::shed::{ShedResult, ToolShed};
use toolsmith_core::{
    Args, CancellationToken, FnTool, SessionParts, ToolArgs, ToolArguments, ToolCallContext,
    ToolCallManager, ToolCallRequest, ToolCallResult, ToolError, ToolErrorKind, ToolImpl,
};
use toolsmith_harness::mcp::{
    McpClient, McpClientOptions, McpHttpOptions, McpHttpServer, McpNames, McpServer,
    McpServerOptions, McpTransport,
};

use super::{Probe, demo_manager, original_names};

async fn serve() -> (McpHttpServer, Arc<Probe>) {
    let (manager, probe) = demo_manager();
    let server = McpHttpServer::start(McpServer::new(manager), McpHttpOptions::default())
        .await
        .unwrap();
    (server, probe)
}

fn options(names: &McpNames) -> McpClientOptions {
    McpClientOptions::default().with_names(names.clone())
}

fn request(name: &str, arguments: serde_json::Value) -> ToolCallRequest {
    ToolCallRequest::new("c1", name, ToolArguments::try_from(arguments).unwrap())
}

#[tokio::test]
async fn bridges_carry_the_servers_tools_into_a_manager_and_a_shed() {
    let (server, probe) = serve().await;
    let names = McpNames::new();
    let client = McpClient::connect_with(McpTransport::http(server.url()), options(&names))
        .await
        .unwrap();
    assert_eq!(client.server_info().unwrap().name, "toolsmith");
    let tools = client.tools();
    assert_eq!(tools.len(), 6);
    let add = tools.iter().find(|t| t.name() == "add").unwrap();
    let Tool::SingleCommand(definition) = add.definition() else {
        panic!()
    };
    assert_eq!(definition.description, "Add two non-negative integers.");
    assert_eq!(definition.category, "mcp");
    assert_eq!(definition.annotations.read_only, Some(true));
    assert_eq!(
        definition.arguments.schema()["properties"]["a"]["minimum"],
        0
    );
    // The server wrapped the integer result for this revision, and marked it: the bridge
    // declares the integer, as the tool itself does.
    assert_eq!(
        definition.returns.as_ref().unwrap().schema(),
        &json!({"type": "integer"})
    );

    let manager = ToolCallManager::new("consumer");
    for tool in &tools {
        manager.register(Arc::new(tool.clone())).unwrap();
    }
    // Structured content is kept, a marked wrapper's value given back.
    let sum = manager
        .execute_one(&request("add", json!({"a": 2, "b": 3})))
        .await
        .unwrap();
    assert_eq!(sum, ToolCallResult::json(json!(5)));
    manager.check_result("add", &sum).unwrap();
    let echoed = manager
        .execute_one(&request("echo", json!({"text": "hi"})))
        .await
        .unwrap();
    assert_eq!(echoed, ToolCallResult::text("hi"));
    // isError is a tool error.
    let failed = manager
        .execute_one(&request("fail", json!({})))
        .await
        .unwrap_err();
    assert_eq!(
        failed,
        ToolError::execution("fail", "it failed, as it always does")
    );
    // Invalid arguments are refused here, before the server is asked.
    let invalid = manager
        .execute_one(&request("add", json!({"a": -1, "b": 1})))
        .await
        .unwrap_err();
    assert_eq!(invalid.kind(), ToolErrorKind::InvalidArguments);
    assert_eq!(probe.add_runs.load(Ordering::SeqCst), 1);

    // In a shed, `shed` finds them.
    let session = ToolShed::new()
        .tools(tools.into_iter().map(|t| Arc::new(t) as Arc<dyn ToolImpl>))
        .build(SessionParts::in_memory("shed-session"))
        .unwrap();
    let found = session
        .execute_one(&request(
            "shed",
            json!({"description": "average of numbers", "limit": 1}),
        ))
        .await
        .unwrap();
    let found: ShedResult = serde_json::from_str(&found.content.to_text()).unwrap();
    assert_eq!(found.tools[0].name, "stats");
    client.close().await;
    server.shutdown().await.unwrap();
}

use toolsmith_core::Tool;

/// A tool that fails as `#[tool_fn]` functions do, with `Err(ToolError::execution(..))`.
fn failing_manager() -> Arc<ToolCallManager> {
    let manager = ToolCallManager::new("failing");
    manager
        .register(Arc::new(FnTool::new(
            "broken",
            "Always fails with an error.",
            Args::empty(),
            |_: ToolArgs<'_>| async { Err(ToolError::execution("broken", "the disk is full")) },
        )))
        .unwrap();
    Arc::new(manager)
}

#[tokio::test]
async fn a_failed_call_s_error_names_the_tool_once() {
    // The server writes the error's text ("Tool 'broken' failed: the disk is full"); the
    // bridge's own error said "Tool 'broken' failed: " again in front of it.
    let server = McpHttpServer::start(McpServer::new(failing_manager()), McpHttpOptions::default())
        .await
        .unwrap();
    let names = McpNames::new();
    let first = McpClient::connect_with(McpTransport::http(server.url()), options(&names))
        .await
        .unwrap();
    // A second client of the same server: its bridge is `broken_2`, called `broken` there.
    let second = McpClient::connect_with(McpTransport::http(server.url()), options(&names))
        .await
        .unwrap();
    for (client, local) in [(&first, "broken"), (&second, "broken_2")] {
        let manager = ToolCallManager::new("consumer");
        for tool in client.tools() {
            manager.register(Arc::new(tool)).unwrap();
        }
        let error = manager
            .execute_one(&request(local, json!({})))
            .await
            .unwrap_err();
        assert_eq!(error, ToolError::execution(local, "the disk is full"));
        assert_eq!(
            error.to_string(),
            format!("Tool '{local}' failed: the disk is full")
        );
    }
    first.close().await;
    second.close().await;
    server.shutdown().await.unwrap();
}

#[tokio::test]
async fn two_servers_with_the_same_tools_get_distinct_names() {
    let (first, first_probe) = serve().await;
    let (second, second_probe) = serve().await;
    let names = McpNames::new();
    let a = McpClient::connect_with(McpTransport::http(first.url()), options(&names))
        .await
        .unwrap();
    let b = McpClient::connect_with(McpTransport::http(second.url()), options(&names))
        .await
        .unwrap();
    let a_names: Vec<String> = a.tools().iter().map(|t| t.name().to_owned()).collect();
    let b_names: Vec<String> = b.tools().iter().map(|t| t.name().to_owned()).collect();
    assert_eq!(
        a_names,
        ["add", "stats", "echo", "fail", "slow", "progress"]
    );
    assert_eq!(
        b_names,
        [
            "add_2",
            "stats_2",
            "echo_2",
            "fail_2",
            "slow_2",
            "progress_2"
        ]
    );
    // The original name is used on the wire.
    assert!(b.tools().iter().all(|t| !t.original_name().ends_with("_2")));

    let manager = ToolCallManager::new("both");
    for tool in a.tools().into_iter().chain(b.tools()) {
        manager.register(Arc::new(tool)).unwrap();
    }
    manager
        .execute_one(&request("add_2", json!({"a": 1, "b": 1})))
        .await
        .unwrap();
    assert_eq!(first_probe.add_runs.load(Ordering::SeqCst), 0);
    assert_eq!(second_probe.add_runs.load(Ordering::SeqCst), 1);

    // A prefix qualifies every name.
    let c = McpClient::connect_with(
        McpTransport::http(first.url()),
        options(&names).with_prefix("calc"),
    )
    .await
    .unwrap();
    assert_eq!(c.tools()[0].name(), "calc_add");
    drop((a, b, c));
    // Names are released with their client.
    assert_eq!(names.original("add_2"), None);
    first.shutdown().await.unwrap();
    second.shutdown().await.unwrap();
}

#[tokio::test]
async fn a_name_the_server_lists_twice_is_one_tool() {
    let server = super::fake_http::FakeHttpServer::start(|method, _| {
        let tool = |name: &str, description: &str| {
            json!({"name": name, "description": description, "inputSchema": {"type": "object"}})
        };
        super::fake_http::FakeAnswer::Result(match method {
            "tools/list" => json!({"tools": [
                tool("read", "Reads."),
                tool("write", "Writes."),
                tool("read", "Reads again."),
            ]}),
            _ => json!({}),
        })
    })
    .await;
    let client =
        McpClient::connect_with(McpTransport::http(server.url()), options(&McpNames::new()))
            .await
            .unwrap();
    let tools = client.tools();
    let names: Vec<&str> = tools.iter().map(|t| t.name()).collect();
    assert_eq!(names, ["read", "write"]);
    assert_eq!(tools[0].definition().description(), "Reads.");
    // As the client's documentation registers them: every one, without a clash.
    let manager = ToolCallManager::new("consumer");
    for tool in client.tools() {
        manager.register(Arc::new(tool)).unwrap();
    }
    assert_eq!(manager.len(), 2);
    client.close().await;
}

/// A server that renames its tools on every listing holds, in the namespace, only the names
/// of its newest listing: a tool that stays keeps its name, the others' names are released.
#[tokio::test]
async fn names_of_tools_a_server_no_longer_lists_are_released() {
    use std::sync::atomic::AtomicUsize;

    let listings = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&listings);
    let server = super::fake_http::FakeHttpServer::start(move |method, _| {
        let tool = |name: String| json!({"name": name, "inputSchema": {"type": "object"}});
        super::fake_http::FakeAnswer::Result(match method {
            "tools/list" => {
                let generation = counted.fetch_add(1, Ordering::SeqCst);
                json!({"tools": [
                    tool("stays".to_owned()),
                    tool(format!("first.{generation}")),
                    tool(format!("second.{generation}")),
                ]})
            }
            _ => json!({}),
        })
    })
    .await;
    let names = McpNames::new();
    let client = McpClient::connect_with(McpTransport::http(server.url()), options(&names))
        .await
        .unwrap();
    let stays = client.tools()[0].name().to_owned();
    for _ in 0..40 {
        client.refresh_tools().await.unwrap();
        assert_eq!(names.len(), 3, "names of tools no longer listed are kept");
    }
    let tools = client.tools();
    assert_eq!(tools[0].name(), stays);
    assert_eq!(tools[1].name(), "first_40");
    assert_eq!(names.original("first_40").unwrap().1, "first.40");
    assert_eq!(names.original("first_39"), None);
    assert_eq!(listings.load(Ordering::SeqCst), 41);
    drop(client);
    assert!(names.is_empty());
}

/// A server answers a call to a tool it does not have with JSON-RPC's "invalid params"
/// (`-32602`), as it answers bad arguments: the bridge tells the two apart by the server's
/// words, or by the tool missing from the server's newest listing, and reports the first as
/// no such tool on that server, not as invalid arguments.
#[tokio::test]
async fn a_call_to_a_tool_the_server_does_not_have_is_reported_as_such() {
    use std::sync::Mutex;

    /// What the server lists, and the message of its answer to every call.
    struct Script {
        listed: Vec<&'static str>,
        answer: String,
    }
    let script = Arc::new(Mutex::new(Script {
        listed: vec!["read", "gone"],
        answer: String::new(),
    }));
    let scripted = Arc::clone(&script);
    let server = super::fake_http::FakeHttpServer::start(move |method, id| {
        let script = scripted.lock().unwrap();
        match method {
            "tools/list" => super::fake_http::FakeAnswer::Result(json!({"tools": script
                .listed
                .iter()
                .map(|name| json!({"name": name, "inputSchema": {"type": "object"}}))
                .collect::<Vec<_>>()})),
            "tools/call" => super::fake_http::FakeAnswer::Raw(
                json!({"jsonrpc": "2.0", "id": id,
                    "error": {"code": -32602, "message": script.answer}})
                .to_string(),
                "application/json",
            ),
            _ => super::fake_http::FakeAnswer::Result(json!({})),
        }
    })
    .await;
    let client =
        McpClient::connect_with(McpTransport::http(server.url()), options(&McpNames::new()))
            .await
            .unwrap();
    let manager = ToolCallManager::new("consumer");
    for tool in client.tools() {
        manager.register(Arc::new(tool)).unwrap();
    }
    let call = |name: &'static str, answer: &str| {
        script.lock().unwrap().answer = answer.to_owned();
        let manager = &manager;
        async move {
            manager
                .execute_one(&request(name, json!({})))
                .await
                .unwrap_err()
        }
    };
    let no_tool = |error: &ToolError, original: &str| {
        assert_eq!(error.kind(), ToolErrorKind::Execution, "{error}");
        let message = error.to_string();
        assert!(
            message.contains(&format!(
                "no tool named '{original}' on the MCP server {}",
                server.url()
            )),
            "{message}"
        );
    };

    // The server's words: Toolsmith's, rmcp's, TypeScript's.
    for answer in [
        "Unknown tool 'read'",
        "tool not found",
        "Tool read not found",
    ] {
        let error = call("read", answer).await;
        no_tool(&error, "read");
        assert!(error.to_string().contains(answer), "{error}");
    }
    // Bad arguments stay bad arguments.
    let error = call("read", "params.arguments: missing field `path`").await;
    assert_eq!(error.kind(), ToolErrorKind::InvalidArguments, "{error}");
    assert!(
        error.to_string().contains("missing field `path`"),
        "{error}"
    );

    // A tool the server no longer lists, whatever its answer says.
    script.lock().unwrap().listed = vec!["read"];
    client.refresh_tools().await.unwrap();
    no_tool(&call("gone", "Invalid params").await, "gone");
    let error = call("read", "Invalid params").await;
    assert_eq!(error.kind(), ToolErrorKind::InvalidArguments, "{error}");
    client.close().await;
}

#[tokio::test]
async fn cancelling_a_bridged_call_cancels_it_on_the_server() {
    let (server, probe) = serve().await;
    let client =
        McpClient::connect_with(McpTransport::http(server.url()), options(&McpNames::new()))
            .await
            .unwrap();
    let manager = Arc::new(ToolCallManager::new("cancel"));
    for tool in client.tools() {
        manager.register(Arc::new(tool)).unwrap();
    }
    let token = CancellationToken::new();
    let context = ToolCallContext::new("c1", "slow", token.clone());
    let running = {
        let manager = Arc::clone(&manager);
        tokio::spawn(async move {
            context
                .scope(manager.execute_one(&request("slow", json!({}))))
                .await
        })
    };
    probe.wait_slow_started().await;
    token.cancel();
    let outcome = tokio::time::timeout(Duration::from_secs(5), running)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(outcome.unwrap_err().kind(), ToolErrorKind::Cancelled);
    wait_until(|| {
        probe.slow_cancelled.load(Ordering::SeqCst) || probe.slow_dropped.load(Ordering::SeqCst)
    })
    .await;
    client.close().await;
    server.shutdown().await.unwrap();
}

#[tokio::test]
async fn a_bridged_call_past_its_time_limit_times_out_and_is_cancelled_on_the_server() {
    let (server, probe) = serve().await;
    let client = McpClient::connect_with(
        McpTransport::http(server.url()),
        // Room for the call to reach the server and start on a loaded machine (the
        // cancellation is only seen by a call that started).
        options(&McpNames::new()).with_call_timeout(Some(Duration::from_secs(2))),
    )
    .await
    .unwrap();
    let manager = ToolCallManager::new("timeout");
    for tool in client.tools() {
        manager.register(Arc::new(tool)).unwrap();
    }
    let err = manager
        .execute_one(&request("slow", json!({})))
        .await
        .unwrap_err();
    assert_eq!(err, ToolError::timeout("slow"));
    wait_until(|| {
        probe.slow_cancelled.load(Ordering::SeqCst) || probe.slow_dropped.load(Ordering::SeqCst)
    })
    .await;
    client.close().await;
    server.shutdown().await.unwrap();
}

#[tokio::test]
async fn a_closed_client_leaves_its_bridges_answering_network_errors() {
    let (server, _) = serve().await;
    let client =
        McpClient::connect_with(McpTransport::http(server.url()), options(&McpNames::new()))
            .await
            .unwrap();
    let echo = client
        .tools()
        .into_iter()
        .find(|t| t.name() == "echo")
        .unwrap();
    client.close().await;
    let args = ToolArguments::try_from(json!({"text": "x"})).unwrap();
    let err = echo.execute(args).await.unwrap_err();
    assert_eq!(err.kind(), ToolErrorKind::Network, "{err}");
    assert!(err.to_string().contains("is closed"), "{err}");
    server.shutdown().await.unwrap();
}

async fn wait_until(done: impl Fn() -> bool) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    while !done() {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the server never saw the cancellation"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

#[tokio::test]
async fn a_servers_list_changed_refreshes_the_bridges() {
    let (manager, probe) = demo_manager();
    let server = McpHttpServer::start(
        McpServer::with_options(manager, McpServerOptions::default().with_shed(true)),
        McpHttpOptions::default(),
    )
    .await
    .unwrap();
    let names = McpNames::new();
    let client = McpClient::connect_with(McpTransport::http(server.url()), options(&names))
        .await
        .unwrap();
    assert_eq!(original_names(&client), ["shed"]);
    let remote_shed = client.tools().remove(0);
    // `shed` is reserved for the local one: the remote one is renamed, and keeps that name.
    assert_ne!(remote_shed.name(), "shed");
    let shed_name = remote_shed.name().to_owned();

    let mut updates = client.tool_list_updates();
    let local = ToolCallManager::new("consumer");
    local.register(Arc::new(remote_shed)).unwrap();
    local
        .execute_one(&request(
            &shed_name,
            json!({"description": "select:echo,add"}),
        ))
        .await
        .unwrap();
    tokio::time::timeout(Duration::from_secs(5), updates.changed())
        .await
        .expect("the list is refreshed after list_changed")
        .unwrap();
    assert_eq!(original_names(&client), ["shed", "echo", "add"]);
    let tools = client.tools();
    assert_eq!(tools[0].name(), shed_name);

    // The new bridges work.
    let add = tools.iter().find(|t| t.name() == "add").unwrap().clone();
    local.register(Arc::new(add)).unwrap();
    let sum = local
        .execute_one(&request("add", json!({"a": 4, "b": 5})))
        .await
        .unwrap();
    assert_eq!(sum, ToolCallResult::json(json!(9)));
    assert_eq!(probe.add_runs.load(Ordering::SeqCst), 1);

    // An explicit refresh lists again and ticks too.
    client.refresh_tools().await.unwrap();
    assert!(updates.has_changed().unwrap());
    client.close().await;
    server.shutdown().await.unwrap();
}

/// A server that cannot be reached: the error says why in the HTTP client's words
/// ("Connection refused"), without the frame rmcp puts around them (the transport's Rust
/// type, `WorkerTransport<StreamableHttpClientWorker<…>>`).
#[tokio::test]
async fn a_server_that_cannot_be_reached_is_reported_in_plain_words() {
    // A port nothing listens on: bound without listening, and held, so that no server of a
    // test running beside can take it meanwhile.
    let unlistened = tokio::net::TcpSocket::new_v4().unwrap();
    unlistened.bind("127.0.0.1:0".parse().unwrap()).unwrap();
    let port = unlistened.local_addr().unwrap().port();
    let url = format!("http://127.0.0.1:{port}/mcp");
    let err = McpClient::connect(McpTransport::http(url.as_str()))
        .await
        .expect_err("nothing listens there");
    let message = err.to_string();
    assert!(
        message.starts_with(&format!("the MCP handshake with {url} failed: ")),
        "{message}"
    );
    assert!(message.contains("Connection refused"), "{message}");
    assert!(!message.contains("WorkerTransport"), "{message}");
    assert!(!message.contains("rmcp::"), "{message}");
}

/// A URL with a user and password in it: the error (which is logged) shows neither, from
/// the transport's own words or the HTTP client's.
#[tokio::test]
async fn a_password_in_the_url_is_in_no_error() {
    let unlistened = tokio::net::TcpSocket::new_v4().unwrap();
    unlistened.bind("127.0.0.1:0".parse().unwrap()).unwrap();
    let port = unlistened.local_addr().unwrap().port();
    let transport = McpTransport::http(format!("http://agent:s3cret-pw@127.0.0.1:{port}/mcp"));
    assert_eq!(
        transport.to_string(),
        format!("http://127.0.0.1:{port}/mcp")
    );
    assert!(!format!("{transport:?}").contains("s3cret-pw"));
    let err = McpClient::connect(transport)
        .await
        .expect_err("nothing listens there");
    for shown in [err.to_string(), format!("{err:?}")] {
        assert!(!shown.contains("s3cret-pw"), "{shown}");
        assert!(!shown.contains("agent:"), "{shown}");
    }
}

/// A key in the URL's query (`?api_key=…`): the error, the transport's `Display` and
/// `Debug` show the parameter's name, never its value, though the HTTP client's own
/// message quotes the URL it was asked.
#[tokio::test]
async fn a_key_in_the_url_s_query_is_in_no_error() {
    let unlistened = tokio::net::TcpSocket::new_v4().unwrap();
    unlistened.bind("127.0.0.1:0".parse().unwrap()).unwrap();
    let port = unlistened.local_addr().unwrap().port();
    let transport = McpTransport::http(format!(
        "http://127.0.0.1:{port}/mcp?api_key=sk-query-secret&team=ops"
    ));
    assert_eq!(
        transport.to_string(),
        format!("http://127.0.0.1:{port}/mcp?api_key=…&team=…")
    );
    assert!(!format!("{transport:?}").contains("sk-query-secret"));
    let err = McpClient::connect(transport)
        .await
        .expect_err("nothing listens there");
    for shown in [err.to_string(), format!("{err:?}")] {
        assert!(!shown.contains("sk-query-secret"), "{shown}");
        assert!(shown.contains("api_key="), "{shown}");
    }
}
