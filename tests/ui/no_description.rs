use toolsmith::tool_fn;

#[tool_fn]
async fn add(a: f64, b: f64) -> f64 {
    a + b
}

fn main() {}
