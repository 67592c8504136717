//! JSON that others wrote (a model's tool-call arguments, a model server's answer) read into
//! a [`Value`] holding no more than [`MAX_JSON_VALUES`] values, and no deeper than
//! serde_json's recursion limit. A byte bound does not bound the memory text takes as a
//! `Value`: each value is 80 bytes or more however short its text, so 32 MiB of
//! `[0,0,0,…]` took 1.2 GB (measured) before it could be refused.

use std::cell::Cell;
use std::fmt;

use serde::de::{DeserializeSeed, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

use super::serde_private_keys::is_private_key;

/// The most JSON values (arrays, objects, strings, numbers, booleans and nulls, each counted
/// once wherever it nests) [`value_from_slice`] reads, and the most a model's tool-call
/// arguments may hold ([`repair_json`](crate::provider::repair_json)): about 170 MB once
/// read. The largest embeddings answer an HTTP client asks for holds about 1.3 million.
pub const MAX_JSON_VALUES: usize = 2 * 1024 * 1024;

/// `bytes` as one JSON value, as `serde_json::from_slice::<Value>` reads it, but an error
/// past [`MAX_JSON_VALUES`] values, saying so and where the reader stopped (and, as
/// serde_json's, past its recursion limit of 128 levels).
///
/// ```
/// use toolsmith::{MAX_JSON_VALUES, value_from_slice};
///
/// assert_eq!(value_from_slice(br#"{"a": [1, 2]}"#).unwrap(), serde_json::json!({"a": [1, 2]}));
/// let many = format!("[{}0]", "0,".repeat(MAX_JSON_VALUES));
/// let error = value_from_slice(many.as_bytes()).unwrap_err().to_string();
/// assert!(error.starts_with("the JSON holds more than 2097152 values"), "{error}");
/// ```
pub fn value_from_slice(bytes: &[u8]) -> serde_json::Result<Value> {
    read_value(serde_json::Deserializer::from_slice(bytes))
}

/// [`value_from_slice`] of `text` (read as text: its strings are not checked for UTF-8
/// again, which bytes' are).
pub fn value_from_str(text: &str) -> serde_json::Result<Value> {
    read_value(serde_json::Deserializer::from_str(text))
}

/// The one value `reader` holds, counted.
fn read_value<'de, R: serde_json::de::Read<'de>>(
    mut reader: serde_json::Deserializer<R>,
) -> serde_json::Result<Value> {
    let left = Cell::new(MAX_JSON_VALUES);
    let value = Counted { left: &left }.deserialize(&mut reader)?;
    reader.end()?;
    Ok(value)
}

/// A [`Value`] deserialized from any format (the JSON5 reader's) as [`value_from_slice`]
/// reads one: at most [`MAX_JSON_VALUES`] values, and no number JSON cannot hold (`NaN`,
/// `Infinity`, which as a `Value` would become `null`, a value nobody wrote).
pub(crate) struct BoundedValue(pub(crate) Value);

impl<'de> serde::Deserialize<'de> for BoundedValue {
    fn deserialize<D: serde::Deserializer<'de>>(reader: D) -> Result<Self, D::Error> {
        let left = Cell::new(MAX_JSON_VALUES);
        Counted { left: &left }
            .deserialize(reader)
            .map(BoundedValue)
    }
}

/// Builds a [`Value`] as serde_json's own visitor does, taking each value from `left`.
#[derive(Clone, Copy)]
struct Counted<'a> {
    left: &'a Cell<usize>,
}

impl Counted<'_> {
    /// Counts one more value; an error once none is left.
    fn take<E: serde::de::Error>(self) -> Result<(), E> {
        match self.left.get().checked_sub(1) {
            Some(left) => {
                self.left.set(left);
                Ok(())
            }
            None => Err(E::custom(format_args!(
                "the JSON holds more than {MAX_JSON_VALUES} values"
            ))),
        }
    }
}

impl<'de> DeserializeSeed<'de> for Counted<'_> {
    type Value = Value;

    fn deserialize<D: serde::Deserializer<'de>>(self, reader: D) -> Result<Value, D::Error> {
        reader.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Counted<'_> {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_unit<E: serde::de::Error>(self) -> Result<Value, E> {
        self.take()?;
        Ok(Value::Null)
    }

    fn visit_none<E: serde::de::Error>(self) -> Result<Value, E> {
        self.visit_unit()
    }

    fn visit_some<D: serde::Deserializer<'de>>(self, inner: D) -> Result<Value, D::Error> {
        inner.deserialize_any(self)
    }

    fn visit_bool<E: serde::de::Error>(self, value: bool) -> Result<Value, E> {
        self.take()?;
        Ok(Value::Bool(value))
    }

    fn visit_i64<E: serde::de::Error>(self, value: i64) -> Result<Value, E> {
        self.take()?;
        Ok(Value::from(value))
    }

    fn visit_u64<E: serde::de::Error>(self, value: u64) -> Result<Value, E> {
        self.take()?;
        Ok(Value::from(value))
    }

    fn visit_f64<E: serde::de::Error>(self, value: f64) -> Result<Value, E> {
        self.take()?;
        // serde_json reads no number it cannot hold (`1e400` is its error); JSON5 does.
        serde_json::Number::from_f64(value)
            .map(Value::Number)
            .ok_or_else(|| E::custom(format_args!("{value} is not a number JSON can hold")))
    }

    fn visit_str<E: serde::de::Error>(self, value: &str) -> Result<Value, E> {
        self.take()?;
        Ok(Value::String(value.to_owned()))
    }

    fn visit_string<E: serde::de::Error>(self, value: String) -> Result<Value, E> {
        self.take()?;
        Ok(Value::String(value))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut items: A) -> Result<Value, A::Error> {
        self.take()?;
        let mut array = Vec::new();
        while let Some(item) = items.next_element_seed(self)? {
            array.push(item);
        }
        Ok(Value::Array(array))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut entries: A) -> Result<Value, A::Error> {
        self.take()?;
        let mut object = Map::new();
        while let Some(key) = entries.next_key::<String>()? {
            if is_private_key(&key) {
                return Err(serde::de::Error::custom(format_args!(
                    "the JSON holds the key `{key}`, which serde_json keeps for itself (it \
                     would read the key's string as JSON of its own)"
                )));
            }
            let value = entries.next_value_seed(self)?;
            // A key given twice keeps its first place and its last value, as serde_json's
            // own `Value` does.
            object.insert(key, value);
        }
        Ok(Value::Object(object))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reads_what_serde_json_reads() {
        let text = r#"{"a": [1, -2, 3.5, "x", true, null, {}], "b": {"c": []}, "a": 7}"#;
        assert_eq!(
            value_from_str(text).unwrap(),
            serde_json::from_str::<Value>(text).unwrap()
        );
        assert_eq!(
            value_from_str(text).unwrap(),
            json!({"a": 7, "b": {"c": []}})
        );
        assert!(value_from_str("{} x").is_err());
        assert!(value_from_str("1e400").is_err());
    }

    #[test]
    fn refuses_more_values_than_the_bound() {
        // The outer array is one value: its items may be one fewer than the bound.
        let items = |count: usize| format!("[{}0]", "0,".repeat(count - 1));
        let within = value_from_str(&items(MAX_JSON_VALUES - 1)).unwrap();
        assert_eq!(within.as_array().map(Vec::len), Some(MAX_JSON_VALUES - 1));
        let error = value_from_str(&items(MAX_JSON_VALUES))
            .unwrap_err()
            .to_string();
        assert!(
            error.starts_with(&format!(
                "the JSON holds more than {MAX_JSON_VALUES} values at line 1 column "
            )),
            "{error}"
        );
        // Nested values count as well.
        let nested = format!("{{\"a\": [{}[]]}}", "{},".repeat(MAX_JSON_VALUES));
        assert!(value_from_str(&nested).is_err());
    }

    #[test]
    fn depth_stays_bounded() {
        let deep = "[".repeat(100_000) + &"]".repeat(100_000);
        let error = value_from_str(&deep).unwrap_err().to_string();
        assert!(error.contains("recursion limit"), "{error}");
    }

    #[test]
    fn refuses_serde_jsons_private_keys_however_written() {
        // serde_json's own `Value` reads the string as JSON of its own, a new recursion
        // limit and all: here `{"a": [[1]]}`, which nobody sent.
        let sent = r#"{"a": {"$serde_json::private::RawValue": "[[1]]"}}"#;
        for text in [
            sent,
            r#"{"a": {"\u0024serde_json::private::RawValue": "[[1]]"}}"#,
            r#"[{"$serde_json::private::Number": "1e5"}]"#,
        ] {
            let error = value_from_str(text).unwrap_err().to_string();
            assert!(error.contains("serde_json keeps for itself"), "{error}");
        }
        // As a value, the key's text is a string like any.
        assert_eq!(
            value_from_str(r#"["$serde_json::private::RawValue"]"#).unwrap(),
            json!(["$serde_json::private::RawValue"])
        );
    }
}
