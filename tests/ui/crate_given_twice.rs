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

/// A derived type naming the crate twice, in two attributes.
#[derive(toolsmith::ToolArgs)]
#[toolsmith(crate = "::toolsmith")]
#[toolsmith(crate_path = "::toolsmith")]
struct Echo {
    /// The text.
    text: String,
}

fn main() {}
