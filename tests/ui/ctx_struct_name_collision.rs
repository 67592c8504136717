use toolsmith::tool_fn;
use toolsmith::SessionParts;

/// The user's own type, named as the tool's constructor struct would be.
struct Remember {
    limit: u32,
}

/// Remembers a fact.
#[tool_fn]
async fn remember(#[ctx] parts: SessionParts, fact: String) -> String {
    let _ = parts;
    fact
}

fn main() {
    let _ = Remember { limit: 1 }.limit;
}
