//! Helpers shared by the harness's integration tests.
#![allow(dead_code)]

use serde_json::Value;
use toolsmith_core::{ToolArguments, ToolCallManager, ToolCallRequest, ToolCallResult, ToolError};

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
