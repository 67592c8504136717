//! Calls made with JSON arguments, answered with JSON.

use serde_json::Value;
use toolsmith::{ToolArguments, ToolCallManager, ToolCallRequest, ToolError, UserModelContent};

/// `value` as a call's arguments (an object).
pub fn arguments(value: Value) -> ToolArguments {
    ToolArguments::try_from(value).expect("an object")
}

/// A call of `tool` with `args` (an object), under the id `call-1`.
pub fn call(tool: &str, args: Value) -> ToolCallRequest {
    ToolCallRequest::new("call-1", tool, arguments(args))
}

/// The JSON result of calling `tool` with `args` through `execute_one`, or its error.
pub async fn run_json(
    manager: &ToolCallManager,
    tool: &str,
    args: Value,
) -> Result<Value, ToolError> {
    let result = manager.execute_one(&call(tool, args)).await?;
    match result.content {
        UserModelContent::Json(value) => Ok(value),
        other => panic!("expected JSON, got {other:?}"),
    }
}
