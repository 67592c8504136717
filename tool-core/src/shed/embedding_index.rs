//! [`EmbeddingIndex`]: tool embeddings for cosine-similarity search.
//!
//! Registration is synchronous and embedders are async, so a registered tool's text is queued
//! here and embedded, in batches, by the next search; until then the lexical index answers
//! for it. A deregistered tool leaves at once, and a vector that arrives for a tool removed
//! (or replaced) meanwhile is dropped.
//!
//! An embedder may refuse one text of a batch (a content filter, a text too long for its
//! model) and so fail the whole batch. A failed batch's texts are tried again from the next
//! search in batches half its size, after the tools never tried, until the text it refuses is
//! alone; that one then waits more and more searches (up to [`MAX_LONE_RETRY_WAIT`]) before
//! each new try, and the others are embedded meanwhile.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::{Arc, Mutex, PoisonError};

use crate::shed::tool_text::embedding_text;
use crate::{ServiceError, Tool, unit_vector};

/// How many tool texts go to the embedder in one call.
pub(crate) const EMBED_BATCH: usize = 64;

/// The most searches a text the embedder failed on its own waits before it is tried again:
/// the waits double from 2 up to this.
pub(crate) const MAX_LONE_RETRY_WAIT: u64 = 64;

/// One tool's entry: its text until embedded, then its unit-length vector.
#[derive(Debug)]
struct Entry {
    /// Distinguishes this registration from an earlier one of the same name.
    generation: u64,
    text: String,
    vector: Option<Box<[f32]>>,
    /// Taken by a search that is embedding it now.
    in_flight: bool,
    /// The largest batch it goes in next: half of the last one that failed with it.
    batch_limit: usize,
    /// How many times it failed alone.
    lone_failures: u32,
}

/// A tool waiting to be embedded: its name and the registration it was queued for (an entry
/// replaced or removed since leaves its queued places stale, skipped when met).
type Queued = (Arc<str>, u64);

#[derive(Debug, Default)]
struct Entries {
    by_name: HashMap<Arc<str>, Entry>,
    next_generation: u64,
    /// Tools not yet tried, in the order they were queued.
    fresh: VecDeque<Queued>,
    /// Tools whose batch failed (or was dropped unfinished), by the search from which they
    /// may be tried again, then in the order they were put back.
    retrying: BTreeMap<(u64, u64), Queued>,
    /// How many searches have started embedding: the clock of `retrying`.
    searches: u64,
    /// Orders the tools put back at the same search.
    next_retry: u64,
}

impl Entries {
    /// The entry of `queued`, when that registration is still waiting to be embedded.
    fn waiting(&mut self, queued: &Queued) -> Option<&mut Entry> {
        self.by_name
            .get_mut(&queued.0)
            .filter(|e| e.generation == queued.1 && e.vector.is_none() && !e.in_flight)
    }

    /// Puts `queued` back to be tried from search `due` on.
    fn retry_from(&mut self, due: u64, queued: Queued) {
        self.next_retry += 1;
        self.retrying.insert((due, self.next_retry), queued);
    }
}

/// The tools' embeddings, and the queue of tools still to embed.
#[derive(Debug, Default)]
pub(crate) struct EmbeddingIndex {
    entries: Mutex<Entries>,
}

/// Tool texts handed to the embedder; returned to the queue if dropped unfinished.
pub(crate) struct PendingBatch<'a> {
    index: &'a EmbeddingIndex,
    items: Vec<Queued>,
    pub(crate) texts: Vec<String>,
}

impl EmbeddingIndex {
    fn lock(&self) -> std::sync::MutexGuard<'_, Entries> {
        self.entries.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Queues `tool` for embedding, replacing an earlier tool of the same name.
    pub(crate) fn insert(&self, tool: &Tool) {
        let text = embedding_text(tool);
        let mut entries = self.lock();
        entries.next_generation += 1;
        let generation = entries.next_generation;
        let name: Arc<str> = Arc::from(tool.name());
        entries.by_name.insert(
            Arc::clone(&name),
            Entry {
                generation,
                text,
                vector: None,
                in_flight: false,
                batch_limit: EMBED_BATCH,
                lone_failures: 0,
            },
        );
        entries.fresh.push_back((name, generation));
        // Tools replaced or removed before a search leave stale places: dropped once they
        // outnumber the tools, so that churn without searches cannot grow the queue.
        if entries.fresh.len() > 2 * entries.by_name.len() + EMBED_BATCH {
            let Entries { by_name, fresh, .. } = &mut *entries;
            fresh.retain(|(name, generation)| {
                by_name
                    .get(name)
                    .is_some_and(|e| e.generation == *generation && e.vector.is_none())
            });
        }
    }

    /// Removes the tool `name` (its vector or its place in the queue).
    pub(crate) fn remove(&self, name: &str) {
        self.lock().by_name.remove(name);
    }

    /// Forgets everything.
    pub(crate) fn clear(&self) {
        let mut entries = self.lock();
        entries.by_name.clear();
        entries.fresh.clear();
        entries.retrying.clear();
    }

    /// The number of tools with a vector.
    pub(crate) fn embedded(&self) -> usize {
        self.lock()
            .by_name
            .values()
            .filter(|e| e.vector.is_some())
            .count()
    }

    /// Counts a search that embeds what is queued: texts that failed wait in searches.
    pub(crate) fn start_search(&self) {
        self.lock().searches += 1;
    }

    /// Up to [`EMBED_BATCH`] queued tools no other search is embedding: the tools never tried
    /// first, in the order queued; then those of failed batches whose wait is over, in
    /// batches of half the failed one's size.
    pub(crate) fn take_pending(&self) -> Option<PendingBatch<'_>> {
        let mut entries = self.lock();
        let mut items = Vec::new();
        let mut texts = Vec::new();
        let mut take = |entries: &mut Entries, queued: Queued| -> Option<usize> {
            let entry = entries.waiting(&queued)?;
            entry.in_flight = true;
            texts.push(entry.text.clone());
            let limit = entry.batch_limit;
            items.push(queued);
            Some(limit)
        };
        let mut taken = 0;
        while taken < EMBED_BATCH
            && let Some(queued) = entries.fresh.pop_front()
        {
            taken += usize::from(take(&mut entries, queued).is_some());
        }
        if taken == 0 {
            // The first one taken sets the batch's size: the texts of one failed batch were
            // put back together, and go on together.
            let mut size = EMBED_BATCH;
            while taken < size {
                let now = entries.searches;
                let Some(next) = entries.retrying.first_entry() else {
                    break;
                };
                if next.key().0 > now {
                    break;
                }
                let queued = next.remove();
                if let Some(limit) = take(&mut entries, queued) {
                    if taken == 0 {
                        size = limit;
                    }
                    taken += 1;
                }
            }
        }
        drop(entries);
        if items.is_empty() {
            return None;
        }
        Some(PendingBatch {
            index: self,
            items,
            texts,
        })
    }

    /// The `limit` tools most similar to `query` (unit length), with a similarity above
    /// `min_similarity`, best first, equal ones in name order.
    pub(crate) fn nearest(
        &self,
        query: &[f32],
        limit: usize,
        min_similarity: f32,
    ) -> Vec<(Arc<str>, f32)> {
        let entries = self.lock();
        let mut hits: Vec<(Arc<str>, f32)> = entries
            .by_name
            .iter()
            .filter_map(|(name, e)| {
                let vector = e.vector.as_deref()?;
                let similarity: f32 = vector.iter().zip(query).map(|(a, b)| a * b).sum();
                (similarity > min_similarity).then(|| (Arc::clone(name), similarity))
            })
            .collect();
        drop(entries);
        let order = |a: &(Arc<str>, f32), b: &(Arc<str>, f32)| {
            b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0))
        };
        if hits.len() > limit && limit > 0 {
            hits.select_nth_unstable_by(limit - 1, order);
        }
        hits.truncate(limit);
        hits.sort_unstable_by(order);
        hits
    }
}

impl PendingBatch<'_> {
    /// Stores the batch's vectors (one per text, in order), for the tools still registered
    /// as they were when the batch was taken.
    pub(crate) fn complete(mut self, vectors: Vec<Vec<f32>>) {
        let items = std::mem::take(&mut self.items);
        let mut entries = self.index.lock();
        for ((name, generation), vector) in items.into_iter().zip(vectors) {
            if let Some(entry) = entries.by_name.get_mut(&name)
                && entry.generation == generation
            {
                entry.in_flight = false;
                // A zero vector has no direction; the tool stays lexical-only.
                entry.vector = Some(unit_vector(vector).unwrap_or_default());
            }
        }
    }

    /// Puts the texts of a batch the embedder failed back: a batch of several to be tried
    /// from the next search in halves, a text alone after twice the searches it waited last
    /// time (2 the first time, at most [`MAX_LONE_RETRY_WAIT`]). Returns what to log, once
    /// the search knows whether the embedder is down.
    pub(crate) fn fail(mut self) -> FailedBatch {
        let items = std::mem::take(&mut self.items);
        let size = items.len();
        let lone = (size == 1).then(|| Arc::clone(&items[0].0));
        let mut entries = self.index.lock();
        let now = entries.searches;
        let mut wait = 1;
        for queued in items {
            let Some(entry) = entries.by_name.get_mut(&queued.0) else {
                continue;
            };
            if entry.generation != queued.1 {
                continue;
            }
            entry.in_flight = false;
            if size > 1 {
                entry.batch_limit = size / 2;
            } else {
                entry.lone_failures = entry.lone_failures.saturating_add(1);
                wait = 1u64
                    .checked_shl(entry.lone_failures)
                    .unwrap_or(u64::MAX)
                    .min(MAX_LONE_RETRY_WAIT);
            }
            entries.retry_from(now.saturating_add(wait), queued);
        }
        drop(entries);
        FailedBatch { lone, size, wait }
    }
}

/// A batch of tool texts the embedder failed, put back ([`PendingBatch::fail`]).
pub(crate) struct FailedBatch {
    /// The tool, when the batch was its text alone.
    lone: Option<Arc<str>>,
    size: usize,
    /// The searches a lone text waits before it is tried again.
    wait: u64,
}

impl FailedBatch {
    /// Logs the failure, with `error`: a warning, unless the embedder is `down` (it failed
    /// the query too), which the search reports, once; then a `debug` event.
    pub(crate) fn log(&self, error: &ServiceError, down: bool) {
        let (size, wait) = (self.size, self.wait);
        match (&self.lone, down) {
            (Some(name), false) => tracing::warn!(
                "tool discovery: the embedder failed on the text of `{name}` ({error}); \
                 tried again in {wait} searches, found lexically meanwhile"
            ),
            (Some(name), true) => tracing::debug!(
                "tool discovery: the embedder failed on the text of `{name}` ({error}); \
                 tried again in {wait} searches"
            ),
            (None, false) => tracing::warn!(
                "tool discovery: the embedder failed on a batch of {size} tool texts \
                 ({error}); they are tried again in smaller batches from the next search"
            ),
            (None, true) => tracing::debug!(
                "tool discovery: the embedder failed on a batch of {size} tool texts \
                 ({error}); tried again from the next search"
            ),
        }
    }
}

impl Drop for PendingBatch<'_> {
    /// A batch that was dropped unfinished (its search was cancelled) goes back to be tried
    /// by the next search, as it was.
    fn drop(&mut self) {
        if self.items.is_empty() {
            return;
        }
        let mut entries = self.index.lock();
        let now = entries.searches;
        for queued in std::mem::take(&mut self.items) {
            if let Some(entry) = entries.by_name.get_mut(&queued.0)
                && entry.generation == queued.1
            {
                entry.in_flight = false;
                entries.retry_from(now, queued);
            }
        }
    }
}
