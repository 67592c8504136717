//! Helpers shared by the harness's integration tests.
#![allow(dead_code)]

pub mod recorded_events;

use async_trait::async_trait;
use serde_json::Value;
use toolsmith_core::{ToolArguments, ToolCallManager, ToolCallRequest, ToolCallResult, ToolError};
use toolsmith_harness::agent::{HookDecision, ToolHook};

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
