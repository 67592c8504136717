//! Reading the JSON that models write, repairing the common faults: trailing commas, single
//! quotes, unquoted keys and comments (through the `json5` crate, a conservative superset of
//! JSON), a Markdown code fence around it, and a truncated end (missing closing braces and
//! brackets).
//!
//! Repair stays conservative on purpose: a value that would need guessing (a truncated
//! string, a missing value, stray text) is not repaired, because a tool run on invented
//! arguments is worse than an error the model can correct. Crates that repair everything
//! (`jsonrepair`, `llm_json`) were evaluated and turn such input into made-up values
//! (`{"a": }` into `{"a": ""}`); `json5` covers the syntax faults, and the two structural
//! repairs (fences, closing brackets) are small enough to write here.
//!
//! Text nested deeper than [`MAX_JSON_DEPTH`](crate::MAX_JSON_DEPTH) is refused before any
//! repair: serde_json stops at its own recursion limit, but the JSON5 reader recurses once
//! per level with no limit, and deep enough text would overflow the stack. Text of more
//! than [`MAX_JSON_VALUES`](crate::MAX_JSON_VALUES) values is refused by either reader, as
//! it reads: each value takes 80 bytes or more as a `Value` however short its text.

use serde_json::Value;

use crate::tool::bounded_json::{BoundedValue, value_from_str};
use crate::tool::nesting::{TooDeep, check_text_depth};

/// JSON that could not be read even after repair; the message is the parser's, for the
/// original text, or says that the text nests too deeply.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct BrokenJson {
    /// What the JSON parser said about the text as it was sent, or "nested deeper than 128
    /// levels".
    pub message: String,
    /// Whether the text nests arrays and objects deeper than
    /// [`MAX_JSON_DEPTH`](crate::MAX_JSON_DEPTH): it was refused unread, however well
    /// formed.
    pub too_deep: bool,
}

impl From<TooDeep> for BrokenJson {
    fn from(too_deep: TooDeep) -> Self {
        Self {
            message: too_deep.to_string(),
            too_deep: true,
        }
    }
}

/// Parses JSON written by a model, repairing the common faults.
///
/// ```
/// use toolsmith::provider::repair_json;
/// use serde_json::json;
///
/// assert_eq!(repair_json(r#"{"a": 1, "b": [1, 2,],}"#).unwrap(), json!({"a": 1, "b": [1, 2]}));
/// assert_eq!(repair_json("{'path': 'a.txt'}").unwrap(), json!({"path": "a.txt"}));
/// assert_eq!(repair_json("{path: \"a.txt\", limit: 3}").unwrap(), json!({"path": "a.txt", "limit": 3}));
/// assert_eq!(repair_json("```json\n{\"a\": 1}\n```").unwrap(), json!({"a": 1}));
/// assert_eq!(repair_json(r#"{"a": {"b": [1, 2"#).unwrap(), json!({"a": {"b": [1, 2]}}));
///
/// let err = repair_json(r#"{"a": }"#).unwrap_err();
/// assert_eq!(err.to_string(), "expected value at line 1 column 7");
///
/// // Nesting deeper than MAX_JSON_DEPTH is refused, well formed or not.
/// let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
/// let err = repair_json(&deep).unwrap_err();
/// assert!(err.too_deep);
/// assert_eq!(err.to_string(), "nested deeper than 128 levels");
/// ```
pub fn repair_json(text: &str) -> Result<Value, BrokenJson> {
    let original = match value_from_str(text) {
        // serde_json refuses text deeper than its recursion limit, so this value is within
        // MAX_JSON_DEPTH; and holding more than MAX_JSON_VALUES values.
        Ok(value) => return Ok(value),
        Err(err) => err,
    };
    let unfenced = strip_fence(text.trim());
    // Before the JSON5 reader, which has no limit, and on the very text it reads (a fence's
    // language tag is not part of it). `close_truncated` only appends the brackets that
    // close those open at the end, so this bounds what the reader walks in both attempts.
    check_text_depth(unfenced)?;
    if let Some(value) = parse_lenient(unfenced) {
        return Ok(value);
    }
    if let Some(closed) = close_truncated(unfenced)
        && let Some(value) = parse_lenient(&closed)
    {
        return Ok(value);
    }
    Err(BrokenJson {
        message: original.to_string(),
        too_deep: false,
    })
}

fn parse_lenient(text: &str) -> Option<Value> {
    value_from_str(text).ok().or_else(|| {
        json5::from_str::<BoundedValue>(text)
            .ok()
            .map(|read| read.0)
    })
}

/// The content of a Markdown code fence (```` ```json … ``` ````), or the text itself. An
/// opening fence whose closing fence was cut off counts too.
pub(crate) fn strip_fence(text: &str) -> &str {
    let Some(rest) = text
        .strip_prefix("```")
        .or_else(|| text.strip_prefix("~~~"))
    else {
        return text;
    };
    // The rest of the opening line is the language tag.
    let body = rest.split_once('\n').map_or("", |(_, body)| body);
    let body = body.trim_end();
    body.strip_suffix("```")
        .or_else(|| body.strip_suffix("~~~"))
        .unwrap_or(body)
        .trim()
}

/// `text` with the closing brackets it lacks appended, when it was cut off between values;
/// `None` when nothing is missing or when it ends inside a string or after a key.
fn close_truncated(text: &str) -> Option<String> {
    let mut expected: Vec<char> = Vec::new();
    let mut quote: Option<char> = None;
    let mut escaped = false;
    for ch in text.chars() {
        if let Some(q) = quote {
            if escaped {
                escaped = false;
            } else if ch == '\\' {
                escaped = true;
            } else if ch == q {
                quote = None;
            }
            continue;
        }
        match ch {
            '"' | '\'' => quote = Some(ch),
            '{' => expected.push('}'),
            '[' => expected.push(']'),
            // The guard pops the bracket this one closes; a mismatch is not a truncation.
            '}' | ']' if expected.pop() != Some(ch) => return None,
            _ => {}
        }
    }
    if quote.is_some() || expected.is_empty() {
        return None;
    }
    let mut closed = text.trim_end().to_owned();
    if closed.ends_with(':') {
        return None;
    }
    if closed.ends_with(',') {
        closed.pop();
    }
    closed.extend(expected.iter().rev());
    Some(closed)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn repairs_common_faults() {
        let cases = [
            (r#"{"a": 1,}"#, json!({"a": 1})),
            (r#"[1, 2, 3,]"#, json!([1, 2, 3])),
            (r#"{'a': 'it\'s'}"#, json!({"a": "it's"})),
            (r#"{a: 1, b_c: "x"}"#, json!({"a": 1, "b_c": "x"})),
            ("```\n{\"a\": 1}\n```", json!({"a": 1})),
            ("```json\n{\"a\": 1}", json!({"a": 1})),
            (r#"{"a": [{"b": 1}, {"c": "}"#, json!(null)),
            (
                r#"{"a": [{"b": 1}, {"c": "x"}"#,
                json!({"a": [{"b": 1}, {"c": "x"}]}),
            ),
            (r#"{"a": 1,"#, json!({"a": 1})),
            ("{\"a\": 1 // the count\n}", json!({"a": 1})),
        ];
        for (text, expected) in cases {
            match repair_json(text) {
                Ok(value) => assert_eq!(value, expected, "{text}"),
                Err(err) => assert!(expected.is_null(), "{text}: {err}"),
            }
        }
    }

    #[test]
    fn numbers_json_cannot_hold_are_refused_not_read_as_null() {
        for text in [
            r#"{"limit": 1e400}"#,
            r#"{"limit": -1e400}"#,
            r#"{"limit": NaN}"#,
            r#"{"limit": Infinity}"#,
            r#"{"limit": -Infinity}"#,
            r#"{"page": {"sizes": [1, 2, 1e999]}}"#,
            "{limit: NaN,}",
        ] {
            let error = repair_json(text).unwrap_err();
            assert!(!error.too_deep, "{text}");
        }
        // What JSON5 reads that JSON can hold is still repaired, to the same values.
        assert_eq!(
            repair_json("{limit: 1.5e3, big: 1e300, neg: -0.25, hex: 0x10,}").unwrap(),
            json!({"limit": 1500.0, "big": 1e300, "neg": -0.25, "hex": 16})
        );
        assert_eq!(
            repair_json("{'a': [null, true, 'x'], 'b': {'c': -7}}").unwrap(),
            json!({"a": [null, true, "x"], "b": {"c": -7}})
        );
    }

    #[test]
    fn refuses_text_nested_too_deep_before_the_json5_reader() {
        use crate::MAX_JSON_DEPTH;
        use crate::tool::nesting::testing::on_small_stack;
        on_small_stack(|| {
            let deep = "[".repeat(10_000);
            // Every way the text reaches the JSON5 reader: as it is, fenced, with a comment
            // holding a quote (which must not hide the brackets after it), cut off.
            for text in [
                format!("{deep}1{}", "]".repeat(10_000)),
                format!("```json\n{deep}1\n```"),
                format!("[// it's\n{deep}"),
                format!("[/* \" */{deep}"),
                // The fence's language tag is not read: a quote there hides nothing.
                format!("```'\n{deep}"),
                format!("~~~\"json\n{deep}1\n~~~"),
                deep.clone(),
            ] {
                let err = repair_json(&text).unwrap_err();
                assert!(err.too_deep, "{err}");
                assert_eq!(
                    err.message,
                    format!("nested deeper than {MAX_JSON_DEPTH} levels")
                );
            }
            // At the limit, repaired as before.
            let at_limit = format!("{}1,", "[".repeat(MAX_JSON_DEPTH));
            assert!(repair_json(&at_limit).is_ok());
            let err = repair_json(r#"{"a": }"#).unwrap_err();
            assert!(!err.too_deep);
        });
    }

    #[test]
    fn refuses_more_values_than_the_bound_in_either_reader() {
        use crate::MAX_JSON_VALUES;
        let zeros = "0,".repeat(MAX_JSON_VALUES);
        // Well formed: serde_json's reading stops at the bound.
        let error = repair_json(&format!("[{zeros}0]")).unwrap_err();
        assert!(
            error
                .message
                .starts_with("the JSON holds more than 2097152 values"),
            "{}",
            error.message
        );
        // A trailing comma and unquoted key: the JSON5 reader's stops there too.
        assert!(repair_json(&format!("{{a: [{zeros}],}}")).is_err());
        // Within it, both read.
        let within = "0,".repeat(1_000);
        assert!(repair_json(&format!("{{a: [{within}],}}")).is_ok());
    }

    #[test]
    fn refuses_what_would_need_guessing() {
        for text in [
            r#"{"a": }"#,
            r#"{"a": "cut off"#,
            r#"{"a":"#,
            "not json at all",
            r#"{"a": 1}}"#,
            "",
        ] {
            let err = repair_json(text).unwrap_err();
            assert!(err.message.contains("line 1"), "{text}: {err}");
        }
    }

    #[test]
    fn serde_jsons_private_keys_are_not_read_as_other_json() {
        // serde_json would read the string as the arguments' value: `{"data": [1]}`, which
        // the model did not write; also written as JSON5, which is read by the same visitor.
        for text in [
            r#"{"data": {"$serde_json::private::RawValue": "[1]"}}"#,
            r#"{data: {'$serde_json::private::RawValue': '[1]'}}"#,
        ] {
            assert!(repair_json(text).is_err(), "{text}");
        }
    }
}
