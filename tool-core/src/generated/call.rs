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
    Args, Tool, ToolArgs, ToolArguments, ToolCallContext, ToolCallResult, ToolDefinition,
    ToolError, ToolImpl,
};

use crate::tool::error::panicked_with;

pub use crate::ToolFuture;

pub use crate::generated::result_conversion::{Conversion, ReturnsSchema};

/// The boxed future of an `async` tool's call: awaits `future` (the function's) and
/// converts its output with `conversion`. Generic over the function's future (and its
/// output's parts) alone: one small instantiation per tool, the least an `async` tool can
/// have.
///
/// The conversion comes before the future so that the generated call evaluates it first:
/// the calls that pick it then run while no future exists, and the tool's code has no
/// cleanup path dropping the future should one of them unwind.
#[inline]
pub fn start<'a, Fut, T, E>(
    tool: &'static str,
    conversion: Conversion<Fut::Output, T, E>,
    future: Fut,
) -> ToolFuture<'a>
where
    Fut: Future + Send + 'a,
    T: 'a,
    E: 'a,
{
    // In the block of a finished future of the same layout when the thread keeps one (the
    // manager recycles finished futures): no allocation for the usual call.
    crate::tool::future_block::box_in_block!(
        Converting {
            future,
            conversion,
            tool,
        },
        Converting<Fut, T, E>
    )
}

/// A function's future and the conversion of its output: written out rather than an
/// `async` block, whose state machine and drop glue cost several times the code in every
/// tool that instantiates it.
struct Converting<Fut: Future, T, E> {
    future: Fut,
    conversion: Conversion<Fut::Output, T, E>,
    tool: &'static str,
}

impl<Fut: Future, T, E> Future for Converting<Fut, T, E> {
    type Output = Result<ToolCallResult, ToolError>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        // Transmutes rather than `Pin::get_unchecked_mut` and `Pin::new_unchecked`: those are
        // functions instantiated for every tool's types, compiled in every debug build, and
        // `Pin<P>` is guaranteed the layout of `P`.
        // SAFETY: `future` is pinned with `self` (structural pinning): it is never moved out
        // of `self`, `Converting` has no `Drop` of its own, and it is `Unpin` only when
        // `Fut` is. `conversion` and `tool` are `Copy`, not pinned.
        let this = unsafe { std::mem::transmute::<Pin<&mut Self>, &mut Self>(self) };
        let (conversion, tool) = (this.conversion, this.tool);
        let future = unsafe { std::mem::transmute::<&mut Fut, Pin<&mut Fut>>(&mut this.future) };
        match future.poll(cx) {
            Poll::Ready(output) => Poll::Ready(conversion.apply(output, tool)),
            Poll::Pending => Poll::Pending,
        }
    }
}

/// The future of a blocking tool's call: runs `call` on tokio's blocking pool and converts
/// its output; a panic there is [`ToolError::Execution`], and so is a call polled outside a
/// Tokio runtime (where tokio's `spawn_blocking` panics).
///
/// The call's context, current as it starts, is current on the blocking thread too: a task's
/// context does not follow it there, and the body's [`ToolCallContext::current`] would be
/// `None` (no progress, no cancellation to watch), where an `async` tool's is set.
///
/// The conversion comes before the call, as in [`start`]: evaluated first, it needs no
/// cleanup path dropping the closure (and the arguments it owns).
pub fn start_blocking<'a, F, O, T, E>(
    tool: &'static str,
    conversion: Conversion<O, T, E>,
    call: F,
) -> ToolFuture<'a>
where
    F: FnOnce() -> O + Send + 'static,
    O: Send + 'static,
    T: 'a,
    E: 'a,
{
    let context = ToolCallContext::current();
    Box::pin(async move {
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return Err(ToolError::execution(
                tool,
                "a blocking tool runs on Tokio's blocking pool, and needs a Tokio runtime",
            ));
        };
        let call = move || match context {
            Some(context) => context.enter(call),
            None => call(),
        };
        match runtime.spawn_blocking(call).await {
            Ok(output) => conversion.apply(output, tool),
            // Worded as any tool's panic, and its payload dropped where a panic is caught.
            Err(error) if error.is_panic() => Err(panicked_with(tool, error.into_panic())),
            Err(error) => Err(ToolError::execution(tool, error)),
        }
    })
}

/// One command's definition, built here once rather than by each tool's generated code:
/// `returns` builds the result schema when the function's success type has one.
///
/// `returns` comes first so that the generated code picks it before it builds the argument
/// schema: nothing is then alive to drop should the pick unwind (no cleanup path per tool).
pub fn definition(
    returns: ReturnsSchema,
    name: &str,
    description: &str,
    category: &str,
    arguments: Args,
) -> ToolDefinition {
    let definition = ToolDefinition::new(name, description, arguments).with_category(category);
    match returns() {
        Some(returns) => definition.with_returns(returns),
        None => definition,
    }
}

/// The single-command tool of a function taking its whole arguments as one struct (an
/// `#[args]` parameter): `function` with the struct's `arguments`.
pub fn single_command(function: ToolDefinition, arguments: Args) -> Tool {
    Tool::SingleCommand(ToolDefinition {
        arguments,
        ..function
    })
}

/// The command group of a function taking its whole arguments as one command enum (an
/// `#[args]` parameter): named after `function` and described by its description (when it
/// has one), each of `commands` in its category, and with its result schema and each of its
/// annotations where the command sets none.
pub fn command_group(function: ToolDefinition, commands: Vec<ToolDefinition>) -> Tool {
    let shared = &function;
    let commands = commands
        .into_iter()
        .map(|mut command| {
            command.category.clone_from(&shared.category);
            if command.returns.is_none() {
                command.returns.clone_from(&shared.returns);
            }
            let (own, tool) = (&mut command.annotations, shared.annotations);
            own.read_only = own.read_only.or(tool.read_only);
            own.destructive = own.destructive.or(tool.destructive);
            own.idempotent = own.idempotent.or(tool.idempotent);
            own.open_world = own.open_world.or(tool.open_world);
            command
        })
        .collect();
    if function.description.trim().is_empty() {
        Tool::MultiCommands(function.name, commands)
    } else {
        Tool::group(function.name, function.description, commands)
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
    let mut answer = None;
    tool.execute_now(arguments, &mut answer);
    finished(answer.unwrap_or_else(|| {
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

/// `ToolImpl::execute` of a generated tool (the core's `execute!`): its own
/// [`execute_lent`](ToolImpl::execute_lent) with `arguments` lent, which are dropped once
/// the call has started. Through a trait object rather than generic, so that each tool's
/// `execute` is a call of this one function, with no cleanup path of its own dropping the
/// arguments (the manager starts calls through `execute_lent`, not here).
pub fn lend<'a>(tool: &'a (dyn LendsArguments + 'a), arguments: ToolArguments) -> ToolFuture<'a> {
    tool.execute_lent(&arguments)
}

/// [`ToolImpl::execute_lent`] alone, the trait object [`lend`] takes: a `dyn ToolImpl`'s
/// table would hold every method of the trait, and instantiate its default methods, for
/// each tool of a crate that never makes one.
pub trait LendsArguments {
    /// [`ToolImpl::execute_lent`].
    fn execute_lent<'a>(&'a self, arguments: &ToolArguments) -> ToolFuture<'a>;
}

impl<T: ToolImpl> LendsArguments for T {
    fn execute_lent<'a>(&'a self, arguments: &ToolArguments) -> ToolFuture<'a> {
        ToolImpl::execute_lent(self, arguments)
    }
}

/// The context of the running call, for a `#[ctx] ToolCallContext` parameter: the one its
/// runner set, or a detached one (no id, never cancelled, progress reported nowhere) for a
/// call run without one, such as a bare `execute_one`.
pub fn call_context(tool: &str) -> crate::ToolCallContext {
    crate::ToolCallContext::current()
        .unwrap_or_else(|| crate::ToolCallContext::new("", tool, crate::CancellationToken::new()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ToolAnnotations;

    fn annotations(read_only: Option<bool>, destructive: Option<bool>) -> ToolAnnotations {
        ToolAnnotations {
            read_only,
            destructive,
            ..ToolAnnotations::default()
        }
    }

    #[test]
    fn a_group_takes_the_functions_category_result_and_unset_annotations() {
        let function = definition(|| None, "store", "A store.", "storage", Args::empty())
            .with_returns(Args::empty())
            .with_annotations(annotations(Some(true), Some(false)));
        let own_result = Args::new(serde_json::json!({"type": "object", "properties": {}}));
        let commands = vec![
            ToolDefinition::new("get", "Reads.", Args::empty()),
            // A command that says its own (a hand-written `ToolCommands`) keeps it.
            ToolDefinition::new("put", "Writes.", Args::empty())
                .with_returns(own_result.clone())
                .with_annotations(annotations(Some(false), None)),
        ];
        let tool = command_group(function, commands);
        assert_eq!(tool.name(), "store");
        assert_eq!(tool.group_description(), Some("A store."));
        let [get, put] = tool.commands() else {
            panic!("two commands")
        };
        assert_eq!(
            (get.category.as_str(), put.category.as_str()),
            ("storage", "storage")
        );
        assert_eq!(get.returns, Some(Args::empty()));
        assert_eq!(put.returns, Some(own_result));
        assert_eq!(get.annotations, annotations(Some(true), Some(false)));
        assert_eq!(put.annotations, annotations(Some(false), Some(false)));
    }

    #[tokio::test]
    async fn lend_starts_the_call_with_the_arguments_lent() {
        let tool = crate::FnTool::new("double", "Doubles.", Args::empty(), |arguments| {
            let a = arguments.i64("a");
            async move { Ok(ToolCallResult::json(serde_json::json!(a? * 2))) }
        });
        let arguments = ToolArguments::try_from(serde_json::json!({"a": 21})).unwrap();
        let result = lend(&tool, arguments).await.unwrap();
        assert_eq!(result, ToolCallResult::json(serde_json::json!(42)));
    }

    #[test]
    fn a_group_without_a_description_has_none_of_its_own() {
        let function = definition(|| None, "store", "  ", "storage", Args::empty());
        let tool = command_group(
            function,
            vec![ToolDefinition::new("get", "Reads.", Args::empty())],
        );
        assert!(matches!(&tool, Tool::MultiCommands(name, _) if name == "store"));
        assert_eq!(tool.group_description(), None);
    }

    #[test]
    fn a_single_command_gets_the_structs_arguments() {
        let function = definition(|| None, "add", "Adds.", "math", Args::empty());
        let arguments = Args::new(serde_json::json!({
            "type": "object",
            "properties": {"a": {"type": "integer"}},
        }));
        let Tool::SingleCommand(command) = single_command(function, arguments.clone()) else {
            panic!("one command")
        };
        assert_eq!(
            (command.name.as_str(), command.category.as_str()),
            ("add", "math")
        );
        assert_eq!(command.arguments, arguments);
    }
}
