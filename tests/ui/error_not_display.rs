use toolsmith::tool_fn;

#[derive(Debug)]
struct Oops;

/// May fail.
#[tool_fn]
async fn risky(n: u32) -> Result<u32, Oops> {
    if n > 3 { Err(Oops) } else { Ok(n) }
}

fn main() {}
