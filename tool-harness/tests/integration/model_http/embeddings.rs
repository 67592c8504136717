//! `OpenAiEmbedder` against a local server: the requests it sends (batches, the model, the
//! `dimensions` OpenAI's models take), the vectors it gives back and in which order, its
//! errors; and a `shed` that searches by meaning through it.

use std::sync::Arc;

use axum::Json;
use axum::routing::post;
use serde_json::{Value, json};
use toolsmith_core::{Embedder, ToolCallManager, ToolCallResult, tool_fn};
use toolsmith_harness::model::ModelError;
use toolsmith_harness::model::http::OpenAiEmbedder;

use super::KEY;
use super::server::{MockServer, Reply};

/// The answer of the embeddings API for `vectors`, listed last first (the API gives each its
/// `index`; the order of the list is not the texts').
fn answer(vectors: &[Vec<f32>]) -> Reply {
    let data: Vec<Value> = vectors
        .iter()
        .enumerate()
        .rev()
        .map(|(index, vector)| json!({"object": "embedding", "index": index, "embedding": vector}))
        .collect();
    Reply::json(
        200,
        &json!({"object": "list", "data": data, "model": "m", "usage": {"prompt_tokens": 3, "total_tokens": 3}}),
    )
}

fn texts(texts: &[&str]) -> Vec<String> {
    texts.iter().map(|t| (*t).to_owned()).collect()
}

fn embedder(base: &str, model: &str) -> OpenAiEmbedder {
    OpenAiEmbedder::builder(model)
        .api_key(KEY)
        .base_url(format!("{base}/v1"))
        .dimensions(2)
        .batch_size(2)
        // One request at a time: the scripted server answers in the order requests come.
        .concurrent_requests(1)
        .retry_delay(std::time::Duration::from_millis(10))
        .build()
        .expect("an embedder")
}

#[tokio::test]
async fn texts_go_in_batches_and_their_vectors_come_back_in_their_order() {
    let server = MockServer::start([
        answer(&[vec![1.0, 0.0], vec![2.0, 0.0]]),
        answer(&[vec![3.0, 0.0], vec![4.0, 0.0]]),
        answer(&[vec![5.0, 0.0]]),
    ])
    .await;
    let embedder = embedder(&server.base, "nomic-embed-text");
    let vectors = embedder
        .embed(&texts(&["a", "b", "c", "d", "e"]))
        .await
        .unwrap();
    let firsts: Vec<f32> = vectors.iter().map(|v| v[0]).collect();
    assert_eq!(firsts, [1.0, 2.0, 3.0, 4.0, 5.0]);
    assert_eq!(embedder.dimensions(), 2);

    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    for request in &requests {
        assert_eq!(request.method, "POST");
        assert_eq!(request.path, "/v1/embeddings");
        assert_eq!(
            request.header("authorization"),
            Some(format!("Bearer {KEY}").as_str())
        );
    }
    // A model other than OpenAI's is not sent `dimensions` (most servers refuse it).
    assert_eq!(
        requests[0].body,
        json!({"model": "nomic-embed-text", "input": ["a", "b"], "encoding_format": "float"})
    );
    assert_eq!(requests[1].body["input"], json!(["c", "d"]));
    assert_eq!(requests[2].body["input"], json!(["e"]));

    // No text, no request.
    assert!(embedder.embed(&[]).await.unwrap().is_empty());
    assert_eq!(server.requests().len(), 3);
}

#[tokio::test]
async fn openai_models_know_their_length_and_shorten_to_the_one_asked() {
    let server = MockServer::start([answer(&[vec![0.5; 256]])]).await;
    let native = OpenAiEmbedder::builder("text-embedding-3-large")
        .api_key(KEY)
        .base_url(format!("{}/v1", server.base))
        .build()
        .unwrap();
    assert_eq!(native.dimensions(), 3072);
    let short = OpenAiEmbedder::builder("text-embedding-3-small")
        .api_key(KEY)
        .base_url(format!("{}/v1", server.base))
        .dimensions(256)
        .build()
        .unwrap();
    assert_eq!(short.dimensions(), 256);
    assert_eq!(short.model(), "text-embedding-3-small");
    let vectors = short.embed(&texts(&["sky"])).await.unwrap();
    assert_eq!(vectors[0].len(), 256);
    assert_eq!(server.requests()[0].body["dimensions"], json!(256));
}

#[tokio::test]
async fn a_wrong_answer_or_a_failed_request_is_an_error_that_says_what() {
    let server = MockServer::start([
        // One vector for two texts.
        answer(&[vec![1.0, 0.0]]),
        // A vector of another length.
        answer(&[vec![1.0, 0.0], vec![1.0, 0.0, 0.0]]),
        // The key refused.
        Reply::json(
            401,
            &json!({"error": {"message": "Incorrect API key provided"}}),
        ),
        // A 429, retried, then the answer.
        Reply::json(429, &json!({"error": {"message": "slow down"}})),
        answer(&[vec![1.0, 0.0], vec![0.0, 1.0]]),
        // Two vectors for one text.
        answer(&[vec![1.0, 0.0], vec![0.0, 1.0]]),
    ])
    .await;
    let embedder = embedder(&server.base, "nomic-embed-text");
    let pair = texts(&["a", "b"]);

    let error = embedder.embed(&pair).await.unwrap_err().to_string();
    assert_eq!(
        error,
        "embedder: openai_embeddings: the answer holds 1 vector for 2 texts"
    );
    let error = embedder.embed(&pair).await.unwrap_err().to_string();
    assert_eq!(
        error,
        "embedder: openai_embeddings: the vector of text 1 (data[0]) has 3 numbers, not 2"
    );
    let error = embedder.embed(&pair).await.unwrap_err().to_string();
    assert!(
        error.starts_with("embedder: openai_embeddings: authentication failed (HTTP 401)"),
        "{error}"
    );
    assert!(error.contains("Incorrect API key provided"), "{error}");
    assert_eq!(embedder.embed(&pair).await.unwrap().len(), 2);
    let error = embedder
        .embed(&texts(&["a"]))
        .await
        .unwrap_err()
        .to_string();
    assert_eq!(
        error,
        "embedder: openai_embeddings: the answer holds 2 vectors for 1 text"
    );
    assert_eq!(server.requests().len(), 6);
}

#[tokio::test]
async fn a_wrong_vector_is_named_by_its_text_among_all_the_texts() {
    // The second request (texts 2 and 3) answers a short vector for its second text: text
    // 3, not the request's text 1.
    let server = MockServer::start([
        answer(&[vec![1.0, 0.0], vec![2.0, 0.0]]),
        answer(&[vec![3.0, 0.0], vec![4.0]]),
    ])
    .await;
    let error = embedder(&server.base, "nomic-embed-text")
        .embed(&texts(&["a", "b", "c", "d"]))
        .await
        .unwrap_err()
        .to_string();
    assert_eq!(
        error,
        "embedder: openai_embeddings: the vector of text 3 (data[0]) has 1 number, not 2"
    );
}

#[tokio::test]
async fn a_refused_request_of_several_says_which_texts_it_carried() {
    // The second request (texts 2 and 3) is refused, as a server refuses a text too long
    // for its model; then the last (text 4).
    let too_long = || {
        Reply::json(
            400,
            &json!({"error": {"message": "the input is longer than the model's 512 tokens"}}),
        )
    };
    let server = MockServer::start([
        answer(&[vec![1.0, 0.0], vec![2.0, 0.0]]),
        too_long(),
        answer(&[vec![1.0, 0.0], vec![2.0, 0.0]]),
        answer(&[vec![1.0, 0.0], vec![2.0, 0.0]]),
        too_long(),
        too_long(),
    ])
    .await;
    let embedder = embedder(&server.base, "nomic-embed-text");
    let five = texts(&["a", "b", "c", "d", "e"]);
    let error = embedder.embed(&five).await.unwrap_err().to_string();
    assert!(error.contains("512 tokens"), "{error}");
    assert!(
        error.ends_with(" (the request of texts 2 to 3 of 5)"),
        "{error}"
    );
    let error = embedder.embed(&five).await.unwrap_err().to_string();
    assert!(error.ends_with(" (the request of text 4 of 5)"), "{error}");
    // A request of every text needs no saying which.
    let error = embedder
        .embed(&texts(&["a", "b"]))
        .await
        .unwrap_err()
        .to_string();
    assert!(error.ends_with("512 tokens"), "{error}");
}

#[test]
fn the_builder_refuses_what_cannot_work() {
    let reason = |built: Result<OpenAiEmbedder, ModelError>| match built {
        Err(ModelError::Config { provider, reason }) => {
            assert_eq!(provider, "openai_embeddings");
            reason
        }
        other => panic!("{other:?}"),
    };
    let local = |model: &str| OpenAiEmbedder::builder(model).base_url("http://127.0.0.1:1/v1");
    assert_eq!(
        reason(local("nomic-embed-text").build()),
        "the length of \"nomic-embed-text\"'s vectors is unknown: set it with `.dimensions(n)`"
    );
    assert_eq!(
        reason(local(" ").dimensions(3).build()),
        "the embedding model's name is empty"
    );
    assert_eq!(
        reason(local("m").dimensions(0).build()),
        "`dimensions` is 0"
    );
    for batch in [0, 2049] {
        let reason = reason(local("m").dimensions(3).batch_size(batch).build());
        assert!(
            reason.starts_with(&format!("`batch_size` is {batch}: it must be 1 to 2048 ")),
            "{reason}"
        );
    }
    // Long vectors: no more than an answer within the response bound holds.
    let large = reason(local("text-embedding-3-large").batch_size(2048).build());
    assert!(
        large.starts_with("`batch_size` is 2048: it must be 1 to 420 (vectors of 3072 numbers"),
        "{large}"
    );
    local("text-embedding-3-large")
        .batch_size(420)
        .build()
        .expect("the most that fits");
    for requests in [0, 65] {
        assert_eq!(
            reason(
                local("m")
                    .dimensions(3)
                    .concurrent_requests(requests)
                    .build()
            ),
            format!("`concurrent_requests` is {requests}: it must be 1 to 64")
        );
    }
    let no_key = reason(OpenAiEmbedder::builder("text-embedding-3-small").build());
    assert!(no_key.contains("OPENAI_API_KEY"), "{no_key}");
    let stream = reason(
        local("m")
            .dimensions(3)
            .body_field("stream", json!(true))
            .build(),
    );
    assert!(stream.contains("`stream`"), "{stream}");
    // A local server may need no key.
    local("m")
        .dimensions(3)
        .build()
        .expect("a keyless local embedder");
}

/// Tells what tomorrow's sky holds.
#[tool_fn]
async fn sky_outlook(town: String) -> String {
    format!("clear over {town}")
}

/// Reads a file of the workspace.
#[tool_fn]
async fn read_workspace_file(path: String) -> String {
    path
}

/// A text's vector by meaning, as far as these tests need: a text about the weather points
/// one way, one about files another, anything else a third.
fn by_meaning(text: &str) -> Vec<f32> {
    let text = text.to_lowercase();
    if ["rain", "sky", "umbrella"].iter().any(|w| text.contains(w)) {
        vec![1.0, 0.0, 0.0]
    } else if text.contains("file") {
        vec![0.0, 1.0, 0.0]
    } else {
        vec![0.0, 0.0, 1.0]
    }
}

/// A server that embeds each text with `vector`, answering every request from its input,
/// whatever order the requests come in; and how many texts each request carried.
async fn embedding_server(
    vector: fn(&str) -> Vec<f32>,
) -> (
    String,
    tokio::task::JoinHandle<()>,
    Arc<std::sync::Mutex<Vec<usize>>>,
) {
    let batches = Arc::new(std::sync::Mutex::new(Vec::new()));
    let seen = Arc::clone(&batches);
    let app = axum::Router::new().route(
        "/v1/embeddings",
        post(move |Json(body): Json<Value>| async move {
            let inputs = body["input"].as_array().cloned().unwrap_or_default();
            let earlier = {
                let mut seen = seen.lock().unwrap();
                seen.push(inputs.len());
                seen.len() as u64
            };
            // Answers come back out of step with the requests: the later, the sooner.
            tokio::time::sleep(std::time::Duration::from_millis(
                40u64.saturating_sub(5 * earlier),
            ))
            .await;
            let data: Vec<Value> = inputs
                .iter()
                .enumerate()
                .map(|(index, text)| {
                    json!({"index": index, "embedding": vector(text.as_str().unwrap_or(""))})
                })
                .collect();
            Json(json!({"object": "list", "data": data}))
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let task = tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    (base, task, batches)
}

#[tokio::test]
async fn many_texts_go_in_default_batches_a_few_at_once_and_come_back_in_order() {
    fn numbered(text: &str) -> Vec<f32> {
        vec![text.trim_start_matches('t').parse().unwrap(), 1.0]
    }
    let (base, server, batches) = embedding_server(numbered).await;
    let embedder = OpenAiEmbedder::builder("bge-small")
        .base_url(format!("{base}/v1"))
        .dimensions(2)
        .build()
        .unwrap();
    let texts: Vec<String> = (0..150).map(|n| format!("t{n}")).collect();
    let vectors = embedder.embed(&texts).await.unwrap();
    let firsts: Vec<f32> = vectors.iter().map(|v| v[0]).collect();
    let expected: Vec<f32> = (0..150u16).map(f32::from).collect();
    assert_eq!(firsts, expected);
    let mut sizes = batches.lock().unwrap().clone();
    sizes.sort_unstable();
    assert_eq!(sizes, [22, 32, 32, 32, 32]);
    server.abort();
}

#[tokio::test]
async fn the_shed_finds_a_tool_by_meaning_through_the_embedder() {
    let (base, server, _) = embedding_server(by_meaning).await;
    let manager = ToolCallManager::new("embeddings");
    manager.register(Arc::new(SkyOutlook)).unwrap();
    manager.register(Arc::new(ReadWorkspaceFile)).unwrap();
    // No word of the query is in either tool's name or description.
    let query = "will I need an umbrella";
    assert!(manager.search_tools(query, 1).await.is_empty());

    let embedder = OpenAiEmbedder::builder("nomic-embed-text")
        .base_url(format!("{base}/v1"))
        .dimensions(3)
        .build()
        .unwrap();
    manager.enable_discovery(Arc::new(embedder));
    let found = manager.search_tools(query, 1).await;
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].name, "sky_outlook");
    let result = manager
        .execute_one(&toolsmith_core::ToolCallRequest::new(
            "call-1",
            &found[0].name,
            json!({"town": "Lyon"}).try_into().unwrap(),
        ))
        .await
        .unwrap();
    assert_eq!(result, ToolCallResult::text("clear over Lyon"));
    server.abort();
}

/// OpenAI's 400 for an embedding input longer than the model's context, as the API answers
/// it (no `code`; the message is the sign).
fn input_too_long() -> Reply {
    Reply::json(
        400,
        &json!({"error": {"message": "This model's maximum context length is 8192 tokens, however you requested 9000 tokens (9000 in your prompt; 0 for the completion). Please reduce your prompt; or completion length.",
            "type": "invalid_request_error", "param": null, "code": null}}),
    )
}

/// The model client's error a failed `embed` keeps as its source.
fn cause(error: &toolsmith_core::ServiceError) -> Option<&ModelError> {
    std::error::Error::source(error).and_then(|source| source.downcast_ref::<ModelError>())
}

#[tokio::test]
async fn an_input_too_long_is_a_typed_cause_a_caller_can_act_on() {
    let server = MockServer::start([input_too_long(), input_too_long()]).await;
    let embedder = embedder(&server.base, "text-embedding-3-small");
    let error = embedder
        .embed(&texts(&["a very long document"]))
        .await
        .unwrap_err();
    // The text is what it was.
    assert_eq!(
        error.to_string(),
        "embedder: openai_embeddings: the request is longer than the model's context window \
         (HTTP 400): This model's maximum context length is 8192 tokens, however you requested \
         9000 tokens (9000 in your prompt; 0 for the completion). Please reduce your prompt; or \
         completion length."
    );
    match cause(&error) {
        Some(ModelError::ContextTooLong {
            provider,
            status,
            message,
        }) => {
            assert_eq!(provider, "openai_embeddings");
            assert_eq!(*status, 400);
            assert!(
                message.contains("however you requested 9000 tokens"),
                "{message}"
            );
        }
        other => panic!("{other:?}"),
    }
    // Not asked again: the same input fails the same way.
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn a_rate_limit_after_the_retries_is_a_typed_cause() {
    let slow_down = || {
        Reply::json(
            429,
            &json!({"error": {"message": "Rate limit reached for text-embedding-3-small",
                "type": "requests", "param": null, "code": "rate_limit_exceeded"}}),
        )
        .header("retry-after", "0")
    };
    // The first try and DEFAULT_MAX_RETRIES (2) more, each refused.
    let server = MockServer::start([slow_down(), slow_down(), slow_down()]).await;
    let embedder = embedder(&server.base, "text-embedding-3-small");
    let error = embedder.embed(&texts(&["a"])).await.unwrap_err();
    assert!(
        error.to_string().starts_with(
            "embedder: openai_embeddings: rate limited (HTTP 429): Rate limit reached"
        ),
        "{error}"
    );
    assert!(
        matches!(cause(&error), Some(ModelError::RateLimited { provider, .. }) if provider == "openai_embeddings"),
        "{:?}",
        cause(&error)
    );
    // Retried before giving up.
    assert_eq!(server.requests().len(), 3);
}

#[tokio::test]
async fn a_wrong_answer_has_no_model_error_for_a_cause() {
    // The request succeeded; the answer is wrong: no client error to give.
    let server = MockServer::start([answer(&[vec![1.0, 0.0]])]).await;
    let error = embedder(&server.base, "nomic-embed-text")
        .embed(&texts(&["a", "b"]))
        .await
        .unwrap_err();
    assert!(cause(&error).is_none(), "{error:?}");
}

/// A server of a model that takes texts of at most `longest` bytes, and requests of at most
/// `most` bytes of texts in all, refusing others with OpenAI's 400 for an input too long;
/// and the texts of each request it was sent.
async fn bounded_server(
    longest: usize,
    most: usize,
) -> (
    String,
    tokio::task::JoinHandle<()>,
    Arc<std::sync::Mutex<Vec<Vec<String>>>>,
) {
    let requests = Arc::new(std::sync::Mutex::new(Vec::new()));
    let seen = Arc::clone(&requests);
    let app = axum::Router::new().route(
        "/v1/embeddings",
        post(move |Json(body): Json<Value>| async move {
            let inputs: Vec<String> = body["input"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|text| text.as_str().unwrap_or_default().to_owned())
                .collect();
            seen.lock().unwrap().push(inputs.clone());
            let total: usize = inputs.iter().map(String::len).sum();
            if inputs.iter().any(|text| text.len() > longest) || total > most {
                return (
                    axum::http::StatusCode::BAD_REQUEST,
                    Json(json!({"error": {"message": "This model's maximum context length is 8192 tokens, however you requested 9000 tokens (9000 in your prompt; 0 for the completion). Please reduce your prompt; or completion length.",
                        "type": "invalid_request_error", "param": null, "code": null}})),
                );
            }
            let data: Vec<Value> = (0..inputs.len())
                .map(|index| json!({"index": index, "embedding": [1.0, 0.0]}))
                .collect();
            (axum::http::StatusCode::OK, Json(json!({"object": "list", "data": data})))
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let task = tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    (base, task, requests)
}

fn batched_embedder(base: &str, batch: usize) -> OpenAiEmbedder {
    OpenAiEmbedder::builder("text-embedding-3-small")
        .api_key(KEY)
        .base_url(format!("{base}/v1"))
        .dimensions(2)
        .batch_size(batch)
        .concurrent_requests(1)
        .build()
        .expect("an embedder")
}

#[tokio::test]
async fn the_text_too_long_is_named_though_the_refusal_of_its_request_does_not_say() {
    let (base, server, requests) = bounded_server(10, 1_000).await;
    let embedder = batched_embedder(&base, 8);
    // Texts 0 to 7 in the first request, 8 to 11 in the second; text 9 is too long.
    let mut all: Vec<String> = (0..12).map(|i| format!("text {i}")).collect();
    all[9] = "a document far too long".to_owned();
    let error = embedder.embed(&all).await.unwrap_err();
    assert!(
        error
            .to_string()
            .ends_with("(text 9 of 12, 23 bytes, is too long for the model: split it)"),
        "{error}"
    );
    assert!(
        matches!(
            cause(&error),
            Some(ModelError::ContextTooLong { status: 400, .. })
        ),
        "{error:?}"
    );
    // The first request, the second, then its halves until one text is left: texts 8 and 9
    // (refused), then text 8 (embedded), then text 9 (refused).
    let sent = requests.lock().unwrap().clone();
    let firsts: Vec<Vec<String>> = sent.iter().skip(1).cloned().collect();
    assert_eq!(
        firsts,
        [
            all[8..12].to_vec(),
            all[8..10].to_vec(),
            all[8..9].to_vec(),
            all[9..10].to_vec(),
        ]
    );
    server.abort();
}

#[tokio::test]
async fn texts_each_accepted_but_too_long_together_are_told_to_go_in_smaller_requests() {
    // Every text passes alone; four of them do not fit in one request.
    let (base, server, requests) = bounded_server(100, 60).await;
    let embedder = batched_embedder(&base, 4);
    let all: Vec<String> = (0..4)
        .map(|i| format!("a text of twenty bytes {i}"))
        .collect();
    let error = embedder.embed(&all).await.unwrap_err();
    assert!(
        error.to_string().ends_with(
            "(texts 0 to 3 of 4 are accepted one by one but not in one request: send fewer \
             texts a request, `batch_size`)"
        ),
        "{error}"
    );
    assert!(
        matches!(cause(&error), Some(ModelError::ContextTooLong { .. })),
        "{error:?}"
    );
    // The request, then its two halves, each accepted.
    assert_eq!(requests.lock().unwrap().len(), 3);
    server.abort();
}

#[tokio::test]
async fn a_search_for_the_text_too_long_that_fails_otherwise_says_so_and_keeps_the_refusal() {
    let server = MockServer::start([
        input_too_long(),
        Reply::json(
            401,
            &json!({"error": {"message": "Incorrect API key provided", "type": "invalid_request_error", "code": "invalid_api_key"}}),
        ),
    ])
    .await;
    let embedder = embedder(&server.base, "text-embedding-3-small");
    let error = embedder.embed(&texts(&["a", "b"])).await.unwrap_err();
    let text = error.to_string();
    assert!(
        text.contains("(the request of texts 0 to 1 of 2; asking again to find which text is too long failed: "),
        "{text}"
    );
    assert!(text.contains("Incorrect API key provided"), "{text}");
    assert!(
        matches!(cause(&error), Some(ModelError::ContextTooLong { .. })),
        "{error:?}"
    );
    assert_eq!(server.requests().len(), 2);
}

#[tokio::test]
async fn a_key_the_server_echoes_is_hidden_in_the_embedder_s_error() {
    let echoed = format!("Incorrect API key provided: {KEY}.");
    let refused = || Reply::json(401, &json!({"error": {"message": echoed}}));
    let server = MockServer::start([refused(), refused()]).await;
    let embedder = embedder(&server.base, "nomic-embed-text");
    let error = embedder.embed(&texts(&["a", "b"])).await.unwrap_err();
    let shown = format!("{error} {error:?}");
    assert!(!shown.contains(KEY), "{shown}");
    assert!(
        shown.contains("Incorrect API key provided: <API key>."),
        "{shown}"
    );
}
