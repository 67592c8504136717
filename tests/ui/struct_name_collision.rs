use toolsmith::tool_fn;

/// The user's own type, named as the tool's struct would be.
struct Constrained {
    limit: u32,
}

/// Checks that a value stays under a limit.
#[tool_fn]
fn constrained(value: u32) -> bool {
    value < 10
}

fn main() {
    let _ = Constrained { limit: 1 }.limit;
}
