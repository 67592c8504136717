use std::sync::Arc;
use toolsmith::tool_fn;

/// A parameter compiled out in some builds.
#[tool_fn]
fn sometimes(#[cfg(any())] hidden: u8, shown: u8) -> u8 {
    shown
}

/// `#[arg]` on a parameter the model does not send.
#[tool_fn]
fn bound(#[bind] #[arg(rename = "zzz")] greeting: Arc<String>, name: String) -> String {
    format!("{greeting}, {name}")
}

struct Tools;

/// Commands.
#[tool_fn]
impl Tools {
    /// Shown.
    fn shown(&self) -> u8 {
        1
    }

    /// Compiled out in some builds.
    #[cfg(any())]
    fn hidden(&self) -> u8 {
        2
    }
}

fn main() {}
