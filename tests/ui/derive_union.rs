use toolsmith::ToolArgs;

#[derive(ToolArgs)]
union Bits {
    int: u32,
    float: f32,
}

fn main() {}
