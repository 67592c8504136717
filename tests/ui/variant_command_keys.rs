use toolsmith::ToolArgs;

/// `#[command]` keys a variant does not take, and hints given twice.
#[derive(ToolArgs)]
enum Playlist {
    /// An unknown key, and a misspelled one.
    #[command(shuffle, readonly)]
    Add {
        /// The song.
        title: String,
    },
    /// A name, a description and `skip`, which a variant says otherwise.
    #[command(name = "drop", description = "Drops a song.", skip)]
    Remove {
        /// Its position.
        position: usize,
    },
    /// A hint given twice, in one attribute and across two.
    #[command(destructive, destructive = false)]
    #[command(read_only)]
    #[command(read_only)]
    Clear,
    /// A hint that is not a `bool`.
    #[command(idempotent = "yes")]
    Shuffle,
}

/// `#[command]` on the type, on a field, and on a variant left out.
#[derive(ToolArgs)]
#[command(read_only)]
enum Queue {
    /// Adds a song.
    Add {
        /// The song.
        #[command(read_only)]
        title: String,
    },
    /// Left out.
    #[serde(skip)]
    #[command(destructive)]
    Reset,
}

/// `#[command]` on a struct.
#[derive(ToolArgs)]
#[command(destructive)]
struct Search {
    /// What to look for.
    query: String,
}

fn main() {}
