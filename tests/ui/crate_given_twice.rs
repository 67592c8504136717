use toolsmith::tool_fn;

/// Adds two numbers.
#[tool_fn(crate = "::toolsmith", crate_path = "::toolsmith")]
fn add(a: f64, b: f64) -> f64 {
    a + b
}

/// Adds two numbers.
#[tool_fn(crate_path = "not a path")]
fn add_again(a: f64, b: f64) -> f64 {
    a + b
}

fn main() {}
