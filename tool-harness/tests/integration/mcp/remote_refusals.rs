//! A remote server's refusal of a call's arguments comes back as
//! `ToolError::InvalidArguments` naming the local tool, its reason written once: from a
//! Toolsmith server (`isError` with its own wording) and from any server (JSON-RPC's
//! `-32602`). Any other failure stays an execution error. A server's error text of megabytes
//! is cut before the model reads it.

use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};

use serde_json::json;
use toolsmith_core::provider::error_for_model;
use toolsmith_core::{ToolArguments, ToolError, ToolErrorKind, ToolImpl};
use toolsmith_harness::mcp::{
    McpClient, McpClientOptions, McpHttpOptions, McpHttpServer, McpNames, McpServer, McpToolBridge,
    McpTransport,
};

use super::demo_manager;
use super::fake_http::{FakeAnswer, FakeHttpServer};

fn arguments(value: serde_json::Value) -> ToolArguments {
    ToolArguments::try_from(value).unwrap()
}

fn bridge(client: &McpClient, local: &str) -> McpToolBridge {
    client
        .tools()
        .into_iter()
        .find(|tool| tool.name() == local)
        .unwrap_or_else(|| panic!("no bridge named {local}"))
}

/// What the demo server's schema check says of `{"a": -1, "b": 1}`.
const ADD_REASON: &str = "/a: -1 is less than the minimum of 0";

#[tokio::test]
async fn a_toolsmith_server_s_refusal_is_invalid_arguments_of_the_local_tool() {
    let (manager, probe) = demo_manager();
    let server = McpHttpServer::start(McpServer::new(manager), McpHttpOptions::default())
        .await
        .unwrap();
    let names = McpNames::new();
    let plain = McpClient::connect_with(
        McpTransport::http(server.url()),
        McpClientOptions::default().with_names(names.clone()),
    )
    .await
    .unwrap();
    // The same tools under other local names: `weather_add` is `add` on the server.
    let prefixed = McpClient::connect_with(
        McpTransport::http(server.url()),
        McpClientOptions::default()
            .with_names(names.clone())
            .with_prefix("weather"),
    )
    .await
    .unwrap();

    for (client, local) in [(&plain, "add"), (&prefixed, "weather_add")] {
        // Straight to the bridge, as no manager checks the arguments first: the server does.
        let error = bridge(client, local)
            .execute(arguments(json!({"a": -1, "b": 1})))
            .await
            .unwrap_err();
        assert_eq!(error, ToolError::invalid_arguments(local, ADD_REASON));
        assert_eq!(error.kind(), ToolErrorKind::InvalidArguments);
        // What the model reads names the tool it calls, and asks it to correct them once.
        assert_eq!(
            error_for_model(&error, &[]),
            format!(
                "Invalid arguments for tool '{local}': {ADD_REASON}. Correct the arguments and \
                 call '{local}' again."
            )
        );
    }
    assert_eq!(probe.add_runs.load(Ordering::SeqCst), 0);

    // A missing argument too: the reason without the server's frame or hint.
    let error = bridge(&prefixed, "weather_add")
        .execute(arguments(json!({"a": 1})))
        .await
        .unwrap_err();
    assert_eq!(error.kind(), ToolErrorKind::InvalidArguments, "{error}");
    let ToolError::InvalidArguments { tool, reason } = &error else {
        unreachable!()
    };
    assert_eq!(tool, "weather_add");
    assert!(reason.contains("\"b\""), "{reason}");
    assert!(!reason.contains("Correct the arguments"), "{reason}");
    assert!(!reason.contains("Invalid arguments"), "{reason}");

    // A call that ran and failed is still an execution error, named once.
    let failed = bridge(&prefixed, "weather_fail")
        .execute(arguments(json!({})))
        .await
        .unwrap_err();
    assert_eq!(
        failed,
        ToolError::execution("weather_fail", "it failed, as it always does")
    );

    plain.close().await;
    prefixed.close().await;
    server.shutdown().await.unwrap();
}

/// A fake server listing `read`, whose answer to every call is `answer`'s.
async fn fake_server(answer: Arc<Mutex<serde_json::Value>>) -> FakeHttpServer {
    FakeHttpServer::start(move |method, id| match method {
        "tools/list" => FakeAnswer::Result(json!({"tools": [
            {"name": "read", "inputSchema": {"type": "object"}}
        ]})),
        "tools/call" => {
            let mut message = answer.lock().unwrap().clone();
            message["id"] = id.clone();
            FakeAnswer::Raw(message.to_string(), "application/json")
        }
        _ => FakeAnswer::Result(json!({})),
    })
    .await
}

#[tokio::test]
async fn invalid_params_from_any_server_name_the_local_tool_once() {
    let answer = Arc::new(Mutex::new(json!({})));
    let server = fake_server(Arc::clone(&answer)).await;
    let client = McpClient::connect_with(
        McpTransport::http(server.url()),
        McpClientOptions::default()
            .with_names(McpNames::new())
            .with_prefix("fs"),
    )
    .await
    .unwrap();
    let read = bridge(&client, "fs_read");
    let call = |message: serde_json::Value| {
        *answer.lock().unwrap() = message;
        let read = read.clone();
        async move { read.execute(arguments(json!({}))).await.unwrap_err() }
    };
    let error_answer = |code: i64, message: &str| json!({"jsonrpc": "2.0", "error": {"code": code, "message": message}});

    // Any server's words, kept, naming the local tool.
    let error = call(error_answer(
        -32602,
        "params.arguments: missing field `path`",
    ))
    .await;
    assert_eq!(
        error,
        ToolError::invalid_arguments(
            "fs_read",
            "the server said: params.arguments: missing field `path`"
        )
    );

    // A Toolsmith server's words (its tool is `read`): the reason alone.
    let toolsmith = error_for_model(
        &ToolError::invalid_arguments("read", "/path: 7 is not of type \"string\""),
        &[],
    );
    let error = call(error_answer(-32602, &toolsmith)).await;
    assert_eq!(
        error,
        ToolError::invalid_arguments("fs_read", "/path: 7 is not of type \"string\"")
    );
    // The same as a result marked as an error.
    let error = call(json!({"jsonrpc": "2.0", "result": {
        "content": [{"type": "text", "text": toolsmith}], "isError": true
    }}))
    .await;
    assert_eq!(
        error,
        ToolError::invalid_arguments("fs_read", "/path: 7 is not of type \"string\"")
    );

    // Words naming another tool are not the refusal of this one's arguments.
    let other = error_for_model(&ToolError::invalid_arguments("write", "/path: bad"), &[]);
    let error = call(json!({"jsonrpc": "2.0", "result": {
        "content": [{"type": "text", "text": other}], "isError": true
    }}))
    .await;
    assert_eq!(error, ToolError::execution("fs_read", other));

    // Another JSON-RPC error, or a result marked as an error, stays an execution error.
    let error = call(error_answer(-32603, "the disk is full")).await;
    assert_eq!(error.kind(), ToolErrorKind::Execution, "{error}");
    assert!(error.to_string().contains("the disk is full"), "{error}");
    let error = call(json!({"jsonrpc": "2.0", "result": {
        "content": [{"type": "text", "text": "no such file: /tmp/x"}], "isError": true
    }}))
    .await;
    assert_eq!(
        error,
        ToolError::execution("fs_read", "no such file: /tmp/x")
    );
    client.close().await;
}

#[tokio::test]
async fn a_server_s_long_error_text_is_cut_before_the_model_reads_it() {
    let answer = Arc::new(Mutex::new(json!({})));
    let server = fake_server(Arc::clone(&answer)).await;
    let client = McpClient::connect_with(
        McpTransport::http(server.url()),
        McpClientOptions::default().with_names(McpNames::new()),
    )
    .await
    .unwrap();
    let read = bridge(&client, "read");
    let call = |message: serde_json::Value| {
        *answer.lock().unwrap() = message;
        let read = read.clone();
        async move { read.execute(arguments(json!({}))).await.unwrap_err() }
    };
    let error_answer = |code: i64, message: &str| json!({"jsonrpc": "2.0", "error": {"code": code, "message": message}});
    // A megabyte of text, within the 8 MiB a message may hold.
    let long = format!("{}{}", "x".repeat(1 << 20), "the end");

    let error = call(error_answer(-32603, &long)).await;
    assert_eq!(error.kind(), ToolErrorKind::Execution, "{error}");
    let text = error.to_string();
    assert!(text.contains("answered with error -32603: xxx"), "{text}");
    assert!(text.ends_with("x…"), "{}", &text[text.len() - 20..]);
    assert!(text.len() < 5_000, "{} bytes", text.len());

    let error = call(error_answer(-32602, &long)).await;
    assert_eq!(error.kind(), ToolErrorKind::InvalidArguments, "{error}");
    let text = error.to_string();
    assert!(text.contains("the server said: xxx"), "{text}");
    assert!(text.len() < 5_000, "{} bytes", text.len());

    // A Toolsmith server's refusal of a megabyte: its reason, cut.
    let toolsmith = error_for_model(&ToolError::invalid_arguments("read", &long), &[]);
    let error = call(error_answer(-32602, &toolsmith)).await;
    let ToolError::InvalidArguments { reason, .. } = &error else {
        panic!("{error:?}");
    };
    assert!(
        reason.starts_with("xxx") && reason.ends_with("x…"),
        "{error}"
    );
    assert_eq!(reason.chars().count(), 4_097);

    // A refusal of a few thousand characters (eight violations) is kept whole.
    let violations = vec![format!("/a: {}", "y".repeat(300)); 8].join("; ");
    let error = call(error_answer(-32602, &violations)).await;
    assert_eq!(
        error,
        ToolError::invalid_arguments("read", format!("the server said: {violations}"))
    );
    client.close().await;
}
