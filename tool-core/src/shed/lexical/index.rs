//! [`LexicalIndex`]: an inverted index over tools' fields, ranked with BM25F.
//!
//! Postings are kept per term, sorted by document id, and updated in place when a tool is
//! added or removed, so a query never waits for a rebuild. Each posting carries its
//! *impact*, the saturated BM25F term frequency `tf' / (k1 + tf')`, computed when it is
//! added against the average field lengths of a snapshot; scoring a posting is then one
//! multiply-add. When the averages drift more than [`MAX_AVERAGE_DRIFT`] from the snapshot,
//! every impact is recomputed (rare once a session's tools are in: a drift of a tenth takes
//! a tenth more tools of unusual length). A query is scored term at a time
//! with MaxScore pruning: once the best `limit` scores cannot be reached by a document that
//! only has the remaining (common, low-weight) terms, those terms only adjust the scores of
//! documents already found, by lookup, instead of adding every document they occur in.

use std::cell::RefCell;
use std::cmp::Ordering;
use std::collections::HashMap;
use std::sync::Arc;

use super::analyzer::analyze;
use super::params::Bm25fParams;
use crate::Tool;
use crate::shed::tool_text::{FIELD_COUNT, Field, for_each_field_text};

type DocId = u32;
type TermId = u32;

/// One document in one term's list. Only what a query reads, so a list scans in 8 bytes a
/// posting; the counts behind the impact are kept with the document.
#[derive(Debug, Clone, Copy)]
struct Posting {
    doc: DocId,
    /// `tf' / (k1 + tf')`, in (0, 1): the share of the term's weight this document gets.
    impact: f32,
}

/// A document's occurrences of one term, by field (saturating: past 255 a count says
/// nothing more under BM25's saturation).
type FieldCounts = [u8; FIELD_COUNT];

/// An indexed tool.
#[derive(Debug)]
struct Doc {
    name: Arc<str>,
    /// Its distinct terms with their counts: to remove its postings without scanning the
    /// vocabulary, and to recompute their impacts.
    terms: Box<[(TermId, FieldCounts)]>,
}

/// A ranked tool.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct LexicalHit {
    pub(crate) name: Arc<str>,
    pub(crate) score: f32,
}

/// Once more than this many removed documents leave holes, and they outnumber the live
/// ones, document ids are renumbered so that the per-document arrays stay dense.
const COMPACT_AFTER: usize = 1024;

/// How far (relative) an average field length may move from the snapshot the impacts were
/// computed with before they are all recomputed.
const MAX_AVERAGE_DRIFT: f32 = 0.1;

/// The inverted index. Not synchronised: [`ToolDiscovery`](crate::ToolDiscovery) wraps it in
/// a lock.
#[derive(Debug)]
pub(crate) struct LexicalIndex {
    params: Bm25fParams,
    vocabulary: HashMap<Arc<str>, TermId>,
    /// Term text by id, to drop a term from the vocabulary when its last posting goes.
    term_text: Vec<Option<Arc<str>>>,
    free_terms: Vec<TermId>,
    postings: Vec<Vec<Posting>>,
    docs: Vec<Option<Doc>>,
    /// Field lengths (in terms) by document id; kept apart from `docs` so scoring reads a
    /// dense array.
    lens: Vec<[u16; FIELD_COUNT]>,
    by_name: HashMap<Arc<str>, DocId>,
    field_len_sum: [u64; FIELD_COUNT],
    /// The highest impact in each term's list (may be stale-high after removals, which
    /// keeps it a valid bound).
    max_impact: Vec<f32>,
    /// The normaliser the impacts were computed with.
    scorer: Scorer,
}

thread_local! {
    /// Score accumulator by document id, reused across queries; all zero between queries.
    static SCRATCH: RefCell<Vec<f32>> = const { RefCell::new(Vec::new()) };
}

impl Default for LexicalIndex {
    fn default() -> Self {
        Self::with_params(Bm25fParams::default())
    }
}

impl LexicalIndex {
    /// An empty index ranking with `params`.
    pub(crate) fn with_params(params: Bm25fParams) -> Self {
        Self {
            params,
            vocabulary: HashMap::new(),
            term_text: Vec::new(),
            free_terms: Vec::new(),
            postings: Vec::new(),
            docs: Vec::new(),
            lens: Vec::new(),
            by_name: HashMap::new(),
            field_len_sum: [0; FIELD_COUNT],
            max_impact: Vec::new(),
            scorer: Scorer::new(&params, &[0; FIELD_COUNT], 0),
        }
    }

    /// The number of indexed tools.
    pub(crate) fn len(&self) -> usize {
        self.by_name.len()
    }

    /// The number of distinct terms.
    pub(crate) fn vocabulary_len(&self) -> usize {
        self.vocabulary.len()
    }

    /// Indexes `tool`, replacing an earlier tool of the same name.
    pub(crate) fn insert(&mut self, tool: &Tool) {
        self.insert_fields(tool.name(), |visit| for_each_field_text(tool, visit));
    }

    /// Indexes the document `name`, whose text `fields` hands to its visitor field by field,
    /// replacing an earlier document of the same name. Tools are indexed this way, and any
    /// other text (a retriever's documents) can be.
    pub(crate) fn insert_fields(
        &mut self,
        name: &str,
        fields: impl FnOnce(&mut dyn FnMut(Field, &str)),
    ) {
        self.remove(name);
        let mut occurrences: Vec<(TermId, usize)> = Vec::new();
        let mut lens = [0u16; FIELD_COUNT];
        {
            let Self {
                vocabulary,
                term_text,
                free_terms,
                postings,
                max_impact,
                ..
            } = self;
            fields(&mut |field, text| {
                analyze(text, |term| {
                    let id = intern(
                        vocabulary, term_text, free_terms, postings, max_impact, term,
                    );
                    occurrences.push((id, field as usize));
                    lens[field as usize] = lens[field as usize].saturating_add(1);
                });
            });
        }
        occurrences.sort_unstable();
        let doc = DocId::try_from(self.docs.len()).expect("fewer than 2^32 tools indexed");
        for (sum, len) in self.field_len_sum.iter_mut().zip(lens) {
            *sum += u64::from(len);
        }
        let rescore = self.averages_drifted(self.by_name.len() + 1);
        let mut terms = Vec::new();
        for run in occurrences.chunk_by(|a, b| a.0 == b.0) {
            let mut tf = [0u8; FIELD_COUNT];
            for &(_, field) in run {
                tf[field] = tf[field].saturating_add(1);
            }
            let term = run[0].0;
            let impact = self.scorer.impact(&tf, &lens);
            // Ids only grow, so appending keeps every list sorted.
            self.postings[term as usize].push(Posting { doc, impact });
            let max = &mut self.max_impact[term as usize];
            *max = max.max(impact);
            terms.push((term, tf));
        }
        let name: Arc<str> = Arc::from(name);
        self.docs.push(Some(Doc {
            name: Arc::clone(&name),
            terms: terms.into_boxed_slice(),
        }));
        self.lens.push(lens);
        self.by_name.insert(name, doc);
        if rescore {
            self.rescore();
        }
    }

    /// Whether the average field lengths with `live` tools have moved too far from the
    /// snapshot the impacts were computed with.
    fn averages_drifted(&self, live: usize) -> bool {
        let current = Scorer::new(&self.params, &self.field_len_sum, live);
        current
            .average
            .iter()
            .zip(&self.scorer.average)
            .any(|(&now, &then)| (now - then).abs() > MAX_AVERAGE_DRIFT * then.max(f32::EPSILON))
    }

    /// Recomputes every impact against the current average field lengths.
    fn rescore(&mut self) {
        self.scorer = Scorer::new(&self.params, &self.field_len_sum, self.by_name.len());
        self.max_impact.fill(0.0);
        for (id, doc) in self.docs.iter().enumerate() {
            let Some(doc) = doc else { continue };
            let id = id as DocId;
            for &(term, tf) in &doc.terms {
                let impact = self.scorer.impact(&tf, &self.lens[id as usize]);
                let list = &mut self.postings[term as usize];
                if let Ok(at) = list.binary_search_by_key(&id, |p| p.doc) {
                    list[at].impact = impact;
                }
                let max = &mut self.max_impact[term as usize];
                *max = max.max(impact);
            }
        }
    }

    /// Removes the tool `name`; `false` when it was not indexed.
    pub(crate) fn remove(&mut self, name: &str) -> bool {
        let Some(id) = self.by_name.remove(name) else {
            return false;
        };
        let Some(doc) = self.docs[id as usize].take() else {
            return false;
        };
        for &(term, _) in &doc.terms {
            let list = &mut self.postings[term as usize];
            if let Ok(at) = list.binary_search_by_key(&id, |p| p.doc) {
                list.remove(at);
            }
            if list.is_empty() {
                *list = Vec::new();
                self.max_impact[term as usize] = 0.0;
                if let Some(text) = self.term_text[term as usize].take() {
                    self.vocabulary.remove(&text);
                }
                self.free_terms.push(term);
            }
        }
        let lens = std::mem::take(&mut self.lens[id as usize]);
        for (sum, len) in self.field_len_sum.iter_mut().zip(lens) {
            *sum -= u64::from(len);
        }
        let dead = self.docs.len() - self.by_name.len();
        if dead > COMPACT_AFTER && dead > self.by_name.len() {
            self.compact();
        }
        if self.averages_drifted(self.by_name.len()) {
            self.rescore();
        }
        true
    }

    /// Renumbers documents densely, in their order (so posting lists stay sorted).
    fn compact(&mut self) {
        let mut renumbered = vec![DocId::MAX; self.docs.len()];
        let mut docs = Vec::with_capacity(self.by_name.len());
        let mut lens = Vec::with_capacity(self.by_name.len());
        for (old, doc) in std::mem::take(&mut self.docs).into_iter().enumerate() {
            if let Some(doc) = doc {
                renumbered[old] = docs.len() as DocId;
                self.by_name
                    .insert(Arc::clone(&doc.name), docs.len() as DocId);
                docs.push(Some(doc));
                lens.push(self.lens[old]);
            }
        }
        for list in &mut self.postings {
            for posting in list {
                posting.doc = renumbered[posting.doc as usize];
            }
        }
        self.docs = docs;
        self.lens = lens;
    }

    /// The best `limit` tools for `query`, best first; equal scores in name order.
    pub(crate) fn search(&self, query: &str, limit: usize) -> Vec<LexicalHit> {
        let live = self.by_name.len();
        if live == 0 || limit == 0 {
            return Vec::new();
        }
        let terms = self.query_terms(query, live);
        if terms.is_empty() {
            return Vec::new();
        }
        SCRATCH.with(|scratch| {
            let mut scores = scratch.borrow_mut();
            if scores.len() < self.docs.len() {
                scores.resize(self.docs.len(), 0.0);
            }
            let candidates = self.accumulate(&terms, limit, &mut scores);
            // Only documents scoring at least the k-th best can rank; finding that score
            // compares floats, so names are compared among those few alone.
            let cutoff = if candidates.len() > limit {
                let mut buf = Vec::with_capacity(candidates.len());
                kth_best(&candidates, &scores, limit, &mut buf)
            } else {
                f32::NEG_INFINITY
            };
            let mut hits: Vec<(f32, DocId)> = candidates
                .iter()
                .map(|&d| (scores[d as usize], d))
                .filter(|&(score, _)| score >= cutoff)
                .collect();
            for &d in &candidates {
                scores[d as usize] = 0.0;
            }
            drop(scores);
            self.top(hits.as_mut_slice(), limit)
        })
    }

    /// The query's known terms with their weights and bounds (the most they can add to a
    /// score), by bound, highest first.
    ///
    /// A term weighs its IDF however often the query says it: in a request that asks for
    /// several things, the subject of one is repeated ("London … in London … London's") and
    /// would otherwise crowd out the tools for the others.
    fn query_terms(&self, query: &str, live: usize) -> Vec<QueryTerm> {
        let mut ids: Vec<TermId> = Vec::new();
        analyze(query, |term| {
            if let Some(&id) = self.vocabulary.get(term) {
                ids.push(id);
            }
        });
        ids.sort_unstable();
        let n = live as f32;
        ids.dedup();
        let mut terms: Vec<QueryTerm> = ids
            .into_iter()
            .map(|term| {
                let df = self.postings[term as usize].len() as f32;
                let weight = (1.0 + (n - df + 0.5) / (df + 0.5)).ln();
                QueryTerm {
                    term,
                    weight,
                    bound: weight * self.max_impact[term as usize],
                }
            })
            .collect();
        terms.sort_by(|a, b| b.bound.total_cmp(&a.bound).then(a.term.cmp(&b.term)));
        terms
    }

    /// Adds the query terms' contributions into `scores`, returning the documents scored.
    fn accumulate(&self, terms: &[QueryTerm], limit: usize, scores: &mut [f32]) -> Vec<DocId> {
        // remaining[i]: the most that terms i.. can add to a document's score.
        let mut remaining = vec![0.0f32; terms.len() + 1];
        for i in (0..terms.len()).rev() {
            remaining[i] = remaining[i + 1] + terms[i].bound;
        }
        let mut candidates: Vec<DocId> = Vec::new();
        let mut threshold_buf: Vec<f32> = Vec::new();
        // Scores only grow, so the best score and a k-th best found earlier stay lower
        // bounds: the k-th best is only recomputed when it could allow pruning.
        let mut best = 0.0f32;
        let mut kth = 0.0f32;
        let mut next = 0;
        while next < terms.len() {
            if candidates.len() >= limit && best > remaining[next] {
                if kth <= remaining[next] {
                    kth = kth_best(&candidates, scores, limit, &mut threshold_buf);
                }
                if kth > remaining[next] {
                    break;
                }
            }
            let QueryTerm { term, weight, .. } = terms[next];
            for posting in &self.postings[term as usize] {
                let slot = &mut scores[posting.doc as usize];
                if *slot == 0.0 {
                    candidates.push(posting.doc);
                }
                *slot += weight * posting.impact;
                best = best.max(*slot);
            }
            next += 1;
        }
        // The rest cannot bring in a new document: they only complete the candidates' scores.
        for &QueryTerm { term, weight, .. } in &terms[next..] {
            let list = &self.postings[term as usize];
            let lookups = candidates.len() * (usize::BITS - list.len().leading_zeros()) as usize;
            if lookups < list.len() {
                for &doc in &candidates {
                    if let Ok(at) = list.binary_search_by_key(&doc, |p| p.doc) {
                        scores[doc as usize] += weight * list[at].impact;
                    }
                }
            } else {
                for posting in list {
                    let slot = &mut scores[posting.doc as usize];
                    if *slot != 0.0 {
                        *slot += weight * posting.impact;
                    }
                }
            }
        }
        candidates
    }

    /// The best `limit` of `hits`, sorted by score, then name.
    fn top(&self, hits: &mut [(f32, DocId)], limit: usize) -> Vec<LexicalHit> {
        let name = |doc: DocId| -> &Arc<str> {
            &self.docs[doc as usize]
                .as_ref()
                .expect("scored documents are live")
                .name
        };
        let order = |a: &(f32, DocId), b: &(f32, DocId)| -> Ordering {
            b.0.total_cmp(&a.0).then_with(|| name(a.1).cmp(name(b.1)))
        };
        let hits = if hits.len() > limit {
            hits.select_nth_unstable_by(limit - 1, order);
            &mut hits[..limit]
        } else {
            hits
        };
        hits.sort_unstable_by(order);
        hits.iter()
            .map(|&(score, doc)| LexicalHit {
                name: Arc::clone(name(doc)),
                score,
            })
            .collect()
    }

    /// An estimate of the heap the index holds, in bytes.
    pub(crate) fn heap_bytes(&self) -> usize {
        use std::mem::size_of;
        let postings: usize = self
            .postings
            .iter()
            .map(|l| l.capacity() * size_of::<Posting>() + size_of::<Vec<Posting>>())
            .sum();
        let terms: usize = self
            .vocabulary
            .keys()
            .map(|t| t.len() + 2 * size_of::<usize>() + size_of::<(Arc<str>, TermId)>() + 8)
            .sum();
        let docs: usize = self
            .docs
            .iter()
            .flatten()
            .map(|d| d.terms.len() * size_of::<(TermId, FieldCounts)>() + d.name.len() + 16)
            .sum::<usize>()
            + self.docs.capacity() * size_of::<Option<Doc>>()
            + self.lens.capacity() * size_of::<[u16; FIELD_COUNT]>()
            + self.by_name.capacity() * (size_of::<(Arc<str>, DocId)>() + 1);
        postings
            + terms
            + docs
            + self.term_text.capacity() * size_of::<Option<Arc<str>>>()
            + self.max_impact.capacity() * size_of::<f32>()
    }
}

/// The id of `term`, adding it to the vocabulary when new.
fn intern(
    vocabulary: &mut HashMap<Arc<str>, TermId>,
    term_text: &mut Vec<Option<Arc<str>>>,
    free_terms: &mut Vec<TermId>,
    postings: &mut Vec<Vec<Posting>>,
    max_impact: &mut Vec<f32>,
    term: &str,
) -> TermId {
    if let Some(&id) = vocabulary.get(term) {
        return id;
    }
    let text: Arc<str> = Arc::from(term);
    let id = match free_terms.pop() {
        Some(id) => {
            term_text[id as usize] = Some(Arc::clone(&text));
            id
        }
        None => {
            term_text.push(Some(Arc::clone(&text)));
            postings.push(Vec::new());
            max_impact.push(0.0);
            TermId::try_from(postings.len() - 1).expect("fewer than 2^32 terms")
        }
    };
    vocabulary.insert(text, id);
    id
}

/// The `k`-th best score among `candidates` (k ≥ 1, at most their number).
fn kth_best(candidates: &[DocId], scores: &[f32], k: usize, buf: &mut Vec<f32>) -> f32 {
    buf.clear();
    buf.extend(candidates.iter().map(|&d| scores[d as usize]));
    let (_, kth, _) = buf.select_nth_unstable_by(k - 1, |a, b| b.total_cmp(a));
    *kth
}

/// One query term: its weight (IDF) and the most it can add to a score.
#[derive(Debug, Clone, Copy)]
struct QueryTerm {
    term: TermId,
    weight: f32,
    bound: f32,
}

/// BM25F's per-document part, for given average field lengths.
#[derive(Debug, Clone)]
struct Scorer {
    k1: f32,
    weight: [f32; FIELD_COUNT],
    /// The average length of each field.
    average: [f32; FIELD_COUNT],
    /// Per field: `b / average length`, and `1 - b`: the length normaliser is
    /// `1 - b + len * b / avg`.
    b_over_avg: [f32; FIELD_COUNT],
    one_minus_b: [f32; FIELD_COUNT],
}

impl Scorer {
    fn new(params: &Bm25fParams, field_len_sum: &[u64; FIELD_COUNT], live: usize) -> Self {
        let mut average = [0.0; FIELD_COUNT];
        let mut b_over_avg = [0.0; FIELD_COUNT];
        let mut one_minus_b = [1.0; FIELD_COUNT];
        for f in 0..FIELD_COUNT {
            let avg = field_len_sum[f] as f32 / live.max(1) as f32;
            average[f] = avg;
            if avg > 0.0 {
                b_over_avg[f] = params.b[f] / avg;
                one_minus_b[f] = 1.0 - params.b[f];
            }
        }
        Self {
            k1: params.k1,
            weight: params.weight,
            average,
            b_over_avg,
            one_minus_b,
        }
    }

    /// `tf' / (k1 + tf')`, where `tf'` is the field-weighted, length-normalised term
    /// frequency of a document with field lengths `lens`.
    fn impact(&self, tf: &[u8; FIELD_COUNT], lens: &[u16; FIELD_COUNT]) -> f32 {
        let mut weighted = 0.0;
        for (f, (&count, &len)) in tf.iter().zip(lens).enumerate() {
            if count != 0 {
                let norm = self.one_minus_b[f] + f32::from(len) * self.b_over_avg[f];
                weighted += self.weight[f] * f32::from(count) / norm;
            }
        }
        weighted / (self.k1 + weighted)
    }
}
