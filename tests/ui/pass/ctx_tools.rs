//! Tools that take values from the session.
use std::sync::Arc;

use toolsmith::{tool_fn, ContextSearch, Embedder, SessionParts, State, ToolConstructor};

struct Config {
    greeting: String,
}

/// Searches with the session's context.
#[tool_fn]
async fn recall(
    #[ctx] context: Arc<dyn ContextSearch>,
    #[ctx] embedder: Option<Arc<dyn Embedder>>,
    #[ctx] config: State<Config>,
    #[ctx] parts: SessionParts,
    query: String,
) -> String {
    let _ = (context, embedder, parts);
    format!("{} {query}", config.greeting)
}

fn main() {
    let constructors: Vec<Box<dyn ToolConstructor>> = vec![Recall.into()];
    assert_eq!(constructors[0].name(), "recall");
}
