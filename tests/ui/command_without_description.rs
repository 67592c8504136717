use toolsmith::tool_fn;

struct Pinger;

/// Answers pings.
#[tool_fn]
impl Pinger {
    fn ping(&self) -> String {
        "pong".to_owned()
    }
}

fn main() {}
