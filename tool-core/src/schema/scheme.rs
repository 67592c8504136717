//! A small builder for JSON Schema (draft 2020-12) values, for hand-written tools.
//!
//! ```
//! use toolsmith::scheme::{array, boolean, integer, object, string};
//! use serde_json::json;
//!
//! let schema = object()
//!     .required("query", string().min_len(1).describe("What to search for."))
//!     .optional("limit", integer().minimum(1).maximum(50))
//!     .optional("tags", array(string()))
//!     .optional("exact", boolean())
//!     .build();
//! assert_eq!(schema["required"], json!(["query"]));
//! assert_eq!(schema["properties"]["limit"], json!({"type": "integer", "minimum": 1, "maximum": 50}));
//! assert_eq!(schema["additionalProperties"], json!(false));
//! ```

use serde_json::{Map, Value, json};

/// Anything that can stand as a schema in a builder: the builders of this module, or a raw
/// JSON Schema value.
pub trait IntoSchema {
    /// The schema value.
    fn into_schema(self) -> Value;
}

impl IntoSchema for Value {
    fn into_schema(self) -> Value {
        self
    }
}

macro_rules! schema_type {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq)]
        #[must_use]
        pub struct $name(Map<String, Value>);

        impl $name {
            /// Sets the `description` shown to the model.
            pub fn describe(mut self, text: impl Into<String>) -> Self {
                self.0.insert("description".into(), Value::String(text.into()));
                self
            }

            /// Sets a `default` value (informational: validation does not fill it in).
            pub fn default_value(mut self, value: impl Into<Value>) -> Self {
                self.0.insert("default".into(), value.into());
                self
            }

            /// Sets any other keyword.
            pub fn keyword(mut self, name: impl Into<String>, value: impl Into<Value>) -> Self {
                self.0.insert(name.into(), value.into());
                self
            }

            /// The schema value.
            #[must_use]
            pub fn build(self) -> Value {
                Value::Object(self.0)
            }
        }

        impl IntoSchema for $name {
            fn into_schema(self) -> Value {
                self.build()
            }
        }

        impl From<$name> for Value {
            fn from(schema: $name) -> Value {
                schema.build()
            }
        }
    };
}

schema_type!(
    /// An object schema; closed (`additionalProperties: false`) unless [`open`](Self::open) is
    /// called.
    ObjectSchema
);
schema_type!(
    /// A string schema.
    StringSchema
);
schema_type!(
    /// An integer or number schema.
    NumberSchema
);
schema_type!(
    /// A boolean schema.
    BooleanSchema
);
schema_type!(
    /// An array schema.
    ArraySchema
);

fn typed(name: &str) -> Map<String, Value> {
    let mut map = Map::new();
    map.insert("type".into(), Value::String(name.into()));
    map
}

/// An object schema with no properties yet.
pub fn object() -> ObjectSchema {
    let mut map = typed("object");
    map.insert("properties".into(), json!({}));
    map.insert("additionalProperties".into(), Value::Bool(false));
    ObjectSchema(map)
}

/// A string schema.
pub fn string() -> StringSchema {
    StringSchema(typed("string"))
}

/// An integer schema.
pub fn integer() -> NumberSchema {
    NumberSchema(typed("integer"))
}

/// A number schema.
pub fn number() -> NumberSchema {
    NumberSchema(typed("number"))
}

/// A boolean schema.
pub fn boolean() -> BooleanSchema {
    BooleanSchema(typed("boolean"))
}

/// An array schema whose items follow `items`.
pub fn array(items: impl IntoSchema) -> ArraySchema {
    let mut map = typed("array");
    map.insert("items".into(), items.into_schema());
    ArraySchema(map)
}

impl ObjectSchema {
    fn property(&mut self, name: &str, schema: Value) {
        if let Some(Value::Object(props)) = self.0.get_mut("properties") {
            props.insert(name.to_owned(), schema);
        }
    }

    /// Adds a property that must be present.
    pub fn required(mut self, name: impl Into<String>, schema: impl IntoSchema) -> Self {
        let name = name.into();
        self.property(&name, schema.into_schema());
        match self.0.get_mut("required") {
            Some(Value::Array(list)) => {
                if !list.iter().any(|v| v == name.as_str()) {
                    list.push(Value::String(name));
                }
            }
            _ => {
                self.0.insert("required".into(), json!([name]));
            }
        }
        self
    }

    /// Adds a property that may be left out.
    pub fn optional(mut self, name: impl Into<String>, schema: impl IntoSchema) -> Self {
        self.property(&name.into(), schema.into_schema());
        self
    }

    /// Allows properties that are not listed.
    pub fn open(mut self) -> Self {
        self.0.remove("additionalProperties");
        self
    }
}

impl StringSchema {
    /// The shortest length allowed, in characters.
    pub fn min_len(self, n: u64) -> Self {
        self.keyword("minLength", n)
    }

    /// The longest length allowed, in characters.
    pub fn max_len(self, n: u64) -> Self {
        self.keyword("maxLength", n)
    }

    /// A regular expression the string must match.
    pub fn pattern(self, regex: impl Into<String>) -> Self {
        self.keyword("pattern", regex.into())
    }

    /// The only values allowed.
    pub fn enum_values<I, S>(self, values: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let values: Vec<Value> = values
            .into_iter()
            .map(|v| Value::String(v.into()))
            .collect();
        self.keyword("enum", values)
    }

    /// A `format` such as `date-time` or `uri`. Validation asserts it (the JSON Schema
    /// draft makes `format` an annotation only): a value not of that form is refused before
    /// the tool runs. A format the validator does not know is ignored.
    pub fn format(self, format: impl Into<String>) -> Self {
        self.keyword("format", format.into())
    }
}

impl NumberSchema {
    /// The smallest value allowed.
    pub fn minimum(self, n: impl Into<serde_json::Number>) -> Self {
        self.keyword("minimum", Value::Number(n.into()))
    }

    /// The largest value allowed.
    pub fn maximum(self, n: impl Into<serde_json::Number>) -> Self {
        self.keyword("maximum", Value::Number(n.into()))
    }
}

impl ArraySchema {
    /// The fewest items allowed.
    pub fn min_items(self, n: u64) -> Self {
        self.keyword("minItems", n)
    }

    /// The most items allowed.
    pub fn max_items(self, n: u64) -> Self {
        self.keyword("maxItems", n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builds_plain_json_schema() {
        let s = object()
            .required("name", string().min_len(1).max_len(10).pattern("^[a-z]+$"))
            .required("name", string())
            .optional(
                "kind",
                string().enum_values(["a", "b"]).describe("The kind."),
            )
            .optional("ratio", number().minimum(0).maximum(1))
            .build();
        assert_eq!(s["required"], json!(["name"]));
        assert_eq!(s["properties"]["name"], json!({"type": "string"}));
        assert_eq!(
            s["properties"]["kind"],
            json!({"type": "string", "enum": ["a", "b"], "description": "The kind."})
        );
        assert!(jsonschema::meta::is_valid(&s));
        assert_eq!(
            object().open().build(),
            json!({"type": "object", "properties": {}})
        );
        assert_eq!(
            array(integer()).min_items(1).build(),
            json!({"type": "array", "items": {"type": "integer"}, "minItems": 1})
        );
    }
}
