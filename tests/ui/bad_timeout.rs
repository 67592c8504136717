use toolsmith::tool_fn;

/// Waits.
#[tool_fn(timeout = "10 seconds")]
async fn wait(ms: u64) -> u64 {
    ms
}

fn main() {}
