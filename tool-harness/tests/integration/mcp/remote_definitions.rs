//! A remote tool's definition read as MCP means it: hints a server leaves out are MCP's
//! defaults (a tool not said to be read-only may destroy), so that approval and batching treat
//! an unannotated remote tool as the protocol says it is; and a tool whose `inputSchema` no
//! arguments (an object) can match is left out, naming the type it declares.

use std::sync::Arc;

use serde_json::{Value, json};
use toolsmith_core::{ToolAnnotations, ToolArguments, ToolCallManager, ToolImpl as _};
use toolsmith_harness::mcp::{McpClient, McpClientOptions, McpNames, McpTransport};

use super::fake_http::{FakeAnswer, FakeHttpServer};
use crate::common::warnings::Warnings;

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

#[tokio::test]
async fn a_tool_whose_arguments_cannot_be_an_object_is_left_out_naming_its_type() {
    let warnings = Warnings::default();
    let _guard = tracing::subscriber::set_default(warnings.clone());
    let (server, client) = client_of(json!([
        {"name": "fine", "inputSchema": {"type": "object"}},
        {"name": "stringy", "inputSchema": {"type": "string"}},
        {"name": "listy", "inputSchema": {"type": "array", "items": {"type": "string"}}},
        {"name": "either", "inputSchema": {"type": ["string", "number"]}},
        // Arguments are an object, which these accept.
        {"name": "nullable", "inputSchema": {"type": ["object", "null"]}},
        {"name": "untyped", "inputSchema": {"properties": {"q": {"type": "string"}}}},
    ]))
    .await;
    // Arguments are always a JSON object (MCP's `arguments`, every provider's function
    // call): no call of these could pass their schema, and providers refuse a function whose
    // parameters are not an object.
    assert_eq!(
        super::original_names(&client),
        ["fine", "nullable", "untyped"]
    );
    let left: Vec<(String, String)> = client
        .left_out()
        .into_iter()
        .map(|tool| (tool.name.clone(), tool.to_string()))
        .collect();
    let names: Vec<&str> = left.iter().map(|(name, _)| name.as_str()).collect();
    assert_eq!(names, ["stringy", "listy", "either"], "{left:#?}");
    for ((_, line), declared) in left.iter().zip([
        r#""type": "string""#,
        r#""type": "array""#,
        r#""type": ["string","number"]"#,
    ]) {
        assert!(line.contains("argument schema"), "{line}");
        assert!(line.contains(declared), "{line}");
        assert!(line.contains(r#""type": "object""#), "{line}");
    }
    // Each with a warning naming the server and the tool.
    let logged = warnings.lines();
    assert_eq!(logged.len(), 3, "{logged:#?}");
    for (line, tool) in logged.iter().zip(["stringy", "listy", "either"]) {
        assert!(line.contains(&server.url()), "{line}");
        assert!(line.contains(&format!("tool={tool}")), "{line}");
    }
    // The tools kept are callable: arguments of an object pass their schemas.
    let manager = ToolCallManager::new("consumer");
    for tool in client.tools() {
        manager.register(Arc::new(tool)).unwrap();
    }
    for name in ["fine", "nullable", "untyped"] {
        let arguments = ToolArguments::try_from(json!({"q": "x"})).unwrap();
        manager
            .validate_arguments(name, &arguments)
            .unwrap_or_else(|error| panic!("{name}: {error}"));
    }
    client.close().await;
}

#[tokio::test]
async fn imported_schemas_stay_text_alone_through_registration_calls_search_and_rendering() {
    let (_server, client) = client_of(json!([
        {"name": "catalogue_search", "description": "Search the catalogue.",
            "inputSchema": {"type": "object",
                "properties": {"query": {"type": "string", "description": "Words to look for"}},
                "required": ["query"]},
            "outputSchema": {"type": "object", "properties": {"hits": {"type": "integer"}}}},
    ]))
    .await;
    let manager = ToolCallManager::new("s");
    for tool in client.tools() {
        manager.register(Arc::new(tool)).unwrap();
    }
    // Checked against the schema read from its text.
    let refused = manager
        .validate_arguments("catalogue_search", &ToolArguments::default())
        .unwrap_err();
    assert!(refused.to_string().contains("query"), "{refused}");
    // Found by its argument's description, summarised with its schema.
    let found = manager.shed("words to look for", None).await;
    assert_eq!(found.tools[0].name, "catalogue_search");
    assert_eq!(
        found.tools[0].arguments["properties"]["query"]["type"],
        "string"
    );
    // Rendered for a provider.
    let rendered = manager
        .rendered_tools(
            toolsmith_core::provider::Provider::OpenAiChat,
            toolsmith_core::provider::Declared::All,
            &toolsmith_core::provider::RenderOptions::default(),
        )
        .unwrap();
    assert!(rendered.tools.to_string().contains("Words to look for"));
    // The bridge's definition, the one every session registering it shares, still holds its
    // schemas as text alone: nothing above kept a tree.
    let definition = client.tools()[0].shared_definition();
    let command = &definition.commands()[0];
    assert!(command.arguments.is_compact());
    assert!(command.returns.as_ref().unwrap().is_compact());
    client.close().await;
}
