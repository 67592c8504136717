//! [`JsonText`]: a structured result already written as JSON text.

use std::fmt;
use std::sync::Arc;

use serde::de::{Error as _, IgnoredAny};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

use crate::MAX_JSON_DEPTH;
use crate::tool::nesting::{check_depth, json_text_too_deep};

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
/// use toolsmith_core::{JsonText, ToolCallResult};
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
    /// `text`, once checked to be one JSON value that serde_json reads back.
    pub fn new(text: impl Into<Arc<str>>) -> Result<Self, serde_json::Error> {
        let text = text.into();
        // Reads the text without building anything, nor bounding its nesting: a byte scan
        // does that.
        serde_json::from_str::<IgnoredAny>(&text)?;
        if json_text_too_deep(text.as_bytes(), READABLE_DEPTH).is_some() {
            return Err(too_deep());
        }
        Ok(Self(text))
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
            serde_json::from_str::<IgnoredAny>(text).is_ok()
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
}
