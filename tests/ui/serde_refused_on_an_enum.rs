use toolsmith::ToolArgs;

#[derive(ToolArgs)]
#[serde(tag = "kind", content = "arguments", default)]
enum Tagged {
    /// Add.
    Add { text: String },
}

#[derive(ToolArgs)]
#[serde(untagged)]
enum Untagged {
    /// Remove.
    #[serde(alias = "delete")]
    Remove { id: u64 },
    /// Anything else.
    #[serde(other)]
    Unknown,
    /// Either.
    #[serde(untagged)]
    Either { id: u64 },
}

fn main() {}
