use toolsmith::tool_fn;

struct Handle;

/// Opens a handle.
#[tool_fn]
async fn open(path: String) -> Handle {
    let _ = path;
    Handle
}

fn main() {}
