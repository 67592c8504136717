//! [`TextIndex`]: the shed's BM25F index over plain documents, for retrieval.

use std::sync::Arc;

use super::index::LexicalIndex;
use crate::shed::tool_text::Field;

/// A ranked document of a [`TextIndex`].
#[derive(Debug, Clone, PartialEq)]
pub struct TextHit {
    /// The document's id.
    pub id: Arc<str>,
    /// Its BM25F score (higher is better; comparable within one search).
    pub score: f32,
}

/// An inverted index over documents of a title and a body, ranked with BM25F: the index
/// `shed` searches tools with (identifier splitting, stemming, stop words, MaxScore), for
/// other text. A word of the title weighs as a tool's name does, a word of the body as its
/// description.
///
/// ```
/// use toolsmith_core::shed::TextIndex;
///
/// let mut index = TextIndex::new();
/// index.insert("rust", "The Rust book", "Ownership, borrowing and lifetimes.");
/// index.insert("tea", "Brewing tea", "Water temperature and steeping times.");
/// let hits = index.search("how does borrowing work", 5);
/// assert_eq!(&*hits[0].id, "rust");
/// assert_eq!(hits.len(), 1);
/// assert!(index.remove("rust"));
/// assert!(index.search("borrowing", 5).is_empty());
/// ```
#[derive(Debug, Default)]
pub struct TextIndex {
    index: LexicalIndex,
}

impl TextIndex {
    /// An empty index.
    pub fn new() -> Self {
        Self::default()
    }

    /// Indexes the document `id`, replacing an earlier one with the same id.
    pub fn insert(&mut self, id: &str, title: &str, body: &str) {
        self.index.insert_fields(id, (), |visit| {
            visit(Field::Name, title);
            visit(Field::Description, body);
        });
    }

    /// Removes the document `id`; `false` when it was not indexed.
    pub fn remove(&mut self, id: &str) -> bool {
        self.index.remove(id)
    }

    /// The best `limit` documents for `query`, best first; documents sharing no term with
    /// the query are not returned.
    pub fn search(&self, query: &str, limit: usize) -> Vec<TextHit> {
        self.index
            .search(query, limit)
            .into_iter()
            .map(|hit| TextHit {
                id: hit.name,
                score: hit.score,
            })
            .collect()
    }

    /// How many documents are indexed.
    pub fn len(&self) -> usize {
        self.index.len()
    }

    /// Whether no document is indexed.
    pub fn is_empty(&self) -> bool {
        self.index.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn of_two_documents_naming_a_word_once_the_shorter_ranks_first_however_long_both_are() {
        // Past 65,535 words a document's length was counted as 65,535: these two tied.
        let filler = |words: usize| "lorem ".repeat(words);
        let mut index = TextIndex::new();
        index.insert("long", "", &format!("{} needle", filler(70_000)));
        index.insert("longer", "", &format!("{} needle", filler(100_000)));
        index.insert("short", "", "a needle in a short text");
        let hits = index.search("needle", 3);
        let ids: Vec<&str> = hits.iter().map(|hit| &*hit.id).collect();
        assert_eq!(ids, ["short", "long", "longer"]);
        assert!(hits[1].score > hits[2].score, "{hits:?}");
    }
}
