//! "Did you mean …": the closest known names to a name the model got wrong, so that an error
//! tells it what to send instead.

use std::borrow::Cow;

use serde_json::Value;

use crate::schema::validation::MAX_VIOLATION_CHARS;
use crate::tool::echo::cut_to;

/// How similar (Jaro-Winkler, 0–1) a known name must be to be suggested.
const MIN_SIMILARITY: f64 = 0.75;
/// How much less similar than the best name another may be and still be suggested.
const RELATIVE_MARGIN: f64 = 0.08;
/// How many names a suggestion lists at most.
const MAX_SUGGESTIONS: usize = 3;

/// The known names closest to `wanted`, best first (at most three): those similar enough by
/// Jaro-Winkler distance (case-insensitive), or that contain it or are contained in it.
///
/// ```
/// use toolsmith::closest_names;
///
/// let known = ["read_file", "write_file", "search"];
/// assert_eq!(closest_names("read_flie", known), ["read_file"]);
/// assert_eq!(closest_names("read", known), ["read_file"]);
/// assert!(closest_names("weather", known).is_empty());
/// ```
pub fn closest_names<'a, I>(wanted: &str, known: I) -> Vec<&'a str>
where
    I: IntoIterator<Item = &'a str>,
{
    let wanted_lower = wanted.to_lowercase();
    let similarity = Similarity::to(&wanted_lower);
    closest_by(known.into_iter().filter(|name| *name != wanted), |name| {
        // Most names are lower case already: only the others are copied.
        if is_lower_case(name) {
            similarity.of(name)
        } else {
            similarity.of(&name.to_lowercase())
        }
    })
}

/// Whether `text` is its own lower case, as [`str::to_lowercase`] makes it (every character
/// lowercases to itself alone; a capital sigma, which lowercases by its place in a word, is
/// not).
pub(crate) fn is_lower_case(text: &str) -> bool {
    // Tool names are ASCII: a byte test, not a Unicode table look-up a character.
    if text.is_ascii() {
        return !text.bytes().any(|b| b.is_ascii_uppercase());
    }
    text.chars().all(|c| {
        let mut lower = c.to_lowercase();
        lower.next() == Some(c) && lower.next().is_none()
    })
}

/// [`closest_names`] among names already in lower case (`wanted_lower` too), other than
/// `wanted_lower` itself: every name scored, the reference [`PreparedNames::similar_to`] is
/// tested against.
#[cfg(test)]
pub(crate) fn closest_lowercase_names<'a>(
    wanted_lower: &str,
    known_lower: impl IntoIterator<Item = &'a str>,
) -> Vec<&'a str> {
    let similarity = Similarity::to(wanted_lower);
    let known = known_lower.into_iter().filter(|name| *name != wanted_lower);
    closest_by(known, |name| similarity.of(name))
}

/// Names prepared for comparing with one wanted name after another (the registered tools'
/// names, the parts of them): each in lower case, with its length and its characters counted
/// in [`ClassCounts`]' classes, kept side by side so that a comparison with every name
/// reads 40 bytes a name and turns most away in a few vector instructions.
#[derive(Debug, Default)]
pub(crate) struct PreparedNames {
    lower: Vec<Box<str>>,
    chars: Vec<u64>,
    classes: Vec<ClassCounts>,
    /// The names too long to count in bytes (more than 255 of a class), compared always.
    uncounted: Vec<usize>,
}

impl PreparedNames {
    /// Adds `name` (lowercased here) as the next name.
    pub(crate) fn push(&mut self, name: &str) {
        let lower: Box<str> = if is_lower_case(name) {
            name.into()
        } else {
            name.to_lowercase().into()
        };
        self.chars.push(char_count(&lower));
        match ClassCounts::of(&lower) {
            Some(classes) => self.classes.push(classes),
            None => {
                self.uncounted.push(self.lower.len());
                self.classes.push(ClassCounts([u8::MAX; 32]));
            }
        }
        self.lower.push(lower);
    }

    /// The `index`th name, in lower case.
    pub(crate) fn lower(&self, index: usize) -> &str {
        &self.lower[index]
    }

    /// The index of the name whose lower case is `lower`, for names pushed in the order of
    /// their lower case.
    pub(crate) fn find_sorted(&self, lower: &str) -> Option<usize> {
        self.lower.binary_search_by(|name| (**name).cmp(lower)).ok()
    }

    /// The names that score [`MIN_SIMILARITY`] or more against `wanted_lower`, by their
    /// index, with their scores (as [`closest_names`] scores them), in index order.
    pub(crate) fn similar_to(&self, wanted_lower: &str) -> Vec<(f64, usize)> {
        let similarity = Similarity::to(wanted_lower);
        let mut similar = Vec::new();
        let mut keep = |score: f64, index: usize| {
            if score >= MIN_SIMILARITY {
                similar.push((score, index));
            }
        };
        if similarity.chars == 0 {
            // Only an empty name is like an empty one: no bound to apply.
            for (index, lower) in self.lower.iter().enumerate() {
                keep(similarity.of(lower), index);
            }
            return similar;
        }
        let wanted_chars = similarity.chars;
        let contains_counts = wanted_lower.len() >= 3;
        let mut uncounted = self.uncounted.iter().copied().peekable();
        for (index, (classes, &chars)) in self.classes.iter().zip(&self.chars).enumerate() {
            if uncounted.next_if_eq(&index).is_some() {
                keep(similarity.of(&self.lower[index]), index);
                continue;
            }
            let common = similarity.classes.common(classes);
            let may_contain = contains_counts && common == wanted_chars.min(chars);
            if may_contain || jaro_may_exceed_floor(common, wanted_chars, chars) {
                let lower = &self.lower[index];
                keep(
                    similarity.of_candidate(lower, chars, common, may_contain),
                    index,
                );
            }
        }
        similar
    }
}

/// Whether two names of `a` and `b` characters with `common` characters in common could
/// have a Jaro-Winkler similarity of [`MIN_SIMILARITY`] (0.75). strsim's Winkler bonus
/// applies only above a Jaro similarity of 0.7, so 0.75 takes a Jaro similarity `j` above
/// 0.7; and `j = (m/|a| + m/|b| + (m − t)/m) / 3` with `m` matching characters, no more than
/// the characters in common, and `(m − t)/m` at most 1. So `j > 0.7` needs `m (|a| + |b|) >
/// 1.1 |a| |b|`, checked in integers (equality is let through).
#[inline]
fn jaro_may_exceed_floor(common: u64, a: u64, b: u64) -> bool {
    const _: () = assert!(MIN_SIMILARITY > 0.7);
    10 * common * (a + b) >= 11 * a * b
}

/// The length of `text` in characters, as Jaro counts it (tool names are ASCII: a byte a
/// character).
fn char_count(text: &str) -> u64 {
    let chars = if text.is_ascii() {
        text.len()
    } else {
        text.chars().count()
    };
    chars as u64
}

/// How many characters (at most 4, as Winkler's bonus counts) `a` and `b` begin with alike.
fn common_prefix(a: &str, b: &str) -> u64 {
    a.chars()
        .take(4)
        .zip(b.chars())
        .take_while(|(a, b)| a == b)
        .count() as u64
}

/// [`ClassCounts::class`] of each ASCII character.
const ASCII_CLASSES: [u8; 128] = {
    let mut classes = [0u8; 128];
    let mut byte = 0;
    while byte < 128 {
        classes[byte] = ClassCounts::class(byte as u8 as char) as u8;
        byte += 1;
    }
    classes
};

/// Counts of a name's characters in 32 classes: each ASCII letter (either case), `_`, `-`,
/// the digits in three classes, and every other character in one. Merging characters into
/// a class only raises the count in common, so a bound on it stays a bound; 32 one-byte counts
/// compare in a few vector instructions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ClassCounts([u8; 32]);

impl ClassCounts {
    /// The counts of `text`, or `None` when a class holds more than 255 of its characters.
    pub(crate) fn of(text: &str) -> Option<Self> {
        let mut counts = [0u8; 32];
        if text.is_ascii() {
            // Tool names are ASCII: classes by byte, from a table.
            for &byte in text.as_bytes() {
                let count = &mut counts[usize::from(ASCII_CLASSES[usize::from(byte)])];
                *count = count.checked_add(1)?;
            }
        } else {
            for c in text.chars() {
                let count = &mut counts[Self::class(c)];
                *count = count.checked_add(1)?;
            }
        }
        Some(Self(counts))
    }

    /// The counts of `text`, each at most 255: for the wanted name, compared only with names
    /// whose counts are exact (so at most 255), with which the common count is the same.
    pub(crate) fn saturating(text: &str) -> Self {
        let mut counts = [0u8; 32];
        for c in text.chars() {
            let count = &mut counts[Self::class(c)];
            *count = count.saturating_add(1);
        }
        Self(counts)
    }

    /// The class `c` is counted in.
    const fn class(c: char) -> usize {
        match c {
            'a'..='z' => c as usize - 'a' as usize,
            'A'..='Z' => c as usize - 'A' as usize,
            '_' => 26,
            '-' => 27,
            '0'..='3' => 28,
            '4'..='6' => 29,
            '7'..='9' => 30,
            _ => 31,
        }
    }

    /// How many characters two counts have in common, class by class.
    // Kept out of line: on its own it compiles to two vector minimums and two sums of
    // bytes; inlined into the loop over names, it was compiled byte by byte.
    #[inline(never)]
    fn common(&self, other: &Self) -> u64 {
        let mut common = 0u32;
        for (a, b) in self.0.iter().zip(&other.0) {
            common += u32::from(*a.min(b));
        }
        u64::from(common)
    }
}

/// How similar names are to one lower-case name.
struct Similarity<'w> {
    wanted: &'w str,
    /// Its length in characters, as Jaro counts it.
    chars: u64,
    /// Its characters by class (at most 255 a class: see [`ClassCounts::saturating`]).
    classes: ClassCounts,
}

impl<'w> Similarity<'w> {
    fn to(wanted: &'w str) -> Self {
        Self {
            wanted,
            chars: char_count(wanted),
            classes: ClassCounts::saturating(wanted),
        }
    }

    /// The similarity of a lower-case name: Jaro-Winkler, raised to 0.9 when one contains
    /// the other (a name the model shortened or extended, "read" for "read_file", is a
    /// likely intent even when the edit distance is large). 0 for a name that cannot reach
    /// [`MIN_SIMILARITY`]: among thousands of tools most cannot, and a bound on their
    /// common characters shows it without the quadratic Jaro.
    fn of(&self, lower: &str) -> f64 {
        let wanted = self.wanted;
        if wanted.len() >= 3 && one_contains_the_other(wanted, lower) {
            return jaro_winkler(wanted, lower).max(0.9);
        }
        if !self.may_reach_threshold(lower) {
            return 0.0;
        }
        jaro_winkler(wanted, lower)
    }

    /// Whether Jaro-Winkler could reach [`MIN_SIMILARITY`]: see [`jaro_may_exceed_floor`].
    /// A name past 255 of a class is not bounded.
    fn may_reach_threshold(&self, lower: &str) -> bool {
        let Some(classes) = ClassCounts::of(lower) else {
            return true;
        };
        let chars = char_count(lower);
        let common = self.classes.common(&classes);
        // Two empty names are the same name (similarity 1).
        (self.chars == 0 && chars == 0)
            || (common > 0 && jaro_may_exceed_floor(common, self.chars, chars))
    }

    /// [`of`](Self::of) for a name `lower` of `chars` characters with `common` characters in
    /// common with the wanted one (or more), which the counts could not turn away: the
    /// containment searched for only when the counts allow it (`may_contain`), and the
    /// Winkler bonus bounded by the actual common prefix rather than the largest, before
    /// the exact score. Out of line: few names get this far.
    #[inline(never)]
    fn of_candidate(&self, lower: &str, chars: u64, common: u64, may_contain: bool) -> f64 {
        if may_contain && one_contains_the_other(self.wanted, lower) {
            return jaro_winkler(self.wanted, lower).max(0.9);
        }
        let jaro = (common as f64 / self.chars as f64 + common as f64 / chars as f64 + 1.0) / 3.0;
        let winkler = if jaro > 0.7 {
            jaro + 0.1 * common_prefix(self.wanted, lower) as f64 * (1.0 - jaro)
        } else {
            jaro
        };
        // A hair below the threshold: the exact score decides any name this close.
        if winkler < MIN_SIMILARITY - 1e-9 {
            return 0.0;
        }
        jaro_winkler(self.wanted, lower)
    }
}

/// Jaro-Winkler similarity, as `strsim::jaro_winkler` computes it (the same matches, the
/// same arithmetic, so the same `f64`), for an ASCII string and an ASCII name of up to 64
/// bytes, without allocating; anything else goes to `strsim`. Tool names are ASCII and at
/// most 64 bytes, and an explanation scores dozens of them a call.
///
/// strsim matches each character of `a` in turn with the first unmatched equal character of
/// `b` within the window; here the positions of each byte in `b` are bits of a word, so that
/// first one is the lowest bit of (positions of the byte) ∧ (window) ∧ ¬(matched).
fn jaro_winkler(wanted: &str, name: &str) -> f64 {
    if !(wanted.is_ascii() && name.is_ascii() && name.len() <= 64) {
        return strsim::jaro_winkler(wanted, name);
    }
    let (a, b) = (wanted.as_bytes(), name.as_bytes());
    if a.is_empty() && b.is_empty() {
        return 1.0;
    }
    if a.is_empty() || b.is_empty() {
        return 0.0;
    }
    let mut positions = [0u64; 128];
    for (j, &y) in b.iter().enumerate() {
        positions[usize::from(y)] |= 1 << j;
    }
    let range = (a.len().max(b.len()) / 2).saturating_sub(1);
    // Bits `low..high` set, for `high` up to 64.
    let bits = |low: usize, high: usize| -> u64 {
        if low >= high {
            0
        } else {
            (u64::MAX >> (64 - (high - low))) << low
        }
    };
    let mut b_matched = 0u64;
    // The bytes of `a` that matched, in order (at most `b.len()` of them).
    let mut a_matched = [0u8; 64];
    let mut matches = 0usize;
    for (i, &x) in a.iter().enumerate() {
        let low = i.saturating_sub(range);
        if low >= b.len() {
            // Past the window of every character of `b` (a description much longer than
            // the name): nothing further matches.
            break;
        }
        let window = bits(low, b.len().min(i + range + 1));
        let free = positions[usize::from(x)] & window & !b_matched;
        if free != 0 {
            b_matched |= free & free.wrapping_neg();
            a_matched[matches] = x;
            matches += 1;
        }
    }
    if matches == 0 {
        return 0.0;
    }
    // The matched bytes of `a` and of `b`, in order: each pair that differs is half a
    // transposition.
    let mut transpositions = 0usize;
    let mut rest = b_matched;
    for &x in &a_matched[..matches] {
        let j = rest.trailing_zeros() as usize;
        rest &= rest - 1;
        if b[j] != x {
            transpositions += 1;
        }
    }
    transpositions /= 2;
    let jaro = ((matches as f64 / a.len() as f64)
        + (matches as f64 / b.len() as f64)
        + ((matches - transpositions) as f64 / matches as f64))
        / 3.0;
    if jaro > 0.7 {
        jaro + 0.1 * common_prefix(wanted, name) as f64 * (1.0 - jaro)
    } else {
        jaro
    }
}

/// Whether `a` contains `b` or `b` contains `a`. Only the longer can contain the shorter:
/// one search, not two (each sets up a searcher for its needle, a cost per name when
/// thousands are compared).
fn one_contains_the_other(a: &str, b: &str) -> bool {
    if a.len() >= b.len() {
        a.contains(b)
    } else {
        b.contains(a)
    }
}

/// The names of `known` that `score` finds similar enough, best first, about as close as
/// the best one, at most [`MAX_SUGGESTIONS`].
fn closest_by<'a>(
    known: impl Iterator<Item = &'a str>,
    mut score: impl FnMut(&str) -> f64,
) -> Vec<&'a str> {
    closest_scored(known.map(|name| (score(name), name)))
}

/// The names of `scored` similar enough, best first (ties by name), about as close as the
/// best one, at most [`MAX_SUGGESTIONS`].
pub(crate) fn closest_scored<'a>(scored: impl Iterator<Item = (f64, &'a str)>) -> Vec<&'a str> {
    let mut scored: Vec<(f64, &str)> = scored
        .filter(|(score, _)| *score >= MIN_SIMILARITY)
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.cmp(b.1)));
    scored.dedup_by(|a, b| a.1 == b.1);
    // Only the names about as close as the best one: a clear winner is suggested alone.
    let best = scored.first().map_or(0.0, |s| s.0);
    scored
        .into_iter()
        .take_while(|(score, _)| *score >= best - RELATIVE_MARGIN)
        .take(MAX_SUGGESTIONS)
        .map(|(_, name)| name)
        .collect()
}

/// " — did you mean 'a' or 'b'?" for a list of suggestions; empty when there are none.
pub(crate) fn did_you_mean(suggestions: &[&str]) -> String {
    if suggestions.is_empty() {
        return String::new();
    }
    format!("did you mean {}?", quoted_or(suggestions))
}

/// `'a'`, `'a' or 'b'`, `'a', 'b' or 'c'`.
fn quoted_or(names: &[&str]) -> String {
    match names {
        [] => String::new(),
        [one] => format!("'{one}'"),
        [init @ .., last] => {
            let init: Vec<String> = init.iter().map(|n| format!("'{n}'")).collect();
            format!("{} or '{last}'", init.join(", "))
        }
    }
}

/// The hint for a required argument `missing` that was not sent: the arguments sent under
/// names the reader does not know (`unknown`) that are closest to it, as " (for
/// 'query_text', did you mean 'queryText'?)", cut to [`MAX_VIOLATION_CHARS`] (a name sent
/// may be of any length); empty when none is close.
///
/// [`MAX_VIOLATION_CHARS`]: crate::schema::validation::MAX_VIOLATION_CHARS
pub(crate) fn missing_argument_hint<'a>(
    missing: &str,
    unknown: impl IntoIterator<Item = &'a str>,
) -> String {
    let sent = closest_names(missing, unknown);
    if sent.is_empty() {
        return String::new();
    }
    let hint = format!(" (for {}, did you mean '{missing}'?)", quoted_or(&sent));
    match cut_to(&hint, MAX_VIOLATION_CHARS) {
        Cow::Borrowed(_) => hint,
        Cow::Owned(mut cut) => {
            cut.push(')');
            cut
        }
    }
}

/// The hint for arguments a schema does not allow: for each unexpected name, the closest
/// property names of the object schema found at `schema_pointer` (or, failing that, by
/// following `instance_pointer` through `properties` and `items`).
pub(crate) fn unexpected_properties_hint(
    root: &Value,
    schema_pointer: &str,
    instance_pointer: &str,
    unexpected: &[String],
) -> String {
    let object = schema_pointer
        .strip_suffix("/additionalProperties")
        .and_then(|parent| root.pointer(parent))
        .filter(|schema| schema.get("properties").is_some())
        .or_else(|| schema_at_instance(root, instance_pointer));
    let Some(properties) = object
        .and_then(|schema| schema.get("properties"))
        .and_then(Value::as_object)
    else {
        return String::new();
    };
    let mut hints = Vec::new();
    for name in unexpected {
        let suggestions = closest_names(name, properties.keys().map(String::as_str));
        if !suggestions.is_empty() {
            hints.push(format!("for '{name}', {}", did_you_mean(&suggestions)));
        }
    }
    if hints.is_empty() {
        let allowed: Vec<String> = properties.keys().map(|k| format!("'{k}'")).collect();
        if allowed.is_empty() {
            return " (no arguments are accepted here)".to_owned();
        }
        return format!(" (the accepted arguments are {})", allowed.join(", "));
    }
    format!(" ({})", hints.join("; "))
}

/// The object schema that describes the value at `pointer`, following `properties`, `items`
/// and local `$ref`s from the root.
fn schema_at_instance<'a>(root: &'a Value, pointer: &str) -> Option<&'a Value> {
    let mut schema = resolve(root, root)?;
    for segment in pointer.split('/').skip(1) {
        let segment = segment.replace("~1", "/").replace("~0", "~");
        let next = schema
            .get("properties")
            .and_then(|p| p.get(&segment))
            .or_else(|| schema.get("items"))?;
        schema = resolve(root, next)?;
    }
    Some(schema)
}

fn resolve<'a>(root: &'a Value, schema: &'a Value) -> Option<&'a Value> {
    let mut schema = schema;
    for _ in 0..16 {
        match schema.get("$ref").and_then(Value::as_str) {
            Some(reference) => schema = root.pointer(reference.strip_prefix('#')?)?,
            None => return Some(schema),
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    /// What `closest_names` answers, every name lowercased by `str::to_lowercase`.
    fn closest_names_plainly<'a>(wanted: &str, known: &[&'a str]) -> Vec<&'a str> {
        let wanted_lower = wanted.to_lowercase();
        let similarity = Similarity::to(&wanted_lower);
        closest_by(
            known.iter().copied().filter(|name| *name != wanted),
            |name| similarity.of(&name.to_lowercase()),
        )
    }

    proptest! {
        /// Names from a few pieces, in both cases and repeated, so that many are close: the
        /// names tested for capitals by byte are scored as `str` lowercases them.
        #[test]
        fn closest_names_answer_as_with_names_lowercased_by_str(
            names in prop::collection::vec(
                prop::collection::vec(prop::sample::select(
                    &["read", "Read", "file", "FILE", "_", "-", "x", "weather", "é", "Σ"][..]), 1..4),
                0..40),
            wanted in prop::collection::vec(prop::sample::select(
                &["read", "file", "_", "wether", "REA", "x", "é"][..]), 1..4),
        ) {
            let names: Vec<String> = names.iter().map(|parts| parts.concat()).collect();
            let known: Vec<&str> = names.iter().map(String::as_str).collect();
            let wanted = wanted.concat();
            prop_assert_eq!(
                closest_names(&wanted, known.iter().copied()),
                closest_names_plainly(&wanted, &known)
            );
        }

        /// One search, for the shorter in the longer, answers as searching both ways.
        #[test]
        fn one_contains_the_other_as_searching_both_ways(
            a in "[ab_é]{0,6}",
            b in "[ab_é]{0,6}",
        ) {
            prop_assert_eq!(one_contains_the_other(&a, &b), a.contains(&*b) || b.contains(&*a));
        }
    }

    #[test]
    fn suggests_close_names_best_first() {
        let known = ["name", "names", "nickname", "age"];
        assert_eq!(closest_names("nmae", known), ["name", "names"]);
        assert_eq!(closest_names("NAME", known)[0], "name");
        assert!(closest_names("zzz", known).is_empty());
        assert_eq!(did_you_mean(&["a"]), "did you mean 'a'?");
        assert_eq!(
            did_you_mean(&["a", "b", "c"]),
            "did you mean 'a', 'b' or 'c'?"
        );
        assert_eq!(did_you_mean(&[]), "");
    }

    /// The score without the bound: what the bound must never change for a name that can
    /// be suggested.
    fn unbounded(wanted: &str, name: &str) -> f64 {
        let score = strsim::jaro_winkler(wanted, name);
        if wanted.len() >= 3 && (name.contains(wanted) || wanted.contains(name)) {
            score.max(0.9)
        } else {
            score
        }
    }

    proptest::proptest! {
        /// The common-character bound only turns away names that score below the
        /// threshold: any name that reaches it keeps its exact score.
        #[test]
        fn the_bound_keeps_every_name_that_reaches_the_threshold(
            wanted in "[abcde_é]{0,12}",
            names in proptest::collection::vec("[abcdef_é]{0,14}", 1..40),
        ) {
            let similarity = Similarity::to(&wanted);
            for name in &names {
                let exact = unbounded(&wanted, name);
                let bounded = similarity.of(name);
                if exact >= MIN_SIMILARITY {
                    proptest::prop_assert_eq!(bounded, exact, "{:?} {:?}", wanted, name);
                } else {
                    proptest::prop_assert!(bounded < MIN_SIMILARITY);
                }
            }
        }
    }

    proptest::proptest! {
        /// The same `f64` as strsim's, for names and for longer texts, ASCII or not.
        #[test]
        fn jaro_winkler_is_strsims(
            a in "[abcd_é]{0,12}|[a-f_ -]{0,70}|[a-z]{120,140}|[ab]{60,70}",
            b in "[abcd_é]{0,12}|[a-f_ -]{0,70}|[a-z]{0,3}|[ab]{60,66}",
        ) {
            proptest::prop_assert_eq!(
                jaro_winkler(&a, &b).to_bits(),
                strsim::jaro_winkler(&a, &b).to_bits(),
                "{:?} {:?}", a, b
            );
            proptest::prop_assert_eq!(
                jaro_winkler(&b, &a).to_bits(),
                strsim::jaro_winkler(&b, &a).to_bits()
            );
        }
    }

    proptest::proptest! {
        /// Prepared names score as every name scored one by one does, those past 255 of a
        /// class (compared without the counts) and wanted names past it (counted up to 255)
        /// included.
        #[test]
        fn prepared_names_score_as_every_name_scored(
            names in proptest::collection::vec("[abc_]{0,12}|a{250,262}b?", 1..12),
            wanted in "[abc_ ]{0,14}|a{250,262}",
        ) {
            let mut prepared = PreparedNames::default();
            for name in &names {
                prepared.push(name);
            }
            let similarity = Similarity::to(&wanted);
            let every: Vec<(f64, usize)> = names
                .iter()
                .enumerate()
                .map(|(index, name)| (similarity.of(name), index))
                .filter(|(score, _)| *score >= MIN_SIMILARITY)
                .collect();
            proptest::prop_assert_eq!(prepared.similar_to(&wanted), every);
        }
    }

    #[test]
    fn ascii_text_is_counted_as_by_character() {
        let every_ascii: String = (0u8..128).map(char::from).collect();
        let mut by_character = [0u8; 32];
        for c in every_ascii.chars() {
            by_character[ClassCounts::class(c)] += 1;
        }
        assert_eq!(
            ClassCounts::of(&every_ascii),
            Some(ClassCounts(by_character))
        );
        assert_eq!(
            ClassCounts::of("Get_Weather-2"),
            ClassCounts::of("get_weather-2")
        );
        assert_eq!(ClassCounts::of(&"a".repeat(256)), None);
    }

    #[test]
    fn jaro_winkler_matches_strsim_on_known_pairs() {
        for (a, b) in [
            ("", ""),
            ("", "a"),
            ("martha", "marhta"),
            ("dixon", "dicksonx"),
            ("cheeseburger", "cheese fries"),
            ("read_file", "raed_flie"),
            ("get_weather", "wether"),
            ("ab", "ba"),
        ] {
            assert_eq!(
                jaro_winkler(a, b).to_bits(),
                strsim::jaro_winkler(a, b).to_bits()
            );
        }
    }

    #[test]
    fn names_are_compared_in_lower_case_as_str_makes_it() {
        for text in [
            "weather_2",
            "",
            "Weather",
            "a-B",
            "_x9",
            "ABC",
            "\u{1c5}ar",
            "ΟΔΟΣ",
            "οδος",
            "İ",
        ] {
            assert_eq!(is_lower_case(text), text.to_lowercase() == text, "{text:?}");
        }
        // A final capital sigma lowercases to the final form, as `str::to_lowercase` does.
        assert_eq!(closest_names("οδος", ["ΟΔΟΣ", "read"]), ["ΟΔΟΣ"]);
        assert_eq!(closest_names("nmae", ["NAME"]), ["NAME"]);
    }

    #[test]
    fn a_name_in_another_script_is_turned_away_by_the_bound() {
        let similarity = Similarity::to("ฉันต้องการรหัส");
        assert!(!similarity.may_reach_threshold("get_weather"));
        assert!(similarity.may_reach_threshold("ฉันต้องการรหัส"));
    }

    #[test]
    fn hints_follow_the_schema_to_the_object() {
        let schema = json!({
            "type": "object",
            "properties": {
                "inner": {"$ref": "#/$defs/Inner"},
                "list": {"type": "array", "items": {"type": "object", "properties": {"count": {}}}}
            },
            "$defs": {"Inner": {"type": "object", "properties": {"path": {}, "limit": {}}}}
        });
        let hint = unexpected_properties_hint(
            &schema,
            "/properties/inner/$ref/additionalProperties",
            "/inner",
            &["pth".into()],
        );
        assert_eq!(hint, " (for 'pth', did you mean 'path'?)");
        let hint = unexpected_properties_hint(&schema, "", "/list/0", &["cuont".into()]);
        assert_eq!(hint, " (for 'cuont', did you mean 'count'?)");
        let hint =
            unexpected_properties_hint(&schema, "/additionalProperties", "", &["zzz".into()]);
        assert_eq!(hint, " (the accepted arguments are 'inner', 'list')");
    }
}
