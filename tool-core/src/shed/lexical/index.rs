//! [`LexicalIndex`]: an inverted index over tools' fields, ranked with BM25F.
//!
//! Postings are kept per term, sorted by document id, and updated in place when a tool is
//! added or removed, so a query never waits for a rebuild. Each posting carries its
//! *impact*, the saturated BM25F term frequency `tf' / (k1 + tf')`, computed when it is
//! added against the average field lengths of a snapshot; scoring a posting is then one
//! multiply-add. When the averages drift more than [`MAX_AVERAGE_DRIFT`] from the snapshot,
//! every impact is recomputed (rare once a session's tools are in: a drift of a tenth takes
//! a tenth more tools of unusual length). A query is scored a window of documents at a time
//! ([`max_score`]), every list of its terms read through; only when those lists are very
//! long (more postings than any pool measured) does MaxScore pruning start: once the best
//! `limit` scores found so far cannot be reached by a document that only has the query's
//! common, low-weight terms, those terms' lists are no longer read through, only looked into
//! for the documents that can still rank.

use std::collections::HashMap;
use std::sync::Arc;

use super::analyzer::analyze;
use super::params::Bm25fParams;
use super::small_str::SmallStr;
use crate::Tool;
use crate::shed::tool_text::{FIELD_COUNT, Field, for_each_field_text};
use max_score::with_scratch;

#[cfg(test)]
mod exhaustive;
mod max_score;
mod query;
mod top_k;

type DocId = u32;
type TermId = u32;

/// Terms and names are short and hashed on every query and insertion: foldhash, not SipHash.
type Hasher = foldhash::fast::RandomState;

/// One document in one term's list. Only what a query reads, so a list scans in 8 bytes a
/// posting; the counts behind the impact are kept with the document.
#[derive(Debug, Clone, Copy)]
struct Posting {
    doc: DocId,
    /// `tf' / (k1 + tf')`, in (0, 1): the share of the term's weight this document gets.
    impact: f32,
}

/// A term's postings, sorted by document id, with the highest impact among them (which
/// may be stale-high after removals, and so stays a valid bound). Kept together: a query
/// reads both, and each is a cache miss of its own when kept apart.
///
/// A removed document's posting stays in the list with an impact of zero (it adds nothing
/// to any score, and a query skips a document met with nothing) until such postings are
/// half the list: then they all go in one pass. Taking each out at once shifted the rest of
/// the list, and removing a large catalogue oldest first was quadratic.
#[derive(Debug, Default)]
struct TermList {
    postings: Vec<Posting>,
    max_impact: f32,
    /// How many of the postings are of removed documents.
    removed: u32,
}

impl TermList {
    /// The number of live documents with the term.
    fn live(&self) -> usize {
        self.postings.len() - self.removed as usize
    }
}

/// A document's occurrences of one term, by field, as kept with the document: a count up to
/// 254 as it is, and [`MANY`] for 255 or more, whose exact counts the index keeps apart
/// (`LexicalIndex::many_counts`). Counts that large are rare (a long document's common words),
/// so every other term costs one byte a field (`u16` counts would cost every tool 4 bytes more
/// a term), and a long document still tells 300 occurrences from 1,000.
type FieldCounts = [u8; FIELD_COUNT];

/// The exact occurrences of one term in a document, by field.
type ExactCounts = [u32; FIELD_COUNT];

/// A [`FieldCounts`] entry saying that the exact counts are kept apart.
const MANY: u8 = u8::MAX;

/// `exact` as kept with the document, and whether the exact counts must be kept apart.
fn narrow(exact: &ExactCounts) -> (FieldCounts, bool) {
    let mut kept = [0; FIELD_COUNT];
    for (kept, &count) in kept.iter_mut().zip(exact) {
        *kept = u8::try_from(count).unwrap_or(MANY);
    }
    (kept, kept.contains(&MANY))
}

/// The exact counts of `term` in `doc`, kept as `kept` with the document.
fn exact_counts(
    many_counts: &HashMap<(DocId, TermId), ExactCounts, Hasher>,
    doc: DocId,
    term: TermId,
    kept: &FieldCounts,
) -> ExactCounts {
    if kept.contains(&MANY)
        && let Some(exact) = many_counts.get(&(doc, term))
    {
        return *exact;
    }
    kept.map(u32::from)
}

/// An indexed tool.
#[derive(Debug)]
struct Doc<E> {
    name: Arc<str>,
    /// Its distinct terms with their counts: to remove its postings without scanning the
    /// vocabulary, and to recompute their impacts.
    terms: Box<[(TermId, FieldCounts)]>,
    /// What the owner of the index keeps with the document, handed back with each hit: a
    /// ranked document is met here anyway, where a look-up by name after the search would
    /// read another table.
    entry: E,
}

/// A ranked tool, with the entry it was indexed with.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct LexicalHit<E = ()> {
    pub(crate) name: Arc<str>,
    pub(crate) score: f32,
    pub(crate) entry: E,
}

/// Once more than this many removed documents leave holes, and they outnumber the live
/// ones, document ids are renumbered so that the per-document arrays stay dense.
const COMPACT_AFTER: usize = 1024;

/// How far (relative) an average field length may move from the snapshot the impacts were
/// computed with before they are all recomputed.
const MAX_AVERAGE_DRIFT: f32 = 0.1;

/// The inverted index, each document kept with an entry of type `E` (none by default). Not
/// synchronised: [`ToolDiscovery`](crate::ToolDiscovery) wraps it in a lock.
#[derive(Debug)]
pub(crate) struct LexicalIndex<E = ()> {
    params: Bm25fParams,
    vocabulary: HashMap<SmallStr, TermId, Hasher>,
    /// Term text by id, to drop a term from the vocabulary when its last posting goes.
    term_text: Vec<Option<SmallStr>>,
    free_terms: Vec<TermId>,
    /// By term id.
    lists: Vec<TermList>,
    docs: Vec<Option<Doc<E>>>,
    /// Field lengths (in terms) by document id; kept apart from `docs` so scoring reads a
    /// dense array. `u32`: a retriever's document may be a book, and a length that stopped
    /// at `u16`'s 65,535 would rank every longer one as if it were that long.
    lens: Vec<[u32; FIELD_COUNT]>,
    /// The exact counts of the terms a document has 255 times or more in a field (kept as
    /// [`MANY`] with the document), by document and term.
    many_counts: HashMap<(DocId, TermId), ExactCounts, Hasher>,
    by_name: HashMap<Arc<str>, DocId, Hasher>,
    field_len_sum: [u64; FIELD_COUNT],
    /// The normaliser the impacts were computed with.
    scorer: Scorer,
}

impl<E> Default for LexicalIndex<E> {
    fn default() -> Self {
        Self::with_params(Bm25fParams::default())
    }
}

impl<E> LexicalIndex<E> {
    /// An empty index ranking with `params`.
    pub(crate) fn with_params(params: Bm25fParams) -> Self {
        Self {
            params,
            vocabulary: HashMap::default(),
            term_text: Vec::new(),
            free_terms: Vec::new(),
            lists: Vec::new(),
            docs: Vec::new(),
            lens: Vec::new(),
            many_counts: HashMap::default(),
            by_name: HashMap::default(),
            field_len_sum: [0; FIELD_COUNT],
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

    /// Indexes `tool` with the default entry, replacing an earlier tool of the same name.
    #[cfg(test)]
    pub(crate) fn insert(&mut self, tool: &Tool)
    where
        E: Default,
    {
        self.insert_entry(tool, E::default());
    }

    /// Indexes `tool` with `entry`, replacing an earlier tool of the same name.
    pub(crate) fn insert_entry(&mut self, tool: &Tool, entry: E) {
        self.insert_fields(tool.name(), entry, |visit| for_each_field_text(tool, visit));
    }

    /// Indexes the document `name` with `entry`, its text handed by `fields` to its visitor
    /// field by field, replacing an earlier document of the same name. Tools are indexed this
    /// way, and any other text (a retriever's documents) can be.
    pub(crate) fn insert_fields(
        &mut self,
        name: &str,
        entry: E,
        fields: impl FnOnce(&mut dyn FnMut(Field, &str)),
    ) {
        self.remove(name);
        let mut occurrences: Vec<(TermId, usize)> = Vec::new();
        let mut lens = [0u32; FIELD_COUNT];
        {
            let Self {
                vocabulary,
                term_text,
                free_terms,
                lists,
                ..
            } = self;
            fields(&mut |field, text| {
                analyze(text, |term| {
                    let id = intern(vocabulary, term_text, free_terms, lists, term);
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
            let mut exact = [0u32; FIELD_COUNT];
            for &(_, field) in run {
                exact[field] = exact[field].saturating_add(1);
            }
            let term = run[0].0;
            let impact = self.scorer.impact(&exact, &lens);
            let (tf, many) = narrow(&exact);
            if many {
                self.many_counts.insert((doc, term), exact);
            }
            // Ids only grow, so appending keeps every list sorted.
            let list = &mut self.lists[term as usize];
            list.postings.push(Posting { doc, impact });
            list.max_impact = list.max_impact.max(impact);
            terms.push((term, tf));
        }
        let name: Arc<str> = Arc::from(name);
        self.docs.push(Some(Doc {
            name: Arc::clone(&name),
            terms: terms.into_boxed_slice(),
            entry,
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
        for list in &mut self.lists {
            list.max_impact = 0.0;
        }
        for (id, doc) in self.docs.iter().enumerate() {
            let Some(doc) = doc else { continue };
            let id = id as DocId;
            for &(term, tf) in &doc.terms {
                let exact = exact_counts(&self.many_counts, id, term, &tf);
                let impact = self.scorer.impact(&exact, &self.lens[id as usize]);
                let list = &mut self.lists[term as usize];
                if let Ok(at) = list.postings.binary_search_by_key(&id, |p| p.doc) {
                    list.postings[at].impact = impact;
                }
                list.max_impact = list.max_impact.max(impact);
            }
        }
    }

    /// Replaces the entry of the document `name`, its postings as they are; `false` when it
    /// is not indexed.
    pub(crate) fn set_entry(&mut self, name: &str, entry: E) -> bool {
        let Some(&id) = self.by_name.get(name) else {
            return false;
        };
        match &mut self.docs[id as usize] {
            Some(doc) => {
                doc.entry = entry;
                true
            }
            None => false,
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
        for &(term, tf) in &doc.terms {
            if tf.contains(&MANY) {
                self.many_counts.remove(&(id, term));
            }
            let list = &mut self.lists[term as usize];
            if let Ok(at) = list.postings.binary_search_by_key(&id, |p| p.doc) {
                list.postings[at].impact = 0.0;
                list.removed += 1;
            }
            if list.live() == 0 {
                *list = TermList::default();
                if let Some(text) = self.term_text[term as usize].take() {
                    self.vocabulary.remove(text.as_bytes());
                }
                self.free_terms.push(term);
            } else if list.removed as usize * 2 >= list.postings.len() {
                let docs = &self.docs;
                list.postings.retain(|p| docs[p.doc as usize].is_some());
                list.removed = 0;
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
        for list in &mut self.lists {
            // Removed documents' postings have no number to take.
            if list.removed > 0 {
                list.postings
                    .retain(|p| renumbered[p.doc as usize] != DocId::MAX);
                list.removed = 0;
            }
            for posting in &mut list.postings {
                posting.doc = renumbered[posting.doc as usize];
            }
        }
        self.docs = docs;
        self.lens = lens;
        // Every entry is a live document's: a removed one's went with it.
        self.many_counts = std::mem::take(&mut self.many_counts)
            .into_iter()
            .map(|((doc, term), exact)| ((renumbered[doc as usize], term), exact))
            .collect();
    }

    /// The best `limit` tools for `query`, best first; equal scores in name order.
    ///
    /// A tool's score is the sum of `weight × impact` over the query's terms it has, added in
    /// the order of the query's terms (see [`query_terms`](Self::query_terms)): the order
    /// fixes the rounding, so tools with the same terms and counts tie exactly and fall to
    /// their names.
    pub(crate) fn search(&self, query: &str, limit: usize) -> Vec<LexicalHit<E>>
    where
        E: Clone,
    {
        let live = self.by_name.len();
        if live == 0 || limit == 0 {
            return Vec::new();
        }
        with_scratch(|scratch| {
            self.query_terms(query, live, &mut scratch.terms);
            if scratch.terms.is_empty() {
                return Vec::new();
            }
            self.max_score(scratch, limit.min(live)).into_hits()
        })
    }

    /// The document named exactly `name`, scored for `query` as [`search`](Self::search)
    /// scores it (0 when it has none of the query's terms); `None` when none is so named.
    pub(crate) fn named(&self, name: &str, query: &str) -> Option<LexicalHit<E>>
    where
        E: Clone,
    {
        let &id = self.by_name.get(name)?;
        let score = with_scratch(|scratch| {
            self.query_terms(query, self.by_name.len(), &mut scratch.terms);
            // Added in the order of the query's terms, as a search adds them.
            let mut score = 0.0;
            for term in &scratch.terms {
                let list = &self.lists[term.term as usize].postings;
                if let Ok(at) = list.binary_search_by_key(&id, |p| p.doc) {
                    score += term.weight * list[at].impact;
                }
            }
            score
        });
        let doc = self.doc(id);
        Some(LexicalHit {
            name: Arc::clone(&doc.name),
            score,
            entry: doc.entry.clone(),
        })
    }

    /// The live document `doc`.
    fn doc(&self, doc: DocId) -> &Doc<E> {
        self.docs[doc as usize]
            .as_ref()
            .expect("scored documents are live")
    }

    /// An estimate of the heap the index holds, in bytes.
    pub(crate) fn heap_bytes(&self) -> usize {
        use std::mem::size_of;
        let postings: usize = self
            .lists
            .iter()
            .map(|l| l.postings.capacity() * size_of::<Posting>() + size_of::<TermList>())
            .sum();
        // A term's text is kept twice (the vocabulary's key and `term_text`), inline when
        // short.
        let terms: usize = self
            .vocabulary
            .keys()
            .map(|t| 2 * t.heap_bytes() + size_of::<(SmallStr, TermId)>() + 1)
            .sum();
        let docs: usize = self
            .docs
            .iter()
            .flatten()
            .map(|d| d.terms.len() * size_of::<(TermId, FieldCounts)>() + d.name.len() + 16)
            .sum::<usize>()
            + self.docs.capacity() * size_of::<Option<Doc<E>>>()
            + self.lens.capacity() * size_of::<[u32; FIELD_COUNT]>()
            + self.many_counts.capacity() * (size_of::<((DocId, TermId), ExactCounts)>() + 1)
            + self.by_name.capacity() * (size_of::<(Arc<str>, DocId)>() + 1);
        postings + terms + docs + self.term_text.capacity() * size_of::<Option<SmallStr>>()
    }
}

/// The id of `term`, adding it to the vocabulary when new.
fn intern(
    vocabulary: &mut HashMap<SmallStr, TermId, Hasher>,
    term_text: &mut Vec<Option<SmallStr>>,
    free_terms: &mut Vec<TermId>,
    lists: &mut Vec<TermList>,
    term: &str,
) -> TermId {
    if let Some(&id) = vocabulary.get(term.as_bytes()) {
        return id;
    }
    let text = SmallStr::new(term);
    let id = match free_terms.pop() {
        Some(id) => {
            term_text[id as usize] = Some(text.clone());
            id
        }
        None => {
            term_text.push(Some(text.clone()));
            lists.push(TermList::default());
            TermId::try_from(lists.len() - 1).expect("fewer than 2^32 terms")
        }
    };
    vocabulary.insert(text, id);
    id
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
    fn impact(&self, tf: &ExactCounts, lens: &[u32; FIELD_COUNT]) -> f32 {
        let mut weighted = 0.0;
        for (f, (&count, &len)) in tf.iter().zip(lens).enumerate() {
            if count != 0 {
                // Exact to 2^24 terms, and relative to the average past it.
                let norm = self.one_minus_b[f] + len as f32 * self.b_over_avg[f];
                weighted += self.weight[f] * count as f32 / norm;
            }
        }
        weighted / (self.k1 + weighted)
    }
}
