use toolsmith::tool_fn;

/// Adds two numbers.
#[tool_fn(categroy = "math")]
fn add(a: f64, b: f64) -> f64 {
    a + b
}

fn main() {}
