use schemars::JsonSchema;
use serde::Deserialize;
use toolsmith::{ToolArgs, tool_fn};

/// Deserialized, with a schema, but not `ToolArgs`.
#[derive(Deserialize, JsonSchema)]
struct Query {
    /// The text.
    text: String,
}

/// Searches the notes.
#[tool_fn]
fn search(#[args] query: Query) -> String {
    query.text
}

/// Commands, not one object of arguments: a function's whole arguments, not a command's.
#[derive(ToolArgs)]
enum Playlist {
    /// Add a song.
    Add {
        /// The song.
        title: String,
    },
    /// Empty the playlist.
    Clear,
}

#[derive(Default)]
struct Radio;

/// A radio: a group, whose command takes one object of arguments, not commands.
#[tool_fn]
impl Radio {
    /// Plays songs.
    fn play(&self, #[args] command: Playlist) -> String {
        match command {
            Playlist::Add { title } => title,
            Playlist::Clear => String::new(),
        }
    }
}

fn main() {}
