use toolsmith::tool_fn;

/// Counts the words of a text.
#[tool_fn(readonly, categroy = "text")]
fn count_words(text: String) -> usize {
    text.split_whitespace().count()
}

struct Notes;

/// Notes.
#[tool_fn]
impl Notes {
    /// Forget every note.
    #[command(Destructive)]
    fn clear(&self) -> String {
        String::new()
    }
}

fn main() {}
