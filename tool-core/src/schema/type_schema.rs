//! Provider-safe JSON Schemas from Rust types: what `#[tool_fn]` and `#[derive(ToolArgs)]`
//! build their schemas with, usable by hand-written tools too.
//!
//! The rules, chosen so that every provider accepts the result:
//! - subschemas are inlined: no `$ref`/`$defs`, except for a recursive type, whose
//!   definitions go in the root's `$defs` (a recursive type cannot be inlined);
//! - the root of an argument schema is `{"type": "object", …, "additionalProperties": false}`,
//!   with no `title` and no `$schema`;
//! - an optional property (one the model may leave out) does not also admit `null`: leaving
//!   it out is the way to say "none" (validation drops an optional `null` anyway).

use schemars::JsonSchema;
use schemars::generate::{SchemaGenerator, SchemaSettings};
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use crate::{Args, lenient};

fn generator() -> SchemaGenerator {
    SchemaSettings::draft2020_12()
        .with(|settings| {
            settings.inline_subschemas = true;
            settings.meta_schema = None;
        })
        .into_generator()
}

/// Whether an argument of type `T` may be left out: true when `T` reads from `null`
/// (`Option<U>`, `serde_json::Value`, `()`), which is how a missing argument is read.
pub fn is_optional<T: DeserializeOwned>() -> bool {
    lenient::from_value::<T>(&Value::Null).is_ok()
}

/// The provider-safe schema of the type `T`: inlined, without `title` or `$schema`, with
/// `$defs` only for recursive types.
///
/// ```
/// let schema = toolsmith_core::type_schema::<Vec<u8>>();
/// assert_eq!(schema["type"], "array");
/// assert_eq!(schema["items"]["type"], "integer");
/// ```
pub fn type_schema<T: JsonSchema>() -> Value {
    let mut generator = generator();
    let mut schema = generator.root_schema_for::<T>().to_value();
    if let Value::Object(object) = &mut schema {
        object.remove("title");
        object.remove("$schema");
    }
    strip_optional_nulls(&mut schema);
    schema
}

/// The result schema of a tool returning `T` (see [`type_schema`]).
pub fn returns_schema<T: JsonSchema>() -> Args {
    Args::new(type_schema::<T>())
}

/// A builder of an argument object schema, one property per argument.
///
/// ```
/// use toolsmith_core::ArgsObject;
///
/// let args = ArgsObject::new()
///     .field::<String>("query", Some("What to look for."))
///     .field::<Option<u32>>("limit", None)
///     .build();
/// assert_eq!(
///     args.schema(),
///     &serde_json::json!({
///         "type": "object",
///         "properties": {
///             "query": {"type": "string", "description": "What to look for."},
///             "limit": {"type": "integer", "format": "uint32", "minimum": 0}
///         },
///         "required": ["query"],
///         "additionalProperties": false
///     })
/// );
/// ```
pub struct ArgsObject {
    generator: SchemaGenerator,
    properties: Map<String, Value>,
    required: Vec<Value>,
}

impl std::fmt::Debug for ArgsObject {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ArgsObject")
            .field("properties", &self.properties)
            .field("required", &self.required)
            .finish_non_exhaustive()
    }
}

impl Default for ArgsObject {
    fn default() -> Self {
        Self::new()
    }
}

impl ArgsObject {
    /// An object schema with no properties yet.
    pub fn new() -> Self {
        Self {
            generator: generator(),
            properties: Map::new(),
            required: Vec::new(),
        }
    }

    /// Adds the argument `name` of type `T`, required unless `T` reads from `null`
    /// (see [`is_optional`]). A description replaces the one the type's schema has.
    #[must_use]
    pub fn field<T: JsonSchema + DeserializeOwned>(
        self,
        name: &str,
        description: Option<&str>,
    ) -> Self {
        let required = !is_optional::<T>();
        self.property::<T>(name, description, required)
    }

    /// Adds the argument `name` of type `T`, which may be left out (it has a default).
    #[must_use]
    pub fn defaulted_field<T: JsonSchema>(self, name: &str, description: Option<&str>) -> Self {
        self.property::<T>(name, description, false)
    }

    fn property<T: JsonSchema>(
        mut self,
        name: &str,
        description: Option<&str>,
        required: bool,
    ) -> Self {
        let mut schema = self.generator.subschema_for::<T>().to_value();
        if !required {
            remove_null(&mut schema);
        }
        if let Some(description) = description {
            set_description(&mut schema, description);
        }
        self.properties.insert(name.to_owned(), schema);
        if required {
            self.required.push(Value::String(name.to_owned()));
        }
        self
    }

    /// The object schema.
    pub fn build(mut self) -> Args {
        let mut root = Map::new();
        root.insert("type".to_owned(), Value::from("object"));
        root.insert("properties".to_owned(), Value::Object(self.properties));
        if !self.required.is_empty() {
            root.insert("required".to_owned(), Value::Array(self.required));
        }
        root.insert("additionalProperties".to_owned(), Value::Bool(false));
        let definitions = self.generator.take_definitions(true);
        if !definitions.is_empty() {
            root.insert("$defs".to_owned(), Value::Object(definitions));
        }
        let mut schema = Value::Object(root);
        strip_optional_nulls(&mut schema);
        Args::new(schema)
    }
}

/// Sets a schema's description (a boolean schema becomes an object schema first).
fn set_description(schema: &mut Value, description: &str) {
    if let Value::Bool(true) = schema {
        *schema = Value::Object(Map::new());
    }
    if let Value::Object(object) = schema {
        object.insert("description".to_owned(), Value::from(description));
    }
}

/// Removes `null` from what a schema admits (the forms schemars writes for `Option<T>`).
fn remove_null(schema: &mut Value) {
    let Value::Object(object) = schema else {
        return;
    };
    if let Some(Value::Array(types)) = object.get_mut("type") {
        types.retain(|t| t != "null");
        if types.len() == 1 {
            let only = types.remove(0);
            object.insert("type".to_owned(), only);
        }
    }
    if let Some(Value::Array(values)) = object.get_mut("enum") {
        values.retain(|v| !v.is_null());
    }
    if let Some(Value::Array(variants)) = object.get_mut("anyOf") {
        variants.retain(|v| v.get("type").and_then(Value::as_str) != Some("null"));
        if variants.len() == 1 {
            let Some(Value::Object(only)) = variants.pop() else {
                return;
            };
            object.remove("anyOf");
            for (key, value) in only {
                object.entry(key).or_insert(value);
            }
        }
    }
}

/// Applies [`remove_null`] to every property that is not required, at any depth.
fn strip_optional_nulls(schema: &mut Value) {
    match schema {
        Value::Object(object) => {
            let required: Vec<String> = object
                .get("required")
                .and_then(Value::as_array)
                .map(|r| {
                    r.iter()
                        .filter_map(Value::as_str)
                        .map(str::to_owned)
                        .collect()
                })
                .unwrap_or_default();
            if let Some(Value::Object(properties)) = object.get_mut("properties") {
                for (name, property) in properties.iter_mut() {
                    if !required.contains(name) {
                        remove_null(property);
                    }
                }
            }
            for value in object.values_mut() {
                strip_optional_nulls(value);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(strip_optional_nulls),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;
    use serde_json::json;

    #[derive(Deserialize, JsonSchema)]
    #[allow(dead_code)]
    struct Filter {
        /// The field to filter on.
        field: String,
        min: Option<f64>,
    }

    #[derive(Deserialize, JsonSchema)]
    #[allow(dead_code)]
    struct Tree {
        label: String,
        children: Vec<Tree>,
    }

    #[test]
    fn nested_types_are_inlined_and_optional_means_absent() {
        let args = ArgsObject::new()
            .field::<Vec<Filter>>("filters", Some("Filters to apply."))
            .field::<Option<Filter>>("extra", None)
            .build();
        let schema = args.schema();
        assert!(!schema.to_string().contains("$ref"), "{schema}");
        assert!(schema.get("$defs").is_none());
        let item = &schema["properties"]["filters"]["items"];
        assert_eq!(item["type"], "object");
        assert_eq!(
            item["properties"]["field"]["description"],
            "The field to filter on."
        );
        assert_eq!(item["properties"]["min"]["type"], "number");
        assert_eq!(item["required"], json!(["field"]));
        assert_eq!(schema["properties"]["extra"]["type"], "object");
        assert_eq!(schema["required"], json!(["filters"]));
        assert_eq!(schema["additionalProperties"], false);
    }

    #[test]
    fn recursive_types_keep_definitions_at_the_root() {
        let args = ArgsObject::new().field::<Tree>("tree", None).build();
        let schema = args.schema();
        assert!(schema["$defs"]["Tree"].is_object(), "{schema}");
        assert_eq!(
            schema["properties"]["tree"]["properties"]["children"]["items"]["$ref"],
            "#/$defs/Tree"
        );
        // The schema compiles and accepts a tree.
        let validator = jsonschema::validator_for(schema).unwrap();
        assert!(
            validator.is_valid(&json!({"tree": {"label": "a", "children": [
            {"label": "b", "children": []}]}}))
        );
        assert!(!validator.is_valid(&json!({"tree": {"label": "a", "children": [{}]}})));
    }

    #[test]
    fn optional_is_what_reads_from_null() {
        assert!(is_optional::<Option<u8>>());
        assert!(is_optional::<Value>());
        assert!(!is_optional::<u8>());
        assert!(!is_optional::<Vec<u8>>());
        assert!(!is_optional::<String>());
    }

    #[test]
    fn type_schema_drops_title() {
        let schema = type_schema::<Filter>();
        assert!(schema.get("title").is_none());
        assert!(schema.get("$schema").is_none());
        assert_eq!(schema["type"], "object");
    }
}
