//! One pass over JSON text before it is parsed: how deeply it nests and how many values it
//! holds, each against a bound.
//!
//! A byte bound does not bound what text becomes once parsed: nesting is recursion in a
//! parser, and each value is 80 bytes or more as a `serde_json::Value` (more again in serde's
//! buffer for an untagged enum, which rmcp's messages are) however short its text. Text
//! handed to a parser that is not ours (rmcp's) can only be bounded this way, by looking at
//! its bytes first; [`value_from_slice`](crate::value_from_slice) bounds the values of what
//! Toolsmith parses itself.

use std::fmt;

use super::serde_private_keys::is_written_private_key;

/// The first bound JSON text goes past, found by [`json_text_excess`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum JsonTextExcess {
    /// Brackets nest deeper than `max_depth`; `at` is the byte offset of the first bracket
    /// too deep.
    TooDeep {
        /// The byte offset of the bracket.
        at: usize,
        /// The bound it went past.
        max_depth: usize,
    },
    /// The text holds more than `max_values` values; `at` is the byte offset at which the
    /// count went past it (a `,`, or the bracket that closes a container).
    TooManyValues {
        /// The byte offset where the count went past the bound.
        at: usize,
        /// The bound it went past.
        max_values: usize,
    },
    /// An object's key is one of serde_json's private keys ([`SERDE_JSON_PRIVATE_KEYS`]),
    /// which serde_json would read as JSON text of its own, beyond both bounds; `at` is the
    /// byte offset of its opening quote. (A string value that spells one is a string.)
    ///
    /// [`SERDE_JSON_PRIVATE_KEYS`]: crate::SERDE_JSON_PRIVATE_KEYS
    PrivateKey {
        /// The byte offset of the string's opening quote.
        at: usize,
    },
}

impl fmt::Display for JsonTextExcess {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::TooDeep { at, max_depth } => {
                write!(f, "nests deeper than {max_depth} levels (at byte {at})")
            }
            Self::TooManyValues { at, max_values } => {
                write!(f, "holds more than {max_values} values (at byte {at})")
            }
            Self::PrivateKey { at } => write!(
                f,
                "holds a key serde_json keeps for itself, `$serde_json::private::…` (at byte \
                 {at}), which it would read as JSON of its own"
            ),
        }
    }
}

impl std::error::Error for JsonTextExcess {}

/// Where JSON (or JSON5) text first goes past `max_depth` levels of nesting or `max_values`
/// values, or holds an object keyed with one of serde_json's private keys (which serde_json
/// would read as JSON of its own, beyond both: [`SERDE_JSON_PRIVATE_KEYS`]), or `None`: one
/// scan of its bytes, building nothing. A string that spells such a key as a value (before
/// a `,`, a `]`, a `}` or the text's end) is not refused: serde_json reads it as a string.
///
/// [`SERDE_JSON_PRIVATE_KEYS`]: crate::SERDE_JSON_PRIVATE_KEYS
///
/// Values are counted as [`value_from_slice`](crate::value_from_slice) counts them (arrays,
/// objects, strings, numbers, booleans and nulls, each once wherever it nests; an object's
/// keys are not values): for valid JSON, one, plus one for each `,` outside strings, plus one
/// for each array or object that holds anything, so a count past the bound is found at the
/// byte that made it. Depth is counted as [`json_text_too_deep`](crate::json_text_too_deep)
/// counts it, in the same pass.
///
/// ```
/// use toolsmith::{JsonTextExcess, json_text_excess};
///
/// let text = br#"{"a": [1, "[,[,"], "b": {}}"#;
/// assert_eq!(json_text_excess(text, 2, 5), None);
/// assert_eq!(
///     json_text_excess(text, 2, 4),
///     Some(JsonTextExcess::TooManyValues { at: 26, max_values: 4 })
/// );
/// assert_eq!(
///     json_text_excess(br#"{"a": [[1]]}"#, 2, 100),
///     Some(JsonTextExcess::TooDeep { at: 7, max_depth: 2 })
/// );
/// ```
///
/// Strings (either quote, with escapes) and comments (`//` and `/* */`) are read as the
/// JSON5 reader reads them; where JSON and this scan could disagree (a `'`, a `/`, a
/// trailing comma), a JSON parser stops with an error at that byte, having built no more
/// than was counted before it.
pub fn json_text_excess(
    text: &[u8],
    max_depth: usize,
    max_values: usize,
) -> Option<JsonTextExcess> {
    scan(text, max_depth, max_values, true)
}

/// [`json_text_excess`], private keys looked for only when `private_keys` (the depth alone
/// is asked by [`json_text_too_deep`](crate::json_text_too_deep)).
pub(crate) fn scan(
    text: &[u8],
    max_depth: usize,
    max_values: usize,
    private_keys: bool,
) -> Option<JsonTextExcess> {
    #[derive(Clone, Copy)]
    enum State {
        Json,
        /// In a string opened by this quote; `true` right after a backslash.
        Str(u8, bool),
        LineComment,
        /// In a block comment; `true` right after a `*` that may close it.
        BlockComment(bool),
    }
    let bytes = text;
    let mut depth = 0usize;
    // The root; each `,` adds one, and each container that held anything when it closes.
    let mut values = 1usize;
    // Whether nothing but whitespace (or comments) came since the last `[` or `{`: a
    // container closed then is empty, and was counted as a value where it stands.
    let mut just_opened = false;
    let mut state = State::Json;
    // The string being read: where its text starts, and whether it holds a backslash.
    let mut string_start = 0;
    let mut string_escaped = false;
    let mut at = 0;
    while let Some(&byte) = bytes.get(at) {
        at += 1;
        state = match state {
            State::Str(quote, true) => State::Str(quote, false),
            State::Str(quote, false) => match byte {
                b'\\' => {
                    string_escaped = true;
                    State::Str(quote, true)
                }
                _ if byte == quote => {
                    let raw = &bytes[string_start..at - 1];
                    if private_keys
                        && is_written_private_key(raw, string_escaped)
                        && may_be_a_key(&bytes[at..])
                    {
                        return Some(JsonTextExcess::PrivateKey {
                            at: string_start - 1,
                        });
                    }
                    State::Json
                }
                _ => {
                    // Straight to the string's next quote or backslash: strings are most of
                    // a message's bytes (a tool's text result), and byte by byte this scan
                    // took longer than serde_json's parse of them.
                    at += memchr::memchr2(quote, b'\\', &bytes[at..]).unwrap_or(bytes.len() - at);
                    state
                }
            },
            // The line terminators of JSON5: `\n`, `\r`, U+2028 and U+2029.
            State::LineComment if matches!(byte, b'\n' | b'\r') => State::Json,
            State::LineComment
                if byte == 0xE2 && matches!(bytes.get(at..at + 2), Some([0x80, 0xA8 | 0xA9])) =>
            {
                at += 2;
                State::Json
            }
            State::LineComment => state,
            State::BlockComment(true) if byte == b'/' => State::Json,
            State::BlockComment(_) => State::BlockComment(byte == b'*'),
            State::Json => match byte {
                b'"' | b'\'' => {
                    just_opened = false;
                    string_start = at;
                    string_escaped = false;
                    State::Str(byte, false)
                }
                b'/' if bytes.get(at) == Some(&b'/') => {
                    at += 1;
                    State::LineComment
                }
                b'/' if bytes.get(at) == Some(&b'*') => {
                    at += 1;
                    State::BlockComment(false)
                }
                b'[' | b'{' => {
                    depth += 1;
                    if depth > max_depth {
                        return Some(JsonTextExcess::TooDeep {
                            at: at - 1,
                            max_depth,
                        });
                    }
                    just_opened = true;
                    state
                }
                b']' | b'}' => {
                    depth = depth.saturating_sub(1);
                    if !just_opened {
                        values += 1;
                        if values > max_values {
                            return Some(JsonTextExcess::TooManyValues {
                                at: at - 1,
                                max_values,
                            });
                        }
                    }
                    just_opened = false;
                    state
                }
                b',' => {
                    values += 1;
                    if values > max_values {
                        return Some(JsonTextExcess::TooManyValues {
                            at: at - 1,
                            max_values,
                        });
                    }
                    just_opened = false;
                    state
                }
                b' ' | b'\t' | b'\n' | b'\r' => state,
                _ => {
                    just_opened = false;
                    state
                }
            },
        };
    }
    None
}

/// Whether a string followed by `rest` may be an object's key: it is, unless what follows it,
/// past ASCII whitespace, ends a value (`,`, `]`, `}`, or the text's end). serde_json reads
/// a private key as JSON of its own only where it is a key; as a value it is a string like
/// any other, which `value_from_slice` keeps too. Anything else after it (`:`, a comment,
/// JSON5's other spaces) counts as a key, so that no key passes.
fn may_be_a_key(rest: &[u8]) -> bool {
    let next = rest
        .iter()
        .find(|byte| !matches!(byte, b' ' | b'\t' | b'\n' | b'\r'));
    !matches!(next, None | Some(b',' | b']' | b'}'))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{MAX_JSON_VALUES, value_from_str};

    /// The values of `text` as the scan counts them: the smallest bound it stays within.
    fn counted(text: &str) -> usize {
        (1..=64)
            .find(|&max| json_text_excess(text.as_bytes(), 100, max).is_none())
            .unwrap()
    }

    /// Every value of a `Value`, as `value_from_slice` counts them.
    fn values_in(value: &serde_json::Value) -> usize {
        1 + match value {
            serde_json::Value::Array(items) => items.iter().map(values_in).sum(),
            serde_json::Value::Object(map) => map.values().map(values_in).sum(),
            _ => 0,
        }
    }

    #[test]
    fn counts_the_values_a_reader_builds() {
        for text in [
            "1",
            "\"a\"",
            "[]",
            "{}",
            "[[]]",
            "[[], [ ], {}, { }]",
            "[1, [2, 3], {\"a\": [], \"b\": {\"c\": null}}]",
            " { \"a,b\" : \"[1,2]\" , \"c\\\",\" : [ true , false ] } ",
            "[\"\\\\\", \",\"]",
        ] {
            let value = value_from_str(text).unwrap();
            assert_eq!(counted(text), values_in(&value), "{text}");
        }
    }

    #[test]
    fn refuses_past_the_bound_where_the_reader_does() {
        // The outer array is one value: its items may be one fewer than the bound.
        let items = |count: usize| format!("[{}0]", "0,".repeat(count - 1));
        let within = items(MAX_JSON_VALUES - 1);
        assert_eq!(
            json_text_excess(within.as_bytes(), 128, MAX_JSON_VALUES),
            None
        );
        assert!(value_from_str(&within).is_ok());
        let past = items(MAX_JSON_VALUES);
        assert_eq!(
            json_text_excess(past.as_bytes(), 128, MAX_JSON_VALUES),
            Some(JsonTextExcess::TooManyValues {
                at: past.len() - 1,
                max_values: MAX_JSON_VALUES
            })
        );
        assert!(value_from_str(&past).is_err());
        // Empty containers count once each, not twice.
        let empties = format!("[{}[]]", "[],".repeat(MAX_JSON_VALUES - 2));
        assert_eq!(
            json_text_excess(empties.as_bytes(), 128, MAX_JSON_VALUES),
            None
        );
        assert!(value_from_str(&empties).is_ok());
    }

    #[test]
    fn names_the_bound_and_the_byte() {
        let deep = JsonTextExcess::TooDeep {
            at: 7,
            max_depth: 2,
        };
        assert_eq!(deep.to_string(), "nests deeper than 2 levels (at byte 7)");
        let many = JsonTextExcess::TooManyValues {
            at: 9,
            max_values: 4,
        };
        assert_eq!(many.to_string(), "holds more than 4 values (at byte 9)");
        // Depth is found first when it comes first.
        assert_eq!(
            json_text_excess(b"[[[1,2,3]]]", 2, 2),
            Some(JsonTextExcess::TooDeep {
                at: 2,
                max_depth: 2
            })
        );
    }

    #[test]
    fn finds_serde_jsons_private_keys_however_written() {
        // Strings nested in strings, each read anew by serde_json: the brackets the scan
        // counts never pass the bound, however deep the value serde_json would build.
        let mut text = "1".to_owned();
        for _ in 0..12 {
            let quoted = serde_json::to_string(&text).unwrap();
            text = format!(
                "{}{{\"$serde_json::private::RawValue\":{quoted}}}{}",
                "[".repeat(60),
                "]".repeat(60)
            );
        }
        assert_eq!(
            json_text_excess(text.as_bytes(), 64, usize::MAX),
            Some(JsonTextExcess::PrivateKey { at: 61 })
        );
        let escaped = br#"{"a": 1, "\u0024serde_json::private::Number": "1"}"#;
        assert_eq!(
            json_text_excess(escaped, 64, 100),
            Some(JsonTextExcess::PrivateKey { at: 9 })
        );
        // Not a key of serde_json's: a longer or shorter string, or one cut by the text's end.
        for text in [
            &br#"{"$serde_json::private::RawValue2": 1}"#[..],
            br#"{"serde_json::private::RawValue": 1}"#,
            br#"["$serde_json::private::RawValue"#,
        ] {
            assert_eq!(json_text_excess(text, 64, 100), None);
        }
        // The depth alone, as `json_text_too_deep` asks it, does not look for them.
        assert_eq!(crate::json_text_too_deep(escaped, 64), None);
        // A key however it is followed, where a key can be: spaced, or (taken for one) before
        // a comment or JSON5's other spaces; single-quoted as JSON5 writes it.
        for (text, at) in [
            (&br#"{"$serde_json::private::Number" : "1"}"#[..], 1),
            (
                br#"{"a": 1, "$serde_json::private::RawValue"/* c */: "1"}"#,
                9,
            ),
            (
                "{\"$serde_json::private::Number\"\u{a0}: \"1\"}".as_bytes(),
                1,
            ),
            (br#"{'$serde_json::private::RawValue': '1'}"#, 1),
        ] {
            assert_eq!(
                json_text_excess(text, 64, 100),
                Some(JsonTextExcess::PrivateKey { at }),
                "{}",
                String::from_utf8_lossy(text)
            );
        }
    }

    #[test]
    fn a_string_value_that_spells_a_private_key_is_a_string() {
        // serde_json reads such a key as JSON of its own only as a key: as a value (before a
        // `,`, `]`, `}` or the end) it is a string, which `value_from_str` reads too.
        for text in [
            r#""$serde_json::private::Number""#,
            r#"["$serde_json::private::RawValue", 1]"#,
            r#"{"text": "$serde_json::private::Number"}"#,
            "{\"text\": \"\\u0024serde_json::private::RawValue\" \r\n\t}",
            r#"{"a": ['$serde_json::private::Number' ]}"#,
        ] {
            assert_eq!(json_text_excess(text.as_bytes(), 64, 100), None, "{text}");
            if !text.contains('\'') {
                assert!(value_from_str(text).is_ok(), "{text}");
            }
        }
    }
}
