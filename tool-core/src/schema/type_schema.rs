//! Provider-safe JSON Schemas from Rust types: what `#[tool_fn]` and `#[derive(ToolArgs)]`
//! build their schemas with, usable by hand-written tools too.
//!
//! The rules, chosen so that every provider accepts the result:
//! - subschemas are inlined: no `$ref`/`$defs`, except for a recursive type, whose
//!   definitions go in the root's `$defs` (a recursive type cannot be inlined);
//! - the root of an argument schema is `{"type": "object", …, "additionalProperties": false}`,
//!   with no `title` and no `$schema`;
//! - in an argument schema, an optional property (one the model may leave out) does not also
//!   admit `null`: leaving it out is the way to say "none" (validation drops an optional
//!   `null` anyway). A result schema keeps `null` where the type has it: serde writes a
//!   `None` field as `null`;
//! - a fixed-width integer (`u8`…`u64`, `i8`…`i64`, `usize`, `isize` and their `NonZero`
//!   forms, known by the `format` schemars writes for them) has both its type's bounds as
//!   `minimum` and `maximum`, wherever it occurs, so that validation refuses any number the
//!   tool could not read.

use schemars::JsonSchema;
use schemars::generate::{SchemaGenerator, SchemaSettings};
use serde::de::DeserializeOwned;
use serde_json::{Map, Number, Value};

use crate::schema::subschemas::each_schema_mut;
use crate::tool::args::type_names;
use crate::{Args, lenient};

fn generator() -> SchemaGenerator {
    SchemaSettings::draft2020_12()
        .with(|settings| {
            settings.inline_subschemas = true;
            settings.meta_schema = None;
        })
        .into_generator()
}

/// A type with a JSON Schema: schemars 1.x's [`JsonSchema`], under a name of its own so that
/// a missing implementation is reported as what to do rather than as a bare trait bound.
///
/// Every `JsonSchema` type is one (a blanket implementation); there is nothing to implement.
/// An argument type of `#[tool_fn]`, `#[derive(ToolArgs)]` or [`ArgsObject::field`] must be
/// one: derive `schemars::JsonSchema` on it, from schemars 1.x (`schemars = "1"` in
/// `Cargo.toml`). schemars 0.8's `JsonSchema` is another trait and does not count.
/// A type deriving `ToolArgs` is not one: it is read as a tool's whole arguments (a
/// `#[tool_fn]` parameter marked `#[args]`), and a type taken as one argument derives
/// `serde::Deserialize` and `schemars::JsonSchema` instead.
///
/// ```
/// use toolsmith::HasJsonSchema;
///
/// #[derive(schemars::JsonSchema)]
/// struct Point { x: f64, y: f64 }
///
/// fn has_schema<T: HasJsonSchema>() {}
/// has_schema::<Point>();
/// has_schema::<Vec<String>>();
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` has no JSON Schema: derive `schemars::JsonSchema` (schemars 1.x, `schemars = \"1\"`)",
    label = "this argument's type needs a JSON Schema",
    note = "add `#[derive(schemars::JsonSchema)]` to `{Self}`, with `schemars = \"1\"` in Cargo.toml: the `JsonSchema` of schemars 0.8 is a different trait and does not count",
    note = "for a type of another crate, enable that crate's schemars 1 feature if it has one, or wrap the type in one of yours",
    note = "a type deriving `toolsmith::ToolArgs` is read as a tool's whole arguments (`ToolArgs::parse`, `FnTool`), not as one of them: mark the `#[tool_fn]` parameter `#[args]` to take `{Self}` as the whole arguments; to take it as one argument (a parameter beside others, a field), derive `serde::Deserialize` and `schemars::JsonSchema` for it instead of `ToolArgs`"
)]
pub trait HasJsonSchema: JsonSchema {}

impl<T: JsonSchema + ?Sized> HasJsonSchema for T {}

/// Whether an argument of type `T` may be left out: true when `T` reads from `null`
/// (`Option<U>`, `serde_json::Value`, `()`), which is how a missing argument is read.
pub fn is_optional<T: DeserializeOwned>() -> bool {
    lenient::from_value::<T>(&Value::Null).is_ok()
}

/// The provider-safe schema of the type `T`: inlined, without `title` or `$schema`, with
/// `$defs` only for recursive types.
///
/// ```
/// let schema = toolsmith::type_schema::<Vec<u8>>();
/// assert_eq!(schema["type"], "array");
/// assert_eq!(schema["items"]["type"], "integer");
/// ```
pub fn type_schema<T: JsonSchema>() -> Value {
    let mut schema = root_schema::<T>();
    finish(&mut schema);
    schema
}

/// The result schema of a tool returning `T`: as [`type_schema`], except that `null` stays
/// allowed where `T` has it, since serde writes an optional field that is `None` as `null`.
///
/// ```
/// #[derive(serde::Serialize, schemars::JsonSchema)]
/// struct Report { name: String, note: Option<String> }
///
/// let returns = toolsmith::returns_schema::<Report>();
/// let written = serde_json::to_value(Report { name: "a".into(), note: None }).unwrap();
/// assert!(jsonschema::is_valid(returns.schema(), &written));
/// ```
pub fn returns_schema<T: JsonSchema>() -> Args {
    let mut schema = root_schema::<T>();
    bound_integers(&mut schema);
    Args::new(schema)
}

/// schemars' schema of `T`, inlined, without `title` or `$schema`.
fn root_schema<T: JsonSchema>() -> Value {
    let mut generator = generator();
    let mut schema = generator.root_schema_for::<T>().to_value();
    if let Value::Object(object) = &mut schema {
        object.remove("title");
        object.remove("$schema");
    }
    schema
}

/// A builder of an argument object schema, one property per argument.
///
/// ```
/// use toolsmith::ArgsObject;
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
///             "limit": {"type": "integer", "format": "uint32", "minimum": 0, "maximum": 4294967295u32}
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
    #[must_use]
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
    pub fn field<T: HasJsonSchema + DeserializeOwned>(
        self,
        name: &str,
        description: Option<&str>,
    ) -> Self {
        let required = !is_optional::<T>();
        self.property::<T>(name, description, required)
    }

    /// Adds the argument `name` of type `T`, which may be left out (it has a default).
    #[must_use]
    pub fn defaulted_field<T: HasJsonSchema>(self, name: &str, description: Option<&str>) -> Self {
        self.property::<T>(name, description, false)
    }

    fn property<T: JsonSchema>(
        mut self,
        name: &str,
        description: Option<&str>,
        required: bool,
    ) -> Self {
        let schema = self.generator.subschema_for::<T>().to_value();
        self.add_property(name, schema, description, required)
    }

    /// The argument `name` of the schema `schema`: out of line and not generic, so that it
    /// is compiled once rather than for each argument type.
    #[inline(never)]
    fn add_property(
        mut self,
        name: &str,
        mut schema: Value,
        description: Option<&str>,
        required: bool,
    ) -> Self {
        // An untyped argument (`serde_json::Value`) is `{}`: some providers refuse `true`
        // as a property's schema.
        if schema == Value::Bool(true) {
            schema = Value::Object(Map::new());
        }
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
    #[must_use]
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
        finish(&mut schema);
        Args::new(schema)
    }
}

/// The rewrites every generated schema gets (see the module's rules).
fn finish(schema: &mut Value) {
    strip_optional_nulls(schema);
    bound_integers(schema);
}

/// Sets an object schema's description (`add_property` has made an untyped `true` an
/// object schema).
fn set_description(schema: &mut Value, description: &str) {
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

/// The lowest and highest values of the integer type schemars names by `format` (`int` and
/// `uint` are `isize` and `usize`); `None` for any other format, and for the 128-bit ones,
/// whose bounds a JSON number read by `serde_json` cannot carry.
fn format_range(format: &str) -> Option<(Number, Number)> {
    fn range<T: Into<Number>>(min: T, max: T) -> (Number, Number) {
        (min.into(), max.into())
    }
    Some(match format {
        "int8" => range(i8::MIN, i8::MAX),
        "int16" => range(i16::MIN, i16::MAX),
        "int32" => range(i32::MIN, i32::MAX),
        "int64" => range(i64::MIN, i64::MAX),
        "int" => range(isize::MIN as i64, isize::MAX as i64),
        "uint8" => range(u8::MIN, u8::MAX),
        "uint16" => range(u16::MIN, u16::MAX),
        "uint32" => range(u32::MIN, u32::MAX),
        "uint64" => range(u64::MIN, u64::MAX),
        "uint" => range(usize::MIN as u64, usize::MAX as u64),
        _ => return None,
    })
}

/// Gives every integer schema with a fixed-width `format` its type's `minimum` and
/// `maximum`, at any depth; a bound already there that is tighter (`NonZeroU32`'s
/// `minimum: 1`, a `#[schemars(range(..))]`) is kept.
fn bound_integers(schema: &mut Value) {
    each_schema_mut(schema, &mut |object| {
        let integer = object
            .get("type")
            .and_then(|declared| type_names(declared, "integer"))
            == Some(true);
        let range = object
            .get("format")
            .and_then(Value::as_str)
            .and_then(format_range);
        if let (true, Some((min, max))) = (integer, range) {
            tighten(object, "minimum", min, std::cmp::Ordering::Greater);
            tighten(object, "maximum", max, std::cmp::Ordering::Less);
        }
    });
}

/// Sets `keyword` to `bound`, unless the value already there compares to it as `tighter`
/// (`Greater` for a lower bound, `Less` for an upper one).
fn tighten(
    object: &mut Map<String, Value>,
    keyword: &str,
    bound: Number,
    tighter: std::cmp::Ordering,
) {
    if let Some(Value::Number(present)) = object.get(keyword)
        && compare(present, &bound) == Some(tighter)
    {
        return;
    }
    object.insert(keyword.to_owned(), Value::Number(bound));
}

/// Compares two JSON numbers: exactly when both are integers, as `f64` otherwise (`b` is
/// always an integer here, and a float rounds to the nearest double, so no float lies
/// strictly between an integer and its rounding: the order is still exact).
fn compare(a: &Number, b: &Number) -> Option<std::cmp::Ordering> {
    fn integer(n: &Number) -> Option<i128> {
        n.as_i64()
            .map(i128::from)
            .or_else(|| n.as_u64().map(i128::from))
    }
    match (integer(a), integer(b)) {
        (Some(a), Some(b)) => Some(a.cmp(&b)),
        _ => a.as_f64()?.partial_cmp(&b.as_f64()?),
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
    fn an_untyped_argument_s_schema_is_an_empty_object() {
        // As the `#[tool_fn]` guide's table has it for `serde_json::Value`: `{}`, not `true`,
        // which some providers refuse as a property's schema.
        let args = ArgsObject::new()
            .field::<Value>("any", None)
            .defaulted_field::<Value>("other", None)
            .field::<Value>("described", Some("Anything."))
            .build();
        let properties = &args.schema()["properties"];
        assert_eq!(properties["any"], json!({}));
        assert_eq!(properties["other"], json!({}));
        assert_eq!(properties["described"], json!({"description": "Anything."}));
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

    #[derive(Deserialize, JsonSchema)]
    #[allow(dead_code)]
    struct Sizes {
        count: u32,
        #[schemars(range(min = 2, max = 9))]
        ranged: u64,
        offsets: Vec<i64>,
        step: Option<std::num::NonZeroUsize>,
    }

    #[derive(Deserialize, JsonSchema)]
    #[allow(dead_code)]
    struct Chain {
        id: u32,
        next: Option<Box<Chain>>,
    }

    /// `(minimum, maximum)` of a schema, as JSON.
    fn bounds(schema: &Value) -> (Value, Value) {
        (schema["minimum"].clone(), schema["maximum"].clone())
    }

    #[test]
    fn fixed_width_integers_have_both_bounds() {
        use std::num::*;
        assert_eq!(bounds(&type_schema::<u8>()), (json!(0), json!(255)));
        assert_eq!(bounds(&type_schema::<u16>()), (json!(0), json!(65535)));
        assert_eq!(bounds(&type_schema::<u32>()), (json!(0), json!(u32::MAX)));
        assert_eq!(bounds(&type_schema::<u64>()), (json!(0), json!(u64::MAX)));
        assert_eq!(
            bounds(&type_schema::<usize>()),
            (json!(0), json!(usize::MAX))
        );
        assert_eq!(bounds(&type_schema::<i8>()), (json!(-128), json!(127)));
        assert_eq!(
            bounds(&type_schema::<i16>()),
            (json!(i16::MIN), json!(i16::MAX))
        );
        assert_eq!(
            bounds(&type_schema::<i32>()),
            (json!(i32::MIN), json!(i32::MAX))
        );
        assert_eq!(
            bounds(&type_schema::<i64>()),
            (json!(i64::MIN), json!(i64::MAX))
        );
        assert_eq!(
            bounds(&type_schema::<isize>()),
            (json!(isize::MIN), json!(isize::MAX))
        );
        // Unsigned `NonZero`s start at 1; signed ones keep schemars' `not: {const: 0}`.
        assert_eq!(bounds(&type_schema::<NonZeroU8>()), (json!(1), json!(255)));
        assert_eq!(
            bounds(&type_schema::<NonZeroU32>()),
            (json!(1), json!(u32::MAX))
        );
        assert_eq!(
            bounds(&type_schema::<NonZeroU64>()),
            (json!(1), json!(u64::MAX))
        );
        assert_eq!(
            bounds(&type_schema::<NonZeroUsize>()),
            (json!(1), json!(usize::MAX))
        );
        let signed = type_schema::<NonZeroI32>();
        assert_eq!(bounds(&signed), (json!(i32::MIN), json!(i32::MAX)));
        assert_eq!(signed["not"], json!({"const": 0}));
        assert_eq!(
            bounds(&type_schema::<NonZeroI64>()),
            (json!(i64::MIN), json!(i64::MAX))
        );
        // Floats and 128-bit integers are left as they are.
        assert_eq!(bounds(&type_schema::<f64>()), (Value::Null, Value::Null));
        assert_eq!(bounds(&type_schema::<u128>()), (json!(0), Value::Null));
    }

    #[test]
    fn nested_integers_have_both_bounds() {
        let args = ArgsObject::new()
            .field::<Sizes>("sizes", None)
            .field::<Option<u32>>("limit", None)
            .field::<Vec<Option<u16>>>("gaps", None)
            .field::<Chain>("chain", None)
            .build();
        let schema = args.schema();
        let sizes = &schema["properties"]["sizes"]["properties"];
        assert_eq!(bounds(&sizes["count"]), (json!(0), json!(u32::MAX)));
        // A tighter range written on the field is kept.
        assert_eq!(bounds(&sizes["ranged"]), (json!(2), json!(9)));
        assert_eq!(
            bounds(&sizes["offsets"]["items"]),
            (json!(i64::MIN), json!(i64::MAX))
        );
        assert_eq!(bounds(&sizes["step"]), (json!(1), json!(usize::MAX)));
        assert_eq!(
            bounds(&schema["properties"]["limit"]),
            (json!(0), json!(u32::MAX))
        );
        let gap = &schema["properties"]["gaps"]["items"];
        assert_eq!(gap["type"], json!(["integer", "null"]));
        assert_eq!(bounds(gap), (json!(0), json!(65535)));
        // In the definitions of a recursive type too.
        assert_eq!(
            bounds(&schema["$defs"]["Chain"]["properties"]["id"]),
            (json!(0), json!(u32::MAX))
        );
        // Instances (`const`, `enum`, `default`) are not schemas and are left alone.
        let mut schema = json!({"type": "integer", "format": "uint8",
            "default": {"type": "integer", "format": "uint8"}});
        bound_integers(&mut schema);
        assert_eq!(
            schema["default"],
            json!({"type": "integer", "format": "uint8"})
        );
        assert_eq!(bounds(&schema), (json!(0), json!(255)));
        // Properties named like those keywords are schemas all the same.
        let args = ArgsObject::new()
            .field::<u32>("default", None)
            .field::<u8>("const", None)
            .field::<u16>("enum", None)
            .field::<i8>("examples", None)
            .build();
        let properties = &args.schema()["properties"];
        assert_eq!(bounds(&properties["default"]), (json!(0), json!(u32::MAX)));
        assert_eq!(bounds(&properties["const"]), (json!(0), json!(255)));
        assert_eq!(bounds(&properties["enum"]), (json!(0), json!(65535)));
        assert_eq!(bounds(&properties["examples"]), (json!(-128), json!(127)));
    }
}
