use toolsmith::tool_fn;

/// Adds a pair.
#[tool_fn]
fn add((a, b): (i32, i32)) -> i32 {
    a + b
}

fn main() {}
