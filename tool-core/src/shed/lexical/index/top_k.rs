//! [`TopK`]: the best `k` documents scored so far, and the score a document must reach to
//! join them.

use std::cmp::Ordering;
use std::collections::BinaryHeap;
use std::sync::Arc;

use super::{Doc, LexicalHit};

/// A document among the best so far.
struct Ranked<'a, E> {
    score: f32,
    doc: &'a Doc<E>,
}

/// Worse is greater, so that the heap's top is the document to drop first: the lowest
/// score, and of equal scores the last name.
impl<E> Ord for Ranked<'_, E> {
    fn cmp(&self, other: &Self) -> Ordering {
        other
            .score
            .total_cmp(&self.score)
            .then_with(|| self.doc.name.cmp(&other.doc.name))
    }
}

impl<E> PartialOrd for Ranked<'_, E> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl<E> PartialEq for Ranked<'_, E> {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl<E> Eq for Ranked<'_, E> {}

/// The best `k` documents offered, by score, then name.
pub(super) struct TopK<'a, E> {
    k: usize,
    heap: BinaryHeap<Ranked<'a, E>>,
    /// The `k`-th best score once `k` documents are in, −∞ before.
    threshold: f32,
}

impl<'a, E> TopK<'a, E> {
    /// An empty top `k` (`k` ≥ 1).
    pub(super) fn new(k: usize) -> Self {
        debug_assert!(k >= 1);
        Self {
            k,
            // `k` may be "all of them": the heap grows as needed.
            heap: BinaryHeap::with_capacity(k.min(64)),
            threshold: f32::NEG_INFINITY,
        }
    }

    /// The score a document must reach to join: one scoring less cannot, one scoring the
    /// same may (names break the tie). −∞ until `k` documents are in.
    pub(super) fn threshold(&self) -> f32 {
        self.threshold
    }

    /// Offers a document; it is only read when it may join.
    #[inline]
    pub(super) fn offer(&mut self, score: f32, doc: impl FnOnce() -> &'a Doc<E>) {
        // Most offers fall short: refused here, inline.
        if score < self.threshold {
            return;
        }
        self.insert(score, doc());
    }

    /// Adds a document scoring at least the threshold, unless it ties the `k`-th best and
    /// comes after it by name.
    fn insert(&mut self, score: f32, doc: &'a Doc<E>) {
        if self.heap.len() < self.k {
            self.heap.push(Ranked { score, doc });
            if self.heap.len() == self.k {
                self.threshold = self.worst_score();
            }
            return;
        }
        let candidate = Ranked { score, doc };
        if let Some(mut worst) = self.heap.peek_mut()
            && candidate < *worst
        {
            *worst = candidate;
        }
        self.threshold = self.worst_score();
    }

    fn worst_score(&self) -> f32 {
        self.heap
            .peek()
            .map_or(f32::NEG_INFINITY, |worst| worst.score)
    }

    /// The documents, best first, with their entries.
    pub(super) fn into_hits(self) -> Vec<LexicalHit<E>>
    where
        E: Clone,
    {
        // Ascending is best first, worse being greater.
        self.heap
            .into_sorted_vec()
            .into_iter()
            .map(|ranked| LexicalHit {
                name: Arc::clone(&ranked.doc.name),
                score: ranked.score,
                entry: ranked.doc.entry.clone(),
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::TopK;
    use crate::shed::lexical::index::Doc;

    /// A document without terms, its entry its position.
    fn doc(name: &str, entry: usize) -> Doc<usize> {
        Doc {
            name: Arc::from(name),
            terms: Box::new([]),
            entry,
        }
    }

    #[test]
    fn keeps_the_best_by_score_then_name_with_their_entries() {
        let docs: Vec<Doc<usize>> = ["d", "c", "b", "a", "e"]
            .into_iter()
            .enumerate()
            .map(|(i, name)| doc(name, i))
            .collect();
        let mut top = TopK::new(3);
        for (doc, score) in docs.iter().zip([1.0, 2.0, 2.0, 2.0, 3.0]) {
            top.offer(score, || doc);
        }
        assert_eq!(top.threshold(), 2.0);
        let hits: Vec<(String, f32, usize)> = top
            .into_hits()
            .into_iter()
            .map(|h| (h.name.to_string(), h.score, h.entry))
            .collect();
        assert_eq!(
            hits,
            [
                ("e".into(), 3.0, 4),
                ("a".into(), 2.0, 3),
                ("b".into(), 2.0, 2)
            ]
        );
    }

    proptest::proptest! {
        /// Whatever the order of the offers, the top `k` is the first `k` of all of them
        /// sorted by score, then name (scores from a few values, so that ties are many).
        #[test]
        fn keeps_what_sorting_everything_keeps(
            scores in proptest::collection::vec(0u8..4, 1..60),
            k in 1usize..12,
        ) {
            // Distinct names in an order unrelated to the offers' (37 is prime to 61).
            let docs: Vec<Doc<usize>> = (0..scores.len())
                .map(|i| doc(&format!("t{:02}", (i * 37) % 61), i))
                .collect();
            let mut top = TopK::new(k);
            for (doc, &score) in docs.iter().zip(&scores) {
                top.offer(f32::from(score), || doc);
            }
            let found: Vec<(String, f32)> = top
                .into_hits()
                .into_iter()
                .map(|h| (h.name.to_string(), h.score))
                .collect();
            let mut all: Vec<(String, f32)> = docs
                .iter()
                .map(|d| (d.name.to_string(), f32::from(scores[d.entry])))
                .collect();
            all.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
            all.truncate(k);
            proptest::prop_assert_eq!(found, all);
        }
    }

    #[test]
    fn threshold_is_unbounded_until_full() {
        let x = doc("x", 0);
        let mut top = TopK::new(2);
        top.offer(5.0, || &x);
        assert_eq!(top.threshold(), f32::NEG_INFINITY);
        top.offer(1.0, || &x);
        assert_eq!(top.threshold(), 1.0);
    }
}
