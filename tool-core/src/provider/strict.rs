//! The strict-schema transform: a tool's argument schema rewritten so that OpenAI's strict
//! mode (Structured Outputs for function calling) or Anthropic's strict tool use accepts it.
//!
//! OpenAI: every object closed (`additionalProperties: false`) and listing every property as
//! required, optional properties made nullable as `anyOf [T, {"type": "null"}]`; Anthropic:
//! objects closed, `required` kept as given. For both: keywords the mode does not support are
//! moved into the description (so the model still reads them, and validation still enforces
//! them), as is an Anthropic `pattern` outside its regex subset; type arrays and `oneOf`
//! become `anyOf`, `const` becomes a one-value `enum`, a `$ref` never has siblings, arrays
//! have typed `items`, the root is a plain object. What cannot be made strict (open maps,
//! untyped values, tuples, recursion where it is not supported, a schema past OpenAI's limits
//! of 10 nested levels, 5000 properties, 1000 enum values, 15,000 characters for an enum of
//! more than 250 values and 120,000 characters of names and enum values) is an error naming
//! the JSON path.

use serde_json::{Map, Value, json};

use super::refs::{DEFINITION_KEYWORDS, Definitions, merge_all_of};
use super::{Provider, RenderError};
use crate::MAX_JSON_DEPTH;
use crate::tool::nesting::{TooDeep, check_depth};

/// Which provider's strict rules a transform follows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum StrictDialect {
    /// OpenAI Chat Completions and Responses `strict: true`.
    OpenAi,
    /// Anthropic `strict: true` tool use.
    Anthropic,
}

/// The deepest nesting of objects OpenAI's strict mode accepts.
const OPENAI_MAX_DEPTH: usize = 10;
/// The most object properties, counted over the whole schema, OpenAI's strict mode accepts.
const OPENAI_MAX_PROPERTIES: usize = 5000;
/// The most `enum` values, counted over the whole schema, OpenAI's strict mode accepts.
const OPENAI_MAX_ENUM_VALUES: usize = 1000;
/// Past this many values, one `enum`'s strings may hold at most
/// [`OPENAI_MAX_LARGE_ENUM_CHARS`] characters in all.
const OPENAI_LARGE_ENUM: usize = 250;
const OPENAI_MAX_LARGE_ENUM_CHARS: usize = 15_000;
/// The most characters of property names, definition names and `enum` strings (`const`
/// made one) a schema may hold in all.
const OPENAI_MAX_NAME_AND_VALUE_CHARS: usize = 120_000;

/// String formats OpenAI's strict mode accepts.
const OPENAI_FORMATS: [&str; 9] = [
    "date-time",
    "time",
    "date",
    "duration",
    "email",
    "hostname",
    "ipv4",
    "ipv6",
    "uuid",
];
/// String formats Anthropic's strict mode accepts.
const ANTHROPIC_FORMATS: [&str; 10] = [
    "date-time",
    "time",
    "date",
    "duration",
    "email",
    "hostname",
    "uri",
    "ipv4",
    "ipv6",
    "uuid",
];

/// The most subschemas one schema's transform (strict, or Gemini's subset) enters: inlining a
/// `$ref` copies its definition, and definitions that each use the next one twice would
/// double the copy at every step.
pub(crate) const MAX_INLINED_SCHEMAS: usize = 100_000;

/// The subschemas a transform has entered, and how deep it is in them (a `$ref` followed is
/// a level too): inlined definitions can make a shallow schema deep, and a small one huge.
#[derive(Debug, Default)]
pub(crate) struct InlineBudget {
    depth: usize,
    entered: usize,
}

impl InlineBudget {
    /// Enters one more subschema, at `path`, or says which bound that would pass.
    pub(crate) fn enter(&mut self, path: &str) -> Result<(), SchemaError> {
        self.entered += 1;
        if self.entered > MAX_INLINED_SCHEMAS {
            return Err(SchemaError::new(
                path,
                format!(
                    "the schema, its `$ref`s inlined, has more than {MAX_INLINED_SCHEMAS} subschemas; use each definition in fewer places"
                ),
            ));
        }
        if self.depth >= MAX_JSON_DEPTH {
            return Err(SchemaError::new(
                path,
                format!("the schema, its `$ref`s inlined, is {TooDeep}"),
            ));
        }
        self.depth += 1;
        Ok(())
    }

    /// Leaves the subschema last entered.
    pub(crate) fn leave(&mut self) {
        self.depth -= 1;
    }
}

/// Keywords that say nothing to a model and are dropped rather than moved.
pub(crate) const META_KEYWORDS: [&str; 4] = ["$schema", "$id", "$comment", "$anchor"];

/// Where a schema cannot be made strict, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SchemaError {
    pub(crate) path: String,
    pub(crate) reason: String,
}

impl SchemaError {
    pub(crate) fn new(path: &str, reason: impl Into<String>) -> Self {
        Self {
            path: path.to_owned(),
            reason: reason.into(),
        }
    }

    pub(crate) fn into_render_error(self, provider: Provider, tool: &str) -> RenderError {
        RenderError {
            provider,
            tool: tool.to_owned(),
            path: self.path,
            reason: self.reason,
        }
    }
}

/// A strict schema, with the counts Anthropic limits per request.
#[derive(Debug)]
pub(crate) struct StrictSchema {
    pub(crate) schema: Value,
    /// Properties that are not required, at every level.
    pub(crate) optional: usize,
    /// Properties whose schema is a union (`anyOf`), at every level.
    pub(crate) unions: usize,
}

/// Rewrites a tool's argument schema for `provider`'s strict mode (OpenAI Chat, OpenAI
/// Responses or Anthropic).
///
/// ```
/// use toolsmith::provider::{Provider, strict_schema};
/// use serde_json::json;
///
/// let schema = json!({
///     "type": "object",
///     "properties": {
///         "path": {"type": "string", "minLength": 1, "description": "File to read."},
///         "lines": {"type": ["integer", "null"]},
///         "tags": {"type": "array", "items": {"type": "string"}, "uniqueItems": true}
///     },
///     "required": ["path"]
/// });
/// let strict = strict_schema(Provider::OpenAiChat, "read", &schema).unwrap();
/// assert_eq!(strict, json!({
///     "type": "object",
///     "properties": {
///         "path": {"type": "string", "description": "File to read. (minLength: 1)"},
///         "lines": {"anyOf": [{"type": "integer"}, {"type": "null"}]},
///         "tags": {"anyOf": [
///             {"type": "array", "items": {"type": "string"}, "description": "(uniqueItems: true)"},
///             {"type": "null"}
///         ]}
///     },
///     "required": ["path", "lines", "tags"],
///     "additionalProperties": false
/// }));
///
/// let open_map = json!({"type": "object", "properties": {
///     "env": {"type": "object", "additionalProperties": {"type": "string"}}
/// }});
/// let err = strict_schema(Provider::OpenAiChat, "run", &open_map).unwrap_err();
/// assert_eq!(err.tool, "run");
/// assert_eq!(err.path, "/properties/env/additionalProperties");
/// ```
///
/// A schema nested deeper than [`MAX_JSON_DEPTH`](crate::MAX_JSON_DEPTH) is an error too,
/// before it is walked.
pub fn strict_schema(provider: Provider, tool: &str, schema: &Value) -> Result<Value, RenderError> {
    if let Err(too_deep) = check_depth(schema) {
        return Err(SchemaError::new("", format!("the schema is {too_deep}"))
            .into_render_error(provider, tool));
    }
    let dialect = match provider {
        Provider::OpenAiChat | Provider::OpenAiResponses => StrictDialect::OpenAi,
        Provider::Anthropic => StrictDialect::Anthropic,
        Provider::Gemini | Provider::Text => {
            return Err(
                SchemaError::new("", format!("{provider} has no strict mode"))
                    .into_render_error(provider, tool),
            );
        }
    };
    transform(dialect, schema)
        .map(|strict| strict.schema)
        .map_err(|err| err.into_render_error(provider, tool))
}

/// The strict form of `schema` under `dialect`.
pub(crate) fn transform(
    dialect: StrictDialect,
    schema: &Value,
) -> Result<StrictSchema, SchemaError> {
    let defs = Definitions::of(schema);
    let mut transform = Transform {
        dialect,
        defs: &defs,
        optional: 0,
        unions: 0,
        properties: 0,
        budget: InlineBudget::default(),
    };
    let Some(root) = schema.as_object() else {
        return Err(SchemaError::new("", "the root must be an object schema"));
    };
    for keyword in ["anyOf", "oneOf", "$ref"] {
        if root.contains_key(keyword) {
            return Err(SchemaError::new(
                "",
                format!("the root must be a plain object schema, not `{keyword}`"),
            ));
        }
    }
    match root.get("type") {
        Some(Value::String(ty)) if ty == "object" => {}
        None if root.contains_key("properties") || root.is_empty() => {}
        _ => {
            return Err(SchemaError::new(
                "",
                "the root must be an object schema (`type: object`)",
            ));
        }
    }
    let mut root_schema = root.clone();
    root_schema.insert("type".to_owned(), json!("object"));
    // The root's title names the argument type; the tool's own name and description say more.
    root_schema.shift_remove("title");
    let mut out = transform.node(Value::Object(root_schema), "", 0, true)?;
    for keyword in DEFINITION_KEYWORDS {
        let Some(defs) = root.get(keyword).and_then(Value::as_object) else {
            continue;
        };
        let mut strict_defs = Map::new();
        for (name, def) in defs {
            let path = format!("/{keyword}/{}", escape(name));
            strict_defs.insert(name.clone(), transform.node(def.clone(), &path, 0, false)?);
        }
        if let Some(out) = out.as_object_mut() {
            out.insert(keyword.to_owned(), Value::Object(strict_defs));
        }
    }
    if dialect == StrictDialect::OpenAi && transform.properties > OPENAI_MAX_PROPERTIES {
        return Err(SchemaError::new(
            "",
            format!(
                "OpenAI's strict mode allows at most {OPENAI_MAX_PROPERTIES} object properties in one schema; this one has {}",
                transform.properties
            ),
        ));
    }
    if dialect == StrictDialect::OpenAi {
        check_openai_sizes(&out)?;
    }
    Ok(StrictSchema {
        schema: out,
        optional: transform.optional,
        unions: transform.unions,
    })
}

/// OpenAI's limits on a strict schema's `enum`s and names ([`OPENAI_MAX_ENUM_VALUES`],
/// [`OPENAI_MAX_LARGE_ENUM_CHARS`], [`OPENAI_MAX_NAME_AND_VALUE_CHARS`]), checked on the
/// transformed schema (`$ref`s inlined, `const` made `enum`): past them OpenAI refuses the
/// request. A loop with its own stack: the schema may be as deep as
/// [`MAX_JSON_DEPTH`](crate::MAX_JSON_DEPTH).
fn check_openai_sizes(schema: &Value) -> Result<(), SchemaError> {
    let chars = |value: &Value| value.as_str().map_or(0, |s| s.chars().count());
    let (mut enum_values, mut name_chars) = (0_usize, 0_usize);
    let mut pending = vec![schema];
    while let Some(node) = pending.pop() {
        match node {
            Value::Array(items) => pending.extend(items),
            Value::Object(members) => {
                for (key, value) in members {
                    match (key.as_str(), value) {
                        ("enum", Value::Array(values)) => {
                            enum_values += values.len();
                            let strings: usize = values.iter().map(chars).sum();
                            name_chars += strings;
                            if values.len() > OPENAI_LARGE_ENUM
                                && strings > OPENAI_MAX_LARGE_ENUM_CHARS
                            {
                                return Err(SchemaError::new(
                                    "",
                                    format!(
                                        "OpenAI's strict mode allows an enum of more than {OPENAI_LARGE_ENUM} values at most {OPENAI_MAX_LARGE_ENUM_CHARS} characters of strings; one has {} values of {strings}",
                                        values.len()
                                    ),
                                ));
                            }
                        }
                        ("properties" | "$defs" | "definitions", Value::Object(named)) => {
                            name_chars +=
                                named.keys().map(|name| name.chars().count()).sum::<usize>();
                            pending.extend(named.values());
                        }
                        (_, Value::Array(_) | Value::Object(_)) => pending.push(value),
                        _ => {}
                    }
                }
            }
            _ => {}
        }
    }
    if enum_values > OPENAI_MAX_ENUM_VALUES {
        return Err(SchemaError::new(
            "",
            format!(
                "OpenAI's strict mode allows at most {OPENAI_MAX_ENUM_VALUES} enum values in one schema; this one has {enum_values}"
            ),
        ));
    }
    if name_chars > OPENAI_MAX_NAME_AND_VALUE_CHARS {
        return Err(SchemaError::new(
            "",
            format!(
                "OpenAI's strict mode allows at most {OPENAI_MAX_NAME_AND_VALUE_CHARS} characters of property names, definition names and enum values in one schema; this one has {name_chars}"
            ),
        ));
    }
    Ok(())
}

struct Transform<'d, 'a> {
    dialect: StrictDialect,
    defs: &'d Definitions<'a>,
    optional: usize,
    unions: usize,
    properties: usize,
    budget: InlineBudget,
}

impl Transform<'_, '_> {
    /// The strict form of `schema` (owned, so that its parts move into the result instead of
    /// being copied at every level).
    fn node(
        &mut self,
        schema: Value,
        path: &str,
        depth: usize,
        is_root: bool,
    ) -> Result<Value, SchemaError> {
        self.budget.enter(path)?;
        let strict = self.convert(schema, path, depth, is_root);
        self.budget.leave();
        strict
    }

    /// [`node`](Self::node) within the budget.
    fn convert(
        &mut self,
        schema: Value,
        path: &str,
        depth: usize,
        is_root: bool,
    ) -> Result<Value, SchemaError> {
        let mut m = match schema {
            Value::Object(map) => map,
            Value::Bool(true) => return Err(untyped(path)),
            Value::Bool(false) => {
                return Err(SchemaError::new(path, "a `false` schema accepts no value"));
            }
            _ => return Err(SchemaError::new(path, "not a JSON Schema")),
        };
        for keyword in DEFINITION_KEYWORDS {
            if m.shift_remove(keyword).is_some() && !is_root {
                return Err(SchemaError::new(
                    path,
                    format!(
                        "`{keyword}` below the root is not supported; keep definitions at the root"
                    ),
                ));
            }
        }
        for keyword in META_KEYWORDS {
            m.shift_remove(keyword);
        }
        if let Some(title) = m.shift_remove("title")
            && !m.contains_key("description")
        {
            m.insert("description".to_owned(), title);
        }
        if let Some(parts) = m.shift_remove("allOf") {
            let parts = parts
                .as_array()
                .ok_or_else(|| SchemaError::new(path, "`allOf` must be a list"))?;
            merge_all_of(&mut m, parts, self.defs)
                .map_err(|reason| SchemaError::new(path, reason))?;
        }
        if let Some(reference) = m.shift_remove("$ref") {
            return self.reference(reference, m, path, depth);
        }
        if let Some(one_of) = m.shift_remove("oneOf") {
            if m.contains_key("anyOf") {
                return Err(SchemaError::new(
                    path,
                    "both `anyOf` and `oneOf` cannot be made strict",
                ));
            }
            m.insert("anyOf".to_owned(), one_of);
        }
        if let Some(constant) = m.shift_remove("const") {
            m.entry("enum").or_insert_with(|| json!([constant]));
        }
        if !m.contains_key("type")
            && !m.contains_key("anyOf")
            && let Some(values) = m.get("enum").and_then(Value::as_array)
        {
            let mut types: Vec<&str> = Vec::new();
            for value in values {
                let ty = json_type(value);
                if !types.contains(&ty) {
                    types.push(ty);
                }
            }
            let ty = if types.len() == 1 {
                json!(types[0])
            } else {
                json!(types)
            };
            m.insert("type".to_owned(), ty);
        }
        if let Some(Value::Array(types)) = m.get("type") {
            let types: Vec<String> = types
                .iter()
                .map(|t| t.as_str().map(str::to_owned))
                .collect::<Option<_>>()
                .ok_or_else(|| SchemaError::new(path, "`type` must name JSON types"))?;
            if types.len() == 1 {
                m.insert("type".to_owned(), json!(types[0]));
            } else {
                let union = split_types(m, &types);
                return self.node(union, path, depth, false);
            }
        }
        if let Some(branches) = m.shift_remove("anyOf") {
            return self.any_of(branches, m, path, depth);
        }

        let ty = match m.shift_remove("type") {
            Some(Value::String(ty)) => ty,
            None => return Err(untyped(path)),
            Some(_) => {
                return Err(SchemaError::new(
                    path,
                    "`type` must be a string or a list of strings",
                ));
            }
        };
        let description = m.shift_remove("description");
        let mut out = Map::new();
        out.insert("type".to_owned(), json!(ty));
        if let Some(values) = m.shift_remove("enum") {
            out.insert("enum".to_owned(), values);
        }
        match ty.as_str() {
            "object" => self.object(&mut m, &mut out, path, depth, is_root)?,
            "array" => self.array(&mut m, &mut out, path, depth)?,
            "string" => {
                // Anthropic refuses the request for a pattern outside its regex subset: such
                // a pattern moves to the description (validation still enforces it).
                let takes_pattern = match self.dialect {
                    StrictDialect::OpenAi => true,
                    StrictDialect::Anthropic => m
                        .get("pattern")
                        .and_then(Value::as_str)
                        .is_some_and(anthropic_takes_pattern),
                };
                if takes_pattern {
                    keep(&mut m, &mut out, "pattern");
                }
                let formats: &[&str] = match self.dialect {
                    StrictDialect::OpenAi => &OPENAI_FORMATS,
                    StrictDialect::Anthropic => &ANTHROPIC_FORMATS,
                };
                if m.get("format")
                    .and_then(Value::as_str)
                    .is_some_and(|f| formats.contains(&f))
                {
                    keep(&mut m, &mut out, "format");
                }
            }
            "number" | "integer" => {
                if self.dialect == StrictDialect::OpenAi {
                    for keyword in [
                        "minimum",
                        "maximum",
                        "exclusiveMinimum",
                        "exclusiveMaximum",
                        "multipleOf",
                    ] {
                        keep(&mut m, &mut out, keyword);
                    }
                }
            }
            "boolean" | "null" => {}
            other => return Err(SchemaError::new(path, format!("unknown type {other:?}"))),
        }
        set_description(&mut out, description, m);
        Ok(Value::Object(out))
    }

    fn object(
        &mut self,
        m: &mut Map<String, Value>,
        out: &mut Map<String, Value>,
        path: &str,
        depth: usize,
        is_root: bool,
    ) -> Result<(), SchemaError> {
        if self.dialect == StrictDialect::OpenAi && depth >= OPENAI_MAX_DEPTH {
            return Err(SchemaError::new(
                path,
                format!(
                    "OpenAI's strict mode allows at most {OPENAI_MAX_DEPTH} levels of nested objects"
                ),
            ));
        }
        let closed = match m.shift_remove("additionalProperties") {
            None => false,
            Some(Value::Bool(false)) => true,
            Some(_) => {
                return Err(SchemaError::new(
                    &format!("{path}/additionalProperties"),
                    "an open map (`additionalProperties` other than false) cannot be made strict: strict mode needs every key named",
                ));
            }
        };
        // Beside named properties, `patternProperties` only allows extra keys: the closed
        // object accepts a subset of the calls, and the keyword moves to the description.
        // Alone, it is an open map.
        let named = m
            .get("properties")
            .and_then(Value::as_object)
            .is_some_and(|p| !p.is_empty());
        if m.contains_key("patternProperties") && !named {
            return Err(SchemaError::new(
                &format!("{path}/patternProperties"),
                "an open map (`patternProperties`) cannot be made strict: strict mode needs every key named",
            ));
        }
        let properties = match m.shift_remove("properties") {
            Some(Value::Object(properties)) => properties,
            Some(_) => return Err(SchemaError::new(path, "`properties` must be an object")),
            None if is_root || closed => Map::new(),
            None => {
                return Err(SchemaError::new(
                    path,
                    "an object without `properties` accepts any keys (an open map) and cannot be made strict",
                ));
            }
        };
        let required: Vec<String> = m
            .shift_remove("required")
            .and_then(|r| r.as_array().cloned())
            .unwrap_or_default()
            .into_iter()
            .filter_map(|v| v.as_str().map(str::to_owned))
            .filter(|name| properties.contains_key(name))
            .collect();
        self.properties += properties.len();
        let names: Vec<Value> = properties.keys().map(|k| json!(k)).collect();
        let mut strict_properties = Map::new();
        for (name, schema) in properties {
            let property_path = format!("{path}/properties/{}", escape(&name));
            let mut strict = self.node(schema, &property_path, depth + 1, false)?;
            if !required.contains(&name) {
                self.optional += 1;
                if self.dialect == StrictDialect::OpenAi {
                    strict = nullable(strict);
                }
            }
            if strict.get("anyOf").is_some() {
                self.unions += 1;
            }
            strict_properties.insert(name, strict);
        }
        let required: Vec<Value> = match self.dialect {
            StrictDialect::OpenAi => names,
            StrictDialect::Anthropic => required.into_iter().map(Value::String).collect(),
        };
        out.insert("properties".to_owned(), Value::Object(strict_properties));
        out.insert("required".to_owned(), Value::Array(required));
        out.insert("additionalProperties".to_owned(), json!(false));
        Ok(())
    }

    fn array(
        &mut self,
        m: &mut Map<String, Value>,
        out: &mut Map<String, Value>,
        path: &str,
        depth: usize,
    ) -> Result<(), SchemaError> {
        if m.contains_key("prefixItems") || m.get("items").is_some_and(Value::is_array) {
            return Err(SchemaError::new(
                path,
                "a tuple array (`prefixItems` or a list of `items`) cannot be made strict",
            ));
        }
        let items_path = format!("{path}/items");
        match m.shift_remove("items") {
            Some(items @ Value::Object(_)) if items.as_object().is_some_and(|o| !o.is_empty()) => {
                let items = self.node(items, &items_path, depth, false)?;
                out.insert("items".to_owned(), items);
            }
            _ => {
                return Err(SchemaError::new(
                    &items_path,
                    "the array's items have no type; strict mode needs typed `items`",
                ));
            }
        }
        match self.dialect {
            StrictDialect::OpenAi => {
                keep(m, out, "minItems");
                keep(m, out, "maxItems");
            }
            StrictDialect::Anthropic => {
                // Anthropic accepts `minItems` of 0 or 1 only.
                if m.get("minItems")
                    .and_then(Value::as_u64)
                    .is_some_and(|n| n <= 1)
                {
                    keep(m, out, "minItems");
                }
            }
        }
        Ok(())
    }

    fn reference(
        &mut self,
        reference: Value,
        siblings: Map<String, Value>,
        path: &str,
        depth: usize,
    ) -> Result<Value, SchemaError> {
        let Some(reference) = reference.as_str() else {
            return Err(SchemaError::new(path, "`$ref` must be a string"));
        };
        let Some(target) = self.defs.resolve(reference) else {
            return Err(SchemaError::new(
                path,
                format!("`$ref` {reference:?} is not a local reference into the schema's `$defs`"),
            ));
        };
        let recursive = self.defs.is_recursive(reference);
        if recursive && self.dialect == StrictDialect::Anthropic {
            return Err(SchemaError::new(
                path,
                format!(
                    "recursive schemas (`$ref` {reference:?}) are not supported by Anthropic's strict mode"
                ),
            ));
        }
        if siblings.is_empty() {
            return Ok(json!({ "$ref": reference }));
        }
        if !recursive {
            // A `$ref` may not have siblings: inline the target, the siblings overriding it.
            let mut inlined = match target {
                Value::Object(target) => target.clone(),
                _ => return Err(untyped(path)),
            };
            for (key, value) in siblings {
                inlined.insert(key, value);
            }
            return self.node(Value::Object(inlined), path, depth, false);
        }
        // A recursive target cannot be inlined: wrap the `$ref` in a one-branch `anyOf`
        // that carries the siblings' text.
        let mut siblings = siblings;
        let description = siblings.shift_remove("description");
        let mut out = Map::new();
        out.insert("anyOf".to_owned(), json!([{ "$ref": reference }]));
        set_description(&mut out, description, siblings);
        Ok(Value::Object(out))
    }

    fn any_of(
        &mut self,
        branches: Value,
        mut siblings: Map<String, Value>,
        path: &str,
        depth: usize,
    ) -> Result<Value, SchemaError> {
        let Value::Array(branches) = branches else {
            return Err(SchemaError::new(path, "`anyOf` must be a list"));
        };
        if siblings.contains_key("type") {
            return Err(SchemaError::new(
                path,
                "`type` beside `anyOf` cannot be made strict; put the type in each branch",
            ));
        }
        let mut strict_branches: Vec<Value> = Vec::new();
        for (i, branch) in branches.into_iter().enumerate() {
            let strict = self.node(branch, &format!("{path}/anyOf/{i}"), depth, false)?;
            let nested = match &strict {
                Value::Object(o) if o.len() == 1 => {
                    o.get("anyOf").and_then(Value::as_array).cloned()
                }
                _ => None,
            };
            for strict in nested.unwrap_or_else(|| vec![strict]) {
                if !strict_branches.contains(&strict) {
                    strict_branches.push(strict);
                }
            }
        }
        let description = siblings.shift_remove("description");
        let mut out = Map::new();
        out.insert("anyOf".to_owned(), Value::Array(strict_branches));
        set_description(&mut out, description, siblings);
        Ok(Value::Object(out))
    }
}

/// Whether Anthropic's strict mode compiles `pattern`: its regular expressions have no
/// backreferences (`\1`, `\k<name>`), lookaround (`(?=`, `(?!`, `(?<=`, `(?<!`) or word
/// boundaries (`\b`, `\B`). Read without parsing classes, so `[(?=]` or `[\b]` count too:
/// a pattern wrongly refused here is only described instead.
fn anthropic_takes_pattern(pattern: &str) -> bool {
    let mut chars = pattern.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                if matches!(chars.next(), Some('1'..='9' | 'k' | 'b' | 'B')) {
                    return false;
                }
            }
            '(' => {
                let rest = chars.as_str();
                if ["?=", "?!", "?<=", "?<!"]
                    .iter()
                    .any(|lookaround| rest.starts_with(lookaround))
                {
                    return false;
                }
            }
            _ => {}
        }
    }
    true
}

fn untyped(path: &str) -> SchemaError {
    SchemaError::new(
        path,
        "an untyped schema accepts any value and cannot be made strict; give it a `type`",
    )
}

pub(crate) fn keep(from: &mut Map<String, Value>, to: &mut Map<String, Value>, keyword: &str) {
    if let Some(value) = from.shift_remove(keyword) {
        to.insert(keyword.to_owned(), value);
    }
}

/// `schema`, accepting `null` too (unchanged when it already does).
pub(crate) fn nullable(schema: Value) -> Value {
    match schema {
        Value::Object(schema) => Value::Object(nullable_object(schema)),
        other => json!({ "anyOf": [other, {"type": "null"}] }),
    }
}

/// [`nullable`] of an object schema: `{"type": "null"}` as it is, a union with one more
/// branch, anything else in a union with `null`.
pub(crate) fn nullable_object(mut schema: Map<String, Value>) -> Map<String, Value> {
    let null_schema = json!({"type": "null"});
    if schema.get("type") == Some(&json!("null")) {
        return schema;
    }
    if let Some(branches) = schema.get_mut("anyOf").and_then(Value::as_array_mut) {
        if !branches.contains(&null_schema) {
            branches.push(null_schema);
        }
        return schema;
    }
    let mut union = Map::new();
    union.insert(
        "anyOf".to_owned(),
        json!([Value::Object(schema), null_schema]),
    );
    union
}

/// Writes the description, with the keywords that could not stay appended in parentheses.
pub(crate) fn set_description(
    out: &mut Map<String, Value>,
    description: Option<Value>,
    moved: Map<String, Value>,
) {
    let mut text = match description {
        Some(Value::String(text)) => text,
        Some(other) => other.to_string(),
        None => String::new(),
    };
    if !moved.is_empty() {
        let notes: Vec<String> = moved
            .iter()
            .map(|(key, value)| match value {
                Value::String(s) => format!("{key}: {s}"),
                other => format!("{key}: {other}"),
            })
            .collect();
        if !text.is_empty() {
            text.push(' ');
        }
        text.push('(');
        text.push_str(&notes.join("; "));
        text.push(')');
    }
    if !text.is_empty() {
        out.insert("description".to_owned(), Value::String(text));
    }
}

/// The JSON type of a value, as JSON Schema names it.
pub(crate) fn json_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// The keywords that apply to one JSON type.
fn keywords_of(ty: &str) -> &'static [&'static str] {
    match ty {
        "string" => &["minLength", "maxLength", "pattern", "format"],
        "number" | "integer" => &[
            "minimum",
            "maximum",
            "exclusiveMinimum",
            "exclusiveMaximum",
            "multipleOf",
            "format",
        ],
        "array" => &[
            "items",
            "prefixItems",
            "minItems",
            "maxItems",
            "uniqueItems",
            "contains",
        ],
        "object" => &[
            "properties",
            "required",
            "additionalProperties",
            "patternProperties",
            "propertyNames",
            "minProperties",
            "maxProperties",
        ],
        _ => &[],
    }
}

/// `{"type": [A, B], …}` as `{"anyOf": [{"type": A, …A's keywords}, {"type": B, …}], …rest}`.
pub(crate) fn split_types(mut m: Map<String, Value>, types: &[String]) -> Value {
    m.shift_remove("type");
    let values = m.shift_remove("enum");
    let mut branches = Vec::new();
    for ty in types {
        let mut branch = Map::new();
        branch.insert("type".to_owned(), json!(ty));
        for keyword in keywords_of(ty) {
            if let Some(value) = m.get(*keyword) {
                branch.insert((*keyword).to_owned(), value.clone());
            }
        }
        if let Some(values) = values.as_ref().and_then(Value::as_array) {
            let matching: Vec<Value> = values
                .iter()
                .filter(|v| json_type(v) == ty || (ty == "number" && json_type(v) == "integer"))
                .cloned()
                .collect();
            if matching.is_empty() {
                continue;
            }
            if ty != "null" {
                branch.insert("enum".to_owned(), Value::Array(matching));
            }
        }
        branches.push(Value::Object(branch));
    }
    for ty in types {
        for keyword in keywords_of(ty) {
            m.shift_remove(*keyword);
        }
    }
    m.insert("anyOf".to_owned(), Value::Array(branches));
    Value::Object(m)
}

pub(crate) fn escape(name: &str) -> String {
    name.replace('~', "~0").replace('/', "~1")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn openai(schema: Value) -> Result<Value, SchemaError> {
        transform(StrictDialect::OpenAi, &schema).map(|s| s.schema)
    }

    fn anthropic(schema: Value) -> Result<StrictSchema, SchemaError> {
        transform(StrictDialect::Anthropic, &schema)
    }

    #[test]
    fn optional_properties_become_nullable_and_required() {
        let out = openai(json!({
            "type": "object",
            "properties": {
                "a": {"type": "string"},
                "b": {"type": "object", "properties": {"c": {"type": "integer", "minimum": 0}}},
                "e": {"type": ["string", "null"], "maxLength": 3}
            },
            "required": ["a"]
        }))
        .unwrap();
        assert_eq!(
            out,
            json!({
                "type": "object",
                "properties": {
                    "a": {"type": "string"},
                    "b": {"anyOf": [
                        {"type": "object", "properties": {"c": {"anyOf": [{"type": "integer", "minimum": 0}, {"type": "null"}]}},
                         "required": ["c"], "additionalProperties": false},
                        {"type": "null"}
                    ]},
                    "e": {"anyOf": [{"type": "string", "description": "(maxLength: 3)"}, {"type": "null"}]}
                },
                "required": ["a", "b", "e"],
                "additionalProperties": false
            })
        );
    }

    #[test]
    fn refs_with_siblings_are_inlined_or_wrapped() {
        let out = openai(json!({
            "type": "object",
            "properties": {
                "point": {"$ref": "#/$defs/Point", "description": "Where."},
                "tree": {"$ref": "#/$defs/Tree", "description": "The tree."},
                "bare": {"$ref": "#/$defs/Point"}
            },
            "required": ["point", "tree", "bare"],
            "$defs": {
                "Point": {"type": "object", "properties": {"x": {"type": "number"}}, "required": ["x"]},
                "Tree": {"type": "object", "properties": {"kids": {"type": "array", "items": {"$ref": "#/$defs/Tree"}}}, "required": ["kids"]}
            }
        }))
        .unwrap();
        assert_eq!(
            out["properties"]["point"],
            json!({
                "type": "object", "properties": {"x": {"type": "number"}}, "required": ["x"],
                "additionalProperties": false, "description": "Where."
            })
        );
        assert_eq!(
            out["properties"]["tree"],
            json!({"anyOf": [{"$ref": "#/$defs/Tree"}], "description": "The tree."})
        );
        assert_eq!(out["properties"]["bare"], json!({"$ref": "#/$defs/Point"}));
        assert_eq!(out["$defs"]["Point"]["additionalProperties"], json!(false));

        let err = anthropic(json!({
            "type": "object",
            "properties": {"tree": {"$ref": "#/$defs/Tree"}},
            "$defs": {"Tree": {"type": "object", "properties": {"kids": {"type": "array", "items": {"$ref": "#/$defs/Tree"}}}}}
        }))
        .unwrap_err();
        assert_eq!(err.path, "/properties/tree");
        assert!(err.reason.contains("recursive"), "{}", err.reason);
    }

    #[test]
    fn what_cannot_be_strict_is_an_error_with_its_path() {
        let cases = [
            (
                json!({"type": "object", "properties": {"m": {"type": "object", "additionalProperties": true}}}),
                "/properties/m/additionalProperties",
            ),
            (
                json!({"type": "object", "properties": {"m": {"type": "object"}}}),
                "/properties/m",
            ),
            (
                json!({"type": "object", "properties": {"v": {}}}),
                "/properties/v",
            ),
            (
                json!({"type": "object", "properties": {"v": true}}),
                "/properties/v",
            ),
            (
                json!({"type": "object", "properties": {"l": {"type": "array"}}}),
                "/properties/l/items",
            ),
            (
                json!({"type": "object", "properties": {"t": {"type": "array", "prefixItems": [{"type": "string"}]}}}),
                "/properties/t",
            ),
            (
                json!({"type": "object", "properties": {"p": {"type": "object", "patternProperties": {"^x": {"type": "string"}}}}}),
                "/properties/p/patternProperties",
            ),
            (json!({"anyOf": [{"type": "object"}]}), ""),
            (json!({"type": "string"}), ""),
            (
                json!({"type": "object", "properties": {"r": {"$ref": "https://example.com/s.json"}}}),
                "/properties/r",
            ),
        ];
        for (schema, path) in cases {
            let err = openai(schema.clone()).unwrap_err();
            assert_eq!(err.path, path, "{schema}: {}", err.reason);
        }
        let moved = openai(
            json!({"type": "object", "properties": {"a": {"type": "string"}},
            "required": ["a"], "patternProperties": {"^x_": {"type": "string"}}}),
        )
        .unwrap();
        assert_eq!(
            moved["description"],
            json!("(patternProperties: {\"^x_\":{\"type\":\"string\"}})")
        );
        let mut deep = json!({"type": "object", "properties": {}});
        for _ in 0..11 {
            deep = json!({"type": "object", "properties": {"d": deep}, "required": ["d"]});
        }
        let wide: Map<String, Value> = (0..5001)
            .map(|i| (format!("p{i}"), json!({"type": "boolean"})))
            .collect();
        let err = openai(json!({"type": "object", "properties": wide})).unwrap_err();
        assert!(
            err.reason.contains("at most 5000 object properties"),
            "{}",
            err.reason
        );
        let err = openai(deep).unwrap_err();
        assert!(err.reason.contains("10 levels"), "{}", err.reason);
    }

    #[test]
    fn enums_and_names_past_openai_limits_are_errors() {
        let strings = |n: usize, len: usize| -> Vec<Value> {
            (0..n).map(|i| json!(format!("{i:0len$}"))).collect()
        };
        let schema = |properties: Value| json!({"type": "object", "properties": properties});
        // 1,000 values over two enums pass; 1,001 do not (a `const` counts as one).
        let fine = schema(json!({"a": {"enum": strings(600, 3)}, "b": {"enum": strings(400, 3)}}));
        assert!(openai(fine).is_ok());
        let over = schema(
            json!({"a": {"enum": strings(600, 3)}, "b": {"enum": strings(400, 3)},
            "c": {"const": "x"}}),
        );
        let err = openai(over).unwrap_err();
        assert!(
            err.reason.contains("at most 1000 enum values"),
            "{}",
            err.reason
        );
        // More than 250 values of more than 15,000 characters in all.
        let long = schema(json!({"a": {"enum": strings(251, 60)}}));
        let err = openai(long).unwrap_err();
        assert!(err.reason.contains("15000 characters"), "{}", err.reason);
        assert!(openai(schema(json!({"a": {"enum": strings(250, 60)}}))).is_ok());
        // Names and values past 120,000 characters in all.
        let names: Map<String, Value> = (0..200)
            .map(|i| (format!("{i:0700}"), json!({"type": "boolean"})))
            .collect();
        let err = openai(schema(Value::Object(names))).unwrap_err();
        assert!(err.reason.contains("120000 characters"), "{}", err.reason);
        // Anthropic states no such limits.
        let over = schema(json!({"a": {"enum": strings(1001, 3)}}));
        assert!(anthropic(over).is_ok());
    }

    #[test]
    fn inlining_refs_with_siblings_is_bounded_in_depth_and_size() {
        use crate::MAX_JSON_DEPTH;
        use crate::tool::nesting::testing::on_small_stack;
        on_small_stack(|| {
            // Each definition shallow; inlined (a `$ref` with a sibling), the chain of arrays
            // is deep and never counts as nested objects.
            let mut defs = Map::new();
            for i in 0..300 {
                defs.insert(
                    format!("D{i}"),
                    json!({"type": "array", "items": {"$ref": format!("#/$defs/D{}", i + 1), "description": "x"}}),
                );
            }
            defs.insert("D300".to_owned(), json!({"type": "string"}));
            let chain = json!({"type": "object",
                "properties": {"head": {"$ref": "#/$defs/D0", "description": "x"}},
                "required": ["head"], "$defs": defs});
            for dialect in [StrictDialect::OpenAi, StrictDialect::Anthropic] {
                let err = transform(dialect, &chain).unwrap_err();
                assert!(
                    err.reason
                        .contains(&format!("nested deeper than {MAX_JSON_DEPTH} levels")),
                    "{}",
                    err.reason
                );
            }

            // Each definition used twice by the one before it: 2^40 copies once inlined.
            let mut defs = Map::new();
            for i in 0..40 {
                let next = json!({"$ref": format!("#/$defs/D{}", i + 1), "description": "x"});
                defs.insert(format!("D{i}"), json!({"anyOf": [next, next]}));
            }
            defs.insert("D40".to_owned(), json!({"type": "string"}));
            let doubling = json!({"type": "object",
                "properties": {"x": {"$ref": "#/$defs/D0", "description": "x"}},
                "required": ["x"], "$defs": defs});
            let err = transform(StrictDialect::Anthropic, &doubling).unwrap_err();
            assert!(err.reason.contains("inlined"), "{}", err.reason);
        });
    }

    #[test]
    fn anthropic_moves_patterns_it_cannot_compile_to_the_description() {
        let with_pattern = |pattern: &str| {
            json!({"type": "object", "properties": {"s": {"type": "string", "pattern": pattern}},
                "required": ["s"]})
        };
        // Anthropic's regular expressions have no lookaround, backreferences or word
        // boundaries: such a pattern would have the request refused.
        for pattern in [
            r"^(?!-)[a-z-]+$",
            r"^[a-z]+(?=\d)\w*$",
            r"^(?<=x)y$",
            r"^(?<!x)y$",
            r"^(a)\1$",
            r"^(?<q>a)\k<q>$",
            r"\bword\b",
            r"^a\Bb$",
        ] {
            let out = anthropic(with_pattern(pattern)).unwrap().schema;
            assert_eq!(
                out["properties"]["s"],
                json!({"type": "string", "description": format!("(pattern: {pattern})")}),
                "{pattern}"
            );
        }
        // Patterns within its subset stay; an escaped backslash before `b` or a digit is no
        // word boundary or backreference.
        for pattern in [
            r"^[a-z]+\d{2,4}$",
            r"^\\b\\1$",
            r"^(?:ab)+(c|d)?$",
            r"^[\w.-]+@[\w.-]+$",
        ] {
            let out = anthropic(with_pattern(pattern)).unwrap().schema;
            assert_eq!(
                out["properties"]["s"],
                json!({"type": "string", "pattern": pattern}),
                "{pattern}"
            );
        }
    }

    #[test]
    fn anthropic_keeps_required_and_counts() {
        let out = anthropic(json!({
            "type": "object",
            "properties": {
                "a": {"type": "string", "format": "uri"},
                "b": {"type": ["integer", "string"], "minimum": 1},
                "c": {"type": "array", "items": {"type": "string"}, "minItems": 2, "maxItems": 5}
            },
            "required": ["a"]
        }))
        .unwrap();
        assert_eq!(out.optional, 2);
        assert_eq!(out.unions, 1);
        assert_eq!(
            out.schema,
            json!({
                "type": "object",
                "properties": {
                    "a": {"type": "string", "format": "uri"},
                    "b": {"anyOf": [{"type": "integer", "description": "(minimum: 1)"}, {"type": "string"}]},
                    "c": {"type": "array", "items": {"type": "string"}, "description": "(minItems: 2; maxItems: 5)"}
                },
                "required": ["a"],
                "additionalProperties": false
            })
        );
    }

    #[test]
    fn unions_enums_and_consts() {
        let out = openai(json!({
            "type": "object",
            "properties": {
                "kind": {"oneOf": [{"const": "a"}, {"const": "b"}], "description": "Kind."},
                "level": {"enum": [1, 2, null]},
                "when": {"type": "string", "format": "uri", "default": "x"}
            },
            "required": ["kind", "level", "when"]
        }))
        .unwrap();
        assert_eq!(
            out["properties"]["kind"],
            json!({
                "anyOf": [{"type": "string", "enum": ["a"]}, {"type": "string", "enum": ["b"]}], "description": "Kind."
            })
        );
        assert_eq!(
            out["properties"]["level"],
            json!({"anyOf": [{"type": "integer", "enum": [1, 2]}, {"type": "null"}]})
        );
        assert_eq!(
            out["properties"]["when"],
            json!({"type": "string", "description": "(format: uri; default: x)"})
        );
    }
}
