//! [`ToolShed`]: the session's tools, given in one place as constructors and built into its
//! [`ToolCallManager`].

use indexmap::IndexMap;

use crate::session::unbuilt_tool::noting_unbuilt;
use crate::{
    RegistrationError, SHED_TOOL_NAME, SessionParts, SessionState, ToolCallManager, ToolConstructor,
};

/// Why a [`ToolShed`] could not be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ToolShedError {
    /// Two tools were added under the same name.
    #[error("the tool '{0}' was added to the shed twice")]
    DuplicateTool(String),
    /// A tool takes the name of the built-in `shed` meta-tool.
    #[error("the tool name '{0}' is reserved for the built-in meta-tool")]
    ReservedName(String),
    /// A constructor built a tool under another name than the one it was added under.
    #[error("the constructor for '{expected}' built a tool named '{built}'")]
    NameMismatch {
        /// The name the constructor declared.
        expected: String,
        /// The name of the tool it built.
        built: String,
    },
    /// A tool needs the session's parts, but it is being built without a session.
    #[error("the tool '{0}' is built from a session's parts, so it needs a session")]
    NeedsSession(String),
    /// A tool could not be built from the session's parts (a `#[ctx]` value missing, such
    /// as a [`State<T>`](crate::State) never added), in a shed that requires every tool
    /// built ([`ToolShed::with_every_tool_built`]).
    #[error("the tool '{tool}' could not be built for the session: {reason}")]
    Unbuilt {
        /// The tool.
        tool: String,
        /// Why it could not be built.
        reason: String,
    },
    /// The manager refused the tool (an invalid name or schema).
    #[error("the tool '{tool}' could not be registered: {source}")]
    Registration {
        /// The tool.
        tool: String,
        /// Why the manager refused it.
        #[source]
        source: RegistrationError,
    },
}

type StateInsert = Box<dyn FnOnce(&mut SessionState) + Send>;

/// A session's tools, as constructors, one per name.
///
/// [`build`](Self::build) calls each constructor with the session's parts and registers what
/// it builds, so the resulting [`ToolCallManager`] holds exactly the shed's tools (and offers
/// them through `shed`). When the parts carry an embedder, `shed` searches by embedding.
///
/// ```
/// use std::sync::Arc;
/// use toolsmith::{Args, FnTool, SessionParts, State, ToolArgs, ToolCallResult, ToolImpl,
///     tool_fn};
/// use toolsmith::shed::ToolShed;
///
/// struct Greeting(&'static str);
///
/// let shed = ToolShed::new()
///     .with_state(Greeting("Hello"))
///     .tool(FnTool::new("ping", "Answer pong.", Args::empty(),
///         |_: ToolArgs<'_>| async { Ok(ToolCallResult::text("pong")) }))
///     .tool(tool_fn("greet", |parts| {
///         let greeting = parts.state.get::<Greeting>().expect("added with with_state");
///         Arc::new(FnTool::new("greet", "Say hello.", Args::empty(), move |_: ToolArgs<'_>| {
///             let text = greeting.0;
///             async move { Ok(ToolCallResult::text(text)) }
///         })) as Arc<dyn ToolImpl>
///     }));
/// assert_eq!(shed.names(), ["ping", "greet"]);
/// assert!(shed.contains("greet"));
///
/// let manager = shed.build(SessionParts::in_memory("session-1")).unwrap();
/// assert_eq!(manager.names(), ["ping", "greet"]);
/// ```
#[derive(Default)]
pub struct ToolShed {
    constructors: IndexMap<String, Box<dyn ToolConstructor>>,
    /// Names added more than once; the first constructor is kept, and `build` fails.
    duplicates: Vec<String>,
    state: Vec<StateInsert>,
    /// Whether a tool that cannot be built fails the build ([`ToolShedError::Unbuilt`])
    /// rather than being registered as an [`UnbuiltTool`](crate::UnbuiltTool).
    every_tool_built: bool,
}

impl std::fmt::Debug for ToolShed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolShed")
            .field("tools", &self.names())
            .field("duplicates", &self.duplicates)
            .field("state", &self.state.len())
            .field("every_tool_built", &self.every_tool_built)
            .finish()
    }
}

impl ToolShed {
    /// An empty shed.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a tool: a [`ToolImpl`](crate::ToolImpl) value, an `Arc` of one, or a
    /// constructor such as [`tool_fn`](crate::tool_fn()).
    #[must_use]
    pub fn tool(mut self, tool: impl Into<Box<dyn ToolConstructor>>) -> Self {
        self.add(tool.into());
        self
    }

    /// Adds every tool of `tools` (a preset, a `Vec` of constructors, …).
    #[must_use]
    pub fn tools<I>(mut self, tools: I) -> Self
    where
        I: IntoIterator,
        I::Item: Into<Box<dyn ToolConstructor>>,
    {
        for tool in tools {
            self.add(tool.into());
        }
        self
    }

    /// Adds a user value that constructors and `#[ctx]` parameters extract by type
    /// ([`State<T>`](crate::State)); a later value of the same type replaces it.
    #[must_use]
    pub fn with_state<T: Send + Sync + 'static>(mut self, value: T) -> Self {
        self.state.push(Box::new(move |state| state.insert(value)));
        self
    }

    /// Whether every tool must be built for the build to succeed. Off by default: a tool
    /// whose constructor lacks a value of the session's (a `#[ctx] State<T>` whose `T` was
    /// never given to [`with_state`](Self::with_state)) is registered as an
    /// [`UnbuiltTool`](crate::UnbuiltTool), which keeps its definition, fails each call with
    /// the reason, and is logged as a warning; so a session still builds, and the model
    /// learns why the tool is unavailable. Required, [`build`](Self::build) fails instead
    /// with [`ToolShedError::Unbuilt`], naming the tool and what it lacked: a set-up mistake
    /// found when the session is built, not when a model first calls the tool.
    ///
    /// ```
    /// use toolsmith::{SessionParts, State, tool_fn};
    /// use toolsmith::shed::{ToolShed, ToolShedError};
    ///
    /// struct Db;
    ///
    /// /// Count the rows.
    /// #[tool_fn]
    /// async fn count(#[ctx] _db: State<Db>) -> u64 { 0 }
    ///
    /// // Without the requirement, the session builds and each call of `count` fails.
    /// let manager = ToolShed::new().tool(Count).build(SessionParts::in_memory("s1")).unwrap();
    /// assert!(manager.contains("count"));
    ///
    /// let refused = ToolShed::new()
    ///     .tool(Count)
    ///     .with_every_tool_built(true)
    ///     .build(SessionParts::in_memory("s2"))
    ///     .unwrap_err();
    /// assert!(matches!(&refused, ToolShedError::Unbuilt { tool, .. } if tool == "count"));
    /// assert!(refused.to_string().contains("no state of type"));
    ///
    /// let manager = ToolShed::new()
    ///     .tool(Count)
    ///     .with_state(Db)
    ///     .with_every_tool_built(true)
    ///     .build(SessionParts::in_memory("s3"))
    ///     .unwrap();
    /// assert!(manager.contains("count"));
    /// ```
    #[must_use]
    pub fn with_every_tool_built(mut self, required: bool) -> Self {
        self.every_tool_built = required;
        self
    }

    fn add(&mut self, constructor: Box<dyn ToolConstructor>) {
        let name = constructor.name();
        if self.constructors.contains_key(&name) {
            self.duplicates.push(name);
        } else {
            self.constructors.insert(name, constructor);
        }
    }

    /// The constructor added as `name`.
    pub fn get(&self, name: &str) -> Option<&dyn ToolConstructor> {
        self.constructors.get(name).map(|c| &**c)
    }

    /// Whether a tool was added as `name`.
    pub fn contains(&self, name: &str) -> bool {
        self.constructors.contains_key(name)
    }

    /// The names of the tools, in the order they were added.
    pub fn names(&self) -> Vec<String> {
        self.constructors.keys().cloned().collect()
    }

    /// The number of tools.
    pub fn len(&self) -> usize {
        self.constructors.len()
    }

    /// Whether the shed has no tools.
    pub fn is_empty(&self) -> bool {
        self.constructors.is_empty()
    }

    /// The names of the tools that must be built from a session's parts.
    pub fn needing_session(&self) -> Vec<String> {
        self.constructors
            .iter()
            .filter(|(_, c)| c.needs_session())
            .map(|(name, _)| name.clone())
            .collect()
    }

    /// Builds the session's [`ToolCallManager`]: adds the shed's state to `parts.state`,
    /// builds every tool from the parts, in order, and registers it. With an embedder on the
    /// parts, `shed` searches by embedding.
    ///
    /// Fails before building anything on a name added twice ([`ToolShedError::DuplicateTool`])
    /// or the reserved name `shed` ([`ToolShedError::ReservedName`]); then on a constructor
    /// that builds a tool under another name ([`ToolShedError::NameMismatch`]) or a tool the
    /// manager refuses ([`ToolShedError::Registration`]), and, when every tool must be built
    /// ([`with_every_tool_built`](Self::with_every_tool_built)), on one that could not be
    /// ([`ToolShedError::Unbuilt`]).
    pub fn build(self, mut parts: SessionParts) -> Result<ToolCallManager, ToolShedError> {
        self.check_names()?;
        for insert in self.state {
            insert(&mut parts.state);
        }
        let manager = ToolCallManager::new(parts.session_id.clone());
        if let Some(embedder) = &parts.embedder {
            manager.enable_discovery(std::sync::Arc::clone(embedder));
        }
        for (name, constructor) in self.constructors {
            let known = constructor.known_definition();
            let tool = match noting_unbuilt(self.every_tool_built, || constructor.construct(&parts))
            {
                (_, Some(reason)) => return Err(ToolShedError::Unbuilt { tool: name, reason }),
                (tool, None) => tool,
            };
            let definition = known.unwrap_or_else(|| tool.shared_definition());
            if definition.name() != name {
                return Err(ToolShedError::NameMismatch {
                    expected: name,
                    built: definition.name().to_owned(),
                });
            }
            manager
                .register_defined(tool, definition)
                .map_err(|err| match err {
                    RegistrationError::DuplicateTool(name) => ToolShedError::DuplicateTool(name),
                    RegistrationError::ReservedName(name) => ToolShedError::ReservedName(name),
                    source => ToolShedError::Registration { tool: name, source },
                })?;
        }
        Ok(manager)
    }

    /// Builds a manager for `session_id` from ready-made tools only (no session parts):
    /// fails with [`ToolShedError::NeedsSession`] naming the first tool that needs them.
    /// For presets' `into_manager` and tools registered outside a session.
    pub fn build_without_session(
        self,
        session_id: impl Into<String>,
    ) -> Result<ToolCallManager, ToolShedError> {
        self.check_names()?;
        if let Some(name) = self.needing_session().into_iter().next() {
            return Err(ToolShedError::NeedsSession(name));
        }
        self.build(SessionParts::in_memory(session_id))
    }

    fn check_names(&self) -> Result<(), ToolShedError> {
        if let Some(name) = self.duplicates.first() {
            return Err(ToolShedError::DuplicateTool(name.clone()));
        }
        if self.constructors.contains_key(SHED_TOOL_NAME) {
            return Err(ToolShedError::ReservedName(SHED_TOOL_NAME.to_owned()));
        }
        Ok(())
    }
}

impl<C: Into<Box<dyn ToolConstructor>>> FromIterator<C> for ToolShed {
    fn from_iter<I: IntoIterator<Item = C>>(tools: I) -> Self {
        Self::new().tools(tools)
    }
}

impl<C: Into<Box<dyn ToolConstructor>>> Extend<C> for ToolShed {
    fn extend<I: IntoIterator<Item = C>>(&mut self, tools: I) {
        for tool in tools {
            self.add(tool.into());
        }
    }
}
