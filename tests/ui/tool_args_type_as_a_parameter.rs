use toolsmith::{ToolArgs, tool_fn};

/// A search's arguments, read as a tool's whole arguments.
#[derive(ToolArgs)]
struct Search {
    /// What to look for.
    query: String,
}

/// Looks something up.
#[tool_fn]
fn look_up(search: Search) -> String {
    search.query
}

fn main() {}
