//! [`TopK`]: the best `k` documents scored so far, and the score a document must reach to
//! join them.

use std::cmp::Ordering;
use std::collections::BinaryHeap;
use std::sync::Arc;

use super::LexicalHit;

/// A document among the best so far.
struct Ranked<'a> {
    score: f32,
    name: &'a Arc<str>,
}

/// Worse is greater, so that the heap's top is the document to drop first: the lowest
/// score, and of equal scores the last name.
impl Ord for Ranked<'_> {
    fn cmp(&self, other: &Self) -> Ordering {
        other
            .score
            .total_cmp(&self.score)
            .then_with(|| self.name.cmp(other.name))
    }
}

impl PartialOrd for Ranked<'_> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for Ranked<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Ranked<'_> {}

/// The best `k` documents offered, by score, then name.
pub(super) struct TopK<'a> {
    k: usize,
    heap: BinaryHeap<Ranked<'a>>,
    /// The `k`-th best score once `k` documents are in, −∞ before.
    threshold: f32,
}

impl<'a> TopK<'a> {
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

    /// Offers a document; its name is only read when it may join.
    #[inline]
    pub(super) fn offer(&mut self, score: f32, name: impl FnOnce() -> &'a Arc<str>) {
        // Most offers fall short: refused here, inline.
        if score < self.threshold {
            return;
        }
        self.insert(score, name());
    }

    /// Adds a document scoring at least the threshold, unless it ties the `k`-th best and
    /// comes after it by name.
    fn insert(&mut self, score: f32, name: &'a Arc<str>) {
        if self.heap.len() < self.k {
            self.heap.push(Ranked { score, name });
            if self.heap.len() == self.k {
                self.threshold = self.worst_score();
            }
            return;
        }
        let candidate = Ranked { score, name };
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

    /// The documents, best first.
    pub(super) fn into_hits(self) -> Vec<LexicalHit> {
        // Ascending is best first, worse being greater.
        self.heap
            .into_sorted_vec()
            .into_iter()
            .map(|ranked| LexicalHit {
                name: Arc::clone(ranked.name),
                score: ranked.score,
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::TopK;

    #[test]
    fn keeps_the_best_by_score_then_name() {
        let names: Vec<Arc<str>> = ["d", "c", "b", "a", "e"].map(Arc::from).to_vec();
        let mut top = TopK::new(3);
        for (name, score) in names.iter().zip([1.0, 2.0, 2.0, 2.0, 3.0]) {
            top.offer(score, || name);
        }
        assert_eq!(top.threshold(), 2.0);
        let hits: Vec<(String, f32)> = top
            .into_hits()
            .into_iter()
            .map(|h| (h.name.to_string(), h.score))
            .collect();
        assert_eq!(
            hits,
            [("e".into(), 3.0), ("a".into(), 2.0), ("b".into(), 2.0)]
        );
    }

    #[test]
    fn threshold_is_unbounded_until_full() {
        let name: Arc<str> = Arc::from("x");
        let mut top = TopK::new(2);
        top.offer(5.0, || &name);
        assert_eq!(top.threshold(), f32::NEG_INFINITY);
        top.offer(1.0, || &name);
        assert_eq!(top.threshold(), 1.0);
    }
}
