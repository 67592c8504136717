use toolsmith::tool_fn;

/// Both at once.
#[tool_fn]
fn both(#[ctx] #[bind] limit: usize, text: String) -> String {
    let _ = limit;
    text
}

struct Group;

/// A group.
#[tool_fn]
impl Group {
    /// A command.
    fn run(&self, #[bind] limit: usize) -> usize {
        limit
    }
}

fn main() {}
