//! Text analysis shared by indexing and querying: identifier splitting, lower-casing, stop
//! words and stemming. Both sides must analyse alike, or a query term never meets its tool.

use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::LazyLock;

use rust_stemmers::{Algorithm, Stemmer};
use unicode_normalization::UnicodeNormalization as _;
use unicode_normalization::char::{decompose_canonical, is_combining_mark};

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

/// The longest word the memo keeps. Words are shorter; a longer one is rarely met again, and
/// kept, a model's text of runs of thousands of letters would hold their memory (and their
/// stems') until the memo is full.
const MAX_MEMO_WORD: usize = 64;

/// The term of one lower-case word, or `None` for a stop word.
fn term_of(word: &str, emit: &mut impl FnMut(&str)) {
    if word.len() > MAX_MEMO_WORD {
        // No stop word is this long.
        emit(&STEMMER.stem(word));
        return;
    }
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
/// The text is read in NFKC, so that a word has one spelling however it was written ("é" as
/// one character or as "e" and a combining accent, a full-width "ＡＰＩ" as "API"). Words
/// break at anything that is not a letter, digit or combining mark (so snake_case,
/// kebab-case, dotted and path-like names split), at a lower-to-upper change (`getWeather`),
/// before the last capital of an acronym followed by lower case (`HTTPServer` → `http`,
/// `server`) and between letters and digits (`base64` → `base`, `64`). A run of Thai, Lao,
/// Khmer or Myanmar letters (scripts that put no space between words, with words of several
/// letters) is split off from letters of other scripts and becomes its overlapping pairs of
/// letters, as search engines without a dictionary index such text: a word of the query
/// then meets the same pairs inside the tool's sentence (see [`emit_pairs`]). So does a run
/// of Hangul, whose words carry their particles ("서울은", "Seoul" and a topic particle,
/// meets "서울"), of katakana, whose words are written together ("データベース",
/// "database", meets "データ"), and of hiragana, Japanese's particles and inflections,
/// which ends a run of ideographs as a particle ends a word. A run of Chinese or Japanese
/// ideographs becomes its overlapping pairs and each ideograph too (see
/// [`emit_pairs_and_letters`]): "天气" (weather) then meets "天气预报" (weather forecast)
/// more than "今天" (today), and a word of one ideograph still meets a longer one. Other
/// pieces are lower-cased; stop words are dropped; the rest are stemmed.
pub(crate) fn analyze(text: &str, mut emit: impl FnMut(&str)) {
    if text.is_ascii() {
        analyze_ascii(text, &mut emit);
    } else {
        analyze_unicode(text, &mut emit);
    }
}

/// [`analyze`] for ASCII text, which queries and tool texts mostly are: a piece is a run
/// of the text's own bytes, handed on as it is when it has no capital (no copy), and the
/// character classes are a byte's (no Unicode tables). Splits as [`analyze_unicode`] does.
fn analyze_ascii(text: &str, emit: &mut impl FnMut(&str)) {
    let bytes = text.as_bytes();
    // The start of the current piece; every byte from it to `i` is a letter or digit.
    let mut start = 0;
    for (i, &c) in bytes.iter().enumerate() {
        if !c.is_ascii_alphanumeric() {
            emit_ascii_piece(&text[start..i], emit);
            start = i + 1;
            continue;
        }
        // `i > start`: the byte before is a letter or digit of this piece.
        if i > start {
            let prev = bytes[i - 1];
            let boundary = (prev.is_ascii_lowercase() && c.is_ascii_uppercase())
                || (prev.is_ascii_uppercase()
                    && c.is_ascii_uppercase()
                    && bytes.get(i + 1).is_some_and(u8::is_ascii_lowercase))
                || (prev.is_ascii_digit() != c.is_ascii_digit());
            if boundary {
                emit_ascii_piece(&text[start..i], emit);
                start = i;
            }
        }
    }
    emit_ascii_piece(&text[start..], emit);
}

/// Hands the term of one piece of ASCII letters and digits (if any) to `emit`, lower-cased
/// on the stack when it has capitals and is short, as words are.
fn emit_ascii_piece(piece: &str, emit: &mut impl FnMut(&str)) {
    const SHORT: usize = 32;
    if piece.is_empty() {
        return;
    }
    if !piece.bytes().any(|b| b.is_ascii_uppercase()) {
        term_of(piece, emit);
    } else if piece.len() <= SHORT {
        let mut lower = [0u8; SHORT];
        let lower = &mut lower[..piece.len()];
        lower.copy_from_slice(piece.as_bytes());
        lower.make_ascii_lowercase();
        term_of(ascii_str(lower), emit);
    } else {
        term_of(&piece.to_ascii_lowercase(), emit);
    }
}

/// `bytes`, all ASCII, as text.
fn ascii_str(bytes: &[u8]) -> &str {
    std::str::from_utf8(bytes).expect("ASCII is UTF-8")
}

/// [`analyze`] for any text (ASCII text is its own NFKC).
fn analyze_unicode(text: &str, emit: &mut impl FnMut(&str)) {
    let mut piece = String::new();
    // The script of the piece's letters, when they are read in pairs: a piece is of one
    // script or none, as a change of script ends it.
    let mut paired: Option<PairedScript> = None;
    let mut emit_piece = |piece: &mut String, paired: Option<PairedScript>| {
        if !piece.is_empty() {
            emit_word(piece, paired, &mut *emit);
            piece.clear();
        }
    };
    // One pass with one character of lookahead: the acronym rule needs the next one.
    let mut chars = text.nfkc().peekable();
    let mut prev: Option<char> = None;
    // Where the piece's last letter, lower-cased, starts.
    let mut letter_start = 0;
    while let Some(c) = chars.next() {
        if is_combining_mark(c) {
            // A mark NFKC did not compose (no letter has it built in) belongs to the word of
            // the letter before it; `prev` stays that letter, for the case rules.
            if !piece.is_empty() && prev.is_none_or(keeps_marks) {
                piece.push(c);
                if prev.is_some_and(char::is_uppercase) {
                    compose_from(&mut piece, letter_start);
                }
            }
            continue;
        }
        if !c.is_alphanumeric() {
            emit_piece(&mut piece, paired);
            prev = Some(c);
            continue;
        }
        let script = paired_script(c);
        if let Some(prev) = prev
            && prev.is_alphanumeric()
        {
            let boundary = (prev.is_lowercase() && c.is_uppercase())
                || (prev.is_uppercase()
                    && c.is_uppercase()
                    && chars.peek().is_some_and(|next| next.is_lowercase()))
                // A numeral ideograph ("〇") is numeric and an ideograph: it stays in its run.
                || (script.is_none() && prev.is_numeric() != c.is_numeric())
                || paired_script(prev) != script;
            if boundary {
                emit_piece(&mut piece, paired);
            }
        }
        if piece.is_empty() {
            paired = script;
        }
        letter_start = piece.len();
        if c.is_ascii() {
            // Most text is ASCII: one byte, without the general case's iterator.
            piece.push(c.to_ascii_lowercase());
        } else {
            push_lower(&mut piece, c);
        }
        prev = Some(c);
    }
    emit_piece(&mut piece, paired);
}

/// Writes `piece[start..]` (a lower-cased capital and the marks after it) in NFC: a capital
/// with a mark may have no form built in that its lower case has ("W" and a ring above,
/// lower-cased, is "ẘ"), and a query or tool written in lower case has that form.
fn compose_from(piece: &mut String, start: usize) {
    let composed: String = piece[start..].nfc().collect();
    piece.truncate(start);
    piece.push_str(&composed);
}

/// Appends `c` lower-cased to `piece`. A Greek letter also loses its accents and
/// breathings, and a final sigma is a sigma: Greek written in capitals has neither ("ΚΑΦΕΣ"
/// is "καφές"), so a query in capitals would otherwise miss a tool in lower case, and the
/// other way round. The capital "İ" is "i": its dot is the one "i" has (Unicode's lower
/// case, "i" and a combining dot, would keep "İstanbul" from "istanbul").
fn push_lower(piece: &mut String, c: char) {
    if c == 'İ' {
        piece.push('i');
        return;
    }
    if keeps_marks(c) {
        piece.extend(c.to_lowercase());
        return;
    }
    for lower in c.to_lowercase() {
        decompose_canonical(lower, |part| {
            if !is_combining_mark(part) {
                piece.push(if part == 'ς' { 'σ' } else { part });
            }
        });
    }
}

/// Whether the combining marks of the letter `c` (built in, or after it) are part of its
/// word: all but a Greek letter's (see [`push_lower`]).
fn keeps_marks(c: char) -> bool {
    !matches!(u32::from(c), 0x0370..=0x03FF | 0x1F00..=0x1FFF)
}

/// Hands the terms of one word (a piece of the text, lower-cased) to `emit`: its pairs of
/// letters when it is of a script read in pairs (and its letters too for ideographs), else
/// its term.
fn emit_word(word: &str, paired: Option<PairedScript>, emit: &mut impl FnMut(&str)) {
    match paired {
        Some(PairedScript::Ideographs) => emit_pairs_and_letters(word, emit),
        Some(_) => emit_pairs(word, emit),
        None => term_of(word, emit),
    }
}

/// Hands each letter of `word` and each two neighbouring letters to `emit`, in order
/// ("天气预报" → "天", "天气", "气", "气预", "预", "预报", "报"), as Lucene's CJK bigrams with
/// unigrams do. A word of one ideograph is itself.
///
/// The pairs find a word of the query inside the tool's sentence and keep it from meeting a
/// sentence that only shares its letters ("天气", weather, against "今天", today, and
/// "空气", air); the letters find a query that is one ideograph, or whose words the tool
/// writes with other neighbours ("歌", song, in "歌曲", "歌手"). Measured on
/// tests/fixtures/tool-retrieval-cjk, pairs without the letters lost more than they won
/// (docs/PERFORMANCE.md, "Retrieval quality").
fn emit_pairs_and_letters(word: &str, emit: &mut impl FnMut(&str)) {
    let mut starts = letter_starts(word).peekable();
    while let Some(start) = starts.next() {
        let Some(&next) = starts.peek() else {
            emit(&word[start..]);
            return;
        };
        emit(&word[start..next]);
        let after_next = letter_starts(&word[next..])
            .nth(1)
            .map_or(word.len(), |end| next + end);
        emit(&word[start..after_next]);
    }
}

/// Where each letter of `word` starts: a combining mark after a letter (a variation
/// selector after an ideograph, a Thai tone mark) is part of it.
fn letter_starts(word: &str) -> impl Iterator<Item = usize> + '_ {
    word.char_indices()
        .filter(|&(_, c)| !is_combining_mark(c))
        .map(|(i, _)| i)
}

/// Hands each two neighbouring letters of `word` to `emit`, in order ("แปลง" → "แป", "ปล",
/// "ลง"), or `word` itself when it is one letter. A letter keeps the combining marks after
/// it (Thai vowel and tone marks, Myanmar vowel signs), which are not letters of their own.
///
/// A word of the query is then found inside a sentence of the tool's: its pairs are among
/// the sentence's, while a query of another word shares few or none. The pairs are not
/// stemmed or checked for stop words, which are English.
fn emit_pairs(word: &str, emit: &mut impl FnMut(&str)) {
    let mut starts = letter_starts(word);
    // A piece starts with a letter, never a mark.
    let (Some(mut first), Some(mut second)) = (starts.next(), starts.next()) else {
        emit(word);
        return;
    };
    for third in starts {
        emit(&word[first..third]);
        (first, second) = (second, third);
    }
    emit(&word[first..]);
}

/// Scripts whose runs of letters are read as overlapping pairs of letters (see
/// [`emit_pairs`], and [`emit_pairs_and_letters`] for ideographs), each a piece of its own:
/// a change of script within a run ends a piece.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum PairedScript {
    Thai,
    Lao,
    Khmer,
    Myanmar,
    Hangul,
    Katakana,
    Hiragana,
    /// Chinese and Japanese ideographs (Han), with their iteration marks and numerals.
    Ideographs,
}

/// The script `c` is read in pairs as, if any. Digits are not: a number stays whole, as it
/// does in any script. Ideographs are, numerals among them ("〇", "〡").
fn paired_script(c: char) -> Option<PairedScript> {
    if c.is_ascii() {
        return None;
    }
    if is_ideograph(c) {
        return Some(PairedScript::Ideographs);
    }
    if c.is_numeric() {
        return None;
    }
    match u32::from(c) {
        0x0E00..=0x0E7F => Some(PairedScript::Thai),
        0x0E80..=0x0EFF => Some(PairedScript::Lao),
        0x1000..=0x109F | 0xA9E0..=0xA9FF | 0xAA60..=0xAA7F => Some(PairedScript::Myanmar),
        0x1780..=0x17FF | 0x19E0..=0x19FF => Some(PairedScript::Khmer),
        // Syllables and the jamo they are made of.
        0x1100..=0x11FF | 0x3130..=0x318F | 0xA960..=0xA97F | 0xAC00..=0xD7FF => {
            Some(PairedScript::Hangul)
        }
        // With the prolonged sound mark "ー" and the iteration marks (NFKC makes half-width
        // katakana full-width).
        0x30A1..=0x30FF | 0x31F0..=0x31FF => Some(PairedScript::Katakana),
        0x3040..=0x309F => Some(PairedScript::Hiragana),
        _ => None,
    }
}

/// Whether `c` is a Chinese or Japanese ideograph (CJK ideographs, compatibility ideographs,
/// their iteration marks and numerals).
fn is_ideograph(c: char) -> bool {
    matches!(
        u32::from(c),
        0x3005..=0x3007
            | 0x3021..=0x3029
            | 0x3038..=0x303B
            | 0x3400..=0x4DBF
            | 0x4E00..=0x9FFF
            | 0xF900..=0xFAFF
            | 0x2_0000..=0x3_FFFF
    )
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
                // The script of its first letter, which all of its letters share.
                let script = piece.chars().next().and_then(super::paired_script);
                // A lower-cased capital and its marks may have a form built in.
                if piece.chars().any(is_combining_mark) {
                    *piece = piece.nfc().collect();
                }
                super::emit_word(piece, script, &mut |term: &str| out.push(term.to_owned()));
                piece.clear();
            }
        };
        use unicode_normalization::UnicodeNormalization as _;
        use unicode_normalization::char::is_combining_mark;
        let chars: Vec<char> = text.nfkc().collect();
        for (i, &c) in chars.iter().enumerate() {
            // The letter before, past the marks that belong to it.
            let before = chars[..i].iter().rev().find(|&&p| !is_combining_mark(p));
            if is_combining_mark(c) {
                if !piece.is_empty() && before.is_none_or(|&p| super::keeps_marks(p)) {
                    piece.push(c);
                }
                continue;
            }
            if !c.is_alphanumeric() {
                emit_piece(&mut piece);
                continue;
            }
            if let Some(&prev) = before
                && prev.is_alphanumeric()
            {
                let next = chars.get(i + 1).copied();
                let boundary = (prev.is_lowercase() && c.is_uppercase())
                    || (prev.is_uppercase()
                        && c.is_uppercase()
                        && next.is_some_and(char::is_lowercase))
                    || (super::paired_script(c).is_none() && prev.is_numeric() != c.is_numeric())
                    || super::paired_script(prev) != super::paired_script(c);
                if boundary {
                    emit_piece(&mut piece);
                }
            }
            super::push_lower(&mut piece, c);
        }
        emit_piece(&mut piece);
        out
    }

    proptest::proptest! {
        /// ASCII text takes a path of its own; it must split as the general one does.
        #[test]
        fn ascii_text_splits_as_any_text_does(
            text in "[a-zA-Z0-9_ .\\-]{0,40}"
        ) {
            proptest::prop_assert!(text.is_ascii());
            proptest::prop_assert_eq!(terms(&text), terms_by_index(&text));
        }

        #[test]
        fn streaming_splits_as_indexing_did(
            text in "[a-zA-Z0-9_ .\\-éÉßİǅ²٣ΣΑσςΆἈ\u{301}\u{345}\u{30a}\u{30c}\u{307}東京〇々のるターＡﬁ서울กงเ\u{e34}\u{e49}๑ວက\u{102c}ក]{0,40}"
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

    #[test]
    fn a_word_has_one_spelling_however_unicode_writes_it() {
        // "é" whole, or "e" and a combining accent (which split the word at the accent).
        assert_eq!(terms("cafe\u{301} noir"), ["café", "noir"]);
        assert_eq!(terms("cafe\u{301}"), terms("caf\u{e9}"));
        // A mark no letter has built in stays with its letter.
        assert_eq!(terms("q\u{307}x"), ["q\u{307}x"]);
        // Full-width letters and compatibility forms are their plain ones.
        assert_eq!(terms("ＡＰＩ ｋｅｙ"), terms("API key"));
        assert_eq!(terms("ﬁle²"), ["file", "2"]);
    }

    #[test]
    fn ideograph_runs_are_read_as_their_letters_and_pairs() {
        // "Weather forecast": each ideograph was a term alone, so "天气" met "今天" (today).
        assert_eq!(
            terms("天气预报"),
            ["天", "天气", "气", "气预", "预", "预报", "报"]
        );
        assert_eq!(terms("天气"), ["天", "天气", "气"]);
        // A word of one ideograph is itself; a Latin word or katakana beside one is split
        // off.
        assert_eq!(terms("歌"), ["歌"]);
        assert_eq!(terms("Rust言語"), ["rust", "言", "言語", "語"]);
        assert_eq!(terms("東京タワー"), ["東", "東京", "京", "タワ", "ワー"]);
        // The iteration mark "々" and the numeral "〇" stay in their run.
        assert_eq!(terms("時々"), ["時", "時々", "々"]);
        assert_eq!(terms("二〇二"), ["二", "二〇", "〇", "〇二", "二"]);
        // A variation selector stays with its ideograph.
        assert_eq!(
            terms("葛\u{e0100}城"),
            ["葛\u{e0100}", "葛\u{e0100}城", "城"]
        );
    }

    #[test]
    fn hiragana_ends_an_ideograph_run_and_is_read_in_pairs() {
        // Particles ("の", "を") and inflections ("します") are hiragana between the
        // ideographs of Japanese words.
        assert_eq!(
            terms("東京の天気"),
            ["東", "東京", "京", "の", "天", "天気", "気"]
        );
        assert_eq!(terms("検索します"), ["検", "検索", "索", "しま", "ます"]);
        // A word written in hiragana meets itself inside a longer run.
        assert_eq!(terms("ごみの"), ["ごみ", "みの"]);
        assert_eq!(terms("ごみ"), ["ごみ"]);
    }

    #[test]
    fn greek_in_capitals_meets_greek_in_lower_case() {
        // Capitals are written without accents, and a final sigma is a sigma.
        assert_eq!(terms("ΚΑΦΕΣ"), terms("καφές"));
        assert_eq!(terms("ΟΔΟΣ"), ["οδοσ"]);
        assert_eq!(terms("Ά"), terms("α"));
        assert_eq!(terms("ΐ"), ["ι"]);
        // Polytonic breathings and a mark no letter has built in go as well.
        assert_eq!(terms("ἈΛΉΘΕΙΑ"), terms("αλήθεια"));
        assert_eq!(terms("ᾳ"), ["α"]);
        assert_eq!(terms("α\u{304}\u{301}"), ["α"]);
        // A Latin letter keeps its accent.
        assert_eq!(terms("Café"), ["café"]);
    }

    #[test]
    fn a_capital_with_a_mark_meets_its_lower_case_letter() {
        // "W" and "J" have no form built in with these marks; "w" and "j" have.
        assert_eq!(terms("W\u{30a}"), terms("\u{1e98}"));
        assert_eq!(terms("J\u{30c}ONES"), terms("\u{1f0}ones"));
        assert_eq!(terms("J\u{30c}"), ["\u{1f0}"]);
        // The dot of "İ" is the one "i" has.
        assert_eq!(terms("İstanbul"), terms("istanbul"));
        assert_eq!(terms("İSTANBUL"), terms("istanbul"));
        // A lower-case letter's mark stays as it was.
        assert_eq!(terms("q\u{307}x"), ["q\u{307}x"]);
        assert_eq!(terms("Q\u{307}X"), ["q\u{307}x"]);
    }

    #[test]
    fn thai_lao_khmer_and_myanmar_runs_are_read_in_pairs_of_letters() {
        // "Convert currency": a sentence of words without spaces, once one term.
        assert_eq!(terms("แปลงสกุล"), ["แป", "ปล", "ลง", "งส", "สกุ", "กุล"]);
        // A vowel or tone mark stays with its letter; a word of one letter is itself.
        assert_eq!(terms("เงิน"), ["เงิ", "งิน"]);
        assert_eq!(terms("ก"), ["ก"]);
        // A change of script, or a number, ends a run.
        assert_eq!(terms("APIของเงิน"), ["api", "ขอ", "อง", "งเ", "เงิ", "งิน"]);
        assert_eq!(terms("ราคา๒๕"), ["รา", "าค", "คา", "๒๕"]);
        assert_eq!(terms("ສະບາຍດີ"), ["ສະ", "ະບ", "ບາ", "າຍ", "ຍດີ"]);
        assert_eq!(terms("ភាសាខ្មែរ"), ["ភាសា", "សាខ្", "ខ្មែ", "មែរ"]);
        assert_eq!(terms("မြန်မာ"), ["မြန်", "န်မာ"]);
    }

    #[test]
    fn hangul_runs_are_read_in_pairs_of_syllables() {
        // A particle stays on its word: "Seoul" with a topic particle was one term.
        assert_eq!(terms("서울은"), ["서울", "울은"]);
        assert_eq!(terms("서울 날씨"), ["서울", "날씨"]);
        assert_eq!(terms("물"), ["물"]);
        assert_eq!(terms("KTX열차"), ["ktx", "열차"]);
    }

    #[test]
    fn katakana_runs_are_read_in_pairs() {
        // "Database" was one term, which the query "データ" (data) did not meet.
        assert_eq!(
            terms("データベース"),
            ["デー", "ータ", "タベ", "ベー", "ース"]
        );
        assert_eq!(terms("データ"), ["デー", "ータ"]);
        // Half-width katakana is full-width; a hiragana or an ideograph ends a run.
        assert_eq!(terms("ﾃﾞｰﾀ"), terms("データ"));
        assert_eq!(terms("データを送る"), ["デー", "ータ", "を", "送", "る"]);
    }

    #[test]
    fn long_words_are_not_kept_in_the_memo() {
        // A model's query of runs of thousands of letters, each a word: kept, they held their
        // memory (and their stems') in the thread's memo until it filled, 65,536 words later.
        let heap = || {
            super::MEMO.with(|memo| {
                memo.borrow()
                    .iter()
                    .map(|(word, term)| {
                        word.heap_bytes() + term.as_ref().map_or(0, |term| term.heap_bytes())
                    })
                    .sum::<usize>()
            })
        };
        let before = heap();
        for i in 0..200 {
            let word = format!("{}{}", "q".repeat(10_000), "x".repeat(i));
            assert_eq!(terms(&word).len(), 1);
        }
        let kept = heap().saturating_sub(before);
        assert!(kept < 100_000, "{kept} bytes kept");
        // They are analysed as before: stemmed, or dropped as stop words are (none is long).
        let long = format!("{}ing", "walk".repeat(100));
        assert_eq!(terms(&long), ["walk".repeat(100)]);
    }

    #[test]
    fn long_ascii_words_with_capitals_are_lower_cased_too() {
        let long = format!("X{}", "y".repeat(40));
        let mut expected = Vec::new();
        super::term_of(&long.to_ascii_lowercase(), &mut |t: &str| {
            expected.push(t.to_owned())
        });
        assert_eq!(terms(&long), expected);
        assert_eq!(terms("ABC"), terms("abc"));
        assert_eq!(terms("__"), Vec::<String>::new());
    }
}
