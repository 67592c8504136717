use toolsmith::{tool_fn, ToolConstructor};

/// Cuts a text.
#[tool_fn]
fn cut(#[bind] max: usize, text: String) -> String {
    text[..text.len().min(max)].to_owned()
}

fn main() {
    // Only `Cut::new(max)` builds the tool: the session has no value for `max`.
    let _constructor: Box<dyn ToolConstructor> = Cut.into();
}
