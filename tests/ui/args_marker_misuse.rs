use toolsmith::{ToolArgs, tool_fn};

/// What to look for.
#[derive(ToolArgs)]
struct Query {
    /// The text.
    text: String,
}

/// From the session and the arguments at once.
#[tool_fn]
fn both(#[ctx] #[args] query: Query) -> String {
    query.text
}

/// Given to `new` and read from the arguments at once.
#[tool_fn]
fn bound(#[args] #[bind] query: Query) -> String {
    query.text
}

/// With a key.
#[tool_fn]
fn keyed(#[args(all)] query: Query) -> String {
    query.text
}

/// Renamed, which the type's fields are.
#[tool_fn]
fn renamed(#[args] #[arg(rename = "q")] query: Query) -> String {
    query.text
}

/// Borrowed.
#[tool_fn]
fn borrowed(#[args] query: &Query) -> String {
    query.text.clone()
}

/// A field marked as the whole arguments.
#[derive(ToolArgs)]
struct Marked {
    /// The text.
    #[args]
    text: String,
}

fn main() {}
