use toolsmith::ToolArgs;

#[derive(ToolArgs)]
enum Command {
    Add { text: String },
    /// Forget everything.
    #[arg(rename = "wipe all")]
    Clear,
}

fn main() {}
