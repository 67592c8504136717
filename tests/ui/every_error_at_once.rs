use toolsmith::tool_fn;

#[tool_fn(name = "bad.name", colour = "red")]
fn tool<T>((a, b): (i32, i32), #[arg(rename = "x")] c: i32, #[arg(rename = "x")] d: i32) -> i32 {
    a + b + c + d
}

fn main() {}
