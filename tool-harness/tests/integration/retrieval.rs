//! Retrieval: what `RetrieverTool` refuses before a retriever runs, and what
//! `EmbeddingRetriever` refuses of an embedder. (Ranking, `top_k` and failing retrievers are
//! tested with the sub-agents, in `subagents.rs`.)

use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use serde_json::{Value, json};
use toolsmith_core::{
    Embedder, ServiceError, ToolArguments, ToolCallManager, ToolCallRequest, ToolCallResult,
    ToolError,
};
use toolsmith_harness::retrieval::{Document, EmbeddingRetriever, Retriever, RetrieverTool};

/// A retriever that records every query it is given and finds one document for each.
#[derive(Default)]
struct Recording(Mutex<Vec<String>>);

#[async_trait]
impl Retriever for Recording {
    fn name(&self) -> &str {
        "recording"
    }

    async fn retrieve(&self, query: &str, _top_k: usize) -> Result<Vec<Document>, ServiceError> {
        self.0.lock().unwrap().push(query.to_owned());
        Ok(vec![Document::new("the first document", 0.5)])
    }
}

async fn search(tool: RetrieverTool, arguments: Value) -> Result<ToolCallResult, ToolError> {
    let manager = ToolCallManager::new("s");
    manager.register(Arc::new(tool)).unwrap();
    let call = ToolCallRequest::new(
        "1",
        "search_docs",
        ToolArguments::try_from(arguments).unwrap(),
    );
    manager.execute_one(&call).await
}

#[tokio::test]
async fn a_blank_query_is_refused_before_the_retriever_runs() {
    let retriever = Arc::new(Recording::default());
    let tool = || RetrieverTool::new(retriever.clone(), "search_docs", "Search.");
    for blank in [" ", "\n\t  ", "\u{3000}"] {
        let err = search(tool(), json!({"query": blank})).await.unwrap_err();
        assert!(
            matches!(err, ToolError::InvalidArguments { .. }),
            "{blank:?}: {err}"
        );
        assert_eq!(
            err.to_string(),
            "Invalid arguments for tool 'search_docs': /query: is blank; say what to look \
             for, in a few words or a question"
        );
    }
    assert!(retriever.0.lock().unwrap().is_empty());
    // A query with words around its spaces is the model's, as written.
    search(tool(), json!({"query": "  paid leave "}))
        .await
        .unwrap();
    assert_eq!(*retriever.0.lock().unwrap(), ["  paid leave "]);
}

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
        "notes: embedder: returned NaN as number 1 of the vector for text 1 (\"nan here\"): a \
         vector's numbers must be finite"
    );
    let err = docs.add(["inf", "fine"]).await.unwrap_err();
    assert_eq!(
        err.to_string(),
        "notes: embedder: returned -inf as number 2 of the vector for text 0 (\"inf\"): a \
         vector's numbers must be finite"
    );
    assert!(docs.is_empty());
    docs.add(["fine"]).await.unwrap();
    assert_eq!(docs.retrieve("fine", 5).await.unwrap().len(), 1);
    // Such a query would find nothing, and say only that: it is an error saying why.
    let err = docs.retrieve("nan", 5).await.unwrap_err();
    assert_eq!(
        err.to_string(),
        "notes: embedder: returned NaN as number 1 of the vector for \"nan\": a vector's \
         numbers must be finite"
    );
}
