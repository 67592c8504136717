//! [`LexicalRetriever`]: documents kept in memory and ranked by the shed's BM25F index.

use std::collections::HashMap;
use std::sync::{PoisonError, RwLock};

use async_trait::async_trait;
use serde_json::{Map, Value};
use toolsmith_core::ServiceError;
use toolsmith_core::shed::TextIndex;

use super::{Document, Retriever};

/// Documents held in memory, ranked by words in common with the query (BM25F, the index
/// `shed` searches tools with: identifiers split, words stemmed, stop words ignored).
///
/// ```
/// use toolsmith::harness::retrieval::{LexicalRetriever, Retriever};
///
/// # futures::executor::block_on(async {
/// let docs = LexicalRetriever::new("handbook");
/// docs.add("leave", "Annual leave", "Employees get 25 days of paid leave a year.");
/// docs.add("expenses", "Expenses", "Keep receipts for every expense over 20 euros.");
/// let found = docs.retrieve("how many days of leave", 3).await.unwrap();
/// assert_eq!(found[0].metadata["id"], "leave");
/// # });
/// ```
#[derive(Debug)]
pub struct LexicalRetriever {
    name: String,
    store: RwLock<Store>,
}

#[derive(Debug, Default)]
struct Store {
    index: TextIndex,
    documents: HashMap<String, (String, Map<String, Value>)>,
}

impl LexicalRetriever {
    /// An empty retriever named `name`.
    pub fn new(name: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            store: RwLock::new(Store::default()),
        }
    }

    /// Adds (or replaces) the document `id` with its `title` and `content`. Its metadata
    /// holds `id` and `title`.
    pub fn add(&self, id: impl Into<String>, title: impl Into<String>, content: impl Into<String>) {
        let (id, title, content) = (id.into(), title.into(), content.into());
        let mut metadata = Map::new();
        metadata.insert("id".into(), Value::String(id.clone()));
        if !title.is_empty() {
            metadata.insert("title".into(), Value::String(title.clone()));
        }
        self.add_with_metadata(id, &title, content, metadata);
    }

    /// Adds (or replaces) the document `id` with `metadata` of your own.
    pub fn add_with_metadata(
        &self,
        id: impl Into<String>,
        title: &str,
        content: impl Into<String>,
        metadata: Map<String, Value>,
    ) {
        let (id, content) = (id.into(), content.into());
        let mut store = self.store.write().unwrap_or_else(PoisonError::into_inner);
        store.index.insert(&id, title, &content);
        store.documents.insert(id, (content, metadata));
    }

    /// Removes the document `id`; `false` when there was none.
    pub fn remove(&self, id: &str) -> bool {
        let mut store = self.store.write().unwrap_or_else(PoisonError::into_inner);
        store.documents.remove(id);
        store.index.remove(id)
    }

    /// How many documents it holds.
    pub fn len(&self) -> usize {
        self.store
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .documents
            .len()
    }

    /// Whether it holds none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[async_trait]
impl Retriever for LexicalRetriever {
    fn name(&self) -> &str {
        &self.name
    }

    async fn retrieve(&self, query: &str, top_k: usize) -> Result<Vec<Document>, ServiceError> {
        let store = self.store.read().unwrap_or_else(PoisonError::into_inner);
        Ok(store
            .index
            .search(query, top_k)
            .into_iter()
            .filter_map(|hit| {
                let (content, metadata) = store.documents.get(&*hit.id)?;
                Some(Document {
                    content: content.clone(),
                    score: f64::from(hit.score),
                    metadata: metadata.clone(),
                })
            })
            .collect())
    }
}
