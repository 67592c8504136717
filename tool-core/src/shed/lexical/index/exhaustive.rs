//! The ranking MaxScore must give, computed the plain way: every live document scored from
//! its own term counts, then all sorted. Tests compare the two.

use proptest::prelude::*;
use serde_json::json;

use super::{DocId, LexicalHit, LexicalIndex, exact_counts};
use crate::shed::lexical::test_words::{WORDS, text};
use crate::{Args, Tool, ToolDefinition};

impl<E: Clone> LexicalIndex<E> {
    /// The best `limit` documents, scoring every live one: each query term it has adds
    /// `weight × impact`, the impact recomputed from the document's counts and field
    /// lengths, in the order of the query's terms; then all sorted by score, then name.
    fn exhaustive_search(&self, query: &str, limit: usize) -> Vec<LexicalHit<E>> {
        let live = self.by_name.len();
        let mut terms = Vec::new();
        self.query_terms(query, live, &mut terms);
        let mut hits = Vec::new();
        for (id, doc) in self.docs.iter().enumerate() {
            let Some(doc) = doc else { continue };
            let mut score = None;
            for term in &terms {
                if let Ok(at) = doc.terms.binary_search_by_key(&term.term, |&(t, _)| t) {
                    let exact =
                        exact_counts(&self.many_counts, id as DocId, term.term, &doc.terms[at].1);
                    let impact = self.scorer.impact(&exact, &self.lens[id]);
                    *score.get_or_insert(0.0f32) += term.weight * impact;
                }
            }
            if let Some(score) = score {
                hits.push(LexicalHit {
                    name: doc.name.clone(),
                    score,
                    entry: doc.entry.clone(),
                });
            }
        }
        hits.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.name.cmp(&b.name)));
        hits.truncate(limit);
        hits
    }

    /// Each query term's weight, from its document frequency counted over the live
    /// documents (not from its list's length).
    fn weights_by_count(&self, query: &str) -> Vec<f32> {
        let live = self.by_name.len();
        let mut terms = Vec::new();
        self.query_terms(query, live, &mut terms);
        terms
            .iter()
            .map(|term| {
                let df = self
                    .docs
                    .iter()
                    .flatten()
                    .filter(|doc| doc.terms.iter().any(|&(t, _)| t == term.term))
                    .count() as f32;
                (1.0 + (live as f32 - df + 0.5) / (df + 0.5)).ln()
            })
            .collect()
    }
}

/// A tool whose name, description and one argument are made of `WORDS`.
fn tool(i: usize, name: &[usize], description: &[usize], argument: &[usize]) -> Tool {
    let mut properties = serde_json::Map::new();
    if let Some((&first, rest)) = argument.split_first() {
        properties.insert(
            WORDS[first % WORDS.len()].to_owned(),
            json!({"type": "string", "description": text(rest)}),
        );
    }
    Tool::SingleCommand(ToolDefinition::new(
        format!("{}_{i}", text(name).replace(' ', "_")),
        text(description),
        Args::new(json!({"type": "object", "properties": properties})),
    ))
}

type Docs = Vec<(Vec<usize>, Vec<usize>, Vec<usize>)>;

fn docs(max: usize) -> impl Strategy<Value = Docs> {
    prop::collection::vec(
        (
            prop::collection::vec(0usize..40, 1..4),
            prop::collection::vec(0usize..40, 0..14),
            prop::collection::vec(0usize..40, 0..5),
        ),
        1..max,
    )
}

/// An index of `docs`, with every `remove_every`-th one removed again (0: none), so that ids
/// have holes.
fn index_of(docs: &Docs, remove_every: usize) -> LexicalIndex {
    let tools: Vec<Tool> = docs
        .iter()
        .enumerate()
        .map(|(i, (name, description, argument))| tool(i, name, description, argument))
        .collect();
    let mut index = LexicalIndex::default();
    for tool in &tools {
        index.insert(tool);
    }
    if remove_every > 0 {
        for tool in tools.iter().step_by(remove_every) {
            index.remove(tool.name());
        }
    }
    index
}

fn assert_same(index: &LexicalIndex, query: &str, limit: usize) -> Result<(), TestCaseError> {
    let found = index.search(query, limit);
    let expected = index.exhaustive_search(query, limit);
    // Same tools, same order, same scores to the bit.
    let bits = |hits: &[LexicalHit]| -> Vec<(String, u32)> {
        hits.iter()
            .map(|h| (h.name.to_string(), h.score.to_bits()))
            .collect()
    };
    prop_assert_eq!(bits(&found), bits(&expected), "query {:?}", query);
    Ok(())
}

proptest! {
    /// MaxScore over windows ranks exactly as scoring every document does, whatever the
    /// limit, with removed documents among them (several windows: tests' windows are 64
    /// documents).
    #[test]
    fn max_score_ranks_as_scoring_every_document(
        docs in docs(300),
        remove_every in 0usize..5,
        query in prop::collection::vec(0usize..40, 1..12),
        limit in 1usize..25,
    ) {
        let index = index_of(&docs, remove_every);
        let query = text(&query);
        assert_same(&index, &query, limit)?;
        assert_same(&index, &query, usize::MAX)?;
    }

    /// Long queries over many near-copies: most terms can still change the top, and ties
    /// are many.
    #[test]
    fn long_queries_over_near_copies_rank_as_scoring_every_document(
        base in docs(12),
        copies in 5usize..30,
        query in prop::collection::vec(0usize..40, 10..40),
        limit in 1usize..12,
    ) {
        let docs: Docs = (0..copies).flat_map(|_| base.iter().cloned()).collect();
        let index = index_of(&docs, 7);
        assert_same(&index, &text(&query), limit)?;
    }

    /// Windows where the query's terms are common (read score by score) and windows where
    /// they are rare (visited by their marks), side by side in one index: every third
    /// window's documents all have them, the others' only one in `stride`.
    #[test]
    fn dense_and_sparse_windows_rank_as_scoring_every_document(
        docs in docs(400),
        stride in 2usize..40,
        remove_every in 0usize..5,
        query in prop::collection::vec(13usize..26, 1..8),
        limit in 1usize..25,
    ) {
        // Words 0..13 for every document; words 13..26, which queries are made of, only
        // for the documents chosen.
        let docs: Docs = docs
            .into_iter()
            .enumerate()
            .map(|(i, (name, description, argument))| {
                let chosen = (i / 64) % 3 == 0 || i % stride == 0;
                let pick = |words: Vec<usize>| -> Vec<usize> {
                    words.into_iter().map(|w| if chosen { w % 26 } else { w % 13 }).collect()
                };
                (pick(name), pick(description), pick(argument))
            })
            .collect();
        let index = index_of(&docs, remove_every);
        let query = text(&query);
        assert_same(&index, &query, limit)?;
        assert_same(&index, &query, usize::MAX)?;
    }

    /// The weights are BM25's IDF of the live documents containing each term.
    #[test]
    fn weights_follow_the_live_document_frequency(
        docs in docs(80),
        remove_every in 0usize..4,
        query in prop::collection::vec(0usize..40, 1..8),
    ) {
        let index = index_of(&docs, remove_every);
        let query = text(&query);
        let mut terms = Vec::new();
        index.query_terms(&query, index.len(), &mut terms);
        let weights: Vec<f32> = terms.iter().map(|t| t.weight).collect();
        prop_assert_eq!(weights, index.weights_by_count(&query));
    }
}
