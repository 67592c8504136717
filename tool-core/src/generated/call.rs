//! How a `#[tool_fn]` tool runs a call: read the arguments, call the function, convert what
//! it returns. Written once here, generic over the tool, so that each generated tool is a
//! call of these functions rather than its own copy of this logic (which keeps the macro's
//! compile cost down: one borrow-check and, where they are not generic, one copy of the
//! machine code of these bodies instead of one per tool).
//!
//! Not part of the public API: the macro's generated code is its only user.

use std::alloc::Layout;
use std::future::Future;
use std::mem::ManuallyDrop;
use std::pin::Pin;
use std::task::{Context, Poll};

use crate::tool::future_block::{self, FirstPollBlock};
use crate::{
    Args, CallStart, ToolArgs, ToolArguments, ToolCallResult, ToolDefinition, ToolError, ToolImpl,
};

pub use crate::ToolFuture;

pub use crate::generated::result_conversion::Conversion;

/// An `async` tool's call, started: `future` (the function's) with the conversion of its
/// output, boxed, and polled once in `first_poll` when there is one. Generic over the
/// function's future (and its output's parts) alone: one small instantiation per tool, the
/// least an `async` tool can have.
///
/// The first poll is a static call of the function's future, whose output is converted with
/// `conversion` as this function holds it (its functions known here, not read back from the
/// box), and a future that finished there is dropped and its block kept by static calls: the
/// usual call, which ends on its first poll, makes no dynamic call of its future.
#[inline]
pub fn start<'a, Fut, T, E>(
    tool: &'static str,
    future: Fut,
    conversion: Conversion<Fut::Output, T, E>,
    first_poll: Option<&mut Context<'_>>,
) -> CallStart<'a>
where
    Fut: Future + Send + 'a,
    T: 'a,
    E: 'a,
{
    let Some(cx) = first_poll else {
        // In the block of a finished future of the same layout when the thread keeps one
        // (the manager recycles finished futures): no allocation for the usual call.
        return CallStart::Running(future_block::boxed(Converting {
            future,
            conversion,
            tool,
        }));
    };
    let layout = const { Layout::new::<Converting<Fut, T, E>>() };
    let block = FirstPollBlock::take(layout);
    let converting = block.as_ptr().cast::<Converting<Fut, T, E>>();
    // Only the future is written for its first poll; the conversion and the name are
    // written only if it suspends (the usual call reads them from here, as constants).
    // SAFETY: the block is one for a `Converting`, uninitialised, owned here; the future is
    // written once, and from here on not moved (pinned in the block).
    let future = unsafe {
        let place = &raw mut (*converting).future;
        place.write(future);
        place
    };
    // A panic in the first poll unwinds through `polling`, which drops the future and frees
    // the block.
    let polling = FirstPoll {
        future,
        block: ManuallyDrop::new(block),
        layout,
    };
    // SAFETY: the future is initialised and pinned where it is (see above).
    let poll = unsafe { Pin::new_unchecked(&mut *future) }.poll(cx);
    // The poll is over: the block is taken back from the guard, which is not dropped.
    let mut polling = ManuallyDrop::new(polling);
    // SAFETY: taken once, from a guard that is not used again.
    let block = unsafe { ManuallyDrop::take(&mut polling.block) };
    match poll {
        Poll::Ready(output) => {
            // SAFETY: the finished future is dropped in place, once, and its block then
            // holds no value.
            unsafe {
                std::ptr::drop_in_place(future);
                block.give_back(layout);
            }
            CallStart::Finished(conversion.apply(output, tool))
        }
        // SAFETY: the rest of the `Converting` around the pinned future is written (fields
        // of their own, not pinned), so the block holds a whole one, allocated with its
        // layout: what `Box::pin` would have made.
        Poll::Pending => unsafe {
            (&raw mut (*converting).conversion).write(conversion);
            (&raw mut (*converting).tool).write(tool);
            CallStart::Running(Pin::new_unchecked(Box::from_raw(converting)))
        },
    }
}

/// A function's future in its block ([`start`]) while it is polled the first time: if the
/// poll panics, the future is dropped and the block freed as the panic unwinds.
struct FirstPoll<Fut> {
    /// Written, and pinned, in `block`.
    future: *mut Fut,
    block: ManuallyDrop<FirstPollBlock>,
    layout: Layout,
}

impl<Fut> Drop for FirstPoll<Fut> {
    fn drop(&mut self) {
        // Reached only as a panic of the poll unwinds.
        // SAFETY: the future is dropped in place, once (not used again), and its block then
        // holds no value; the block is taken once.
        unsafe {
            std::ptr::drop_in_place(self.future);
            ManuallyDrop::take(&mut self.block).free(self.layout);
        }
    }
}

/// A function's future and the conversion of its output: written out rather than an
/// `async` block, whose state machine and drop glue cost several times the code in every
/// tool that instantiates it.
struct Converting<Fut: Future, T, E> {
    future: Fut,
    conversion: Conversion<Fut::Output, T, E>,
    tool: &'static str,
}

impl<Fut: Future, T, E> Converting<Fut, T, E> {
    /// The function's future, pinned with `self`.
    #[inline]
    fn project_future(self: Pin<&mut Self>) -> Pin<&mut Fut> {
        // SAFETY: `future` is pinned with `self` (structural pinning): it is never moved out
        // of `self`, `Converting` has no `Drop` of its own, and it is `Unpin` only when
        // `Fut` is. `conversion` and `tool` are `Copy`, not pinned.
        unsafe { self.map_unchecked_mut(|this| &mut this.future) }
    }
}

impl<Fut: Future, T, E> Future for Converting<Fut, T, E> {
    type Output = Result<ToolCallResult, ToolError>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let (conversion, tool) = (self.conversion, self.tool);
        match self.project_future().poll(cx) {
            Poll::Ready(output) => Poll::Ready(conversion.apply(output, tool)),
            Poll::Pending => Poll::Pending,
        }
    }
}

/// A blocking tool's call, started: `call` run on tokio's blocking pool and its output
/// converted (a panic there is [`ToolError::Execution`]), polled once in `first_poll` when
/// there is one.
pub fn start_blocking<'a, F, O, T, E>(
    tool: &'static str,
    call: F,
    conversion: Conversion<O, T, E>,
    first_poll: Option<&mut Context<'_>>,
) -> CallStart<'a>
where
    F: FnOnce() -> O + Send + 'static,
    O: Send + 'static,
    T: 'a,
    E: 'a,
{
    let future = Box::pin(async move {
        match tokio::task::spawn_blocking(call).await {
            Ok(output) => conversion.apply(output, tool),
            Err(error) => Err(ToolError::execution(tool, error)),
        }
    });
    CallStart::poll_first(future, first_poll)
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
    Box::pin(std::future::ready(answer_now(tool, name, arguments)))
}

/// A call of a command group's synchronous command, in its `start_call`: finished with
/// the result of `execute_now`.
pub fn started_now<'a, T: ToolImpl + ?Sized>(
    tool: &T,
    name: &'static str,
    arguments: &ToolArguments,
) -> CallStart<'a> {
    CallStart::Finished(answer_now(tool, name, arguments))
}

/// The result of `tool.execute_now`, which answers every call that these are used for.
fn answer_now<T: ToolImpl + ?Sized>(
    tool: &T,
    name: &'static str,
    arguments: &ToolArguments,
) -> Result<ToolCallResult, ToolError> {
    tool.execute_now(arguments).unwrap_or_else(|| {
        Err(ToolError::execution(
            name,
            "the tool answered neither synchronously nor with a future",
        ))
    })
}

/// A call that ended before it could start (its arguments could not be read, its command is
/// unknown), with `error`.
pub fn finished<'a>(error: ToolError) -> CallStart<'a> {
    CallStart::Finished(Err(error))
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
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use serde_json::json;

    use super::*;
    // The traits that pick a conversion, as each expansion imports them.
    use crate::generated::expansion::kinds::*;
    use crate::generated::result_conversion::Conversion;

    /// A function's future that counts its drops, suspends `pending` times, then finishes
    /// with `value` (or panics, with `panics`).
    struct Step {
        drops: Arc<AtomicUsize>,
        pending: usize,
        panics: bool,
        value: i64,
    }

    impl Future for Step {
        type Output = Result<i64, String>;

        fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
            if self.pending > 0 {
                self.pending -= 1;
                cx.waker().wake_by_ref();
                return Poll::Pending;
            }
            assert!(!self.panics, "step panicked");
            Poll::Ready(if self.value < 0 {
                Err(format!("{} is negative", self.value))
            } else {
                Ok(self.value)
            })
        }
    }

    impl Drop for Step {
        fn drop(&mut self) {
            self.drops.fetch_add(1, Ordering::SeqCst);
        }
    }

    fn step(drops: &Arc<AtomicUsize>, pending: usize, panics: bool, value: i64) -> Step {
        Step {
            drops: Arc::clone(drops),
            pending,
            panics,
            value,
        }
    }

    /// The conversion `#[tool_fn]` picks for `Result<i64, String>`: JSON, and the error's text.
    fn conversion() -> Conversion<Result<i64, String>, i64, String> {
        crate::__toolsmith_conversion!(Result<i64, String>)
    }

    fn shown(result: &Result<ToolCallResult, ToolError>) -> String {
        match result {
            Ok(result) => format!("ok {}", result.content.to_text()),
            Err(err) => format!("err {err}"),
        }
    }

    fn first_poll(future: Step) -> CallStart<'static> {
        let mut cx = Context::from_waker(std::task::Waker::noop());
        start("step", future, conversion(), Some(&mut cx))
    }

    fn answer_of(start: CallStart<'_>) -> String {
        match start {
            CallStart::Finished(result) => shown(&result),
            CallStart::Running(_) => panic!("finished on its first poll"),
        }
    }

    #[test]
    fn a_future_that_finishes_on_its_first_poll_is_converted_and_dropped_once() {
        let drops = Arc::new(AtomicUsize::new(0));
        assert_eq!(answer_of(first_poll(step(&drops, 0, false, 42))), "ok 42");
        assert_eq!(drops.load(Ordering::SeqCst), 1);
        // The error's conversion, with the tool's name.
        assert_eq!(
            answer_of(first_poll(step(&drops, 0, false, -1))),
            "err Tool 'step' failed: -1 is negative"
        );
        assert_eq!(drops.load(Ordering::SeqCst), 2);
    }

    #[test]
    fn a_future_that_suspends_is_left_whole_with_its_conversion() {
        let drops = Arc::new(AtomicUsize::new(0));
        for (value, expected) in [(7, "ok 7"), (-3, "err Tool 'step' failed: -3 is negative")] {
            let CallStart::Running(future) = first_poll(step(&drops, 2, false, value)) else {
                panic!("suspended on its first poll");
            };
            let before = drops.load(Ordering::SeqCst);
            // Polled once already: the second poll suspends again, the third finishes, and
            // the conversion and the name written when it suspended are used.
            let result = futures::executor::block_on(future);
            assert_eq!(shown(&result), expected);
            assert_eq!(drops.load(Ordering::SeqCst), before + 1);
        }
        // Never polled at all without a first poll: left as it is.
        let start = start("step", step(&drops, 0, false, 5), conversion(), None);
        let CallStart::Running(future) = start else {
            panic!("not polled without a first poll");
        };
        assert_eq!(shown(&futures::executor::block_on(future)), "ok 5");
        assert_eq!(drops.load(Ordering::SeqCst), 3);
    }

    #[test]
    fn a_first_poll_that_panics_drops_the_future_once_and_the_next_call_runs() {
        let drops = Arc::new(AtomicUsize::new(0));
        let panicked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            first_poll(step(&drops, 0, true, 1))
        }));
        let payload = panicked.expect_err("the poll panicked");
        assert_eq!(payload.downcast_ref::<&str>(), Some(&"step panicked"));
        assert_eq!(drops.load(Ordering::SeqCst), 1);
        // The thread's blocks are as they were: the next calls of the same future run.
        assert_eq!(answer_of(first_poll(step(&drops, 0, false, 2))), "ok 2");
        assert_eq!(answer_of(first_poll(step(&drops, 0, false, 3))), "ok 3");
        assert_eq!(drops.load(Ordering::SeqCst), 3);
    }

    #[test]
    fn lent_and_started_calls_of_a_command_group_answer_alike() {
        // `started_now` and `finished` are what a group's `start_call` answers with for a
        // synchronous command and for a call that cannot start.
        let error = ToolError::invalid_arguments("group", "/command: unknown command");
        assert_eq!(
            answer_of(finished(error)),
            "err Invalid arguments for tool 'group': /command: unknown command"
        );
        let tool = crate::FnTool::new(
            "sum",
            "Sum.",
            crate::Args::empty(),
            |_: ToolArgs<'_>| async { Ok(ToolCallResult::json(json!(1))) },
        );
        // An `FnTool` answers nothing synchronously: `started_now` says so, naming the tool.
        let arguments = ToolArguments::new();
        assert_eq!(
            answer_of(started_now(&tool, "sum", &arguments)),
            "err Tool 'sum' failed: the tool answered neither synchronously nor with a future"
        );
    }
}
