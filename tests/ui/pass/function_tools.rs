//! Function tools of every shape compile, depending only on the facade crate.
use std::collections::HashMap;

use toolsmith::{tool_fn, ToolCallResult, ToolError, ToolImpl};

/// Adds two numbers.
#[tool_fn(category = "math", read_only, idempotent)]
pub async fn add(a: f64, b: f64) -> Result<f64, ToolError> {
    Ok(a + b)
}

/// Greets.
#[tool_fn]
fn greet(name: &str, title: Option<String>) -> String {
    format!("{} {name}", title.unwrap_or_default())
}

/// Counts on a blocking thread.
#[tool_fn(blocking, timeout = "2m")]
fn count(words: Vec<String>, weights: HashMap<String, f32>) -> usize {
    words.len() + weights.len()
}

/// Does nothing.
#[tool_fn(name = "noop-tool", description = "Does nothing, overridden.")]
async fn noop() {}

/// Returns a result as is.
#[tool_fn]
async fn raw(value: serde_json::Value) -> ToolCallResult {
    ToolCallResult::json(value)
}

fn main() {
    let tools: Vec<Box<dyn ToolImpl>> = vec![
        Box::new(Add),
        Box::new(Greet),
        Box::new(Count),
        Box::new(Noop),
        Box::new(Raw),
    ];
    assert_eq!(tools.len(), 5);
}
