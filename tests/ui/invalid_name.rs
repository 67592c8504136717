use toolsmith::tool_fn;

/// Reads a file.
#[tool_fn(name = "read file")]
fn read(path: String) -> String {
    path
}

fn main() {}
