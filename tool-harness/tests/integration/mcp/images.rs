//! Images across MCP: a tool's image result served by our server as an `image` content
//! block, and read back by our client (over HTTP) as the same image, so that a bridged
//! screenshot tool gives the model the picture, not a description of it; a structured
//! result with images served as `structuredContent` under the tool's output schema with
//! `image` blocks, and read back as one, checked against that schema again.

use std::sync::Arc;

use rmcp::model::{CallToolRequestParams, ContentBlock};
use serde_json::{Value, json};
use toolsmith_core::provider::Provider;
use toolsmith_core::{
    Args, ContentPart, FnTool, Image, JsonWithImages, ToolArgs, ToolArguments, ToolCallManager,
    ToolCallRequest, ToolCallResult, ToolError, ToolErrorKind, UserModelContent,
};
use toolsmith_harness::mcp::{
    McpClient, McpClientOptions, McpHttpOptions, McpHttpServer, McpNames, McpServer,
    McpServerOptions, McpTransport,
};

use super::fake_http::{FakeAnswer, FakeHttpServer};

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

/// A manager with `browse` (an object result: the page's `url`, with its screenshot) and
/// `count_shots` (an integer result, which revisions before 2026-07-28 take wrapped, with
/// the shots), each returning `json_with_images`; `browse` gives a `url` of the wrong type
/// when asked for the page `bad`.
fn screens_manager() -> Arc<ToolCallManager> {
    let manager = ToolCallManager::new("screens");
    let page = json!({"type": "object", "properties": {"url": {"type": "string"}},
                      "required": ["url"]});
    manager
        .register(Arc::new(
            FnTool::new(
                "browse",
                "Open a page and take its screenshot.",
                Args::new(json!({"type": "object", "properties": {"url": {"type": "string"}}})),
                |args: ToolArgs<'_>| {
                    let url = args.get::<String>("url").unwrap_or_default();
                    async move {
                        let value = if url == "bad" {
                            json!({"url": 3})
                        } else {
                            json!({ "url": url })
                        };
                        Ok(ToolCallResult::json_with_images(value, [screenshot()]))
                    }
                },
            )
            .with_returns(Args::new(page)),
        ))
        .unwrap();
    manager
        .register(Arc::new(
            FnTool::new(
                "count_shots",
                "Take two screenshots, and count them.",
                Args::empty(),
                |_: ToolArgs<'_>| async {
                    Ok(ToolCallResult::json_with_images(
                        json!(2),
                        [screenshot(), screenshot()],
                    ))
                },
            )
            .with_returns(Args::new(json!({"type": "integer"}))),
        ))
        .unwrap();
    Arc::new(manager)
}

#[tokio::test]
async fn a_served_value_with_images_is_structured_content_under_the_output_schema() {
    let (client, _inbox, _server) =
        super::connect(screens_manager(), McpServerOptions::default()).await;
    let tools = client.list_all_tools().await.unwrap();
    let validator = |name: &str| {
        let tool = tools.iter().find(|tool| tool.name == name).unwrap();
        jsonschema::validator_for(&Value::Object(
            tool.output_schema.as_deref().unwrap().clone(),
        ))
        .unwrap()
    };
    let call = |name: &str, arguments: Value| {
        CallToolRequestParams::new(name.to_owned())
            .with_arguments(arguments.as_object().cloned().unwrap_or_default())
    };
    let shot = ContentBlock::image(screenshot().data(), "image/png");

    let page = client
        .call_tool(call("browse", json!({"url": "https://example.com"})))
        .await
        .unwrap();
    assert_eq!(page.is_error, Some(false));
    let structured = page.structured_content.clone().unwrap();
    assert_eq!(structured, json!({"url": "https://example.com"}));
    assert!(validator("browse").is_valid(&structured));
    // The value mirrored as text, then the image.
    assert_eq!(
        page.content,
        [ContentBlock::text(structured.to_string()), shot.clone()]
    );

    // An integer: wrapped, as the output schema says for this revision.
    let counted = client
        .call_tool(call("count_shots", json!({})))
        .await
        .unwrap();
    let structured = counted.structured_content.clone().unwrap();
    assert_eq!(structured, json!({"result": 2}));
    assert!(validator("count_shots").is_valid(&structured));
    assert_eq!(counted.content[1..], [shot.clone(), shot]);

    // A value that breaks the tool's own schema is refused, not served.
    let broken = client
        .call_tool(call("browse", json!({"url": "bad"})))
        .await
        .unwrap();
    assert_eq!(broken.is_error, Some(true));
    assert_eq!(broken.structured_content, None);
    let message = broken.content[0].as_text().unwrap().text.clone();
    assert!(
        message.contains("does not match its `returns` schema"),
        "{message}"
    );
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn a_served_value_with_images_comes_back_through_a_bridge_as_one() {
    let server = McpHttpServer::start(McpServer::new(screens_manager()), McpHttpOptions::default())
        .await
        .unwrap();
    let client = McpClient::connect_with(
        McpTransport::http(server.url()),
        McpClientOptions::default().with_names(McpNames::new()),
    )
    .await
    .unwrap();
    let consumer = Arc::new(ToolCallManager::new("consumer"));
    for tool in client.tools() {
        consumer.register(Arc::new(tool)).unwrap();
    }
    let run = |name: &'static str, arguments: Value| {
        let consumer = &consumer;
        async move {
            let request =
                ToolCallRequest::new("c1", name, ToolArguments::try_from(arguments).unwrap());
            consumer.execute_one(&request).await.unwrap()
        }
    };
    let page = run("browse", json!({"url": "https://example.com"})).await;
    assert_eq!(
        page,
        ToolCallResult::json_with_images(json!({"url": "https://example.com"}), [screenshot()])
    );
    // Checked against the output schema the bridge took as its `returns`.
    assert_eq!(consumer.check_result("browse", &page), Ok(()));
    // The wrapper is taken off again.
    assert_eq!(
        run("count_shots", json!({})).await,
        ToolCallResult::json_with_images(json!(2), [screenshot(), screenshot()])
    );

    // Served again by a server of the bridged tools: its output schema, and the structured
    // content a client then requires of it, beside the image.
    let (again, _inbox, _serving) =
        super::connect(Arc::clone(&consumer), McpServerOptions::default()).await;
    let listed = again.list_all_tools().await.unwrap();
    let browse = listed.iter().find(|tool| tool.name == "browse").unwrap();
    let output = jsonschema::validator_for(&Value::Object(
        browse.output_schema.as_deref().unwrap().clone(),
    ))
    .unwrap();
    let served = again
        .call_tool(
            CallToolRequestParams::new("browse").with_arguments(
                json!({"url": "https://example.com"})
                    .as_object()
                    .unwrap()
                    .clone(),
            ),
        )
        .await
        .unwrap();
    let structured = served
        .structured_content
        .clone()
        .expect("structured content");
    assert!(output.is_valid(&structured), "{structured}");
    assert_eq!(
        served.content.last(),
        Some(&ContentBlock::image(screenshot().data(), "image/png"))
    );
    again.cancel().await.unwrap();
    client.close().await;
    server.shutdown().await.unwrap();
}

#[tokio::test]
async fn a_remote_value_beside_images_that_breaks_the_output_schema_is_caught() {
    let shot = screenshot();
    let data = shot.data().to_owned();
    let server = FakeHttpServer::start(move |method, _| match method {
        "tools/list" => FakeAnswer::Result(json!({"tools": [{
            "name": "browse",
            "inputSchema": {"type": "object"},
            "outputSchema": {"type": "object", "properties": {"url": {"type": "string"}},
                             "required": ["url"]},
        }]})),
        "tools/call" => FakeAnswer::Result(json!({
            "content": [
                {"type": "text", "text": "{\"url\":3}"},
                {"type": "image", "data": data, "mimeType": "image/png"},
            ],
            "structuredContent": {"url": 3},
        })),
        _ => FakeAnswer::Result(json!({})),
    })
    .await;
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
    let request = ToolCallRequest::new("c1", "browse", ToolArguments::new());
    let result = consumer.execute_one(&request).await.unwrap();
    let err = consumer.check_result("browse", &result).unwrap_err();
    assert_eq!(err.kind(), ToolErrorKind::Execution);
    assert!(
        err.to_string()
            .contains("does not match its `returns` schema: /url: 3 is not of type \"string\""),
        "{err}"
    );
    assert_eq!(
        result,
        ToolCallResult::json_with_images(json!({"url": 3}), [shot])
    );
    // Nor does the model see the value as valid.
    let rendered = consumer.render_results(
        Provider::Anthropic,
        [("c1", "browse", &Ok::<_, ToolError>(result))],
    );
    let text = Value::Array(rendered).to_string();
    assert!(
        text.contains("does not match its `returns` schema"),
        "{text}"
    );
    client.close().await;
}

/// `local`'s tools bridged by our client, in memory, from our server of `served`; the
/// client and the server's task are kept alive with it.
async fn bridged(
    served: Arc<ToolCallManager>,
    local: &str,
) -> (
    Arc<ToolCallManager>,
    McpClient,
    tokio::task::JoinHandle<Result<(), toolsmith_harness::mcp::McpError>>,
) {
    let (client, serving) = super::our_client_of(served, local).await;
    let manager = ToolCallManager::new(local);
    for tool in client.tools() {
        manager.register(Arc::new(tool)).unwrap();
    }
    (Arc::new(manager), client, serving)
}

#[tokio::test]
async fn a_value_with_images_and_notes_crosses_two_hops_to_the_model_whole_and_once() {
    // What a first hop gives: a caption, the screenshot, and the note it wrote for an image
    // it could not read; an integer value, which is served wrapped under its schema.
    let note = "[an image from tool 'count_shots' that cannot be shown: too large]";
    let first = ToolCallResult {
        content: UserModelContent::JsonWithImages(JsonWithImages::new(
            json!(2),
            [
                ContentPart::text("The shots:"),
                screenshot().into(),
                ContentPart::text(note),
            ],
        )),
        error_detail: None,
    };
    let origin = ToolCallManager::new("origin");
    let answer = first.clone();
    origin
        .register(Arc::new(
            FnTool::new(
                "count_shots",
                "Take the shots, and count them.",
                Args::empty(),
                move |_: ToolArgs<'_>| {
                    let answer = answer.clone();
                    async move { Ok(answer) }
                },
            )
            .with_returns(Args::new(json!({"type": "integer"}))),
        ))
        .unwrap();
    let request = ToolCallRequest::new("c1", "count_shots", ToolArguments::new());

    // Toolsmith -> Toolsmith: every part, in order, once.
    let (second, first_client, first_serving) = bridged(Arc::new(origin), "second").await;
    let result = second.execute_one(&request).await.unwrap();
    assert_eq!(result, first);
    assert_eq!(second.check_result("count_shots", &result), Ok(()));
    // And once more, the bridged tool served again.
    let (third, second_client, second_serving) = bridged(Arc::clone(&second), "third").await;
    let result = third.execute_one(&request).await.unwrap();
    assert_eq!(result, first);

    // -> the model: the value's text, the caption, the image, the note, in that order.
    let rendered = third.render_results(
        Provider::Anthropic,
        [("c1", "count_shots", &Ok::<_, ToolError>(result))],
    );
    let content = &rendered[0]["content"][0]["content"];
    let seen: Vec<String> = content
        .as_array()
        .unwrap()
        .iter()
        .map(|block| match block["type"].as_str() {
            Some("text") => block["text"].as_str().unwrap().to_owned(),
            other => format!("<{}>", other.unwrap_or("?")),
        })
        .collect();
    assert_eq!(seen, ["2", "The shots:", "<image>", note], "{content}");

    for (client, serving) in [
        (second_client, second_serving),
        (first_client, first_serving),
    ] {
        client.close().await;
        serving.await.unwrap().unwrap();
    }
}
