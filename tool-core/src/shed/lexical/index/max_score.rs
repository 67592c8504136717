//! Scoring a query document at a time with MaxScore, over windows of document ids.
//!
//! The query's terms are sorted by their bound (the most each can add to a score), highest
//! first. Once `k` documents are in, the terms at the end of that order whose bounds add up
//! to less than the `k`-th best score are *non-essential*: a document that has only those
//! cannot rank, so their lists are no longer read through. Documents are taken a window of
//! ids at a time: the essential terms' postings in the window are added into a small dense
//! array (the cost of a posting is a multiply-add), then each document met that may still
//! rank is completed with the non-essential terms, looked up by galloping forward in their lists,
//! and dropped as soon as what it has plus what the rest could add falls short of the
//! `k`-th best. The threshold rises as documents are ranked, and between windows more terms
//! become non-essential.
//!
//! The documents met are found one of two ways. In a *dense* window (many postings for its
//! ids, as a long query's common terms give), every score is read, 64 at a time with vector
//! compares, and only those that may rank come out: the branch per document met, taken or
//! not at random, was a good part of a search. In a sparse window the adding loop marks each
//! document met, a bit each, and the marks are visited.
//!
//! Pruning starts only past [`PRUNE_AFTER`] postings in the query's lists together: below,
//! every term stays essential, which the measurements favoured at every size up to 100,000
//! tools.
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

/// A window is *dense* when its essential postings number at least one per this many
/// document ids: its documents met are then found by reading every score of the window
/// (64 at a time, without branches) instead of by marks set in the adding loop.
const DENSE_AFTER: usize = 8;

/// Terms become non-essential (their lists no longer read through) only when the query's
/// lists hold this many postings together. Below it every list is read: adding a posting
/// costs a multiply-add, and dense windows pick their candidates without a branch, where a
/// pruned term costs a galloping look-up per candidate. Reading everything was faster at
/// every size measured, 100,000 tools included (docs/PERFORMANCE.md, session 11); pruning is
/// kept for lists longer than any pool measured. Tests take a small value, so that both
/// ways are checked against exhaustive scoring.
const PRUNE_AFTER: usize = if cfg!(test) { 256 } else { 1 << 20 };

/// What a search works in, kept per thread so that a query allocates nothing but its result.
pub(super) struct Scratch {
    /// The query's terms (see [`LexicalIndex::query_terms`]).
    pub(super) terms: Vec<QueryTerm>,
    /// `remaining[j]`: the most terms `j..` can add together.
    remaining: Vec<f32>,
    /// Per term, the position in its list of the first posting not yet passed.
    cursors: Vec<usize>,
    /// Per essential term, how many of its postings from its cursor on are in the window.
    taken: Vec<usize>,
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
        taken: Vec::new(),
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
            taken,
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

        // A document met has a score above zero, which dense windows rely on.
        debug_assert!(terms.iter().all(|term| term.weight > 0.0));
        let mut top = TopK::new(k);
        let mut essential = terms.len();
        // Postings of the query's lists together: whether to prune at all.
        let postings: usize = terms
            .iter()
            .map(|term| self.lists[term.term as usize].postings.len())
            .sum();
        let prune = postings >= PRUNE_AFTER;
        for start in (0..self.docs.len()).step_by(WINDOW) {
            while prune && essential > 0 && remaining[essential - 1] * slack < top.threshold() {
                essential -= 1;
            }
            if essential == 0 {
                break;
            }
            // An essential term's cursor is at the window's start: its lists were read
            // through every earlier window. Each list's postings in the window are counted
            // first (a binary search), so that the adding loops need no test of the end.
            let end = (start + WINDOW).min(self.docs.len()) as DocId;
            taken.clear();
            taken.extend(terms[..essential].iter().zip(&cursors[..essential]).map(
                |(term, &at)| {
                    let list = &self.lists[term.term as usize].postings[at..];
                    list.partition_point(|p| p.doc < end)
                },
            ));
            let dense = taken.iter().sum::<usize>() * DENSE_AFTER >= end as usize - start;
            let lists = terms[..essential].iter().zip(&mut cursors[..essential]);
            for ((term, at), &taken) in lists.zip(taken.iter()) {
                let list = &self.lists[term.term as usize].postings[*at..];
                if dense {
                    accumulate(&list[..taken], term.weight, window);
                } else {
                    accumulate_marking(&list[..taken], term.weight, window, touched);
                }
                *at += taken;
            }
            let rest = &terms[essential..];
            let rest_cursors = &mut cursors[essential..];
            let rest_remaining = &remaining[essential..];
            // What the rest can add: most documents met fall short with it.
            let rest_bound = rest_remaining[0];
            let mut threshold = top.threshold();
            let words = (end as usize - start).div_ceil(64);
            for word in 0..words {
                let chunk: &mut [f32; 64] = (&mut window[word * 64..][..64])
                    .try_into()
                    .expect("a window is a whole number of words");
                let mut bits = if dense {
                    // Every document met has a score above zero (weights and impacts are
                    // positive): the ones that may rank are picked from the scores alone.
                    reaching(chunk, rest_bound, slack, threshold)
                } else {
                    std::mem::take(&mut touched[word])
                };
                while bits != 0 {
                    let slot = bits.trailing_zeros() as usize;
                    bits &= bits - 1;
                    let partial = chunk[slot];
                    if !dense {
                        chunk[slot] = 0.0;
                    }
                    // Zero: met only by removed documents' postings (dense windows leave
                    // those out in `reaching`).
                    if partial <= 0.0 || (partial + rest_bound) * slack < threshold {
                        continue;
                    }
                    let doc = (start + word * 64 + slot) as DocId;
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
                if dense {
                    *chunk = [0.0; 64];
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

/// Adds `weight × impact` of `postings` (all in the window) into the window's scores.
/// A function of its own so that the window is known not to alias the postings, and stays
/// in a register through the loop.
#[inline]
fn accumulate(postings: &[Posting], weight: f32, window: &mut [f32; WINDOW]) {
    for posting in postings {
        window[offset(posting.doc)] += weight * posting.impact;
    }
}

/// [`accumulate`], marking each document met: for windows where few are, which are then
/// visited by their marks rather than by reading every score.
#[inline]
fn accumulate_marking(
    postings: &[Posting],
    weight: f32,
    window: &mut [f32; WINDOW],
    touched: &mut Touched,
) {
    for posting in postings {
        let slot = offset(posting.doc);
        window[slot] += weight * posting.impact;
        touched[slot / 64] |= 1 << (slot % 64);
    }
}

/// The slots of `chunk` met by a term (a score above zero) whose score, with `rest_bound`
/// added, may reach `threshold` (the test the candidate loop makes), a bit each: four
/// scores a vector compare on x86-64, without a branch.
#[cfg(target_arch = "x86_64")]
#[inline]
fn reaching(chunk: &[f32; 64], rest_bound: f32, slack: f32, threshold: f32) -> u64 {
    use std::arch::x86_64::{
        _mm_add_ps, _mm_and_ps, _mm_cmpge_ps, _mm_cmpgt_ps, _mm_loadu_ps, _mm_movemask_ps,
        _mm_mul_ps, _mm_set1_ps, _mm_setzero_ps,
    };
    // SAFETY: SSE is part of every x86-64 processor (the target's baseline), and each load
    // reads four `f32`s of `chunk` (`chunks_exact(4)`), asking for no alignment.
    unsafe {
        let (rest_bound, slack) = (_mm_set1_ps(rest_bound), _mm_set1_ps(slack));
        let (threshold, zero) = (_mm_set1_ps(threshold), _mm_setzero_ps());
        let mut bits = 0;
        for (group, four) in chunk.chunks_exact(4).enumerate() {
            let partial = _mm_loadu_ps(four.as_ptr());
            let reach = _mm_mul_ps(_mm_add_ps(partial, rest_bound), slack);
            let may_rank = _mm_and_ps(_mm_cmpgt_ps(partial, zero), _mm_cmpge_ps(reach, threshold));
            bits |= (_mm_movemask_ps(may_rank) as u64) << (group * 4);
        }
        bits
    }
}

/// [`reaching`], one score at a time (other architectures; and the reference the vector
/// form is tested against).
#[cfg_attr(target_arch = "x86_64", allow(dead_code))]
#[inline]
fn reaching_one_by_one(chunk: &[f32; 64], rest_bound: f32, slack: f32, threshold: f32) -> u64 {
    let mut bits = 0;
    for (i, &partial) in chunk.iter().enumerate() {
        let may_rank = partial > 0.0 && (partial + rest_bound) * slack >= threshold;
        bits |= u64::from(may_rank) << i;
    }
    bits
}

#[cfg(not(target_arch = "x86_64"))]
use reaching_one_by_one as reaching;

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
    use super::{Posting, advance, reaching, reaching_one_by_one};

    #[test]
    fn the_vector_test_of_a_chunk_picks_what_the_scalar_one_does() {
        // Scores at zero (not met), just under, at and just over what reaches the
        // threshold, and large ones; thresholds from "none yet" (−∞) to past every score.
        let mut state = 0x9e37_79b9_u32;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 17;
            state ^= state << 5;
            state
        };
        for round in 0..2_000 {
            let mut chunk = [0.0f32; 64];
            for score in &mut chunk {
                *score = match next() % 5 {
                    0 => 0.0,
                    1 => 1.0,
                    2 => f32::from_bits(1.0f32.to_bits() - 1),
                    3 => f32::from_bits(1.0f32.to_bits() + 1),
                    _ => (next() % 1000) as f32 / 100.0,
                };
            }
            let rest_bound = [0.0, 0.5, 2.0][round % 3];
            let slack = 1.0 + 4.0 * 3.0 * f32::EPSILON;
            for threshold in [
                f32::NEG_INFINITY,
                0.0,
                1.5,
                (1.0 + rest_bound) * slack,
                100.0,
            ] {
                assert_eq!(
                    reaching(&chunk, rest_bound, slack, threshold),
                    reaching_one_by_one(&chunk, rest_bound, slack, threshold),
                    "round {round}, threshold {threshold}"
                );
            }
        }
    }

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
