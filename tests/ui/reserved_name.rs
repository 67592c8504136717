use toolsmith::tool_fn;

/// Looks up tools.
#[tool_fn]
fn shed(query: String) -> String {
    query
}

fn main() {}
