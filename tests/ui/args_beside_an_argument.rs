use toolsmith::{ToolArgs, tool_fn};

/// What to look for.
#[derive(ToolArgs)]
struct Query {
    /// The text.
    text: String,
}

/// Searches the notes.
#[tool_fn]
fn search(#[args] query: Query, limit: u32, tag: Option<String>) -> String {
    format!("{} {limit} {tag:?}", query.text)
}

struct Notes;

/// The notes.
#[tool_fn]
impl Notes {
    /// Finds a note.
    fn find(&self, id: u64, #[args] query: Query) -> String {
        format!("{id} {}", query.text)
    }
}

fn main() {}
