//! A glob import bringing a name the tool's struct also has: the success path's struct
//! shadows it (an item wins over a glob). The stand-in's value does too (its uses type-check);
//! its type, glob-imported so that a type of the module's own wins silently, cannot: a use of
//! the name as a type is ambiguous (E0659), the limit the macros' `stand_in` documents.
mod shapes {
    /// Other items named as the tools' structs are.
    pub struct Echo;
    pub struct Remember;
}

mod tools {
    use toolsmith::{tool_fn, SessionParts, ToolConstructor, ToolImpl};

    use crate::shapes::*;

    /// Echoes.
    #[tool_fn(timeout = "soon")]
    pub fn echo(text: String) -> String {
        text
    }

    /// Remembers a fact.
    #[tool_fn(retries = -1)]
    pub fn remember(#[ctx] parts: SessionParts, fact: String) -> String {
        let _ = parts;
        fact
    }

    pub fn uses(parts: SessionParts) {
        let _ = Echo.definition();
        let _ = Remember.definition();
        let _ = Box::<dyn ToolConstructor>::from(Remember);
        // The limit: the name as a type.
        let _: Option<Remember> = None;
        let _ = parts;
    }
}

mod elsewhere {
    use toolsmith::ToolImpl;

    use crate::tools::*;

    pub fn uses() {
        let _ = Echo.definition();
    }
}

fn main() {
    elsewhere::uses();
}
