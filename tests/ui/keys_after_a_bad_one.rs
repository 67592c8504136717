use toolsmith::tool_fn;

// The unknown key does not hide the keys after it: the description is read (no "no
// description" error) and the bad name is reported.
#[tool_fn(colour = "red", description = "Has one.", name = "bad.name")]
fn painted(a: u8) -> u8 {
    a
}

/// A bad timeout does not hide the keys after it either.
#[tool_fn(timeout = "5x", retries = "three")]
fn timed(a: u8) -> u8 {
    a
}

/// The rename after an unknown key is read, so the duplicate it makes is reported.
#[tool_fn]
fn renamed(#[arg(foo, rename = "y")] x: u8, y: u8) -> u8 {
    x + y
}

fn main() {}
