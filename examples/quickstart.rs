//! Quickstart: define two tools with `#[tool_fn]`, put them in a session's shed, let the
//! model find them with `shed`, run valid and invalid calls, and make one round trip in a
//! provider's wire format.
//!
//! Run with `cargo run --example quickstart`.

use serde_json::json;
use toolsmith::{
    SessionParts, ToolArguments, ToolCallManager, ToolCallRequest, ToolError, ToolShed, tool_fn,
};

/// Greet someone by name.
#[tool_fn]
async fn greet(
    /** Who to greet. */
    name: String,
) -> Result<String, ToolError> {
    if name.is_empty() {
        return Err(ToolError::invalid_arguments("greet", "the name is empty"));
    }
    Ok(format!("Hello, {name}!"))
}

/// Add two integers between 0 and 1000.
#[tool_fn(category = "math")]
async fn add(
    /** The first number. */
    a: u16,
    /** The second number. */
    b: u16,
) -> Result<u16, String> {
    if a > 1000 || b > 1000 {
        return Err(format!("{a} + {b}: both numbers must be at most 1000"));
    }
    Ok(a + b)
}

#[tokio::main]
async fn main() {
    let manager = ToolShed::new()
        .tool(Greet)
        .tool(Add)
        .build(SessionParts::in_memory("quickstart"))
        .expect("the shed builds");
    println!("tools: {:?}\n", manager.names());

    shed_first(&manager).await;

    let calls = [
        ("greet", json!({"name": "Ada"})),
        ("add", json!({"a": 2, "b": 40})),
        // Text-based backends send numbers as strings: accepted.
        ("add", json!({"a": "2", "b": "3"})),
        // Invalid: the tool does not run, and the error names every violation.
        ("add", json!({"a": -1, "b": "many"})),
        ("add", json!({"a": 1, "b": 5000})),
        ("greet", json!({"name": ""})),
        ("greet", json!({})),
        ("subtract", json!({"a": 1, "b": 2})),
    ];
    // One batch, as a model's turn: the calls are independent, so they run concurrently;
    // outcomes come back one per call, in order. `execute_turn` checks that each tool was
    // offered, as an agent loop does.
    let requests: Vec<ToolCallRequest> = calls
        .into_iter()
        .enumerate()
        .map(|(i, (tool, arguments))| {
            let arguments = ToolArguments::try_from(arguments).expect("an object");
            ToolCallRequest::new(format!("call-{i}"), tool, arguments)
        })
        .collect();
    let outcomes = manager.execute_turn(&requests).await;
    for (request, outcome) in requests.iter().zip(outcomes) {
        let tool = &request.name;
        match outcome.result {
            Ok(result) => println!(
                "{tool} {} -> ok: {}",
                request.arguments,
                result.content.to_text()
            ),
            Err(err) => println!("{tool} {} -> error: {err}", request.arguments),
        }
    }

    provider_round_trip(&manager).await;
}

/// The shed-first flow: the model is offered only `shed`; the tools it finds become active
/// and are declared from then on.
async fn shed_first(manager: &ToolCallManager) {
    let offered = |m: &ToolCallManager| -> Vec<String> {
        m.offered_tools()
            .iter()
            .map(|t| t.name().to_owned())
            .collect()
    };
    println!("offered: {:?}", offered(manager));
    let found = manager.shed("add two numbers", Some(1)).await;
    let names: Vec<&str> = found.tools.iter().map(|t| t.name.as_str()).collect();
    println!("shed(\"add two numbers\") -> {names:?}");
    println!("offered: {:?}", offered(manager));
    // `select:` activates tools by exact name.
    manager.shed("select:greet", None).await;
    println!("after select:greet, offered: {:?}\n", offered(manager));
}

/// One round trip in a provider's wire format (Anthropic here; every format works alike):
/// declare the tools, read the model's calls, run them, and write the results back.
async fn provider_round_trip(manager: &ToolCallManager) {
    use toolsmith::provider::{Declared, Provider, RenderOptions};

    let provider = Provider::Anthropic;
    let tools = manager
        .rendered_tools(provider, Declared::All, &RenderOptions::default())
        .expect("the tools render");
    println!("\n{provider} tools: {tools}");

    // What the model answered (a scripted response here).
    let response = json!({"role": "assistant", "content": [
        {"type": "tool_use", "id": "toolu_1", "name": "add", "input": {"a": 2, "b": 3}},
        {"type": "tool_use", "id": "toolu_2", "name": "gret", "input": {"name": "Ada"}}
    ]});
    let mut results = Vec::new();
    for call in provider
        .parse_calls(&response)
        .expect("an Anthropic message")
    {
        match call {
            Ok(request) => {
                let result = manager.execute_one(&request).await;
                results.push((request.id, request.name, result));
            }
            Err(rejected) => results.push(rejected.into_parts()),
        }
    }
    // The next user message: `tool_result` blocks with the call ids, errors flagged.
    let reply = manager.render_results(provider, &results);
    println!("{provider} results: {}", serde_json::Value::Array(reply));
}
