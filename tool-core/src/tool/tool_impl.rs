//! [`ToolImpl`]: the one trait every tool implements.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;

use crate::{Tool, ToolArguments, ToolCallResult, ToolError, ToolRetryConfig};

/// The boxed future of a started call: what [`ToolImpl::execute`] (through `async_trait`)
/// and [`ToolImpl::execute_lent`] return.
pub type ToolFuture<'a> =
    Pin<Box<dyn Future<Output = Result<ToolCallResult, ToolError>> + Send + 'a>>;

/// A tool: its definition, and how to run it.
///
/// Implement it by hand, or let `#[tool_fn]` write it. The arguments reach
/// [`execute`](Self::execute) already validated against the definition's schema when the call
/// goes through a [`ToolCallManager`](crate::ToolCallManager).
///
/// Its async methods take the [`async_trait`](macro@crate::async_trait) attribute, which the
/// crate re-exports (no `async-trait` dependency of your own is needed).
///
/// ```
/// use std::sync::Arc;
/// use toolsmith::{Args, Tool, ToolArgs, ToolArguments, ToolCallManager, ToolCallRequest,
///     ToolCallResult, ToolDefinition, ToolError, ToolImpl, async_trait, scheme};
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
///
/// let manager = ToolCallManager::new("session");
/// manager.register(Arc::new(Greet)).unwrap();
/// let call = ToolCallRequest::new("1", "greet",
///     ToolArguments::from_iter([("name", serde_json::json!("Ada"))]));
/// let result = futures::executor::block_on(manager.execute_one(&call)).unwrap();
/// assert_eq!(result.content.to_text(), "Hello, Ada!");
/// ```
#[async_trait]
pub trait ToolImpl: Send + Sync {
    /// The tool's shape: one command, or a group of commands.
    fn definition(&self) -> Tool;

    /// The same definition as one shared value, which a manager keeps for as long as the
    /// tool is registered.
    ///
    /// A tool that keeps its definition (as [`FnTool`](crate::FnTool) and tools imported over
    /// MCP do) returns that value, so that registering it adds a reference rather than a
    /// copy: a definition is most of what a registered tool weighs (a few kilobytes of JSON
    /// schema), and a session may hold thousands. The default, right for a tool that builds
    /// its definition when asked (as `#[tool_fn]` tools do), builds a new
    /// [`definition`](Self::definition) and shares it with the tools of the same type: when
    /// it equals the one the type gave before, that one is returned (so every session that
    /// registers the tool holds one copy); a type whose instances give differing definitions
    /// gets a new one each time. Both methods must describe the same tool.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use async_trait::async_trait;
    /// use toolsmith::{Args, Tool, ToolArguments, ToolCallManager, ToolCallResult,
    ///     ToolDefinition, ToolError, ToolImpl, scheme};
    ///
    /// /// A tool described by a definition it was given (read from a catalogue, say).
    /// struct Listed(Arc<Tool>);
    ///
    /// #[async_trait]
    /// impl ToolImpl for Listed {
    ///     fn definition(&self) -> Tool {
    ///         Tool::clone(&self.0)
    ///     }
    ///
    ///     fn shared_definition(&self) -> Arc<Tool> {
    ///         Arc::clone(&self.0)
    ///     }
    ///
    ///     async fn execute(&self, _: ToolArguments) -> Result<ToolCallResult, ToolError> {
    ///         Ok(ToolCallResult::text("done"))
    ///     }
    /// }
    ///
    /// let definition = Arc::new(Tool::SingleCommand(ToolDefinition::new(
    ///     "listed",
    ///     "A listed tool.",
    ///     Args::new(scheme::object().build()),
    /// )));
    /// let manager = ToolCallManager::new("s");
    /// manager.register(Arc::new(Listed(Arc::clone(&definition)))).unwrap();
    /// // The manager holds the tool's own definition: no copy was made.
    /// assert_eq!(Arc::strong_count(&definition), 3);
    /// ```
    fn shared_definition(&self) -> Arc<Tool> {
        // Keyed by this type's `definition` method: equal definitions of one type are shared.
        let key = <Self as ToolImpl>::definition as fn(&Self) -> Tool as *const ();
        crate::tool::interned_definitions::intern(key, self.definition())
    }

    /// Runs the tool on the model's arguments.
    async fn execute(&self, arguments: ToolArguments) -> Result<ToolCallResult, ToolError>;

    /// Runs the call to its end without suspending, for a tool whose work is synchronous:
    /// setting `answer` to `Some(result)` answers the call, and [`execute`](Self::execute)
    /// is not called. Leaving it `None` (the default does) sends the call through
    /// `execute`.
    ///
    /// A call answered here needs neither a copy of its arguments nor a boxed future.
    /// `#[tool_fn]` implements it for functions that are not `async` (and, in a command group,
    /// for the commands that are not). The manager calls it wherever it would call `execute`,
    /// with the same validated arguments, the same panic containment, and the same retries,
    /// and always with `answer` set to `None`.
    ///
    /// The result is written where the manager reads it rather than returned: a result is
    /// about a hundred bytes, and each copy of it made just after it was written waits for
    /// those writes to reach the cache (the processor cannot forward them to wider reads),
    /// which cost a trivial call about 4 % of its time. A tool that builds its result
    /// in the assignment, as below, writes it once.
    ///
    /// ```
    /// # use async_trait::async_trait;
    /// # use toolsmith::{Args, Tool, ToolArgs, ToolArguments, ToolCallResult, ToolDefinition,
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
    ///         answer: &mut Option<Result<ToolCallResult, ToolError>>,
    ///     ) {
    ///         *answer = Some(Self::add(arguments));
    ///     }
    /// }
    ///
    /// let arguments = ToolArguments::try_from(json!({"a": 20, "b": 22})).unwrap();
    /// let mut answer = None;
    /// Add.execute_now(&arguments, &mut answer);
    /// assert_eq!(answer.unwrap().unwrap(), ToolCallResult::json(json!(42)));
    /// ```
    fn execute_now(
        &self,
        _arguments: &ToolArguments,
        _answer: &mut Option<Result<ToolCallResult, ToolError>>,
    ) {
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
    /// through this method. The default gives [`execute`](Self::execute) a reference of its
    /// own to the arguments (a shared count, not a copy); a tool that overrides it saves
    /// that count's increment and decrement, two atomic writes a call.
    ///
    /// ```
    /// # use async_trait::async_trait;
    /// # use toolsmith::{Args, Tool, ToolArgs, ToolArguments, ToolCallResult, ToolDefinition,
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
