//! The manager and its registry: tools registered, looked up without a lock, activated by
//! `shed`, and each call validated and run with its panics and time limit contained.
//!
//! [`ToolCallManager`]: a session's registry of tools, with validated, contained execution.

pub(crate) mod activation;
pub(crate) mod declarations;
pub(crate) mod definition_check;
pub(crate) mod execution_settings;
pub(crate) mod registry;
pub(crate) mod running_call;
pub(crate) mod suggestion;
#[cfg(test)]
mod time_limit_events;

use std::borrow::Cow;
use std::future::Future;
use std::mem::ManuallyDrop;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use futures::FutureExt as _;

use crate::generated::call::ToolFuture;
use crate::manager::activation::{ActiveMark, ActiveSet};
use crate::manager::registry::Registry;
use crate::manager::running_call::{RunningCall, poll_contained};
use crate::schema::first_use::CompiledOnFirstUse;
use crate::schema::validation::{ArgumentValidator, CompiledSchema};
use crate::shed::ToolDiscovery;
use crate::shed::name_directory::{NameDirectory, NameDirectoryCache};
use crate::shed::rendered_summary::RenderedSummary;
use crate::tool::error::panicked_with;
use crate::tool::future_block::recycle;
use crate::{
    SHED_TOOL_NAME, Tool, ToolArguments, ToolCallContext, ToolCallRequest, ToolCallResult,
    ToolDeclarations, ToolError, ToolImpl, ToolRetryConfig,
};

/// Why a tool could not be registered.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RegistrationError {
    /// A tool of that name is already registered; the first one stays.
    #[error("a tool named '{0}' is already registered")]
    DuplicateTool(String),
    /// The name is taken by the built-in `shed` meta-tool.
    #[error("the tool name '{0}' is reserved for the built-in meta-tool")]
    ReservedName(String),
    /// A tool or command name that providers would reject.
    #[error("{reason}")]
    InvalidName {
        /// The offending name.
        name: String,
        /// Why it is not accepted.
        reason: String,
    },
    /// Two commands of one group share a name.
    #[error("tool '{tool}' has two commands named '{command}'")]
    DuplicateCommand {
        /// The group.
        tool: String,
        /// The repeated command name.
        command: String,
    },
    /// A command group without commands.
    #[error("tool '{0}' is a command group with no commands")]
    NoCommands(String),
    /// An argument schema whose root `type` refuses every object
    /// ([`Args::root_type_refusing_objects`](crate::Args::root_type_refusing_objects)): a
    /// call's arguments are always a JSON object, so no call could pass it (and providers
    /// refuse a function whose parameters are not an object).
    #[error("the argument schema of tool '{tool}'{} has the root `\"type\": {declared}`, which no call's arguments (a JSON object) can match; write `\"type\": \"object\"`",
        .command.as_ref().map(|c| format!(" (command '{c}')")).unwrap_or_default())]
    ArgumentsNotAnObject {
        /// The tool.
        tool: String,
        /// The command whose schema it is, for a command group.
        command: Option<String>,
        /// The root's `type`, as JSON (cut when long).
        declared: String,
    },
    /// An argument schema that does not compile as JSON Schema.
    #[error("the argument schema of tool '{tool}'{} is not a valid JSON Schema: {reason}",
        .command.as_ref().map(|c| format!(" (command '{c}')")).unwrap_or_default())]
    InvalidSchema {
        /// The tool.
        tool: String,
        /// The command whose schema failed, for a command group.
        command: Option<String>,
        /// What the schema compiler said.
        reason: String,
    },
    /// A `returns` schema that does not compile as JSON Schema.
    #[error("the result schema (`returns`) of tool '{tool}' is not a valid JSON Schema: {reason}")]
    InvalidReturnsSchema {
        /// The tool.
        tool: String,
        /// What the schema compiler said.
        reason: String,
    },
}

/// One registered tool: its definition, checked at registration, and its compiled schemas,
/// compiled on its first call (see [`CompiledOnFirstUse`]).
#[derive(Clone)]
pub(crate) struct RegisteredTool {
    pub(crate) tool: Arc<dyn ToolImpl>,
    pub(crate) definition: Arc<Tool>,
    validator: CompiledOnFirstUse<ArgumentValidator>,
    pub(crate) timeout: Option<Duration>,
    /// [`ToolImpl::may_answer_now`], read once here rather than asked on every call.
    answers_now: bool,
    returns: CompiledOnFirstUse<Option<CompiledSchema>>,
    /// The tool's place in the registration order (set by the registry).
    pub(crate) registration: u64,
    /// Its summary as `shed` writes it, rendered when `shed` first returns it.
    pub(crate) summary: RenderedSummary,
    /// Set once the tool is active.
    pub(crate) active: ActiveMark,
}

impl RegisteredTool {
    /// `tool`, registered with `definition`, its
    /// [`shared_definition`](ToolImpl::shared_definition): the tool's own when it keeps one,
    /// so registering adds no copy of it.
    fn prepare(
        tool: Arc<dyn ToolImpl>,
        mut definition: Arc<Tool>,
    ) -> Result<Self, RegistrationError> {
        // Every check that does not depend on the registry (the schemas compiled and dropped:
        // they are compiled again on first use).
        definition.check()?;
        // A definition no one else holds (one the tool built when asked) is kept with its
        // schemas as text, a fraction of the trees' memory; a tool's own stays as it is.
        if let Some(alone) = Arc::get_mut(&mut definition) {
            alone.compact_schemas();
        }
        Ok(Self {
            returns: CompiledOnFirstUse::default(),
            timeout: tool.timeout(),
            answers_now: tool.may_answer_now(),
            tool,
            definition,
            validator: CompiledOnFirstUse::default(),
            registration: 0,
            summary: RenderedSummary::default(),
            active: ActiveMark::default(),
        })
    }

    /// Checks a call's arguments (see [`ArgumentValidator::check`]), compiling the tool's
    /// argument schemas on its first call.
    #[inline]
    pub(crate) fn check_arguments<'a>(
        &self,
        name: &str,
        arguments: &'a ToolArguments,
    ) -> Result<Cow<'a, ToolArguments>, ToolError> {
        self.validator
            .get_or_compile(|| compile_arguments(&self.definition).map_err(|err| err.to_string()))
            .map_err(|reason| ToolError::execution(name, reason))?
            .check(name, arguments)
    }

    /// Compiles the tool's schemas now, if no call has yet.
    fn compile_now(&self) {
        let _ = self
            .validator
            .get_or_compile(|| compile_arguments(&self.definition).map_err(|err| err.to_string()));
        let _ = self.returns_schema();
    }

    /// The tool's compiled `returns` schema, if it declares one, compiled on first use.
    pub(crate) fn returns_schema(&self) -> Result<Option<&CompiledSchema>, String> {
        self.returns
            .get_or_compile(|| compile_returns(&self.definition).map_err(|err| err.to_string()))
            .map(Option::as_ref)
            .map_err(str::to_owned)
    }

    /// Runs the tool on validated arguments, containing panics and applying the time limit.
    pub(crate) async fn run(
        &self,
        name: &str,
        arguments: Cow<'_, ToolArguments>,
    ) -> Result<ToolCallResult, ToolError> {
        if self.answers_now {
            let mut answer = None;
            self.answer_now(name, &arguments, &mut answer);
            if let Some(answer) = answer {
                return answer;
            }
        }
        let mut future = self.start(&arguments)?;
        let result = std::future::poll_fn(|cx| poll_contained(name, &mut future, cx)).await;
        // Its block serves the next call's future. A panic as the future is dropped is the
        // call's, as a panic while it ran is.
        match std::panic::catch_unwind(AssertUnwindSafe(|| recycle(future))) {
            Ok(()) => result,
            Err(payload) => Err(panicked_with(name, payload)),
        }
    }

    /// The answer of [`ToolImpl::execute_now`] (the arguments only lent), written to
    /// `answer` (which is `None`) when the tool gives one; a panic there is an execution
    /// error. Callers ask it only of a tool that may answer there (`answers_now`, from
    /// [`ToolImpl::may_answer_now`]): a tool that never does costs them no answer slot.
    /// Inlined, so that the tool writes its answer where the caller reads it.
    #[inline]
    fn answer_now(
        &self,
        name: &str,
        arguments: &ToolArguments,
        answer: &mut Option<Result<ToolCallResult, ToolError>>,
    ) {
        let tool = &*self.tool;
        if let Err(payload) =
            std::panic::catch_unwind(AssertUnwindSafe(|| tool.execute_now(arguments, answer)))
        {
            // Whatever the tool wrote before it panicked, the panic is the call's answer.
            *answer = Some(Err(panicked_with(name, payload)));
        }
    }

    /// The future of the call (`execute_lent`), under the tool's time limit when it has one;
    /// a panic while creating it is an execution error. The future borrows nothing but
    /// `self`, and its panics are left to whoever polls it (`poll_contained`).
    pub(crate) fn start(&self, arguments: &ToolArguments) -> Result<ToolFuture<'_>, ToolError> {
        let name = self.definition.name();
        let tool = &*self.tool;
        // Under a time limit and a call's context, the attempt gets a token of its own, which
        // the limit fires so that work the tool handed elsewhere hears of it (a retry gets a
        // fresh one). It is the current context from the start, so that a tool reading it as
        // the call starts (`#[ctx] ToolCallContext`) holds the attempt's.
        let attempt = self
            .timeout
            .and_then(|_| ToolCallContext::current())
            .map(|context| context.attempt());
        let start = || std::panic::catch_unwind(AssertUnwindSafe(|| tool.execute_lent(arguments)));
        let future = match &attempt {
            Some(context) => context.clone().enter(start),
            None => start(),
        }
        .map_err(|payload| panicked_with(name, payload))?;
        Ok(match self.timeout {
            None => future,
            // Boxed so that the timer's state does not grow every call's future.
            Some(limit) => Box::pin(finish_within(
                name,
                limit,
                attempt,
                AssertUnwindSafe(future).catch_unwind(),
            )),
        })
    }
}

/// The argument validators of `definition`, or the registration error that refuses it.
fn compile_arguments(definition: &Tool) -> Result<ArgumentValidator, RegistrationError> {
    ArgumentValidator::compile(definition).map_err(|(command, reason)| {
        RegistrationError::InvalidSchema {
            tool: definition.name().to_owned(),
            command,
            reason,
        }
    })
}

/// The compiled `returns` schema of `definition`, or the registration error that refuses it.
fn compile_returns(definition: &Tool) -> Result<Option<CompiledSchema>, RegistrationError> {
    crate::schema::returns::compile_returns(definition).map_err(|reason| {
        RegistrationError::InvalidReturnsSchema {
            tool: definition.name().to_owned(),
            reason,
        }
    })
}

/// A running tool's future raced against its time limit, under its attempt's context when
/// it has one.
async fn finish_within<F>(
    name: &str,
    limit: Duration,
    attempt: Option<ToolCallContext>,
    future: F,
) -> Result<ToolCallResult, ToolError>
where
    F: Future<Output = std::thread::Result<Result<ToolCallResult, ToolError>>>,
{
    if tokio::runtime::Handle::try_current().is_err() {
        return Err(ToolError::execution(
            name,
            "a time limit is set for this tool, and time limits need a Tokio runtime",
        ));
    }
    let future = match &attempt {
        Some(context) => futures::future::Either::Left(context.clone().scope(future)),
        None => futures::future::Either::Right(future),
    };
    match tokio::time::timeout(limit, future).await {
        Ok(finished) => finished.unwrap_or_else(|payload| Err(panicked_with(name, payload))),
        Err(_) => {
            if let Some(context) = attempt {
                context.cancellation().cancel();
            }
            // `ToolError::Timeout` names only the tool (its shape is the specification's):
            // the log says which limit expired.
            tracing::debug!(tool = name, limit = ?limit, "a tool call timed out: its time limit expired");
            Err(ToolError::timeout(name))
        }
    }
}

/// A session's tools: registration, validation and execution.
///
/// The manager is shared across tasks (`Send + Sync`, every method takes `&self`). Schemas are
/// checked when a tool is registered and compiled once, on its first call. Calls look tools
/// up without a lock, and changes never wait for calls, so registering while calls run neither
/// blocks nor deadlocks them (a tool may even register or remove tools while it runs). A removed tool is released once
/// the calls that were running when it was removed have ended.
///
/// Any executor runs a call. Time limits, batch deadlines and waits between retries use
/// Tokio's timer: outside a Tokio runtime such a call is an error that says so, but in a
/// runtime built without its timer (a `Builder` without `enable_time()` or `enable_all()`;
/// `#[tokio::main]` has it) Tokio panics when the timer is asked for, and Tokio offers no
/// way to ask first.
///
/// ```
/// use std::sync::Arc;
/// use toolsmith::{Args, FnTool, ToolArgs, ToolArguments, ToolCallManager, ToolCallRequest,
///     ToolCallResult, ToolErrorKind, scheme};
/// use serde_json::json;
///
/// # futures::executor::block_on(async {
/// let manager = ToolCallManager::new("session-1");
/// manager.register(Arc::new(FnTool::new(
///     "add",
///     "Add two integers.",
///     Args::new(scheme::object()
///         .required("a", scheme::integer())
///         .required("b", scheme::integer())
///         .build()),
///     |args: ToolArgs<'_>| {
///         let sum = args.i64("a").and_then(|a| Ok(a + args.i64("b")?));
///         async move { Ok(ToolCallResult::json(json!(sum?))) }
///     },
/// ))).unwrap();
///
/// let call = |args| ToolCallRequest::new("call-1", "add",
///     ToolArguments::try_from(args).unwrap());
/// let result = manager.execute_one(&call(json!({"a": 2, "b": "3"}))).await.unwrap();
/// assert_eq!(result.content.to_text(), "5");
///
/// let err = manager.execute_one(&call(json!({"a": 2}))).await.unwrap_err();
/// assert_eq!(err.kind(), ToolErrorKind::InvalidArguments);
/// assert_eq!(err.to_string(), "Invalid arguments for tool 'add': \"b\" is a required property");
/// # });
/// ```
pub struct ToolCallManager {
    session_id: String,
    registry: Registry,
    pub(crate) active: ActiveSet,
    pub(crate) renders: crate::provider::RenderCache,
    pub(crate) execution: crate::manager::execution_settings::ExecutionSettings,
    /// The search behind `shed`; updated within the registry's changes, so it never disagrees
    /// with the registry.
    pub(crate) discovery: ToolDiscovery,
    /// The names as `shed` explanations compare them, rebuilt after the names change.
    pub(crate) name_directory: NameDirectoryCache,
}

impl std::fmt::Debug for ToolCallManager {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolCallManager")
            .field("session_id", &self.session_id)
            .field("tools", &self.names())
            .finish_non_exhaustive()
    }
}

impl ToolCallManager {
    /// An empty manager for the session `session_id`.
    pub fn new(session_id: impl Into<String>) -> Self {
        Self {
            session_id: session_id.into(),
            registry: Registry::default(),
            active: ActiveSet::default(),
            renders: Default::default(),
            execution: Default::default(),
            discovery: ToolDiscovery::default(),
            name_directory: NameDirectoryCache::default(),
        }
    }

    /// The session this manager belongs to.
    pub fn session_id(&self) -> &str {
        &self.session_id
    }

    /// Registers a tool: checks its names and that its schemas compile, and adds it (the
    /// schemas are compiled for validation on the tool's first call).
    ///
    /// Fails, leaving the registry as it was, when the name is taken (the first tool stays),
    /// reserved (`shed`), or not of the form providers accept (`^[a-zA-Z0-9_-]{1,64}$`, for
    /// the tool and each command), or when a schema does not compile. All but the first are
    /// [`Tool::check`], which tells beforehand whether a definition would be refused.
    pub fn register(&self, tool: Arc<dyn ToolImpl>) -> Result<(), RegistrationError> {
        let definition = tool.shared_definition();
        self.register_defined(tool, definition)
    }

    /// [`register`](Self::register) with the tool's definition as its
    /// [`shared_definition`](ToolImpl::shared_definition) gave it already (a `ToolShed`
    /// checks the name first): a tool that builds its definition when asked builds it once.
    pub(crate) fn register_defined(
        &self,
        tool: Arc<dyn ToolImpl>,
        definition: Arc<Tool>,
    ) -> Result<(), RegistrationError> {
        // Prepared outside the change: compiling schemas can take a while.
        let prepared = RegisteredTool::prepare(tool, definition)?;
        let name: Arc<str> = Arc::from(prepared.definition.name());
        let mut change = self.registry.change();
        if change.get(&name).is_some() {
            return Err(RegistrationError::DuplicateTool(name.to_string()));
        }
        let entry = change.insert(name, prepared);
        // Indexed with its entry, which `shed` then finds without a look-up by name.
        self.discovery.insert_registered(&entry);
        drop(change);
        self.renders.invalidate();
        Ok(())
    }

    /// Removes a tool, returning it; later calls to it are `UnknownTool`. Calls already
    /// running finish, and the manager lets go of the tool once the calls that were running
    /// when it was removed have ended.
    ///
    /// Precisely: a call borrows its tool from the registry, without a reference of its own,
    /// for its synchronous part (the look-up, the validation, a synchronous answer, an async
    /// tool's first poll), and a removed tool is released once every call that was inside
    /// such a part when it was removed (of any tool) has left it. A call that suspends holds
    /// its own reference until it ends. With more than 64 threads inside synchronous parts at
    /// the moment of removal, release waits for the next change, or the manager's drop.
    pub fn deregister(&self, name: &str) -> Option<Arc<dyn ToolImpl>> {
        let mut change = self.registry.change();
        // Out of the index first: a search that still finds the tool (with its entry) ran
        // while it was registered.
        self.discovery.remove(name);
        let removed = change.remove(name).map(|entry| Arc::clone(&entry.tool));
        // Still under the change, so that a tool registered anew under this name cannot be
        // activated (and its registration marked active) before its name leaves the set.
        self.active.deactivate(name);
        // A retry config set for the tool goes with it, as a time limit set for it does: a
        // tool registered anew under the name starts from its own.
        if removed.is_some() {
            self.execution.set_retry_config(name, None);
        }
        drop(change);
        self.renders.invalidate();
        removed
    }

    /// Sets the retry config of the registered tool `name`, under the registry's change lock
    /// so that a removal cannot come between the check and the setting (and leave the config
    /// to a tool registered later under the name); `false` when no such tool is registered.
    pub(crate) fn set_registered_retry_config(&self, name: &str, config: ToolRetryConfig) -> bool {
        let _change = self.registry.change();
        if !self.contains(name) {
            return false;
        }
        self.execution.set_retry_config(name, Some(config));
        true
    }

    /// Runs `f` over every registered definition while registration waits, so an index
    /// built from them stays in step with the registry.
    pub(crate) fn with_definitions<R>(
        &self,
        f: impl FnOnce(&mut dyn Iterator<Item = &Tool>) -> R,
    ) -> R {
        self.registry.with_definitions(f)
    }

    /// Runs `f` over every registered definition, in registration order, without holding up
    /// changes and without copying them: for work that needs no index kept in step with the
    /// registry (a `shed` explanation, a model client's check of what it can declare), so
    /// that a registration never waits for it.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use toolsmith::{Args, FnTool, ToolArgs, ToolCallManager, ToolCallResult};
    ///
    /// let manager = ToolCallManager::new("s");
    /// manager.register(Arc::new(FnTool::new("ping", "Answers pong.", Args::empty(),
    ///     |_: ToolArgs<'_>| async { Ok(ToolCallResult::text("pong")) }))).unwrap();
    /// let names: Vec<String> =
    ///     manager.definitions_in_order(|tools| tools.map(|t| t.name().to_owned()).collect());
    /// assert_eq!(names, ["ping"]);
    /// ```
    pub fn definitions_in_order<R>(
        &self,
        f: impl FnOnce(&mut dyn Iterator<Item = &Tool>) -> R,
    ) -> R {
        self.registry
            .in_order(|entries| f(&mut entries.map(|entry| &*entry.definition)))
    }

    /// The registered names as `shed` explanations compare them: built from the registry
    /// on first use after its names changed, then shared. Built without holding up changes;
    /// one made while a change lands is replaced on the next use.
    pub(crate) fn name_directory(&self) -> Arc<NameDirectory> {
        // Read before the names are: a change during the build leaves the directory older
        // than the registry, and it is built again.
        let generation = self.registry.generation();
        self.name_directory.get_or_build(generation, || {
            self.definitions_in_order(|tools| {
                NameDirectory::of(tools.map(|tool| (tool.name(), tool.category())))
            })
        })
    }

    pub(crate) fn entry(&self, name: &str) -> Option<Arc<RegisteredTool>> {
        self.registry.entry(name)
    }

    /// How many times tools have been registered, changed or removed, and retry settings
    /// changed, so far: a call prepared at one pair is still to the registered tool, with
    /// the retry config that applies to it, while the pair has not moved.
    pub(crate) fn preparation_generation(&self) -> (u64, u64) {
        (
            self.registry.generation(),
            self.execution.retry_generation(),
        )
    }

    fn entry_or_unknown(&self, name: &str) -> Result<Arc<RegisteredTool>, ToolError> {
        self.entry(name)
            .ok_or_else(|| ToolError::UnknownTool(name.to_owned()))
    }

    /// The tool registered as `name`.
    pub fn get(&self, name: &str) -> Option<Arc<dyn ToolImpl>> {
        self.entry(name).map(|entry| Arc::clone(&entry.tool))
    }

    /// Whether a tool is registered as `name`.
    pub fn contains(&self, name: &str) -> bool {
        self.registry.contains(name)
    }

    /// The definition of the tool registered as `name`, as it was when registered.
    pub fn get_def(&self, name: &str) -> Option<Tool> {
        self.entry(name).map(|entry| Tool::clone(&entry.definition))
    }

    /// The annotations that apply to a call of `name` with `arguments`
    /// ([`Tool::call_annotations`]: the tool's, or for a command group the called command's),
    /// read in place: `None` when no tool is registered as `name`. Cheaper than
    /// [`get_def`](Self::get_def), which copies the whole definition, for a check made on
    /// every call (an approval policy asking whether a call is destructive).
    ///
    /// ```
    /// use std::sync::Arc;
    /// use toolsmith::{Args, FnTool, ToolArgs, ToolArguments, ToolCallManager, ToolCallResult};
    /// use toolsmith::{ToolAnnotations, scheme};
    ///
    /// let manager = ToolCallManager::new("s");
    /// let tool = FnTool::new("rm", "Removes a file.", Args::new(scheme::object().build()),
    ///     |_: ToolArgs<'_>| async { Ok(ToolCallResult::text("removed")) })
    ///     .with_annotations(ToolAnnotations { destructive: Some(true), ..Default::default() });
    /// manager.register(Arc::new(tool)).unwrap();
    /// let arguments = ToolArguments::default();
    /// assert_eq!(manager.call_annotations("rm", &arguments).unwrap().destructive, Some(true));
    /// assert!(manager.call_annotations("mv", &arguments).is_none());
    /// ```
    pub fn call_annotations(
        &self,
        name: &str,
        arguments: &crate::ToolArguments,
    ) -> Option<crate::ToolAnnotations> {
        self.entry(name)
            .map(|entry| entry.definition.call_annotations(arguments))
    }

    /// The registered tool names, in registration order.
    pub fn names(&self) -> Vec<String> {
        self.registry.in_order(|entries| {
            entries
                .map(|entry| entry.definition.name().to_owned())
                .collect()
        })
    }

    /// Compiles the schemas of every registered tool now rather than on its first call (the
    /// specification's `warm_cache`), and returns how many tools there are. For a server
    /// whose first calls should be as fast as the others; a session of thousands of tools
    /// that calls a few is better off without (a compiled tool takes a few KB more). Tools
    /// registered later are compiled on their first call, as usual.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use toolsmith::{Args, FnTool, ToolArgs, ToolCallManager, ToolCallResult, scheme};
    ///
    /// let manager = ToolCallManager::new("s");
    /// manager.register(Arc::new(FnTool::new("ping", "Answers pong.",
    ///     Args::new(scheme::object().build()),
    ///     |_: ToolArgs<'_>| async { Ok(ToolCallResult::text("pong")) }))).unwrap();
    /// assert_eq!(manager.warm_cache(), 1);
    /// ```
    pub fn warm_cache(&self) -> usize {
        self.registry.in_order(|entries| {
            let mut compiled = 0;
            for entry in entries {
                entry.compile_now();
                compiled += 1;
            }
            compiled
        })
    }

    /// The number of registered tools.
    pub fn len(&self) -> usize {
        self.registry.len()
    }

    /// Whether no tool is registered.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Every registered tool, declared directly (no `shed`), in registration order: for
    /// inspection, or for a loop that offers every tool up front.
    pub fn all_declarations(&self) -> ToolDeclarations {
        ToolDeclarations {
            shed: None,
            tools: self.registry.in_order(|entries| {
                entries
                    .map(|entry| Tool::clone(&entry.definition))
                    .collect()
            }),
        }
    }

    /// Sets the time limit of the tool `name` (replacing its own); a call that takes longer
    /// is [`ToolError::Timeout`] and its future is dropped.
    ///
    /// The limit is checked when the call's future yields: a tool that blocks its thread
    /// (a long computation or a blocking read inside an `async fn`, with no `.await`) is not
    /// stopped mid-way, and a result it finishes with before it yields is kept, however
    /// late. Such work belongs in `#[tool_fn(blocking)]` or `tokio::task::spawn_blocking`,
    /// whose waiting the limit does end (the blocking work itself runs on to its end).
    pub fn set_timeout(&self, name: &str, timeout: Option<Duration>) -> Result<(), ToolError> {
        let mut change = self.registry.change();
        match change.update(name, |entry| entry.timeout = timeout) {
            Some(updated) => {
                // The index hands out the entry it holds: the current one.
                self.discovery.replace_registered(&updated);
                Ok(())
            }
            None => Err(ToolError::UnknownTool(name.to_owned())),
        }
    }

    /// The time limit of the tool `name`, if it has one.
    pub fn timeout(&self, name: &str) -> Option<Duration> {
        self.entry(name).and_then(|entry| entry.timeout)
    }

    /// Checks arguments against the schema of the tool `name` (for a command group, of the
    /// command named by the `command` argument), and returns them as the tool would receive
    /// them: numbers and booleans sent as strings read as such, optional arguments sent as
    /// `null` left out.
    pub fn validate_arguments(
        &self,
        name: &str,
        arguments: &ToolArguments,
    ) -> Result<ToolArguments, ToolError> {
        let entry = self.entry_or_unknown(name)?;
        entry.check_arguments(name, arguments).map(Cow::into_owned)
    }

    /// Runs one call: looks the tool up, validates the arguments (an invalid call does not
    /// run), and runs the tool with its panics contained and its time limit applied. A call
    /// to `shed` runs the built-in meta-tool.
    ///
    /// The tool runs once: its retry config (`#[tool_fn(retries = N)]`,
    /// [`set_retry_config`](Self::set_retry_config), the default for read-only and idempotent
    /// tools) is followed by [`execute_with_retry`](Self::execute_with_retry) and by batches
    /// ([`execute_batch`](Self::execute_batch), [`execute_turn`](Self::execute_turn), so every
    /// agent turn), which also count the attempts.
    ///
    /// The call's id, dependencies and scheduling hint are not used here (they matter to
    /// batches); [`execute_call`](Self::execute_call) runs the same call from a borrowed name
    /// and arguments.
    pub fn execute_one<'a>(
        &'a self,
        request: &'a ToolCallRequest,
    ) -> impl Future<Output = Result<ToolCallResult, ToolError>> + Send + 'a {
        // The request itself, one reference, is what the future holds (see `CallParts`).
        self.run_call(request)
    }

    /// Runs one call of the tool `name` with `arguments`, as [`execute_one`](Self::execute_one)
    /// does, from borrowed parts: for a caller that holds the tool's name as a `&str` (a
    /// server's request, a parsed response it keeps) and would otherwise copy it, and an id
    /// it does not need, into a [`ToolCallRequest`] for this one call.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use serde_json::json;
    /// use toolsmith::{ToolArguments, ToolCallManager, tool_fn};
    ///
    /// /// Add two integers.
    /// #[tool_fn]
    /// fn add(a: i64, b: i64) -> i64 { a + b }
    ///
    /// # futures::executor::block_on(async {
    /// let manager = ToolCallManager::new("s");
    /// manager.register(Arc::new(Add)).unwrap();
    /// let arguments = ToolArguments::try_from(json!({"a": 2, "b": 3})).unwrap();
    /// let result = manager.execute_call("add", &arguments).await.unwrap();
    /// assert_eq!(result.content.to_text(), "5");
    /// # });
    /// ```
    pub fn execute_call<'a>(
        &'a self,
        name: &'a str,
        arguments: &'a ToolArguments,
    ) -> impl Future<Output = Result<ToolCallResult, ToolError>> + Send + 'a {
        self.run_call((name, arguments))
    }

    /// The future of [`execute_one`](Self::execute_one) and
    /// [`execute_call`](Self::execute_call): the call's name and arguments are read from
    /// `call` at each poll, so that the future holds `call` as given.
    fn run_call<'a, C: CallParts<'a>>(&'a self, call: C) -> CallFuture<'a, C> {
        CallFuture {
            manager: self,
            call,
            state: CallState::Start,
        }
    }

    /// A call's first poll. A synchronous answer, or an async tool's first poll, borrows the
    /// tool from the pinned registry; only a call that suspends takes a reference of its own
    /// (into `suspended`), as the pin cannot cross an await. Few words live across the
    /// caller's await: callers move that future, and a large one costs a copy of its whole
    /// state on every call.
    fn start_one(
        &self,
        name: &str,
        arguments: &ToolArguments,
        suspended: &mut Option<RunningCall>,
        cx: &mut Context<'_>,
    ) -> Poll<Result<ToolCallResult, ToolError>> {
        let registry = self.registry.pin();
        let Some(entry) = registry.get(name) else {
            return Poll::Ready(Err(ToolError::UnknownTool(name.to_owned())));
        };
        let arguments = match entry.check_arguments(name, arguments) {
            Ok(arguments) => arguments,
            Err(err) => return Poll::Ready(Err(err)),
        };
        // Asked only of a tool that may answer: an `async` tool's call makes no answer slot.
        if entry.answers_now {
            let mut answer = None;
            entry.answer_now(name, &arguments, &mut answer);
            if answer.is_some() {
                // The pin is left before the answer moves to the caller: leaving it (an atomic
                // swap) waits for the tool's writes of the answer to reach the cache, and a
                // copy that read them before that would wait longer (writes are not forwarded
                // to the wider reads of a copy). So the answer is moved only after it, whole.
                drop(registry);
                return answer.map_or(Poll::Pending, Poll::Ready);
            }
        }
        if entry.timeout.is_none() {
            // Started, polled, and kept or recycled under one panic guard: the usual call,
            // which ends on its first poll, pays for one guard rather than two, and its
            // answer is the guard's (no copy on its way out).
            let tool = &*entry.tool;
            return std::panic::catch_unwind(AssertUnwindSafe(|| {
                let mut future = tool.execute_lent(&arguments);
                let poll = future.as_mut().poll(cx);
                keep_or_recycle(entry, future, poll.is_pending(), suspended);
                poll
            }))
            .unwrap_or_else(|payload| Poll::Ready(Err(panicked_with(name, payload))));
        }
        let mut future = match entry.start(&arguments) {
            Ok(future) => future,
            Err(err) => return Poll::Ready(Err(err)),
        };
        let poll = poll_contained(name, &mut future, cx);
        keep_or_recycle(entry, future, poll.is_pending(), suspended);
        poll
    }
}

/// A started call's future after its first poll: kept in `suspended` with a reference to
/// the tool when it suspended, else its block left to the next call's future.
#[inline]
fn keep_or_recycle(
    entry: &Arc<RegisteredTool>,
    future: ToolFuture<'_>,
    pending: bool,
    suspended: &mut Option<RunningCall>,
) {
    if pending {
        // SAFETY: `future` was started on `**entry`, the value the new reference points to.
        *suspended = Some(unsafe { RunningCall::new(Arc::clone(entry), future) });
    } else {
        recycle(future);
    }
}

/// The future of one call of [`ToolCallManager::execute_one`] or
/// [`ToolCallManager::execute_call`], written out rather than an `async fn`: callers move it
/// and poll it once for most calls, so it holds only the call, where it is, and what it is
/// waiting for.
struct CallFuture<'a, C> {
    manager: &'a ToolCallManager,
    call: C,
    state: CallState<'a>,
}

/// Where a call is: not started, running a tool that suspended, running `shed`, or done.
///
/// Without drop glue of its own: what a running state holds is dropped by
/// [`finish`](Self::finish), inlined, so that a call that never suspended (the usual one)
/// pays a test of the state when its future is dropped, not a call of drop glue.
enum CallState<'a> {
    Start,
    Running(ManuallyDrop<RunningCall>),
    // Boxed: the meta-tool's search state would otherwise grow every call's future.
    Shed(ManuallyDrop<ToolFuture<'a>>),
    Done,
}

impl CallState<'_> {
    /// Drops what the state holds, and leaves it `Done`.
    #[inline(always)]
    fn finish(&mut self) {
        if matches!(self, Self::Running(_) | Self::Shed(_)) {
            self.drop_running();
        }
    }

    /// [`finish`](Self::finish) for a state that holds a future: out of line, as few calls
    /// get there.
    #[inline(never)]
    fn drop_running(&mut self) {
        match std::mem::replace(self, Self::Done) {
            Self::Running(call) => drop(ManuallyDrop::into_inner(call)),
            Self::Shed(shed) => drop(ManuallyDrop::into_inner(shed)),
            Self::Start | Self::Done => {}
        }
    }
}

impl<C> Drop for CallFuture<'_, C> {
    #[inline]
    fn drop(&mut self) {
        if matches!(self.state, CallState::Running(_) | CallState::Shed(_)) {
            drop_abandoned(&mut self.state);
        }
    }
}

/// Drops the future of a call whose caller gave up on it (its own time limit, a client's
/// cancellation): a tool's future that panics as it is dropped (a guard of its own, say)
/// would otherwise unwind into that caller. The panic is logged, as a batch logs it.
#[inline(never)]
fn drop_abandoned(state: &mut CallState<'_>) {
    crate::tool::error::drop_stopped_call(|| state.finish());
}

impl<'a, C: CallParts<'a>> CallFuture<'a, C> {
    /// The end of a call that suspended: its future dropped, and `result` its answer, unless
    /// the future panicked as it was dropped, which is the call's error as a panic while it
    /// ran is. Out of line: most calls end on their first poll, without a future kept.
    #[inline(never)]
    fn finish_running(
        &mut self,
        result: Result<ToolCallResult, ToolError>,
    ) -> Result<ToolCallResult, ToolError> {
        match std::panic::catch_unwind(AssertUnwindSafe(|| self.state.finish())) {
            Ok(()) => result,
            Err(payload) => Err(panicked_with(self.call.name(), payload)),
        }
    }

    /// The first poll of a call of `shed`: its future is kept only when it suspends.
    #[inline(never)]
    fn start_shed(&mut self, cx: &mut Context<'_>) -> Poll<Result<ToolCallResult, ToolError>> {
        let mut shed: ToolFuture<'a> = Box::pin(self.manager.execute_shed(self.call.arguments()));
        let poll = shed.as_mut().poll(cx);
        self.state = match poll {
            Poll::Pending => CallState::Shed(ManuallyDrop::new(shed)),
            Poll::Ready(_) => CallState::Done,
        };
        poll
    }
}

impl<'a, C: CallParts<'a>> Future for CallFuture<'a, C> {
    type Output = Result<ToolCallResult, ToolError>;

    fn poll(self: std::pin::Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        // Every field is `Unpin` (references, the boxed futures and an `Arc`).
        let this = self.get_mut();
        let poll = match &mut this.state {
            CallState::Start => {
                let name = this.call.name();
                if name == SHED_TOOL_NAME {
                    return this.start_shed(cx);
                }
                let mut suspended = None;
                let poll = this
                    .manager
                    .start_one(name, this.call.arguments(), &mut suspended, cx);
                // Replaces `Start`, which holds nothing.
                this.state = match suspended {
                    Some(call) => CallState::Running(ManuallyDrop::new(call)),
                    None => CallState::Done,
                };
                return poll;
            }
            CallState::Running(call) => call.poll(this.call.name(), cx),
            CallState::Shed(shed) => shed.as_mut().poll(cx),
            CallState::Done => panic!("a tool call's future polled after it finished"),
        };
        match poll {
            Poll::Ready(result) => Poll::Ready(this.finish_running(result)),
            Poll::Pending => Poll::Pending,
        }
    }
}

/// Where a call's tool name and arguments are read: a request (`execute_one`, whose future
/// then holds one reference) or the two lent apart (`execute_call`). A future holding the
/// name and arguments taken out of a request would be three words larger, and every caller
/// moves it (+16 instructions a call, measured).
trait CallParts<'a>: Send + Sync + Unpin {
    fn name(&self) -> &'a str;
    fn arguments(&self) -> &'a ToolArguments;
}

impl<'a> CallParts<'a> for &'a ToolCallRequest {
    #[inline]
    fn name(&self) -> &'a str {
        &self.name
    }

    #[inline]
    fn arguments(&self) -> &'a ToolArguments {
        &self.arguments
    }
}

impl<'a> CallParts<'a> for (&'a str, &'a ToolArguments) {
    #[inline]
    fn name(&self) -> &'a str {
        self.0
    }

    #[inline]
    fn arguments(&self) -> &'a ToolArguments {
        self.1
    }
}

#[cfg(test)]
mod tests {
    use std::future::Future;
    use std::pin::pin;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::task::{Context, Poll, Waker};

    use serde_json::json;

    use crate::{
        Args, FnTool, ToolArgs, ToolArguments, ToolCallManager, ToolCallRequest, ToolCallResult,
        scheme,
    };

    /// Counts its drops.
    struct Dropped(Arc<AtomicUsize>);

    impl Drop for Dropped {
        fn drop(&mut self) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    /// A tool whose calls wait until `open` is set, holding a [`Dropped`] meanwhile.
    fn waiting_tool(drops: &Arc<AtomicUsize>, open: &Arc<AtomicUsize>) -> FnTool {
        let (drops, open) = (Arc::clone(drops), Arc::clone(open));
        FnTool::new("wait", "Wait.", Args::empty(), move |_: ToolArgs<'_>| {
            let held = Dropped(Arc::clone(&drops));
            let open = Arc::clone(&open);
            std::future::poll_fn(move |_| {
                let _ = &held;
                if open.load(Ordering::SeqCst) == 0 {
                    Poll::Pending
                } else {
                    Poll::Ready(Ok(ToolCallResult::text("done")))
                }
            })
        })
    }

    #[test]
    fn a_shed_call_that_finds_nothing_does_not_wait_for_a_change() {
        let manager = Arc::new(ToolCallManager::new("s"));
        for name in ["read_file", "write_file", "get_weather"] {
            let tool = FnTool::new(name, "A tool.", Args::empty(), |_: ToolArgs<'_>| async {
                Ok(ToolCallResult::text("ok"))
            });
            manager.register(Arc::new(tool)).unwrap();
        }
        // A change in progress (as a registration holds one) while the call runs: the call's
        // explanation (the closest names) must not wait for it.
        let change = manager.registry.change();
        let (done, finished) = std::sync::mpsc::channel();
        let calling = Arc::clone(&manager);
        std::thread::spawn(move || {
            let request = ToolCallRequest::new(
                "1",
                crate::SHED_TOOL_NAME,
                ToolArguments::try_from(json!({"description": "raed_flie"})).unwrap(),
            );
            let result = futures::executor::block_on(calling.execute_one(&request));
            let _ = done.send(result.map(|result| result.content.to_text()));
        });
        let text = finished
            .recv_timeout(std::time::Duration::from_secs(20))
            .expect("the call finished while a change was in progress")
            .unwrap();
        drop(change);
        assert!(text.contains("read_file"), "{text}");
    }

    /// Panics when dropped.
    struct PanicsOnDrop;

    impl Drop for PanicsOnDrop {
        fn drop(&mut self) {
            panic!("dropped");
        }
    }

    #[test]
    fn a_future_that_panics_as_it_is_dropped_is_an_execution_error() {
        let manager = ToolCallManager::new("s");
        let tool = FnTool::new("drops", "Drop.", Args::empty(), |_: ToolArgs<'_>| {
            let held = PanicsOnDrop;
            std::future::poll_fn(move |_| {
                let _ = &held;
                Poll::Ready(Ok(ToolCallResult::text("done")))
            })
        });
        manager.register(Arc::new(tool)).unwrap();
        let request = ToolCallRequest::new("1", "drops", ToolArguments::new());
        // Finished on its first poll, the future is dropped inside the call's panic guard:
        // the panic is the call's error, naming the tool, not the caller's.
        let err = futures::executor::block_on(manager.execute_one(&request)).unwrap_err();
        assert_eq!(err.to_string(), "Tool 'drops' failed: panicked: dropped");
        // The same when the future ends on a later poll, and in a batch.
        let later = FnTool::new("drops_later", "Drop.", Args::empty(), |_: ToolArgs<'_>| {
            let held = PanicsOnDrop;
            let mut polled = false;
            std::future::poll_fn(move |cx| {
                let _ = &held;
                if std::mem::replace(&mut polled, true) {
                    Poll::Ready(Ok(ToolCallResult::text("done")))
                } else {
                    cx.waker().wake_by_ref();
                    Poll::Pending
                }
            })
        });
        manager.register(Arc::new(later)).unwrap();
        let request = ToolCallRequest::new("2", "drops_later", ToolArguments::new());
        let err = futures::executor::block_on(manager.execute_one(&request)).unwrap_err();
        assert_eq!(
            err.to_string(),
            "Tool 'drops_later' failed: panicked: dropped"
        );
        let batch = [
            ToolCallRequest::new("3", "drops", ToolArguments::new()),
            ToolCallRequest::new("4", "drops_later", ToolArguments::new()),
        ];
        let outcomes = futures::executor::block_on(manager.execute_batch(&batch));
        for outcome in &outcomes {
            let err = outcome.result.as_ref().unwrap_err();
            assert!(
                err.to_string().ends_with("failed: panicked: dropped"),
                "{err}"
            );
        }
    }

    #[test]
    fn a_future_that_panics_as_its_caller_drops_the_call_stays_inside_the_call() {
        let manager = ToolCallManager::new("s");
        let tool = FnTool::new("guarded", "Guard.", Args::empty(), |_: ToolArgs<'_>| {
            let held = PanicsOnDrop;
            std::future::poll_fn(move |_| {
                let _ = &held;
                Poll::<Result<ToolCallResult, crate::ToolError>>::Pending
            })
        });
        manager.register(Arc::new(tool)).unwrap();
        let request = ToolCallRequest::new("1", "guarded", ToolArguments::new());
        // The caller gives up on the call (its own time limit, a client's cancellation): the
        // tool's panic as its future is dropped is the tool's, not the caller's.
        fn polled_then_dropped(call: impl Future) -> std::thread::Result<()> {
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                let mut call = Box::pin(call);
                let mut cx = Context::from_waker(Waker::noop());
                assert!(call.as_mut().poll(&mut cx).is_pending());
                drop(call);
            }))
        }
        let gave_up = polled_then_dropped(manager.execute_one(&request));
        assert!(gave_up.is_ok(), "the panic reached execute_one's caller");
        // The same through the retry loop.
        let gave_up = polled_then_dropped(manager.execute_with_retry(&request));
        assert!(
            gave_up.is_ok(),
            "the panic reached execute_with_retry's caller"
        );
    }

    #[test]
    fn a_call_that_suspends_keeps_its_future_until_it_ends_or_is_dropped() {
        let (drops, open) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
        let manager = ToolCallManager::new("s");
        manager
            .register(Arc::new(waiting_tool(&drops, &open)))
            .unwrap();
        let request = ToolCallRequest::new("1", "wait", ToolArguments::new());
        let mut cx = Context::from_waker(Waker::noop());

        // Dropped while suspended: the tool's future is dropped with it, once.
        {
            let mut call = pin!(manager.execute_one(&request));
            assert!(call.as_mut().poll(&mut cx).is_pending());
            assert!(call.as_mut().poll(&mut cx).is_pending());
            assert_eq!(drops.load(Ordering::SeqCst), 0);
        }
        assert_eq!(drops.load(Ordering::SeqCst), 1);

        // Finished after suspending: the future is dropped when the call ends, not again
        // when the call's own future is.
        let mut call = pin!(manager.execute_one(&request));
        assert!(call.as_mut().poll(&mut cx).is_pending());
        open.store(1, Ordering::SeqCst);
        match call.as_mut().poll(&mut cx) {
            Poll::Ready(Ok(result)) => assert_eq!(result.content.to_text(), "done"),
            other => panic!("the call should have finished: {other:?}"),
        }
        assert_eq!(drops.load(Ordering::SeqCst), 2);
        // Polled again after it finished, as an `async fn` is: a panic, and no second run.
        let again = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let _ = call.as_mut().poll(&mut cx);
        }));
        assert!(again.is_err());
        assert_eq!(drops.load(Ordering::SeqCst), 2);
    }

    /// A tool with an argument schema and a `returns` schema, both compiled on demand.
    fn counting(name: &str) -> FnTool {
        FnTool::new(
            name,
            "Count things.",
            Args::new(scheme::object().required("n", scheme::integer()).build()),
            |_: ToolArgs<'_>| async { Ok(ToolCallResult::json(json!({"count": 3}))) },
        )
        .with_returns(Args::new(
            scheme::object()
                .required("count", scheme::integer())
                .build(),
        ))
    }

    #[test]
    fn schemas_are_compiled_on_first_use_only() {
        let manager = ToolCallManager::new("s");
        manager.register(Arc::new(counting("count"))).unwrap();
        let entry = manager.entry("count").unwrap();
        assert!(!entry.validator.is_compiled() && !entry.returns.is_compiled());

        let arguments = ToolArguments::try_from(json!({"n": "4"})).unwrap();
        let checked = manager.validate_arguments("count", &arguments).unwrap();
        assert_eq!(checked.get("n"), Some(&json!(4)));
        assert!(entry.validator.is_compiled() && !entry.returns.is_compiled());
        let result = ToolCallResult::json(json!({"count": "three"}));
        assert!(manager.check_result("count", &result).is_err());
        assert!(entry.returns.is_compiled());
    }

    /// A tool whose definition is a copy of `definition`: built when asked and handed to the
    /// manager alone (as a hand-written tool reading its schema from configuration does), or
    /// kept by the tool and shared with the manager.
    struct Described {
        definition: Arc<crate::Tool>,
        shares: bool,
    }

    #[async_trait::async_trait]
    impl crate::ToolImpl for Described {
        fn definition(&self) -> crate::Tool {
            crate::Tool::clone(&self.definition)
        }

        fn shared_definition(&self) -> Arc<crate::Tool> {
            if self.shares {
                Arc::clone(&self.definition)
            } else {
                Arc::new(self.definition())
            }
        }

        async fn execute(
            &self,
            arguments: ToolArguments,
        ) -> Result<ToolCallResult, crate::ToolError> {
            Ok(ToolCallResult::json(json!({"count": arguments.get("n")})))
        }
    }

    #[test]
    fn a_definition_the_manager_holds_alone_keeps_its_schemas_as_text_and_reads_alike() {
        let definition = Arc::new(crate::Tool::SingleCommand(
            crate::ToolDefinition::new(
                "sprockets",
                "Counts things.",
                Args::new(json!({
                    "type": "object",
                    "properties": {
                        "n": {"type": "integer", "minimum": 1, "description": "How many sprockets"},
                        "unit": {"enum": ["box", "crate"]}
                    },
                    "required": ["n"]
                })),
            )
            .with_returns(Args::new(json!({
                "type": "object",
                "properties": {"count": {"type": "integer"}},
                "required": ["count"]
            }))),
        ));
        let session = |shares| {
            let manager = ToolCallManager::new("s");
            let tool = Described {
                definition: Arc::clone(&definition),
                shares,
            };
            manager.register(Arc::new(tool)).unwrap();
            manager
        };
        let (alone, shared) = (session(false), session(true));
        let held =
            |manager: &ToolCallManager| Arc::clone(&manager.entry("sprockets").unwrap().definition);
        let command = |tool: &crate::Tool| tool.commands()[0].clone();
        let alone_held = held(&alone);
        let alone_command = &alone_held.commands()[0];
        assert!(alone_command.arguments.is_compact());
        assert!(alone_command.returns.as_ref().unwrap().is_compact());
        // The tool's own definition is not the manager's to change.
        assert!(!command(&held(&shared)).arguments.is_compact());
        assert_eq!(alone.get_def("sprockets").as_ref(), Some(&*definition));
        assert_eq!(alone_held.function_spec(), definition.function_spec());
        assert_eq!(alone_held.result_schema(), definition.result_schema());

        // Calls are checked alike (coerced, or refused with the same error), run alike, and
        // their results checked alike against `returns`.
        for arguments in [json!({"n": "4"}), json!({"n": 0}), json!({})] {
            let arguments = ToolArguments::try_from(arguments).unwrap();
            let checked = |manager: &ToolCallManager| {
                manager
                    .validate_arguments("sprockets", &arguments)
                    .map(ToolArguments::into_value)
                    .map_err(|err| err.to_string())
            };
            assert_eq!(checked(&alone), checked(&shared));
        }
        let call = |manager: &ToolCallManager| {
            let request = ToolCallRequest::new(
                "1",
                "sprockets",
                ToolArguments::try_from(json!({"n": 2})).unwrap(),
            );
            futures::executor::block_on(manager.execute_one(&request)).map(|r| r.content.to_text())
        };
        assert_eq!(call(&alone).unwrap(), r#"{"count":2}"#);
        assert_eq!(call(&alone), call(&shared));
        let wrong = ToolCallResult::json(json!({"count": "three"}));
        assert_eq!(
            alone
                .check_result("sprockets", &wrong)
                .map_err(|e| e.to_string()),
            shared
                .check_result("sprockets", &wrong)
                .map_err(|e| e.to_string()),
        );
        assert!(alone.check_result("sprockets", &wrong).is_err());
        // Compiled from the text read for the purpose: the registry still holds the text
        // alone.
        assert!(alone_command.arguments.is_compact());
        assert!(alone_command.returns.as_ref().unwrap().is_compact());

        // `shed` finds it by a word of an argument's description, and writes it alike.
        let shed = |manager: &ToolCallManager| {
            let request = ToolCallRequest::new(
                "1",
                crate::SHED_TOOL_NAME,
                ToolArguments::try_from(json!({"description": "sprockets crate"})).unwrap(),
            );
            futures::executor::block_on(manager.execute_one(&request))
                .unwrap()
                .content
                .to_text()
        };
        let found = shed(&alone);
        assert!(found.contains("How many sprockets"), "{found}");
        assert_eq!(found, shed(&shared));
        assert_eq!(alone.all_declarations(), shared.all_declarations());
        assert!(alone_command.arguments.is_compact());
    }

    #[test]
    fn warm_cache_compiles_every_tool_now() {
        let manager = ToolCallManager::new("s");
        for name in ["one", "two"] {
            manager.register(Arc::new(counting(name))).unwrap();
        }
        assert_eq!(manager.warm_cache(), 2);
        for name in ["one", "two"] {
            let entry = manager.entry(name).unwrap();
            assert!(
                entry.validator.is_compiled() && entry.returns.is_compiled(),
                "{name}"
            );
        }
    }
}
