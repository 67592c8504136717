use toolsmith::{tool_fn, ToolArgs};

/// `#[command]` on a parameter.
#[tool_fn]
fn double(#[command(name = "twice")] x: u32) -> u32 {
    x * 2
}

struct Counter;

/// A counter.
#[tool_fn]
impl Counter {
    /// `#[arg]` on a method.
    #[arg(rename = "current")]
    fn get(&self) -> u32 {
        1
    }

    /// A hint on a method that is no command.
    #[command(read_only)]
    fn helper() -> u32 {
        2
    }

    /// A name for a method left out.
    #[command(skip, name = "reset")]
    fn clear(&self) {}
}

/// `#[arg]` on the type, `#[toolsmith]` on a field.
#[derive(ToolArgs)]
#[arg(rename = "search")]
struct Search {
    /// What to look for.
    #[toolsmith(crate = "::toolsmith")]
    query: String,
}

/// `#[toolsmith]` on a variant.
#[derive(ToolArgs)]
enum Commands {
    /// Clears.
    #[toolsmith(crate = "::toolsmith")]
    Clear,
}

fn main() {}
