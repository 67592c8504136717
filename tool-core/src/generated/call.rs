//! How a `#[tool_fn]` tool runs a call: read the arguments, call the function, convert what
//! it returns. Written once here, generic over the tool, so that each generated tool is a
//! call of these functions rather than its own copy of this logic (which keeps the macro's
//! compile cost down: one borrow-check and, where they are not generic, one copy of the
//! machine code of these bodies instead of one per tool).
//!
//! Not part of the public API: the macro's generated code is its only user.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use crate::{
    Args, FromToolArgs, ToolArgs, ToolArguments, ToolCallResult, ToolDefinition, ToolError,
    ToolImpl,
};

pub use crate::ToolFuture;

/// How a tool function's output becomes its result: a function pointer (a closure of the
/// generated code that captures nothing), so that what holds it is generic over the output's
/// type alone.
pub type Convert<O> = fn(O) -> Result<ToolCallResult, ToolError>;

/// The boxed future of an `async` tool's call: awaits `future` (the function's) and
/// converts its output with `convert`. Generic over the function's future alone: one small
/// instantiation per tool, the least an `async` tool can have.
#[inline]
pub fn start<'a, Fut>(future: Fut, convert: Convert<Fut::Output>) -> ToolFuture<'a>
where
    Fut: Future + Send + 'a,
{
    Box::pin(Converting { future, convert })
}

/// A function's future and the conversion of its output: written out rather than an
/// `async` block, whose state machine and drop glue cost several times the code in every
/// tool that instantiates it.
struct Converting<Fut: Future> {
    future: Fut,
    convert: Convert<Fut::Output>,
}

impl<Fut: Future> Future for Converting<Fut> {
    type Output = Result<ToolCallResult, ToolError>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        // SAFETY: `future` is pinned with `self` (structural pinning): it is never moved out
        // of `self`, `Converting` has no `Drop` of its own, and it is `Unpin` only when
        // `Fut` is. `convert` is a function pointer, `Copy`, not pinned.
        let this = unsafe { self.get_unchecked_mut() };
        let convert = this.convert;
        let future = unsafe { Pin::new_unchecked(&mut this.future) };
        match future.poll(cx) {
            Poll::Ready(output) => Poll::Ready(convert(output)),
            Poll::Pending => Poll::Pending,
        }
    }
}

/// The future of a blocking tool's call: runs `call` on tokio's blocking pool and converts
/// its output; a panic there is [`ToolError::Execution`].
pub fn start_blocking<'a, F, O>(tool: &'static str, call: F, convert: Convert<O>) -> ToolFuture<'a>
where
    F: FnOnce() -> O + Send + 'static,
    O: Send + 'static,
{
    Box::pin(async move {
        match tokio::task::spawn_blocking(call).await {
            Ok(output) => convert(output),
            Err(error) => Err(ToolError::execution(tool, error)),
        }
    })
}

/// Reads the arguments of a call to `tool` into `A` (a tool's hidden argument struct).
#[inline]
pub fn read_args<A: FromToolArgs>(
    tool: &'static str,
    arguments: &ToolArguments,
) -> Result<A, ToolError> {
    A::from_tool_args(&ToolArgs::new(tool, arguments))
}

/// One command's definition, built here once rather than by each tool's generated code:
/// `returns` is the result schema when the function's success type has one.
pub fn definition(
    name: &str,
    description: &str,
    category: &str,
    arguments: Args,
    returns: Option<Args>,
) -> ToolDefinition {
    let definition = ToolDefinition::new(name, description, arguments).with_category(category);
    match returns {
        Some(returns) => definition.with_returns(returns),
        None => definition,
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
