//! [`JsonText`]: a structured result already written as JSON text.

use std::fmt;
use std::sync::Arc;

use serde::de::{Error as _, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

use crate::MAX_JSON_DEPTH;
use crate::tool::nesting::{check_depth, json_text_too_deep};
use crate::tool::text_scan::{JsonTextExcess, json_text_excess};

/// The deepest nesting serde_json reads into a [`Value`] (its recursion limit stops at the
/// 128th level).
const READABLE_DEPTH: usize = MAX_JSON_DEPTH - 1;

/// The error for text or a value nested deeper than [`READABLE_DEPTH`].
fn too_deep() -> serde_json::Error {
    serde_json::Error::custom(format!("nested deeper than {READABLE_DEPTH} levels"))
}

/// One JSON value, held as its text.
///
/// A result whose JSON is written once and given many times (or assembled from pieces
/// written beforehand) is cheaper as text than as a [`Value`]: a `Value` cannot share a
/// subtree, so every result would copy its parts into a new tree and free it again, where
/// the text is handed on as it is (cloning a `JsonText` shares it). `shed` answers this way.
///
/// The text always parses back into a `Value` ([`to_value`](Self::to_value)): it is checked
/// when made, and so nests no deeper than serde_json reads (127 levels, one less than
/// [`MAX_JSON_DEPTH`]). It is kept exactly as given, whitespace
/// included.
///
/// ```
/// use serde_json::json;
/// use toolsmith::{JsonText, ToolCallResult};
///
/// let text = JsonText::new(r#"{"sum":3}"#).unwrap();
/// assert_eq!(text.to_value(), json!({"sum": 3}));
/// let result = ToolCallResult::json_text(text);
/// assert_eq!(result.content.to_text(), r#"{"sum":3}"#);
/// assert!(JsonText::new("{\"sum\":").is_err());
/// ```
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct JsonText(Arc<str>);

impl JsonText {
    /// `text`, once checked to be one JSON value that serde_json reads back (as the
    /// value it says: no object keyed with one of serde_json's private keys, which it would
    /// read as other JSON, [`SERDE_JSON_PRIVATE_KEYS`](crate::SERDE_JSON_PRIVATE_KEYS)).
    pub fn new(text: impl Into<Arc<str>>) -> Result<Self, serde_json::Error> {
        let text = text.into();
        // Reads the text as a `Value` would be read, without building one; nesting is
        // bounded by a byte scan.
        serde_json::from_str::<Readable>(&text)?;
        match json_text_excess(text.as_bytes(), READABLE_DEPTH, usize::MAX) {
            None => Ok(Self(text)),
            Some(JsonTextExcess::TooDeep { .. }) => Err(too_deep()),
            Some(other) => Err(serde_json::Error::custom(format_args!("the JSON {other}"))),
        }
    }

    /// The text of `value`, written compactly (as `value.to_string()`); an error when it
    /// nests deeper than serde_json reads back.
    pub fn from_value(value: &Value) -> Result<Self, serde_json::Error> {
        // Measured first: writing a value recurses once per level.
        if check_depth(value).is_err() {
            return Err(too_deep());
        }
        Self::new(value.to_string())
    }

    /// Text that Toolsmith wrote itself from serialized pieces, nesting no deeper than
    /// serde_json reads: not parsed again.
    pub(crate) fn written(text: &str) -> Self {
        debug_assert!(
            serde_json::from_str::<Readable>(text).is_ok()
                && json_text_too_deep(text.as_bytes(), READABLE_DEPTH).is_none(),
            "{text}"
        );
        Self(Arc::from(text))
    }

    /// The JSON text.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The value the text is, parsed on each call.
    pub fn to_value(&self) -> Value {
        serde_json::from_str(&self.0).expect("a JsonText is checked to parse when made")
    }
}

/// A JSON value read as [`Value`] reads it (`deserialize_any`: every number converted, every
/// string's escapes decoded), and dropped as it is read. Unlike serde's `IgnoredAny`, which
/// serde_json skips without converting, it refuses what a `Value` refuses: numbers out of
/// `f64`'s range (`1e400`) and lone surrogate escapes (`"\ud800"`).
struct Readable;

impl<'de> Deserialize<'de> for Readable {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(Readable)
    }
}

impl<'de> Visitor<'de> for Readable {
    type Value = Readable;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E>(self, _: bool) -> Result<Readable, E> {
        Ok(Readable)
    }

    fn visit_i64<E>(self, _: i64) -> Result<Readable, E> {
        Ok(Readable)
    }

    fn visit_u64<E>(self, _: u64) -> Result<Readable, E> {
        Ok(Readable)
    }

    fn visit_f64<E>(self, _: f64) -> Result<Readable, E> {
        Ok(Readable)
    }

    fn visit_str<E>(self, _: &str) -> Result<Readable, E> {
        Ok(Readable)
    }

    fn visit_unit<E>(self) -> Result<Readable, E> {
        Ok(Readable)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Readable, A::Error> {
        while seq.next_element::<Readable>()?.is_some() {}
        Ok(Readable)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Readable, A::Error> {
        while map.next_entry::<Readable, Readable>()?.is_some() {}
        Ok(Readable)
    }
}

impl fmt::Display for JsonText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl fmt::Debug for JsonText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("JsonText").field(&&*self.0).finish()
    }
}

/// Serialized as the value it is (not as a string), so that it reads back as that value.
impl Serialize for JsonText {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        // Parsed first so that every serializer, not only serde_json's, gets the value.
        let value: Value = serde_json::from_str(&self.0).map_err(serde::ser::Error::custom)?;
        value.serialize(serializer)
    }
}

/// Any JSON value, kept as its compact text.
impl<'de> Deserialize<'de> for JsonText {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(deserializer)?;
        Self::from_value(&value).map_err(D::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::JsonText;
    use crate::tool::nesting::testing::nested;

    #[test]
    fn keeps_the_text_and_parses_back() {
        let text = JsonText::new("{ \"a\": [1, 2] }").unwrap();
        assert_eq!(text.as_str(), "{ \"a\": [1, 2] }");
        assert_eq!(text.to_string(), "{ \"a\": [1, 2] }");
        assert_eq!(text.to_value(), json!({"a": [1, 2]}));
        assert_eq!(
            JsonText::from_value(&json!({"a": [1, 2]}))
                .unwrap()
                .as_str(),
            r#"{"a":[1,2]}"#
        );
    }

    #[test]
    fn refuses_what_is_not_one_json_value() {
        for text in ["", "{", "1 2", "{'a': 1}", "[1,]"] {
            assert!(JsonText::new(text).is_err(), "{text:?}");
        }
    }

    #[test]
    fn refuses_numbers_and_escapes_a_value_cannot_hold() {
        for text in [
            "1e400",
            "-1e999",
            r#"{"temp": 1e400}"#,
            r#""\ud800""#,
            r#"["a", "\udc00x"]"#,
            r#"{"\ud800": 1}"#,
        ] {
            assert!(
                serde_json::from_str::<serde_json::Value>(text).is_err(),
                "{text}"
            );
            let error = JsonText::new(text).expect_err(text);
            assert!(
                error.to_string().contains("out of range")
                    || error.to_string().contains("surrogate")
                    || error.to_string().contains("escape"),
                "{text}: {error}"
            );
        }
        // What a `Value` holds is taken: large but finite numbers, paired surrogates.
        for text in ["1e308", "18446744073709551616", r#""\ud83d\ude00""#, "-0"] {
            let made = JsonText::new(text).unwrap();
            assert_eq!(
                made.to_value(),
                serde_json::from_str::<serde_json::Value>(text).unwrap()
            );
        }
    }

    /// Pieces of JSON text, near misses included (huge exponents, lone surrogates).
    const PIECES: [&str; 20] = [
        "[", "]", "{", "}", ":", ",", "\"", "\\ud800", "\\udc00", "\\u0041", "1e400", "1e308", "-",
        "0", "1", "e", "9", ".", "a", " ",
    ];

    proptest::proptest! {
        /// Whatever `new` takes, `to_value` reads back (it would panic otherwise).
        #[test]
        fn what_is_taken_reads_back(
            pieces in proptest::collection::vec(proptest::sample::select(&PIECES[..]), 0..10)
        ) {
            let text = pieces.concat();
            if let Ok(made) = JsonText::new(text.as_str()) {
                let value = serde_json::from_str::<serde_json::Value>(&text);
                proptest::prop_assert_eq!(Some(made.to_value()), value.ok(), "{}", text);
            }
        }
    }

    #[test]
    fn refuses_what_serde_json_would_not_read_back() {
        let deepest = JsonText::new(nested(127).to_string()).unwrap();
        assert_eq!(deepest.to_value(), nested(127));
        assert!(JsonText::new(nested(128).to_string()).is_err());
        assert!(JsonText::from_value(&nested(127)).is_ok());
        assert!(JsonText::from_value(&nested(128)).is_err());
        assert!(JsonText::from_value(&nested(129)).is_err());
    }

    #[test]
    fn serializes_as_its_value() {
        let text = JsonText::new(r#"{"b":1,"a":[true,null]}"#).unwrap();
        assert_eq!(
            serde_json::to_string(&text).unwrap(),
            r#"{"b":1,"a":[true,null]}"#
        );
        assert_eq!(serde_json::to_value(&text).unwrap(), text.to_value());
        let back: JsonText = serde_json::from_str(r#" {"b": 1, "a": [true, null]} "#).unwrap();
        assert_eq!(back, JsonText::new(r#"{"b":1,"a":[true,null]}"#).unwrap());
    }

    #[test]
    fn refuses_serde_jsons_private_keys() {
        let error = JsonText::new(r#"{"$serde_json::private::RawValue": "[1]"}"#)
            .unwrap_err()
            .to_string();
        assert!(error.contains("keeps for itself"), "{error}");
        assert!(JsonText::new(r#"{"serde": "[1]"}"#).is_ok());
        // The same words as a value are a string.
        let value = JsonText::new(r#"{"text": "$serde_json::private::RawValue"}"#).unwrap();
        assert_eq!(
            value.to_value(),
            serde_json::json!({"text": "$serde_json::private::RawValue"})
        );
    }
}
