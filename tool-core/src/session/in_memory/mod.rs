//! In-memory session services: a context store, a working memory and a hashing embedder.
//! Enough for tests, examples and sessions that keep nothing between runs.

mod context;
mod embedder;
mod memory;

use std::sync::Arc;

pub use context::InMemoryContext;
pub use embedder::HashingEmbedder;
pub use memory::InMemoryMemory;

use crate::{SessionParts, SessionState};

impl SessionParts {
    /// Parts for the session `session_id` with an empty [`InMemoryContext`], an empty
    /// [`InMemoryMemory`], no embedder and no state.
    ///
    /// ```
    /// use toolsmith::SessionParts;
    ///
    /// let parts = SessionParts::in_memory("s-1");
    /// assert_eq!(parts.session_id, "s-1");
    /// assert!(parts.embedder.is_none());
    /// ```
    #[must_use]
    pub fn in_memory(session_id: impl Into<String>) -> Self {
        Self {
            session_id: session_id.into(),
            context: Arc::new(InMemoryContext::new()),
            memory: Arc::new(InMemoryMemory::new()),
            embedder: None,
            state: SessionState::new(),
        }
    }

    /// The same parts with `embedder` as the session's embedder.
    #[must_use]
    pub fn with_embedder(mut self, embedder: Arc<dyn crate::Embedder>) -> Self {
        self.embedder = Some(embedder);
        self
    }
}
