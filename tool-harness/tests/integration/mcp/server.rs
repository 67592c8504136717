//! Our server under rmcp's own client, in memory: list, call, errors, structured content,
//! progress, cancellation, shed mode and pagination.

use std::sync::atomic::Ordering;
use std::time::Duration;

use rmcp::ServiceError;
use rmcp::model::{
    CallToolRequestParams, CallToolResult, ClientRequest, ErrorCode, PaginatedRequestParams,
    Request,
};
use rmcp::service::PeerRequestOptions;
use serde_json::{Value, json};
use toolsmith_harness::mcp::McpServerOptions;

use super::{connect, demo_manager};

fn call(name: &str, arguments: Value) -> CallToolRequestParams {
    CallToolRequestParams::new(name.to_owned())
        .with_arguments(arguments.as_object().cloned().unwrap_or_default())
}

fn text(result: &CallToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect::<Vec<_>>()
        .join("\n")
}

#[tokio::test]
async fn lists_every_tool_with_its_schemas_and_hints() {
    let (manager, _) = demo_manager();
    let (client, _inbox, _server) = connect(manager, McpServerOptions::default()).await;
    let tools = client.list_all_tools().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    assert_eq!(names, ["add", "stats", "echo", "fail", "slow", "progress"]);

    let add = &tools[0];
    assert_eq!(add.title.as_deref(), Some("Add"));
    assert_eq!(
        add.description.as_deref(),
        Some("Add two non-negative integers.")
    );
    assert_eq!(add.input_schema["required"], json!(["a", "b"]));
    let hints = add.annotations.as_ref().unwrap();
    assert_eq!(hints.read_only_hint, Some(true));
    assert_eq!(hints.destructive_hint, Some(false));
    assert_eq!(hints.idempotent_hint, Some(true));
    // An integer result, wrapped in an object for this (pre-2026-07-28) revision.
    assert_eq!(
        Value::Object(add.output_schema.as_deref().unwrap().clone()),
        json!({"type": "object", "properties": {"result": {"type": "integer"}},
               "required": ["result"], "additionalProperties": false,
               "x-fastmcp-wrap-result": true})
    );
    let stats = &tools[1];
    assert_eq!(stats.output_schema.as_ref().unwrap()["type"], "object");
    assert!(tools[2].output_schema.is_none());
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn calls_return_text_and_structured_content_matching_the_output_schema() {
    let (manager, _) = demo_manager();
    let (client, _inbox, _server) = connect(manager, McpServerOptions::default()).await;
    let tools = client.list_all_tools().await.unwrap();
    let schema_of = |name: &str| {
        let tool = tools.iter().find(|t| t.name == name).unwrap();
        jsonschema::validator_for(&Value::Object(
            tool.output_schema.as_deref().unwrap().clone(),
        ))
        .unwrap()
    };

    let echoed = client
        .call_tool(call("echo", json!({"text": "hi"})))
        .await
        .unwrap();
    assert_eq!(text(&echoed), "hi");
    assert_eq!(echoed.is_error, Some(false));
    assert_eq!(echoed.structured_content, None);

    let sum = client
        .call_tool(call("add", json!({"a": 2, "b": 40})))
        .await
        .unwrap();
    let structured = sum.structured_content.clone().unwrap();
    assert_eq!(structured, json!({"result": 42}));
    assert!(schema_of("add").is_valid(&structured));
    // Mirrored as text.
    assert_eq!(
        serde_json::from_str::<Value>(&text(&sum)).unwrap(),
        structured
    );

    let stats = client
        .call_tool(call("stats", json!({"values": [1, 2, 3]})))
        .await
        .unwrap();
    let structured = stats.structured_content.clone().unwrap();
    assert_eq!(structured, json!({"count": 3, "mean": 2.0}));
    assert!(schema_of("stats").is_valid(&structured));
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn invalid_arguments_are_tool_errors_and_the_tool_does_not_run() {
    let (manager, probe) = demo_manager();
    let (client, _inbox, _server) = connect(manager, McpServerOptions::default()).await;
    let result = client
        .call_tool(call("add", json!({"a": -1, "b": "x"})))
        .await
        .unwrap();
    assert_eq!(result.is_error, Some(true));
    let message = text(&result);
    assert!(
        message.contains("Invalid arguments for tool 'add'"),
        "{message}"
    );
    assert!(
        message.contains("/a: -1 is less than the minimum of 0"),
        "{message}"
    );
    assert!(message.contains("/b"), "{message}");
    assert_eq!(probe.add_runs.load(Ordering::SeqCst), 0);

    let failed = client.call_tool(call("fail", json!({}))).await.unwrap();
    assert_eq!(failed.is_error, Some(true));
    assert_eq!(text(&failed), "it failed, as it always does");
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn an_unknown_tool_is_a_json_rpc_error() {
    let (manager, _) = demo_manager();
    let (client, _inbox, _server) = connect(manager, McpServerOptions::default()).await;
    let error = client.call_tool(call("ad", json!({}))).await.unwrap_err();
    let ServiceError::McpError(data) = error else {
        panic!("expected a JSON-RPC error, got {error:?}");
    };
    assert_eq!(data.code, ErrorCode::INVALID_PARAMS);
    assert_eq!(data.message, "Unknown tool 'ad'; did you mean 'add'?");
    // `shed` is not a tool outside shed mode.
    assert!(
        client
            .call_tool(call("shed", json!({"description": "x"})))
            .await
            .is_err()
    );
    // A long name is quoted cut, not echoed whole.
    let long = "x".repeat(100_000);
    let error = client.call_tool(call(&long, json!({}))).await.unwrap_err();
    let ServiceError::McpError(data) = error else {
        panic!("expected a JSON-RPC error, got {error:?}");
    };
    assert!(
        data.message.starts_with("Unknown tool 'xxx"),
        "{}",
        data.message
    );
    assert!(data.message.len() < 1_000, "{} bytes", data.message.len());
    assert!(data.data.unwrap().to_string().len() < 1_000);
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn progress_reports_become_notifications_before_the_result() {
    let (manager, _) = demo_manager();
    let (client, mut inbox, _server) = connect(manager, McpServerOptions::default()).await;
    // rmcp's client sends a progress token with every request.
    let result = client
        .call_tool(call("progress", json!({"steps": 3})))
        .await
        .unwrap();
    assert_eq!(text(&result), "3 steps");
    let mut seen = Vec::new();
    while let Ok(progress) = inbox.progress.try_recv() {
        seen.push((progress.progress, progress.total, progress.message));
    }
    assert_eq!(
        seen,
        [1.0, 2.0, 3.0].map(|n| (n, Some(3.0), Some("working".to_owned())))
    );
    client.cancel().await.unwrap();
}

/// A tool reporting faster than the client takes notifications does not queue every report:
/// at most 64 wait (the newest replacing the last waiting one when full), in order, the last
/// report always among them. (Unbounded, a tool reporting in a loop to a client that reads
/// slowly held every report in memory.)
#[tokio::test]
async fn progress_reports_faster_than_sent_are_bounded_and_end_on_the_last() {
    const REPORTS: u32 = 20_000;
    let manager = toolsmith_core::ToolCallManager::new("burst");
    manager
        .register(std::sync::Arc::new(toolsmith_core::FnTool::new(
            "burst",
            "Report progress many times without waiting.",
            toolsmith_core::Args::new(toolsmith_core::scheme::object().build()),
            |_| async {
                let context = toolsmith_core::ToolCallContext::current().expect("served");
                // No await between reports: the forwarding task cannot keep up.
                for done in 1..=REPORTS {
                    context.progress(f64::from(done), Some(f64::from(REPORTS)), "bursting");
                }
                Ok(toolsmith_core::ToolCallResult::text("burst done"))
            },
        )))
        .unwrap();
    let (client, mut inbox, _server) =
        connect(std::sync::Arc::new(manager), McpServerOptions::default()).await;
    let result = client.call_tool(call("burst", json!({}))).await.unwrap();
    assert_eq!(text(&result), "burst done");
    let mut seen = Vec::new();
    while let Ok(progress) = inbox.progress.try_recv() {
        seen.push(progress.progress);
    }
    assert!(
        !seen.is_empty() && seen.len() <= 64,
        "{} reports sent",
        seen.len()
    );
    assert!(
        seen.windows(2).all(|pair| pair[0] < pair[1]),
        "in order: {seen:?}"
    );
    assert_eq!(
        seen.last(),
        Some(&f64::from(REPORTS)),
        "the last report is sent"
    );
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn a_served_call_past_its_time_limit_is_an_error_naming_the_limit() {
    let (manager, probe) = demo_manager();
    manager
        .set_timeout("slow", Some(Duration::from_millis(300)))
        .unwrap();
    let (client, _inbox, _server) = connect(manager, McpServerOptions::default()).await;
    let result = client.call_tool(call("slow", json!({}))).await.unwrap();
    assert_eq!(result.is_error, Some(true));
    assert_eq!(
        text(&result),
        "Tool 'slow' timed out after 300 ms (the call's timeout); what it did before it was stopped may have taken effect: check before calling it again"
    );
    assert!(probe.slow_dropped.load(Ordering::SeqCst));
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn a_clients_cancellation_reaches_the_running_tool() {
    let (manager, probe) = demo_manager();
    let (client, _inbox, _server) = connect(manager, McpServerOptions::default()).await;
    let request = ClientRequest::CallToolRequest(Request::new(call("slow", json!({}))));
    let handle = client
        .send_cancellable_request(request, PeerRequestOptions::no_options())
        .await
        .unwrap();
    probe.wait_slow_started().await;
    handle
        .cancel(Some("no longer needed".into()))
        .await
        .unwrap();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    while !(probe.slow_cancelled.load(Ordering::SeqCst)
        || probe.slow_dropped.load(Ordering::SeqCst))
    {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the tool never saw the cancellation"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    // The server keeps serving.
    let echoed = client
        .call_tool(call("echo", json!({"text": "after"})))
        .await
        .unwrap();
    assert_eq!(text(&echoed), "after");
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn shed_mode_lists_what_shed_activated_and_says_when_it_changed() {
    let (manager, _) = demo_manager();
    let (client, mut inbox, _server) =
        connect(manager, McpServerOptions::default().with_shed(true)).await;
    assert!(
        client
            .peer_info()
            .unwrap()
            .capabilities
            .tools
            .as_ref()
            .unwrap()
            .list_changed
            == Some(true)
    );
    let names = |tools: Vec<rmcp::model::Tool>| {
        tools
            .into_iter()
            .map(|t| t.name.to_string())
            .collect::<Vec<_>>()
    };
    assert_eq!(names(client.list_all_tools().await.unwrap()), ["shed"]);

    // Not offered yet: refused as a tool error that points at `shed`.
    let early = client
        .call_tool(call("echo", json!({"text": "x"})))
        .await
        .unwrap();
    assert_eq!(early.is_error, Some(true));
    assert!(text(&early).contains("shed"), "{}", text(&early));

    let found = client
        .call_tool(call("shed", json!({"description": "select:echo,add"})))
        .await
        .unwrap();
    assert_eq!(found.is_error, Some(false));
    tokio::time::timeout(Duration::from_secs(5), inbox.list_changed.recv())
        .await
        .expect("a list_changed notification")
        .unwrap();
    assert_eq!(
        names(client.list_all_tools().await.unwrap()),
        ["shed", "echo", "add"]
    );
    let echoed = client
        .call_tool(call("echo", json!({"text": "now"})))
        .await
        .unwrap();
    assert_eq!(text(&echoed), "now");

    // Activating nothing new says nothing.
    client
        .call_tool(call("shed", json!({"description": "select:echo"})))
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert!(inbox.list_changed.try_recv().is_err());
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn large_lists_come_in_pages_and_a_bad_cursor_is_invalid_params() {
    let (manager, _) = demo_manager();
    let (client, _inbox, _server) =
        connect(manager, McpServerOptions::default().with_page_size(4)).await;
    let first = client.list_tools(None).await.unwrap();
    assert_eq!(first.tools.len(), 4);
    let cursor = first.next_cursor.clone().expect("a second page");
    let second = client
        .list_tools(Some(
            PaginatedRequestParams::default().with_cursor(Some(cursor)),
        ))
        .await
        .unwrap();
    assert_eq!(second.tools.len(), 2);
    assert_eq!(second.next_cursor, None);
    assert_eq!(client.list_all_tools().await.unwrap().len(), 6);

    let error = client
        .list_tools(Some(
            PaginatedRequestParams::default().with_cursor(Some("bogus".into())),
        ))
        .await
        .unwrap_err();
    let ServiceError::McpError(data) = error else {
        panic!("expected a JSON-RPC error, got {error:?}");
    };
    assert_eq!(data.code, ErrorCode::INVALID_PARAMS);
    assert!(data.message.contains("invalid cursor"), "{}", data.message);
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn the_2026_07_28_revision_gets_unwrapped_results_and_the_full_list() {
    use rmcp::model::ProtocolVersion;
    use rmcp::{ClientLifecycleMode, ClientServiceExt as _};
    use toolsmith_harness::mcp::{JsonLimits, McpServer, serve_io};

    let (manager, _) = demo_manager();
    let (client_end, server_end) = tokio::io::duplex(1 << 20);
    let server = McpServer::with_options(manager, McpServerOptions::default().with_shed(true));
    tokio::spawn(async move {
        let (read, write) = tokio::io::split(server_end);
        let running = serve_io(server, read, write, JsonLimits::default())
            .await
            .unwrap();
        let _ = running.waiting().await;
    });
    let client = rmcp::model::ClientConfig::default()
        .serve_with_lifecycle(
            client_end,
            ClientLifecycleMode::Discover {
                preferred_versions: vec![ProtocolVersion::V_2026_07_28],
            },
        )
        .await
        .unwrap();
    // No per-connection list on this revision: shed mode lists `shed` and every tool.
    let tools = client.list_all_tools().await.unwrap();
    assert_eq!(
        tools.len(),
        7,
        "{:?}",
        tools.iter().map(|t| &t.name).collect::<Vec<_>>()
    );
    assert_eq!(tools[0].name, "shed");
    // A non-object result schema is served as it is, and the result too.
    let add = tools.iter().find(|t| t.name == "add").unwrap();
    assert_eq!(
        Value::Object(add.output_schema.as_deref().unwrap().clone()),
        json!({"type": "integer"})
    );
    let sum = client
        .call_tool(call("add", json!({"a": 40, "b": 2})))
        .await
        .unwrap();
    assert_eq!(sum.structured_content, Some(json!(42)));
    client.cancel().await.unwrap();
}
