//! The macros: a function tool, a command group, a derived argument type and a `#[ctx]`
//! parameter, with the schemas they produce, then a few calls through a manager.
//!
//! Run with `cargo run --example macros`.

use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;
use toolsmith::{
    ArgsSchema, ContextHit, ContextSearch, MemoryAccess, MemoryFact, ServiceError, SessionParts,
    SessionState, Tool, ToolArgs, ToolArguments, ToolCallManager, ToolCallRequest, ToolConstructor,
    ToolError, ToolImpl, tool_fn,
};

// ---- A function tool ----

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
enum Unit {
    Celsius,
    Fahrenheit,
}

#[derive(Serialize, JsonSchema)]
struct Conversion {
    /// The converted temperature.
    value: f64,
    /// Its unit's symbol.
    symbol: &'static str,
}

/// Converts a temperature to another unit.
///
/// # Arguments
///
/// * `value` - The temperature to convert.
/// * `to` - The unit to convert to.
#[tool_fn(category = "math", read_only, idempotent)]
async fn convert_temperature(value: f64, to: Unit) -> Result<Conversion, ToolError> {
    Ok(match to {
        Unit::Celsius => Conversion {
            value: (value - 32.0) * 5.0 / 9.0,
            symbol: "°C",
        },
        Unit::Fahrenheit => Conversion {
            value: value * 9.0 / 5.0 + 32.0,
            symbol: "°F",
        },
    })
}

// ---- A command group ----

#[derive(Default)]
struct Todo {
    items: Mutex<Vec<String>>,
}

/// A to-do list.
#[tool_fn(name = "todo", category = "productivity")]
impl Todo {
    /// Add an item to the list.
    async fn add(
        &self,
        /** What to do. */
        item: String,
    ) -> String {
        let mut items = self.items.lock().unwrap();
        items.push(item);
        format!("item #{} added", items.len() - 1)
    }

    /// Mark an item done, removing it.
    #[command(destructive)]
    fn done(
        &self,
        /** The item's number. */
        index: usize,
    ) -> Result<String, String> {
        let mut items = self.items.lock().unwrap();
        if index < items.len() {
            Ok(format!("done: {}", items.remove(index)))
        } else {
            Err(format!("there is no item #{index}"))
        }
    }

    /// List the items.
    #[command(read_only)]
    fn list(&self) -> Vec<String> {
        self.items.lock().unwrap().clone()
    }
}

// ---- A derived argument type ----

/// The arguments of a hand-written search tool.
#[derive(toolsmith::ToolArgs)]
struct SearchArgs {
    /// What to look for.
    query: String,
    /// At most this many hits.
    #[arg(default)]
    limit: u32,
}

// ---- A `#[ctx]` parameter ----

/// Searches the session's documents.
#[tool_fn(category = "search")]
async fn recall(
    #[ctx] context: Arc<dyn ContextSearch>,
    /// What to look for.
    query: String,
    /// How many hits (default 3).
    limit: Option<usize>,
) -> Result<Vec<ContextHit>, ServiceError> {
    context.search(&query, limit.unwrap_or(3)).await
}

/// A stand-in for a session's document store.
struct Library;

#[async_trait]
impl ContextSearch for Library {
    async fn search(&self, query: &str, limit: usize) -> Result<Vec<ContextHit>, ServiceError> {
        Ok((0..limit.min(2))
            .map(|i| ContextHit {
                source: format!("book-{i}"),
                text: format!("a page about {query}"),
                score: 0.9 - i as f32 * 0.1,
            })
            .collect())
    }
}

/// A stand-in for a session's memory.
struct NoMemory;

#[async_trait]
impl MemoryAccess for NoMemory {
    async fn facts(&self) -> Result<Vec<MemoryFact>, ServiceError> {
        Ok(Vec::new())
    }
    async fn add(&self, _text: String) -> Result<MemoryFact, ServiceError> {
        Err(ServiceError::new("memory", "read-only"))
    }
    async fn remove(&self, _id: u64) -> Result<bool, ServiceError> {
        Ok(false)
    }
    async fn replace(&self, _id: u64, _text: String) -> Result<bool, ServiceError> {
        Ok(false)
    }
    fn version(&self) -> u64 {
        0
    }
}

fn print_tool(tool: &Tool) {
    for command in tool.commands() {
        let title = match tool {
            Tool::SingleCommand(_) => command.name.clone(),
            Tool::MultiCommands(group, _) => format!("{group} {}", command.name),
        };
        println!("## {title} ({}): {}", command.category, command.description);
        println!(
            "arguments: {}",
            serde_json::to_string_pretty(command.arguments.schema()).unwrap()
        );
        if let Some(returns) = &command.returns {
            println!("returns: {}", returns.schema());
        }
        if !command.annotations.is_empty() {
            println!(
                "annotations: {}",
                serde_json::to_string(&command.annotations).unwrap()
            );
        }
        println!();
    }
}

#[tokio::main]
async fn main() {
    // What a session gives its constructors (the ToolShed does this when it builds a session).
    let parts = SessionParts {
        session_id: "example".into(),
        context: Arc::new(Library),
        memory: Arc::new(NoMemory),
        embedder: None,
        state: SessionState::new(),
    };
    let recall: Box<dyn ToolConstructor> = Recall.into();
    let tools: Vec<Arc<dyn ToolImpl>> = vec![
        Arc::new(ConvertTemperature),
        Arc::new(Todo::default()),
        recall.construct(&parts),
    ];

    let manager = ToolCallManager::new("example");
    for tool in tools {
        print_tool(&tool.definition());
        manager.register(tool).expect("a valid tool");
    }
    println!(
        "## SearchArgs (derived)\n{}\n",
        serde_json::to_string_pretty(SearchArgs::args_schema().schema()).unwrap()
    );
    let arguments = ToolArguments::try_from(json!({"query": "tides", "limit": "5"})).unwrap();
    let search: SearchArgs = ToolArgs::new("search", &arguments).parse().unwrap();
    println!("parsed: query {:?}, limit {}\n", search.query, search.limit);

    let calls = [
        (
            "convert_temperature",
            json!({"value": 100, "to": "fahrenheit"}),
        ),
        (
            "convert_temperature",
            json!({"value": "212", "to": "celsius"}),
        ),
        ("convert_temperature", json!({"value": 1, "to": "kelvin"})),
        (
            "todo",
            json!({"command": "add", "item": "water the plants"}),
        ),
        ("todo", json!({"command": "list"})),
        ("todo", json!({"command": "done", "index": 4})),
        ("todo", json!({"command": "archive"})),
        ("recall", json!({"query": "the moon"})),
    ];
    for (i, (tool, arguments)) in calls.into_iter().enumerate() {
        let request = ToolCallRequest::new(
            format!("call-{i}"),
            tool,
            ToolArguments::try_from(arguments).expect("an object"),
        );
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
