//! How a `#[tool_fn]` tool runs a call: read the arguments, call the function, convert what
//! it returns. Written once here, generic over the tool, so that each generated tool is a
//! few closures rather than its own copy of this logic (which keeps the macro's compile cost
//! down: one borrow-check of these bodies instead of one per tool).
//!
//! Not part of the public API: the macro's generated code is its only user.

use std::future::Future;

use crate::{FromToolArgs, ToolArgs, ToolArguments, ToolCallResult, ToolError, ToolImpl};

pub use crate::ToolFuture;

/// Reads the arguments into `A` now, calls `call(A)`, and returns the future that awaits
/// its output and converts it; arguments that do not read are a finished future.
pub fn start_async<'a, A, F, Fut, C>(
    tool: &'static str,
    arguments: &ToolArguments,
    call: F,
    convert: C,
) -> ToolFuture<'a>
where
    A: FromToolArgs,
    F: FnOnce(A) -> Fut,
    Fut: Future + Send + 'a,
    C: FnOnce(Fut::Output) -> Result<ToolCallResult, ToolError> + Send + 'a,
{
    match A::from_tool_args(&ToolArgs::new(tool, arguments)) {
        Ok(args) => {
            let output = call(args);
            Box::pin(async move { convert(output.await) })
        }
        Err(error) => finished(Err(error)),
    }
}

/// Reads the arguments into `A`, runs `call(A)` inline, and converts its output.
pub fn run_sync<A, F, O, C>(
    tool: &'static str,
    arguments: &ToolArguments,
    call: F,
    convert: C,
) -> Result<ToolCallResult, ToolError>
where
    A: FromToolArgs,
    F: FnOnce(A) -> O,
    C: FnOnce(O) -> Result<ToolCallResult, ToolError>,
{
    let args = A::from_tool_args(&ToolArgs::new(tool, arguments))?;
    convert(call(args))
}

/// Reads the arguments into `A` now, and returns the future that runs `call(A)` on tokio's
/// blocking pool and converts its output; a panic there is [`ToolError::Execution`].
/// Arguments that do not read are a finished future.
pub fn start_blocking<'a, A, F, O, C>(
    tool: &'static str,
    arguments: &ToolArguments,
    call: F,
    convert: C,
) -> ToolFuture<'a>
where
    A: FromToolArgs + Send + 'static,
    F: FnOnce(A) -> O + Send + 'static,
    O: Send + 'static,
    C: FnOnce(O) -> Result<ToolCallResult, ToolError> + Send + 'a,
{
    match A::from_tool_args(&ToolArgs::new(tool, arguments)) {
        Ok(args) => Box::pin(async move {
            match tokio::task::spawn_blocking(move || call(args)).await {
                Ok(output) => convert(output),
                Err(error) => Err(ToolError::execution(tool, error)),
            }
        }),
        Err(error) => finished(Err(error)),
    }
}

/// The `command` argument of a call to a command group.
pub fn command_name(tool: &str, arguments: &ToolArguments) -> Result<String, ToolError> {
    ToolArgs::new(tool, arguments).field(crate::COMMAND_ARGUMENT)
}

/// `execute_lent` of a tool whose calls `execute_now` answers: its result, as a finished
/// future.
pub fn run_now<'a, T: ToolImpl + ?Sized>(
    tool: &T,
    name: &'static str,
    arguments: &ToolArguments,
) -> ToolFuture<'a> {
    finished(tool.execute_now(arguments).unwrap_or_else(|| {
        Err(ToolError::execution(
            name,
            "the tool answered neither synchronously nor with a future",
        ))
    }))
}

/// A future that is already finished with `result`.
pub fn finished<'a>(result: Result<ToolCallResult, ToolError>) -> ToolFuture<'a> {
    Box::pin(std::future::ready(result))
}

/// The context of the running call, for a `#[ctx] ToolCallContext` parameter: the one its
/// runner set, or a detached one (no id, never cancelled, progress reported nowhere) for a
/// call run without one, such as a bare `execute_one`.
pub fn call_context(tool: &str) -> crate::ToolCallContext {
    crate::ToolCallContext::current()
        .unwrap_or_else(|| crate::ToolCallContext::new("", tool, crate::CancellationToken::new()))
}
