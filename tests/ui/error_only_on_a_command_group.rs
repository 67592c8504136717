//! A `#[tool_fn]` error on a command group is the only error: the group's uses still
//! type-check.
use std::sync::Arc;

use toolsmith::{tool_fn, ToolCallManager, ToolImpl};

#[derive(Default)]
struct Pinger;

/// Answers pings.
#[tool_fn]
impl Pinger {
    fn ping(&self) -> String {
        "pong".to_owned()
    }
}

fn main() {
    let manager = ToolCallManager::new("session");
    manager.register(Arc::new(Pinger)).unwrap();
    let _ = Pinger::default().definition();
    let _ = Pinger.ping();
}
