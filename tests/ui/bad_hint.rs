use toolsmith::tool_fn;

/// Reads.
#[tool_fn(read_only = "yes")]
fn read(path: String) -> String {
    path
}

fn main() {}
