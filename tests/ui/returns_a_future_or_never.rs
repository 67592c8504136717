use std::future::Future;
use toolsmith::tool_fn;

/// Doubles a number, later.
#[tool_fn]
fn double_later(x: u32) -> impl Future<Output = u32> {
    async move { x * 2 }
}

/// Doubles a number, in a box.
#[tool_fn]
fn double_boxed(x: u32) -> std::pin::Pin<Box<dyn Future<Output = u32> + Send>> {
    Box::pin(async move { x * 2 })
}

/// Never answers.
#[tool_fn]
fn forever(x: u32) -> ! {
    loop {
        let _ = x;
    }
}

fn main() {}
