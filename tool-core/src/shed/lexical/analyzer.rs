//! Text analysis shared by indexing and querying: identifier splitting, lower-casing, stop
//! words and stemming. Both sides must analyse alike, or a query term never meets its tool.

use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::LazyLock;

use rust_stemmers::{Algorithm, Stemmer};

use super::small_str::SmallStr;
use super::stop_words::is_stop_word;

/// Snowball's English (Porter 2) stemmer: light enough that "files" meets "file" and
/// "calculating" meets "calculate", without conflating unrelated words.
static STEMMER: LazyLock<Stemmer> = LazyLock::new(|| Stemmer::create(Algorithm::English));

/// Words seen before, with their term (`None` for a stop word). Stemming costs about a
/// microsecond a word, and queries and tool texts reuse a small vocabulary.
const MEMO_CAPACITY: usize = 1 << 16;

/// Words are short and looked up once each, so foldhash rather than SipHash: the memo is
/// per thread and filled from tool texts and queries, and it is cleared when full. Words and
/// terms are kept inline when short, so a look-up reads one slot of the table.
type Memo = HashMap<SmallStr, Option<SmallStr>, foldhash::fast::RandomState>;

thread_local! {
    static MEMO: RefCell<Memo> = RefCell::new(Memo::default());
}

/// The term of one lower-case word, or `None` for a stop word.
fn term_of(word: &str, emit: &mut impl FnMut(&str)) {
    MEMO.with(|memo| {
        let mut memo = memo.borrow_mut();
        if let Some(term) = memo.get(word.as_bytes()) {
            if let Some(term) = term {
                emit(term.as_str());
            }
            return;
        }
        let term = (!is_stop_word(word)).then(|| SmallStr::new(&STEMMER.stem(word)));
        if let Some(term) = &term {
            emit(term.as_str());
        }
        if memo.len() >= MEMO_CAPACITY {
            memo.clear();
        }
        memo.insert(SmallStr::new(word), term);
    });
}

/// Splits `text` into index terms and hands each to `emit`, in order.
///
/// Words break at anything that is not a letter or digit (so snake_case, kebab-case, dotted
/// and path-like names split), at a lower-to-upper change (`getWeather`), before the last
/// capital of an acronym followed by lower case (`HTTPServer` → `http`, `server`) and between
/// letters and digits (`base64` → `base`, `64`). Pieces are lower-cased; stop words are
/// dropped; the rest are stemmed.
pub(crate) fn analyze(text: &str, mut emit: impl FnMut(&str)) {
    let mut piece = String::new();
    let mut emit_piece = |piece: &mut String| {
        if !piece.is_empty() {
            term_of(piece, &mut emit);
            piece.clear();
        }
    };
    // One pass with one character of lookahead: the acronym rule needs the next one.
    let mut chars = text.chars().peekable();
    let mut prev: Option<char> = None;
    while let Some(c) = chars.next() {
        if !c.is_alphanumeric() {
            emit_piece(&mut piece);
            prev = Some(c);
            continue;
        }
        if let Some(prev) = prev
            && prev.is_alphanumeric()
        {
            let boundary = (prev.is_lowercase() && c.is_uppercase())
                || (prev.is_uppercase()
                    && c.is_uppercase()
                    && chars.peek().is_some_and(|next| next.is_lowercase()))
                || (prev.is_numeric() != c.is_numeric());
            if boundary {
                emit_piece(&mut piece);
            }
        }
        if c.is_ascii() {
            // Most text is ASCII: one byte, without the general case's iterator.
            piece.push(c.to_ascii_lowercase());
        } else {
            piece.extend(c.to_lowercase());
        }
        prev = Some(c);
    }
    emit_piece(&mut piece);
}

/// The terms of `text`, in order.
#[cfg(test)]
pub(crate) fn terms(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    analyze(text, |term| out.push(term.to_owned()));
    out
}

#[cfg(test)]
mod tests {
    use super::terms;

    #[test]
    fn splits_identifiers_of_every_style() {
        assert_eq!(terms("get_weather"), ["get", "weather"]);
        assert_eq!(terms("getWeather"), ["get", "weather"]);
        assert_eq!(terms("get-weather"), ["get", "weather"]);
        assert_eq!(terms("GetWeather"), ["get", "weather"]);
        assert_eq!(terms("HTTPServer"), ["http", "server"]);
        assert_eq!(terms("parseJSONBody"), ["pars", "json", "bodi"]);
        assert_eq!(terms("base64Encode"), ["base", "64", "encod"]);
        assert_eq!(terms("v2"), ["v", "2"]);
        assert_eq!(terms("math.hypot"), ["math", "hypot"]);
    }

    #[test]
    fn lower_cases_stems_and_drops_stop_words() {
        assert_eq!(
            terms("Calculating the AREAS of triangles"),
            ["calcul", "area", "triangl"]
        );
        assert_eq!(terms("files"), terms("file"));
        assert_eq!(terms("a an the of to"), Vec::<String>::new());
    }

    /// The analysis as first written: every character collected first, its neighbours read
    /// by index. The streaming pass must split exactly as it did.
    fn terms_by_index(text: &str) -> Vec<String> {
        let mut out = Vec::new();
        let mut piece = String::new();
        let mut emit_piece = |piece: &mut String| {
            if !piece.is_empty() {
                super::term_of(piece, &mut |term: &str| out.push(term.to_owned()));
                piece.clear();
            }
        };
        let chars: Vec<char> = text.chars().collect();
        for (i, &c) in chars.iter().enumerate() {
            if !c.is_alphanumeric() {
                emit_piece(&mut piece);
                continue;
            }
            if let Some(&prev) = i.checked_sub(1).and_then(|p| chars.get(p))
                && prev.is_alphanumeric()
            {
                let next = chars.get(i + 1).copied();
                let boundary = (prev.is_lowercase() && c.is_uppercase())
                    || (prev.is_uppercase()
                        && c.is_uppercase()
                        && next.is_some_and(char::is_lowercase))
                    || (prev.is_numeric() != c.is_numeric());
                if boundary {
                    emit_piece(&mut piece);
                }
            }
            piece.extend(c.to_lowercase());
        }
        emit_piece(&mut piece);
        out
    }

    proptest::proptest! {
        #[test]
        fn streaming_splits_as_indexing_did(
            text in "[a-zA-Z0-9_ .\\-éÉßİǅ²٣ΣΑσ]{0,40}"
        ) {
            proptest::prop_assert_eq!(terms(&text), terms_by_index(&text));
        }
    }

    #[test]
    fn handles_non_ascii_and_empty_text() {
        assert_eq!(terms(""), Vec::<String>::new());
        assert_eq!(terms("  --  "), Vec::<String>::new());
        assert_eq!(terms("Café"), ["café"]);
    }
}
