//! [`FnTool`]: a tool made from a closure.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use futures::future::BoxFuture;

use crate::tool::future_block::boxed;
use crate::{
    Args, Tool, ToolAnnotations, ToolArgs, ToolArguments, ToolCallResult, ToolDefinition,
    ToolError, ToolFuture, ToolImpl,
};

type Handler =
    dyn Fn(ToolArgs<'_>) -> BoxFuture<'static, Result<ToolCallResult, ToolError>> + Send + Sync;

/// A tool whose body is a closure over a [`ToolArgs`](struct@crate::ToolArgs) reader.
///
/// The closure reads what it needs from the arguments, then returns a future that owns it.
///
/// ```
/// use toolsmith::{Args, FnTool, ToolArgs, ToolCallResult, ToolImpl, scheme};
///
/// let greet = FnTool::new(
///     "greet",
///     "Greet someone by name.",
///     Args::new(scheme::object().required("name", scheme::string().min_len(1)).build()),
///     |args: ToolArgs<'_>| {
///         let name = args.str("name").map(str::to_owned);
///         async move { Ok(ToolCallResult::text(format!("Hello, {}!", name?))) }
///     },
/// );
/// assert_eq!(greet.definition().name(), "greet");
/// ```
pub struct FnTool {
    /// Always one command; shared with the managers it is registered with.
    definition: Arc<Tool>,
    timeout: Option<Duration>,
    handler: Box<Handler>,
}

impl FnTool {
    /// A tool called `name` in the default category, running `handler` on each call.
    #[must_use]
    pub fn new<F, Fut>(
        name: impl Into<String>,
        description: impl Into<String>,
        arguments: Args,
        handler: F,
    ) -> Self
    where
        F: Fn(ToolArgs<'_>) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<ToolCallResult, ToolError>> + Send + 'static,
    {
        Self {
            definition: Arc::new(Tool::SingleCommand(ToolDefinition::new(
                name,
                description,
                arguments,
            ))),
            timeout: None,
            handler: Box::new(move |args| boxed(handler(args))),
        }
    }

    /// `self` with its one command's definition changed by `change` (while it is built, the
    /// definition is not shared yet, so nothing is copied).
    fn edit(mut self, change: impl FnOnce(&mut ToolDefinition)) -> Self {
        if let Tool::SingleCommand(definition) = Arc::make_mut(&mut self.definition) {
            change(definition);
        }
        self
    }

    /// Sets the category.
    #[must_use]
    pub fn with_category(self, category: impl Into<String>) -> Self {
        let category = category.into();
        self.edit(|definition| definition.category = category)
    }

    /// Declares the schema of the tool's structured result.
    #[must_use]
    pub fn with_returns(self, returns: Args) -> Self {
        self.edit(|definition| definition.returns = Some(returns))
    }

    /// Sets the behaviour hints.
    #[must_use]
    pub fn with_annotations(self, annotations: ToolAnnotations) -> Self {
        self.edit(|definition| definition.annotations = annotations)
    }

    /// Sets the tool's own time limit.
    #[must_use]
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }
}

impl std::fmt::Debug for FnTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FnTool")
            .field("definition", &self.definition)
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

#[async_trait]
impl ToolImpl for FnTool {
    fn definition(&self) -> Tool {
        Tool::clone(&self.definition)
    }

    fn shared_definition(&self) -> Arc<Tool> {
        Arc::clone(&self.definition)
    }

    async fn execute(&self, arguments: ToolArguments) -> Result<ToolCallResult, ToolError> {
        self.execute_lent(&arguments).await
    }

    /// The handler reads the arguments and returns a future that owns what it needs: the
    /// call's future is that future itself, with no second box around it.
    fn execute_lent<'a>(&'a self, arguments: &ToolArguments) -> ToolFuture<'a> {
        (self.handler)(ToolArgs::new(self.definition.name(), arguments))
    }

    /// Never: every call is the handler's future.
    fn may_answer_now(&self) -> bool {
        false
    }

    fn timeout(&self) -> Option<Duration> {
        self.timeout
    }
}
