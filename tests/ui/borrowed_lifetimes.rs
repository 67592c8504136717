use toolsmith::tool_fn;

/// A parameter borrowed for longer than the call.
#[tool_fn]
fn forever(s: &'static str) -> usize {
    s.len()
}

/// An async tool returning a borrow of its argument.
#[tool_fn]
async fn echo(s: &str) -> &str {
    s
}

/// The same inside a result.
#[tool_fn]
async fn first_word(s: &str) -> Result<Option<&str>, String> {
    Ok(s.split(' ').next())
}

/// A borrow by a lifetime argument.
#[tool_fn]
async fn trimmed(s: &str) -> std::borrow::Cow<'_, str> {
    std::borrow::Cow::Borrowed(s.trim())
}

/// The same, run on the blocking pool.
#[tool_fn(blocking)]
fn trimmed_blocking(s: &str) -> Vec<std::borrow::Cow<'_, str>> {
    vec![std::borrow::Cow::Borrowed(s.trim())]
}

fn main() {}
