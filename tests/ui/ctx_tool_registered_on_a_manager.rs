use std::sync::Arc;
use toolsmith::{State, ToolCallManager, tool_fn};

#[derive(Clone)]
struct Settings {
    precision: usize,
}

/// Shows the precision.
#[tool_fn]
async fn show_precision(#[ctx] settings: State<Settings>) -> String {
    settings.precision.to_string()
}

fn main() {
    let manager = ToolCallManager::new("session");
    // A `#[ctx]` tool is built from a session: it is no tool until then.
    manager.register(Arc::new(ShowPrecision)).unwrap();
}
