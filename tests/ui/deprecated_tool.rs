// A deprecated tool function or command compiles without a warning of its own (the
// generated code calls it), and its generated struct is deprecated as the function is: the
// one error here is the use in `main`.
#![deny(deprecated)]

use toolsmith::{tool_fn, ToolImpl};

/// Searches the notes.
#[deprecated(note = "use `search` instead")]
#[tool_fn]
fn old_search(query: String) -> String {
    query
}

struct Notes;

/// The notes.
#[tool_fn]
impl Notes {
    /// Finds a note.
    #[deprecated(note = "use `find` instead")]
    fn old_find(&self, query: String) -> String {
        query
    }

    /// Finds a note, later.
    #[deprecated]
    async fn old_find_later(&self, query: String) -> String {
        query
    }
}

fn main() {
    let _ = Notes.definition();
    let _ = OldSearch.definition();
}
