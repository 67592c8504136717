//! Images across MCP: a tool's image result served by our server as an `image` content
//! block, and read back by our client (over HTTP) as the same image, so that a bridged
//! screenshot tool gives the model the picture, not a description of it.

use std::sync::Arc;

use serde_json::json;
use toolsmith_core::{
    Args, ContentPart, FnTool, Image, ToolArgs, ToolArguments, ToolCallManager, ToolCallRequest,
    ToolCallResult,
};
use toolsmith_harness::mcp::{
    McpClient, McpClientOptions, McpHttpOptions, McpHttpServer, McpNames, McpServer, McpTransport,
};

fn screenshot() -> Image {
    Image::from_bytes("image/png", b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR").unwrap()
}

#[tokio::test]
async fn a_served_image_comes_back_through_a_bridge_as_an_image() {
    let manager = ToolCallManager::new("screens");
    manager
        .register(Arc::new(FnTool::new(
            "screenshot",
            "Take a screenshot of the page.",
            Args::empty(),
            |_: ToolArgs<'_>| async {
                Ok(ToolCallResult::parts([
                    ContentPart::text("The page:"),
                    screenshot().into(),
                ]))
            },
        )))
        .unwrap();
    let server = McpHttpServer::start(McpServer::new(Arc::new(manager)), McpHttpOptions::default())
        .await
        .unwrap();
    let client = McpClient::connect_with(
        McpTransport::http(server.url()),
        McpClientOptions::default().with_names(McpNames::new()),
    )
    .await
    .unwrap();
    let consumer = ToolCallManager::new("consumer");
    for tool in client.tools() {
        consumer.register(Arc::new(tool)).unwrap();
    }
    let request = ToolCallRequest::new(
        "c1",
        "screenshot",
        ToolArguments::try_from(json!({})).unwrap(),
    );
    let result = consumer.execute_one(&request).await.unwrap();
    assert_eq!(
        result,
        ToolCallResult::parts([ContentPart::text("The page:"), screenshot().into()])
    );
    client.close().await;
    server.shutdown().await.unwrap();
}
