use toolsmith::tool_fn;

/// Doubles a number.
#[tool_fn(struct_name = "not a name")]
fn double(x: u32) -> u32 {
    x * 2
}

struct Lights;

/// The lights of the house.
#[tool_fn(struct_name = "LightsTool")]
impl Lights {
    /// Turn a light on.
    fn on(&self, room: String) -> String {
        room
    }
}

fn main() {}
