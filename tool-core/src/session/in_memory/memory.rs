//! [`InMemoryMemory`]: a working memory held in a vector.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, PoisonError};

use async_trait::async_trait;

use crate::{MemoryAccess, MemoryFact, ServiceError, Versioned};

/// Facts kept in memory, oldest first; every write bumps the version.
///
/// ```
/// use toolsmith::MemoryAccess;
/// use toolsmith::in_memory::InMemoryMemory;
///
/// # futures::executor::block_on(async {
/// let memory = InMemoryMemory::new();
/// let fact = memory.add("the user prefers metric units".into()).await.unwrap().value;
/// let replaced = memory.replace(fact.id, "the user prefers imperial units".into()).await.unwrap();
/// assert!(replaced.value);
/// assert_eq!(replaced.version, 2);
/// assert!(!memory.remove(fact.id + 1).await.unwrap().value);
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

    /// Counts a write (made under the facts' lock, so versions follow the writes' order),
    /// returning the version it makes.
    fn bump(&self) -> u64 {
        self.version.fetch_add(1, Ordering::AcqRel) + 1
    }

    /// What a write that changed nothing returns.
    fn unchanged(&self) -> Versioned<bool> {
        Versioned {
            value: false,
            version: self.version(),
        }
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

    async fn facts_with_version(&self) -> Result<Versioned<Vec<MemoryFact>>, ServiceError> {
        // Writes bump the version under the facts' lock, so under it the two agree.
        let guard = self.facts.lock().unwrap_or_else(PoisonError::into_inner);
        Ok(Versioned {
            value: guard.0.clone(),
            version: self.version(),
        })
    }

    async fn add(&self, text: String) -> Result<Versioned<MemoryFact>, ServiceError> {
        let mut guard = self.facts.lock().unwrap_or_else(PoisonError::into_inner);
        let (facts, next_id) = &mut *guard;
        // An id is never given twice, even past the last one.
        *next_id = next_id
            .checked_add(1)
            .ok_or_else(|| ServiceError::new("memory", "every fact id has been given"))?;
        let fact = MemoryFact { id: *next_id, text };
        facts.push(fact.clone());
        Ok(Versioned {
            value: fact,
            version: self.bump(),
        })
    }

    async fn remove(&self, id: u64) -> Result<Versioned<bool>, ServiceError> {
        let mut guard = self.facts.lock().unwrap_or_else(PoisonError::into_inner);
        let Some(at) = guard.0.iter().position(|f| f.id == id) else {
            return Ok(self.unchanged());
        };
        guard.0.remove(at);
        Ok(Versioned {
            value: true,
            version: self.bump(),
        })
    }

    async fn replace(&self, id: u64, text: String) -> Result<Versioned<bool>, ServiceError> {
        let mut guard = self.facts.lock().unwrap_or_else(PoisonError::into_inner);
        let Some(fact) = guard.0.iter_mut().find(|f| f.id == id) else {
            return Ok(self.unchanged());
        };
        fact.text = text;
        Ok(Versioned {
            value: true,
            version: self.bump(),
        })
    }

    fn version(&self) -> u64 {
        self.version.load(Ordering::Acquire)
    }
}
