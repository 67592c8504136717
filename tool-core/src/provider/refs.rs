//! Local `$ref`s of a schema: resolving them against the root's `$defs` / `definitions`, and
//! finding the ones that make the schema recursive.

use std::collections::{BTreeSet, HashMap};

use serde_json::{Map, Value};

/// The keywords a schema's root keeps its definitions under.
pub(crate) const DEFINITION_KEYWORDS: [&str; 2] = ["$defs", "definitions"];

/// The definitions of one root schema, and which `$ref` targets are part of a cycle.
pub(crate) struct Definitions<'a> {
    root: &'a Value,
    recursive: BTreeSet<String>,
}

impl<'a> Definitions<'a> {
    /// Collects the definitions of `root` and works out which references are recursive.
    pub(crate) fn of(root: &'a Value) -> Self {
        let mut edges: HashMap<String, BTreeSet<String>> = HashMap::new();
        let mut targets = vec!["#".to_owned()];
        for keyword in DEFINITION_KEYWORDS {
            if let Some(defs) = root.get(keyword).and_then(Value::as_object) {
                for name in defs.keys() {
                    targets.push(format!("#/{keyword}/{}", escape(name)));
                }
            }
        }
        for target in &targets {
            let Some(schema) = resolve_pointer(root, target) else {
                continue;
            };
            let mut refs = BTreeSet::new();
            collect_refs(schema, target == "#", &mut refs);
            edges.insert(target.clone(), refs);
        }
        let recursive = targets
            .iter()
            .filter(|target| reaches(&edges, target, target))
            .cloned()
            .collect();
        Self { root, recursive }
    }

    /// The schema a local reference points to; `None` for a reference that is not local or
    /// points nowhere.
    pub(crate) fn resolve(&self, reference: &str) -> Option<&'a Value> {
        resolve_pointer(self.root, reference)
    }

    /// Whether following `reference` can lead back to it.
    pub(crate) fn is_recursive(&self, reference: &str) -> bool {
        self.recursive.contains(reference)
    }
}

fn resolve_pointer<'v>(root: &'v Value, reference: &str) -> Option<&'v Value> {
    let pointer = reference.strip_prefix('#')?;
    root.pointer(pointer)
}

fn escape(name: &str) -> String {
    name.replace('~', "~0").replace('/', "~1")
}

/// The `$ref`s inside `schema`, not descending into the root's definitions (they are nodes
/// of their own).
fn collect_refs(schema: &Value, is_root: bool, out: &mut BTreeSet<String>) {
    match schema {
        Value::Object(map) => {
            for (key, value) in map {
                if key == "$ref" {
                    if let Some(reference) = value.as_str() {
                        out.insert(reference.to_owned());
                    }
                } else if !(is_root && DEFINITION_KEYWORDS.contains(&key.as_str())) {
                    collect_refs(value, false, out);
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|v| collect_refs(v, false, out)),
        _ => {}
    }
}

fn reaches(edges: &HashMap<String, BTreeSet<String>>, from: &str, to: &str) -> bool {
    let mut seen = BTreeSet::new();
    let mut stack: Vec<&str> = edges
        .get(from)
        .map(|e| e.iter().map(String::as_str).collect())
        .unwrap_or_default();
    while let Some(next) = stack.pop() {
        if next == to {
            return true;
        }
        if seen.insert(next)
            && let Some(more) = edges.get(next)
        {
            stack.extend(more.iter().map(String::as_str));
        }
    }
    false
}

/// Merges the subschemas of an `allOf` into `target` (whose own keywords win): `properties`
/// are united, `required` lists joined; any other keyword two parts disagree on is an error
/// naming it. `$ref` parts are resolved first.
pub(crate) fn merge_all_of(
    target: &mut Map<String, Value>,
    parts: &[Value],
    defs: &Definitions<'_>,
) -> Result<(), String> {
    for part in parts {
        let part = match part.get("$ref").and_then(Value::as_str) {
            Some(reference) => defs
                .resolve(reference)
                .ok_or_else(|| format!("`$ref` {reference:?} points nowhere"))?,
            None => part,
        };
        let Some(part) = part.as_object() else {
            return Err("an `allOf` part is not a schema object".to_owned());
        };
        for (key, value) in part {
            match (key.as_str(), target.get_mut(key)) {
                (_, None) => {
                    target.insert(key.clone(), value.clone());
                }
                ("properties", Some(Value::Object(existing))) => {
                    if let Some(more) = value.as_object() {
                        for (name, schema) in more {
                            existing
                                .entry(name.clone())
                                .or_insert_with(|| schema.clone());
                        }
                    }
                }
                ("required", Some(Value::Array(existing))) => {
                    for name in value.as_array().into_iter().flatten() {
                        if !existing.contains(name) {
                            existing.push(name.clone());
                        }
                    }
                }
                ("description" | "title", Some(_)) => {}
                (_, Some(existing)) if existing == value => {}
                (key, Some(_)) => {
                    return Err(format!(
                        "the `allOf` parts disagree on `{key}`, so they cannot be merged into one schema"
                    ));
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn finds_recursive_references() {
        let schema = json!({
            "type": "object",
            "properties": {"tree": {"$ref": "#/$defs/Node"}, "leaf": {"$ref": "#/$defs/Leaf"}},
            "$defs": {
                "Node": {"type": "object", "properties": {"children": {"type": "array", "items": {"$ref": "#/$defs/Node"}}}},
                "Leaf": {"type": "string"}
            }
        });
        let defs = Definitions::of(&schema);
        assert!(defs.is_recursive("#/$defs/Node"));
        assert!(!defs.is_recursive("#/$defs/Leaf"));
        assert!(!defs.is_recursive("#"));
        assert_eq!(
            defs.resolve("#/$defs/Leaf"),
            Some(&json!({"type": "string"}))
        );
        assert_eq!(defs.resolve("http://example.com/x"), None);

        let self_ref = json!({"type": "object", "properties": {"next": {"$ref": "#"}}});
        assert!(Definitions::of(&self_ref).is_recursive("#"));
    }

    #[test]
    fn merges_all_of_parts() {
        let root = json!({"$defs": {"Base": {"type": "object", "properties": {"a": {}}, "required": ["a"]}}});
        let defs = Definitions::of(&root);
        let mut target = Map::new();
        target.insert("description".into(), json!("Merged."));
        merge_all_of(
            &mut target,
            &[
                json!({"$ref": "#/$defs/Base"}),
                json!({"type": "object", "properties": {"b": {}}, "required": ["b"]}),
            ],
            &defs,
        )
        .unwrap();
        assert_eq!(
            Value::Object(target),
            json!({
                "description": "Merged.", "type": "object",
                "properties": {"a": {}, "b": {}}, "required": ["a", "b"]
            })
        );
        let mut target = Map::new();
        let err = merge_all_of(
            &mut target,
            &[json!({"type": "string"}), json!({"type": "integer"})],
            &defs,
        )
        .unwrap_err();
        assert!(err.contains("`type`"), "{err}");
    }
}
