//! A `#[ctx]` or `#[bind]` parameter the macro refuses (both markers, a pattern, a `#[cfg]`)
//! still takes its place in the stand-in's `new`: the correct calls below get no error of
//! their own, only the macro's errors are reported.
use toolsmith::{tool_fn, SessionParts, ToolImpl, ToolShed};

pub struct Limit(pub usize);

/// Both markers on the tool's only value.
#[tool_fn]
fn both(#[ctx] #[bind] limit: Limit, text: String) -> String {
    let _ = limit;
    text
}

/// A pattern, before a value that is read.
#[tool_fn]
fn pair(#[bind] (low, high): (u32, u32), #[ctx] parts: SessionParts, text: String) -> String {
    let _ = (low, high, parts);
    text
}

/// A value compiled out in this build, and one kept.
#[tool_fn]
fn sometimes(#[cfg(any())] #[bind] hidden: u8, #[bind] shown: Limit, text: String) -> String {
    let _ = shown;
    text
}

fn build(parts: SessionParts) {
    let _ = Both::new(Limit(3)).definition();
    // Whether `both` is `#[ctx]` (a session constructor) or `#[bind]` is the macro's error:
    // the stand-in lets both uses through.
    let _ = ToolShed::new().tool(Both);
    let _ = Pair::new((1, 2), parts).definition();
    let _ = Sometimes::new(Limit(1)).definition();
}

fn main() {}
