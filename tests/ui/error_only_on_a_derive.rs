//! A `#[derive(ToolArgs)]` error is the only error: the type's uses as arguments still
//! type-check.
use toolsmith::{ArgsSchema, ToolArgs, ToolArguments, ToolCommands};

mod api {
    pub use toolsmith as tools;
}

#[derive(ToolArgs)]
struct Search {
    /// What to look for.
    #[arg(optional)]
    query: String,
}

#[derive(ToolArgs)]
#[toolsmith(crate = "crate::api::tools")]
enum MemoryCommand {
    /// Remember a fact.
    Add { text: String },
    Clear,
}

#[derive(ToolArgs)]
struct Page<T> {
    /// The items.
    items: Vec<T>,
}

fn main() {
    let arguments = ToolArguments::default();
    let _: Search = ToolArgs::new("search", &arguments).parse().unwrap();
    let _ = Search::args_schema();
    let _ = MemoryCommand::command_definitions();
    let _: MemoryCommand = ToolArgs::new("memory", &arguments).parse().unwrap();
    let _ = Page::<u32>::args_schema();
}
