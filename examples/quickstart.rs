//! Quickstart: define two tools with `#[tool_fn]`, register them, then run valid and invalid
//! calls and print the results.
//!
//! Run with `cargo run --example quickstart`.

use std::sync::Arc;

use serde_json::json;
use toolsmith::{ToolArguments, ToolCallManager, ToolCallRequest, ToolError, tool_fn};

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
    let manager = ToolCallManager::new("quickstart");
    manager.register(Arc::new(Greet)).expect("greet registers");
    manager.register(Arc::new(Add)).expect("add registers");

    println!("tools: {:?}\n", manager.names());

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
    for (i, (tool, arguments)) in calls.into_iter().enumerate() {
        let arguments = ToolArguments::try_from(arguments).expect("an object");
        let request = ToolCallRequest::new(format!("call-{i}"), tool, arguments);
        match manager.execute_one(&request).await {
            Ok(result) => println!(
                "{tool} {} -> ok: {}",
                request.arguments,
                result.content.to_text()
            ),
            Err(err) => println!("{tool} {} -> error: {err}", request.arguments),
        }
    }
}
