//! [`InMemoryMemory`]: a working memory held in a vector.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, PoisonError};

use async_trait::async_trait;

use crate::{MemoryAccess, MemoryFact, ServiceError};

/// Facts kept in memory, oldest first; every write bumps the version.
///
/// ```
/// use toolsmith_core::MemoryAccess;
/// use toolsmith_core::in_memory::InMemoryMemory;
///
/// # futures::executor::block_on(async {
/// let memory = InMemoryMemory::new();
/// let fact = memory.add("the user prefers metric units".into()).await.unwrap();
/// assert!(memory.replace(fact.id, "the user prefers imperial units".into()).await.unwrap());
/// assert!(!memory.remove(fact.id + 1).await.unwrap());
/// assert_eq!(memory.facts().await.unwrap()[0].text, "the user prefers imperial units");
/// assert_eq!(memory.version(), 2);
/// # });
/// ```
#[derive(Debug, Default)]
pub struct InMemoryMemory {
    facts: Mutex<(Vec<MemoryFact>, u64)>,
    version: AtomicU64,
}

impl InMemoryMemory {
    /// An empty memory.
    pub fn new() -> Self {
        Self::default()
    }

    fn bump(&self) {
        self.version.fetch_add(1, Ordering::AcqRel);
    }
}

#[async_trait]
impl MemoryAccess for InMemoryMemory {
    async fn facts(&self) -> Result<Vec<MemoryFact>, ServiceError> {
        Ok(self
            .facts
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .0
            .clone())
    }

    async fn add(&self, text: String) -> Result<MemoryFact, ServiceError> {
        let mut guard = self.facts.lock().unwrap_or_else(PoisonError::into_inner);
        let (facts, next_id) = &mut *guard;
        *next_id += 1;
        let fact = MemoryFact { id: *next_id, text };
        facts.push(fact.clone());
        self.bump();
        Ok(fact)
    }

    async fn remove(&self, id: u64) -> Result<bool, ServiceError> {
        let mut guard = self.facts.lock().unwrap_or_else(PoisonError::into_inner);
        let Some(at) = guard.0.iter().position(|f| f.id == id) else {
            return Ok(false);
        };
        guard.0.remove(at);
        self.bump();
        Ok(true)
    }

    async fn replace(&self, id: u64, text: String) -> Result<bool, ServiceError> {
        let mut guard = self.facts.lock().unwrap_or_else(PoisonError::into_inner);
        let Some(fact) = guard.0.iter_mut().find(|f| f.id == id) else {
            return Ok(false);
        };
        fact.text = text;
        self.bump();
        Ok(true)
    }

    fn version(&self) -> u64 {
        self.version.load(Ordering::Acquire)
    }
}
