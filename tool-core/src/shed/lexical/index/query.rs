//! A query as the index scores it: its known terms, each with its weight and bound, in the
//! order scores are added.

use super::{LexicalIndex, TermId, analyze};

/// One query term: its weight (IDF) and the most it can add to a score.
#[derive(Debug, Clone, Copy)]
pub(super) struct QueryTerm {
    pub(super) term: TermId,
    pub(super) weight: f32,
    /// `weight × ` the highest impact in the term's list.
    pub(super) bound: f32,
}

impl<E> LexicalIndex<E> {
    /// Fills `terms` with the query's known terms, their weights and bounds (the most they
    /// can add to a score), by bound, highest first (equal bounds by term id): the order
    /// MaxScore needs, and the order a document's score is summed in.
    ///
    /// A term weighs its IDF however often the query says it: in a request that asks for
    /// several things, the subject of one is repeated ("London … in London … London's") and
    /// would otherwise crowd out the tools for the others.
    pub(super) fn query_terms(&self, query: &str, live: usize, terms: &mut Vec<QueryTerm>) {
        terms.clear();
        analyze(query, |term| {
            if let Some(&term) = self.vocabulary.get(term.as_bytes()) {
                terms.push(QueryTerm {
                    term,
                    weight: 0.0,
                    bound: 0.0,
                });
            }
        });
        let n = live as f32;
        for term in terms.iter_mut() {
            let list = &self.lists[term.term as usize];
            let df = list.live() as f32;
            term.weight = (1.0 + (n - df + 0.5) / (df + 0.5)).ln();
            term.bound = term.weight * list.max_impact;
        }
        // One sort: a term said twice has the same bound both times, so its copies end up
        // side by side and go in one pass.
        terms.sort_unstable_by(|a, b| b.bound.total_cmp(&a.bound).then(a.term.cmp(&b.term)));
        terms.dedup_by_key(|t| t.term);
    }
}
