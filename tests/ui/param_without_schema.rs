use toolsmith::tool_fn;

#[derive(serde::Deserialize)]
struct Point {
    x: f64,
    y: f64,
}

/// Measures a point's distance from the origin.
#[tool_fn]
fn norm(point: Point) -> f64 {
    (point.x * point.x + point.y * point.y).sqrt()
}

fn main() {}
