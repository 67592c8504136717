use toolsmith::tool_fn;

/// Reads, and says twice that it does.
#[tool_fn(read_only, read_only = false, destructive)]
fn twice() {}

/// A group.
struct Group;

#[tool_fn]
impl Group {
    /// One command, its hint given twice.
    #[command(idempotent, idempotent)]
    fn one(&self) {}
}

fn main() {}
