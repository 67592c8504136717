//! [`with_f32_range`]: a schema as validation compiles it, each `f32` given its range.
//!
//! schemars describes an `f32` as `{"type": "number", "format": "float"}`, with no range,
//! and the reader refuses a number that would round to an infinite `f32` (it reads no
//! infinity the model never sent). Validation is to refuse exactly what the tool cannot
//! read, so the schema it compiles has the range; the schema declared to models does not,
//! where two numbers of 39 digits beside every `f32` would say nothing a model needs.

use std::borrow::Cow;

use serde_json::{Map, Number, Value};

use super::subschemas::{any_schema, each_schema_mut};
use crate::tool::args::type_names;

/// The least magnitude that rounds to an infinite `f32`: 2^128 − 2^103, half a unit in the
/// last place above `f32::MAX` (a tie, which rounds to even: up). Every number of smaller
/// magnitude reads as a finite `f32`.
const F32_OVERFLOW: f64 = 340_282_356_779_733_661_637_539_395_458_142_568_448.0;

/// `schema` with `exclusiveMinimum` and `exclusiveMaximum` at ±[`F32_OVERFLOW`] in every
/// `f32` schema (`format: "float"` on a number type) that has no bound of its own on that
/// side; borrowed when it has no `f32` at all.
pub(crate) fn with_f32_range(schema: &Value) -> Cow<'_, Value> {
    if !any_schema(schema, &is_f32) {
        return Cow::Borrowed(schema);
    }
    let mut bounded = schema.clone();
    each_schema_mut(&mut bounded, &mut |object| {
        if !is_f32(object) {
            return;
        }
        let bounded = |keys: [&str; 2]| keys.iter().any(|key| object.contains_key(*key));
        let below = !bounded(["minimum", "exclusiveMinimum"]);
        let above = !bounded(["maximum", "exclusiveMaximum"]);
        if below && let Some(limit) = Number::from_f64(-F32_OVERFLOW) {
            object.insert("exclusiveMinimum".to_owned(), Value::Number(limit));
        }
        if above && let Some(limit) = Number::from_f64(F32_OVERFLOW) {
            object.insert("exclusiveMaximum".to_owned(), Value::Number(limit));
        }
    });
    Cow::Owned(bounded)
}

/// Whether `object` is an `f32`'s schema.
fn is_f32(object: &Map<String, Value>) -> bool {
    let number = object
        .get("type")
        .and_then(|declared| type_names(declared, "number"))
        == Some(true);
    number && object.get("format").and_then(Value::as_str) == Some("float")
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn every_f32_without_a_bound_of_its_own_gets_its_range() {
        let schema = json!({"type": "object", "properties": {
            "a": {"type": "number", "format": "float"},
            "b": {"type": ["number", "null"], "format": "float", "minimum": 0},
            "default": {"type": "number", "format": "float"},
            "fixed": {"enum": [{"type": "number", "format": "float"}]},
            "c": {"type": "number", "format": "double"}}});
        let bounded = with_f32_range(&schema);
        let properties = &bounded["properties"];
        assert_eq!(properties["a"]["exclusiveMaximum"], json!(F32_OVERFLOW));
        assert_eq!(properties["a"]["exclusiveMinimum"], json!(-F32_OVERFLOW));
        // A bound of the schema's own is kept, the other side given.
        assert_eq!(properties["b"]["minimum"], 0);
        assert_eq!(properties["b"].get("exclusiveMinimum"), None);
        assert_eq!(properties["b"]["exclusiveMaximum"], json!(F32_OVERFLOW));
        // A property may be called `default`; data is not a schema; an `f64` has no range.
        assert_eq!(
            properties["default"]["exclusiveMaximum"],
            json!(F32_OVERFLOW)
        );
        assert_eq!(properties["fixed"], schema["properties"]["fixed"]);
        assert_eq!(properties["c"], schema["properties"]["c"]);
        // No `f32`: the schema as it is, not copied.
        let plain = json!({"type": "object", "properties": {"n": {"type": "number"}}});
        assert!(matches!(with_f32_range(&plain), Cow::Borrowed(_)));
    }
}
