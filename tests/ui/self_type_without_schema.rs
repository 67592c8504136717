use toolsmith::tool_fn;

struct Pair(u32, u32);

/// Pairs.
#[tool_fn]
impl Pair {
    /// The first.
    fn first(&self) -> u32 {
        self.0
    }

    /// Whether another pair is this one: `Self` is no argument type (no schema).
    fn same(&self, other: Self) -> bool {
        self.0 == other.0 && self.1 == other.1
    }
}

fn main() {}
