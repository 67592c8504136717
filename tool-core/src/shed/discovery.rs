//! [`ToolDiscovery`]: the search behind the `shed` meta-tool.

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, PoisonError, RwLock};

use tracing::Instrument as _;

use super::embedding_index::EmbeddingIndex;
use super::lexical::{LexicalHit, LexicalIndex};
use crate::manager::RegisteredTool;
use crate::{Embedder, ServiceError, Tool, check_embeddings, unit_vector};

/// Which index found a tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MatchedBy {
    /// Cosine similarity between the query's and the tool's embeddings.
    Embedding,
    /// The lexical (BM25F) index.
    Lexical,
}

/// One tool found by a search.
#[derive(Debug, Clone, PartialEq)]
pub struct DiscoveryHit {
    /// The tool's name.
    pub name: String,
    /// Its score: the cosine similarity for an embedding hit, the BM25F score for a lexical
    /// one (the two scales are not comparable).
    pub score: f32,
    /// Which index found it.
    pub matched_by: MatchedBy,
}

impl From<FoundTool> for DiscoveryHit {
    fn from(found: FoundTool) -> Self {
        Self {
            // Copied as bytes: `to_string` would go through `Display`.
            name: String::from(&*found.name),
            score: found.score,
            matched_by: found.matched_by,
        }
    }
}

/// The registration a [`ToolCallManager`](crate::ToolCallManager) indexes a tool with;
/// `None` for a tool indexed through [`ToolDiscovery::insert`].
type Entry = Option<Arc<RegisteredTool>>;

/// One tool found by [`ToolDiscovery::find`]: a [`DiscoveryHit`] whose name is shared with
/// the index, with the registration the lexical index holds for it, so that `shed` does not
/// look each tool it found up by name.
pub(crate) struct FoundTool {
    pub(crate) name: Arc<str>,
    pub(crate) score: f32,
    pub(crate) matched_by: MatchedBy,
    /// `None` for a tool found by embedding, or indexed without a registration.
    pub(crate) entry: Entry,
}

impl From<LexicalHit<Entry>> for FoundTool {
    fn from(hit: LexicalHit<Entry>) -> Self {
        Self {
            name: hit.name,
            score: hit.score,
            matched_by: MatchedBy::Lexical,
            entry: hit.entry,
        }
    }
}

/// Finds tools for a description of a task.
///
/// Every tool is indexed lexically: an inverted index over its name, description, category,
/// argument names and argument descriptions, each field weighted on its own (BM25F), with
/// identifiers split (snake_case, camelCase, kebab-case, digits), words lower-cased,
/// stemmed, and stop words dropped. Ties are broken by name, so a query always gives the same
/// tools. A query that is exactly a tool's name (spaces around it aside) finds that tool
/// first.
///
/// With an [`Embedder`], a search first ranks the tools by cosine similarity between the
/// query's embedding and theirs, and fills the rest of its `limit` from the lexical index.
/// A tool's embedding is computed by the first search after it is added (in batches). A
/// batch the embedder fails is logged and tried again by later searches in smaller batches,
/// so that a text it refuses keeps none of the others from being embedded (that text, once
/// alone, waits more and more searches between tries); the search goes on with the tools
/// embedded so far. An embedder that fails on the query is logged and the search answers
/// from the lexical index alone.
///
/// A [`ToolCallManager`](crate::ToolCallManager) keeps one, in step with its registry.
///
/// ```
/// use toolsmith::{Args, Tool, ToolDefinition};
/// use toolsmith::shed::ToolDiscovery;
///
/// let discovery = ToolDiscovery::new();
/// for (name, description) in [
///     ("get_weather", "Current weather for a city."),
///     ("readFile", "Read a file from disk."),
/// ] {
///     discovery.insert(&Tool::SingleCommand(ToolDefinition::new(name, description, Args::empty())));
/// }
/// let hits = futures::executor::block_on(discovery.search("how hot is it in Rome? weather", 5));
/// assert_eq!(hits[0].name, "get_weather");
/// ```
#[derive(Default)]
pub struct ToolDiscovery {
    lexical: RwLock<LexicalIndex<Entry>>,
    embeddings: EmbeddingIndex,
    embedder: RwLock<Option<Arc<dyn Embedder>>>,
    /// The embedder failed the last search's query: it is down, and was warned of once;
    /// the searches that find it still down log at `debug` until one succeeds.
    embedder_down: AtomicBool,
}

impl std::fmt::Debug for ToolDiscovery {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolDiscovery")
            .field("tools", &self.len())
            .field("embedder", &self.has_embedder())
            .finish_non_exhaustive()
    }
}

impl ToolDiscovery {
    /// An empty index with no embedder.
    pub fn new() -> Self {
        Self::default()
    }

    /// Indexes `tool` (replacing an earlier tool of the same name), and queues it for
    /// embedding when an embedder is set.
    pub fn insert(&self, tool: &Tool) {
        self.insert_entry(tool, None);
    }

    /// Indexes a manager's registered tool with its registration, which lexical hits then
    /// carry ([`find`](Self::find)).
    pub(crate) fn insert_registered(&self, entry: &Arc<RegisteredTool>) {
        self.insert_entry(&entry.definition, Some(Arc::clone(entry)));
    }

    fn insert_entry(&self, tool: &Tool, entry: Entry) {
        self.lexical
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .insert_entry(tool, entry);
        if self.has_embedder() {
            self.embeddings.insert(tool);
        }
    }

    /// Replaces the registration kept with the tool it registers (its definition
    /// unchanged: only the registration's settings changed); `false` when it is not indexed.
    pub(crate) fn replace_registered(&self, entry: &Arc<RegisteredTool>) -> bool {
        self.lexical
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .set_entry(entry.definition.name(), Some(Arc::clone(entry)))
    }

    /// Removes the tool `name` from every index; `false` when it was not indexed.
    pub fn remove(&self, name: &str) -> bool {
        self.embeddings.remove(name);
        self.lexical
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(name)
    }

    /// The number of indexed tools.
    pub fn len(&self) -> usize {
        self.lexical
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .len()
    }

    /// Whether no tool is indexed.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether searches use an embedder.
    pub fn has_embedder(&self) -> bool {
        self.embedder
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .is_some()
    }

    /// The number of tools whose embedding has been computed.
    pub fn embedded(&self) -> usize {
        self.embeddings.embedded()
    }

    /// Sets (or, with `None`, removes) the embedder, and queues `tools` — the tools indexed
    /// now — for embedding.
    pub fn set_embedder<'a>(
        &self,
        embedder: Option<Arc<dyn Embedder>>,
        tools: impl IntoIterator<Item = &'a Tool>,
    ) {
        let enabled = embedder.is_some();
        *self
            .embedder
            .write()
            .unwrap_or_else(PoisonError::into_inner) = embedder;
        // Another embedder: its first failure is warned of.
        self.embedder_down.store(false, Ordering::Relaxed);
        self.embeddings.clear();
        if enabled {
            for tool in tools {
                self.embeddings.insert(tool);
            }
        }
    }

    /// The number of distinct terms in the lexical index.
    pub fn vocabulary_len(&self) -> usize {
        self.lexical
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .vocabulary_len()
    }

    /// An estimate of the heap the lexical index holds, in bytes.
    pub fn lexical_heap_bytes(&self) -> usize {
        self.lexical
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .heap_bytes()
    }

    /// The best `limit` tools for `query` from the lexical index alone, best first (a tool
    /// named exactly `query` first of all, as in [`search`](Self::search)).
    pub fn search_lexical(&self, query: &str, limit: usize) -> Vec<DiscoveryHit> {
        if limit == 0 {
            return Vec::new();
        }
        let mut hits: Vec<FoundTool> = self.named(query).into_iter().collect();
        self.fill_lexical(query, limit, &mut hits);
        hits.into_iter().map(DiscoveryHit::from).collect()
    }

    /// Fills `hits` up to `limit` from the lexical index, best first, with tools not in it
    /// yet.
    fn fill_lexical(&self, query: &str, limit: usize, hits: &mut Vec<FoundTool>) {
        if hits.len() < limit {
            let found: HashSet<Arc<str>> = hits.iter().map(|h| Arc::clone(&h.name)).collect();
            hits.extend(self.lexical_excluding(query, limit - hits.len(), &found));
        }
    }

    /// The tool named exactly `query` (trimmed), scored as the lexical index scores it. A
    /// query that is a tool's name finds that tool first, where its words alone may not: a
    /// name of stop words (`do`), or one told from another only by a stop word (`zoom_out`
    /// and `zoom_in` tie on `zoom`, and ties go by name).
    fn named(&self, query: &str) -> Option<FoundTool> {
        self.lexical
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .named(query.trim(), query)
            .map(FoundTool::from)
    }

    fn lexical_excluding(
        &self,
        query: &str,
        limit: usize,
        exclude: &HashSet<Arc<str>>,
    ) -> Vec<FoundTool> {
        let hits = self
            .lexical
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .search(query, limit.saturating_add(exclude.len()));
        hits.into_iter()
            .filter(|hit| !exclude.contains(&hit.name))
            .take(limit)
            .map(FoundTool::from)
            .collect()
    }

    /// The best `limit` tools for `query`, best first: the tool named exactly `query` (if
    /// any), then by embedding when an embedder is set, the rest (or all, without an embedder
    /// or when it fails) from the lexical index. A blank query finds nothing.
    pub async fn search(&self, query: &str, limit: usize) -> Vec<DiscoveryHit> {
        self.find(query, limit)
            .await
            .into_iter()
            .map(DiscoveryHit::from)
            .collect()
    }

    /// What [`search`](Self::search) finds, each lexical hit with the registration the
    /// tool was indexed with; in a `shed.search` span saying how long the query was (in
    /// characters: its text is the model's words, never traced), the limit, and how many
    /// tools were found, and how many of them by embedding.
    pub(crate) async fn find(&self, query: &str, limit: usize) -> Vec<FoundTool> {
        let span = tracing::info_span!(
            "shed.search",
            toolsmith.shed.query.length = query.chars().count(),
            toolsmith.shed.limit = limit,
            toolsmith.shed.hits = tracing::field::Empty,
            toolsmith.shed.embedding_hits = tracing::field::Empty,
        );
        let hits = self.find_hits(query, limit).instrument(span.clone()).await;
        if !span.is_disabled() {
            let by_embedding = hits
                .iter()
                .filter(|hit| hit.matched_by == MatchedBy::Embedding)
                .count();
            span.record("toolsmith.shed.hits", hits.len());
            span.record("toolsmith.shed.embedding_hits", by_embedding);
        }
        hits
    }

    async fn find_hits(&self, query: &str, limit: usize) -> Vec<FoundTool> {
        // A blank query describes nothing: by embedding it would find the tools nearest to
        // nothing (a zero vector ranks every tool alike).
        if limit == 0 || crate::is_blank(query) {
            return Vec::new();
        }
        let embedder = self
            .embedder
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        let mut hits: Vec<FoundTool> = self.named(query).into_iter().collect();
        if let Some(embedder) = embedder {
            match self
                .search_embeddings(embedder.as_ref(), query, limit)
                .await
            {
                Ok(found) => {
                    if self.embedder_down.swap(false, Ordering::Relaxed) {
                        tracing::info!(
                            "tool discovery: the embedder recovered; searching by embedding again"
                        );
                    }
                    let named = hits.first().map(|hit| Arc::clone(&hit.name));
                    let rest = found
                        .into_iter()
                        .filter(|hit| Some(&hit.name) != named.as_ref());
                    hits.extend(rest.take(limit - hits.len()));
                }
                Err(err) => {
                    if self.embedder_down.swap(true, Ordering::Relaxed) {
                        tracing::debug!(
                            "tool discovery: the embedder is still failing ({err}); answering \
                             from the lexical index"
                        );
                    } else {
                        tracing::warn!(
                            "tool discovery: the embedder failed ({err}); answering from the \
                             lexical index until it answers again (said once, then at debug \
                             level)"
                        );
                    }
                }
            }
        }
        self.fill_lexical(query, limit, &mut hits);
        hits
    }

    /// Embeds the queued tools, then the query, and ranks by cosine similarity.
    async fn search_embeddings(
        &self,
        embedder: &dyn Embedder,
        query: &str,
        limit: usize,
    ) -> Result<Vec<FoundTool>, ServiceError> {
        let dimensions = embedder.dimensions();
        self.embeddings.start_search();
        let mut failed_batch = None;
        while let Some(batch) = self.embeddings.take_pending() {
            match embedded_checked(embedder, &batch.texts, dimensions).await {
                Ok(vectors) => batch.complete(vectors),
                // Put back to be tried in smaller batches: the tools embedded so far still
                // answer the query, and the next search goes on with the rest.
                Err(error) => {
                    failed_batch = Some((batch.fail(), error));
                    break;
                }
            }
        }
        let query_text = [query.to_owned()];
        let query_vectors = embedded_checked(embedder, &query_text, dimensions).await;
        // Logged once the query says whether the embedder is down (then the search warns
        // of that, once) or refused those texts only (a warning of its own).
        if let Some((batch, error)) = failed_batch {
            batch.log(&error, query_vectors.is_err());
        }
        let Some(query) = unit_vector(query_vectors?.swap_remove(0)) else {
            return Ok(Vec::new());
        };
        Ok(self
            .embeddings
            .nearest(&query, limit, 0.0)
            .into_iter()
            .map(|(name, score)| FoundTool {
                name,
                score,
                matched_by: MatchedBy::Embedding,
                entry: None,
            })
            .collect())
    }
}

/// `texts` embedded by `embedder`, checked to be one finite vector of `dimensions` a text.
async fn embedded_checked(
    embedder: &dyn Embedder,
    texts: &[String],
    dimensions: usize,
) -> Result<Vec<Vec<f32>>, ServiceError> {
    let vectors = embedder.embed(texts).await?;
    check_embeddings(&vectors, texts, dimensions)?;
    Ok(vectors)
}
