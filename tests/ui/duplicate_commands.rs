use toolsmith::{tool_fn, ToolError};

struct Memory;

/// Facts.
#[tool_fn(name = "memory")]
impl Memory {
    /// Remember a fact.
    async fn add(&self, text: String) -> Result<String, ToolError> {
        Ok(text)
    }

    /// Also remember a fact.
    #[command(name = "add")]
    async fn insert(&self, text: String) -> Result<String, ToolError> {
        Ok(text)
    }
}

fn main() {}
