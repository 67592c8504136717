//! Retrieval: what `EmbeddingRetriever` refuses of an embedder. (Ranking, `top_k` and failing retrievers are
//! tested with the sub-agents, in `subagents.rs`.)

use std::sync::Arc;

use async_trait::async_trait;
use toolsmith_core::{Embedder, ServiceError};
use toolsmith_harness::retrieval::{EmbeddingRetriever, Retriever};

/// An embedder of 3 dimensions whose vector for a text containing "nan" or "inf" holds that
/// number, and `[1, 1, 0]` for any other.
struct NotFinite;

#[async_trait]
impl Embedder for NotFinite {
    async fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, ServiceError> {
        Ok(texts
            .iter()
            .map(|text| match () {
                () if text.contains("nan") => vec![1.0, f32::NAN, 0.0],
                () if text.contains("inf") => vec![0.0, 1.0, f32::NEG_INFINITY],
                () => vec![1.0, 1.0, 0.0],
            })
            .collect())
    }

    fn dimensions(&self) -> usize {
        3
    }
}

#[tokio::test]
async fn the_embedding_retriever_refuses_vectors_with_numbers_that_are_not_finite() {
    let docs = EmbeddingRetriever::new("notes", Arc::new(NotFinite));
    // Such a document would be kept and never found: it is refused, naming the text and the
    // number, and none of the texts given with it is kept.
    let err = docs.add(["fine", "nan here"]).await.unwrap_err();
    assert_eq!(
        err.to_string(),
        "notes: the embedder returned NaN as number 1 of the vector for text 1: a vector's \
         numbers must be finite"
    );
    let err = docs.add(["inf", "fine"]).await.unwrap_err();
    assert_eq!(
        err.to_string(),
        "notes: the embedder returned -inf as number 2 of the vector for text 0: a vector's \
         numbers must be finite"
    );
    assert!(docs.is_empty());
    docs.add(["fine"]).await.unwrap();
    assert_eq!(docs.retrieve("fine", 5).await.unwrap().len(), 1);
    // Such a query would find nothing, and say only that: it is an error saying why.
    let err = docs.retrieve("nan", 5).await.unwrap_err();
    assert_eq!(
        err.to_string(),
        "notes: the embedder returned NaN as number 1 of the vector for the query: a vector's \
         numbers must be finite"
    );
}
