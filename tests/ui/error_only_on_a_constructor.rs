//! A `#[tool_fn]` error on a tool with `#[ctx]` or `#[bind]` parameters is the only error:
//! its constructor's uses still type-check (here from another module, through a glob import).
use std::sync::Arc;

use toolsmith::{SessionParts, ToolConstructor, ToolImpl, ToolShed};

mod tools {
    use std::sync::Arc;

    use toolsmith::{tool_fn, SessionParts};

    /// Remembers a fact.
    #[tool_fn(read_only = "yes")]
    pub async fn remember(#[ctx] parts: SessionParts, fact: String) -> String {
        let _ = parts;
        fact
    }

    pub struct Greeting(pub String);

    /// Greets someone.
    #[tool_fn(retries = -1)]
    pub async fn greet(#[bind] greeting: Arc<Greeting>, name: String) -> String {
        format!("{}, {name}!", greeting.0)
    }
}

use tools::*;

fn build(parts: SessionParts) {
    let tool = Remember::new(parts);
    let _ = tool.clone().definition();
}

fn main() {
    let constructor: Box<dyn ToolConstructor> = Remember.into();
    let _ = constructor.name();
    let _ = Remember.definition();
    let _ = ToolShed::new().tool(Remember);

    let greeter = Greet::new(Arc::new(Greeting("Hello".into())));
    let _ = greeter.definition();
    let _ = Greet.definition();
}
