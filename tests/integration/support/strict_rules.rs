//! OpenAI's and Anthropic's published strict-mode rules, checked independently of the
//! transform that is meant to satisfy them.
//!
//! OpenAI (Structured Outputs, "supported schemas"): the root is an object and not `anyOf`;
//! every object has `additionalProperties: false` and lists every property in `required`;
//! every schema has a single `type` or is an `anyOf` or a bare `$ref` into `$defs`; only the
//! supported keywords appear (strings: `pattern`, `format` from a fixed list; numbers:
//! `minimum`, `maximum`, `exclusiveMinimum`, `exclusiveMaximum`, `multipleOf`; arrays:
//! `items`, `minItems`, `maxItems`; any: `description`, `enum`, `const`); at most 10 levels
//! of nested objects and 5000 properties.
//!
//! Anthropic (structured outputs, "JSON Schema limitations"): every object closed, no
//! recursion, no numeric or string-length constraints, `minItems` only 0 or 1, no `maxItems`.

use serde_json::Value;

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
const TYPES: [&str; 7] = [
    "string", "number", "integer", "boolean", "object", "array", "null",
];

/// Every violation of OpenAI's strict rules in `schema`, each with its JSON pointer.
pub fn openai_violations(schema: &Value) -> Vec<String> {
    let mut v = Vec::new();
    if schema.get("type") != Some(&Value::from("object")) {
        v.push("/: the root must be `type: object`".to_owned());
    }
    if schema.get("anyOf").is_some() {
        v.push("/: the root must not be anyOf".to_owned());
    }
    let mut properties = 0;
    check_node(schema, schema, "", 0, true, &mut properties, &mut v);
    if let Some(defs) = schema.get("$defs").and_then(Value::as_object) {
        for (name, def) in defs {
            check_node(
                schema,
                def,
                &format!("/$defs/{name}"),
                0,
                false,
                &mut properties,
                &mut v,
            );
        }
    }
    if properties > 5000 {
        v.push(format!("/: {properties} properties, more than 5000"));
    }
    v
}

fn check_node(
    root: &Value,
    node: &Value,
    path: &str,
    depth: usize,
    is_root: bool,
    properties: &mut usize,
    v: &mut Vec<String>,
) {
    let Some(map) = node.as_object() else {
        v.push(format!("{path}: not a schema object"));
        return;
    };
    if let Some(reference) = map.get("$ref") {
        if map.len() != 1 {
            v.push(format!("{path}: `$ref` with siblings"));
        }
        let target = reference
            .as_str()
            .and_then(|r| r.strip_prefix('#'))
            .and_then(|p| root.pointer(p));
        if target.is_none() {
            v.push(format!("{path}: `$ref` {reference} points nowhere"));
        }
        return;
    }
    if let Some(branches) = map.get("anyOf") {
        for key in map.keys() {
            if key != "anyOf" && key != "description" {
                v.push(format!("{path}: `{key}` beside anyOf"));
            }
        }
        match branches.as_array() {
            Some(branches) if !branches.is_empty() => {
                for (i, b) in branches.iter().enumerate() {
                    check_node(
                        root,
                        b,
                        &format!("{path}/anyOf/{i}"),
                        depth,
                        false,
                        properties,
                        v,
                    );
                }
            }
            _ => v.push(format!("{path}: anyOf must be a non-empty list")),
        }
        return;
    }
    let ty = match map.get("type") {
        Some(Value::String(ty)) if TYPES.contains(&ty.as_str()) => ty.as_str(),
        Some(other) => {
            v.push(format!(
                "{path}: `type` must be one JSON type name, got {other}"
            ));
            return;
        }
        None => {
            v.push(format!("{path}: no `type`"));
            return;
        }
    };
    let allowed: &[&str] = match ty {
        "string" => &["pattern", "format"],
        "number" | "integer" => &[
            "minimum",
            "maximum",
            "exclusiveMinimum",
            "exclusiveMaximum",
            "multipleOf",
        ],
        "array" => &["items", "minItems", "maxItems"],
        "object" => &["properties", "required", "additionalProperties", "$defs"],
        _ => &[],
    };
    for key in map.keys() {
        let common = ["type", "description", "enum", "const"].contains(&key.as_str());
        if !common && !allowed.contains(&key.as_str()) {
            v.push(format!("{path}: keyword `{key}` is not supported for {ty}"));
        }
        if key == "$defs" && !is_root {
            v.push(format!("{path}: `$defs` below the root"));
        }
    }
    if let Some(format) = map.get("format").and_then(Value::as_str)
        && !OPENAI_FORMATS.contains(&format)
    {
        v.push(format!("{path}: format {format:?} is not supported"));
    }
    if let Some(values) = map.get("enum") {
        match values.as_array() {
            Some(values) if !values.is_empty() => {
                for value in values {
                    let ok = match ty {
                        "string" => value.is_string(),
                        "integer" => value.is_i64() || value.is_u64(),
                        "number" => value.is_number(),
                        "boolean" => value.is_boolean(),
                        "null" => value.is_null(),
                        _ => true,
                    };
                    if !ok {
                        v.push(format!("{path}: enum value {value} is not a {ty}"));
                    }
                }
            }
            _ => v.push(format!("{path}: enum must be a non-empty list")),
        }
    }
    match ty {
        "object" => {
            if depth >= 10 {
                v.push(format!("{path}: more than 10 levels of nested objects"));
            }
            if map.get("additionalProperties") != Some(&Value::Bool(false)) {
                v.push(format!("{path}: additionalProperties must be false"));
            }
            let Some(props) = map.get("properties").and_then(Value::as_object) else {
                v.push(format!("{path}: no properties"));
                return;
            };
            let required: Vec<&str> = map
                .get("required")
                .and_then(Value::as_array)
                .map(|r| r.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            let mut keys: Vec<&str> = props.keys().map(String::as_str).collect();
            let mut sorted_required = required.clone();
            keys.sort_unstable();
            sorted_required.sort_unstable();
            if keys != sorted_required {
                v.push(format!(
                    "{path}: required {required:?} must list every property {keys:?}"
                ));
            }
            for (name, prop) in props {
                *properties += 1;
                check_node(
                    root,
                    prop,
                    &format!("{path}/properties/{name}"),
                    depth + 1,
                    false,
                    properties,
                    v,
                );
            }
        }
        "array" => match map.get("items") {
            Some(items) => check_node(
                root,
                items,
                &format!("{path}/items"),
                depth,
                false,
                properties,
                v,
            ),
            None => v.push(format!("{path}: array without items")),
        },
        _ => {}
    }
}

/// Every violation of Anthropic's strict rules in `schema`.
pub fn anthropic_violations(schema: &Value) -> Vec<String> {
    let mut v = Vec::new();
    anthropic_node(schema, "", &mut v);
    v
}

fn anthropic_node(node: &Value, path: &str, v: &mut Vec<String>) {
    match node {
        Value::Object(map) => {
            if map.get("type") == Some(&Value::from("object"))
                && map.get("additionalProperties") != Some(&Value::Bool(false))
            {
                v.push(format!("{path}: additionalProperties must be false"));
            }
            for key in [
                "minimum",
                "maximum",
                "exclusiveMinimum",
                "exclusiveMaximum",
                "multipleOf",
                "minLength",
                "maxLength",
                "maxItems",
                "uniqueItems",
                "patternProperties",
            ] {
                if map.contains_key(key) {
                    v.push(format!("{path}: `{key}` is not supported"));
                }
            }
            if map
                .get("minItems")
                .and_then(Value::as_u64)
                .is_some_and(|n| n > 1)
            {
                v.push(format!("{path}: minItems above 1"));
            }
            if let Some(Value::Object(props)) = map.get("properties") {
                for (name, prop) in props {
                    anthropic_node(prop, &format!("{path}/properties/{name}"), v);
                }
            }
            for key in ["items", "anyOf", "$defs"] {
                match map.get(key) {
                    Some(Value::Array(list)) => {
                        for (i, s) in list.iter().enumerate() {
                            anthropic_node(s, &format!("{path}/{key}/{i}"), v);
                        }
                    }
                    Some(Value::Object(o)) if key == "$defs" => {
                        for (name, s) in o {
                            anthropic_node(s, &format!("{path}/$defs/{name}"), v);
                        }
                    }
                    Some(s) => anthropic_node(s, &format!("{path}/{key}"), v),
                    None => {}
                }
            }
        }
        other => v.push(format!("{path}: {other} is not a schema object")),
    }
}
