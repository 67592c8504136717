//! [`ToolPreset`]: ready bundles of tool constructors (spec §4, "Using ToolPreset").

use std::path::PathBuf;
use std::sync::Arc;

use async_trait::async_trait;
use toolsmith_core::shed::{ToolShed, ToolShedError};
use toolsmith_core::{
    ContextHit, ContextSearch, MemoryAccess, MemoryFact, ServiceError, SessionParts, SessionState,
    ToolCallManager, ToolConstructor, ToolImpl, Versioned, tool_fn,
};

use crate::agent::{AGENT_TOOL, AgentCommands, SubAgentConfig};
use crate::tools::{
    BashTool, EditTool, MEMORY_TOOL, MemoryTool, ReadLimits, ReadTool, SearchContextTool,
    SearchFileTool, WriteTool,
};
use crate::{DEFAULT_MAX_MATCHES, FileSystem, ShellConfig};

/// A bundle of tool constructors: ready-made tools (files, shell, a given memory) and tools
/// built from the session (its memory, its context search). A preset is an iterator of
/// `Box<dyn ToolConstructor>`, so it goes straight into `ToolShed::tools(..)`; presets
/// compose with [`merge`](Self::merge) or `+`.
///
/// ```
/// use std::sync::Arc;
/// use toolsmith::harness::{InMemoryFileSystem, ToolPreset};
///
/// let fs = Arc::new(InMemoryFileSystem::new());
/// let preset = ToolPreset::files(fs.clone()) + ToolPreset::shell();
/// assert_eq!(preset.names(), ["read", "write", "edit", "bash"]);
///
/// let manager = preset.into_manager("session-1").unwrap();
/// assert!(manager.contains("bash"));
///
/// // Session-built tools cannot be registered ready-made:
/// let err = ToolPreset::standard(fs).into_manager("session-2").unwrap_err();
/// assert_eq!(err, toolsmith::shed::ToolShedError::NeedsSession("memory".into()));
/// ```
#[derive(Default)]
pub struct ToolPreset {
    constructors: Vec<Box<dyn ToolConstructor>>,
}

impl std::fmt::Debug for ToolPreset {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolPreset")
            .field("tools", &self.names())
            .finish()
    }
}

impl ToolPreset {
    /// An empty preset.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds one tool: a [`ToolImpl`] value, an `Arc` of one, or a constructor.
    #[must_use]
    pub fn with(mut self, tool: impl Into<Box<dyn ToolConstructor>>) -> Self {
        self.constructors.push(tool.into());
        self
    }

    /// `read`, `write` and `edit` over `fs`. `read` shows an image file (PNG, JPEG, GIF,
    /// WebP) to the model as the image; for a model without vision, turn that off with
    /// [`files_with`](Self::files_with).
    #[must_use]
    pub fn files(fs: Arc<dyn FileSystem>) -> Self {
        Self::files_with(fs, ReadLimits::default())
    }

    /// [`files`](Self::files) with `read` showing what `limits` say: how much text at once,
    /// and whether images are shown ([`ReadLimits::images`]).
    ///
    /// ```
    /// use std::sync::Arc;
    /// use toolsmith::harness::{InMemoryFileSystem, ToolPreset};
    /// use toolsmith::harness::tools::ReadLimits;
    ///
    /// // A model without vision: `read` refuses an image, saying so.
    /// let text_only = ReadLimits { images: false, ..ReadLimits::default() };
    /// let preset = ToolPreset::files_with(Arc::new(InMemoryFileSystem::new()), text_only);
    /// assert_eq!(preset.names(), ["read", "write", "edit"]);
    /// ```
    #[must_use]
    pub fn files_with(fs: Arc<dyn FileSystem>, limits: ReadLimits) -> Self {
        Self::new()
            .with(ReadTool::new(Arc::clone(&fs), limits))
            .with(WriteTool::new(Arc::clone(&fs)))
            .with(EditTool::new(fs))
    }

    /// `search_file` over `fs`.
    #[must_use]
    pub fn file_search(fs: Arc<dyn FileSystem>) -> Self {
        Self::new().with(SearchFileTool::new(fs, DEFAULT_MAX_MATCHES))
    }

    /// `bash`, running in the process's current directory (as it is now), confined by
    /// Landlock where the kernel supports it.
    #[must_use]
    pub fn shell() -> Self {
        Self::shell_with(ShellConfig::in_current_dir())
    }

    /// `bash` with `config`.
    #[must_use]
    pub fn shell_with(config: ShellConfig) -> Self {
        Self::new().with(BashTool::new(config))
    }

    /// `memory` (`add`, `list`, `remove`, `replace`) over the given memory.
    #[must_use]
    pub fn memory(memory: Arc<dyn MemoryAccess>) -> Self {
        Self::new().with(MemoryTool::new(memory))
    }

    /// `memory` over the session's own memory, built when the session is.
    #[must_use]
    pub fn session_memory() -> Self {
        Self::new().with(Box::new(tool_fn(MEMORY_TOOL, |parts: &SessionParts| {
            Arc::new(MemoryTool::new(Arc::clone(&parts.memory))) as Arc<dyn ToolImpl>
        })) as Box<dyn ToolConstructor>)
    }

    /// `search_context` over the session's context stores and embedder, built when the session
    /// is.
    #[must_use]
    pub fn search_context() -> Self {
        // `#[ctx]`-built: the generated struct is the session constructor.
        Self::new().with(SearchContextTool)
    }

    /// `agent` (`start`, `check`, `result`, `pause`, `resume`, `stop`): background
    /// sub-agents made as `config` says, built with the session so that their calls pass
    /// the session's hooks and approval (a child cannot run what the parent's approval
    /// refuses) and so that they end when the session is dropped or cancelled. A child's
    /// tokens count in the [`child_usage`](crate::agent::AgentRun::child_usage) of the run
    /// whose call started it.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use toolsmith::ToolShed;
    /// use toolsmith::harness::{InMemoryFileSystem, ToolPreset};
    /// use toolsmith::harness::agent::SubAgentConfig;
    /// use toolsmith::harness::model::ScriptedModel;
    ///
    /// let fs = Arc::new(InMemoryFileSystem::new());
    /// let config = SubAgentConfig::new(ScriptedModel::default(), "child-model")
    ///     .with_tools(ToolPreset::files(fs).as_child_tools().unwrap());
    /// let shed = ToolShed::new().tools(ToolPreset::agent(config));
    /// assert_eq!(shed.names(), ["agent"]);
    /// ```
    #[must_use]
    pub fn agent(config: SubAgentConfig) -> Self {
        Self::new().with(Box::new(tool_fn(AGENT_TOOL, move |parts: &SessionParts| {
            Arc::new(AgentCommands::for_session(config, parts)) as Arc<dyn ToolImpl>
        })) as Box<dyn ToolConstructor>)
    }

    /// Files and shell: what a sub-agent needs to work on a tree. `bash` runs in `fs`'s
    /// directory when `fs` is local, in the current directory otherwise.
    #[must_use]
    pub fn minimal_sub_agent(fs: Arc<dyn FileSystem>) -> Self {
        let shell = ShellConfig::new(shell_root(&*fs));
        Self::files(fs).merge(Self::shell_with(shell))
    }

    /// Files, `search_file`, shell and the session's memory. `bash` runs in `fs`'s directory
    /// when `fs` is local, in the current directory otherwise.
    #[must_use]
    pub fn standard(fs: Arc<dyn FileSystem>) -> Self {
        Self::minimal_sub_agent(Arc::clone(&fs))
            .merge(Self::file_search(fs))
            .merge(Self::session_memory())
    }

    /// This preset's tools followed by `other`'s.
    #[must_use]
    pub fn merge(mut self, other: ToolPreset) -> Self {
        self.constructors.extend(other.constructors);
        self
    }

    /// The names of the tools, in order.
    pub fn names(&self) -> Vec<String> {
        self.constructors.iter().map(|c| c.name()).collect()
    }

    /// The number of tools.
    pub fn len(&self) -> usize {
        self.constructors.len()
    }

    /// Whether the preset has no tools.
    pub fn is_empty(&self) -> bool {
        self.constructors.is_empty()
    }

    /// The tools that can only be built from a session's parts.
    pub fn session_tools(&self) -> Vec<String> {
        self.constructors
            .iter()
            .filter(|c| c.needs_session())
            .map(|c| c.name())
            .collect()
    }

    /// The ready-made tools, or [`ToolShedError::NeedsSession`] naming the first that is not.
    fn ready_tools(self) -> Result<Vec<Arc<dyn ToolImpl>>, ToolShedError> {
        if let Some(name) = self.session_tools().into_iter().next() {
            return Err(ToolShedError::NeedsSession(name));
        }
        // Ready constructors ignore the parts; these refuse every use, should one not.
        let parts = detached_parts();
        Ok(self
            .constructors
            .into_iter()
            .map(|c| c.construct(&parts))
            .collect())
    }

    /// Registers every tool on a running manager. All or nothing: on
    /// [`ToolShedError::NeedsSession`] or a failed registration no tool of the preset stays.
    pub fn register_all(self, manager: &ToolCallManager) -> Result<(), ToolShedError> {
        register(manager, self.ready_tools()?)
    }

    /// The tools, ready-made, for a sub-agent's tool list.
    pub fn as_child_tools(self) -> Result<Vec<Arc<dyn ToolImpl>>, ToolShedError> {
        self.ready_tools()
    }

    /// A fresh manager for `session_id` with every tool registered: the preset in a
    /// [`ToolShed`] built without a session ([`ToolShed::build_without_session`]), so a
    /// preset with session-built tools fails with [`ToolShedError::NeedsSession`].
    pub fn into_manager(
        self,
        session_id: impl Into<String>,
    ) -> Result<ToolCallManager, ToolShedError> {
        ToolShed::new()
            .tools(self)
            .build_without_session(session_id)
    }

    /// A fresh manager for the session of `parts`, with every tool built from `parts`: the
    /// preset in a [`ToolShed`] built with `parts` (what a session's shed does with it).
    pub fn into_manager_with(self, parts: &SessionParts) -> Result<ToolCallManager, ToolShedError> {
        ToolShed::new().tools(self).build(parts.clone())
    }
}

fn register(manager: &ToolCallManager, tools: Vec<Arc<dyn ToolImpl>>) -> Result<(), ToolShedError> {
    let mut registered: Vec<String> = Vec::with_capacity(tools.len());
    for tool in tools {
        let name = tool.shared_definition().name().to_owned();
        if let Err(source) = manager.register(tool) {
            for name in registered {
                manager.deregister(&name);
            }
            return Err(ToolShedError::Registration { tool: name, source });
        }
        registered.push(name);
    }
    Ok(())
}

fn shell_root(fs: &dyn FileSystem) -> PathBuf {
    match fs.local_root() {
        Some(root) => root.to_owned(),
        None => std::env::current_dir().unwrap_or_else(|_| PathBuf::from(".")),
    }
}

impl std::ops::Add for ToolPreset {
    type Output = ToolPreset;

    fn add(self, other: ToolPreset) -> ToolPreset {
        self.merge(other)
    }
}

impl IntoIterator for ToolPreset {
    type Item = Box<dyn ToolConstructor>;
    type IntoIter = std::vec::IntoIter<Box<dyn ToolConstructor>>;

    fn into_iter(self) -> Self::IntoIter {
        self.constructors.into_iter()
    }
}

impl Extend<Box<dyn ToolConstructor>> for ToolPreset {
    fn extend<I: IntoIterator<Item = Box<dyn ToolConstructor>>>(&mut self, iter: I) {
        self.constructors.extend(iter);
    }
}

impl FromIterator<Box<dyn ToolConstructor>> for ToolPreset {
    fn from_iter<I: IntoIterator<Item = Box<dyn ToolConstructor>>>(iter: I) -> Self {
        Self {
            constructors: iter.into_iter().collect(),
        }
    }
}

/// Session parts for building ready-made tools, whose services refuse every use.
fn detached_parts() -> SessionParts {
    SessionParts {
        session_id: String::new(),
        context: Arc::new(Detached),
        memory: Arc::new(Detached),
        embedder: None,
        state: SessionState::new(),
    }
}

struct Detached;

fn detached(service: &str) -> ServiceError {
    ServiceError::new(service, "this tool was built without a session")
}

#[async_trait]
impl ContextSearch for Detached {
    async fn search(&self, _query: &str, _limit: usize) -> Result<Vec<ContextHit>, ServiceError> {
        Err(detached("context"))
    }
}

#[async_trait]
impl MemoryAccess for Detached {
    async fn facts(&self) -> Result<Vec<MemoryFact>, ServiceError> {
        Err(detached("memory"))
    }
    async fn add(&self, _text: String) -> Result<Versioned<MemoryFact>, ServiceError> {
        Err(detached("memory"))
    }
    async fn remove(&self, _id: u64) -> Result<Versioned<bool>, ServiceError> {
        Err(detached("memory"))
    }
    async fn replace(&self, _id: u64, _text: String) -> Result<Versioned<bool>, ServiceError> {
        Err(detached("memory"))
    }
    fn version(&self) -> u64 {
        0
    }
}

/// Registers `read`, `write` and `edit` over `fs` on `manager` (spec §7).
pub fn register_file_tools(
    manager: &ToolCallManager,
    fs: Arc<dyn FileSystem>,
) -> Result<(), ToolShedError> {
    ToolPreset::files(fs).register_all(manager)
}

/// Registers `bash`, running in the current directory, on `manager` (spec §7).
pub fn register_shell_tool(manager: &ToolCallManager) -> Result<(), ToolShedError> {
    ToolPreset::shell().register_all(manager)
}
