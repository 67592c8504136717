//! [`InMemoryContext`]: a context store searched by shared words.

use std::collections::HashSet;
use std::sync::{PoisonError, RwLock};

use async_trait::async_trait;

use crate::shed::analyze;
use crate::{ContextHit, ContextSearch, ServiceError};

/// Texts kept in memory, searched by the share of the query's words each contains (after
/// the same analysis as tool search: split, lower-cased, stemmed, stop words dropped).
///
/// ```
/// use toolsmith::ContextSearch;
/// use toolsmith::in_memory::InMemoryContext;
///
/// let context = InMemoryContext::new();
/// context.add("notes.md", "The deploy key lives in the vault.");
/// context.add("todo.md", "Buy milk.");
/// let hits = futures::executor::block_on(context.search("where is the deploy key", 5)).unwrap();
/// assert_eq!(hits.len(), 1);
/// assert_eq!(hits[0].source, "notes.md");
/// ```
#[derive(Debug, Default)]
pub struct InMemoryContext {
    documents: RwLock<Vec<(String, String, HashSet<String>)>>,
}

impl InMemoryContext {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a text from `source`.
    pub fn add(&self, source: impl Into<String>, text: impl Into<String>) {
        let text = text.into();
        let terms = terms(&text);
        self.documents
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .push((source.into(), text, terms));
    }

    /// The number of texts.
    pub fn len(&self) -> usize {
        self.documents
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .len()
    }

    /// Whether the store is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

fn terms(text: &str) -> HashSet<String> {
    let mut terms = HashSet::new();
    analyze(text, |term| {
        terms.insert(term.to_owned());
    });
    terms
}

#[async_trait]
impl ContextSearch for InMemoryContext {
    async fn search(&self, query: &str, limit: usize) -> Result<Vec<ContextHit>, ServiceError> {
        let wanted = terms(query);
        if wanted.is_empty() {
            return Ok(Vec::new());
        }
        let documents = self
            .documents
            .read()
            .unwrap_or_else(PoisonError::into_inner);
        let mut hits: Vec<ContextHit> = documents
            .iter()
            .filter_map(|(source, text, terms)| {
                let shared = wanted.intersection(terms).count();
                (shared > 0).then(|| ContextHit {
                    source: source.clone(),
                    text: text.clone(),
                    score: shared as f32 / wanted.len() as f32,
                })
            })
            .collect();
        // Stable: equal scores keep the order the texts were added in.
        hits.sort_by(|a, b| b.score.total_cmp(&a.score));
        hits.truncate(limit);
        Ok(hits)
    }
}
