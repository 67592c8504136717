//! A server's tool whose schema core cannot compile (a `pattern` that is no regular
//! expression, a `$ref` to another document) is left out of `McpClient::tools`, with a
//! warning and in `McpClient::left_out`, as a name listed twice is: registering every
//! bridge then succeeds, and the tool comes back once the server lists it fixed.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use serde_json::{Value, json};
use toolsmith_core::{RegistrationError, ToolCallManager, ToolImpl as _};
use toolsmith_harness::mcp::{LeftOutReason, McpClient, McpClientOptions, McpNames, McpTransport};

use super::fake_http::{FakeAnswer, FakeHttpServer};
use super::original_names;
use crate::common::warnings::Warnings;

/// The first listing: `good`, `changing`, `bad_pattern` (its input schema's `pattern` is no
/// regular expression), `bad_output` (its output schema refers to another document, which is
/// never fetched) and `good` again. Later listings have `bad_pattern` fixed and `changing`
/// described otherwise.
fn listing(generation: usize) -> Value {
    let pattern = if generation == 0 { "(" } else { "^[a-z]+$" };
    let changing = if generation == 0 { "First." } else { "Second." };
    json!({"tools": [
        {"name": "good", "description": "Fine.", "inputSchema": {"type": "object"}},
        {"name": "changing", "description": changing, "inputSchema": {"type": "object"}},
        {"name": "bad_pattern", "inputSchema": {
            "type": "object", "properties": {"q": {"type": "string", "pattern": pattern}}}},
        {"name": "bad_output", "inputSchema": {"type": "object"}, "outputSchema": {
            "type": "object",
            "properties": {"n": {"$ref": "https://example.invalid/n.json"}}}},
        {"name": "good", "description": "Listed again.", "inputSchema": {"type": "object"}},
    ]})
}

/// The left-out tools, as (name, reason) lines.
fn left_out(client: &McpClient) -> Vec<(String, String)> {
    client
        .left_out()
        .into_iter()
        .map(|tool| (tool.name, tool.reason.to_string()))
        .collect()
}

#[tokio::test]
async fn tools_with_schemas_that_do_not_compile_are_left_out_until_fixed() {
    let warnings = Warnings::default();
    let _guard = tracing::subscriber::set_default(warnings.clone());
    let listings = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&listings);
    let server = FakeHttpServer::start(move |method, id| match method {
        "tools/list" => FakeAnswer::Result(listing(counted.fetch_add(1, Ordering::SeqCst))),
        // A call's answer, after the server's notice that its list changed, as one stream.
        "tools/call" => FakeAnswer::Raw(
            format!(
                "data: {}\n\ndata: {}\n\n",
                json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}),
                json!({"jsonrpc": "2.0", "id": id,
                    "result": {"content": [{"type": "text", "text": "ok"}]}}),
            ),
            "text/event-stream",
        ),
        _ => FakeAnswer::Result(json!({})),
    })
    .await;
    let names = McpNames::new();
    let options = McpClientOptions::default().with_names(names.clone());
    let client = McpClient::connect_with(McpTransport::http(server.url()), options)
        .await
        .unwrap();

    assert_eq!(original_names(&client), ["good", "changing"]);
    // As the client's documentation registers them: every one, without a refusal.
    let manager = ToolCallManager::new("consumer");
    let registered: Result<(), RegistrationError> = client
        .tools()
        .into_iter()
        .try_for_each(|tool| manager.register(Arc::new(tool)));
    assert_eq!(registered, Ok(()));
    assert_eq!(manager.names(), ["good", "changing"]);

    let left = left_out(&client);
    let left_names: Vec<&str> = left.iter().map(|(name, _)| name.as_str()).collect();
    assert_eq!(
        left_names,
        ["bad_pattern", "bad_output", "good"],
        "{left:#?}"
    );
    let reason = &left[0].1;
    assert!(reason.contains("argument schema"), "{reason}");
    assert!(reason.contains("regex"), "{reason}");
    let reason = &left[1].1;
    assert!(reason.contains("result schema"), "{reason}");
    assert!(
        reason.contains("https://example.invalid/n.json"),
        "{reason}"
    );
    assert!(left[2].1.contains("more than once"), "{}", left[2].1);
    let typed = client.left_out();
    assert!(matches!(
        &typed[0].reason,
        LeftOutReason::Refused(RegistrationError::InvalidSchema { .. })
    ));
    assert!(matches!(
        &typed[1].reason,
        LeftOutReason::Refused(RegistrationError::InvalidReturnsSchema { .. })
    ));
    assert_eq!(typed[2].reason, LeftOutReason::ListedAgain);
    // No name is held for a tool left out.
    assert_eq!(names.len(), 2);
    assert_eq!(names.original("bad_pattern"), None);
    assert_eq!(names.original("bad_output"), None);

    // Each left out with a warning naming the server, the tool and why.
    let logged = warnings.lines();
    assert_eq!(logged.len(), 3, "{logged:#?}");
    for (line, tool) in logged.iter().zip(["bad_pattern", "bad_output", "good"]) {
        assert!(line.contains(&server.url()), "{line}");
        assert!(line.contains(&format!("tool={tool}")), "{line}");
    }
    assert!(logged[0].contains("regex"), "{}", logged[0]);

    // The server fixes `bad_pattern` and says its list changed: it comes back in.
    let mut updates = client.tool_list_updates();
    let definition_of = |client: &McpClient, name: &str| {
        let tool = client.tools().into_iter().find(|tool| tool.name() == name);
        tool.expect("bridged").shared_definition()
    };
    let (good_before, changing_before) = (
        definition_of(&client, "good"),
        definition_of(&client, "changing"),
    );
    let good = manager.get("good").unwrap();
    good.execute(Default::default()).await.unwrap();
    tokio::time::timeout(Duration::from_secs(5), updates.changed())
        .await
        .expect("the list is refreshed after list_changed")
        .unwrap();
    assert_eq!(listings.load(Ordering::SeqCst), 2);
    assert_eq!(original_names(&client), ["good", "changing", "bad_pattern"]);
    // A tool listed as before is kept as it was (not built and checked again); one the
    // server changed is bridged anew, as the server lists it now.
    assert!(Arc::ptr_eq(&good_before, &definition_of(&client, "good")));
    let changing_after = definition_of(&client, "changing");
    assert!(!Arc::ptr_eq(&changing_before, &changing_after));
    assert_eq!(changing_after.description(), "Second.");
    let left = left_out(&client);
    let left_names: Vec<&str> = left.iter().map(|(name, _)| name.as_str()).collect();
    assert_eq!(left_names, ["bad_output", "good"], "{left:#?}");
    for tool in client.tools() {
        if !manager.contains(tool.name()) {
            manager.register(Arc::new(tool)).unwrap();
        }
    }
    assert_eq!(manager.names(), ["good", "changing", "bad_pattern"]);
    // Warned again on the new listing, for what is still left out.
    let logged = warnings.lines();
    assert_eq!(logged.len(), 5, "{logged:#?}");
    assert!(logged[3].contains("tool=bad_output"), "{}", logged[3]);
    client.close().await;
}
