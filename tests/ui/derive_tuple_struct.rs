use toolsmith::ToolArgs;

#[derive(ToolArgs)]
struct Pair(i32, i32);

fn main() {}
