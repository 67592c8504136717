//! A manager with the tools of a test registered.

use std::sync::Arc;

use toolsmith::{ToolCallManager, ToolImpl};

/// A manager (session `test`) with `tools` registered, in order.
pub fn manager_with(tools: Vec<Arc<dyn ToolImpl>>) -> ToolCallManager {
    let manager = ToolCallManager::new("test");
    for tool in tools {
        manager.register(tool).expect("registers");
    }
    manager
}
