use toolsmith::ToolArgs;

#[derive(ToolArgs)]
enum Notes {
    #[doc = concat!("Adds ", "a note.")]
    Add { text: String },
    /// Clears the notes.
    Clear,
}

fn main() {}
