use toolsmith::{ToolArgs, tool_fn};

/// What to look for.
#[derive(ToolArgs)]
struct Query {
    /// The text.
    text: String,
}

/// Where to look.
#[derive(ToolArgs)]
struct Place {
    /// The folder.
    folder: String,
}

/// Searches a folder.
#[tool_fn]
fn search(#[args] query: Query, #[args] place: Place) -> String {
    format!("{} {}", query.text, place.folder)
}

struct Notes;

/// The notes.
#[tool_fn]
impl Notes {
    /// Finds a note.
    fn find(&self, #[args] query: Query, #[args] place: Place) -> String {
        format!("{} {}", query.text, place.folder)
    }
}

fn main() {}
