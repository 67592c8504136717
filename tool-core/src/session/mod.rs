//! The session as tools see it: its parts and service traits (this file), the constructors
//! that build tools from them (`constructor`), the extractors that hand them to `#[ctx]`
//! parameters (`extract`), and in-memory services for tests and small agents (`in_memory`).
//!
//! [`SessionParts`]: what a session gives the tools built for it, and the service traits its
//! parts implement.

pub(crate) mod constructor;
pub(crate) mod extract;
pub mod in_memory;
pub(crate) mod unbuilt_tool;

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::sync::Arc;

use async_trait::async_trait;

use crate::tool::echo::cut_to;

/// A failure of a session service (an embedder, a context store, a memory).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{service}: {reason}")]
pub struct ServiceError {
    /// The service that failed ("embedder", "context", "memory").
    pub service: String,
    /// What went wrong.
    pub reason: String,
}

impl ServiceError {
    /// A failure of `service`.
    pub fn new(service: impl Into<String>, reason: impl std::fmt::Display) -> Self {
        Self {
            service: service.into(),
            reason: reason.to_string(),
        }
    }
}

/// Turns texts into vectors for similarity search.
#[async_trait]
pub trait Embedder: Send + Sync {
    /// One vector per text, each of [`dimensions`](Self::dimensions) numbers.
    async fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, ServiceError>;

    /// The length of every vector this embedder returns.
    fn dimensions(&self) -> usize;
}

/// The most characters of a text a [`check_embeddings`] or [`check_finite_embeddings`]
/// error quotes: enough to tell which text it is, where the text may be a whole document.
const MAX_QUOTED_TEXT_CHARS: usize = 40;

/// Checks what an embedder returned for `texts` against what [`Embedder::embed`] promises:
/// one vector per text, each of `dimensions` numbers. A vector of another length would
/// match nothing (the text never found, the query finding nothing), so it is an error, not
/// a result. The error's service is `"embedder"`; it says how many vectors came back for
/// how many texts, or which text's vector (its place and how it begins) has how many
/// numbers for how many expected. Whether the numbers are finite is
/// [`check_finite_embeddings`]'s to check, for a store that would keep such a vector.
///
/// ```
/// use toolsmith_core::check_embeddings;
///
/// let texts = ["a cat".to_owned(), "a dog".to_owned()];
/// assert!(check_embeddings(&[vec![1.0, 0.0], vec![0.0, 1.0]], &texts, 2).is_ok());
/// let err = check_embeddings(&[vec![1.0, 0.0]], &texts, 2).unwrap_err();
/// assert_eq!(err.to_string(), "embedder: returned 1 vector for 2 texts");
/// let err = check_embeddings(&[vec![1.0, 0.0], vec![1.0]], &texts, 2).unwrap_err();
/// assert_eq!(
///     err.to_string(),
///     "embedder: returned 1 number for text 1 (\"a dog\"), but its dimension is 2"
/// );
/// ```
pub fn check_embeddings(
    vectors: &[Vec<f32>],
    texts: &[String],
    dimensions: usize,
) -> Result<(), ServiceError> {
    let counted = |count: usize, what: &str| match count {
        1 => format!("1 {what}"),
        count => format!("{count} {what}s"),
    };
    if vectors.len() != texts.len() {
        return Err(ServiceError::new(
            "embedder",
            format_args!(
                "returned {} for {}",
                counted(vectors.len(), "vector"),
                counted(texts.len(), "text")
            ),
        ));
    }
    let Some((at, vector)) = vectors
        .iter()
        .enumerate()
        .find(|(_, vector)| vector.len() != dimensions)
    else {
        return Ok(());
    };
    Err(ServiceError::new(
        "embedder",
        format_args!(
            "returned {} for {}, but its dimension is {dimensions}",
            counted(vector.len(), "number"),
            which_text(texts, at)
        ),
    ))
}

/// Checks that every number of `vectors` (one for each of `texts`, as [`check_embeddings`]
/// checks) is finite. A NaN or an infinity makes a vector's length not a number: a store that
/// keeps the vector scaled to length 1 would have one that matches nothing, so it is an
/// error naming the text, the number and its place. (Tool discovery needs no such check: it
/// searches a tool whose vector is not finite by its words alone.)
///
/// ```
/// use toolsmith_core::check_finite_embeddings;
///
/// let texts = ["a cat".to_owned(), "a dog".to_owned()];
/// assert!(check_finite_embeddings(&[vec![1.0, 0.0], vec![0.0, 1.0]], &texts).is_ok());
/// let err = check_finite_embeddings(&[vec![1.0, 0.0], vec![f32::NAN, 1.0]], &texts).unwrap_err();
/// assert_eq!(
///     err.to_string(),
///     "embedder: returned NaN as number 0 of the vector for text 1 (\"a dog\"): a vector's \
///      numbers must be finite"
/// );
/// ```
pub fn check_finite_embeddings(vectors: &[Vec<f32>], texts: &[String]) -> Result<(), ServiceError> {
    let not_finite = vectors.iter().enumerate().find_map(|(at, vector)| {
        let place = vector.iter().position(|number| !number.is_finite())?;
        Some((at, place, vector[place]))
    });
    let Some((at, place, number)) = not_finite else {
        return Ok(());
    };
    Err(ServiceError::new(
        "embedder",
        format_args!(
            "returned {number} as number {place} of the vector for {}: a vector's numbers \
             must be finite",
            which_text(texts, at)
        ),
    ))
}

/// Text `at` of `texts` as an embedding check's error names it: how it begins, quoted, and
/// its place when there are several.
fn which_text(texts: &[String], at: usize) -> String {
    let quoted = match texts.get(at) {
        Some(text) => format!("{:?}", cut_to(text, MAX_QUOTED_TEXT_CHARS)),
        None => return format!("vector {at}"),
    };
    match texts.len() {
        1 => quoted,
        _ => format!("text {at} ({quoted})"),
    }
}

/// One hit of a [`ContextSearch`].
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ContextHit {
    /// Where the text came from (a store, a document id).
    pub source: String,
    /// The matching text.
    pub text: String,
    /// Relevance, higher is better.
    pub score: f32,
}

/// Recall over a session's context stores.
#[async_trait]
pub trait ContextSearch: Send + Sync {
    /// The best `limit` hits for `query`, best first.
    async fn search(&self, query: &str, limit: usize) -> Result<Vec<ContextHit>, ServiceError>;
}

/// One remembered fact.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct MemoryFact {
    /// The fact's id, stable for its life.
    pub id: u64,
    /// The fact.
    pub text: String,
}

/// What a write to a [`MemoryAccess`] returned, and the memory's version once it was made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Versioned<T> {
    /// What the write returned: the fact added, or whether a fact was removed or replaced.
    pub value: T,
    /// The number of writes once this one was made, read with it (not after it, when a
    /// parallel write may have come in between): each write that changed the memory has its
    /// own. A write that changed nothing gives the version it found.
    pub version: u64,
}

/// A session's working memory: facts the agent keeps, each write a version bump.
///
/// Every write returns the version it made ([`Versioned`]): a caller reporting it reads it
/// there, as [`version`](Self::version) may already count a parallel write.
#[async_trait]
pub trait MemoryAccess: Send + Sync {
    /// Every fact, oldest first.
    async fn facts(&self) -> Result<Vec<MemoryFact>, ServiceError>;
    /// Adds a fact, returning it with its id.
    async fn add(&self, text: String) -> Result<Versioned<MemoryFact>, ServiceError>;
    /// Removes a fact; `false` when there was none with that id.
    async fn remove(&self, id: u64) -> Result<Versioned<bool>, ServiceError>;
    /// Replaces a fact's text; `false` when there was none with that id.
    async fn replace(&self, id: u64, text: String) -> Result<Versioned<bool>, ServiceError>;
    /// The number of writes so far.
    fn version(&self) -> u64;
}

/// Values looked up by type: the user values registered on a shed
/// ([`SessionParts::state`]), or the values a batch lends each of its calls
/// ([`BatchOptions::with_call_values`](crate::BatchOptions::with_call_values)).
#[derive(Clone, Default)]
pub struct SessionState {
    values: HashMap<TypeId, Arc<dyn Any + Send + Sync>>,
}

impl SessionState {
    /// An empty state.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds (or replaces) the value of type `T`.
    pub fn insert<T: Send + Sync + 'static>(&mut self, value: T) {
        self.values.insert(TypeId::of::<T>(), Arc::new(value));
    }

    /// Adds (or replaces) the value of type `T`, already shared.
    pub fn insert_arc<T: Send + Sync + 'static>(&mut self, value: Arc<T>) {
        self.values.insert(TypeId::of::<T>(), value);
    }

    /// The value of type `T`, if one was added.
    pub fn get<T: Send + Sync + 'static>(&self) -> Option<Arc<T>> {
        self.values
            .get(&TypeId::of::<T>())
            .and_then(|value| Arc::clone(value).downcast::<T>().ok())
    }

    /// The number of values.
    pub fn len(&self) -> usize {
        self.values.len()
    }

    /// Whether there are no values.
    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }
}

impl std::fmt::Debug for SessionState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SessionState")
            .field("values", &self.values.len())
            .finish()
    }
}

/// What a tool constructor gets when a session is built: the same `Arc`s the session holds.
#[derive(Clone)]
pub struct SessionParts {
    /// The session's id.
    pub session_id: String,
    /// Recall over the session's stores and embedder.
    pub context: Arc<dyn ContextSearch>,
    /// The session's working memory.
    pub memory: Arc<dyn MemoryAccess>,
    /// The session's embedder, if it has one.
    pub embedder: Option<Arc<dyn Embedder>>,
    /// User values registered on the shed, by type.
    pub state: SessionState,
}

impl std::fmt::Debug for SessionParts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SessionParts")
            .field("session_id", &self.session_id)
            .field("embedder", &self.embedder.is_some())
            .field("state", &self.state)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_embedder_s_answer_is_checked_against_its_texts() {
        let one = ["where is the cat".to_owned()];
        assert!(check_embeddings(&[vec![0.0; 3]], &one, 3).is_ok());
        assert!(check_embeddings(&[], &[], 3).is_ok());
        // No vector for a text: counted, not indexed out of bounds.
        let err = check_embeddings(&[], &one, 3).unwrap_err();
        assert_eq!(
            (err.service.as_str(), err.reason.as_str()),
            ("embedder", "returned 0 vectors for 1 text")
        );
        let err = check_embeddings(&[vec![0.0; 3], vec![0.0; 3]], &one, 3).unwrap_err();
        assert_eq!(err.reason, "returned 2 vectors for 1 text");
        // A lone text is named by what it says; one of several by its place too.
        let err = check_embeddings(&[vec![0.0; 4]], &one, 3).unwrap_err();
        assert_eq!(
            err.reason,
            "returned 4 numbers for \"where is the cat\", but its dimension is 3"
        );
        let long = format!("{}\"", "é".repeat(1_000));
        let texts = [String::new(), long];
        let err = check_embeddings(&[vec![0.0; 3], Vec::new()], &texts, 3).unwrap_err();
        assert_eq!(
            err.reason,
            format!(
                "returned 0 numbers for text 1 (\"{}…\"), but its dimension is 3",
                "é".repeat(MAX_QUOTED_TEXT_CHARS)
            )
        );
    }
}
