//! The session as tools see it: its parts and service traits (this file; the embedder's in
//! `embedding`), the constructors
//! that build tools from them (`constructor`), the extractors that hand them to `#[ctx]`
//! parameters (`extract`), and in-memory services for tests and small agents (`in_memory`).
//!
//! [`SessionParts`]: what a session gives the tools built for it, and the service traits its
//! parts implement.

pub(crate) mod constructor;
mod embedding;
pub(crate) mod extract;
pub mod in_memory;
mod type_id_hasher;
pub(crate) mod unbuilt_tool;

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::sync::Arc;

use async_trait::async_trait;

use self::type_id_hasher::TypeIdBuildHasher;

pub use embedding::{Embedder, check_embeddings, check_finite_embeddings, unit_vector};

/// A failure of a session service (an embedder, a context store, a memory).
///
/// It shows as `"{service}: {reason}"`. A service that failed because of a typed error
/// (a model client's, an I/O error) keeps it as the [`source`](std::error::Error::source),
/// so that a caller can tell the causes apart without reading the text: split a document
/// too long for the embedding model, retry after a rate limit.
///
/// Equality compares the service and the reason only: the source is an opaque error
/// (`dyn Error`, which has no equality), and the reason already says it in words.
///
/// ```
/// use std::error::Error as _;
/// use toolsmith_core::ServiceError;
///
/// let io = std::io::Error::new(std::io::ErrorKind::PermissionDenied, "read-only file");
/// let error = ServiceError::with_source("memory", "facts.json: read-only file", io);
/// assert_eq!(error.to_string(), "memory: facts.json: read-only file");
/// // The cause, as its own type:
/// let cause = error.source().and_then(|e| e.downcast_ref::<std::io::Error>());
/// assert_eq!(cause.map(|e| e.kind()), Some(std::io::ErrorKind::PermissionDenied));
/// // A clone shares it; equality looks at the service and the reason only.
/// assert!(error.clone().source().is_some());
/// assert_eq!(error, ServiceError::new("memory", "facts.json: read-only file"));
/// // Without one, there is none to find.
/// assert!(ServiceError::new("memory", "read-only").source().is_none());
/// ```
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ServiceError {
    /// The service that failed ("embedder", "context", "memory").
    pub service: String,
    /// What went wrong.
    pub reason: String,
    /// The typed error it failed of, if any: shared, so that the error stays `Clone`.
    source: Option<Arc<dyn std::error::Error + Send + Sync + 'static>>,
}

impl ServiceError {
    /// A failure of `service`.
    pub fn new(service: impl Into<String>, reason: impl std::fmt::Display) -> Self {
        Self {
            service: service.into(),
            reason: reason.to_string(),
            source: None,
        }
    }

    /// A failure of `service` because of `source`, which
    /// [`Error::source`](std::error::Error::source) gives back (to downcast to its type).
    /// `reason` is the whole text shown (the source is not appended to it), so it usually
    /// says what the source says, and where.
    pub fn with_source<E>(
        service: impl Into<String>,
        reason: impl std::fmt::Display,
        source: E,
    ) -> Self
    where
        E: std::error::Error + Send + Sync + 'static,
    {
        Self {
            source: Some(Arc::new(source)),
            ..Self::new(service, reason)
        }
    }
}

impl std::fmt::Display for ServiceError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.service, self.reason)
    }
}

impl std::error::Error for ServiceError {
    // Written out, not derived: thiserror would give the `Arc` itself as the source, and a
    // downcast to the cause's type would find an `Arc`, not it.
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.source
            .as_deref()
            .map(|source| source as &(dyn std::error::Error + 'static))
    }
}

impl PartialEq for ServiceError {
    fn eq(&self, other: &Self) -> bool {
        self.service == other.service && self.reason == other.reason
    }
}

impl Eq for ServiceError {}

/// One hit of a [`ContextSearch`].
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ContextHit {
    /// Where the text came from (a store, a document id).
    pub source: String,
    /// The matching text.
    pub text: String,
    /// Relevance, higher is better.
    pub score: f32,
}

/// Recall over a session's context stores.
#[async_trait]
pub trait ContextSearch: Send + Sync {
    /// The best `limit` hits for `query`, best first.
    async fn search(&self, query: &str, limit: usize) -> Result<Vec<ContextHit>, ServiceError>;
}

/// One remembered fact.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct MemoryFact {
    /// The fact's id, stable for its life.
    pub id: u64,
    /// The fact.
    pub text: String,
}

/// What a write to a [`MemoryAccess`] returned, and the memory's version once it was made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Versioned<T> {
    /// What the write returned: the fact added, or whether a fact was removed or replaced.
    pub value: T,
    /// The number of writes once this one was made, read with it (not after it, when a
    /// parallel write may have come in between): each write that changed the memory has its
    /// own. A write that changed nothing gives the version it found.
    pub version: u64,
}

/// A session's working memory: facts the agent keeps, each write a version bump.
///
/// Every write returns the version it made ([`Versioned`]): a caller reporting it reads it
/// there, as [`version`](Self::version) may already count a parallel write.
#[async_trait]
pub trait MemoryAccess: Send + Sync {
    /// Every fact, oldest first.
    async fn facts(&self) -> Result<Vec<MemoryFact>, ServiceError>;
    /// Adds a fact, returning it with its id.
    async fn add(&self, text: String) -> Result<Versioned<MemoryFact>, ServiceError>;
    /// Removes a fact; `false` when there was none with that id.
    async fn remove(&self, id: u64) -> Result<Versioned<bool>, ServiceError>;
    /// Replaces a fact's text; `false` when there was none with that id.
    async fn replace(&self, id: u64, text: String) -> Result<Versioned<bool>, ServiceError>;
    /// The number of writes so far.
    fn version(&self) -> u64;

    /// Every fact, oldest first, with the version they are at: read together, so that a
    /// caller showing both never pairs facts with a version a parallel write made after
    /// them (reading [`facts`](Self::facts), then [`version`](Self::version), can).
    ///
    /// The provided method reads the version before and after the facts, and reads again
    /// while a write came in between (at most eight reads, then the facts of the last with
    /// the version read after them). It holds for a memory whose writes change the facts
    /// before they count the version (as the stores here do, under their lock): one that
    /// counts first can be read between the two, its new version with the facts before. An implementation that holds both
    /// under one lock, as [`InMemoryMemory`](crate::in_memory::InMemoryMemory) and the
    /// harness's `FileMemory` do, overrides it to read them there.
    ///
    /// ```
    /// use toolsmith::MemoryAccess;
    /// use toolsmith::in_memory::InMemoryMemory;
    ///
    /// # futures::executor::block_on(async {
    /// let memory = InMemoryMemory::new();
    /// memory.add("the user prefers metric units".into()).await.unwrap();
    /// let listed = memory.facts_with_version().await.unwrap();
    /// assert_eq!((listed.value.len(), listed.version), (1, 1));
    /// # });
    /// ```
    async fn facts_with_version(&self) -> Result<Versioned<Vec<MemoryFact>>, ServiceError> {
        let mut before = self.version();
        let mut reads = 1;
        loop {
            let facts = self.facts().await?;
            let after = self.version();
            if after == before || reads >= MAX_SNAPSHOT_READS {
                return Ok(Versioned {
                    value: facts,
                    version: after,
                });
            }
            before = after;
            reads += 1;
        }
    }
}

/// How many times [`MemoryAccess::facts_with_version`]'s provided method reads the facts
/// while writes keep coming in between: a memory written without pause still gets an answer.
const MAX_SNAPSHOT_READS: usize = 8;

/// Values looked up by type: the user values registered on a shed
/// ([`SessionParts::state`]), or the values a batch lends each of its calls
/// ([`BatchOptions::with_call_values`](crate::BatchOptions::with_call_values)).
#[derive(Clone, Default)]
pub struct SessionState {
    values: HashMap<TypeId, Arc<dyn Any + Send + Sync>, TypeIdBuildHasher>,
}

impl SessionState {
    /// An empty state.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds (or replaces) the value of type `T`.
    pub fn insert<T: Send + Sync + 'static>(&mut self, value: T) {
        self.values.insert(TypeId::of::<T>(), Arc::new(value));
    }

    /// Adds (or replaces) the value of type `T`, already shared.
    pub fn insert_arc<T: Send + Sync + 'static>(&mut self, value: Arc<T>) {
        self.values.insert(TypeId::of::<T>(), value);
    }

    /// The value of type `T`, if one was added.
    pub fn get<T: Send + Sync + 'static>(&self) -> Option<Arc<T>> {
        self.values
            .get(&TypeId::of::<T>())
            .and_then(|value| Arc::clone(value).downcast::<T>().ok())
    }

    /// The number of values.
    pub fn len(&self) -> usize {
        self.values.len()
    }

    /// Whether there are no values.
    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }
}

impl std::fmt::Debug for SessionState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SessionState")
            .field("values", &self.values.len())
            .finish()
    }
}

/// What a tool constructor gets when a session is built: the same `Arc`s the session holds.
#[derive(Clone)]
pub struct SessionParts {
    /// The session's id.
    pub session_id: String,
    /// Recall over the session's stores and embedder.
    pub context: Arc<dyn ContextSearch>,
    /// The session's working memory.
    pub memory: Arc<dyn MemoryAccess>,
    /// The session's embedder, if it has one.
    pub embedder: Option<Arc<dyn Embedder>>,
    /// User values registered on the shed, by type.
    pub state: SessionState,
}

impl std::fmt::Debug for SessionParts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SessionParts")
            .field("session_id", &self.session_id)
            .field("embedder", &self.embedder.is_some())
            .field("state", &self.state)
            .finish_non_exhaustive()
    }
}
