//! [`EmbeddingIndex`]: tool embeddings for cosine-similarity search.
//!
//! Registration is synchronous and embedders are async, so a registered tool's text is queued
//! here and embedded, in batches, by the next search; until then the lexical index answers
//! for it. A deregistered tool leaves at once, and a vector that arrives for a tool removed
//! (or replaced) meanwhile is dropped.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use crate::Tool;
use crate::shed::tool_text::embedding_text;

/// How many tool texts go to the embedder in one call.
pub(crate) const EMBED_BATCH: usize = 64;

/// One tool's entry: its text until embedded, then its unit-length vector.
#[derive(Debug)]
struct Entry {
    /// Distinguishes this registration from an earlier one of the same name.
    generation: u64,
    text: String,
    vector: Option<Box<[f32]>>,
    /// Taken by a search that is embedding it now.
    in_flight: bool,
}

#[derive(Debug, Default)]
struct Entries {
    by_name: HashMap<Arc<str>, Entry>,
    next_generation: u64,
}

/// The tools' embeddings, and the queue of tools still to embed.
#[derive(Debug, Default)]
pub(crate) struct EmbeddingIndex {
    entries: Mutex<Entries>,
}

/// Tool texts handed to the embedder; returned to the queue if dropped unfinished.
pub(crate) struct PendingBatch<'a> {
    index: &'a EmbeddingIndex,
    items: Vec<(Arc<str>, u64)>,
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
        entries.by_name.insert(
            Arc::from(tool.name()),
            Entry {
                generation,
                text,
                vector: None,
                in_flight: false,
            },
        );
    }

    /// Removes the tool `name` (its vector or its place in the queue).
    pub(crate) fn remove(&self, name: &str) {
        self.lock().by_name.remove(name);
    }

    /// Forgets everything.
    pub(crate) fn clear(&self) {
        self.lock().by_name.clear();
    }

    /// The number of tools with a vector.
    pub(crate) fn embedded(&self) -> usize {
        self.lock()
            .by_name
            .values()
            .filter(|e| e.vector.is_some())
            .count()
    }

    /// Up to [`EMBED_BATCH`] queued tools no other search is embedding, in name order.
    pub(crate) fn take_pending(&self) -> Option<PendingBatch<'_>> {
        let mut entries = self.lock();
        let mut waiting: Vec<(&Arc<str>, &Entry)> = entries
            .by_name
            .iter()
            .filter(|(_, e)| e.vector.is_none() && !e.in_flight)
            .collect();
        if waiting.is_empty() {
            return None;
        }
        waiting.sort_unstable_by(|a, b| a.0.cmp(b.0));
        waiting.truncate(EMBED_BATCH);
        let (items, texts): (Vec<_>, Vec<_>) = waiting
            .into_iter()
            .map(|(name, e)| ((Arc::clone(name), e.generation), e.text.clone()))
            .unzip();
        for (name, _) in &items {
            if let Some(entry) = entries.by_name.get_mut(name) {
                entry.in_flight = true;
            }
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
                entry.vector = Some(normalized(vector).unwrap_or_default());
            }
        }
    }
}

impl Drop for PendingBatch<'_> {
    /// A batch that failed or was cancelled goes back to the queue for the next search.
    fn drop(&mut self) {
        if self.items.is_empty() {
            return;
        }
        let mut entries = self.index.lock();
        for (name, generation) in &self.items {
            if let Some(entry) = entries.by_name.get_mut(name)
                && entry.generation == *generation
            {
                entry.in_flight = false;
            }
        }
    }
}

/// `vector` scaled to unit length; `None` for a zero (or non-finite) vector.
pub(crate) fn normalized(mut vector: Vec<f32>) -> Option<Box<[f32]>> {
    let norm = vector.iter().map(|x| x * x).sum::<f32>().sqrt();
    if !(norm.is_finite() && norm > 0.0) {
        return None;
    }
    for x in &mut vector {
        *x /= norm;
    }
    Some(vector.into_boxed_slice())
}
