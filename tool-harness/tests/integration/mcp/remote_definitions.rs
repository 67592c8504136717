//! A remote tool's definition read as MCP means it: hints a server leaves out are MCP's
//! defaults (a tool not said to be read-only may destroy), so that approval and batching treat
//! an unannotated remote tool as the protocol says it is.

use serde_json::{Value, json};
use toolsmith_core::{ToolAnnotations, ToolArguments, ToolImpl as _};
use toolsmith_harness::mcp::{McpClient, McpClientOptions, McpNames, McpTransport};

use super::fake_http::{FakeAnswer, FakeHttpServer};

/// A client of a server listing `tools` (the `tools` of its `tools/list` answer).
async fn client_of(tools: Value) -> (FakeHttpServer, McpClient) {
    let server = FakeHttpServer::start(move |method, _| match method {
        "tools/list" => FakeAnswer::Result(json!({ "tools": tools })),
        _ => FakeAnswer::Result(json!({})),
    })
    .await;
    let options = McpClientOptions::default().with_names(McpNames::new());
    let client = McpClient::connect_with(McpTransport::http(server.url()), options)
        .await
        .unwrap();
    (server, client)
}

/// The hints of the bridge of `original` for a call, as approval and batches read them.
fn hints(client: &McpClient, original: &str) -> ToolAnnotations {
    let tool = client
        .tools()
        .into_iter()
        .find(|tool| tool.original_name() == original)
        .unwrap_or_else(|| panic!("no bridge of {original}"));
    tool.definition()
        .call_annotations(&ToolArguments::default())
}

#[tokio::test]
async fn hints_a_server_leaves_out_are_mcp_s_defaults() {
    let object = json!({"type": "object"});
    let (_server, client) = client_of(json!([
        {"name": "unannotated", "inputSchema": object},
        {"name": "titled", "inputSchema": object, "annotations": {"title": "Titled"}},
        {"name": "reader", "inputSchema": object, "annotations": {"readOnlyHint": true}},
        {"name": "adder", "inputSchema": object,
            "annotations": {"readOnlyHint": false, "destructiveHint": false,
                "idempotentHint": true, "openWorldHint": false}},
    ]))
    .await;
    // MCP: readOnlyHint defaults to false, destructiveHint to true, idempotentHint to false,
    // openWorldHint to true. A tool said nothing about may destroy: approval is asked for it,
    // and a batch runs it alone.
    let may_destroy = ToolAnnotations {
        read_only: Some(false),
        destructive: Some(true),
        idempotent: Some(false),
        open_world: Some(true),
    };
    assert_eq!(hints(&client, "unannotated"), may_destroy);
    assert_eq!(hints(&client, "titled"), may_destroy);
    // A read-only tool changes nothing, so destroys nothing.
    let reader = hints(&client, "reader");
    assert_eq!(reader.read_only, Some(true));
    assert_eq!(reader.destructive, Some(false));
    // Hints the server gives are kept.
    assert_eq!(
        hints(&client, "adder"),
        ToolAnnotations {
            read_only: Some(false),
            destructive: Some(false),
            idempotent: Some(true),
            open_world: Some(false),
        }
    );
    client.close().await;
}
