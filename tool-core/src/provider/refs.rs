//! Local `$ref`s of a schema: resolving them against the root's `$defs` / `definitions`, and
//! finding the ones that make the schema recursive.

use std::borrow::Cow;
use std::collections::{BTreeSet, HashMap};

use serde_json::{Map, Value};

use crate::reading::tool_args::escape_pointer;

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
        let mut targets = vec!["#".to_owned()];
        for keyword in DEFINITION_KEYWORDS {
            if let Some(defs) = root.get(keyword).and_then(Value::as_object) {
                for name in defs.keys() {
                    targets.push(format!("#/{keyword}/{}", escape_pointer(name)));
                }
            }
        }
        let node: HashMap<&str, usize> = targets
            .iter()
            .enumerate()
            .map(|(index, target)| (target.as_str(), index))
            .collect();
        // Each target's references to other targets (a reference into one, or elsewhere,
        // leads to no cycle of targets).
        let edges: Vec<Vec<usize>> = targets
            .iter()
            .map(|target| {
                let mut refs = BTreeSet::new();
                if let Some(schema) = resolve_pointer(root, target) {
                    collect_refs(schema, target == "#", &mut refs);
                }
                refs.iter()
                    .filter_map(|reference| node.get(reference.as_str()).copied())
                    .collect()
            })
            .collect();
        let recursive = cyclic_nodes(&edges)
            .into_iter()
            .map(|index| targets[index].clone())
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
        self.recursive.contains(&*decoded(reference))
    }
}

fn resolve_pointer<'v>(root: &'v Value, reference: &str) -> Option<&'v Value> {
    let pointer = reference.strip_prefix('#')?;
    root.pointer(&decoded(pointer))
}

/// A reference with its percent-encoding undone: a `$ref` is a URI, whose fragment writes a
/// definition named `My Place` as `My%20Place` (the validator resolves it so). A `%` that
/// starts no escape, or escapes that make no UTF-8, are read as written.
fn decoded(reference: &str) -> Cow<'_, str> {
    if !reference.contains('%') {
        return Cow::Borrowed(reference);
    }
    percent_encoding::percent_decode_str(reference)
        .decode_utf8()
        .unwrap_or(Cow::Borrowed(reference))
}

/// The `$ref`s inside `schema`, not descending into the root's definitions (they are nodes
/// of their own).
fn collect_refs(schema: &Value, is_root: bool, out: &mut BTreeSet<String>) {
    match schema {
        Value::Object(map) => {
            for (key, value) in map {
                if key == "$ref" {
                    if let Some(reference) = value.as_str() {
                        out.insert(decoded(reference).into_owned());
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

/// The nodes of `edges` (each node's successors) on a cycle: those of a strongly connected
/// component of more than one node, and those with an edge to themselves. Tarjan's algorithm,
/// iterative (a chain of thousands of definitions must not deepen the stack), linear in
/// nodes and edges (a search from each node was quadratic: 20 s for 5,000 definitions).
fn cyclic_nodes(edges: &[Vec<usize>]) -> Vec<usize> {
    const UNVISITED: usize = usize::MAX;
    let count = edges.len();
    let (mut order, mut low) = (vec![UNVISITED; count], vec![0; count]);
    let mut on_stack = vec![false; count];
    let (mut stack, mut cyclic) = (Vec::new(), Vec::new());
    let mut next_order = 0;
    for start in 0..count {
        if order[start] != UNVISITED {
            continue;
        }
        // The path being searched: each node with how many of its edges it has followed.
        let mut path = vec![(start, 0)];
        order[start] = next_order;
        low[start] = next_order;
        next_order += 1;
        stack.push(start);
        on_stack[start] = true;
        while let Some(&mut (at, ref mut followed)) = path.last_mut() {
            if let Some(&next) = edges[at].get(*followed) {
                *followed += 1;
                if order[next] == UNVISITED {
                    order[next] = next_order;
                    low[next] = next_order;
                    next_order += 1;
                    stack.push(next);
                    on_stack[next] = true;
                    path.push((next, 0));
                } else if on_stack[next] {
                    low[at] = low[at].min(order[next]);
                }
                continue;
            }
            path.pop();
            if let Some(&(parent, _)) = path.last() {
                low[parent] = low[parent].min(low[at]);
            }
            if low[at] == order[at] {
                // `at` roots a component: the nodes above it on the stack.
                let from = stack.iter().rposition(|&n| n == at).expect("on the stack");
                let component = stack.split_off(from);
                for &member in &component {
                    on_stack[member] = false;
                }
                if component.len() > 1 || edges[at].contains(&at) {
                    cyclic.extend(component);
                }
            }
        }
    }
    cyclic
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
    fn percent_encoded_references_resolve_as_the_validator_resolves_them() {
        // A `$ref` is a URI: its fragment may be percent-encoded (a definition named with a
        // space, `%` itself). Validation resolved it; rendering found nothing there.
        let schema = json!({
            "type": "object",
            "properties": {"place": {"$ref": "#/$defs/My%20Place"}},
            "$defs": {
                "My Place": {"type": "object", "properties": {"next": {"$ref": "#/$defs/My%20Place"}}},
                "100%": {"type": "string"}
            }
        });
        let defs = Definitions::of(&schema);
        assert_eq!(
            defs.resolve("#/$defs/My%20Place"),
            schema["$defs"].get("My Place")
        );
        assert!(defs.is_recursive("#/$defs/My%20Place"));
        assert!(defs.is_recursive("#/$defs/My Place"));
        assert_eq!(
            defs.resolve("#/$defs/100%25"),
            Some(&json!({"type": "string"}))
        );
        // A `%` not followed by two hex digits is read as written.
        assert_eq!(
            defs.resolve("#/$defs/100%"),
            Some(&json!({"type": "string"}))
        );
    }

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
    fn cycles_among_thousands_of_definitions_are_found_in_linear_time() {
        // A chain D0 → D1 → … → D4999, whose last link points back to D2500, and a chain
        // that ends.
        let chain = |prefix: &'static str, to_back: Option<usize>| {
            (0..5_000_usize).map(move |i| {
                let next = match (i + 1 < 5_000, to_back) {
                    (true, _) => json!({"$ref": format!("#/$defs/{prefix}{}", i + 1)}),
                    (false, Some(back)) => json!({"$ref": format!("#/$defs/{prefix}{back}")}),
                    (false, None) => json!({"type": "string"}),
                };
                (
                    format!("{prefix}{i}"),
                    json!({"type": "array", "items": next}),
                )
            })
        };
        let defs: Map<String, Value> = chain("C", Some(2_500)).chain(chain("E", None)).collect();
        let root = json!({"$ref": "#/$defs/C0", "$defs": defs});
        let started = cpu_time::ThreadTime::now();
        let found = Definitions::of(&root);
        // A search from each definition took seconds (20 s for 5,000, a debug build).
        assert!(started.elapsed() < std::time::Duration::from_secs(5));
        assert!(!found.is_recursive("#"));
        assert!(!found.is_recursive("#/$defs/C0"));
        assert!(!found.is_recursive("#/$defs/C2499"));
        assert!(found.is_recursive("#/$defs/C2500"));
        assert!(found.is_recursive("#/$defs/C4999"));
        assert!(!found.is_recursive("#/$defs/E0"));
        assert!(!found.is_recursive("#/$defs/E4999"));
        assert_eq!(found.recursive.len(), 2_500);
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
