use toolsmith::tool_fn;

/// Optional borrowed text.
#[tool_fn]
fn maybe(text: Option<&str>) -> String {
    text.unwrap_or_default().to_owned()
}

/// Borrowed words.
#[tool_fn]
fn words(words: Vec<&'static str>) -> usize {
    words.len()
}

/// Lists numbers.
#[tool_fn]
fn list(n: u32) -> impl serde::Serialize {
    (0..n).collect::<Vec<u32>>()
}

/// Lists numbers, maybe.
#[tool_fn]
async fn maybe_list(n: u32) -> Result<Vec<u32>, Box<dyn std::error::Error>> {
    Ok((0..n).collect())
}

/// Opaque inside.
#[tool_fn]
fn wrapped(n: u32) -> Option<impl serde::Serialize> {
    Some(n)
}

fn main() {}
