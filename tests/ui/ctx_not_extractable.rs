use toolsmith::tool_fn;

#[derive(Clone)]
struct Database;

/// Looks a user up.
#[tool_fn]
async fn find_user(#[ctx] db: Database, id: u64) -> String {
    let _ = db;
    id.to_string()
}

fn main() {}
