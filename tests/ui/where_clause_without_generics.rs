use toolsmith::tool_fn;

/// Doubles a number.
#[tool_fn]
fn double(x: u32) -> u32
where
    u32: Copy,
{
    x * 2
}

struct Counter;

/// Counts.
#[tool_fn]
impl Counter
where
    Counter: Sized,
{
    /// Adds one.
    fn next(&self, x: u32) -> u32
    where
        u32: Copy,
    {
        x + 1
    }
}

fn main() {}
