use toolsmith::{tool_fn, SessionParts};

struct Notes;

/// Notes.
#[tool_fn]
impl Notes {
    /// Read the notes.
    fn read(&self, #[ctx] parts: SessionParts) -> String {
        parts.session_id
    }
}

fn main() {}
