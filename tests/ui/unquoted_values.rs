use toolsmith::tool_fn;

// A value written without quotes is told to be quoted, with an example of the key's value
// (syn's own "expected string literal" said neither which key nor what to write). A
// description given but unreadable is not reported missing as well.
#[tool_fn(name = add, category = math, timeout = 10, description = 3)]
fn added(a: u8) -> u8 {
    a
}

/// Searches.
#[tool_fn(struct_name = SearchTool, crate = toolsmith)]
fn search(
    #[arg(rename = q, description = query)] query: String,
    #[arg(default = 5)] limit: u32,
) -> String {
    format!("{query} {limit}")
}

/// A group.
#[tool_fn]
impl Group {
    #[command(name = run, description = runs)]
    fn go(&self) -> u8 {
        1
    }
}

struct Group;

fn main() {}
