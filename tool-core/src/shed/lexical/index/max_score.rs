//! Scoring a query document at a time with MaxScore, over windows of document ids.
//!
//! The query's terms are sorted by their bound (the most each can add to a score), highest
//! first. Once `k` documents are in, the terms at the end of that order whose bounds add up
//! to less than the `k`-th best score are *non-essential*: a document that has only those
//! cannot rank, so their lists are no longer read through. Documents are taken a window of
//! ids at a time: the essential terms' postings in the window are added into a small dense
//! array (the cost of a posting is a multiply-add and a bit set), then each document met is
//! completed with the non-essential terms, looked up by galloping forward in their lists,
//! and dropped as soon as what it has plus what the rest could add falls short of the
//! `k`-th best. The threshold rises as documents are ranked, and between windows more terms
//! become non-essential.
//!
//! A document's score is added in the query terms' order whichever way it is found
//! (essential terms first, then the others, both in that order), so it is exactly the score
//! of an exhaustive evaluation.

use std::cell::RefCell;

use super::query::QueryTerm;
use super::top_k::TopK;
use super::{DocId, LexicalIndex, Posting};

/// Document ids a window spans (a power of two). Its scores (16 KB) stay in the L1 cache.
/// Smaller windows raise the threshold more often, and so read a little less: at 10,000
/// tools 1,024 and 2,048 ran fewest instructions (4,096 ran 6% more). But every window
/// takes up each essential list where the last one left it, a jump in memory and a loop
/// begun again, and those cost more than the postings saved: 4,096 took about a third less
/// time than 1,024 and a sixth less than 2,048 (medians over the bench's queries, caches
/// warm). Tests take small windows, so that small indexes span several.
const WINDOW: usize = if cfg!(test) { 64 } else { 4096 };

/// The window's documents an essential term met, a bit each.
type Touched = [u64; WINDOW / 64];

/// What a search works in, kept per thread so that a query allocates nothing but its result.
pub(super) struct Scratch {
    /// The query's terms (see [`LexicalIndex::query_terms`]).
    pub(super) terms: Vec<QueryTerm>,
    /// `remaining[j]`: the most terms `j..` can add together.
    remaining: Vec<f32>,
    /// Per term, the position in its list of the first posting not yet passed.
    cursors: Vec<usize>,
    /// The window's partial scores by offset; all zero between windows.
    window: Box<[f32; WINDOW]>,
    /// All zero between windows.
    touched: Touched,
}

thread_local! {
    static SCRATCH: RefCell<Scratch> = RefCell::new(Scratch {
        terms: Vec::new(),
        remaining: Vec::new(),
        cursors: Vec::new(),
        window: Box::new([0.0; WINDOW]),
        touched: [0; WINDOW / 64],
    });
}

/// Runs `search` with this thread's scratch space.
pub(super) fn with_scratch<R>(search: impl FnOnce(&mut Scratch) -> R) -> R {
    SCRATCH.with(|scratch| search(&mut scratch.borrow_mut()))
}

/// The offset of `doc` in its window. Windows start at multiples of [`WINDOW`], so this is
/// `doc - start`; a mask, so that indexing the window needs no bounds check.
#[inline]
fn offset(doc: DocId) -> usize {
    doc as usize & (WINDOW - 1)
}

impl<E> LexicalIndex<E> {
    /// The best `k` documents for the terms in `scratch` (`k` ≥ 1).
    pub(super) fn max_score<'a>(&'a self, scratch: &mut Scratch, k: usize) -> TopK<'a, E> {
        let Scratch {
            terms,
            remaining,
            cursors,
            window,
            touched,
        } = scratch;
        let terms = terms.as_slice();
        remaining.clear();
        remaining.resize(terms.len() + 1, 0.0);
        for j in (0..terms.len()).rev() {
            remaining[j] = remaining[j + 1] + terms[j].bound;
        }
        // A score and a bound are sums of the same products in different groupings, so they
        // may round apart: a bound is trusted only with this much to spare.
        let slack = 1.0 + 4.0 * (terms.len() as f32 + 2.0) * f32::EPSILON;
        cursors.clear();
        cursors.resize(terms.len(), 0);

        let mut top = TopK::new(k);
        let mut essential = terms.len();
        for start in (0..self.docs.len()).step_by(WINDOW) {
            while essential > 0 && remaining[essential - 1] * slack < top.threshold() {
                essential -= 1;
            }
            if essential == 0 {
                break;
            }
            // An essential term's cursor is at the window's start: its lists were read
            // through every earlier window.
            let end = (start + WINDOW).min(self.docs.len()) as DocId;
            for (term, at) in terms[..essential].iter().zip(&mut cursors[..essential]) {
                let list = &self.lists[term.term as usize].postings;
                *at += accumulate(&list[*at..], end, term.weight, window, touched);
            }
            let rest = &terms[essential..];
            let rest_cursors = &mut cursors[essential..];
            let rest_remaining = &remaining[essential..];
            // What the rest can add: most documents met fall short with it.
            let rest_bound = rest_remaining[0];
            let mut threshold = top.threshold();
            for (word, bits) in touched.iter_mut().enumerate() {
                let mut bits = std::mem::take(bits);
                while bits != 0 {
                    let slot = offset((word * 64) as DocId + bits.trailing_zeros());
                    bits &= bits - 1;
                    let partial = std::mem::take(&mut window[slot]);
                    if (partial + rest_bound) * slack < threshold {
                        continue;
                    }
                    let doc = (start + slot) as DocId;
                    let bounds = Bounds {
                        remaining: rest_remaining,
                        slack,
                        threshold,
                    };
                    if let Some(score) = self.complete(doc, partial, rest, rest_cursors, bounds) {
                        top.offer(score, || self.doc(doc));
                        threshold = top.threshold();
                    }
                }
            }
        }
        top
    }

    /// The score of `doc`, `partial` being what the essential terms gave it, completed with
    /// the non-essential terms `rest`; `None` as soon as it cannot reach the threshold. The
    /// caller has checked that `partial` and all of `rest` could.
    #[inline]
    fn complete(
        &self,
        doc: DocId,
        mut score: f32,
        rest: &[QueryTerm],
        cursors: &mut [usize],
        bounds: Bounds<'_>,
    ) -> Option<f32> {
        // `remaining[j + 1]`: what the terms after `rest[j]` can add.
        let after = bounds.remaining.iter().skip(1);
        for ((term, at), &bound) in rest.iter().zip(cursors).zip(after) {
            let list = &self.lists[term.term as usize].postings;
            *at = advance(list, *at, doc);
            if let Some(posting) = list.get(*at)
                && posting.doc == doc
            {
                score += term.weight * posting.impact;
            }
            if (score + bound) * bounds.slack < bounds.threshold {
                return None;
            }
        }
        Some(score)
    }
}

/// Adds `weight × impact` of the postings before `end` (the window's end) into the window's
/// scores, marking their documents; returns how many it took. A function of its own so that
/// the window and its marks are known apart (its arguments do not alias), and stay in
/// registers through the loop.
#[inline]
fn accumulate(
    postings: &[Posting],
    end: DocId,
    weight: f32,
    window: &mut [f32; WINDOW],
    touched: &mut Touched,
) -> usize {
    let mut taken = 0;
    for posting in postings {
        if posting.doc >= end {
            break;
        }
        let slot = offset(posting.doc);
        window[slot] += weight * posting.impact;
        touched[slot / 64] |= 1 << (slot % 64);
        taken += 1;
    }
    taken
}

/// What a document must be able to reach to be worth completing.
#[derive(Clone, Copy)]
struct Bounds<'a> {
    /// The most the non-essential terms can add, from each one on (and 0 after the last).
    remaining: &'a [f32],
    slack: f32,
    threshold: f32,
}

/// The position of the first posting of `list` at or after `doc`, from `at` on (the postings
/// before `at` are all before `doc`): steps doubling forward, then a binary search over the
/// last step. Documents are taken in order, so each list is passed once whatever the jumps.
fn advance(list: &[Posting], mut at: usize, doc: DocId) -> usize {
    let mut step = 1;
    while let Some(posting) = list.get(at)
        && posting.doc < doc
    {
        let probe = at + step;
        match list.get(probe) {
            Some(posting) if posting.doc < doc => {
                at = probe + 1;
                step *= 2;
            }
            _ => {
                let end = (probe + 1).min(list.len());
                return at + 1 + list[at + 1..end].partition_point(|p| p.doc < doc);
            }
        }
    }
    at
}

#[cfg(test)]
mod tests {
    use super::{Posting, advance};

    #[test]
    fn advance_finds_the_first_posting_at_or_after_a_document() {
        let list: Vec<Posting> = [1, 3, 4, 9, 10, 11, 20, 35, 36, 50]
            .into_iter()
            .map(|doc| Posting { doc, impact: 0.5 })
            .collect();
        for from in 0..list.len() {
            for doc in 0..60 {
                if list[..from].iter().any(|p| p.doc >= doc) {
                    continue;
                }
                let expected = list.iter().position(|p| p.doc >= doc).unwrap_or(list.len());
                assert_eq!(
                    advance(&list, from, doc),
                    expected,
                    "from {from}, doc {doc}"
                );
            }
        }
    }
}
