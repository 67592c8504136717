use toolsmith::tool_fn;

/// Searches the notes.
///
/// # Arguments
///
/// * `query` - What to find.
#[doc = concat!("Returns ", "the notes found.")]
#[tool_fn]
fn search(query: String) -> String {
    query
}

struct Notes;

#[tool_fn(name = "notes")]
impl Notes {
    #[doc = concat!("Finds ", "notes.")]
    ///
    /// ## Arguments
    /// * `query` - What to find.
    fn find(&self, query: String) -> String {
        query
    }
}

fn main() {}
