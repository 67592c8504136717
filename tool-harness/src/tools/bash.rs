//! The `bash` tool: a shell command in the workspace root.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use toolsmith_core::{Tool, ToolArguments, ToolCallResult, ToolError, ToolImpl, tool_fn};

use crate::{SandboxStatus, ShellConfig, ShellRunner};

/// The tool's name.
pub const BASH_TOOL: &str = "bash";

/// The longest `timeout_ms` a call may give.
pub const MAX_BASH_TIMEOUT_MS: u64 = 600_000;

/// The longest argument Linux passes to a program (`MAX_ARG_STRLEN`, 32 pages), its NUL
/// excluded: `bash -c COMMAND` cannot start with a longer command.
#[cfg(target_os = "linux")]
fn max_argument_bytes() -> usize {
    // SAFETY: sysconf reads a constant of the system; it has no preconditions.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    32 * usize::try_from(page).unwrap_or(4096) - 1
}

/// `bash`'s time limit in milliseconds: its schema carries the bounds (1 to
/// [`MAX_BASH_TIMEOUT_MS`]), so the manager refuses a call outside them before it runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize, schemars::JsonSchema)]
#[serde(transparent)]
pub struct BashTimeoutMs(#[schemars(range(min = 1, max = 600_000))] pub u64);

/// The `bash` tool's logic: runs the command and renders how it ended. A command that timed
/// out is a result the model sees as an error, with the output it printed until then. The
/// tool is [`BashTool`], which adds the sandbox status to the description.
#[tool_fn(
    name = "bash",
    category = "shell",
    read_only = false,
    destructive,
    idempotent = false,
    open_world,
    description = "Run a shell command with bash in the workspace root and get its output \
                   (stdout and stderr interleaved; long output keeps its start and end) and \
                   exit code. Standard input is closed; background processes are killed when \
                   the command ends."
)]
pub async fn bash_call(
    #[bind] runner: ShellRunner,
    /// The command, run with `bash -c` in the workspace root.
    command: String,
    /// The time limit in milliseconds (default 120000, at most 600000); on expiry the command
    /// and every process it started are killed.
    timeout_ms: Option<BashTimeoutMs>,
) -> Result<ToolCallResult, ToolError> {
    // A program's arguments end at a NUL byte: the shell could not be started with it.
    if let Some(at) = command.find('\0') {
        return Err(ToolError::invalid_arguments(
            BASH_TOOL,
            format!("/command: holds a NUL byte (at byte {at}), which a command line cannot hold"),
        ));
    }
    // Nor with a longer argument than the kernel takes (it failed as if bash were missing).
    #[cfg(target_os = "linux")]
    if command.len() > max_argument_bytes() {
        return Err(ToolError::invalid_arguments(
            BASH_TOOL,
            format!(
                "/command: is {} bytes, more than the {} bytes a program's \
                 argument may have; write long content to a file with the write tool, or put \
                 the commands in a script file and run that",
                command.len(),
                max_argument_bytes()
            ),
        ));
    }
    let outcome = runner
        .run(&command, timeout_ms.map(|ms| Duration::from_millis(ms.0)))
        .await
        .map_err(|err| ToolError::execution(BASH_TOOL, err))?;
    let text = outcome.render();
    Ok(if outcome.timed_out {
        ToolCallResult::error(text)
    } else {
        ToolCallResult::text(text)
    })
}

/// The `bash` tool: [`bash_call`] (`BashCall`) with a description that says whether the sandbox confines
/// the command (a `#[tool_fn]` description is fixed at compile time; this one depends on the
/// kernel).
///
/// ```
/// use std::sync::Arc;
/// use toolsmith::{ToolArguments, ToolCallManager, ToolCallRequest};
/// use toolsmith::harness::{ShellConfig, tools::BashTool};
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
#[derive(Clone)]
pub struct BashTool {
    runner: ShellRunner,
    call: Arc<dyn ToolImpl>,
}

impl std::fmt::Debug for BashTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BashTool")
            .field("runner", &self.runner)
            .finish_non_exhaustive()
    }
}

impl BashTool {
    /// `bash` with `config`.
    pub fn new(config: ShellConfig) -> Self {
        let runner = ShellRunner::new(config);
        Self {
            call: Arc::new(BashCall::new(runner.clone())),
            runner,
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
        let mut definition = self.call.definition();
        if let Tool::SingleCommand(command) = &mut definition {
            match self.runner.sandbox_status() {
                SandboxStatus::Confined => command.description.push_str(
                    " Creating, changing or removing files outside the workspace root is \
                     refused by the sandbox.",
                ),
                SandboxStatus::PartlyConfined(_) => command.description.push_str(
                    " Creating, writing or removing files outside the workspace root is \
                     refused by the sandbox.",
                ),
                SandboxStatus::NotSandboxed(_) | SandboxStatus::Unavailable(_) => {}
            }
        }
        definition
    }

    async fn execute(&self, arguments: ToolArguments) -> Result<ToolCallResult, ToolError> {
        self.call.execute(arguments).await
    }
}
