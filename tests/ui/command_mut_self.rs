use toolsmith::tool_fn;

struct Counter(u32);

/// A counter.
#[tool_fn]
impl Counter {
    /// Count one more.
    fn bump(&mut self) -> u32 {
        self.0 += 1;
        self.0
    }
}

fn main() {}
