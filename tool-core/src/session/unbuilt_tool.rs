//! [`UnbuiltTool`]: what a constructor yields when the session lacks what the tool needs.

use std::sync::Arc;

use async_trait::async_trait;

use crate::{Tool, ToolArguments, ToolCallResult, ToolError, ToolImpl};

/// A tool that could not be built for its session (a `#[ctx]` value was missing): it keeps
/// its definition, and every call fails with the reason, so the session still builds and the
/// model learns why the tool is unavailable.
#[derive(Debug, Clone)]
pub struct UnbuiltTool {
    definition: Arc<Tool>,
    reason: String,
}

impl UnbuiltTool {
    /// A tool with `definition` that fails every call because of `reason`. Logged as a
    /// warning naming the tool and the reason: the session builds all the same, so without
    /// it the first sign of a missing value would be a model's failed call.
    pub fn new(definition: Tool, reason: impl Into<String>) -> Self {
        let reason = reason.into();
        tracing::warn!(
            tool = definition.name(),
            reason = %reason,
            "a tool could not be built for its session: each call of it fails with the reason"
        );
        Self {
            definition: Arc::new(definition),
            reason,
        }
    }

    /// Why the tool could not be built.
    pub fn reason(&self) -> &str {
        &self.reason
    }
}

#[async_trait]
impl ToolImpl for UnbuiltTool {
    fn definition(&self) -> Tool {
        Tool::clone(&self.definition)
    }

    fn shared_definition(&self) -> Arc<Tool> {
        Arc::clone(&self.definition)
    }

    async fn execute(&self, _arguments: ToolArguments) -> Result<ToolCallResult, ToolError> {
        Err(ToolError::execution(
            self.definition.name(),
            format!("it could not be built for this session: {}", self.reason),
        ))
    }
}
