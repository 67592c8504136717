//! A server whose tool list holds tools that do not read (an `inputSchema` that is not an
//! object, no `name`, a hint that is not a boolean, an entry that is not an object): its
//! other tools are kept and callable, and each that does not read is left out, named, with
//! the field that is wrong. A page that is not a tool list (`tools` not an array, a
//! `nextCursor` not a string, not an object) still fails the listing, naming the field,
//! not with rmcp's bare "Unexpected response type".

use std::sync::Arc;

use serde_json::{Value, json};
use toolsmith_core::ToolCallManager;
use toolsmith_harness::mcp::{
    LeftOutReason, McpClient, McpClientOptions, McpError, McpNames, McpTransport,
};

use super::fake_http::{FakeAnswer, FakeHttpServer};
use super::original_names;
use crate::common::warnings::Warnings;

/// A tool that reads.
fn good(name: &str) -> Value {
    json!({"name": name, "description": "Fine.", "inputSchema": {"type": "object"}})
}

/// A server answering `tools/list` with `first` (no cursor) and `second` (the cursor
/// `page-2`), and every `tools/call` with the text "ran".
async fn listing_server(first: Value, second: Value) -> FakeHttpServer {
    FakeHttpServer::start_with_params(move |method, _, params| match method {
        "tools/list" if params.get("cursor").is_some() => FakeAnswer::Result(second.clone()),
        "tools/list" => FakeAnswer::Result(first.clone()),
        "tools/call" => FakeAnswer::Result(json!({"content": [{"type": "text", "text": "ran"}]})),
        _ => FakeAnswer::Result(json!({})),
    })
    .await
}

/// Why connecting with `options` to a server whose list is the single page `list` failed.
async fn listing_failure_with(list: Value, options: McpClientOptions) -> String {
    let server = listing_server(list, json!({"tools": []})).await;
    let options = options.with_names(McpNames::new());
    match McpClient::connect_with(McpTransport::http(server.url()), options).await {
        Err(McpError::Request {
            request, reason, ..
        }) => {
            assert_eq!(request, "tools/list");
            reason
        }
        Err(other) => panic!("not a failed listing: {other}"),
        Ok(client) => panic!("listed {:?}", original_names(&client)),
    }
}

async fn listing_failure(list: Value) -> String {
    listing_failure_with(list, McpClientOptions::default()).await
}

#[tokio::test]
async fn tools_that_do_not_read_are_left_out_and_the_others_kept() {
    let warnings = Warnings::default();
    let _guard = tracing::subscriber::set_default(warnings.clone());
    let first = json!({"tools": [
        good("alpha"),
        {"name": "schema_five", "inputSchema": 5},
        {"description": "No name.", "inputSchema": {"type": "object"}},
        {"name": "bad_hint", "inputSchema": {"type": "object"},
            "annotations": {"readOnlyHint": "yes"}},
        7,
        {"name": 42, "inputSchema": {"type": "object"}},
        {"name": "huge_schema", "inputSchema": "x".repeat(100_000)},
    ], "nextCursor": "page-2"});
    let server = listing_server(first, json!({"tools": [good("beta")]})).await;
    let options = McpClientOptions::default().with_names(McpNames::new());
    let client = McpClient::connect_with(McpTransport::http(server.url()), options)
        .await
        .unwrap();

    // The readable tools of both pages (the cursor read from the page with bad tools).
    assert_eq!(original_names(&client), ["alpha", "beta"]);
    let manager = ToolCallManager::new("consumer");
    for tool in client.tools() {
        manager.register(Arc::new(tool)).unwrap();
    }
    for name in ["alpha", "beta"] {
        let result = manager
            .get(name)
            .unwrap()
            .execute(Default::default())
            .await
            .unwrap();
        assert_eq!(result.content.to_text(), "ran", "{name}");
    }

    let left = client.left_out();
    // (name or place, field, a part of what was wrong there)
    let expected = [
        ("schema_five", "inputSchema", "expected a map"),
        ("tool 3 of page 1", "", "missing field `name`"),
        ("bad_hint", "annotations.readOnlyHint", "expected a boolean"),
        ("tool 5 of page 1", "", "integer `7`"),
        ("tool 6 of page 1", "name", "integer `42`"),
        ("huge_schema", "inputSchema", "expected a map"),
    ];
    assert_eq!(left.len(), expected.len(), "{left:#?}");
    for (tool, (name, field, part)) in left.iter().zip(expected) {
        assert_eq!(tool.name, name, "{left:#?}");
        let LeftOutReason::Unreadable {
            field: left_field,
            problem,
        } = &tool.reason
        else {
            panic!("{tool}");
        };
        assert_eq!(left_field, field, "{tool}");
        assert!(problem.contains(part), "{tool}");
        // A value of 100,000 characters is quoted cut.
        assert!(problem.len() < 1_000, "{} bytes", problem.len());
    }
    assert_eq!(
        left[0].to_string(),
        "`schema_five`: its definition does not read as an MCP tool: `inputSchema`: \
         invalid type: integer `5`, expected a map"
    );

    // Each with a warning naming the server, the tool and the field.
    let logged = warnings.lines();
    assert_eq!(logged.len(), expected.len(), "{logged:#?}");
    for (line, (name, _, _)) in logged.iter().zip(expected) {
        assert!(line.contains(&server.url()), "{line}");
        assert!(line.contains(&format!("tool={name}")), "{line}");
    }
    assert!(logged[0].contains("`inputSchema`"), "{}", logged[0]);
    client.close().await;
}

#[tokio::test]
async fn tools_that_do_not_read_count_against_the_listings_bounds() {
    let bad = json!({"name": "bad", "inputSchema": 5});
    let reason = listing_failure_with(
        json!({"tools": [good("a"), bad.clone(), bad]}),
        McpClientOptions::default().with_max_tools(2),
    )
    .await;
    assert!(reason.contains("past 2 tools"), "{reason}");

    let huge = json!({"name": "huge", "inputSchema": "x".repeat(5_000)});
    let reason = listing_failure_with(
        json!({"tools": [good("a"), huge]}),
        McpClientOptions::default().with_max_listing_bytes(1_000),
    )
    .await;
    assert!(
        reason.contains("passes 1000 bytes at the tool `huge`"),
        "{reason}"
    );
}

#[tokio::test]
async fn a_list_that_is_not_an_array_is_named() {
    let reason = listing_failure(json!({"tools": "none"})).await;
    assert!(reason.contains("tools:"), "{reason}");
    assert!(reason.contains("expected a sequence"), "{reason}");
    assert!(!reason.contains("Unexpected response type"), "{reason}");
}

#[tokio::test]
async fn a_page_that_is_not_a_tool_list_fails_the_listing() {
    let reason = listing_failure(json!({"tools": [good("a")], "nextCursor": 5})).await;
    assert!(reason.contains("nextCursor: "), "{reason}");
    assert!(reason.contains("expected a string"), "{reason}");

    let reason = listing_failure(json!({"nextCursor": "more"})).await;
    assert!(reason.contains("missing field `tools`"), "{reason}");

    let reason = listing_failure(json!([good("a")])).await;
    assert!(
        reason.contains("not a tool list: invalid type: sequence, expected a map"),
        "{reason}"
    );
    assert!(!reason.contains("Unexpected response type"), "{reason}");
}
