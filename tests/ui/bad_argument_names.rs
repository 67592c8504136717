use toolsmith::tool_fn;

/// Argument names providers would refuse.
#[tool_fn]
fn badly_named(
    #[arg(rename = "")] a: u8,
    #[arg(rename = "has space")] b: u8,
    #[arg(rename = "much.too.long.name.for.any.provider.to.accept.as.a.property.key.x")] c: u8,
    ünï: u8,
) -> u8 {
    a + b + c + ünï
}

fn main() {}
