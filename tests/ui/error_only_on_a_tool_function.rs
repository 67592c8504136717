//! A `#[tool_fn]` error is the only error: the tool's uses elsewhere still type-check (here
//! from another module, through a glob import, where rustc reports a name it cannot find).
use std::sync::Arc;

use toolsmith::{ToolCallManager, ToolImpl, ToolShed};

mod api {
    pub use toolsmith as tools;
}

mod tools {
    use toolsmith::tool_fn;

    /// Adds two numbers.
    #[tool_fn(categroy = "math")]
    pub async fn add_numbers(a: f64, b: f64) -> f64 {
        a + b
    }

    /// Doubles a number.
    #[tool_fn(struct_name = "Doubler", timeout = "soon", blocking)]
    pub fn double(x: u32) -> u32 {
        x * 2
    }

    /// Echoes its text, through a renamed crate.
    #[tool_fn(crate = "crate::api::tools", name = "bad name")]
    pub fn echo(text: String) -> String {
        text
    }

    /// The user's own type, named as the tool's struct would be.
    pub struct Constrained {
        pub limit: u32,
    }

    #[tool_fn]
    pub fn constrained(value: u32) -> bool {
        value < 10
    }
}

use tools::*;

fn main() {
    let manager = ToolCallManager::new("session");
    manager.register(Arc::new(AddNumbers)).unwrap();
    let _ = AddNumbers.definition().name().to_owned();
    let _ = Doubler.timeout();
    let _ = format!("{:?}", Doubler);
    let _ = Echo.definition();
    let _ = ToolShed::new().tool(AddNumbers).tool(Echo);
    let _ = Constrained { limit: 1 }.limit;
    let _ = add_numbers(1.0, 2.0);
    let _ = double(2) + u32::from(constrained(1));
}
