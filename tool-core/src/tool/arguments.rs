//! [`ToolArguments`]: the JSON object a model sends as a call's arguments.

use serde::de::value::MapAccessDeserializer;
use serde::de::{MapAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

use crate::tool::nesting::{TooDeep, check_depth};
use crate::tool::shared_value::SharedValue;

/// The arguments of one call: an ordered map from argument name to JSON value.
///
/// Cloning is cheap (the map is shared and copied only when changed), so handing a request's
/// arguments to a tool costs no copy of the JSON; dropping arguments nobody shares costs no
/// atomic write.
///
/// ```
/// use toolsmith::ToolArguments;
/// use serde_json::json;
///
/// let args = ToolArguments::from_iter([("a".to_owned(), json!(1)), ("b".to_owned(), json!(2))]);
/// assert_eq!(args.get("a"), Some(&json!(1)));
/// assert_eq!(args.keys().collect::<Vec<_>>(), ["a", "b"]);
/// assert_eq!(serde_json::to_string(&args).unwrap(), r#"{"a":1,"b":2}"#);
/// ```
#[derive(Clone, PartialEq)]
pub struct ToolArguments(SharedValue);

/// A value that was not a JSON object where arguments were expected.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("tool arguments must be a JSON object, got {found}")]
pub struct NotAnObject {
    /// The JSON type that was found instead ("array", "string", …).
    pub found: &'static str,
}

impl ToolArguments {
    /// No arguments.
    pub fn new() -> Self {
        Self(SharedValue::new(Value::Object(Map::new())))
    }

    /// The arguments as a JSON object value.
    #[inline]
    pub fn as_value(&self) -> &Value {
        &self.0
    }

    /// The arguments as a map.
    #[inline]
    pub fn as_map(&self) -> &Map<String, Value> {
        match &*self.0 {
            Value::Object(map) => map,
            _ => unreachable!("ToolArguments always holds an object"),
        }
    }

    /// The arguments as a mutable map (copied first if shared).
    pub fn as_map_mut(&mut self) -> &mut Map<String, Value> {
        match self.0.make_mut() {
            Value::Object(map) => map,
            _ => unreachable!("ToolArguments always holds an object"),
        }
    }

    /// The arguments as a mutable JSON value, for in-place repair (kept an object).
    pub(crate) fn value_mut(&mut self) -> &mut Value {
        self.0.make_mut()
    }

    /// The argument called `name`.
    #[inline]
    pub fn get(&self, name: &str) -> Option<&Value> {
        let map = self.as_map();
        // Calls carry a handful of arguments: comparing a few short keys in order is cheaper
        // than hashing the name (serde_json's map hashes with SipHash).
        if map.len() <= LINEAR_LOOKUP_MAX {
            map.iter()
                .find(|(key, _)| *key == name)
                .map(|(_, value)| value)
        } else {
            map.get(name)
        }
    }

    /// Whether an argument called `name` is present.
    #[inline]
    pub fn contains_key(&self, name: &str) -> bool {
        self.get(name).is_some()
    }

    /// Sets an argument, returning the value it replaces.
    pub fn insert(&mut self, name: impl Into<String>, value: impl Into<Value>) -> Option<Value> {
        self.as_map_mut().insert(name.into(), value.into())
    }

    /// Removes an argument, keeping the order of the others.
    pub fn remove(&mut self, name: &str) -> Option<Value> {
        self.as_map_mut().shift_remove(name)
    }

    /// The argument names, in order.
    pub fn keys(&self) -> impl Iterator<Item = &str> {
        self.as_map().keys().map(String::as_str)
    }

    /// The arguments, in order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &Value)> {
        self.as_map().iter().map(|(k, v)| (k.as_str(), v))
    }

    /// The number of arguments.
    pub fn len(&self) -> usize {
        self.as_map().len()
    }

    /// Whether there are no arguments.
    pub fn is_empty(&self) -> bool {
        self.as_map().is_empty()
    }

    /// The arguments as an owned JSON object value.
    pub fn into_value(self) -> Value {
        self.0.into_inner()
    }

    /// A copy with each whole float (`0.0`, `2e3`) within 64 bits written as the integer it
    /// is, or `None` when there is none (or the arguments nest deeper than
    /// [`MAX_JSON_DEPTH`](crate::MAX_JSON_DEPTH)). A tool reads `0.0` where it takes an
    /// integer as 0, and validation passes it as one; code that judges calls (a hook reading
    /// `as_i64()`, or comparing with `json!(0)`) sees it so too. Reading a float from an
    /// integer gives the same number.
    ///
    /// ```
    /// use serde_json::json;
    /// use toolsmith::ToolArguments;
    ///
    /// let sent = ToolArguments::try_from(json!({"depth": 0.0, "scale": 1.5})).unwrap();
    /// let read = sent.with_whole_floats_as_integers().unwrap();
    /// assert_eq!(read.as_value(), &json!({"depth": 0, "scale": 1.5}));
    /// assert!(read.with_whole_floats_as_integers().is_none());
    /// ```
    pub fn with_whole_floats_as_integers(&self) -> Option<ToolArguments> {
        crate::reading::whole_floats::as_integers(self.as_value())
            .map(|value| Self(SharedValue::new(value)))
    }
}

impl Default for ToolArguments {
    fn default() -> Self {
        Self::new()
    }
}

impl std::fmt::Debug for ToolArguments {
    /// The map, or `{<nested deeper than 128 levels>}` for arguments too deep to print.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match check_depth(self.as_value()) {
            Ok(()) => std::fmt::Debug::fmt(self.as_map(), f),
            Err(too_deep) => write!(f, "{{<{too_deep}>}}"),
        }
    }
}

impl std::fmt::Display for ToolArguments {
    /// The arguments as compact JSON, or `{<nested deeper than 128 levels>}` for arguments
    /// too deep to print.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match check_depth(self.as_value()) {
            Ok(()) => std::fmt::Display::fmt(self.as_value(), f),
            Err(too_deep) => write!(f, "{{<{too_deep}>}}"),
        }
    }
}

impl From<Map<String, Value>> for ToolArguments {
    fn from(map: Map<String, Value>) -> Self {
        Self(SharedValue::new(Value::Object(map)))
    }
}

impl TryFrom<Value> for ToolArguments {
    type Error = NotAnObject;

    /// Accepts an object; `null` is taken as no arguments, as several providers send it for
    /// tools without parameters.
    #[inline]
    fn try_from(value: Value) -> Result<Self, Self::Error> {
        match value {
            Value::Object(_) => Ok(Self(SharedValue::new(value))),
            Value::Null => Ok(Self::new()),
            other => Err(NotAnObject {
                found: json_type_name(&other),
            }),
        }
    }
}

impl From<ToolArguments> for Value {
    fn from(args: ToolArguments) -> Self {
        args.into_value()
    }
}

impl<K: Into<String>> FromIterator<(K, Value)> for ToolArguments {
    fn from_iter<I: IntoIterator<Item = (K, Value)>>(iter: I) -> Self {
        Self::from(
            iter.into_iter()
                .map(|(k, v)| (k.into(), v))
                .collect::<Map<String, Value>>(),
        )
    }
}

impl Serialize for ToolArguments {
    /// Serialises the object; arguments nested deeper than
    /// [`MAX_JSON_DEPTH`](crate::MAX_JSON_DEPTH) are an error, not walked.
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        if check_depth(self.as_value()).is_err() {
            return Err(serde::ser::Error::custom(format!(
                "the arguments are {TooDeep}"
            )));
        }
        self.0.serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for ToolArguments {
    /// Reads an object; `null` is no arguments, as for [`TryFrom<Value>`](Self::try_from)
    /// (several providers send it for a call without arguments). Anything else is an error
    /// naming what was found. Self-describing formats only, as for the JSON values inside.
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(ArgumentsVisitor)
    }
}

/// Reads [`ToolArguments`]: an object, or `null` for none.
struct ArgumentsVisitor;

impl<'de> Visitor<'de> for ArgumentsVisitor {
    type Value = ToolArguments;

    fn expecting(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str("tool arguments: a JSON object, or null for none")
    }

    fn visit_unit<E: serde::de::Error>(self) -> Result<ToolArguments, E> {
        Ok(ToolArguments::new())
    }

    fn visit_none<E: serde::de::Error>(self) -> Result<ToolArguments, E> {
        Ok(ToolArguments::new())
    }

    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<ToolArguments, D::Error> {
        deserializer.deserialize_any(self)
    }

    fn visit_map<A: MapAccess<'de>>(self, access: A) -> Result<ToolArguments, A::Error> {
        Map::<String, Value>::deserialize(MapAccessDeserializer::new(access))
            .map(ToolArguments::from)
    }
}

/// Up to this many arguments, a lookup scans the keys instead of hashing the name.
const LINEAR_LOOKUP_MAX: usize = 8;

/// The JSON Schema type name of a value ("object", "integer", …).
pub(crate) fn json_type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_f64() => "number",
        Value::Number(_) => "integer",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn clones_share_until_written() {
        let a = ToolArguments::from_iter([("x", json!(1))]);
        let mut b = a.clone();
        assert!(std::ptr::eq(a.as_value(), b.as_value()));
        b.insert("y", 2);
        assert_eq!(a.len(), 1);
        assert_eq!(b.len(), 2);
        assert_eq!(b.remove("x"), Some(json!(1)));
        assert_eq!(b.keys().collect::<Vec<_>>(), ["y"]);
    }

    #[test]
    fn only_objects_are_arguments() {
        assert!(ToolArguments::try_from(json!({"a": 1})).is_ok());
        assert!(ToolArguments::try_from(Value::Null).unwrap().is_empty());
        let err = ToolArguments::try_from(json!([1])).unwrap_err();
        assert_eq!(
            err.to_string(),
            "tool arguments must be a JSON object, got array"
        );
        let args: ToolArguments = serde_json::from_str(r#"{"b":1,"a":2}"#).unwrap();
        assert_eq!(args.keys().collect::<Vec<_>>(), ["b", "a"]);
    }

    #[test]
    fn null_is_no_arguments_read_either_way_and_other_values_are_refused() {
        let converted = ToolArguments::try_from(Value::Null).unwrap();
        let read: ToolArguments = serde_json::from_str("null").unwrap();
        let from_value: ToolArguments = serde_json::from_value(Value::Null).unwrap();
        assert_eq!(converted, ToolArguments::new());
        assert_eq!(read, converted);
        assert_eq!(from_value, converted);
        // Inside a request too, as a provider's call without arguments arrives.
        let request: crate::ToolCallRequest =
            serde_json::from_str(r#"{"id":"c1","name":"now","arguments":null}"#).unwrap();
        assert!(request.arguments.is_empty());

        let err = serde_json::from_str::<ToolArguments>("[1]").unwrap_err();
        assert_eq!(
            err.to_string(),
            "invalid type: sequence, expected tool arguments: a JSON object, or null for none \
             at line 1 column 1"
        );
        let err = serde_json::from_value::<ToolArguments>(json!("x")).unwrap_err();
        assert!(
            err.to_string()
                .contains("invalid type: string \"x\", expected tool arguments"),
            "{err}"
        );
        assert!(ToolArguments::try_from(json!("x")).is_err());
    }
}
