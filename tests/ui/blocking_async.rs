use toolsmith::tool_fn;

/// Waits.
#[tool_fn(blocking)]
async fn wait(ms: u64) -> u64 {
    ms
}

fn main() {}
