//! JSON from a model server read into a [`Value`] holding no more than
//! [`MAX_JSON_VALUES`] values. The byte bound ([`MAX_RESPONSE_BYTES`](super::MAX_RESPONSE_BYTES)) does not bound
//! the memory a body takes as a `Value`: each value is 80 bytes or more however short its
//! text, so 32 MiB of `[0,0,0,…]` took 1.2 GB (measured) before it could be refused.

use std::cell::Cell;
use std::fmt;

use serde::de::{DeserializeSeed, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

use super::MAX_JSON_VALUES;

/// `bytes` as one JSON value; more than [`MAX_JSON_VALUES`] values is an error saying so,
/// with where the parser stopped. serde_json's recursion limit bounds the depth.
pub(crate) fn from_slice(bytes: &[u8]) -> serde_json::Result<Value> {
    let mut reader = serde_json::Deserializer::from_slice(bytes);
    let left = Cell::new(MAX_JSON_VALUES);
    let value = Counted { left: &left }.deserialize(&mut reader)?;
    reader.end()?;
    Ok(value)
}

/// [`from_slice`] of `text`.
pub(crate) fn from_str(text: &str) -> serde_json::Result<Value> {
    from_slice(text.as_bytes())
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
        // serde_json reads no number it cannot hold (`1e400` is its error): always finite.
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
            from_str(text).unwrap(),
            serde_json::from_str::<Value>(text).unwrap()
        );
        assert_eq!(from_str(text).unwrap(), json!({"a": 7, "b": {"c": []}}));
        assert!(from_str("{} x").is_err());
        assert!(from_str("1e400").is_err());
    }

    #[test]
    fn refuses_more_values_than_the_bound() {
        // The outer array is one value: its items may be one fewer than the bound.
        let items = |count: usize| format!("[{}0]", "0,".repeat(count - 1));
        let within = from_str(&items(MAX_JSON_VALUES - 1)).unwrap();
        assert_eq!(within.as_array().map(Vec::len), Some(MAX_JSON_VALUES - 1));
        let error = from_str(&items(MAX_JSON_VALUES)).unwrap_err().to_string();
        assert!(
            error.starts_with(&format!(
                "the JSON holds more than {MAX_JSON_VALUES} values at line 1 column "
            )),
            "{error}"
        );
        // Nested values count as well.
        let nested = format!("{{\"a\": [{}[]]}}", "{},".repeat(MAX_JSON_VALUES));
        assert!(from_str(&nested).is_err());
    }

    #[test]
    fn depth_stays_bounded() {
        let deep = "[".repeat(100_000) + &"]".repeat(100_000);
        let error = from_str(&deep).unwrap_err().to_string();
        assert!(error.contains("recursion limit"), "{error}");
    }
}
