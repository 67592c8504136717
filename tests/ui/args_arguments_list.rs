use toolsmith::{ToolArgs, tool_fn};

/// What to look for.
#[derive(ToolArgs)]
struct Query {
    /// The text.
    text: String,
}

/// Searches the notes.
///
/// # Arguments
///
/// * `query` - the parameter itself may be described, for the function's readers.
/// * `text` - What to look for.
#[tool_fn]
fn search(#[args] query: Query) -> String {
    query.text
}

fn main() {}
