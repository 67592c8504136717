//! [`ToolConstructor`]: a tool that is built when its session is, from the session's parts.

use std::sync::{Arc, OnceLock};

use crate::{SessionParts, Tool, ToolImpl};

/// Builds one tool from a session's parts.
///
/// Anything that is a [`ToolImpl`] (by value, or as an `Arc`) is a constructor that ignores
/// the parts; [`tool_fn`] makes one from a closure; `#[tool_fn]` tools with `#[ctx]`
/// parameters are constructors that extract their parts.
pub trait ToolConstructor: Send {
    /// The name of the tool this constructor builds.
    fn name(&self) -> String;

    /// Builds the tool.
    fn construct(self: Box<Self>, parts: &SessionParts) -> Arc<dyn ToolImpl>;

    /// Whether the tool needs the session's parts (so cannot be built without a session).
    fn needs_session(&self) -> bool {
        true
    }

    /// The [`shared_definition`](ToolImpl::shared_definition) of the tool this constructor
    /// builds, when it has it already (a ready-made tool asked for its name has): the session
    /// registers the tool with it instead of asking the tool again. The default has none.
    fn known_definition(&self) -> Option<Arc<Tool>> {
        None
    }
}

/// A constructor for a tool that exists already.
struct Ready {
    tool: Arc<dyn ToolImpl>,
    /// The tool's definition, once its name was asked: a tool that builds its definition
    /// when asked then builds it once a session.
    definition: OnceLock<Arc<Tool>>,
}

impl Ready {
    fn new(tool: Arc<dyn ToolImpl>) -> Box<Self> {
        Box::new(Self {
            tool,
            definition: OnceLock::new(),
        })
    }
}

impl ToolConstructor for Ready {
    fn name(&self) -> String {
        self.definition
            .get_or_init(|| self.tool.shared_definition())
            .name()
            .to_owned()
    }

    fn construct(self: Box<Self>, _parts: &SessionParts) -> Arc<dyn ToolImpl> {
        self.tool
    }

    fn needs_session(&self) -> bool {
        false
    }

    fn known_definition(&self) -> Option<Arc<Tool>> {
        self.definition.get().cloned()
    }
}

impl<T: ToolImpl + 'static> From<T> for Box<dyn ToolConstructor> {
    fn from(tool: T) -> Self {
        Ready::new(Arc::new(tool))
    }
}

impl<T: ToolImpl + 'static> From<Arc<T>> for Box<dyn ToolConstructor> {
    fn from(tool: Arc<T>) -> Self {
        Ready::new(tool)
    }
}

impl From<Arc<dyn ToolImpl>> for Box<dyn ToolConstructor> {
    fn from(tool: Arc<dyn ToolImpl>) -> Self {
        Ready::new(tool)
    }
}

/// A constructor from a closure over the session's parts.
struct FnConstructor<F> {
    name: String,
    build: F,
}

impl<F> ToolConstructor for FnConstructor<F>
where
    F: FnOnce(&SessionParts) -> Arc<dyn ToolImpl> + Send,
{
    fn name(&self) -> String {
        self.name.clone()
    }

    fn construct(self: Box<Self>, parts: &SessionParts) -> Arc<dyn ToolImpl> {
        (self.build)(parts)
    }
}

impl<F> From<FnConstructor<F>> for Box<dyn ToolConstructor>
where
    F: FnOnce(&SessionParts) -> Arc<dyn ToolImpl> + Send + 'static,
{
    fn from(constructor: FnConstructor<F>) -> Self {
        Box::new(constructor)
    }
}

/// A constructor for the tool `name`, built by `build` from the session's parts (the spec's
/// `tool_fn(name, constructor)`).
///
/// It shares its name with the attribute macro [`#[tool_fn]`](macro@crate::tool_fn), which
/// turns a Rust function into a tool; one `use toolsmith::tool_fn;` brings both (macros
/// and functions live in different namespaces).
///
/// ```
/// use std::sync::Arc;
/// use toolsmith::{Args, FnTool, ToolArgs, ToolCallResult, ToolConstructor, ToolImpl, tool_fn};
///
/// let notes: Box<dyn ToolConstructor> = Box::new(tool_fn("notes", |parts| {
///     let session = parts.session_id.clone();
///     Arc::new(FnTool::new("notes", "The session's notes.", Args::empty(),
///         move |_: ToolArgs<'_>| {
///             let session = session.clone();
///             async move { Ok(ToolCallResult::text(format!("notes of {session}"))) }
///         })) as Arc<dyn ToolImpl>
/// }));
/// assert_eq!(notes.name(), "notes");
/// ```
pub fn tool_fn<F>(
    name: impl Into<String>,
    build: F,
) -> impl ToolConstructor + Into<Box<dyn ToolConstructor>> + 'static
where
    F: FnOnce(&SessionParts) -> Arc<dyn ToolImpl> + Send + 'static,
{
    FnConstructor {
        name: name.into(),
        build,
    }
}
