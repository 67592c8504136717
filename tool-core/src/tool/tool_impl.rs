//! [`ToolImpl`]: the one trait every tool implements.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use async_trait::async_trait;

use crate::tool::future_block::recycle;
use crate::{Tool, ToolArguments, ToolCallResult, ToolError, ToolRetryConfig};

/// The boxed future of a started call: what [`ToolImpl::execute`] (through `async_trait`)
/// and [`ToolImpl::execute_lent`] return.
pub type ToolFuture<'a> =
    Pin<Box<dyn Future<Output = Result<ToolCallResult, ToolError>> + Send + 'a>>;

/// How a call started by [`ToolImpl::start_call`] stands: finished, or a future to poll.
#[must_use = "a running call does nothing until its future is polled"]
pub enum CallStart<'a> {
    /// The call's result: it finished on the first poll it was given (or needed none, as a
    /// call whose arguments could not be read).
    Finished(Result<ToolCallResult, ToolError>),
    /// The call's future: not polled yet when `start_call` was given no first poll; polled
    /// once, and pending, when it was.
    Running(ToolFuture<'a>),
}

impl<'a> CallStart<'a> {
    /// `future`, polled once in `first_poll` when there is one: the result when it finished
    /// there (its block kept for the thread's next call future), else the future. What
    /// [`ToolImpl::start_call`] does by default with the future of
    /// [`execute_lent`](ToolImpl::execute_lent).
    pub fn poll_first(mut future: ToolFuture<'a>, first_poll: Option<&mut Context<'_>>) -> Self {
        let Some(cx) = first_poll else {
            return Self::Running(future);
        };
        match future.as_mut().poll(cx) {
            Poll::Ready(result) => {
                recycle(future);
                Self::Finished(result)
            }
            Poll::Pending => Self::Running(future),
        }
    }

    /// The call as a future: the result as a finished one, or the running future.
    pub fn into_future(self) -> ToolFuture<'a> {
        match self {
            Self::Finished(result) => Box::pin(std::future::ready(result)),
            Self::Running(future) => future,
        }
    }
}

impl std::fmt::Debug for CallStart<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Finished(result) => f.debug_tuple("Finished").field(result).finish(),
            Self::Running(_) => f.write_str("Running(..)"),
        }
    }
}

/// A tool: its definition, and how to run it.
///
/// Implement it by hand, or let `#[tool_fn]` write it. The arguments reach
/// [`execute`](Self::execute) already validated against the definition's schema when the call
/// goes through a [`ToolCallManager`](crate::ToolCallManager).
///
/// ```
/// use async_trait::async_trait;
/// use toolsmith_core::{Args, Tool, ToolArgs, ToolArguments, ToolCallResult, ToolDefinition,
///     ToolError, ToolImpl, scheme};
///
/// struct Greet;
///
/// #[async_trait]
/// impl ToolImpl for Greet {
///     fn definition(&self) -> Tool {
///         Tool::SingleCommand(ToolDefinition::new(
///             "greet",
///             "Greet someone by name.",
///             Args::new(scheme::object().required("name", scheme::string().min_len(1)).build()),
///         ))
///     }
///
///     async fn execute(&self, arguments: ToolArguments) -> Result<ToolCallResult, ToolError> {
///         let name = ToolArgs::new("greet", &arguments).str("name")?;
///         Ok(ToolCallResult::text(format!("Hello, {name}!")))
///     }
/// }
/// ```
#[async_trait]
pub trait ToolImpl: Send + Sync {
    /// The tool's shape: one command, or a group of commands.
    fn definition(&self) -> Tool;

    /// Runs the tool on the model's arguments.
    async fn execute(&self, arguments: ToolArguments) -> Result<ToolCallResult, ToolError>;

    /// Runs the call to its end without suspending, for a tool whose work is synchronous:
    /// `Some(result)` is the call's result, and [`execute`](Self::execute) is not called.
    /// `None` (the default) means the call goes through `execute`.
    ///
    /// A call answered here needs neither a copy of its arguments nor a boxed future.
    /// `#[tool_fn]` implements it for functions that are not `async` (and, in a command group,
    /// for the commands that are not). The manager calls it wherever it would call `execute`,
    /// with the same validated arguments, the same panic containment, and the same retries.
    ///
    /// ```
    /// # use async_trait::async_trait;
    /// # use toolsmith_core::{Args, Tool, ToolArgs, ToolArguments, ToolCallResult, ToolDefinition,
    /// #     ToolError, ToolImpl, scheme};
    /// # use serde_json::json;
    /// struct Add;
    ///
    /// impl Add {
    ///     fn add(arguments: &ToolArguments) -> Result<ToolCallResult, ToolError> {
    ///         let args = ToolArgs::new("add", arguments);
    ///         Ok(ToolCallResult::json(json!(args.i64("a")? + args.i64("b")?)))
    ///     }
    /// }
    ///
    /// #[async_trait]
    /// impl ToolImpl for Add {
    ///     fn definition(&self) -> Tool {
    ///         # Tool::SingleCommand(ToolDefinition::new("add", "Add two integers.", Args::new(
    ///         #     scheme::object().required("a", scheme::integer())
    ///         #         .required("b", scheme::integer()).build())))
    ///         // …
    ///     }
    ///
    ///     async fn execute(&self, arguments: ToolArguments) -> Result<ToolCallResult, ToolError> {
    ///         Self::add(&arguments)
    ///     }
    ///
    ///     fn execute_now(
    ///         &self,
    ///         arguments: &ToolArguments,
    ///     ) -> Option<Result<ToolCallResult, ToolError>> {
    ///         Some(Self::add(arguments))
    ///     }
    /// }
    /// ```
    fn execute_now(&self, arguments: &ToolArguments) -> Option<Result<ToolCallResult, ToolError>> {
        let _ = arguments;
        None
    }

    /// Whether [`execute_now`](Self::execute_now) may answer a call. The manager reads it
    /// once, when the tool is registered; `false` tells it never to try `execute_now` for this
    /// tool (a dynamic call and its panic guard saved on every call) and to start every call
    /// through [`execute_lent`](Self::execute_lent).
    ///
    /// The default, `true`, is right for every tool. `#[tool_fn]` answers `false` for a tool
    /// that has no synchronous calls (an `async` or blocking function, a group of `async`
    /// commands), and so does [`FnTool`](crate::FnTool).
    fn may_answer_now(&self) -> bool {
        true
    }

    /// Starts the call with its arguments lent rather than given: for a tool that reads
    /// them before its first await, which is every `#[tool_fn]` tool and every
    /// [`FnTool`](crate::FnTool). The returned future must not need the arguments (the
    /// signature lets it borrow only the tool).
    ///
    /// The manager starts every call that [`execute_now`](Self::execute_now) does not answer
    /// through this method (directly, or through [`start_call`](Self::start_call)'s
    /// default). The default gives [`execute`](Self::execute) a reference of its
    /// own to the arguments (a shared count, not a copy); a tool that overrides it saves
    /// that count's increment and decrement, two atomic writes a call.
    ///
    /// ```
    /// # use async_trait::async_trait;
    /// # use toolsmith_core::{Args, Tool, ToolArgs, ToolArguments, ToolCallResult, ToolDefinition,
    /// #     ToolError, ToolFuture, ToolImpl, scheme};
    /// struct Greet;
    ///
    /// #[async_trait]
    /// impl ToolImpl for Greet {
    ///     fn definition(&self) -> Tool {
    ///         # Tool::SingleCommand(ToolDefinition::new("greet", "Greet someone.", Args::new(
    ///         #     scheme::object().required("name", scheme::string()).build())))
    ///         // …
    ///     }
    ///
    ///     async fn execute(&self, arguments: ToolArguments) -> Result<ToolCallResult, ToolError> {
    ///         self.execute_lent(&arguments).await
    ///     }
    ///
    ///     fn execute_lent<'a>(&'a self, arguments: &ToolArguments) -> ToolFuture<'a> {
    ///         // Read now; the future owns what it needs.
    ///         let name = ToolArgs::new("greet", arguments).str("name").map(str::to_owned);
    ///         Box::pin(async move { Ok(ToolCallResult::text(format!("Hello, {}!", name?))) })
    ///     }
    /// }
    /// ```
    fn execute_lent<'a>(&'a self, arguments: &ToolArguments) -> ToolFuture<'a> {
        self.execute(arguments.clone())
    }

    /// Starts the call with its arguments lent, as [`execute_lent`](Self::execute_lent) does,
    /// and polls it once in `first_poll` when one is given: [`CallStart::Finished`] when the
    /// call finished there, else [`CallStart::Running`] with its future (polled once and
    /// pending, or not polled at all without `first_poll`).
    ///
    /// The manager starts a call this way when it can poll it at once (a call of
    /// [`execute_one`](crate::ToolCallManager::execute_one) without a time limit), so that a
    /// tool that knows its future's type can poll it without a dynamic call and take a
    /// finished one apart in place. The default polls the future of `execute_lent`
    /// ([`CallStart::poll_first`]), which is right for every tool; `#[tool_fn]` implements it
    /// for `async` functions, and `execute_lent` through it.
    ///
    /// An implementation must poll at most once, and only in `first_poll`: a `Running` future
    /// is polled next by whoever runs the call, with the waker of its own task.
    ///
    /// ```
    /// # use async_trait::async_trait;
    /// # use std::task::Context;
    /// # use toolsmith_core::{Args, CallStart, Tool, ToolArgs, ToolArguments, ToolCallResult,
    /// #     ToolDefinition, ToolError, ToolImpl, scheme};
    /// struct Greet;
    ///
    /// #[async_trait]
    /// impl ToolImpl for Greet {
    ///     fn definition(&self) -> Tool {
    ///         # Tool::SingleCommand(ToolDefinition::new("greet", "Greet someone.", Args::new(
    ///         #     scheme::object().required("name", scheme::string()).build())))
    ///         // …
    ///     }
    ///
    ///     async fn execute(&self, arguments: ToolArguments) -> Result<ToolCallResult, ToolError> {
    ///         self.start_call(&arguments, None).into_future().await
    ///     }
    ///
    ///     fn start_call<'a>(
    ///         &'a self,
    ///         arguments: &ToolArguments,
    ///         first_poll: Option<&mut Context<'_>>,
    ///     ) -> CallStart<'a> {
    ///         let name = match ToolArgs::new("greet", arguments).str("name") {
    ///             Ok(name) => name.to_owned(),
    ///             // Nothing to poll: the call is over.
    ///             Err(error) => return CallStart::Finished(Err(error)),
    ///         };
    ///         let future = Box::pin(async move { Ok(ToolCallResult::text(format!("Hello, {name}!"))) });
    ///         CallStart::poll_first(future, first_poll)
    ///     }
    /// }
    ///
    /// let arguments = ToolArguments::try_from(serde_json::json!({"name": "Ada"})).unwrap();
    /// let mut cx = Context::from_waker(std::task::Waker::noop());
    /// match Greet.start_call(&arguments, Some(&mut cx)) {
    ///     CallStart::Finished(result) => assert_eq!(result.unwrap().content.to_text(), "Hello, Ada!"),
    ///     CallStart::Running(_) => unreachable!("the greeting never waits"),
    /// }
    /// ```
    fn start_call<'a>(
        &'a self,
        arguments: &ToolArguments,
        first_poll: Option<&mut Context<'_>>,
    ) -> CallStart<'a> {
        CallStart::poll_first(self.execute_lent(arguments), first_poll)
    }

    /// The tool's own time limit, used when none is set on the manager.
    fn timeout(&self) -> Option<Duration> {
        None
    }

    /// The tool's own retry config, used when none is set on the manager. With `None` (the
    /// default) the tool is retried by the manager's default config if it is annotated
    /// read-only or idempotent, and not at all otherwise.
    fn retry_config(&self) -> Option<ToolRetryConfig> {
        None
    }
}
