//! [`ToolDeclarations`]: the tools declared to the model on a request.

use serde::{Deserialize, Serialize};

use crate::Tool;

/// The provider-facing list of tools for one request: the `shed` meta-tool (absent when the
/// session has no tools) and the tools that are active.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ToolDeclarations {
    /// The `shed` meta-tool.
    pub shed: Option<Tool>,
    /// The active tools.
    pub tools: Vec<Tool>,
}

impl ToolDeclarations {
    /// Every declared tool, `shed` first.
    pub fn iter(&self) -> impl Iterator<Item = &Tool> {
        self.shed.iter().chain(&self.tools)
    }

    /// The number of declared tools, `shed` included.
    pub fn len(&self) -> usize {
        usize::from(self.shed.is_some()) + self.tools.len()
    }

    /// Whether nothing is declared.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}
