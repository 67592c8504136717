//! Retrieval: `RetrieverTool` (ranking, `top_k`, empty and failing retrievers, what it
//! refuses before a retriever runs) and `EmbeddingRetriever` (ranking, what it refuses of an
//! embedder).

use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use serde_json::{Value, json};
use toolsmith_core::in_memory::HashingEmbedder;
use toolsmith_core::{
    Embedder, ServiceError, ToolArguments, ToolCallManager, ToolCallRequest, ToolCallResult,
    ToolError,
};
use toolsmith_harness::retrieval::{
    DEFAULT_MAX_RESULT_CHARS, Document, EmbeddingRetriever, LexicalRetriever, NO_DOCUMENTS,
    Retriever, RetrieverTool,
};

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

#[tokio::test]
async fn a_blank_query_is_refused_before_the_retriever_runs() {
    let retriever = Arc::new(Recording::default());
    let tool = || RetrieverTool::new(retriever.clone(), "search_docs", "Search.");
    // Invisible format characters (zero-width space, joiners, word joiner, BOM) are no
    // more a query than spaces.
    for blank in [
        " ",
        "\n\t  ",
        "\u{3000}",
        "\u{200B}",
        "\u{FEFF}",
        " \u{200C}\u{200D} ",
        "\u{2060}\u{200B}",
    ] {
        let err = retrieve(tool(), json!({"query": blank})).await.unwrap_err();
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
    retrieve(tool(), json!({"query": "  paid leave "}))
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

/// An embedder that is down: every call fails, and is counted.
#[derive(Default)]
struct Down(std::sync::atomic::AtomicUsize);

#[async_trait]
impl Embedder for Down {
    async fn embed(&self, _texts: &[String]) -> Result<Vec<Vec<f32>>, ServiceError> {
        self.0.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        Err(ServiceError::new("embedder", "connection refused"))
    }

    fn dimensions(&self) -> usize {
        3
    }
}

/// A search of a retriever that holds no document asks the embedder nothing: it embedded
/// the query, a paid request for nothing, and failed the search when the embedder was down
/// although its answer was known.
#[tokio::test]
async fn the_embedding_retriever_embeds_no_query_when_it_can_find_nothing() {
    let embedder = Arc::new(Down::default());
    let docs = EmbeddingRetriever::new("notes", embedder.clone());
    assert_eq!(docs.retrieve("anything", 5).await.unwrap(), []);
    let tool = RetrieverTool::new(Arc::new(docs), "search_docs", "Search.");
    let result = retrieve(tool, json!({"query": "anything"})).await.unwrap();
    assert_eq!(
        contents_and_note(&result),
        (vec![], Some(NO_DOCUMENTS.to_owned()))
    );
    assert_eq!(embedder.0.load(std::sync::atomic::Ordering::Relaxed), 0);
}

fn corpus() -> Arc<LexicalRetriever> {
    let docs = Arc::new(LexicalRetriever::new("handbook"));
    docs.add(
        "leave",
        "Annual leave",
        "Employees get 25 days of paid leave a year; unused leave carries over.",
    );
    docs.add(
        "expenses",
        "Expenses",
        "Keep receipts for every expense; travel expenses need approval.",
    );
    docs.add(
        "laptops",
        "Laptops",
        "Every employee gets a laptop, replaced every three years.",
    );
    docs.add(
        "parking",
        "Parking",
        "Parking spaces are assigned by seniority.",
    );
    docs
}

async fn retrieve(tool: RetrieverTool, arguments: Value) -> Result<ToolCallResult, ToolError> {
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
async fn retriever_tool_ranks_bounds_top_k_and_reports_empty_and_failing_retrievers() {
    let tool = || RetrieverTool::new(corpus(), "search_docs", "Search the employee handbook.");
    let result = retrieve(tool(), json!({"query": "how many days of paid leave"}))
        .await
        .unwrap();
    let documents: Value = serde_json::from_str(&result.content.to_text()).unwrap();
    let documents = documents["documents"].as_array().unwrap();
    assert_eq!(documents[0]["metadata"]["id"], "leave");
    let scores: Vec<f64> = documents
        .iter()
        .map(|d| d["score"].as_f64().unwrap())
        .collect();
    assert!(scores.windows(2).all(|w| w[0] >= w[1]), "{scores:?}");

    let two = retrieve(
        tool(),
        json!({"query": "employee laptop leave expenses", "top_k": 2}),
    )
    .await
    .unwrap();
    let two: Value = serde_json::from_str(&two.content.to_text()).unwrap();
    assert_eq!(two["documents"].as_array().unwrap().len(), 2);
    let one = retrieve(tool().with_default_top_k(1), json!({"query": "employee"}))
        .await
        .unwrap();
    let one: Value = serde_json::from_str(&one.content.to_text()).unwrap();
    assert_eq!(one["documents"].as_array().unwrap().len(), 1);

    for bad in [json!(0), json!(51), json!("many")] {
        let err = retrieve(tool(), json!({"query": "leave", "top_k": bad}))
            .await
            .unwrap_err();
        assert!(
            matches!(err, ToolError::InvalidArguments { .. }),
            "{bad}: {err}"
        );
        assert!(err.to_string().contains("/top_k"), "{err}");
    }
    let err = retrieve(tool(), json!({"top_k": 3})).await.unwrap_err();
    assert!(
        err.to_string().contains("\"query\" is a required property"),
        "{err}"
    );

    let empty = retrieve(tool(), json!({"query": "quantum chromodynamics"}))
        .await
        .unwrap();
    // Structured as every result of a tool with an output schema must be (MCP).
    assert_eq!(
        empty.content.json_value().as_deref(),
        Some(&json!({"documents": [], "note": NO_DOCUMENTS}))
    );

    struct Broken;
    #[async_trait]
    impl Retriever for Broken {
        fn name(&self) -> &str {
            "vector-store"
        }
        async fn retrieve(&self, _: &str, _: usize) -> Result<Vec<Document>, ServiceError> {
            Err(ServiceError::new("vector-store", "connection reset"))
        }
    }
    let err = retrieve(
        RetrieverTool::new(Arc::new(Broken), "search_docs", "Search."),
        json!({"query": "x"}),
    )
    .await
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "Tool 'search_docs' failed: the retriever 'vector-store' failed: vector-store: connection reset"
    );

    // JSON has no NaN: a score that is not a number is the retriever's fault, said so.
    struct Unscored;
    #[async_trait]
    impl Retriever for Unscored {
        fn name(&self) -> &str {
            "unscored"
        }
        async fn retrieve(&self, _: &str, _: usize) -> Result<Vec<Document>, ServiceError> {
            Ok(vec![
                Document::new("fine", 1.0),
                Document::new("broken", f64::NAN),
            ])
        }
    }
    let err = retrieve(
        RetrieverTool::new(Arc::new(Unscored), "search_docs", "Search."),
        json!({"query": "x"}),
    )
    .await
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "Tool 'search_docs' failed: the retriever 'unscored' gave document 1 the score NaN, not a finite number"
    );
}

#[tokio::test]
async fn the_embedding_retriever_ranks_by_similarity() {
    let docs = EmbeddingRetriever::new("notes", Arc::new(HashingEmbedder::default()));
    docs.add([
        "The cat sat on the mat near the door.",
        "Quarterly revenue grew by ten percent.",
        "A cat and a dog played on the mat.",
    ])
    .await
    .unwrap();
    let found = docs.retrieve("cat on the mat", 2).await.unwrap();
    assert_eq!(found.len(), 2);
    assert!(found.iter().all(|d| d.content.contains("cat")), "{found:?}");
    assert!(found[0].score >= found[1].score);
    assert!(
        docs.retrieve("zebra xylophone", 3)
            .await
            .unwrap()
            .is_empty()
    );
}

/// [`HashingEmbedder`]'s vectors times a scale: the same directions, of any length.
struct Scaled(f32);

#[async_trait]
impl Embedder for Scaled {
    async fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, ServiceError> {
        let mut vectors = HashingEmbedder::default().embed(texts).await?;
        for number in vectors.iter_mut().flatten() {
            *number *= self.0;
        }
        Ok(vectors)
    }

    fn dimensions(&self) -> usize {
        HashingEmbedder::default().dimensions()
    }
}

#[tokio::test]
async fn the_embedding_retriever_finds_by_direction_whatever_the_vectors_length() {
    let texts = [
        "The cat sat on the mat near the door.",
        "Quarterly revenue grew by ten percent.",
        "A cat and a dog played on the mat.",
    ];
    let mut found_at_each_scale = Vec::new();
    // Squared in `f32`, numbers of 1e25 overflowed and of 1e-25 vanished: such documents
    // were kept as vectors that match nothing.
    for scale in [1.0, 1e25, 1e-25] {
        let docs = EmbeddingRetriever::new("notes", Arc::new(Scaled(scale)));
        docs.add(texts).await.unwrap();
        let found = docs.retrieve("cat on the mat", 3).await.unwrap();
        let contents: Vec<String> = found.into_iter().map(|d| d.content).collect();
        found_at_each_scale.push(contents);
    }
    assert_eq!(found_at_each_scale[0].len(), 2, "{found_at_each_scale:?}");
    assert_eq!(found_at_each_scale[1], found_at_each_scale[0]);
    assert_eq!(found_at_each_scale[2], found_at_each_scale[0]);
}

/// An embedder of 3 dimensions whose vector for a text containing "blank" is all zeros, and
/// `[1, 1, 0]` for any other.
struct Directionless;

#[async_trait]
impl Embedder for Directionless {
    async fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, ServiceError> {
        Ok(texts
            .iter()
            .map(|text| match text.contains("blank") {
                true => vec![0.0; 3],
                false => vec![1.0, 1.0, 0.0],
            })
            .collect())
    }

    fn dimensions(&self) -> usize {
        3
    }
}

#[tokio::test]
async fn a_vector_with_no_direction_is_kept_and_matches_nothing() {
    let docs = EmbeddingRetriever::new("notes", Arc::new(Directionless));
    docs.add(["a blank page", "a full page"]).await.unwrap();
    assert_eq!(docs.len(), 2);
    let found = docs.retrieve("any page", 5).await.unwrap();
    let contents: Vec<&str> = found.iter().map(|d| d.content.as_str()).collect();
    assert_eq!(contents, ["a full page"]);
    // A query of no direction finds nothing, and is no error.
    assert!(docs.retrieve("blank", 5).await.unwrap().is_empty());
}

/// An embedder of 3 dimensions whose vector for a text containing "short" has 2 numbers.
struct Ragged;

#[async_trait]
impl toolsmith_core::Embedder for Ragged {
    async fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, ServiceError> {
        Ok(texts
            .iter()
            .map(|text| match text.contains("short") {
                true => vec![1.0, 0.0],
                false => vec![1.0, 0.0, 0.0],
            })
            .collect())
    }

    fn dimensions(&self) -> usize {
        3
    }
}

#[tokio::test]
async fn the_embedding_retriever_refuses_vectors_not_of_the_embedder_s_dimension() {
    let docs = EmbeddingRetriever::new("notes", Arc::new(Ragged));
    // A document whose vector is too short would never be found: it is refused, and none of
    // the texts given with it is kept.
    let err = docs.add(["fine", "short", "fine too"]).await.unwrap_err();
    assert_eq!(
        err.to_string(),
        "notes: embedder: returned 2 numbers for text 1 (\"short\"), but its dimension is 3"
    );
    assert!(docs.is_empty());
    docs.add(["fine"]).await.unwrap();
    assert_eq!(docs.retrieve("fine", 5).await.unwrap().len(), 1);
    // A query whose vector is too short is an error, not "nothing found".
    let err = docs.retrieve("short", 5).await.unwrap_err();
    assert_eq!(
        err.to_string(),
        "notes: embedder: returned 2 numbers for \"short\", but its dimension is 3"
    );
}

/// An embedder whose dimension is what the test sets (an embedder that changed model, or
/// fell back to another): every text's vector is that many ones.
struct Switching(std::sync::atomic::AtomicUsize);

#[async_trait]
impl Embedder for Switching {
    async fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, ServiceError> {
        Ok(texts.iter().map(|_| vec![1.0; self.dimensions()]).collect())
    }

    fn dimensions(&self) -> usize {
        self.0.load(std::sync::atomic::Ordering::SeqCst)
    }
}

#[tokio::test]
async fn the_embedding_retriever_refuses_an_embedder_whose_dimension_changed() {
    let embedder = Arc::new(Switching(3.into()));
    let docs = EmbeddingRetriever::new("notes", embedder.clone());
    docs.add(["one", "two"]).await.unwrap();
    embedder.0.store(4, std::sync::atomic::Ordering::SeqCst);
    // Every document held is of 3 numbers: a query of 4 matched none of them, and said only
    // "nothing found"; a document of 4 was kept and matched no query of 3.
    let err = docs.retrieve("one", 5).await.unwrap_err();
    assert_eq!(
        err.to_string(),
        "notes: the embedder's vectors have 4 numbers, but the documents held were \
         embedded with 3 (has its model changed?); embed them again into a new retriever"
    );
    let err = docs.add(["three"]).await.unwrap_err();
    assert_eq!(
        err.to_string(),
        "notes: the embedder's vectors have 4 numbers, but the documents held were \
         embedded with 3 (has its model changed?); embed them again into a new retriever"
    );
    assert_eq!(docs.len(), 2);
    embedder.0.store(3, std::sync::atomic::Ordering::SeqCst);
    assert_eq!(contents(&docs, "one", 5).await, ["one", "two"]);
    // Once it holds nothing, a retriever takes vectors of any dimension again.
    docs.upsert([("a", "a")]).await.unwrap();
    assert!(docs.remove("a"));
    assert_eq!(docs.len(), 2);
    let empty = EmbeddingRetriever::new("empty", embedder.clone());
    empty.upsert([("a", "a")]).await.unwrap();
    assert!(empty.remove("a"));
    embedder.0.store(5, std::sync::atomic::Ordering::SeqCst);
    empty.add(["five"]).await.unwrap();
    assert_eq!(contents(&empty, "five", 5).await, ["five"]);
}

/// A retriever that finds the same documents for every query.
struct Fixed(Vec<Document>);

#[async_trait]
impl Retriever for Fixed {
    fn name(&self) -> &str {
        "fixed"
    }

    async fn retrieve(&self, _query: &str, top_k: usize) -> Result<Vec<Document>, ServiceError> {
        Ok(self.0.iter().take(top_k).cloned().collect())
    }
}

/// Spec 02: `top_k` is optional, and a call without it gets at most 5 documents.
#[tokio::test]
async fn a_call_without_top_k_gets_five_documents() {
    let documents = (0..8)
        .map(|n| Document::new(format!("doc {n}"), 1.0))
        .collect();
    let tool = RetrieverTool::new(Arc::new(Fixed(documents)), "search_docs", "Search.");
    let result = retrieve(tool, json!({"query": "anything"})).await.unwrap();
    let (contents, note) = contents_and_note(&result);
    assert_eq!(
        contents,
        (0..5).map(|n| format!("doc {n}")).collect::<Vec<_>>()
    );
    assert_eq!(note, None);
}

/// The documents' contents and the note of a `RetrieverTool` result.
fn contents_and_note(result: &ToolCallResult) -> (Vec<String>, Option<String>) {
    let value: Value = serde_json::from_str(&result.content.to_text()).unwrap();
    let contents = value["documents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|document| document["content"].as_str().unwrap().to_owned())
        .collect();
    (contents, value["note"].as_str().map(str::to_owned))
}

#[tokio::test]
async fn a_result_keeps_whole_documents_within_its_bound_and_says_what_it_left_out() {
    let documents = ["aaaa", "bbbb", "cccc"].map(|content| Document::new(content, 1.0));
    let retriever = Arc::new(Fixed(documents.to_vec()));
    let tool = |max| {
        RetrieverTool::new(retriever.clone(), "search_docs", "Search.").with_max_result_chars(max)
    };
    let query = json!({"query": "anything"});

    // All fit: all of them, no note.
    let result = retrieve(tool(12), query.clone()).await.unwrap();
    assert_eq!(
        contents_and_note(&result),
        (vec!["aaaa".into(), "bbbb".into(), "cccc".into()], None)
    );

    // Two fit whole; the third is left out, never cut.
    let result = retrieve(tool(10), query.clone()).await.unwrap();
    let (contents, note) = contents_and_note(&result);
    assert_eq!(contents, ["aaaa", "bbbb"]);
    assert_eq!(
        note.as_deref(),
        Some(
            "1 more document was left out: a result holds at most 10 characters of documents; \
             ask a narrower query or a smaller top_k for the rest"
        )
    );
    let result = retrieve(tool(5), query).await.unwrap();
    let (contents, note) = contents_and_note(&result);
    assert_eq!(contents, ["aaaa"]);
    assert!(note.unwrap().starts_with("2 more documents were left out"));
}

#[tokio::test]
async fn a_first_document_past_the_bound_is_cut_between_characters_keeping_its_metadata() {
    let first = Document::new("ééééé", 0.9).with_metadata("source", json!("a.md"));
    let retriever = Arc::new(Fixed(vec![first, Document::new("b", 0.5)]));
    // The metadata's JSON text, `{"source":"a.md"}`, takes 17 of the 20 characters.
    let tool =
        RetrieverTool::new(retriever.clone(), "search_docs", "Search.").with_max_result_chars(20);
    let result = retrieve(tool, json!({"query": "anything"})).await.unwrap();
    let value: Value = serde_json::from_str(&result.content.to_text()).unwrap();
    assert_eq!(
        value,
        json!({
            "documents": [{"content": "ééé…", "score": 0.9, "metadata": {"source": "a.md"}}],
            "note": "The first document was cut after 3 characters and 1 more left out: a \
                     result holds at most 20 characters of documents"
        })
    );

    // By default a result holds DEFAULT_MAX_RESULT_CHARS: a whole file of more is cut there.
    let retriever = Arc::new(Fixed(vec![Document::new("x".repeat(100_000), 1.0)]));
    let tool = RetrieverTool::new(retriever, "search_docs", "Search.");
    let result = retrieve(tool, json!({"query": "anything"})).await.unwrap();
    let (contents, note) = contents_and_note(&result);
    assert_eq!(contents[0].chars().count(), DEFAULT_MAX_RESULT_CHARS + 1);
    assert!(contents[0].ends_with('…'));
    assert_eq!(
        note.as_deref(),
        Some(
            "The document was cut after 40000 characters: a result holds at most 40000 \
             characters of documents"
        )
    );
}

/// Metadata counts toward the bound as content does: a retriever's large metadata (a
/// summary, a whole title field) left out with its document, and a first document's
/// metadata of more than the whole bound left out, its content cut to the bound (a 1 MB
/// summary made a 3 MB result when only content was counted).
#[tokio::test]
async fn metadata_counts_toward_the_bound_and_is_left_out_past_it() {
    let summary = "s".repeat(30_000);
    let documents = vec![
        Document::new("first", 1.0).with_metadata("summary", json!(summary)),
        Document::new("second", 0.9).with_metadata("summary", json!(summary)),
    ];
    let tool = RetrieverTool::new(Arc::new(Fixed(documents)), "search_docs", "Search.");
    let result = retrieve(tool, json!({"query": "anything"})).await.unwrap();
    let (contents, note) = contents_and_note(&result);
    assert_eq!(contents, ["first"]);
    assert!(
        note.as_deref()
            .is_some_and(|note| note.starts_with("1 more document was left out")),
        "{note:?}"
    );
    assert!(result.content.to_text().len() < DEFAULT_MAX_RESULT_CHARS + 1_000);

    let huge =
        Document::new("x".repeat(100), 1.0).with_metadata("summary", json!("m".repeat(1 << 20)));
    let tool = RetrieverTool::new(Arc::new(Fixed(vec![huge])), "search_docs", "Search.")
        .with_max_result_chars(50);
    let result = retrieve(tool, json!({"query": "anything"})).await.unwrap();
    let value: Value = serde_json::from_str(&result.content.to_text()).unwrap();
    assert_eq!(
        value,
        json!({
            "documents": [{"content": format!("{}…", "x".repeat(50)), "score": 1.0}],
            "note": "The document was cut after 50 characters (its metadata left out): a \
                     result holds at most 50 characters of documents"
        })
    );
}

/// A first document whose metadata alone passes the bound loses its metadata; its content,
/// within the bound, is whole, and the note says only what was left out (it said the
/// document was cut after the bound's characters: a model would take it for a beginning).
#[tokio::test]
async fn a_first_document_that_loses_only_its_metadata_is_not_said_to_be_cut() {
    let documents = vec![
        Document::new("whole content", 1.0).with_metadata("summary", json!("m".repeat(100))),
        Document::new("b", 0.5),
    ];
    let tool = |documents: Vec<Document>| {
        RetrieverTool::new(Arc::new(Fixed(documents)), "search_docs", "Search.")
            .with_max_result_chars(50)
    };
    let result = retrieve(tool(documents.clone()), json!({"query": "anything"}))
        .await
        .unwrap();
    let value: Value = serde_json::from_str(&result.content.to_text()).unwrap();
    assert_eq!(
        value,
        json!({
            "documents": [{"content": "whole content", "score": 1.0}],
            "note": "The first document's metadata and 1 more document were left out: a \
                     result holds at most 50 characters of documents"
        })
    );
    let result = retrieve(tool(documents[..1].to_vec()), json!({"query": "anything"}))
        .await
        .unwrap();
    let (contents, note) = contents_and_note(&result);
    assert_eq!(contents, ["whole content"]);
    assert_eq!(
        note.as_deref(),
        Some(
            "The document's metadata was left out: a result holds at most 50 characters of \
             documents"
        )
    );
}

/// Metadata counts as the characters of its JSON text, as content does, not its bytes: a
/// title in Chinese took three times its length of the bound, and documents that fit were
/// left out or cut.
#[tokio::test]
async fn metadata_counts_its_characters_toward_the_bound_not_its_bytes() {
    // `{"title":"東京の天気"}`: 17 characters (29 bytes); with "晴れ", 19 of the 20.
    let documents = vec![
        Document::new("晴れ", 1.0).with_metadata("title", json!("東京の天気")),
        Document::new("b", 0.5),
    ];
    let tool = RetrieverTool::new(Arc::new(Fixed(documents)), "search_docs", "Search.")
        .with_max_result_chars(20);
    let result = retrieve(tool, json!({"query": "anything"})).await.unwrap();
    let value: Value = serde_json::from_str(&result.content.to_text()).unwrap();
    assert_eq!(
        value,
        json!({"documents": [
            {"content": "晴れ", "score": 1.0, "metadata": {"title": "東京の天気"}},
            {"content": "b", "score": 0.5},
        ]})
    );

    // Cut, the content keeps what the metadata's characters leave: 20 - 17.
    let first = Document::new("晴れのち曇り", 1.0).with_metadata("title", json!("東京の天気"));
    let tool = RetrieverTool::new(Arc::new(Fixed(vec![first])), "search_docs", "Search.")
        .with_max_result_chars(20);
    let result = retrieve(tool, json!({"query": "anything"})).await.unwrap();
    let (contents, note) = contents_and_note(&result);
    assert_eq!(contents, ["晴れの…"]);
    assert_eq!(
        note.as_deref(),
        Some(
            "The document was cut after 3 characters: a result holds at most 20 characters \
             of documents"
        )
    );
}

/// The ids of the documents `docs` finds for `query`, best first.
async fn found_ids(docs: &LexicalRetriever, query: &str) -> Vec<String> {
    docs.retrieve(query, 10)
        .await
        .unwrap()
        .iter()
        .map(|document| document.metadata["id"].as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test]
async fn the_lexical_retriever_finds_a_word_inside_chinese_and_japanese_text() {
    // Chinese and Japanese put no spaces between words: a whole sentence was one term, found
    // only by a query of that very sentence.
    let docs = LexicalRetriever::new("notes");
    docs.add("tokyo", "", "東京の天気は晴れです");
    docs.add("apples", "", "我喜欢吃苹果");
    docs.add("tea", "", "I like green tea");
    assert_eq!(found_ids(&docs, "東京").await, ["tokyo"]);
    assert_eq!(found_ids(&docs, "天気はどう").await, ["tokyo"]);
    assert_eq!(found_ids(&docs, "苹果").await, ["apples"]);
    // A katakana word is found by its pairs of letters; one letter of it is not a word.
    docs.add("tower", "", "東京タワーに行く");
    assert_eq!(found_ids(&docs, "タワー").await, ["tower"]);
    assert!(found_ids(&docs, "タ").await.is_empty());
}

#[tokio::test]
async fn the_lexical_retriever_finds_a_word_however_unicode_spells_it() {
    // "é" is one character, or "e" and a combining accent; a full-width "ＡＰＩ" is "API". A
    // query in one spelling missed a document in the other, and the accent split its word.
    let docs = LexicalRetriever::new("notes");
    docs.add("composed", "", "crème brûlée for dessert");
    docs.add("decomposed", "", "un cafe\u{301} noir");
    docs.add("wide", "", "the ＡＰＩ key is rotated monthly");
    assert_eq!(found_ids(&docs, "cre\u{300}me").await, ["composed"]);
    assert_eq!(found_ids(&docs, "café").await, ["decomposed"]);
    assert!(found_ids(&docs, "cafe").await.is_empty());
    assert_eq!(found_ids(&docs, "api").await, ["wide"]);
}

/// The contents the retriever finds for `query`, best first.
async fn contents(docs: &EmbeddingRetriever, query: &str, top_k: usize) -> Vec<String> {
    let found = docs.retrieve(query, top_k).await.unwrap();
    found.into_iter().map(|d| d.content).collect()
}

#[tokio::test]
async fn the_embedding_retrievers_upsert_replaces_a_document_of_the_same_id() {
    let docs = EmbeddingRetriever::new("notes", Arc::new(HashingEmbedder::default()));
    docs.upsert([
        ("a", "The cat sat on the mat."),
        ("b", "Quarterly revenue grew."),
    ])
    .await
    .unwrap();
    docs.upsert([("a", "The dog slept by the door.")])
        .await
        .unwrap();
    assert_eq!(docs.len(), 2);
    assert_eq!(contents(&docs, "cat mat", 5).await, Vec::<String>::new());
    let found = docs.retrieve("dog door", 5).await.unwrap();
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].content, "The dog slept by the door.");
    assert_eq!(found[0].metadata["id"], "a");
    // In one call, the last document of an id is kept.
    docs.upsert([("c", "first cat"), ("c", "second cat")])
        .await
        .unwrap();
    assert_eq!(docs.len(), 3);
    assert_eq!(contents(&docs, "cat", 5).await, ["second cat"]);
}

#[tokio::test]
async fn the_embedding_retriever_removes_by_id_and_keeps_the_others_findable() {
    let docs = EmbeddingRetriever::new("notes", Arc::new(HashingEmbedder::default()));
    docs.add(["an anonymous note about cats"]).await.unwrap();
    docs.upsert([
        ("a", "apples grow on trees"),
        ("b", "bananas are yellow"),
        ("c", "cherries are red"),
    ])
    .await
    .unwrap();
    assert!(docs.remove("a"));
    assert!(!docs.remove("a"));
    assert!(!docs.remove("nobody"));
    assert_eq!(docs.len(), 3);
    // The document moved into the removed one's place is still replaced and removed by its
    // id, not held twice.
    docs.upsert([("c", "cherries are dark red")]).await.unwrap();
    assert_eq!(docs.len(), 3);
    assert_eq!(
        contents(&docs, "cherries", 5).await,
        ["cherries are dark red"]
    );
    assert!(docs.remove("c"));
    assert!(docs.remove("b"));
    assert_eq!(
        contents(&docs, "cats note", 5).await,
        ["an anonymous note about cats"]
    );
    assert_eq!(docs.len(), 1);
}

/// Embeds as [`HashingEmbedder`] does, but fails on a text that says "boom".
struct FailsOnBoom;

#[async_trait]
impl Embedder for FailsOnBoom {
    async fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, ServiceError> {
        if texts.iter().any(|text| text.contains("boom")) {
            return Err(ServiceError::new("embedder", "cannot embed \"boom\""));
        }
        HashingEmbedder::default().embed(texts).await
    }

    fn dimensions(&self) -> usize {
        HashingEmbedder::default().dimensions()
    }
}

#[tokio::test]
async fn a_failed_upsert_changes_nothing() {
    let docs = EmbeddingRetriever::new("notes", Arc::new(FailsOnBoom));
    docs.upsert([("a", "the cat sat")]).await.unwrap();
    let err = docs
        .upsert([("a", "the dog ran"), ("b", "boom")])
        .await
        .unwrap_err();
    assert!(err.to_string().contains("cannot embed"), "{err}");
    assert_eq!(docs.len(), 1);
    assert_eq!(contents(&docs, "cat", 5).await, ["the cat sat"]);
}

#[tokio::test]
async fn upsert_with_metadata_sets_the_id_a_document_is_removed_by() {
    let docs = EmbeddingRetriever::new("notes", Arc::new(HashingEmbedder::default()));
    let mut metadata = serde_json::Map::new();
    metadata.insert("id".into(), json!(42));
    metadata.insert("page".into(), json!(7));
    docs.upsert_with_metadata([("doc-42".to_owned(), "the cat sat".to_owned(), metadata)])
        .await
        .unwrap();
    docs.upsert_with_metadata([(
        "doc-43".to_owned(),
        "the cat ran".to_owned(),
        serde_json::Map::new(),
    )])
    .await
    .unwrap();
    let found = docs.retrieve("cat sat", 1).await.unwrap();
    assert_eq!(found[0].metadata["id"], "doc-42");
    assert_eq!(found[0].metadata["page"], 7);
    let found = docs.retrieve("cat ran", 1).await.unwrap();
    assert_eq!(found[0].metadata["id"], "doc-43");
    assert!(docs.remove("doc-42"));
}

#[tokio::test]
async fn the_embedding_retrievers_best_few_are_the_head_of_its_whole_ranking() {
    let docs = EmbeddingRetriever::new("notes", Arc::new(HashingEmbedder::default()));
    let words = ["cat", "mat", "dog", "door", "sun", "tree", "river", "stone"];
    let texts: Vec<String> = (0..200)
        .map(|i| {
            let pick = |k: usize| words[(i * k + i / 3) % words.len()];
            format!("{} {} {} {}", pick(1), pick(3), pick(5), pick(7))
        })
        .collect();
    docs.add(texts).await.unwrap();
    let all = docs
        .retrieve("cat on the mat by the door", 1_000)
        .await
        .unwrap();
    assert!(all.len() > 20, "{}", all.len());
    assert!(all.windows(2).all(|w| w[0].score >= w[1].score));
    for top_k in [1, 2, 5, 13] {
        let few = docs
            .retrieve("cat on the mat by the door", top_k)
            .await
            .unwrap();
        assert_eq!(few, all[..top_k], "top {top_k}");
    }
    assert!(docs.retrieve("cat", 0).await.unwrap().is_empty());
}
