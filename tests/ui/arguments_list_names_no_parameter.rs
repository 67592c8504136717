use toolsmith::tool_fn;

/// Searches the notes.
///
/// # Arguments
///
/// * `query` - What to look for.
/// * `limt` - How many notes, at most.
#[tool_fn]
fn search(query: String, limit: u32) -> String {
    format!("{query} {limit}")
}

struct Notes;

/// Notes.
#[tool_fn]
impl Notes {
    /// Finds a note.
    ///
    /// # Arguments
    ///
    /// * `self` - The notes (the receiver may be described).
    /// * `id` - The note's id.
    fn find(&self, key: u64) -> u64 {
        key
    }
}

fn main() {}
