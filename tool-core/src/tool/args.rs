//! [`Args`]: a JSON Schema that describes a tool's arguments or result.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A JSON Schema (draft 2020-12) value describing a tool's arguments or its result.
///
/// ```
/// use toolsmith_core::{Args, scheme};
///
/// let args = Args::new(scheme::object().required("path", scheme::string()).build());
/// assert_eq!(args.schema()["properties"]["path"]["type"], "string");
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Args(Value);

impl Args {
    /// Wraps a JSON Schema value.
    pub fn new(schema: impl Into<Value>) -> Self {
        Self(schema.into())
    }

    /// The schema of a tool that takes no arguments: an object with no properties.
    pub fn empty() -> Self {
        Self(serde_json::json!({"type": "object", "properties": {}, "additionalProperties": false}))
    }

    /// The schema value.
    pub fn schema(&self) -> &Value {
        &self.0
    }

    /// The schema value, mutably (for transforms that adjust a schema in place).
    pub fn schema_mut(&mut self) -> &mut Value {
        &mut self.0
    }

    /// Unwraps the schema value.
    pub fn into_inner(self) -> Value {
        self.0
    }

    /// The names of the schema's top-level properties, in declaration order.
    pub fn property_names(&self) -> impl Iterator<Item = &str> {
        self.0
            .get("properties")
            .and_then(Value::as_object)
            .into_iter()
            .flat_map(|props| props.keys().map(String::as_str))
    }
}

impl Default for Args {
    fn default() -> Self {
        Self::empty()
    }
}

impl From<Value> for Args {
    fn from(schema: Value) -> Self {
        Self(schema)
    }
}

impl From<Args> for Value {
    fn from(args: Args) -> Self {
        args.0
    }
}
