use toolsmith::ToolArgs;

// `#[serde(default)]` on a struct takes the fields left out from `Default::default()`, which
// this struct does not implement: one error, at the key, however many fields take from it.
#[derive(ToolArgs)]
#[serde(default)]
struct Page {
    size: u32,
    number: u32,
    #[serde(skip)]
    label: String,
}

fn main() {}
