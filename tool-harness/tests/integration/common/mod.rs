//! Helpers shared by the harness's integration tests.
#![allow(dead_code)]

pub mod image_files;
pub mod recorded_events;
pub mod span_fields;
pub mod stalled;
pub mod trace_tree;
pub mod warnings;

use async_trait::async_trait;
use serde_json::Value;
use toolsmith_core::{ToolArguments, ToolCallManager, ToolCallRequest, ToolCallResult, ToolError};
use toolsmith_harness::agent::{HookDecision, ToolHook};
use toolsmith_harness::model::Message;

/// A session of `parent_model` (model name "m") with the `agent` group of `config`, active.
pub fn parent_session(
    parent_model: toolsmith_harness::model::ScriptedModel,
    config: toolsmith_harness::agent::SubAgentConfig,
) -> toolsmith_harness::agent::AgentSession {
    let parent = toolsmith_harness::agent::AgentSession::builder(parent_model)
        .with_model("m")
        .with_toolshed(
            toolsmith_core::ToolShed::new().tools(toolsmith_harness::ToolPreset::agent(config)),
        )
        .build()
        .unwrap();
    parent.tool_manager().activate(&["agent".into()]);
    parent
}

/// Each file system the file tools run on, named: a local one on a new temporary directory
/// (kept alive by the third field) and an in-memory one, so that a test runs on both.
pub fn file_systems() -> Vec<(
    &'static str,
    std::sync::Arc<dyn toolsmith_harness::FileSystem>,
    Option<tempfile::TempDir>,
)> {
    let dir = tempfile::tempdir().unwrap();
    let local: std::sync::Arc<dyn toolsmith_harness::FileSystem> =
        std::sync::Arc::new(toolsmith_harness::LocalFileSystem::new(dir.path()).unwrap());
    vec![
        ("local", local, Some(dir)),
        (
            "memory",
            std::sync::Arc::new(toolsmith_harness::InMemoryFileSystem::new()),
            None,
        ),
    ]
}

/// Runs one call through the manager's validated path.
pub async fn call(
    manager: &ToolCallManager,
    name: &str,
    arguments: Value,
) -> Result<ToolCallResult, ToolError> {
    let request = ToolCallRequest::new(
        "call",
        name,
        ToolArguments::try_from(arguments).expect("an object"),
    );
    manager.execute_one(&request).await
}

/// The text of a successful call.
pub async fn text(manager: &ToolCallManager, name: &str, arguments: Value) -> String {
    match call(manager, name, arguments.clone()).await {
        Ok(result) => result.content.to_text(),
        Err(err) => panic!("{name} {arguments} failed: {err}"),
    }
}

/// The error of a call that must fail.
pub async fn error(manager: &ToolCallManager, name: &str, arguments: Value) -> ToolError {
    match call(manager, name, arguments.clone()).await {
        Ok(result) => panic!("{name} {arguments} succeeded: {}", result.content.to_text()),
        Err(err) => err,
    }
}

/// A `before_tool` hook that answers `decision` for the calls to `tool` and allows the rest.
pub struct DecideFor {
    pub tool: &'static str,
    pub decision: HookDecision,
}

#[async_trait]
impl ToolHook for DecideFor {
    async fn before_tool(&self, call: &ToolCallRequest) -> HookDecision {
        if call.name == self.tool {
            self.decision.clone()
        } else {
            HookDecision::Allow
        }
    }
}

/// Every call the model made in `transcript` has exactly one result, in the message right
/// after its answer, and no result answers a call that was not made.
pub fn assert_every_call_answered(transcript: &[Message]) {
    let mut messages = transcript.iter().peekable();
    while let Some(message) = messages.next() {
        match message {
            Message::Assistant { calls, .. } if !calls.is_empty() => {
                let Some(Message::ToolResults { results }) = messages.next() else {
                    panic!("calls without results: {transcript:#?}");
                };
                let made: Vec<&str> = calls.iter().map(|c| c.id.as_str()).collect();
                let answered: Vec<&str> = results.iter().map(|r| r.call_id.as_str()).collect();
                assert_eq!(made, answered, "{transcript:#?}");
            }
            Message::ToolResults { .. } => panic!("results without calls: {transcript:#?}"),
            _ => {}
        }
    }
}
