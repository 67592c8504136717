use toolsmith::tool_fn;

/// Its struct would be `Self`.
#[tool_fn]
fn self_(text: String) -> String {
    text
}

/// Its struct would have no name.
#[tool_fn]
fn __() -> u32 {
    1
}

/// Named: fine.
#[tool_fn(struct_name = "Underscores")]
fn ___() -> u32 {
    1
}

fn main() {}
