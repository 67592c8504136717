//! A bridged tool's progress: the server's `notifications/progress` for a call reach the
//! local call's progress sink (a batch's, an agent run's events), in order, and only that
//! call's; a notification under a token no call is waiting on is ignored.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use toolsmith_core::{
    BatchOptions, Progress, ToolArguments, ToolCallManager, ToolCallRequest, ToolShed,
};
use toolsmith_harness::agent::{AgentEvent, AgentSession};
use toolsmith_harness::mcp::{
    McpClient, McpClientOptions, McpHttpOptions, McpHttpServer, McpNames, McpServer, McpTransport,
};
use toolsmith_harness::model::{ScriptedModel, ScriptedTurn};

use super::{demo_manager, our_client_of};

fn request(id: &str, name: &str, arguments: Value) -> ToolCallRequest {
    ToolCallRequest::new(id, name, ToolArguments::try_from(arguments).unwrap())
}

/// A batch sink that keeps every report.
fn recording() -> (Arc<Mutex<Vec<Progress>>>, BatchOptions) {
    let reports: Arc<Mutex<Vec<Progress>>> = Arc::default();
    let sink = Arc::clone(&reports);
    let options = BatchOptions::new().with_progress(Arc::new(move |progress: Progress| {
        sink.lock().unwrap().push(progress);
    }));
    (reports, options)
}

/// The reports of the demo's `progress` tool for the call `call` of `steps` steps.
fn working(call: &str, steps: u32) -> Vec<Progress> {
    (1..=steps)
        .map(|step| Progress {
            call_id: call.to_owned(),
            tool: "progress".to_owned(),
            done: f64::from(step),
            total: Some(f64::from(steps)),
            message: Some("working".to_owned()),
        })
        .collect()
}

/// A manager of the client's bridges, as a session consuming the server registers them.
fn consumer_of(client: &McpClient) -> ToolCallManager {
    let local = ToolCallManager::new("consumer");
    for tool in client.tools() {
        local.register(Arc::new(tool)).unwrap();
    }
    local
}

// On two threads: rmcp handles each notification on a task of its own, which could pass
// them on out of order, or after the call's answer.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bridged_tools_progress_reaches_the_batchs_sink_in_order() {
    let (manager, _) = demo_manager();
    let (client, _serving) = our_client_of(manager, "in-process").await;
    let local = consumer_of(&client);
    let (reports, options) = recording();
    let outcomes = local
        .execute_batch_with(&[request("c1", "progress", json!({"steps": 4}))], &options)
        .await;
    assert_eq!(
        outcomes[0].result.as_ref().unwrap().content.to_text(),
        "4 steps"
    );
    assert_eq!(*reports.lock().unwrap(), working("c1", 4));

    // Two calls at once: each call's reports go to that call alone.
    reports.lock().unwrap().clear();
    let outcomes = local
        .execute_batch_with(
            &[
                request("a", "progress", json!({"steps": 3})),
                request("b", "progress", json!({"steps": 5})),
            ],
            &options,
        )
        .await;
    assert!(outcomes.iter().all(|outcome| outcome.result.is_ok()));
    let reports = reports.lock().unwrap();
    let of = |call: &str| {
        reports
            .iter()
            .filter(|report| report.call_id == call)
            .cloned()
            .collect::<Vec<_>>()
    };
    assert_eq!(of("a"), working("a", 3));
    assert_eq!(of("b"), working("b", 5));
    assert_eq!(reports.len(), 8);
}

#[tokio::test]
async fn a_bridged_tools_progress_comes_over_streamable_http_too() {
    let (manager, _) = demo_manager();
    let server = McpHttpServer::start(McpServer::new(manager), McpHttpOptions::default())
        .await
        .unwrap();
    let options = McpClientOptions::default().with_names(McpNames::new());
    let client = McpClient::connect_with(McpTransport::http(server.url()), options)
        .await
        .unwrap();
    let local = consumer_of(&client);
    let (reports, options) = recording();
    let outcomes = local
        .execute_batch_with(&[request("h1", "progress", json!({"steps": 3}))], &options)
        .await;
    assert!(outcomes[0].result.is_ok(), "{:?}", outcomes[0].result);
    assert_eq!(*reports.lock().unwrap(), working("h1", 3));
    client.close().await;
    server.shutdown().await.unwrap();
}

#[tokio::test]
async fn an_agent_run_turns_a_bridged_tools_progress_into_events() {
    let (manager, _) = demo_manager();
    let (client, _serving) = our_client_of(manager, "in-process").await;
    let mut shed = ToolShed::new();
    for tool in client.tools() {
        shed = shed.tool(tool);
    }
    let model = ScriptedModel::new([
        ScriptedTurn::text("").and_call_with_id("p1", "progress", json!({"steps": 3})),
        ScriptedTurn::text("done"),
    ]);
    let events: Arc<Mutex<Vec<Progress>>> = Arc::default();
    let sink = Arc::clone(&events);
    let session = AgentSession::builder(model)
        .with_model("m")
        .with_toolshed(shed)
        .with_event_handler(move |event: &AgentEvent| {
            if let AgentEvent::ToolCallProgress(progress) = event {
                sink.lock().unwrap().push(progress.clone());
            }
        })
        .build()
        .unwrap();
    let names = session.tool_manager().names();
    session.tool_manager().activate(&names);
    let run = session.run("go").await.unwrap();
    assert_eq!(run.tool_calls[0].result.content.to_text(), "3 steps");
    assert_eq!(*events.lock().unwrap(), working("p1", 3));
}

/// A scripted server whose tool `report` sends, before each answer, a notification under a
/// token no call has, one under the call's token (`done` the call's number), and after the
/// answer one more under the call's token, which has finished by then.
async fn server_with_stray_progress(end: tokio::io::DuplexStream) {
    let (read, mut write) = tokio::io::split(end);
    let mut lines = BufReader::new(read).lines();
    let mut calls = 0;
    while let Ok(Some(line)) = lines.next_line().await {
        let message: Value = serde_json::from_str(&line).unwrap();
        let Some(id) = message.get("id").cloned() else {
            continue;
        };
        let progress = |token: &Value, done: u32| {
            json!({"jsonrpc": "2.0", "method": "notifications/progress",
                   "params": {"progressToken": token, "progress": done, "message": "stray?"}})
        };
        let mut out = Vec::new();
        match message["method"].as_str() {
            Some("initialize") => out.push(json!({"jsonrpc": "2.0", "id": id, "result": {
                "protocolVersion": message["params"]["protocolVersion"],
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "scripted", "version": "1"}}})),
            Some("tools/list") => {
                out.push(json!({"jsonrpc": "2.0", "id": id, "result": {"tools": [
                {"name": "report", "description": "Reports.",
                 "inputSchema": {"type": "object"}}]}}))
            }
            Some("tools/call") => {
                calls += 1;
                let token = &message["params"]["_meta"]["progressToken"];
                out.push(progress(&json!("nobody's"), 99));
                out.push(progress(&json!(987_654), 98));
                out.push(progress(token, calls));
                out.push(json!({"jsonrpc": "2.0", "id": id, "result": {
                    "content": [{"type": "text", "text": format!("call {calls}")}]}}));
                out.push(progress(token, 100 + calls));
            }
            _ => out.push(json!({"jsonrpc": "2.0", "id": id, "result": {}})),
        }
        for message in out {
            write
                .write_all(message.to_string().as_bytes())
                .await
                .unwrap();
            write.write_all(b"\n").await.unwrap();
        }
    }
}

#[tokio::test]
async fn progress_under_an_unknown_or_finished_token_is_ignored() {
    let (client_end, server_end) = tokio::io::duplex(1 << 16);
    tokio::spawn(server_with_stray_progress(server_end));
    let (read, write) = tokio::io::split(client_end);
    let options = McpClientOptions::default().with_names(McpNames::new());
    let client = McpClient::connect_io("scripted", read, write, options)
        .await
        .unwrap();
    let local = consumer_of(&client);
    let (reports, options) = recording();
    for call in ["c1", "c2"] {
        let outcomes = tokio::time::timeout(
            Duration::from_secs(10),
            local.execute_batch_with(&[request(call, "report", json!({}))], &options),
        )
        .await
        .expect("the call ends");
        assert!(outcomes[0].result.is_ok(), "{:?}", outcomes[0].result);
    }
    // Each call saw its own report alone: not the strays, not the first call's late one.
    let done: Vec<(String, f64)> = reports
        .lock()
        .unwrap()
        .iter()
        .map(|report| (report.call_id.clone(), report.done))
        .collect();
    assert_eq!(done, [("c1".to_owned(), 1.0), ("c2".to_owned(), 2.0)]);
    client.close().await;
}
