use toolsmith::ToolArgs;

#[derive(ToolArgs)]
struct Search {
    /// The query.
    #[arg(rename = "q", optional)]
    query: String,
}

fn main() {}
