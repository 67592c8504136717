//! A command group with async, sync, renamed and skipped methods.
use std::sync::Mutex;

use toolsmith::{tool_fn, ToolError, ToolImpl};

#[derive(Default)]
struct Todo {
    items: Mutex<Vec<String>>,
}

/// A to-do list.
#[tool_fn(category = "productivity", timeout = "5s")]
impl Todo {
    /// Add an item.
    async fn add(&self, item: String) -> Result<usize, ToolError> {
        let mut items = self.items.lock().unwrap();
        items.push(item);
        Ok(items.len())
    }

    /// List the items.
    #[command(name = "list", read_only)]
    fn all(&self) -> Vec<String> {
        self.items.lock().unwrap().clone()
    }

    #[command(skip)]
    fn clear(&self) {
        self.items.lock().unwrap().clear();
    }

    fn new() -> Self {
        Self::default()
    }
}

fn main() {
    let todo = Todo::new();
    todo.clear();
    assert_eq!(todo.definition().name(), "todo");
}
