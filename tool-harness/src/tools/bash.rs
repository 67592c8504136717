//! The `bash` tool: a shell command in the workspace root.

use std::time::Duration;

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;
use toolsmith_core::{
    Tool, ToolAnnotations, ToolArguments, ToolCallResult, ToolDefinition, ToolError, ToolImpl,
};

use crate::tools::args_schema::{args_schema, parse_args};
use crate::{SandboxStatus, ShellConfig, ShellRunner};

/// The tool's name.
pub const BASH_TOOL: &str = "bash";

/// The arguments of `bash`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BashArgs {
    /// The command, run with `bash -c` in the workspace root.
    pub command: String,
    /// The time limit in milliseconds (default 120000, at most 600000); on expiry the command
    /// and every process it started are killed.
    #[schemars(range(min = 1, max = 600_000))]
    pub timeout_ms: Option<u64>,
}

/// `bash`'s logic: runs the command and renders how it ended. A command that timed out is
/// a result the model sees as an error, with the output it printed until then.
pub async fn run_bash(runner: &ShellRunner, args: BashArgs) -> Result<ToolCallResult, ToolError> {
    let outcome = runner
        .run(&args.command, args.timeout_ms.map(Duration::from_millis))
        .await
        .map_err(|err| ToolError::execution(BASH_TOOL, err))?;
    let text = outcome.render();
    Ok(if outcome.timed_out {
        ToolCallResult::error(text)
    } else {
        ToolCallResult::text(text)
    })
}

/// The `bash` tool.
///
/// ```
/// use std::sync::Arc;
/// use toolsmith_core::{ToolArguments, ToolCallManager, ToolCallRequest};
/// use toolsmith_harness::{ShellConfig, tools::BashTool};
/// use serde_json::json;
///
/// # #[tokio::main(flavor = "current_thread")] async fn main() {
/// let dir = tempfile::tempdir().unwrap();
/// let manager = ToolCallManager::new("demo");
/// manager.register(Arc::new(BashTool::new(ShellConfig::new(dir.path())))).unwrap();
/// let call = ToolCallRequest::new("1", "bash", ToolArguments::from_iter([("command", json!("echo hi"))]));
/// let result = manager.execute_one(&call).await.unwrap();
/// assert_eq!(result.content.to_text(), "hi\n[exit code: 0]");
/// # }
/// ```
#[derive(Debug, Clone)]
pub struct BashTool {
    runner: ShellRunner,
}

impl BashTool {
    /// `bash` with `config`.
    pub fn new(config: ShellConfig) -> Self {
        Self {
            runner: ShellRunner::new(config),
        }
    }

    /// The runner behind the tool.
    pub fn runner(&self) -> &ShellRunner {
        &self.runner
    }
}

#[async_trait]
impl ToolImpl for BashTool {
    fn definition(&self) -> Tool {
        let confinement = match self.runner.sandbox_status() {
            SandboxStatus::Confined => {
                " Writes outside the workspace root are refused by the sandbox."
            }
            _ => "",
        };
        Tool::SingleCommand(
            ToolDefinition::new(
                BASH_TOOL,
                format!(
                    "Run a shell command with bash in the workspace root and get its output \
                     (stdout and stderr interleaved; long output keeps its start and end) and \
                     exit code. Standard input is closed; background processes are killed when \
                     the command ends.{confinement}"
                ),
                args_schema::<BashArgs>(),
            )
            .with_category("shell")
            .with_annotations(ToolAnnotations {
                read_only: Some(false),
                destructive: Some(true),
                idempotent: Some(false),
                open_world: Some(true),
            }),
        )
    }

    async fn execute(&self, arguments: ToolArguments) -> Result<ToolCallResult, ToolError> {
        let args = parse_args(BASH_TOOL, &arguments)?;
        run_bash(&self.runner, args).await
    }
}
