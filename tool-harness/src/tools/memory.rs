//! The `memory` tool: commands `add`, `remove` and `replace` over a [`MemoryAccess`].

use std::sync::Arc;

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;
use toolsmith_core::{
    COMMAND_ARGUMENT, MemoryAccess, Tool, ToolAnnotations, ToolArguments, ToolCallResult,
    ToolDefinition, ToolError, ToolImpl,
};

use crate::tools::args_schema::{args_schema, parse_args};

/// The tool's name.
pub const MEMORY_TOOL: &str = "memory";

/// The arguments of `memory add`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MemoryAddArgs {
    /// The fact to remember, one self-contained statement.
    pub text: String,
}

/// The arguments of `memory remove`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MemoryRemoveArgs {
    /// The id of the fact to forget.
    pub id: u64,
}

/// The arguments of `memory replace`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MemoryReplaceArgs {
    /// The id of the fact to change.
    pub id: u64,
    /// Its new text.
    pub text: String,
}

/// The `memory` tool: its logic is one method per command, over the memory it holds.
///
/// ```
/// use std::sync::Arc;
/// use toolsmith_core::{ToolArguments, ToolCallManager, ToolCallRequest};
/// use toolsmith_harness::{InMemoryMemory, tools::MemoryTool};
/// use serde_json::json;
///
/// # futures::executor::block_on(async {
/// let manager = ToolCallManager::new("demo");
/// manager.register(Arc::new(MemoryTool::new(Arc::new(InMemoryMemory::new())))).unwrap();
/// let call = ToolCallRequest::new("1", "memory",
///     ToolArguments::try_from(json!({"command": "add", "text": "likes tea"})).unwrap());
/// let result = manager.execute_one(&call).await.unwrap();
/// assert_eq!(result.content.to_text(), "Remembered fact 1 (memory version 1)");
/// # });
/// ```
#[derive(Clone)]
pub struct MemoryTool {
    memory: Arc<dyn MemoryAccess>,
}

impl std::fmt::Debug for MemoryTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MemoryTool")
            .field("version", &self.memory.version())
            .finish()
    }
}

fn failed(err: impl std::fmt::Display) -> ToolError {
    ToolError::execution(MEMORY_TOOL, err)
}

impl MemoryTool {
    /// `memory` over `memory`.
    pub fn new(memory: Arc<dyn MemoryAccess>) -> Self {
        Self { memory }
    }

    /// Remembers a new fact.
    pub async fn add(&self, args: MemoryAddArgs) -> Result<String, ToolError> {
        let fact = self.memory.add(args.text).await.map_err(failed)?;
        Ok(format!(
            "Remembered fact {} (memory version {})",
            fact.id,
            self.memory.version()
        ))
    }

    /// Forgets a fact by its id.
    pub async fn remove(&self, args: MemoryRemoveArgs) -> Result<String, ToolError> {
        if self.memory.remove(args.id).await.map_err(failed)? {
            Ok(format!(
                "Forgot fact {} (memory version {})",
                args.id,
                self.memory.version()
            ))
        } else {
            Err(self.no_such_fact(args.id).await)
        }
    }

    /// Replaces a fact's text.
    pub async fn replace(&self, args: MemoryReplaceArgs) -> Result<String, ToolError> {
        if self
            .memory
            .replace(args.id, args.text)
            .await
            .map_err(failed)?
        {
            Ok(format!(
                "Replaced fact {} (memory version {})",
                args.id,
                self.memory.version()
            ))
        } else {
            Err(self.no_such_fact(args.id).await)
        }
    }

    async fn no_such_fact(&self, id: u64) -> ToolError {
        let known = match self.memory.facts().await {
            Ok(facts) if facts.is_empty() => "the memory is empty".to_owned(),
            Ok(facts) => format!(
                "known ids: {}",
                facts
                    .iter()
                    .map(|fact| fact.id.to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            Err(err) => format!("the facts could not be listed: {err}"),
        };
        failed(format!("there is no fact with id {id} ({known})"))
    }
}

#[async_trait]
impl ToolImpl for MemoryTool {
    fn definition(&self) -> Tool {
        let command = |name: &str, description: &str, arguments| {
            ToolDefinition::new(name, description, arguments).with_category("memory")
        };
        Tool::MultiCommands(
            MEMORY_TOOL.to_owned(),
            vec![
                command(
                    "add",
                    "Remember a new working fact; returns its id.",
                    args_schema::<MemoryAddArgs>(),
                ),
                command(
                    "remove",
                    "Forget a fact by its id.",
                    args_schema::<MemoryRemoveArgs>(),
                )
                .with_annotations(ToolAnnotations {
                    destructive: Some(true),
                    ..ToolAnnotations::default()
                }),
                command(
                    "replace",
                    "Replace the text of a fact, by its id.",
                    args_schema::<MemoryReplaceArgs>(),
                ),
            ],
        )
    }

    async fn execute(&self, mut arguments: ToolArguments) -> Result<ToolCallResult, ToolError> {
        let command = match arguments.remove(COMMAND_ARGUMENT) {
            Some(serde_json::Value::String(command)) => command,
            _ => {
                return Err(ToolError::invalid_arguments(
                    MEMORY_TOOL,
                    "/command: missing; choose one of add, remove, replace",
                ));
            }
        };
        let text = match command.as_str() {
            "add" => self.add(parse_args(MEMORY_TOOL, &arguments)?).await,
            "remove" => self.remove(parse_args(MEMORY_TOOL, &arguments)?).await,
            "replace" => self.replace(parse_args(MEMORY_TOOL, &arguments)?).await,
            other => Err(ToolError::invalid_arguments(
                MEMORY_TOOL,
                format!("/command: unknown command {other:?}; choose one of add, remove, replace"),
            )),
        }?;
        Ok(ToolCallResult::text(text))
    }
}
