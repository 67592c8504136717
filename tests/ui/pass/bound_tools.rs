//! Tools built from values with the generated `new`: `#[bind]` values, `#[ctx]` values.
use std::sync::Arc;

use toolsmith::{tool_fn, MemoryAccess, ToolConstructor, ToolImpl};

#[derive(Clone)]
struct Limits {
    max: usize,
}

/// Cuts a text to the limit.
#[tool_fn(category = "text")]
fn cut(#[bind] limits: Limits, #[bind] prefix: Arc<str>, text: String) -> String {
    format!("{prefix}{}", &text[..text.len().min(limits.max)])
}

/// Counts the facts.
#[tool_fn]
async fn facts(#[ctx] memory: Arc<dyn MemoryAccess>) -> usize {
    let _ = memory;
    0
}

fn ready(tool: impl ToolImpl + Clone + 'static) -> Box<dyn ToolConstructor> {
    tool.clone().into()
}

fn main() {
    let cut = ready(Cut::new(Limits { max: 3 }, Arc::from(">")));
    assert!(!cut.needs_session());
    // A `#[ctx]` tool is still a session constructor, and can be built from a value too.
    let from_session: Box<dyn ToolConstructor> = Facts.into();
    assert!(from_session.needs_session());
    let _ = |memory: Arc<dyn MemoryAccess>| ready(Facts::new(memory));
}
