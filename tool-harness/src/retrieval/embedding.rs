//! [`EmbeddingRetriever`]: documents ranked by the cosine similarity of their embeddings to
//! the query's, through the session's [`Embedder`].

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
    documents: RwLock<Vec<Embedded>>,
}

/// A stored document: its unit-length embedding, its text and its metadata.
type Embedded = (Box<[f32]>, String, Map<String, Value>);

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
            documents: RwLock::new(Vec::new()),
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
    /// text. The embedder's failure is given as it is, its
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
        let documents: Vec<(String, Map<String, Value>)> = documents.into_iter().collect();
        let texts: Vec<String> = documents.iter().map(|(text, _)| text.clone()).collect();
        let vectors = self.embedder.embed(&texts).await?;
        // A vector of another length would match no query: the document would never be found.
        self.check(&vectors, &texts)?;
        let mut stored = self
            .documents
            .write()
            .unwrap_or_else(PoisonError::into_inner);
        for (vector, (text, metadata)) in vectors.into_iter().zip(documents) {
            // A vector with no direction (every number zero) is kept empty, as tool discovery
            // keeps one: no query's length is its, so it matches nothing.
            stored.push((unit_vector(vector).unwrap_or_default(), text, metadata));
        }
        Ok(())
    }

    /// How many documents it holds.
    pub fn len(&self) -> usize {
        self.documents
            .read()
            .unwrap_or_else(PoisonError::into_inner)
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
}

#[async_trait]
impl Retriever for EmbeddingRetriever {
    fn name(&self) -> &str {
        &self.name
    }

    async fn retrieve(&self, query: &str, top_k: usize) -> Result<Vec<Document>, ServiceError> {
        let query = [query.to_owned()];
        let mut vectors = self.embedder.embed(&query).await?;
        // Of another length, it would match no document: "nothing found" would hide why.
        self.check(&vectors, &query)?;
        // Of no direction, empty: of no document's length, it finds nothing.
        let query = unit_vector(vectors.swap_remove(0)).unwrap_or_default();
        let documents = self
            .documents
            .read()
            .unwrap_or_else(PoisonError::into_inner);
        let mut scored: Vec<(f32, usize)> = documents
            .iter()
            .enumerate()
            .filter(|(_, (vector, ..))| vector.len() == query.len())
            .map(|(i, (vector, ..))| (vector.iter().zip(query.iter()).map(|(a, b)| a * b).sum(), i))
            .filter(|(score, _)| *score > 0.0)
            .collect();
        scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        Ok(scored
            .into_iter()
            .take(top_k)
            .map(|(score, i)| {
                let (_, content, metadata) = &documents[i];
                Document {
                    content: content.clone(),
                    score: f64::from(score),
                    metadata: metadata.clone(),
                }
            })
            .collect())
    }
}
