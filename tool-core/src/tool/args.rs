//! [`Args`]: a JSON Schema that describes a tool's arguments or result.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::tool::nesting::{check_depth, clone_value, free_value, values_equal};

/// A JSON Schema (draft 2020-12) value describing a tool's arguments or its result.
///
/// ```
/// use toolsmith::{Args, scheme};
///
/// let args = Args::new(scheme::object().required("path", scheme::string()).build());
/// assert_eq!(args.schema()["properties"]["path"]["type"], "string");
/// ```
///
/// A schema nested deeper than [`MAX_JSON_DEPTH`](crate::MAX_JSON_DEPTH) is refused when its
/// tool is registered or rendered; until then it is copied, compared, shown and dropped
/// without recursion.
#[derive(Serialize, Deserialize)]
#[serde(transparent)]
pub struct Args(Value);

impl Clone for Args {
    fn clone(&self) -> Self {
        Self(clone_value(&self.0))
    }
}

impl PartialEq for Args {
    fn eq(&self, other: &Self) -> bool {
        values_equal(&self.0, &other.0)
    }
}

impl std::fmt::Debug for Args {
    /// `Args(schema)`, or `Args(<nested deeper than 128 levels>)` for a schema too deep to
    /// print.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match check_depth(&self.0) {
            Ok(()) => f.debug_tuple("Args").field(&self.0).finish(),
            Err(too_deep) => write!(f, "Args(<{too_deep}>)"),
        }
    }
}

impl Drop for Args {
    fn drop(&mut self) {
        free_value(std::mem::take(&mut self.0));
    }
}

/// Whether a schema's `type` (a name, or a list of names) names `wanted`; `None` for a
/// `type` of another shape.
pub(crate) fn type_names(declared: &Value, wanted: &str) -> Option<bool> {
    match declared {
        Value::String(name) => Some(name == wanted),
        Value::Array(names) => Some(names.iter().any(|name| name == wanted)),
        _ => None,
    }
}

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

    /// The root `type` of the schema when it refuses every object: a type name other than
    /// `object`, or a list of names without it (`"string"`, `["string", "number"]`). A
    /// call's arguments are always a JSON object, so no call could pass such a schema, and
    /// registration refuses it ([`RegistrationError::ArgumentsNotAnObject`]). `None` when the
    /// root's `type` allows objects or says nothing usable (none, `object`, a list holding
    /// it; a `type` of another shape is the schema compiler's to refuse).
    ///
    /// ```
    /// use toolsmith::Args;
    /// use serde_json::json;
    ///
    /// assert_eq!(Args::new(json!({"type": "string"})).root_type_refusing_objects(),
    ///     Some(&json!("string")));
    /// assert_eq!(Args::new(json!({"type": ["object", "null"]})).root_type_refusing_objects(), None);
    /// assert_eq!(Args::new(json!({"properties": {}})).root_type_refusing_objects(), None);
    /// ```
    ///
    /// [`RegistrationError::ArgumentsNotAnObject`]: crate::RegistrationError::ArgumentsNotAnObject
    pub fn root_type_refusing_objects(&self) -> Option<&Value> {
        let declared = self.0.get("type")?;
        (type_names(declared, "object") == Some(false)).then_some(declared)
    }

    /// The schema value, mutably (for transforms that adjust a schema in place).
    pub fn schema_mut(&mut self) -> &mut Value {
        &mut self.0
    }

    /// Unwraps the schema value.
    pub fn into_inner(mut self) -> Value {
        std::mem::take(&mut self.0)
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
        args.into_inner()
    }
}
