//! Derived argument structs and command enums.
use toolsmith::{ArgsSchema, ToolArgs, ToolCommands};

fn default_limit() -> u32 {
    10
}

#[derive(ToolArgs)]
pub struct Search {
    /// The query.
    pub query: String,
    #[arg(default = "default_limit")]
    pub limit: u32,
    #[arg(rename = "type", default)]
    pub kind: String,
}

#[derive(ToolArgs)]
pub enum Shape {
    /// A circle.
    Circle { radius: f64 },
    /// A rectangle.
    #[arg(rename = "rect")]
    Rectangle { width: f64, height: f64 },
    /// Nothing.
    Empty,
}

#[derive(ToolArgs)]
pub struct NoArguments;

fn main() {
    let _ = Search::args_schema();
    let _ = NoArguments::args_schema();
    assert_eq!(Shape::command_definitions().len(), 3);
}
