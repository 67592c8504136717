//! The `execute_tool` span of a tool call (OpenTelemetry's GenAI conventions), for the calls
//! a batch runs and for those it, or a loop of its own, refuses before they run.

/// The `execute_tool` span of the call `call_id` of tool `name`, under the current span:
/// `otel.name` "execute_tool NAME", `gen_ai.operation.name`, `gen_ai.tool.name`,
/// `gen_ai.tool.call.id`, and, empty until the call ends, `error.type` and
/// `toolsmith.tool.attempts`. Its fields are built only when a subscriber records it.
///
/// A batch runs each call in one; a loop of your own that runs calls another way can give
/// them the same span, so that its traces read as the batch's.
///
/// ```
/// let span = toolsmith::execute_tool_span("call_1", "search");
/// let _entered = span.enter();
/// // … run the call, then record how it ended:
/// span.record("toolsmith.tool.attempts", 1);
/// ```
pub fn execute_tool_span(call_id: &str, name: &str) -> tracing::Span {
    tracing::info_span!(
        "execute_tool",
        otel.name = %format_args!("execute_tool {name}"),
        gen_ai.operation.name = "execute_tool",
        gen_ai.tool.name = %name,
        gen_ai.tool.call.id = %call_id,
        error.type = tracing::field::Empty,
        toolsmith.tool.attempts = tracing::field::Empty,
    )
}

/// Traces a call that did not run as an [`execute_tool_span`] that ends at once, with
/// `error.type` `error_type` (why: `"unknown_tool"`, `"invalid_arguments"`, `"denied"`, …;
/// [`ToolErrorKind::as_str`](crate::ToolErrorKind::as_str) names a `ToolError`'s) and no
/// attempt, so that a trace of a turn shows the model's refused calls too. The batch traces
/// the calls it does not run so; a loop that refuses a call before the batch (a hook, an
/// approval) can do the same. Nothing is built when no subscriber records it.
///
/// ```
/// use toolsmith::{ToolError, trace_call_not_run};
///
/// let refused = ToolError::UnknownTool("serach".into());
/// trace_call_not_run("call_2", "serach", refused.kind().as_str());
/// ```
pub fn trace_call_not_run(call_id: &str, name: &str, error_type: &'static str) {
    let span = execute_tool_span(call_id, name);
    if !span.is_disabled() {
        span.record("error.type", error_type);
        span.record("toolsmith.tool.attempts", 0);
    }
}

/// Records on `span` how a call ended, as `error.type`: the error's kind
/// ([`ToolErrorKind::as_str`](crate::ToolErrorKind::as_str)), or `"tool_error"` for a result
/// the tool marked as an error; nothing for a success. The batch's `execute_tool` spans, a
/// served MCP call's and a bridged call's record it so.
///
/// ```
/// use toolsmith::{ToolCallResult, ToolError, execute_tool_span, record_call_end};
///
/// let span = execute_tool_span("call_1", "search");
/// record_call_end(&span, &Err(ToolError::UnknownTool("serach".into())));
/// record_call_end(&span, &Ok(ToolCallResult::text("found")));
/// ```
pub fn record_call_end(
    span: &tracing::Span,
    outcome: &Result<crate::ToolCallResult, crate::ToolError>,
) {
    let error_type = match outcome {
        Ok(result) if result.is_error() => "tool_error",
        Ok(_) => return,
        Err(error) => error.kind().as_str(),
    };
    span.record("error.type", error_type);
}
