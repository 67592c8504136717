//! [`ToolImpl`]: the one trait every tool implements.

use std::time::Duration;

use async_trait::async_trait;

use crate::{Tool, ToolArguments, ToolCallResult, ToolError, ToolRetryConfig};

/// A tool: its definition, and how to run it.
///
/// Implement it by hand, or let `#[tool_fn]` write it. The arguments reach
/// [`execute`](Self::execute) already validated against the definition's schema when the call
/// goes through a [`ToolCallManager`](crate::ToolCallManager).
///
/// ```
/// use async_trait::async_trait;
/// use toolsmith_core::{Args, Tool, ToolArgs, ToolArguments, ToolCallResult, ToolDefinition,
///     ToolError, ToolImpl, scheme};
///
/// struct Greet;
///
/// #[async_trait]
/// impl ToolImpl for Greet {
///     fn definition(&self) -> Tool {
///         Tool::SingleCommand(ToolDefinition::new(
///             "greet",
///             "Greet someone by name.",
///             Args::new(scheme::object().required("name", scheme::string().min_len(1)).build()),
///         ))
///     }
///
///     async fn execute(&self, arguments: ToolArguments) -> Result<ToolCallResult, ToolError> {
///         let name = ToolArgs::new("greet", &arguments).str("name")?;
///         Ok(ToolCallResult::text(format!("Hello, {name}!")))
///     }
/// }
/// ```
#[async_trait]
pub trait ToolImpl: Send + Sync {
    /// The tool's shape: one command, or a group of commands.
    fn definition(&self) -> Tool;

    /// Runs the tool on the model's arguments.
    async fn execute(&self, arguments: ToolArguments) -> Result<ToolCallResult, ToolError>;

    /// The tool's own time limit, used when none is set on the manager.
    fn timeout(&self) -> Option<Duration> {
        None
    }

    /// The tool's own retry config, used when none is set on the manager. With `None` (the
    /// default) the tool is retried by the manager's default config if it is annotated
    /// read-only or idempotent, and not at all otherwise.
    fn retry_config(&self) -> Option<ToolRetryConfig> {
        None
    }
}
