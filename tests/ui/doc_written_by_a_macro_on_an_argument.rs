use toolsmith::{ToolArgs, tool_fn};

/// Searches.
#[tool_fn]
fn search(
    #[doc = concat!("What ", "to find.")]
    query: String,
) -> String {
    query
}

#[derive(ToolArgs)]
struct Filter {
    #[doc = concat!("The ", "tag.")]
    tag: String,
}

fn main() {}
