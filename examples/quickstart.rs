//! Quickstart: register two tools, then run valid and invalid calls and print the results.
//!
//! Run with `cargo run --example quickstart`.

use std::sync::Arc;

use async_trait::async_trait;
use serde_json::json;
use toolsmith::{
    Args, FnTool, Tool, ToolArgs, ToolArguments, ToolCallManager, ToolCallRequest, ToolCallResult,
    ToolDefinition, ToolError, ToolImpl, scheme,
};

/// A hand-written tool: greets someone by name.
struct Greet;

#[async_trait]
impl ToolImpl for Greet {
    fn definition(&self) -> Tool {
        Tool::SingleCommand(ToolDefinition::new(
            "greet",
            "Greet someone by name.",
            Args::new(
                scheme::object()
                    .required(
                        "name",
                        scheme::string().min_len(1).describe("Who to greet."),
                    )
                    .build(),
            ),
        ))
    }

    async fn execute(&self, arguments: ToolArguments) -> Result<ToolCallResult, ToolError> {
        let name = ToolArgs::new("greet", &arguments).str("name")?;
        Ok(ToolCallResult::text(format!("Hello, {name}!")))
    }
}

#[tokio::main]
async fn main() {
    let manager = ToolCallManager::new("quickstart");
    manager.register(Arc::new(Greet)).expect("greet registers");

    // A tool from a closure: adds two bounded integers.
    let add = FnTool::new(
        "add",
        "Add two integers between 0 and 1000.",
        Args::new(
            scheme::object()
                .required("a", scheme::integer().minimum(0).maximum(1000))
                .required("b", scheme::integer().minimum(0).maximum(1000))
                .build(),
        ),
        |args: ToolArgs<'_>| {
            let sum = args.i64("a").and_then(|a| Ok(a + args.i64("b")?));
            async move { Ok(ToolCallResult::json(json!({ "sum": sum? }))) }
        },
    )
    .with_category("math");
    manager.register(Arc::new(add)).expect("add registers");

    println!("tools: {:?}\n", manager.names());

    let calls = [
        ("greet", json!({"name": "Ada"})),
        ("add", json!({"a": 2, "b": 40})),
        // Text-based backends send numbers as strings: accepted.
        ("add", json!({"a": "2", "b": "3"})),
        // Invalid: the tool does not run, and the error names every violation.
        ("add", json!({"a": -1, "b": 5000})),
        ("greet", json!({"name": ""})),
        ("greet", json!({})),
        ("subtract", json!({"a": 1, "b": 2})),
    ];
    shed_first(&manager).await;

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

/// The shed-first flow: a model is offered only `shed`; the tools it returns become callable.
async fn shed_first(manager: &ToolCallManager) {
    let offered = |m: &ToolCallManager| -> Vec<String> {
        m.offered_tools()
            .iter()
            .map(|t| t.name().to_owned())
            .collect()
    };
    println!("offered: {:?}", offered(manager));
    let found = manager.shed("add two numbers", Some(1)).await;
    println!(
        "shed(\"add two numbers\") -> {:?}",
        found.tools.iter().map(|t| &t.name).collect::<Vec<_>>()
    );
    println!("offered: {:?}\n", offered(manager));
}
