use toolsmith::tool_fn;

/// Adds two numbers.
#[tool_fn(name = "add_numbers")]
#[tool_fn(description = "Adds two numbers.")]
fn add(a: f64, b: f64) -> f64 {
    a + b
}

/// Commands on a counter.
struct Counter;

#[tool_fn(name = "counter")]
#[tool_fn(category = "math")]
impl Counter {
    /// Reads the counter.
    pub async fn read(&self) -> u64 {
        0
    }
}

fn main() {}
