//! The argument schema of a typed argument struct, in the form providers accept, and the
//! reading of a call's arguments into it: the two halves `#[tool_fn]` will generate.

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::Value;
use toolsmith_core::{Args, ToolArgs, ToolArguments, ToolError};

/// The JSON Schema of `T`'s fields: an object schema, subschemas inlined (no `$ref`), no
/// `title` or `$schema`, and `additionalProperties: false`.
pub(crate) fn args_schema<T: JsonSchema>() -> Args {
    let generator = schemars::generate::SchemaSettings::draft2020_12()
        .with(|settings| {
            settings.inline_subschemas = true;
            settings.meta_schema = None;
        })
        .into_generator();
    let mut schema = generator.into_root_schema_for::<T>().to_value();
    if let Value::Object(map) = &mut schema {
        map.remove("title");
        map.remove("$schema");
        map.insert("additionalProperties".into(), Value::Bool(false));
        if !map.contains_key("properties") {
            map.insert("properties".into(), Value::Object(Default::default()));
        }
    }
    Args::new(schema)
}

/// Reads a call's arguments into `T` leniently (`"42"` for 42), as `ToolArgs::parse` does;
/// an error names the tool and the offending argument.
pub(crate) fn parse_args<T: DeserializeOwned>(
    tool: &str,
    arguments: &ToolArguments,
) -> Result<T, ToolError> {
    ToolArgs::new(tool, arguments).parse::<T>()
}
