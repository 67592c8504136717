use toolsmith::tool_fn;

/// Echoes a value.
#[tool_fn]
fn echo<T: serde::de::DeserializeOwned>(value: T) -> String {
    let _ = value;
    String::new()
}

fn main() {}
