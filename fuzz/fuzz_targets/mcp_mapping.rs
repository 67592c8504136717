//! MCP messages to Toolsmith's tools and results: the bytes are read as JSON by serde_json
//! (depth bounded) as `{"tools": [..], "result": {..}}`; each item of `tools` that reads as
//! rmcp's `Tool`, and `result` if it reads as rmcp's `CallToolResult`, are what a scripted
//! streamable-HTTP MCP server on 127.0.0.1 answers `tools/list` and `tools/call` with. Two
//! `McpClient`s connected to it once (sharing one `McpNames`; the second with the prefix
//! `my.srv`, which is not provider-safe) list the tools again for each input, and the first
//! tool of the first client is called.
//!
//! Asserts: nothing panics; every listed tool is given a bridge, named as our registry
//! accepts (`ToolCallManager::register` refuses no name: not invalid, not `shed`, not taken)
//! and distinct across both clients, standing for its original name, or is in
//! `McpClient::left_out` (a name listed again, an input schema whose root `type` is not
//! `object`, or a schema that does not compile as core compiles schemas, the refusal naming
//! the tool: session 29 found that the client kept such a tool, which registration then
//! refused, docs/FUZZING.md); each bridge's input schema is
//! the server's, kept as text (`Args::compact`) unless it holds a float, and still so after
//! registration and a validation, and every bridge registers; the call's result keeps the text of every text block (joined by lines) or the structured
//! content (the value a marked wrapper holds, for a tool whose output schema is one), beside
//! images: the value, then every other block a part, in order, but for the first text block
//! mirroring the value; an image block is the image as sent or a text naming the tool; a
//! result marked `isError` is an error naming the local tool, its reason the server's text
//! (less a first `Tool 'NAME' failed: `, else `Tool 'NAME' `, naming the server's tool), or
//! for a refusal of the arguments, a part of that text.

#![no_main]

use std::collections::HashSet;
use std::sync::{Arc, LazyLock, Mutex};
use std::time::Duration;

use axum::http::{StatusCode, header};
use axum::response::IntoResponse;
use libfuzzer_sys::fuzz_target;
use rmcp::model::{CallToolResult, ContentBlock, ServerResult};
use serde_json::{Value, json};
use toolsmith::harness::mcp::{LeftOutReason, McpClient, McpClientOptions, McpNames, McpTransport};
use toolsmith::{
    ContentPart, RegistrationError, ToolArguments, ToolCallManager, ToolError, ToolImpl,
    UserModelContent, value_from_str,
};

/// Inputs nested deeper are passed over: the point is the mapping, not serde's recursion.
const MAX_DEPTH: usize = 24;

/// What the scripted server answers, set for each input.
struct Script {
    tools: Vec<Value>,
    result: Value,
}

static SCRIPT: Mutex<Option<Script>> = Mutex::new(None);

struct Fixture {
    runtime: tokio::runtime::Runtime,
    plain: McpClient,
    prefixed: McpClient,
}

static FIXTURE: LazyLock<Fixture> = LazyLock::new(|| {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let (plain, prefixed) = runtime.block_on(async {
        let app = axum::Router::new().route(
            "/mcp",
            axum::routing::post(answer)
                .get(|| async { StatusCode::METHOD_NOT_ALLOWED })
                .delete(|| async { StatusCode::OK }),
        );
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/mcp", listener.local_addr().unwrap());
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        let names = McpNames::new();
        let options = || {
            McpClientOptions::default()
                .with_names(names.clone())
                .with_call_timeout(Some(Duration::from_secs(5)))
                .with_connect_timeout(Duration::from_secs(5))
        };
        let plain = McpClient::connect_with(McpTransport::http(url.clone()), options())
            .await
            .unwrap();
        let prefixed =
            McpClient::connect_with(McpTransport::http(url), options().with_prefix("my.srv"))
                .await
                .unwrap();
        (plain, prefixed)
    });
    Fixture {
        runtime,
        plain,
        prefixed,
    }
});

/// The scripted server: the handshake, then the script's answers.
async fn answer(body: String) -> axum::response::Response {
    let message: Value = serde_json::from_str(&body).unwrap();
    let Some(id) = message.get("id").cloned() else {
        return StatusCode::ACCEPTED.into_response();
    };
    let result = match message["method"].as_str().unwrap_or_default() {
        "initialize" => json!({
            "protocolVersion": message["params"]["protocolVersion"],
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "fuzz", "version": "1"},
        }),
        method => {
            let script = SCRIPT.lock().unwrap();
            match (method, script.as_ref()) {
                ("tools/list", Some(script)) => json!({"tools": script.tools}),
                ("tools/list", None) => json!({"tools": []}),
                ("tools/call", Some(script)) => script.result.clone(),
                _ => json!({}),
            }
        }
    };
    let body = json!({"jsonrpc": "2.0", "id": id, "result": result}).to_string();
    (
        [
            (header::CONTENT_TYPE, "application/json"),
            (header::HeaderName::from_static("mcp-session-id"), "s1"),
        ],
        body,
    )
        .into_response()
}

fn depth(value: &Value) -> usize {
    match value {
        Value::Array(items) => 1 + items.iter().map(depth).max().unwrap_or(0),
        Value::Object(members) => 1 + members.values().map(depth).max().unwrap_or(0),
        _ => 0,
    }
}

/// Whether `schema` compiles as core's validator compiles argument schemas (formats asserted
/// where known: `tool-core/src/schema/validation.rs`).
fn compiles(schema: &serde_json::Map<String, Value>) -> bool {
    jsonschema::options()
        .should_validate_formats(true)
        .should_ignore_unknown_formats(true)
        .build(&Value::Object(schema.clone()))
        .is_ok()
}

/// Whether `value` holds a float anywhere.
fn holds_float(value: &Value) -> bool {
    match value {
        Value::Number(number) => number.is_f64(),
        Value::Array(items) => items.iter().any(holds_float),
        Value::Object(members) => members.values().any(holds_float),
        _ => false,
    }
}

/// A provider-safe name: `^[a-zA-Z0-9_-]{1,64}$`.
fn provider_safe(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// Whether `output` is a marked wrapper (`x-fastmcp-wrap-result: true`, an object of one
/// required property, `result`), whose structured results the bridge gives back unwrapped
/// (`WRAPPED_RESULT_MARKER`'s doc).
fn marked_wrapper(output: &serde_json::Map<String, Value>) -> bool {
    let properties = output.get("properties").and_then(Value::as_object);
    output.get("x-fastmcp-wrap-result") == Some(&json!(true))
        && output.get("type") == Some(&json!("object"))
        && properties.is_some_and(|p| p.len() == 1 && p.contains_key("result"))
        && output.get("required") == Some(&json!(["result"]))
}

/// The structured content as the bridge keeps it: a marked wrapper's value unwrapped.
fn kept_value(value: &Value, wrapped: bool) -> &Value {
    match value.as_object() {
        Some(members) if wrapped && members.len() == 1 => members.get("result").unwrap_or(value),
        _ => value,
    }
}

/// An image block kept beside text: the image as sent, or (unreadable) a text naming the
/// local tool.
fn assert_image_kept(local: &str, block: &ContentBlock, part: &ContentPart) {
    let ContentBlock::Image(sent) = block else {
        return;
    };
    match part {
        ContentPart::Image(image) => {
            assert_eq!(
                image.data(),
                sent.data.as_str(),
                "{local}: the image changed"
            )
        }
        other => assert!(
            other.to_text().contains(&format!("'{local}'")),
            "{local}: an unreadable image became {other:?}"
        ),
    }
}

/// The text blocks' text, one a line, as the bridge's result keeps it (other blocks are
/// described in brackets; only text is compared).
fn text_blocks(result: &CallToolResult) -> Vec<&str> {
    result
        .content
        .iter()
        .filter_map(|block| match block {
            ContentBlock::Text(text) => Some(text.text.as_str()),
            _ => None,
        })
        .collect()
}

fuzz_target!(|data: &[u8]| {
    let Ok(input) = serde_json::from_slice::<Value>(data) else {
        return;
    };
    if depth(&input) > MAX_DEPTH {
        return;
    }
    let tools: Vec<Value> = input
        .get("tools")
        .and_then(Value::as_array)
        .map(|tools| {
            tools
                .iter()
                .filter(|tool| serde_json::from_value::<rmcp::model::Tool>((*tool).clone()).is_ok())
                .cloned()
                .collect()
        })
        .unwrap_or_default();
    let result_value = input
        .get("result")
        .filter(|r| serde_json::from_value::<CallToolResult>((*r).clone()).is_ok())
        .cloned()
        .unwrap_or_else(|| json!({"content": [{"type": "text", "text": "ok"}]}));
    let result: CallToolResult = serde_json::from_value(result_value.clone()).unwrap();
    // rmcp reads a result by its shape (`ServerResult` is an untagged union tried in order):
    // one that is also an earlier result type (a `prompts` array beside the content reads as
    // `ListPromptsResult`) is that type on the wire, and the call must fail as an answer the
    // client cannot read, naming the tool (found session 29: not the mapping's doing).
    let read_as_call = matches!(
        serde_json::from_value::<ServerResult>(result_value.clone()),
        Ok(ServerResult::CallToolResult(_))
    );
    // The server lists a name once: the first listing of a name is the tool.
    let mut seen = HashSet::new();
    let listed: Vec<rmcp::model::Tool> = tools
        .iter()
        .map(|tool| serde_json::from_value::<rmcp::model::Tool>(tool.clone()).unwrap())
        .filter(|tool| seen.insert(tool.name.clone()))
        .collect();
    let listed_total = tools.len();
    *SCRIPT.lock().unwrap() = Some(Script {
        tools,
        result: result_value,
    });
    let fixture = &*FIXTURE;
    fixture.runtime.block_on(async {
        let mut names = HashSet::new();
        for client in [&fixture.plain, &fixture.prefixed] {
            if let Err(error) = client.refresh_tools().await {
                panic!("a listing of tools that each read as rmcp's failed: {error}");
            }
            let bridges = client.tools();
            let left_out = client.left_out();
            assert_eq!(
                left_out.len(),
                listed_total - bridges.len(),
                "listed {listed_total} tools, bridged {}, left out {left_out:?}",
                bridges.len()
            );
            let again = left_out
                .iter()
                .filter(|tool| tool.reason == LeftOutReason::ListedAgain)
                .count();
            assert_eq!(again, listed_total - listed.len(), "{left_out:?}");
            let manager = ToolCallManager::new("fuzz");
            let mut bridges = bridges.iter();
            let mut refused = left_out
                .iter()
                .filter(|tool| tool.reason != LeftOutReason::ListedAgain);
            for remote in &listed {
                // In the server's order: the tool's bridge, or its refusal.
                let bridge = match bridges.as_slice().first() {
                    Some(bridge) if bridge.original_name() == remote.name => bridges.next(),
                    _ => None,
                };
                let Some(bridge) = bridge else {
                    let tool = refused
                        .next()
                        .unwrap_or_else(|| panic!("{} neither bridged nor left out", remote.name));
                    assert_eq!(tool.name, remote.name);
                    // Left out only when the server's own schema does not compile as core
                    // compiles it, the refusal naming the tool.
                    match &tool.reason {
                        LeftOutReason::Refused(RegistrationError::InvalidSchema { .. }) => assert!(
                            !compiles(&remote.input_schema),
                            "{}: the server's input schema compiles, the mapped one not",
                            remote.name
                        ),
                        LeftOutReason::Refused(RegistrationError::InvalidReturnsSchema {
                            ..
                        }) => assert!(
                            remote.output_schema.as_ref().is_some_and(|s| !compiles(s)),
                            "{}: the server's output schema compiles, the mapped one not",
                            remote.name
                        ),
                        // Or when its input schema's root is typed other than `object`,
                        // which no call's arguments (an object) can match.
                        LeftOutReason::Refused(RegistrationError::ArgumentsNotAnObject {
                            ..
                        }) => assert!(
                            match remote.input_schema.get("type") {
                                Some(Value::String(name)) => name != "object",
                                Some(Value::Array(names)) => !names.iter().any(|n| n == "object"),
                                _ => false,
                            },
                            "{}: left out as not an object, but its input schema accepts one",
                            remote.name
                        ),
                        other => panic!("{} was left out: {other}", remote.name),
                    }
                    continue;
                };
                let name = bridge.name();
                assert!(provider_safe(name), "{name:?} is not provider-safe");
                assert!(names.insert(name.to_owned()), "{name} given twice");
                // The one the bridge shares with every manager it is registered with.
                let definition = bridge.shared_definition();
                let command = &definition.commands()[0];
                // Kept as text (`Args::compact`) unless a float would not read back alike;
                // read here without keeping a tree (`Serialize`), unlike `Args::schema`.
                let compact = |schema: &toolsmith::Args| {
                    let tree = serde_json::to_value(schema).unwrap();
                    assert_eq!(
                        schema.is_compact(),
                        !holds_float(&tree),
                        "{name}: compact {} for {tree}",
                        schema.is_compact()
                    );
                    tree
                };
                assert_eq!(
                    compact(&command.arguments),
                    Value::Object(remote.input_schema.as_ref().clone()),
                    "{name}'s input schema is not the server's"
                );
                if let Some(returns) = &command.returns {
                    compact(returns);
                }
                if let Err(error) = manager.register(Arc::new(bridge.clone())) {
                    panic!("{name} was refused: {error}");
                }
                // Registration's checks, and compiling the schema for a validation, read the
                // text without keeping a tree.
                let _ = manager.validate_arguments(name, &ToolArguments::default());
                compact(&command.arguments);
                if let Some(returns) = &command.returns {
                    compact(returns);
                }
            }
            assert_eq!(bridges.len(), 0, "bridges of tools not listed");
            assert_eq!(refused.next(), None, "tools not listed left out");
        }
        let Some(bridge) = fixture.plain.tools().into_iter().next() else {
            return;
        };
        let local = bridge.name().to_owned();
        let remote = bridge.original_name().to_owned();
        let wrapped = listed
            .iter()
            .find(|tool| tool.name == remote)
            .and_then(|tool| tool.output_schema.as_deref())
            .is_some_and(marked_wrapper);
        let outcome = bridge.execute(ToolArguments::default()).await;
        if !read_as_call {
            match outcome {
                Err(ToolError::Execution { tool, reason }) => {
                    assert_eq!(tool, local);
                    assert!(reason.contains("the MCP server"), "{local}: {reason}");
                }
                other => panic!("{local}: another result type came back as {other:?}"),
            }
            return;
        }
        if result.is_error == Some(true) {
            // The server's text, where every block is text (others are described in brackets).
            let text = (text_blocks(&result).len() == result.content.len())
                .then(|| text_blocks(&result).join("\n"));
            match outcome {
                Err(ToolError::InvalidArguments { tool, reason }) => {
                    assert_eq!(tool, local);
                    assert!(
                        !reason.trim().is_empty(),
                        "{local}: a refusal without a reason"
                    );
                    if let Some(text) = &text {
                        assert!(
                            text.contains(&reason),
                            "{local}: {reason:?} not in {text:?}"
                        );
                    }
                }
                Err(ToolError::Execution { tool, reason }) => {
                    assert_eq!(tool, local);
                    assert!(!reason.is_empty(), "{local}: a failure without a reason");
                    match (&text, &result.structured_content) {
                        // Only the server's naming of its own tool is left out: a first
                        // `Tool 'NAME' failed: `, else `Tool 'NAME' ` (commit e8fbdb5).
                        (Some(text), _) if !text.is_empty() => {
                            let unnamed = [
                                format!("Tool '{remote}' failed: "),
                                format!("Tool '{remote}' "),
                            ]
                            .iter()
                            .find_map(|prefix| {
                                text.strip_prefix(prefix.as_str())
                                    .filter(|rest| !rest.is_empty())
                            })
                            .unwrap_or(text);
                            assert_eq!(reason, unnamed, "{local}: the server's {text:?}")
                        }
                        (Some(_), Some(value)) => assert_eq!(
                            value_from_str(&reason).ok().as_ref(),
                            Some(value),
                            "{local}: the structured error came back as {reason:?}"
                        ),
                        _ => {}
                    }
                }
                other => panic!("{local}: an error came back as {other:?}"),
            }
            return;
        }
        let outcome = outcome.unwrap_or_else(|e| panic!("{local}: {e}"));
        match (&result.structured_content, &outcome.content) {
            (Some(value), UserModelContent::Json(kept)) => assert_eq!(
                kept_value(value, wrapped),
                kept,
                "{local}: structured content changed"
            ),
            (None, UserModelContent::Text(text)) => {
                let blocks = text_blocks(&result);
                if blocks.len() == result.content.len() {
                    assert_eq!(*text, blocks.join("\n"), "{local}: the text changed");
                } else {
                    let mut rest = text.as_str();
                    for block in blocks {
                        let at = rest
                            .find(block)
                            .unwrap_or_else(|| panic!("{local}: {block:?} lost from {text:?}"));
                        rest = &rest[at + block.len()..];
                    }
                }
            }
            // Structured content beside an image: the value, and a part a block, in order,
            // but for at most one text block that mirrors the value.
            (Some(value), UserModelContent::JsonWithImages(kept)) => {
                let parts = kept.parts();
                let images = result
                    .content
                    .iter()
                    .filter(|block| matches!(block, ContentBlock::Image(_)))
                    .count();
                assert!(images > 0, "{local}: a value with images without an image");
                // The first text block that is the value's JSON text (the value as sent, a
                // marked wrapper too) mirrors it. Core's bounded reader is asked too: text it
                // refuses (serde_json's private keys, too many values) is not read as a mirror.
                let mirror = result.content.iter().position(|block| match block {
                    ContentBlock::Text(text) => {
                        serde_json::from_str::<Value>(&text.text).is_ok_and(|v| v == *value)
                            && value_from_str(&text.text).is_ok()
                    }
                    _ => false,
                });
                let blocks = result
                    .content
                    .iter()
                    .enumerate()
                    .filter(|&(at, _)| Some(at) != mirror);
                assert_eq!(parts.len(), blocks.clone().count(), "{local}: blocks lost");
                for ((_, block), part) in blocks.zip(parts) {
                    match block {
                        ContentBlock::Text(text) => {
                            assert_eq!(part.to_text(), text.text, "{local}: the text changed")
                        }
                        ContentBlock::Image(_) => assert_image_kept(&local, block, part),
                        _ => assert!(
                            !matches!(part, ContentPart::Image(_)),
                            "{local}: a block became an image"
                        ),
                    }
                }
                assert_eq!(
                    kept_value(value, wrapped),
                    kept.value(),
                    "{local}: structured content changed"
                );
            }
            // Content with an image comes back as parts, one a block, in order.
            (None, UserModelContent::Parts(parts)) => {
                assert_eq!(parts.len(), result.content.len(), "{local}: blocks lost");
                for (block, part) in result.content.iter().zip(parts) {
                    if let ContentBlock::Text(text) = block {
                        assert_eq!(part.to_text(), text.text, "{local}: the text changed");
                    }
                    assert_image_kept(&local, block, part);
                }
            }
            (expected, kept) => panic!("{local}: {expected:?} came back as {kept:?}"),
        }
    });
});
