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
/// use toolsmith::shed::TextIndex;
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

    /// The ids of the documents found for `query`, best first, after checking that each
    /// scores strictly more than the next.
    fn strictly_ranked(index: &TextIndex, query: &str) -> Vec<String> {
        let hits = index.search(query, 10);
        assert!(
            hits.windows(2).all(|pair| pair[0].score > pair[1].score),
            "{hits:?}"
        );
        hits.iter().map(|hit| hit.id.to_string()).collect()
    }

    #[test]
    fn a_word_said_a_thousand_times_outranks_one_said_three_hundred_times() {
        // Counts stopped at 255: two documents of one length naming a word 300 and 1,000
        // times tied, and fell to their ids.
        let body = |needles: usize| {
            format!(
                "{}{}",
                "needle ".repeat(needles),
                "lorem ".repeat(1000 - needles)
            )
        };
        // The exact counts are kept apart from the document: they must survive the impacts
        // being recomputed (the long documents move the average length far) and the
        // documents being renumbered (once more than a thousand before them are removed).
        let mut index = TextIndex::new();
        for i in 0..1100 {
            index.insert(&format!("short_{i}"), "", "a short text");
        }
        index.insert("a_few", "", &body(300));
        index.insert("b_many", "", &body(1000));
        index.insert("c_none", "", &body(0));
        assert_eq!(strictly_ranked(&index, "needle"), ["b_many", "a_few"]);
        for i in 0..1100 {
            assert!(index.remove(&format!("short_{i}")));
        }
        assert_eq!(strictly_ranked(&index, "needle"), ["b_many", "a_few"]);
        index.insert("d_more", "", &body(999));
        assert_eq!(
            strictly_ranked(&index, "needle"),
            ["b_many", "d_more", "a_few"]
        );
        assert!(index.remove("b_many"));
        assert_eq!(strictly_ranked(&index, "needle"), ["d_more", "a_few"]);
    }
}
