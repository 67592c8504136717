//! Google Gemini: `tools: [{"functionDeclarations": [{name, description, parameters}]}]`
//! where `parameters` is the OpenAPI schema subset Gemini accepts; calls as `functionCall`
//! parts; results as `functionResponse` parts of one user content. The model's earlier calls
//! are echoed as `functionCall` parts of a `model` content; the answer's text is its `text`
//! parts (thoughts left out), its stop reason the candidate's `finishReason`.
//!
//! The subset has no `$ref` (definitions are inlined; recursion cannot be expressed and is an
//! error), no `additionalProperties`, `nullable: true` instead of type unions with `null`,
//! `enum` for strings only, and a few `format`s. Other keywords are moved into the
//! description.
//!
//! A tool whose arguments the subset cannot say (a map, `additionalProperties` with a schema
//! or `true`; an object of no properties below the root, which Gemini refuses in the subset;
//! a value of any type, a schema with no `type`; an array whose items are of any type, or a
//! tuple) is declared with `parametersJsonSchema` instead, which Gemini documents
//! as the parameters "in JSON Schema format", mutually exclusive with `parameters`. There the
//! schema keeps the keywords Gemini documents for its JSON Schema fields (`type`, `format`,
//! `title`, `description`, `enum` of strings and numbers, `items`, `prefixItems`,
//! `minItems`, `maxItems`, `minimum`, `maximum`, `anyOf`, `properties`,
//! `additionalProperties`, `required`, `propertyOrdering`): `$ref`s are inlined as for the
//! subset (recursion is still an error), a union with `null` is an `anyOf` with
//! `{"type": "null"}`, and other keywords are moved into the description. Every other tool
//! is declared with `parameters`, as before.

use serde_json::{Map, Value, json};

use super::calls::{
    GENERATED_CALL_ID_PREFIX, ParsedCall, call_id, echoed_name, named_as_echoed, read_call,
};
use super::refs::{DEFINITION_KEYWORDS, Definitions, merge_all_of};
use super::reply::{Body, Reply, images_after_results};
use super::strict::{
    InlineBudget, META_KEYWORDS, SchemaError, escape, json_type, keep, nullable_object,
    set_description, split_types,
};
use super::turns::{AssistantCall, StopReason};
use super::{Provider, RenderError, ResponseError};
use crate::{Image, ToolFunctionSpec};

pub(crate) fn render_tools(
    specs: impl Iterator<Item = ToolFunctionSpec>,
) -> Result<Value, RenderError> {
    let mut declarations = Vec::new();
    for spec in specs {
        // Gemini's own rule on top of the one every tool name follows.
        if !spec
            .name
            .starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        {
            return Err(RenderError {
                provider: Provider::Gemini,
                reason: format!(
                    "Gemini takes only function names that start with a letter or '_', not {:?}; register the tool under another name for Gemini",
                    spec.name
                ),
                tool: spec.name,
                path: String::new(),
            });
        }
        let refused = |err: SchemaError| err.into_render_error(Provider::Gemini, &spec.name);
        let subset = convert(&spec.parameters, Dialect::OpenApi).map_err(refused)?;
        // Gemini refuses an object schema with no properties: a tool without arguments
        // declares no `parameters`.
        let has_properties = subset
            .schema
            .get("properties")
            .and_then(Value::as_object)
            .is_some_and(|p| !p.is_empty());
        let parameters = match (has_properties, subset.lossy) {
            // A root the subset cannot say (a map of arguments) needs JSON Schema too.
            (_, true) => Some((
                "parametersJsonSchema",
                convert(&spec.parameters, Dialect::JsonSchema)
                    .map_err(refused)?
                    .schema,
            )),
            (false, false) => None,
            (true, false) => Some(("parameters", subset.schema)),
        };
        let mut declaration = Map::new();
        declaration.insert("name".to_owned(), Value::String(spec.name));
        declaration.insert("description".to_owned(), Value::String(spec.description));
        if let Some((field, schema)) = parameters {
            declaration.insert(field.to_owned(), schema);
        }
        declarations.push(Value::Object(declaration));
    }
    if declarations.is_empty() {
        return Ok(json!([]));
    }
    Ok(json!([{ "functionDeclarations": declarations }]))
}

/// The schema language of a function declaration's parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Dialect {
    /// `parameters`: Gemini's OpenAPI subset.
    OpenApi,
    /// `parametersJsonSchema`: the JSON Schema keywords Gemini documents for it.
    JsonSchema,
}

impl Dialect {
    /// The keywords that apply to every type, kept where they are.
    fn common_keywords(self) -> &'static [&'static str] {
        match self {
            Self::OpenApi => &["title", "default", "example", "propertyOrdering"],
            Self::JsonSchema => &["title", "propertyOrdering"],
        }
    }
}

/// A converted schema, and whether the OpenAPI subset lost part of what it says.
struct Converted {
    schema: Value,
    /// A map, a value of any type or an array of them, or a tuple: the subset declared
    /// something narrower or wider than the schema, or nothing the model can read.
    lossy: bool,
}

/// A JSON Schema as `dialect`.
fn convert(schema: &Value, dialect: Dialect) -> Result<Converted, SchemaError> {
    let defs = Definitions::of(schema);
    let mut root = schema.clone();
    // The root's title names the argument type; the tool's own name and description say more.
    if let Some(root) = root.as_object_mut() {
        root.shift_remove("title");
    }
    let mut converter = Converter {
        defs: &defs,
        dialect,
        expanding: Vec::new(),
        budget: InlineBudget::default(),
        lossy: false,
    };
    let schema = converter.node(root, "")?;
    Ok(Converted {
        schema,
        lossy: converter.lossy,
    })
}

struct Converter<'d, 'a> {
    defs: &'d Definitions<'a>,
    dialect: Dialect,
    /// The `$ref`s being inlined, outermost first: meeting one again is recursion.
    expanding: Vec<String>,
    /// How deep the conversion is and how much it wrote, `$ref`s inlined.
    budget: InlineBudget,
    /// Whether the OpenAPI subset could not say part of the schema.
    lossy: bool,
}

impl Converter<'_, '_> {
    /// The converted form of `schema` (owned, so that its parts move into the result).
    fn node(&mut self, schema: Value, path: &str) -> Result<Value, SchemaError> {
        self.budget.enter(path)?;
        let converted = self.convert(schema, path);
        self.budget.leave();
        converted
    }

    /// [`node`](Self::node) within the budget.
    fn convert(&mut self, schema: Value, path: &str) -> Result<Value, SchemaError> {
        let mut m = match schema {
            Value::Object(map) => map,
            Value::Bool(true) => {
                self.lossy = true;
                return Ok(json!({}));
            }
            _ => return Err(SchemaError::new(path, "not a usable JSON Schema")),
        };
        for keyword in DEFINITION_KEYWORDS.iter().chain(&META_KEYWORDS) {
            m.shift_remove(*keyword);
        }
        if let Some(parts) = m.shift_remove("allOf") {
            let parts = parts.as_array().cloned().unwrap_or_default();
            merge_all_of(&mut m, &parts, self.defs)
                .map_err(|reason| SchemaError::new(path, reason))?;
        }
        if let Some(reference) = m.shift_remove("$ref") {
            let reference = reference.as_str().unwrap_or_default().to_owned();
            if self.expanding.contains(&reference) {
                return Err(SchemaError::new(
                    path,
                    format!(
                        "recursive schema (`$ref` {reference:?}): Gemini's function declarations cannot express recursion"
                    ),
                ));
            }
            let Some(Value::Object(target)) = self.defs.resolve(&reference) else {
                return Err(SchemaError::new(
                    path,
                    format!(
                        "`$ref` {reference:?} is not a local reference into the schema's `$defs`"
                    ),
                ));
            };
            let mut inlined = target.clone();
            inlined.extend(m);
            self.expanding.push(reference);
            let out = self.node(Value::Object(inlined), path);
            self.expanding.pop();
            return out;
        }
        if let Some(one_of) = m.shift_remove("oneOf") {
            m.entry("anyOf").or_insert(one_of);
        }
        if let Some(constant) = m.shift_remove("const") {
            m.entry("enum").or_insert_with(|| json!([constant]));
        }
        let mut nullable = m.shift_remove("nullable") == Some(Value::Bool(true));
        if let Some(Value::Array(types)) = m.get("type") {
            let mut types: Vec<String> = types
                .iter()
                .filter_map(|t| t.as_str().map(str::to_owned))
                .collect();
            if types.iter().any(|t| t == "null") {
                nullable = true;
                types.retain(|t| t != "null");
            }
            match types.as_slice() {
                [] => {
                    m.shift_remove("type");
                }
                [one] => {
                    m.insert("type".to_owned(), json!(one));
                }
                _ => {
                    m = split_types(m, &types)
                        .as_object()
                        .cloned()
                        .unwrap_or_default()
                }
            }
        }
        if let Some(Value::Array(values)) = m.get_mut("enum")
            && values.contains(&Value::Null)
        {
            nullable = true;
            values.retain(|v| !v.is_null());
        }

        if !m.contains_key("type")
            && !m.contains_key("anyOf")
            && let Some(ty) = implied_type(&m)
        {
            m.insert("type".to_owned(), json!(ty));
        }
        let mut out = if let Some(Value::Array(branches)) = m.shift_remove("anyOf") {
            self.any_of(branches, &mut m, path, &mut nullable)?
        } else {
            self.typed(&mut m, path)?
        };
        if !out.contains_key("type") && !out.contains_key("anyOf") {
            // A value of any type: the subset has no schema for it.
            self.lossy = true;
        }
        let description = m
            .shift_remove("description")
            .or_else(|| out.shift_remove("description"));
        match self.dialect {
            Dialect::OpenApi => {
                if nullable {
                    out.insert("nullable".to_owned(), Value::Bool(true));
                }
                set_description(&mut out, description, m);
            }
            Dialect::JsonSchema => {
                // The description is the whole value's, outside the union with `null`.
                if nullable && !out.is_empty() {
                    out = nullable_object(out);
                }
                set_description(&mut out, description, m);
            }
        }
        Ok(Value::Object(out))
    }

    fn any_of(
        &mut self,
        branches: Vec<Value>,
        m: &mut Map<String, Value>,
        path: &str,
        nullable: &mut bool,
    ) -> Result<Map<String, Value>, SchemaError> {
        let mut converted = Vec::new();
        for (i, branch) in branches.into_iter().enumerate() {
            if branch.get("type") == Some(&json!("null")) {
                *nullable = true;
                continue;
            }
            let mut branch = self.node(branch, &format!("{path}/anyOf/{i}"))?;
            if let Some(b) = branch.as_object_mut() {
                let null_branch = match self.dialect {
                    Dialect::OpenApi => b.get("nullable") == Some(&Value::Bool(true)),
                    Dialect::JsonSchema => is_or_null(b),
                };
                if null_branch {
                    *nullable = true;
                    match self.dialect {
                        Dialect::OpenApi => drop(b.shift_remove("nullable")),
                        Dialect::JsonSchema => *b = without_null(std::mem::take(b)),
                    }
                }
            }
            converted.push(branch);
        }
        for keyword in self.dialect.common_keywords() {
            m.shift_remove(*keyword);
        }
        match converted.len() {
            1 => Ok(converted
                .pop()
                .and_then(|b| b.as_object().cloned())
                .unwrap_or_default()),
            _ => {
                let mut out = Map::new();
                out.insert("anyOf".to_owned(), Value::Array(converted));
                Ok(out)
            }
        }
    }

    fn typed(
        &mut self,
        m: &mut Map<String, Value>,
        path: &str,
    ) -> Result<Map<String, Value>, SchemaError> {
        let mut out = Map::new();
        let ty = m.get("type").and_then(Value::as_str).map(str::to_owned);
        if let Some(ty) = &ty {
            m.shift_remove("type");
            out.insert("type".to_owned(), json!(ty));
        }
        for keyword in self.dialect.common_keywords() {
            keep(m, &mut out, keyword);
        }
        if let Some(values) = m.get("enum").and_then(Value::as_array) {
            let strings = values.iter().all(Value::is_string)
                && matches!(ty.as_deref(), None | Some("string"));
            // JSON Schema's `enum` is documented for strings and numbers.
            let numbers = self.dialect == Dialect::JsonSchema
                && values.iter().all(Value::is_number)
                && matches!(ty.as_deref(), Some("number" | "integer"));
            if strings {
                out.insert("type".to_owned(), json!("string"));
            }
            if strings || numbers {
                keep(m, &mut out, "enum");
            }
        }
        match ty.as_deref() {
            Some("object") => {
                if let Some(Value::Object(properties)) = m.shift_remove("properties") {
                    let mut converted = Map::new();
                    let names: Vec<String> = properties.keys().cloned().collect();
                    for (name, schema) in properties {
                        let property_path = format!("{path}/properties/{}", escape(&name));
                        let schema = self.node(schema, &property_path)?;
                        converted.insert(name, schema);
                    }
                    let required: Vec<Value> = m
                        .shift_remove("required")
                        .and_then(|r| r.as_array().cloned())
                        .unwrap_or_default()
                        .into_iter()
                        .filter(|n| n.as_str().is_some_and(|n| names.iter().any(|k| k == n)))
                        .collect();
                    out.insert("properties".to_owned(), Value::Object(converted));
                    if !required.is_empty() {
                        out.insert("required".to_owned(), Value::Array(required));
                    }
                }
                match (self.dialect, m.shift_remove("additionalProperties")) {
                    (_, None) => {}
                    // A closed object: what the subset says by listing the properties.
                    (Dialect::OpenApi, Some(Value::Bool(false))) => {}
                    (Dialect::OpenApi, Some(other)) => {
                        // A map: the subset has no keyword for its values.
                        self.lossy = true;
                        m.insert("additionalProperties".to_owned(), other);
                    }
                    (Dialect::JsonSchema, Some(Value::Object(values))) => {
                        let values = self.node(
                            Value::Object(values),
                            &format!("{path}/additionalProperties"),
                        )?;
                        out.insert("additionalProperties".to_owned(), values);
                    }
                    (Dialect::JsonSchema, Some(other)) => {
                        out.insert("additionalProperties".to_owned(), other);
                    }
                }
                if self.dialect == Dialect::OpenApi {
                    keep(m, &mut out, "minProperties");
                    keep(m, &mut out, "maxProperties");
                    // Gemini refuses an object of no properties ("should be non-empty for
                    // OBJECT type"): below the root (where it is a tool without arguments), the
                    // subset cannot declare one, open (`{"type": "object"}`) or empty.
                    let no_properties = out
                        .get("properties")
                        .and_then(Value::as_object)
                        .is_none_or(Map::is_empty);
                    if !path.is_empty() && no_properties {
                        self.lossy = true;
                    }
                }
            }
            Some("array") => {
                match self.dialect {
                    Dialect::OpenApi => self.openapi_items(m, &mut out, path)?,
                    Dialect::JsonSchema => self.json_schema_items(m, &mut out, path)?,
                }
                keep(m, &mut out, "minItems");
                keep(m, &mut out, "maxItems");
            }
            Some("string") => {
                if self.dialect == Dialect::OpenApi {
                    keep(m, &mut out, "minLength");
                    keep(m, &mut out, "maxLength");
                    keep(m, &mut out, "pattern");
                    keep_format(m, &mut out, &["enum", "date-time"]);
                } else {
                    keep_format(m, &mut out, &["date-time"]);
                }
            }
            Some("number") => {
                keep(m, &mut out, "minimum");
                keep(m, &mut out, "maximum");
                keep_format(m, &mut out, &["float", "double"]);
            }
            Some("integer") => {
                keep(m, &mut out, "minimum");
                keep(m, &mut out, "maximum");
                keep_format(m, &mut out, &["int32", "int64"]);
            }
            _ => {}
        }
        Ok(out)
    }

    /// An array's `items` in the subset, which requires one schema for every element.
    fn openapi_items(
        &mut self,
        m: &mut Map<String, Value>,
        out: &mut Map<String, Value>,
        path: &str,
    ) -> Result<(), SchemaError> {
        // Only an object is converted; a tuple's `items` (or `true`) stays for the
        // description.
        let object_items = m.get("items").is_some_and(Value::is_object);
        if let Some(items) = object_items.then(|| m.shift_remove("items")).flatten() {
            out.insert(
                "items".to_owned(),
                self.node(items, &format!("{path}/items"))?,
            );
        } else {
            // Gemini refuses an array without `items` ("items: missing field"): its
            // elements, of any type (or a tuple's, described), are declared as strings,
            // which validation reads as the schema says.
            self.lossy = true;
            out.insert("items".to_owned(), json!({"type": "string"}));
        }
        if m.contains_key("prefixItems") {
            self.lossy = true;
        }
        Ok(())
    }

    /// An array's `items` and `prefixItems` in JSON Schema: a tuple's list of `items`
    /// (before 2020-12) is its `prefixItems`; elements of any type need no `items`.
    fn json_schema_items(
        &mut self,
        m: &mut Map<String, Value>,
        out: &mut Map<String, Value>,
        path: &str,
    ) -> Result<(), SchemaError> {
        let (prefix, prefix_keyword) = match m.get("items") {
            Some(Value::Array(_)) if !m.contains_key("prefixItems") => {
                (m.shift_remove("items"), "items")
            }
            _ => (m.shift_remove("prefixItems"), "prefixItems"),
        };
        if let Some(Value::Array(schemas)) = prefix {
            let mut converted = Vec::new();
            for (i, schema) in schemas.into_iter().enumerate() {
                converted.push(self.node(schema, &format!("{path}/{prefix_keyword}/{i}"))?);
            }
            out.insert("prefixItems".to_owned(), Value::Array(converted));
        }
        match m.shift_remove("items") {
            Some(items @ Value::Object(_)) => {
                let items = self.node(items, &format!("{path}/items"))?;
                out.insert("items".to_owned(), items);
            }
            // Any element: what no `items` says.
            Some(Value::Bool(true)) | None => {}
            // `false` after a tuple (no more elements), or not a schema: described.
            Some(other) => {
                m.insert("items".to_owned(), other);
            }
        }
        Ok(())
    }
}

/// Whether a converted JSON Schema is a union with `null` ([`nullable_object`]'s form).
fn is_or_null(schema: &Map<String, Value>) -> bool {
    schema
        .get("anyOf")
        .and_then(Value::as_array)
        .is_some_and(|branches| branches.contains(&json!({"type": "null"})))
}

/// [`nullable_object`]'s union without its `null` branch: a lone branch is the schema itself.
fn without_null(mut schema: Map<String, Value>) -> Map<String, Value> {
    let Some(Value::Array(mut branches)) = schema.shift_remove("anyOf") else {
        return schema;
    };
    branches.retain(|b| b != &json!({"type": "null"}));
    match (branches.len(), schema.is_empty()) {
        (1, true) => branches
            .pop()
            .and_then(|b| b.as_object().cloned())
            .unwrap_or_default(),
        _ => {
            schema.insert("anyOf".to_owned(), Value::Array(branches));
            schema
        }
    }
}

/// The type an untyped schema's keywords say: `object` for `properties`, `array` for
/// `items`, the type every `enum` value shares (an integer is a number too). Gemini refuses
/// a schema without `type`, and its conversion keeps `properties` and `items` only under
/// theirs. `None` when they say none, or `enum` values of several types.
fn implied_type(m: &Map<String, Value>) -> Option<&'static str> {
    if m.contains_key("properties") {
        return Some("object");
    }
    if m.get("items").is_some_and(Value::is_object) {
        return Some("array");
    }
    let values = m.get("enum")?.as_array()?;
    let mut implied: Option<&'static str> = None;
    for ty in values.iter().map(json_type) {
        implied = match (implied, ty) {
            (None, ty) => Some(ty),
            (Some(seen), ty) if seen == ty => Some(ty),
            (Some("integer" | "number"), "integer" | "number") => Some("number"),
            _ => return None,
        };
    }
    implied
}

fn keep_format(m: &mut Map<String, Value>, out: &mut Map<String, Value>, supported: &[&str]) {
    if m.get("format")
        .and_then(Value::as_str)
        .is_some_and(|f| supported.contains(&f))
    {
        keep(m, out, "format");
    }
}

/// The parts of a response's first candidate, of a content, or the array itself. A response
/// without candidates (a blocked prompt), a candidate without content (stopped before
/// writing, or filtered) and a content without parts (all its tokens spent thinking) have
/// none.
fn parts_of(response: &Value) -> Result<&[Value], ResponseError> {
    let shape = || {
        ResponseError::new(
            Provider::Gemini,
            "expected a response with `candidates[0].content.parts`, a content with `parts`, or the parts array",
        )
    };
    let (content, of_candidate) = match response.get("candidates") {
        Some(Value::Array(candidates)) => match candidates.first() {
            None => return Ok(&[]),
            Some(candidate @ Value::Object(_)) => match candidate.get("content") {
                None | Some(Value::Null) => return Ok(&[]),
                Some(content) => (content, true),
            },
            Some(_) => return Err(shape()),
        },
        Some(_) => return Err(shape()),
        None if response.get("promptFeedback").is_some() => return Ok(&[]),
        None => (response, false),
    };
    match content {
        Value::Array(parts) => Ok(parts),
        Value::Object(fields) => match fields.get("parts") {
            Some(Value::Array(parts)) => Ok(parts),
            // A candidate's content may come without parts (`{}`, `{"role": "model"}`,
            // `"parts": null`) when the model wrote nothing.
            None | Some(Value::Null) if of_candidate || fields.contains_key("role") => Ok(&[]),
            _ => Err(shape()),
        },
        _ => Err(shape()),
    }
}

/// The model content of the parts, each `functionCall` without a name under the name its
/// `functionResponse` has ([`UNNAMED_CALL_NAME`](super::UNNAMED_CALL_NAME)): a call's
/// name is required, and Gemini matches a response to its call by name.
pub(crate) fn parse_turn_entries(response: &Value) -> Result<Option<Vec<Value>>, ResponseError> {
    let parts = parts_of(response)?;
    if parts.is_empty() {
        return Ok(None);
    }
    let mut parts = parts.to_vec();
    for call in parts
        .iter_mut()
        .filter_map(|part| part.get_mut("functionCall"))
    {
        named_as_echoed(call, "name");
    }
    Ok(Some(vec![json!({"role": "model", "parts": parts})]))
}

pub(crate) fn parse_calls(response: &Value) -> Result<Vec<ParsedCall>, ResponseError> {
    let parts = parts_of(response)?;
    Ok(parts
        .iter()
        .filter_map(|part| Some((part.get("functionCall")?, part)))
        .enumerate()
        .map(|(index, (call, part))| {
            let id = call_id(call.get("id"), index);
            let mut parsed = read_call(
                id,
                call.get("name").and_then(Value::as_str),
                call.get("args"),
            );
            if let (Ok(request), Some(signature)) = (
                &mut parsed,
                part.get("thoughtSignature").and_then(Value::as_str),
            ) {
                request.thought_signature = Some(signature.to_owned());
            }
            parsed
        })
        .collect())
}

pub(crate) fn render_results(replies: &[Reply<'_>]) -> Vec<Value> {
    if replies.is_empty() {
        return Vec::new();
    }
    let parts: Vec<Value> = replies
        .iter()
        .map(|reply| {
            // Gemini reads `output` as the function's result and `error` as its failure.
            let response = match &reply.body {
                Body::Json(value) => json!({ "output": value }),
                Body::JsonText(text) => json!({ "output": text.to_value() }),
                Body::Text(text) => json!({ "output": text }),
                Body::Error(text) => json!({ "error": text }),
                body @ Body::Parts(_) => {
                    json!({ "output": body.text_placing_images(placed_after) })
                }
            };
            let mut function_response = Map::new();
            if !reply.id.starts_with(GENERATED_CALL_ID_PREFIX) {
                function_response.insert("id".to_owned(), json!(reply.id));
            }
            function_response.insert("name".to_owned(), json!(echoed_name(reply.name)));
            function_response.insert("response".to_owned(), response);
            json!({ "functionResponse": function_response })
        })
        .collect();
    let mut contents = vec![json!({"role": "user", "parts": parts})];
    // Images follow in a user content of their own: `inlineData` parts (each result's
    // introduced by a text part naming its call). The API refuses a content that mixes
    // `inlineData` with `functionResponse` parts, and takes images inside a
    // `functionResponse` (its `parts`) from Gemini 3 models only (2.5 refuses the field).
    let intro = |reply: &Reply<'_>| {
        let call = if reply.id.starts_with(GENERATED_CALL_ID_PREFIX) {
            echoed_name(reply.name).to_owned()
        } else {
            format!("{} ({})", echoed_name(reply.name), reply.id)
        };
        json!({"text": format!("The images of the result of {call}:")})
    };
    let image_parts = images_after_results(replies, intro, inline_data);
    if !image_parts.is_empty() {
        contents.push(json!({"role": "user", "parts": image_parts}));
    }
    contents
}

/// Where a result's image is in its `functionResponse`: in the user content after the
/// responses.
fn placed_after(image: &Image) -> String {
    image.placeholder_noting("shown in the user content after these function responses")
}

/// An image as an `inlineData` part: `{"inlineData": {"mimeType": …, "data": <base64>}}`.
fn inline_data(image: &Image) -> Value {
    json!({"inlineData": {"mimeType": image.media_type(), "data": image.data()}})
}

pub(crate) fn render_user(text: &str) -> Value {
    json!({"role": "user", "parts": [{"text": text}]})
}

/// A user content of `inlineData` parts and the text, as a text part after them (none for
/// blank text, which says nothing, as Anthropic's rendering leaves it out).
pub(crate) fn render_user_with_images(text: &str, images: &[Image]) -> Value {
    let text_part = (!text.trim().is_empty()).then(|| json!({ "text": text }));
    let parts: Vec<Value> = images.iter().map(inline_data).chain(text_part).collect();
    json!({"role": "user", "parts": parts})
}

/// The signature Google documents for a function call Gemini did not make (a conversation
/// carried over from another model): it passes Gemini 3's check that the first call of each
/// model turn is signed.
const SIGNATURE_PLACEHOLDER: &str = "skip_thought_signature_validator";

pub(crate) fn render_assistant(text: Option<&str>, calls: &[AssistantCall<'_>]) -> Vec<Value> {
    let text_part = text.map(|text| json!({"text": text}));
    // Gemini 3 refuses a turn's first call without a signature; a turn none of whose calls
    // is signed (made by another provider, or edited) has its first call carry the
    // placeholder Google documents for such turns.
    let unsigned = calls.iter().all(|call| call.thought_signature.is_none());
    let parts: Vec<Value> = text_part
        .into_iter()
        .chain(calls.iter().enumerate().map(|(index, call)| {
            let placeholder = (unsigned && index == 0).then_some(SIGNATURE_PLACEHOLDER);
            let mut function_call = Map::new();
            if !call.id.starts_with(GENERATED_CALL_ID_PREFIX) {
                function_call.insert("id".to_owned(), json!(call.id));
            }
            function_call.insert("name".to_owned(), json!(echoed_name(call.name)));
            function_call.insert("args".to_owned(), call.echoed_arguments());
            match call.thought_signature.or(placeholder) {
                Some(signature) => {
                    json!({ "functionCall": function_call, "thoughtSignature": signature })
                }
                None => json!({ "functionCall": function_call }),
            }
        }))
        .collect();
    if parts.is_empty() {
        // Gemini refuses a content without parts.
        return Vec::new();
    }
    vec![json!({"role": "model", "parts": parts})]
}

pub(crate) fn parse_text(response: &Value) -> Result<Option<String>, ResponseError> {
    let pieces: Vec<&str> = parts_of(response)?
        .iter()
        .filter(|part| part.get("thought") != Some(&Value::Bool(true)))
        .filter_map(|part| part.get("text").and_then(Value::as_str))
        .collect();
    Ok((!pieces.is_empty()).then(|| pieces.concat()))
}

pub(crate) fn parse_stop_reason(response: &Value) -> Result<StopReason, ResponseError> {
    let has_calls = parts_of(response)?
        .iter()
        .any(|part| part.get("functionCall").is_some());
    let candidate = response.get("candidates").and_then(|c| c.get(0));
    let Some(reason) = candidate
        .and_then(|c| c.get("finishReason"))
        .and_then(Value::as_str)
    else {
        let blocked = candidate.is_none()
            && response
                .get("promptFeedback")
                .and_then(|feedback| feedback.get("blockReason"))
                .is_some();
        if blocked {
            return Ok(StopReason::ContentFilter);
        }
        return Ok(StopReason::inferred(has_calls));
    };
    let reason = match reason {
        "STOP" => StopReason::EndTurn,
        "MAX_TOKENS" => StopReason::MaxTokens,
        "SAFETY" | "RECITATION" | "BLOCKLIST" | "PROHIBITED_CONTENT" | "SPII" | "IMAGE_SAFETY" => {
            StopReason::ContentFilter
        }
        other => StopReason::Other(other.to_owned()),
    };
    Ok(reason.with_calls(has_calls))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A JSON Schema as Gemini's OpenAPI subset.
    fn openapi_schema(schema: &Value) -> Result<Value, SchemaError> {
        convert(schema, Dialect::OpenApi).map(|converted| converted.schema)
    }

    #[test]
    fn converts_to_the_openapi_subset() {
        let out = openapi_schema(&json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "properties": {
                "when": {"type": ["string", "null"], "format": "date-time"},
                "site": {"type": "string", "format": "uri"},
                "mode": {"anyOf": [{"const": "fast"}, {"type": "null"}]},
                "level": {"enum": [1, 2]},
                "place": {"$ref": "#/$defs/Place", "description": "Where."},
                "tags": {"type": "object", "additionalProperties": {"type": "string"}}
            },
            "required": ["place"],
            "additionalProperties": false,
            "$defs": {"Place": {"type": "object", "properties": {"lat": {"type": "number", "exclusiveMinimum": -90}}}}
        }))
        .unwrap();
        assert_eq!(
            out,
            json!({
                "type": "object",
                "properties": {
                    "when": {"type": "string", "format": "date-time", "nullable": true},
                    "site": {"type": "string", "description": "(format: uri)"},
                    "mode": {"type": "string", "enum": ["fast"], "nullable": true},
                    "level": {"type": "integer", "description": "(enum: [1,2])"},
                    "place": {"type": "object", "properties": {"lat": {"type": "number", "description": "(exclusiveMinimum: -90)"}}, "description": "Where."},
                    "tags": {"type": "object", "description": "(additionalProperties: {\"type\":\"string\"})"}
                },
                "required": ["place"]
            })
        );
    }

    fn spec(name: &str, parameters: Value) -> ToolFunctionSpec {
        ToolFunctionSpec {
            name: name.to_owned(),
            description: "A tool.".to_owned(),
            parameters,
            returns: None,
        }
    }

    #[test]
    fn a_map_or_an_untyped_value_is_declared_in_json_schema() {
        // The subset has no `additionalProperties` (a map was an object without
        // `properties`, which Gemini refuses) and no schema without `type` (which Gemini
        // refuses too): such a tool is declared with `parametersJsonSchema`.
        let map = spec(
            "set_env",
            json!({"type": "object", "properties": {
                "vars": {"type": "object", "additionalProperties": {"type": "string", "minLength": 1}},
                "scope": {"type": ["string", "null"], "enum": ["user", "system", null]}
            }, "required": ["vars"]}),
        );
        let untyped = spec(
            "store",
            json!({"type": "object", "properties": {
                "key": {"type": "string"},
                "value": {"description": "Any JSON."},
                "open": {"type": "object", "additionalProperties": true}
            }, "required": ["key", "value"]}),
        );
        let plain = spec(
            "add",
            json!({"type": "object", "properties": {"a": {"type": "integer"}}}),
        );
        let rendered = render_tools([map, untyped, plain].into_iter()).unwrap();
        let declarations = &rendered[0]["functionDeclarations"];
        assert_eq!(
            declarations[0],
            json!({"name": "set_env", "description": "A tool.", "parametersJsonSchema": {
                "type": "object",
                "properties": {
                    "vars": {"type": "object", "additionalProperties":
                        {"type": "string", "description": "(minLength: 1)"}},
                    "scope": {"anyOf": [
                        {"type": "string", "enum": ["user", "system"]}, {"type": "null"}]}
                },
                "required": ["vars"]
            }})
        );
        assert_eq!(
            declarations[1]["parametersJsonSchema"],
            json!({
                "type": "object",
                "properties": {
                    "key": {"type": "string"},
                    "value": {"description": "Any JSON."},
                    "open": {"type": "object", "additionalProperties": true}
                },
                "required": ["key", "value"]
            })
        );
        assert_eq!(declarations[1].get("parameters"), None);
        // A tool the subset says whole is declared in it, as before.
        assert_eq!(
            declarations[2],
            json!({"name": "add", "description": "A tool.", "parameters":
                {"type": "object", "properties": {"a": {"type": "integer"}}}})
        );
    }

    #[test]
    fn an_object_of_no_properties_below_the_root_is_declared_in_json_schema() {
        // Gemini refuses an object of no properties: an open one (`{"type": "object"}`, a
        // free-form value in many MCP schemas) or an empty one, below the root.
        for (nested, declared) in [
            (json!({"type": "object"}), json!({"type": "object"})),
            (
                json!({"type": "object", "properties": {}, "additionalProperties": false}),
                json!({"type": "object", "properties": {}, "additionalProperties": false}),
            ),
        ] {
            let tool = spec(
                "configure",
                json!({"type": "object", "properties": {"name": {"type": "string"}, "extra": nested},
                    "required": ["name"]}),
            );
            let rendered = render_tools([tool].into_iter()).unwrap();
            let declaration = &rendered[0]["functionDeclarations"][0];
            assert_eq!(declaration.get("parameters"), None, "{declaration}");
            assert_eq!(
                declaration["parametersJsonSchema"]["properties"]["extra"],
                declared
            );
        }
        // A root of no properties is a tool without arguments; a root map is declared.
        let none = spec("ping", json!({"type": "object", "properties": {}}));
        let map = spec(
            "set_all",
            json!({"type": "object", "additionalProperties": {"type": "string"}}),
        );
        let rendered = render_tools([none, map].into_iter()).unwrap();
        let declarations = &rendered[0]["functionDeclarations"];
        assert_eq!(
            declarations[0],
            json!({"name": "ping", "description": "A tool."})
        );
        assert_eq!(
            declarations[1]["parametersJsonSchema"],
            json!({"type": "object", "additionalProperties": {"type": "string"}})
        );
    }

    #[test]
    fn json_schema_declarations_keep_the_keywords_gemini_documents() {
        let tool = spec(
            "plot",
            json!({
                "$schema": "https://json-schema.org/draft/2020-12/schema",
                "title": "PlotArgs",
                "type": "object",
                "properties": {
                    "point": {"type": "array", "prefixItems": [{"type": "number"}, {"type": "number"}], "items": false},
                    "pair": {"type": "array", "items": [{"type": "integer"}, {"type": "string"}]},
                    "values": {"type": "array", "items": true, "maxItems": 3},
                    "style": {"$ref": "#/$defs/Style"},
                    "level": {"enum": [1, 2], "default": 1},
                    "maybe": {"anyOf": [{"type": "integer", "exclusiveMinimum": 0}, {"type": "null"}], "description": "Or none."}
                },
                "additionalProperties": false,
                "$defs": {"Style": {"type": "object", "properties": {
                    "color": {"type": "string", "pattern": "^#"}}, "minProperties": 1}}
            }),
        );
        let rendered = render_tools([tool].into_iter()).unwrap();
        assert_eq!(
            rendered[0]["functionDeclarations"][0]["parametersJsonSchema"],
            json!({
                "type": "object",
                "properties": {
                    "point": {"type": "array", "prefixItems": [{"type": "number"}, {"type": "number"}],
                        "description": "(items: false)"},
                    "pair": {"type": "array", "prefixItems": [{"type": "integer"}, {"type": "string"}]},
                    "values": {"type": "array", "maxItems": 3},
                    "style": {"type": "object", "properties": {
                        "color": {"type": "string", "description": "(pattern: ^#)"}},
                        "description": "(minProperties: 1)"},
                    "level": {"type": "integer", "enum": [1, 2], "description": "(default: 1)"},
                    "maybe": {"anyOf": [
                        {"type": "integer", "description": "(exclusiveMinimum: 0)"}, {"type": "null"}],
                        "description": "Or none."}
                },
                "additionalProperties": false
            })
        );
        // Recursion is still refused: the documented unrolling of cycles holds only where
        // the property is optional.
        let tree = spec(
            "plant",
            json!({"type": "object", "properties": {
                "root": {"$ref": "#/$defs/Node"},
                "meta": {"type": "object", "additionalProperties": {"type": "string"}}
            }, "$defs": {"Node": {"type": "object", "properties": {
                "kids": {"type": "array", "items": {"$ref": "#/$defs/Node"}}}}}}),
        );
        let err = render_tools([tree].into_iter()).unwrap_err();
        assert_eq!(err.tool, "plant");
        assert!(err.reason.contains("recursion"), "{}", err.reason);
    }

    #[test]
    fn an_array_without_an_items_schema_declares_items() {
        // Gemini refuses an array without `items` ("items: missing field"), and a whole
        // request with it. A tuple's `items` went nowhere, not even the description.
        let out = openapi_schema(&json!({"type": "object", "properties": {
            "any": {"type": "array"},
            "open": {"type": "array", "items": true},
            "pair": {"type": "array", "items": [{"type": "number"}, {"type": "number"}]},
            "named": {"type": "array", "items": {"type": "integer"}}
        }}))
        .unwrap();
        let p = &out["properties"];
        assert_eq!(
            p["any"],
            json!({"type": "array", "items": {"type": "string"}})
        );
        assert_eq!(p["open"]["items"], json!({"type": "string"}));
        assert_eq!(p["pair"]["items"], json!({"type": "string"}));
        assert!(
            p["pair"]["description"]
                .as_str()
                .is_some_and(|d| d.contains(r#"{"type":"number"}"#)),
            "{p}"
        );
        assert_eq!(p["named"]["items"], json!({"type": "integer"}));
    }

    #[test]
    fn an_untyped_schema_takes_the_type_its_keywords_say() {
        // Gemini refuses a schema without `type` ("must be specified when not using one_of,
        // any_of or all_of fields"); `properties` moved to the description hid the object's
        // structure from the model.
        let out = openapi_schema(&json!({"type": "object", "properties": {
            "filter": {"properties": {"name": {"type": "string"}}, "required": ["name"]},
            "ids": {"items": {"type": "integer"}, "maxItems": 3},
            "ratio": {"enum": [1, 2.5]},
            "flag": {"const": true},
            "mixed": {"enum": ["a", 1]}
        }}))
        .unwrap();
        assert_eq!(
            out["properties"],
            json!({
                "filter": {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]},
                "ids": {"type": "array", "items": {"type": "integer"}, "maxItems": 3},
                "ratio": {"type": "number", "description": "(enum: [1,2.5])"},
                "flag": {"type": "boolean", "description": "(enum: [true])"},
                "mixed": {"description": "(enum: [\"a\",1])"}
            })
        );
    }

    #[test]
    fn recursion_is_an_error_with_its_path() {
        let err = openapi_schema(&json!({
            "type": "object",
            "properties": {"tree": {"$ref": "#/$defs/Node"}},
            "$defs": {"Node": {"type": "object", "properties": {"kids": {"type": "array", "items": {"$ref": "#/$defs/Node"}}}}}
        }))
        .unwrap_err();
        assert_eq!(err.path, "/properties/tree/properties/kids/items");
        assert!(err.reason.contains("recursion"), "{}", err.reason);
    }

    #[test]
    fn inlining_refs_is_bounded_in_depth_and_size() {
        use crate::MAX_JSON_DEPTH;
        use crate::tool::nesting::testing::on_small_stack;
        on_small_stack(|| {
            // Each definition shallow, the chain of them deep once inlined.
            let chain = |length: usize| {
                let mut defs = Map::new();
                for i in 0..length {
                    let next = if i + 1 < length {
                        json!({"$ref": format!("#/$defs/D{}", i + 1)})
                    } else {
                        json!({"type": "string"})
                    };
                    defs.insert(
                        format!("D{i}"),
                        json!({"type": "object", "properties": {"next": next}}),
                    );
                }
                json!({"type": "object", "properties": {"head": {"$ref": "#/$defs/D0"}}, "$defs": defs})
            };
            let err = openapi_schema(&chain(300)).unwrap_err();
            assert!(
                err.reason
                    .contains(&format!("nested deeper than {MAX_JSON_DEPTH} levels")),
                "{}",
                err.reason
            );
            assert!(openapi_schema(&chain(20)).is_ok());

            // Each definition used twice by the one before it: 2^40 copies once inlined.
            let mut defs = Map::new();
            for i in 0..40 {
                let next = json!({"$ref": format!("#/$defs/D{}", i + 1)});
                defs.insert(
                    format!("D{i}"),
                    json!({"type": "object", "properties": {"a": next, "b": next}}),
                );
            }
            defs.insert("D40".to_owned(), json!({"type": "string"}));
            let doubling = json!({"type": "object", "properties": {"x": {"$ref": "#/$defs/D0"}}, "$defs": defs});
            let err = openapi_schema(&doubling).unwrap_err();
            assert!(err.reason.contains("inlined"), "{}", err.reason);
        });
    }

    #[test]
    fn names_gemini_refuses_are_refused_here_with_the_tool_named() {
        let spec = |name: &str| ToolFunctionSpec {
            name: name.to_owned(),
            description: "A tool.".to_owned(),
            parameters: json!({"type": "object", "properties": {}}),
            returns: None,
        };
        for name in ["2fa_code", "-x"] {
            let err = render_tools([spec(name)].into_iter()).unwrap_err();
            assert_eq!(err.tool, name);
            assert!(
                err.reason.contains("start with a letter or '_'"),
                "{}",
                err.reason
            );
        }
        assert!(render_tools([spec("_private"), spec("fa2")].into_iter()).is_ok());
    }

    #[test]
    fn thought_signatures_go_back_with_their_calls() {
        let response = json!({"candidates": [{"content": {"role": "model", "parts": [
            {"functionCall": {"name": "add", "args": {"a": 2}}, "thoughtSignature": "SIG-1"},
            {"functionCall": {"name": "add", "args": {"a": 3}}}
        ]}, "finishReason": "STOP"}]});
        let calls = parse_calls(&response).unwrap();
        let requests: Vec<&crate::ToolCallRequest> =
            calls.iter().map(|c| c.as_ref().unwrap()).collect();
        assert_eq!(requests[0].thought_signature.as_deref(), Some("SIG-1"));
        assert_eq!(requests[1].thought_signature, None);
        let echoed: Vec<AssistantCall<'_>> =
            requests.iter().map(|r| AssistantCall::from(*r)).collect();
        let turn = render_assistant(None, &echoed);
        assert_eq!(
            turn,
            vec![json!({"role": "model", "parts": [
                {"functionCall": {"name": "add", "args": {"a": 2}}, "thoughtSignature": "SIG-1"},
                {"functionCall": {"name": "add", "args": {"a": 3}}},
            ]})]
        );
    }

    #[test]
    fn a_candidate_without_parts_has_nothing_to_say() {
        for content in [json!({}), json!({"parts": null}), json!({"role": "model"})] {
            let response = json!({"candidates": [{"content": content, "finishReason": "STOP"}]});
            assert!(parse_calls(&response).unwrap().is_empty(), "{response}");
            assert_eq!(parse_text(&response).unwrap(), None);
        }
        // A bare object that is no content at all is still the wrong shape.
        assert!(parse_calls(&json!({"something": 1})).is_err());
    }

    #[test]
    fn echoes_calls_as_function_call_parts() {
        let arguments = json!({"a": 2});
        let given = AssistantCall::new("fc_1", "add", &arguments);
        let generated = AssistantCall {
            id: "toolsmith-call-1",
            ..given
        };
        let turn = render_assistant(Some("Adding."), &[given, generated]);
        // No call of the turn signed (it was not Gemini's, or was edited): the first is given
        // the placeholder Google documents, without which Gemini 3 refuses the request.
        assert_eq!(
            turn,
            vec![json!({"role": "model", "parts": [
                {"text": "Adding."},
                {"functionCall": {"id": "fc_1", "name": "add", "args": {"a": 2}},
                 "thoughtSignature": "skip_thought_signature_validator"},
                {"functionCall": {"name": "add", "args": {"a": 2}}},
            ]})]
        );
        assert_eq!(parse_calls(&turn[0]).unwrap().len(), 2);
        // A signed turn is sent as signed, nothing added.
        let signed = AssistantCall {
            thought_signature: Some("SIG"),
            ..given
        };
        let turn = render_assistant(None, &[signed, generated]);
        assert_eq!(turn[0]["parts"][0]["thoughtSignature"], "SIG");
        assert_eq!(turn[0]["parts"][1].get("thoughtSignature"), None);
        assert!(render_assistant(None, &[]).is_empty());
        assert_eq!(
            render_user("Hi"),
            json!({"role": "user", "parts": [{"text": "Hi"}]})
        );
    }

    #[test]
    fn a_blank_caption_beside_images_is_no_part() {
        // Gemini refuses an empty text part; whitespace says nothing (Anthropic's rendering
        // leaves it out too).
        let image = Image::from_bytes("image/png", b"\x89PNG\r\n\x1a\n").unwrap();
        let content = render_user_with_images(" ", std::slice::from_ref(&image));
        assert_eq!(content["parts"].as_array().unwrap().len(), 1, "{content}");
    }

    #[test]
    fn reads_text_and_stop_reasons() {
        let response = json!({"candidates": [{"content": {"role": "model", "parts": [
            {"text": "thinking…", "thought": true},
            {"text": "2 + 3 "},
            {"text": "= 5"},
        ]}, "finishReason": "STOP"}]});
        assert_eq!(parse_text(&response).unwrap().as_deref(), Some("2 + 3 = 5"));
        assert_eq!(parse_stop_reason(&response).unwrap(), StopReason::EndTurn);

        // All tokens spent thinking: a content without parts.
        let spent =
            json!({"candidates": [{"content": {"role": "model"}, "finishReason": "MAX_TOKENS"}]});
        assert_eq!(parse_text(&spent).unwrap(), None);
        assert!(parse_calls(&spent).unwrap().is_empty());
        assert_eq!(parse_stop_reason(&spent).unwrap(), StopReason::MaxTokens);

        let filtered = json!({"candidates": [{"finishReason": "SAFETY", "index": 0}]});
        assert!(parse_calls(&filtered).unwrap().is_empty());
        assert_eq!(
            parse_stop_reason(&filtered).unwrap(),
            StopReason::ContentFilter
        );

        let blocked = json!({"promptFeedback": {"blockReason": "SAFETY"}});
        assert_eq!(parse_text(&blocked).unwrap(), None);
        assert_eq!(
            parse_stop_reason(&blocked).unwrap(),
            StopReason::ContentFilter
        );

        let odd = json!({"candidates": [{"content": {"parts": []}, "finishReason": "MALFORMED_FUNCTION_CALL"}]});
        assert_eq!(
            parse_stop_reason(&odd).unwrap(),
            StopReason::Other("MALFORMED_FUNCTION_CALL".into())
        );
        assert!(parse_text(&json!({"candidates": {}})).is_err());
        assert!(parse_text(&json!({"text": "Hi"})).is_err());
    }

    #[test]
    fn the_turn_goes_back_as_its_parts() {
        let parts = json!([
            {"text": "Adding two numbers", "thought": true},
            {"functionCall": {"name": "add", "args": {"a": 2}}, "thoughtSignature": "SIG"}]);
        let response = json!({"candidates": [{"content": {"role": "model", "parts": parts},
            "finishReason": "STOP"}]});
        assert_eq!(
            parse_turn_entries(&response).unwrap(),
            Some(vec![json!({"role": "model", "parts": parts})])
        );
        let thought_only = json!({"candidates": [{"content": {"role": "model"}}]});
        assert_eq!(parse_turn_entries(&thought_only).unwrap(), None);
        assert_eq!(
            parse_turn_entries(&json!({"candidates": []})).unwrap(),
            None
        );
        assert!(parse_turn_entries(&json!({"candidates": {}})).is_err());
    }
}
