use toolsmith::{tool_fn, ToolImpl};

struct Notes;

/// Notes.
#[tool_fn]
impl Notes {
    /// Lists the notes.
    #[tool_fn(name = "list_notes", read_only)]
    fn list(&self) -> Vec<String> {
        Vec::new()
    }

    /// Counts words, a tool of its own.
    #[toolsmith::tool_fn]
    fn count_words(text: &str) -> usize {
        text.split_whitespace().count()
    }
}

fn main() {
    let _ = Notes.definition();
    let _ = Notes.list();
}
