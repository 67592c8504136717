//! [`OpenAiEmbedder`]: OpenAI's embeddings API, and the servers that speak it (vLLM,
//! Ollama, llama.cpp's server, LM Studio, text-embeddings-inference, …).

use async_trait::async_trait;
use futures::{StreamExt as _, TryStreamExt as _};
use serde_json::{Map, Value, json};
use toolsmith_core::{Embedder, ServiceError};

use super::MAX_RESPONSE_BYTES;
use super::body;
use super::builder::{Endpoint, HttpModelBuilder};
use super::openai;
use super::transport::Transport;
use crate::model::ModelError;

mod too_long_text;

const NAME: &str = "openai_embeddings";

impl super::builder::Configured for OpenAiEmbedder {
    const ENDPOINT: Endpoint = openai::endpoint(NAME);
}

/// Where requests go, under the base URL.
const PATH: &str = "/embeddings";

/// How many texts one request carries unless the builder says otherwise: the most
/// text-embeddings-inference takes by default (its `--max-client-batch-size`), well within
/// what OpenAI, Ollama and vLLM take.
pub const DEFAULT_EMBEDDING_BATCH: usize = 32;

/// The most texts one request may carry (OpenAI's limit); fewer for long vectors, whose
/// answer must stay within [`MAX_RESPONSE_BYTES`](super::MAX_RESPONSE_BYTES).
pub const MAX_EMBEDDING_BATCH: usize = 2048;

/// How many requests of one `embed` are sent at once unless the builder says otherwise.
pub const DEFAULT_EMBEDDING_REQUESTS: usize = 4;

/// The most bytes one number of a vector takes in the answer's JSON (`-1.2345678e-12,` and
/// some room), for the most texts a request's answer may hold.
const MAX_NUMBER_BYTES: usize = 26;

/// The vector lengths of OpenAI's models, for a builder given none.
const KNOWN_DIMENSIONS: &[(&str, usize)] = &[
    ("text-embedding-3-small", 1536),
    ("text-embedding-3-large", 3072),
    ("text-embedding-ada-002", 1536),
];

/// An [`Embedder`] behind OpenAI's embeddings API (`POST {base}/embeddings`), which vLLM,
/// Ollama (`http://localhost:11434/v1`), llama.cpp's server, LM Studio,
/// text-embeddings-inference and Gemini's OpenAI-compatible endpoint
/// (`https://generativelanguage.googleapis.com/v1beta/openai`, its key given with
/// [`api_key`](HttpModelBuilder::api_key)) also speak. Give it to a session
/// ([`AgentSessionBuilder::with_embedder`](crate::agent::AgentSessionBuilder::with_embedder))
/// for the `shed`'s search by meaning, or to an
/// [`EmbeddingRetriever`](crate::retrieval::EmbeddingRetriever).
///
/// The model is named when the builder is made. The length of its vectors must be known
/// before the first request (a session sizes its index by it): OpenAI's models
/// (`text-embedding-3-small`, `text-embedding-3-large`, `text-embedding-ada-002`) are known,
/// any other model needs [`dimensions`](HttpModelBuilder::dimensions). Texts go in requests
/// of at most [`batch_size`](HttpModelBuilder::batch_size) ([`DEFAULT_EMBEDDING_BATCH`]),
/// [`concurrent_requests`](HttpModelBuilder::concurrent_requests) at once
/// ([`DEFAULT_EMBEDDING_REQUESTS`]), and the vectors come back in the texts' order. An answer with a
/// vector missing, repeated, of another length or with a number an `f32` cannot hold is an
/// error that says which; so is any failure of the request, with the transport's retries,
/// time limit and bounded reading of the chat clients (see [the module](super)).
///
/// Here, a local server stands in for the API:
///
/// ```
/// use toolsmith::Embedder;
/// use toolsmith::harness::model::http::OpenAiEmbedder;
/// # use tokio::io::{AsyncReadExt, AsyncWriteExt};
///
/// # #[tokio::main(flavor = "current_thread")] async fn main() {
/// # let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
/// # let server = format!("http://{}", listener.local_addr().unwrap());
/// # tokio::spawn(async move {
/// #     let (mut socket, _) = listener.accept().await.unwrap();
/// #     let mut seen = Vec::new();
/// #     let mut buffer = [0u8; 4096];
/// #     while !String::from_utf8_lossy(&seen).contains("second") {
/// #         let n = socket.read(&mut buffer).await.unwrap();
/// #         if n == 0 { return; }
/// #         seen.extend_from_slice(&buffer[..n]);
/// #     }
/// #     let body = r#"{"object": "list", "data": [{"index": 1, "embedding": [0.0, 1.0, 0.0]}, {"index": 0, "embedding": [1.0, 0.0, 0.0]}], "usage": {"prompt_tokens": 4, "total_tokens": 4}}"#;
/// #     let answer = format!("HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}", body.len());
/// #     socket.write_all(answer.as_bytes()).await.unwrap();
/// # });
/// // `server` is e.g. "http://127.0.0.1:11434": Ollama, vLLM, llama.cpp's server, …
/// let embedder = OpenAiEmbedder::builder("nomic-embed-text")
///     .base_url(format!("{server}/v1"))
///     .dimensions(3)
///     .build()
///     .unwrap();
/// let vectors = embedder
///     .embed(&["first".to_owned(), "second".to_owned()])
///     .await
///     .unwrap();
/// assert_eq!(vectors, [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]);
/// assert_eq!(embedder.dimensions(), 3);
/// # }
/// ```
#[derive(Clone)]
pub struct OpenAiEmbedder {
    transport: Transport,
    model: String,
    dimensions: usize,
    /// Whether the request asks for `dimensions` (models that shorten their vectors).
    ask_dimensions: bool,
    batch_size: usize,
    concurrent_requests: usize,
    body_fields: Map<String, Value>,
}

impl std::fmt::Debug for OpenAiEmbedder {
    // The body fields' names only, as the builder shows them: a value may be a credential.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OpenAiEmbedder")
            .field("transport", &self.transport)
            .field("model", &self.model)
            .field("dimensions", &self.dimensions)
            .field("ask_dimensions", &self.ask_dimensions)
            .field("batch_size", &self.batch_size)
            .field("concurrent_requests", &self.concurrent_requests)
            .field("body_fields", &self.body_fields.keys().collect::<Vec<_>>())
            .finish()
    }
}

/// The embedder's settings in [`HttpModelBuilder`].
#[derive(Debug, Clone, Default)]
pub(crate) struct EmbeddingSettings {
    pub(crate) model: String,
    pub(crate) dimensions: Option<usize>,
    pub(crate) batch_size: Option<usize>,
    pub(crate) concurrent_requests: Option<usize>,
}

impl OpenAiEmbedder {
    /// A builder of an embedder of `model`, for the official API unless given a
    /// [`base_url`](HttpModelBuilder::base_url).
    pub fn builder(model: impl Into<String>) -> HttpModelBuilder<Self> {
        let mut builder = HttpModelBuilder::new();
        builder.settings.embedding.model = model.into();
        builder
    }

    /// An embedder of `model` configured from `OPENAI_API_KEY` and `OPENAI_BASE_URL`
    /// (default `https://api.openai.com/v1`). Without a key, only another base URL is
    /// accepted.
    pub fn from_env(model: impl Into<String>) -> Result<Self, ModelError> {
        Self::builder(model).env_defaults().build()
    }

    /// The model the embedder asks for.
    pub fn model(&self) -> &str {
        &self.model
    }

    /// The request body for `texts`.
    fn body(&self, texts: &[String]) -> Value {
        let mut body = Map::new();
        body.insert("model".to_owned(), json!(self.model));
        body.insert("input".to_owned(), json!(texts));
        body.insert("encoding_format".to_owned(), json!("float"));
        if self.ask_dimensions {
            body.insert("dimensions".to_owned(), json!(self.dimensions));
        }
        body::fill_in(&mut body, &self.body_fields);
        Value::Object(body)
    }

    /// The vectors of one request's `texts`, which begin at text `first` of the `embed`'s
    /// `all` texts.
    async fn embed_batch(
        &self,
        first: usize,
        texts: &[String],
        all: usize,
    ) -> Result<Vec<Vec<f32>>, ServiceError> {
        let answered = self.transport.post_json(PATH, &self.body(texts)).await;
        let answer = match answered.map_err(|error| self.transport.hiding_key(error)) {
            Ok(answer) => answer,
            // Of several texts, which one: the refusal does not say.
            Err(error @ ModelError::ContextTooLong { .. }) if texts.len() > 1 => {
                return Err(self.too_long_text(first, texts, all, error).await);
            }
            Err(error) => {
                // One request of several: which texts it carried, to find the one a server
                // refuses (too long for the model, empty).
                let reason = match (texts.len(), all) {
                    (sent, all) if sent == all => error.to_string(),
                    (1, all) => format!("{error} (the request of text {first} of {all})"),
                    (sent, all) => format!(
                        "{error} (the request of texts {first} to {} of {all})",
                        first + sent - 1
                    ),
                };
                // The client's error stays the cause, for a caller to tell a text too long
                // (`ContextTooLong`) from a rate limit or a refused key by its type.
                return Err(ServiceError::with_source("embedder", reason, error));
            }
        };
        read_vectors(&answer, first, texts.len(), self.dimensions)
            .map_err(|reason| ServiceError::new("embedder", format!("{NAME}: {reason}")))
    }
}

impl HttpModelBuilder<OpenAiEmbedder> {
    /// The length of the model's vectors. Required for a model other than OpenAI's. OpenAI's
    /// `text-embedding-3` models shorten their vectors to it, so it is sent to them as the
    /// request's `dimensions`; no other model is sent it (most servers refuse the field),
    /// and each must answer with vectors of this length.
    #[must_use]
    pub fn dimensions(mut self, dimensions: usize) -> Self {
        self.settings.embedding.dimensions = Some(dimensions);
        self
    }

    /// How many texts one request carries (default [`DEFAULT_EMBEDDING_BATCH`]): from 1 to
    /// [`MAX_EMBEDDING_BATCH`], and no more than an answer within
    /// [`MAX_RESPONSE_BYTES`](super::MAX_RESPONSE_BYTES) holds (about 840 vectors of 1,536
    /// numbers, 420 of 3,072); `build()` says the bound when it is passed. OpenAI takes the
    /// most; a local server may take fewer (text-embeddings-inference 32 by default).
    #[must_use]
    pub fn batch_size(mut self, texts: usize) -> Self {
        self.settings.embedding.batch_size = Some(texts);
        self
    }

    /// How many requests of one [`embed`](Embedder::embed) are sent at once, 1 to 64
    /// (default [`DEFAULT_EMBEDDING_REQUESTS`]); the vectors come back in the texts' order
    /// all the same.
    #[must_use]
    pub fn concurrent_requests(mut self, requests: usize) -> Self {
        self.settings.embedding.concurrent_requests = Some(requests);
        self
    }

    /// The embedder; a model without a name or a known vector length, a batch size out of
    /// range, a bad base URL or header, or no key for the official API is a
    /// [`ModelError::Config`].
    pub fn build(self) -> Result<OpenAiEmbedder, ModelError> {
        let config = |reason: String| ModelError::Config {
            provider: NAME.to_owned(),
            reason,
        };
        let embedding = self.settings.embedding.clone();
        let model = embedding.model.trim().to_owned();
        if model.is_empty() {
            return Err(config("the embedding model's name is empty".to_owned()));
        }
        let known = KNOWN_DIMENSIONS
            .iter()
            .find(|(name, _)| *name == model)
            .map(|(_, dimensions)| *dimensions);
        let dimensions = match embedding.dimensions.or(known) {
            Some(0) => return Err(config("`dimensions` is 0".to_owned())),
            Some(dimensions) => dimensions,
            None => {
                return Err(config(format!(
                    "the length of {model:?}'s vectors is unknown: set it with `.dimensions(n)`"
                )));
            }
        };
        // The most vectors of this length an answer within the response bound holds.
        let most = (MAX_RESPONSE_BYTES / dimensions.saturating_mul(MAX_NUMBER_BYTES))
            .min(MAX_EMBEDDING_BATCH);
        if most == 0 {
            return Err(config(format!(
                "vectors of {dimensions} numbers do not fit in an answer of at most \
                 {MAX_RESPONSE_BYTES} bytes"
            )));
        }
        let batch_size = embedding
            .batch_size
            .unwrap_or(DEFAULT_EMBEDDING_BATCH.min(most));
        if !(1..=most).contains(&batch_size) {
            return Err(config(format!(
                "`batch_size` is {batch_size}: it must be 1 to {most} (vectors of {dimensions} \
                 numbers; an answer is read up to {MAX_RESPONSE_BYTES} bytes, a request \
                 carries at most {MAX_EMBEDDING_BATCH} texts)"
            )));
        }
        let concurrent_requests = embedding
            .concurrent_requests
            .unwrap_or(DEFAULT_EMBEDDING_REQUESTS);
        if !(1..=64).contains(&concurrent_requests) {
            return Err(config(format!(
                "`concurrent_requests` is {concurrent_requests}: it must be 1 to 64"
            )));
        }
        let client = self.client(openai::bearer, &[])?;
        Ok(OpenAiEmbedder {
            transport: client.transport,
            ask_dimensions: model.starts_with("text-embedding-3-")
                && embedding.dimensions.is_some(),
            model,
            dimensions,
            batch_size,
            concurrent_requests,
            body_fields: client.body_fields,
        })
    }
}

/// One request's vectors, on their way.
type BatchFuture<'a> =
    std::pin::Pin<Box<dyn Future<Output = Result<Vec<Vec<f32>>, ServiceError>> + Send + 'a>>;

#[async_trait]
impl Embedder for OpenAiEmbedder {
    /// The vectors of `texts`, in their order, asked for in requests of at most the
    /// builder's batch size, a few at once. No text, no request; the first failed request
    /// fails the whole. A request of several texts refused as longer than the model's
    /// context ([`ModelError::ContextTooLong`], kept as the error's source) is asked again in
    /// halves until the text too long is found, and the error names it (its place in
    /// `texts`, its length); texts each accepted alone but refused together are named as a
    /// request too long, to be sent in smaller batches.
    async fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, ServiceError> {
        // Boxed: a stream of the futures themselves trips the compiler's `Send` check of
        // `async_trait`'s future (a closure over borrowed batches is not general enough).
        let requests: Vec<BatchFuture<'_>> = texts
            .chunks(self.batch_size)
            .enumerate()
            .map(|(number, batch)| {
                let first = number * self.batch_size;
                Box::pin(self.embed_batch(first, batch, texts.len())) as BatchFuture<'_>
            })
            .collect();
        let answers: Vec<Vec<Vec<f32>>> = futures::stream::iter(requests)
            .buffered(self.concurrent_requests)
            .try_collect()
            .await?;
        Ok(answers.into_iter().flatten().collect())
    }

    fn dimensions(&self) -> usize {
        self.dimensions
    }
}

/// The `texts` vectors of `answer` (`data`, each item's `embedding` at its `index`, the
/// items' order where they have none), each of `dimensions` numbers; or what is wrong,
/// naming a text by its place among all the texts embedded, the request's beginning at
/// `first`.
fn read_vectors(
    answer: &Value,
    first: usize,
    texts: usize,
    dimensions: usize,
) -> Result<Vec<Vec<f32>>, String> {
    let Some(items) = answer.get("data").and_then(Value::as_array) else {
        return Err("the answer has no `data` array".to_owned());
    };
    if items.len() != texts {
        let vectors = items.len();
        return Err(format!(
            "the answer holds {vectors} vector{} for {texts} text{}",
            if vectors == 1 { "" } else { "s" },
            if texts == 1 { "" } else { "s" },
        ));
    }
    let mut vectors: Vec<Option<Vec<f32>>> = vec![None; texts];
    for (position, item) in items.iter().enumerate() {
        let index = match item.get("index") {
            None | Some(Value::Null) => position,
            Some(index) => match index.as_u64().and_then(|i| usize::try_from(i).ok()) {
                Some(index) if index < texts => index,
                _ => {
                    return Err(format!(
                        "data[{position}]'s index {} is not a text's",
                        quoted(index)
                    ));
                }
            },
        };
        if vectors[index].is_some() {
            return Err(format!(
                "the answer holds two vectors for text {}",
                first + index
            ));
        }
        vectors[index] = Some(read_vector(item, position, first + index, dimensions)?);
    }
    // One item a text and none repeated: every text has its vector.
    Ok(vectors.into_iter().flatten().collect())
}

/// The `embedding` of `data[position]`, text `text`'s, `dimensions` numbers an `f32` holds.
fn read_vector(
    item: &Value,
    position: usize,
    text: usize,
    dimensions: usize,
) -> Result<Vec<f32>, String> {
    let Some(numbers) = item.get("embedding").and_then(Value::as_array) else {
        return Err(format!(
            "data[{position}] has no `embedding` array of numbers (a base64 one is not read)"
        ));
    };
    if numbers.len() != dimensions {
        return Err(format!(
            "the vector of text {text} (data[{position}]) has {} number{}, not {dimensions}",
            numbers.len(),
            if numbers.len() == 1 { "" } else { "s" },
        ));
    }
    numbers
        .iter()
        .enumerate()
        .map(|(i, number)| {
            #[allow(clippy::cast_possible_truncation)] // f64 to f32 is the point; checked below
            let value = number.as_f64().map(|n| n as f32);
            value.filter(|v| v.is_finite()).ok_or_else(|| {
                format!(
                    "data[{position}].embedding[{i}] is not a number an f32 holds: {}",
                    quoted(number)
                )
            })
        })
        .collect()
}

/// The most characters of a value from the answer that an error repeats.
const MAX_QUOTED_CHARS: usize = 80;

/// `value` as JSON, cut after [`MAX_QUOTED_CHARS`] characters: the server wrote it, and a
/// string or array of megabytes where a number belongs is not repeated whole in an error
/// that may reach the model (an [`EmbeddingRetriever`](crate::retrieval::EmbeddingRetriever)
/// tool's failure).
fn quoted(value: &Value) -> String {
    toolsmith_core::provider::cut_to(&value.to_string(), MAX_QUOTED_CHARS).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vectors_are_put_in_the_texts_order_and_checked() {
        let answer = json!({"data": [
            {"index": 1, "embedding": [0.0, 1.0]},
            {"index": 0, "embedding": [1.0, 0.5]}
        ]});
        assert_eq!(
            read_vectors(&answer, 0, 2, 2).unwrap(),
            [[1.0, 0.5], [0.0, 1.0]]
        );
        // Without indices, the items' order.
        let answer = json!({"data": [{"embedding": [1.0]}, {"embedding": [2.0]}]});
        assert_eq!(read_vectors(&answer, 0, 2, 1).unwrap(), [[1.0], [2.0]]);

        let error = |answer: Value, texts, dimensions| {
            read_vectors(&answer, 0, texts, dimensions).unwrap_err()
        };
        assert_eq!(
            error(json!({"data": [{"embedding": [1.0]}]}), 2, 1),
            "the answer holds 1 vector for 2 texts"
        );
        assert_eq!(
            error(
                json!({"data": [{"embedding": [1.0]}, {"embedding": [2.0]}]}),
                1,
                1
            ),
            "the answer holds 2 vectors for 1 text"
        );
        assert_eq!(
            error(json!({"object": "list"}), 1, 1),
            "the answer has no `data` array"
        );
        assert_eq!(
            error(
                json!({"data": [{"index": 0, "embedding": [1.0]}, {"index": 0, "embedding": [2.0]}]}),
                2,
                1
            ),
            "the answer holds two vectors for text 0"
        );
        assert_eq!(
            error(json!({"data": [{"index": 5, "embedding": [1.0]}]}), 1, 1),
            "data[0]'s index 5 is not a text's"
        );
        assert_eq!(
            error(
                json!({"data": [{"index": 0, "embedding": [1.0, 2.0]}]}),
                1,
                3
            ),
            "the vector of text 0 (data[0]) has 2 numbers, not 3"
        );
        assert_eq!(
            error(json!({"data": [{"index": 0, "embedding": [1.0]}]}), 1, 2),
            "the vector of text 0 (data[0]) has 1 number, not 2"
        );
        assert_eq!(
            error(json!({"data": [{"index": 0, "embedding": "AAAA"}]}), 1, 1),
            "data[0] has no `embedding` array of numbers (a base64 one is not read)"
        );
        assert_eq!(
            error(
                json!({"data": [{"index": 0, "embedding": [1.0, 1e300]}]}),
                1,
                2
            ),
            "data[0].embedding[1] is not a number an f32 holds: 1e+300"
        );
        assert_eq!(
            error(
                json!({"data": [{"index": 0, "embedding": [1.0, "x"]}]}),
                1,
                2
            ),
            "data[0].embedding[1] is not a number an f32 holds: \"x\""
        );
    }

    #[test]
    fn values_the_server_wrote_are_quoted_cut() {
        // A string of a megabyte where an index or a number belongs is not repeated whole.
        let long = "x".repeat(1 << 20);
        let answers = [
            json!({"data": [{"index": long, "embedding": [1.0]}]}),
            json!({"data": [{"index": 0, "embedding": [long]}]}),
            json!({"data": [{"index": [long], "embedding": [1.0]}]}),
        ];
        for answer in answers {
            let error = read_vectors(&answer, 0, 1, 1).unwrap_err();
            assert!(error.chars().count() < 200, "{} characters", error.len());
            assert!(error.contains("xxx…"), "{}", &error[..100]);
            assert!(error.starts_with("data[0]"), "{}", &error[..100]);
        }
    }
}
