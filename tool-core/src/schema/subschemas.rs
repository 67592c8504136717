//! [`each_schema_mut`] and [`any_schema`]: every schema object inside a JSON Schema, at any
//! depth, for the passes that give schemas what serde's reading implies (integer bounds, an
//! `f32`'s range). Values that are data (`const`, `enum`, `default`, `examples`) and
//! conditions (`not`, `if`) are not looked inside; maps of names to schemas (`properties`,
//! `$defs`, …) are read whole, so a property may be called `default`.

use serde_json::{Map, Value};

/// Keywords whose values map names to schemas.
const SCHEMA_MAPS: [&str; 5] = [
    "properties",
    "patternProperties",
    "$defs",
    "definitions",
    "dependentSchemas",
];

/// Keywords whose values are not looked inside: instances, not schemas; and conditions
/// (`not`, `if`), where a bound added would change what the condition says rather than what
/// a value may be.
const SKIPPED_KEYWORDS: [&str; 7] = [
    "const", "enum", "default", "examples", "example", "not", "if",
];

/// Calls `visit` on every schema object in `schema` (itself first, then those inside it).
pub(crate) fn each_schema_mut(schema: &mut Value, visit: &mut impl FnMut(&mut Map<String, Value>)) {
    match schema {
        Value::Object(object) => {
            visit(object);
            for (key, value) in object.iter_mut() {
                if SCHEMA_MAPS.contains(&key.as_str()) {
                    if let Value::Object(schemas) = value {
                        schemas.values_mut().for_each(|s| each_schema_mut(s, visit));
                    }
                } else if !SKIPPED_KEYWORDS.contains(&key.as_str()) {
                    each_schema_mut(value, visit);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|s| each_schema_mut(s, visit)),
        _ => {}
    }
}

/// Whether `test` holds for any schema object in `schema`.
pub(crate) fn any_schema(schema: &Value, test: &impl Fn(&Map<String, Value>) -> bool) -> bool {
    match schema {
        Value::Object(object) => {
            test(object)
                || object.iter().any(|(key, value)| {
                    if SCHEMA_MAPS.contains(&key.as_str()) {
                        value
                            .as_object()
                            .is_some_and(|schemas| schemas.values().any(|s| any_schema(s, test)))
                    } else {
                        !SKIPPED_KEYWORDS.contains(&key.as_str()) && any_schema(value, test)
                    }
                })
        }
        Value::Array(items) => items.iter().any(|s| any_schema(s, test)),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn schemas_are_found_at_any_depth_and_data_is_not_read_as_one() {
        let mut schema = json!({"type": "object", "properties": {
            "default": {"type": "integer"},
            "list": {"type": "array", "items": {"anyOf": [{"type": "integer"}, {"type": "null"}]}},
            "fixed": {"const": {"type": "integer"}, "default": {"type": "integer"}},
            "odd": {"not": {"type": "integer"}}},
            "$defs": {"D": {"type": "integer"}}});
        let mut integers = 0;
        each_schema_mut(&mut schema, &mut |object| {
            if object.get("type") == Some(&json!("integer")) {
                integers += 1;
                object.insert("seen".to_owned(), json!(true));
            }
        });
        assert_eq!(integers, 3, "{schema}");
        assert_eq!(schema["properties"]["default"]["seen"], true);
        assert_eq!(schema["properties"]["fixed"]["const"].get("seen"), None);
        assert_eq!(schema["properties"]["odd"]["not"].get("seen"), None);
        let seen = |object: &Map<String, Value>| object.contains_key("seen");
        assert!(any_schema(&schema, &seen));
        let floats = |object: &Map<String, Value>| object.get("format") == Some(&json!("float"));
        assert!(!any_schema(&schema, &floats));
    }
}
