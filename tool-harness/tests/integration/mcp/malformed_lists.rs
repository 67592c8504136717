//! A server whose tool list does not read as one (a tool whose `inputSchema` is not an
//! object, `tools` that is not an array): connecting fails with an error naming the field
//! and the tool, not rmcp's bare "Unexpected response type".

use serde_json::{Value, json};
use toolsmith_harness::mcp::{McpClient, McpClientOptions, McpError, McpNames, McpTransport};

use super::fake_http::{FakeAnswer, FakeHttpServer};

/// Why connecting to a server listing `list` (the result of `tools/list`) failed.
async fn listing_failure(list: Value) -> String {
    let server = FakeHttpServer::start(move |method, _| match method {
        "tools/list" => FakeAnswer::Result(list.clone()),
        _ => FakeAnswer::Result(json!({})),
    })
    .await;
    let options = McpClientOptions::default().with_names(McpNames::new());
    match McpClient::connect_with(McpTransport::http(server.url()), options).await {
        Err(McpError::Request {
            request, reason, ..
        }) => {
            assert_eq!(request, "tools/list");
            reason
        }
        Err(other) => panic!("not a failed listing: {other}"),
        Ok(client) => panic!("listed {:?}", super::original_names(&client)),
    }
}

#[tokio::test]
async fn a_tool_whose_input_schema_is_not_an_object_is_named() {
    let reason = listing_failure(json!({"tools": [
        {"name": "fine", "inputSchema": {"type": "object"}},
        {"name": "broken", "inputSchema": "not a schema"},
    ]}))
    .await;
    assert!(reason.contains("tools[1].inputSchema"), "{reason}");
    assert!(reason.contains("`broken`"), "{reason}");
    assert!(reason.contains("expected a map"), "{reason}");
    assert!(!reason.contains("Unexpected response type"), "{reason}");
}

#[tokio::test]
async fn a_list_that_is_not_an_array_is_named() {
    let reason = listing_failure(json!({"tools": "none"})).await;
    assert!(reason.contains("tools:"), "{reason}");
    assert!(reason.contains("expected a sequence"), "{reason}");
}

#[tokio::test]
async fn a_tool_without_a_name_is_named_by_its_place() {
    let reason = listing_failure(json!({"tools": [{"inputSchema": {"type": "object"}}]})).await;
    assert!(reason.contains("tools[0]"), "{reason}");
    assert!(reason.contains("missing field `name`"), "{reason}");
}
