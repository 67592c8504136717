use toolsmith::ToolArgs;

#[derive(ToolArgs)]
enum Command {
    /// Add a fact.
    Add(String),
    /// Forget everything.
    Clear,
}

fn main() {}
