use toolsmith::{tool_fn, ToolArgs};

#[derive(Default, serde::Deserialize)]
struct Point {
    x: f64,
    y: f64,
}

/// A field of an argument struct, and a defaulted parameter, need a schema too.
#[derive(ToolArgs)]
struct Segment {
    /// Where it starts.
    start: Point,
}

/// Measures a point's distance from the origin.
#[tool_fn]
fn norm(#[arg(default)] point: Point) -> f64 {
    (point.x * point.x + point.y * point.y).sqrt()
}

fn main() {}
