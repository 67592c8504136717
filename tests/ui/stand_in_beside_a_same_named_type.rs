//! A type of the module's own named as the tool's struct, a clash the success path reports
//! (E0428): a struct with fields silently wins over the stand-in's glob-imported type, and the
//! stand-in's value is the tool's. A unit struct, also a value, clashes with the stand-in's
//! value once, at the function: the limit the macros' `stand_in` documents.
use toolsmith::{tool_fn, ToolImpl};

/// The user's own type, named as the tool's struct would be.
struct Constrained {
    limit: u32,
}

/// Checks that a value stays under a limit.
#[tool_fn(timeout = "soon")]
fn constrained(value: u32) -> bool {
    value < 10
}

mod unit {
    use toolsmith::tool_fn;

    /// The user's own unit struct, named as the tool's struct would be.
    pub struct Checked;

    /// Checks a value.
    #[tool_fn(retries = -1)]
    pub fn checked(value: u32) -> bool {
        value < 10
    }
}

fn main() {
    let _ = unit::Checked;
    let _ = Constrained { limit: 1 }.limit;
    let _ = Constrained.definition();
}
