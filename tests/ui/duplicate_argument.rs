use toolsmith::tool_fn;

/// Copies a file.
#[tool_fn]
fn copy(#[arg(rename = "path")] from: String, path: String) -> String {
    format!("{from} {path}")
}

fn main() {}
