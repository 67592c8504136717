//! [`EmbeddingRetriever`]: documents ranked by the cosine similarity of their embeddings to
//! the query's, through the session's [`Embedder`].

use std::collections::HashMap;
use std::sync::{Arc, PoisonError, RwLock};

use async_trait::async_trait;
use serde_json::{Map, Value};
use toolsmith_core::{
    Embedder, ServiceError, check_embeddings, check_finite_embeddings, unit_vector,
};

use super::{Document, Retriever};

/// Documents embedded with an [`Embedder`] (a session's, or any) and ranked by cosine
/// similarity to the query's embedding.
///
/// Documents are added as they are ([`add`](Self::add)), or under ids of your own
/// ([`upsert`](Self::upsert)), which a later `upsert` replaces and [`remove`](Self::remove)
/// takes away: an index kept in step with files or records that change.
///
/// ```
/// use std::sync::Arc;
/// use toolsmith::in_memory::HashingEmbedder;
/// use toolsmith::harness::retrieval::{EmbeddingRetriever, Retriever};
///
/// # futures::executor::block_on(async {
/// let docs = EmbeddingRetriever::new("notes", Arc::new(HashingEmbedder::default()));
/// docs.add(["The cat sat on the mat.", "Stock prices fell sharply today."]).await.unwrap();
/// let found = docs.retrieve("where did the cat sit", 1).await.unwrap();
/// assert!(found[0].content.contains("cat"));
/// # });
/// ```
pub struct EmbeddingRetriever {
    name: String,
    embedder: Arc<dyn Embedder>,
    store: RwLock<Store>,
}

/// The documents, and where the ones with ids are.
#[derive(Default)]
struct Store {
    documents: Vec<Embedded>,
    by_id: HashMap<String, usize>,
    /// How many numbers the embedder gave each document held (a vector of no direction is
    /// kept empty, so it is kept here); `None` while none is held.
    dimensions: Option<usize>,
}

/// A stored document: its id if it has one, its unit-length embedding, its text and its
/// metadata.
struct Embedded {
    id: Option<String>,
    vector: Box<[f32]>,
    content: String,
    metadata: Map<String, Value>,
}

impl Store {
    /// Adds `document`, in the place of the one with its id if there is one.
    fn put(&mut self, document: Embedded) {
        match document.id.as_ref().and_then(|id| self.by_id.get(id)) {
            Some(&at) => self.documents[at] = document,
            None => {
                if let Some(id) = &document.id {
                    self.by_id.insert(id.clone(), self.documents.len());
                }
                self.documents.push(document);
            }
        }
    }

    /// Removes the document `id`, the last one moved into its place.
    fn remove(&mut self, id: &str) -> bool {
        let Some(at) = self.by_id.remove(id) else {
            return false;
        };
        self.documents.swap_remove(at);
        if self.documents.is_empty() {
            self.dimensions = None;
        }
        if let Some(moved) = self.documents.get(at).and_then(|d| d.id.as_ref()) {
            self.by_id.insert(moved.clone(), at);
        }
        true
    }
}

impl std::fmt::Debug for EmbeddingRetriever {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EmbeddingRetriever")
            .field("name", &self.name)
            .field("documents", &self.len())
            .finish_non_exhaustive()
    }
}

impl EmbeddingRetriever {
    /// An empty retriever named `name` that embeds with `embedder`.
    pub fn new(name: impl Into<String>, embedder: Arc<dyn Embedder>) -> Self {
        Self {
            name: name.into(),
            embedder,
            store: RwLock::default(),
        }
    }

    /// Embeds and adds `texts`, without metadata.
    pub async fn add<I, S>(&self, texts: I) -> Result<(), ServiceError>
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.add_with_metadata(texts.into_iter().map(|t| (t.into(), Map::new())))
            .await
    }

    /// Embeds and adds documents, each `(content, metadata)`. Fails, adding none, when the
    /// embedder fails or does not return one vector of its dimension, of finite numbers, per
    /// text, or when its dimension is not that of the documents held (it changed since they
    /// were embedded). The embedder's failure is given as it is, its
    /// [`source`](std::error::Error::source) kept: an `OpenAiEmbedder`'s (feature
    /// `http-models`) is its [`ModelError`](crate::model::ModelError)
    /// (`ContextTooLong` for a document too long for the model, to split), and it names the
    /// text (the document's place in `documents`) when it sent several; a document too long
    /// is named even when the server's refusal does not say which it was (see
    /// `OpenAiEmbedder`'s `embed`).
    pub async fn add_with_metadata(
        &self,
        documents: impl IntoIterator<Item = (String, Map<String, Value>)>,
    ) -> Result<(), ServiceError> {
        self.embed_and_store(
            documents
                .into_iter()
                .map(|(content, metadata)| (None, content, metadata)),
        )
        .await
    }

    /// Embeds and adds documents under ids, each `(id, content)`: one with the id of a
    /// document held already takes its place (in one call, the last of an id is kept). Its
    /// metadata holds `id`. Fails, changing nothing, as [`add`](Self::add) does.
    ///
    /// The documents are stored once embedded: of two upserts of one id at once, the one
    /// whose embedding ends last is kept, and a [`remove`](Self::remove) of the id while an
    /// upsert of it is embedding is undone when that upsert stores it (await the upsert
    /// first where the order matters).
    ///
    /// ```
    /// use std::sync::Arc;
    /// use toolsmith::in_memory::HashingEmbedder;
    /// use toolsmith::harness::retrieval::{EmbeddingRetriever, Retriever};
    ///
    /// # futures::executor::block_on(async {
    /// let docs = EmbeddingRetriever::new("notes", Arc::new(HashingEmbedder::default()));
    /// docs.upsert([("a.md", "The cat sat on the mat."), ("b.md", "Prices fell.")]).await.unwrap();
    /// // a.md changed: embedded again, in the old one's place.
    /// docs.upsert([("a.md", "The cat sleeps by the door.")]).await.unwrap();
    /// assert_eq!(docs.len(), 2);
    /// let found = docs.retrieve("where does the cat sleep", 1).await.unwrap();
    /// assert_eq!(found[0].content, "The cat sleeps by the door.");
    /// assert_eq!(found[0].metadata["id"], "a.md");
    /// assert!(docs.remove("b.md"));
    /// assert_eq!(docs.len(), 1);
    /// # });
    /// ```
    pub async fn upsert<I, K, S>(&self, documents: I) -> Result<(), ServiceError>
    where
        I: IntoIterator<Item = (K, S)>,
        K: Into<String>,
        S: Into<String>,
    {
        self.upsert_with_metadata(
            documents
                .into_iter()
                .map(|(id, content)| (id.into(), content.into(), Map::new())),
        )
        .await
    }

    /// [`upsert`](Self::upsert) with metadata of your own, each `(id, content, metadata)`;
    /// the metadata's `id` is set to the document's (the id a found document is removed
    /// by: keep an `id` of your own under another key).
    pub async fn upsert_with_metadata(
        &self,
        documents: impl IntoIterator<Item = (String, String, Map<String, Value>)>,
    ) -> Result<(), ServiceError> {
        self.embed_and_store(documents.into_iter().map(|(id, content, mut metadata)| {
            metadata.insert("id".to_owned(), Value::String(id.clone()));
            (Some(id), content, metadata)
        }))
        .await
    }

    /// Removes the document `id`; `false` when there was none. Documents added without an
    /// id are kept until the retriever is dropped.
    pub fn remove(&self, id: &str) -> bool {
        self.store
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(id)
    }

    /// Embeds `documents`, each `(id, content, metadata)`, and stores them if the embedder
    /// gave one good vector a text; else stores none.
    async fn embed_and_store(
        &self,
        documents: impl Iterator<Item = (Option<String>, String, Map<String, Value>)>,
    ) -> Result<(), ServiceError> {
        let documents: Vec<_> = documents.collect();
        let texts: Vec<String> = documents.iter().map(|(_, text, _)| text.clone()).collect();
        let vectors = self.embedder.embed(&texts).await?;
        // A vector of another length would match no query: the document would never be found.
        self.check(&vectors, &texts)?;
        let mut store = self.store.write().unwrap_or_else(PoisonError::into_inner);
        // Checked under the lock that stores them: two adds at once of two dimensions
        // cannot both pass.
        if let Some(vector) = vectors.first() {
            self.check_held(&store, vector.len())?;
            store.dimensions = Some(vector.len());
        }
        for (vector, (id, content, metadata)) in vectors.into_iter().zip(documents) {
            store.put(Embedded {
                id,
                // A vector with no direction (every number zero) is kept empty, as tool
                // discovery keeps one: no query's length is its, so it matches nothing.
                vector: unit_vector(vector).unwrap_or_default(),
                content,
                metadata,
            });
        }
        Ok(())
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

    /// [`check_embeddings`] and [`check_finite_embeddings`] under this retriever's name: one
    /// vector of the embedder's dimension, of finite numbers, for each of `texts` (a vector
    /// with a NaN or an infinity would be kept as one that matches nothing).
    fn check(&self, vectors: &[Vec<f32>], texts: &[String]) -> Result<(), ServiceError> {
        check_embeddings(vectors, texts, self.embedder.dimensions())
            .and_then(|()| check_finite_embeddings(vectors, texts))
            .map_err(|error| ServiceError::new(&self.name, error))
    }

    /// Whether vectors of `dimensions` numbers go with the documents `store` holds. An
    /// embedder's dimension may change between calls (another model, a fallback): its
    /// vectors would match none held, and "nothing found" would hide why.
    fn check_held(&self, store: &Store, dimensions: usize) -> Result<(), ServiceError> {
        match store.dimensions {
            Some(held) if held != dimensions => Err(ServiceError::new(
                &self.name,
                format!(
                    "the embedder's vectors have {dimensions} numbers, but the documents \
                     held were embedded with {held} (has its model changed?); embed them \
                     again into a new retriever"
                ),
            )),
            _ => Ok(()),
        }
    }
}

#[async_trait]
impl Retriever for EmbeddingRetriever {
    fn name(&self) -> &str {
        &self.name
    }

    /// The `top_k` documents most similar to `query` (the cosine of their embeddings), most
    /// similar first (equal scores in the order the documents are held); a document of no positive
    /// similarity (unrelated, or opposed) is not given, however few the others. A query
    /// vector of another dimension than the documents held is an error saying so. While it
    /// holds no document, it finds none without embedding the query.
    async fn retrieve(&self, query: &str, top_k: usize) -> Result<Vec<Document>, ServiceError> {
        // Nothing to find: the query is not embedded (a request paid for nothing, and an
        // embedder that is down would fail a search whose answer is known).
        if self.is_empty() {
            return Ok(Vec::new());
        }
        let query = [query.to_owned()];
        let mut vectors = self.embedder.embed(&query).await?;
        // Of another length, it would match no document: "nothing found" would hide why.
        self.check(&vectors, &query)?;
        let store = self.store.read().unwrap_or_else(PoisonError::into_inner);
        self.check_held(&store, vectors[0].len())?;
        // Of no direction, empty: of no document's length, it finds nothing.
        let query = unit_vector(vectors.swap_remove(0)).unwrap_or_default();
        let mut scored: Vec<(f32, usize)> = store
            .documents
            .iter()
            .enumerate()
            .filter(|(_, document)| document.vector.len() == query.len())
            .map(|(i, document)| {
                let cosine = document.vector.iter().zip(query.iter()).map(|(a, b)| a * b);
                (cosine.sum(), i)
            })
            .filter(|(score, _)| *score > 0.0)
            .collect();
        let best_first =
            |a: &(f32, usize), b: &(f32, usize)| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1));
        // The best `top_k` picked first: only they are sorted, however many match.
        if top_k == 0 {
            scored.clear();
        } else if scored.len() > top_k {
            scored.select_nth_unstable_by(top_k - 1, best_first);
            scored.truncate(top_k);
        }
        scored.sort_unstable_by(best_first);
        Ok(scored
            .into_iter()
            .map(|(score, i)| {
                let document = &store.documents[i];
                Document {
                    content: document.content.clone(),
                    score: f64::from(score),
                    metadata: document.metadata.clone(),
                }
            })
            .collect())
    }
}
