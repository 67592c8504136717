use toolsmith::tool_fn;

/// Sleeps on the caller's thread, past any limit.
#[tool_fn(timeout = "10ms")]
fn slow() -> String {
    std::thread::sleep(std::time::Duration::from_millis(300));
    "done".to_owned()
}

/// The same on the blocking pool, where the limit applies.
#[tool_fn(timeout = "10ms", blocking)]
fn slow_blocking() -> String {
    std::thread::sleep(std::time::Duration::from_millis(300));
    "done".to_owned()
}

fn main() {}
