//! Retrieval for agents: the [`Retriever`] trait, two retrievers (lexical over the shed's
//! BM25F index, and by embedding), and [`RetrieverTool`], which gives any retriever to a
//! model as a tool.

mod document;
mod embedding;
mod lexical;
mod tool;

use async_trait::async_trait;
use toolsmith_core::ServiceError;

pub use document::Document;
pub use embedding::EmbeddingRetriever;
pub use lexical::LexicalRetriever;
pub use tool::{DEFAULT_MAX_RESULT_CHARS, DEFAULT_TOP_K, MAX_TOP_K, NO_DOCUMENTS, RetrieverTool};

/// Finds the documents most relevant to a query.
///
/// ```
/// use async_trait::async_trait;
/// use toolsmith::ServiceError;
/// use toolsmith::harness::retrieval::{Document, Retriever};
///
/// /// Returns every document that contains the query, verbatim.
/// struct Grep(Vec<String>);
///
/// #[async_trait]
/// impl Retriever for Grep {
///     fn name(&self) -> &str { "grep" }
///
///     async fn retrieve(&self, query: &str, top_k: usize) -> Result<Vec<Document>, ServiceError> {
///         Ok(self.0.iter().filter(|d| d.contains(query)).take(top_k)
///             .map(|d| Document::new(d.clone(), 1.0)).collect())
///     }
/// }
/// ```
#[async_trait]
pub trait Retriever: Send + Sync {
    /// The retriever's name, as errors report it.
    fn name(&self) -> &str;

    /// At most `top_k` documents for `query`, most relevant first.
    async fn retrieve(&self, query: &str, top_k: usize) -> Result<Vec<Document>, ServiceError>;
}
