use toolsmith::tool_fn;

/// Reads the state.
#[tool_fn]
fn state(&self) -> String {
    String::new()
}

fn main() {}
