//! Tools across the boundary: a Toolsmith [`Tool`] as an MCP tool (name, title, description,
//! `inputSchema`, `outputSchema`, annotations), and an MCP tool as a [`ToolDefinition`].

use std::sync::Arc;

use rmcp::model as mcp;
use serde_json::{Map, Value, json};
use toolsmith_core::{Args, Tool, ToolAnnotations, ToolDefinition};

/// The property a result that is not a JSON object is wrapped in, for protocol revisions
/// before 2026-07-28 (whose `outputSchema` and `structuredContent` must be objects).
pub const WRAPPED_RESULT_KEY: &str = "result";

/// The keyword that marks an output schema as a wrapper made by [`WRAPPED_RESULT_KEY`]
/// (`"x-fastmcp-wrap-result": true`, as FastMCP writes and reads it), so that a client can
/// give back the value itself: a Toolsmith server marks its wrappers, and a Toolsmith client
/// unwraps the results of tools whose schema is marked (the results of others, the Python
/// SDK's unmarked wrappers among them, are kept as they come).
pub const WRAPPED_RESULT_MARKER: &str = "x-fastmcp-wrap-result";

/// The first protocol revision that accepts results other than objects as structured
/// content, and that serves every client the same tool list.
pub const STATELESS_REVISION: &str = "2026-07-28";

/// Whether a negotiated protocol revision is 2026-07-28 or newer (revisions are ISO dates, so
/// they compare as text). Unknown (`None`) counts as older.
pub(crate) fn is_stateless_revision(version: Option<&mcp::ProtocolVersion>) -> bool {
    version.is_some_and(|v| v.as_str() >= STATELESS_REVISION)
}

/// A tool's output schema as served: the schema, and whether results are wrapped in
/// `{"result": …}` to make it an object.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct OutputSchema {
    pub(crate) schema: Map<String, Value>,
    pub(crate) wrapped: bool,
}

impl OutputSchema {
    /// A structured result as served under this schema.
    pub(crate) fn structured(&self, value: Value) -> Value {
        if self.wrapped {
            json!({ WRAPPED_RESULT_KEY: value })
        } else {
            value
        }
    }
}

/// The result schema of `tool` (a command group's, when every command declares one: any of
/// them), wrapped in an object when it is not one and `objects_only` (revisions before
/// 2026-07-28).
pub(crate) fn output_schema(tool: &Tool, objects_only: bool) -> Option<OutputSchema> {
    // The schema core checks results against, so that what it lets through a client's
    // check accepts.
    let schema = tool.result_schema()?;
    let is_object = schema.get("type").and_then(Value::as_str) == Some("object");
    if is_object || !objects_only {
        return match schema {
            Value::Object(map) => Some(OutputSchema {
                schema: map,
                wrapped: false,
            }),
            // `true` or `false` as a schema: nothing to tell a client.
            _ => None,
        };
    }
    Some(OutputSchema {
        schema: wrap_schema(schema),
        wrapped: true,
    })
}

/// `{"type": "object", "properties": {"result": schema}, "required": ["result"]}`, marked
/// ([`WRAPPED_RESULT_MARKER`]), with the schema's `$defs` / `definitions` moved to the new
/// root so its `$ref`s still resolve.
fn wrap_schema(mut schema: Value) -> Map<String, Value> {
    let mut root = Map::new();
    if let Value::Object(inner) = &mut schema {
        for key in ["$schema", "$defs", "definitions"] {
            if let Some(value) = inner.remove(key) {
                root.insert(key.to_owned(), value);
            }
        }
    }
    root.insert("type".to_owned(), json!("object"));
    root.insert(
        "properties".to_owned(),
        json!({ WRAPPED_RESULT_KEY: schema }),
    );
    root.insert("required".to_owned(), json!([WRAPPED_RESULT_KEY]));
    root.insert("additionalProperties".to_owned(), json!(false));
    root.insert(WRAPPED_RESULT_MARKER.to_owned(), json!(true));
    root
}

/// The schema a marked wrapper ([`WRAPPED_RESULT_MARKER`]) wraps, its `$defs` /
/// `definitions` moved back into it; `None` when `output` is not a marked wrapper of one
/// property, [`WRAPPED_RESULT_KEY`], which it requires.
fn unwrapped_schema(output: &Map<String, Value>) -> Option<Value> {
    let marked = output.get(WRAPPED_RESULT_MARKER) == Some(&Value::Bool(true));
    let properties = output.get("properties").and_then(Value::as_object)?;
    let required = output.get("required").and_then(Value::as_array)?;
    let wraps_one =
        properties.len() == 1 && required.len() == 1 && required[0] == WRAPPED_RESULT_KEY;
    if !marked || !wraps_one || output.get("type") != Some(&json!("object")) {
        return None;
    }
    let mut inner = properties.get(WRAPPED_RESULT_KEY)?.clone();
    if let Value::Object(inner) = &mut inner {
        for key in ["$schema", "$defs", "definitions"] {
            if let (Some(value), false) = (output.get(key), inner.contains_key(key)) {
                inner.insert(key.to_owned(), value.clone());
            }
        }
    }
    Some(inner)
}

/// The annotations of a tool as one set: a single command's own; for a command group, what
/// holds for every command (read-only, idempotent only if all are; destructive, open-world if
/// any is).
pub(crate) fn tool_annotations(tool: &Tool) -> ToolAnnotations {
    let commands = tool.commands();
    if let [one] = commands {
        return one.annotations;
    }
    let all = |hint: fn(&ToolAnnotations) -> Option<bool>| {
        let hints: Vec<Option<bool>> = commands.iter().map(|c| hint(&c.annotations)).collect();
        if hints.iter().all(|h| *h == Some(true)) {
            Some(true)
        } else if hints.contains(&Some(false)) {
            Some(false)
        } else {
            None
        }
    };
    let any = |hint: fn(&ToolAnnotations) -> Option<bool>| {
        let hints: Vec<Option<bool>> = commands.iter().map(|c| hint(&c.annotations)).collect();
        if hints.contains(&Some(true)) {
            Some(true)
        } else if hints.iter().all(|h| *h == Some(false)) {
            Some(false)
        } else {
            None
        }
    };
    ToolAnnotations {
        read_only: all(|a| a.read_only),
        destructive: any(|a| a.destructive),
        idempotent: all(|a| a.idempotent),
        open_world: any(|a| a.open_world),
    }
}

/// A human title from a tool name: `search_file` → "Search file".
pub(crate) fn title_of(name: &str) -> String {
    let spaced: String = name
        .chars()
        .map(|c| if c == '_' || c == '-' { ' ' } else { c })
        .collect();
    let mut chars = spaced.trim().chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

/// `tool` as an MCP tool. `objects_only`: the client negotiated a revision before 2026-07-28,
/// whose output schemas must be objects.
pub(crate) fn mcp_tool(tool: &Tool, objects_only: bool) -> mcp::Tool {
    let spec = tool.function_spec();
    let input = match spec.parameters {
        Value::Object(map) => map,
        // Registration guarantees an object root; keep the wire valid regardless.
        _ => Map::from_iter([("type".to_owned(), json!("object"))]),
    };
    let mut out = mcp::Tool::new(spec.name.clone(), spec.description, Arc::new(input))
        .with_title(title_of(&spec.name));
    if let Some(output) = output_schema(tool, objects_only) {
        out = out.with_raw_output_schema(Arc::new(output.schema));
    }
    let annotations = tool_annotations(tool);
    if !annotations.is_empty() {
        out = out.with_annotations(mcp::ToolAnnotations::from_raw(
            None,
            annotations.read_only,
            annotations.destructive,
            annotations.idempotent,
            annotations.open_world,
        ));
    }
    out
}

/// An MCP tool as a Toolsmith definition named `local_name`, in `category`: the server's
/// description (or its title, or its name), input and output schemas, and annotation hints
/// (those it leaves out as MCP's defaults: [`remote_hints`]);
/// with whether its results come wrapped ([`WRAPPED_RESULT_MARKER`]), the definition then
/// declaring the wrapped value's schema.
pub(crate) fn definition_from_mcp(
    local_name: &str,
    tool: &mcp::Tool,
    category: &str,
) -> (ToolDefinition, bool) {
    let description = tool
        .description
        .as_deref()
        .filter(|d| !d.trim().is_empty())
        .map(str::to_owned)
        .or_else(|| tool.title.clone())
        .or_else(|| tool.annotations.as_ref().and_then(|a| a.title.clone()))
        .unwrap_or_else(|| format!("The MCP tool '{}'.", tool.name));
    // Kept as text: the bridge shares the definition with every session it is registered
    // with, beside rmcp's copy of the tool, and a server may list hundreds of tools.
    let compacted = |schema: Value| {
        let mut args = Args::new(schema);
        args.compact();
        args
    };
    let mut definition = ToolDefinition::new(
        local_name,
        description,
        compacted(Value::Object(tool.input_schema.as_ref().clone())),
    )
    .with_category(category);
    let mut wrapped = false;
    if let Some(output) = &tool.output_schema {
        let returns = match unwrapped_schema(output) {
            Some(inner) => {
                wrapped = true;
                inner
            }
            None => Value::Object(output.as_ref().clone()),
        };
        definition = definition.with_returns(compacted(returns));
    }
    (definition.with_annotations(remote_hints(tool)), wrapped)
}

/// The hints of a remote tool as MCP defines them: a hint the server leaves out (or all of
/// them, without `annotations`) is MCP's default, not "not said". MCP's defaults are
/// `readOnlyHint: false`, `destructiveHint: true`, `idempotentHint: false`,
/// `openWorldHint: true`: a tool a server says nothing about may destroy, and approval and
/// batching must treat it so (a read-only tool destroys nothing). Only hints a server gives
/// say otherwise; they are the server's word, as untrusted as the server.
fn remote_hints(tool: &mcp::Tool) -> ToolAnnotations {
    let hints = tool.annotations.as_ref();
    let read_only = hints.and_then(|h| h.read_only_hint).unwrap_or(false);
    ToolAnnotations {
        read_only: Some(read_only),
        destructive: Some(hints.and_then(|h| h.destructive_hint).unwrap_or(!read_only)),
        idempotent: Some(hints.and_then(|h| h.idempotent_hint).unwrap_or(false)),
        open_world: Some(hints.and_then(|h| h.open_world_hint).unwrap_or(true)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use toolsmith_core::scheme;

    fn def(name: &str) -> ToolDefinition {
        ToolDefinition::new(
            name,
            "Do it.",
            Args::new(scheme::object().required("x", scheme::integer()).build()),
        )
    }

    #[test]
    fn non_object_results_are_wrapped_for_older_revisions() {
        let tool = Tool::SingleCommand(def("count").with_returns(Args::new(json!({
            "$defs": {"N": {"type": "integer"}},
            "$ref": "#/$defs/N"
        }))));
        let old = output_schema(&tool, true).unwrap();
        assert!(old.wrapped);
        assert_eq!(
            Value::Object(old.schema.clone()),
            json!({
                "$defs": {"N": {"type": "integer"}},
                "type": "object",
                "properties": {"result": {"$ref": "#/$defs/N"}},
                "required": ["result"],
                "additionalProperties": false,
                "x-fastmcp-wrap-result": true
            })
        );
        assert_eq!(old.structured(json!(3)), json!({"result": 3}));
        // A client reads the marked wrapper back as the schema it wraps, `$defs` in place.
        assert_eq!(
            unwrapped_schema(&old.schema),
            Some(json!({"$ref": "#/$defs/N", "$defs": {"N": {"type": "integer"}}}))
        );
        let mut unmarked = old.schema.clone();
        unmarked.remove(WRAPPED_RESULT_MARKER);
        assert_eq!(unwrapped_schema(&unmarked), None);
        let mut two = old.schema.clone();
        two["properties"]
            .as_object_mut()
            .unwrap()
            .insert("more".into(), json!({}));
        assert_eq!(unwrapped_schema(&two), None);
        let new = output_schema(&tool, false).unwrap();
        assert!(!new.wrapped);
        assert_eq!(new.structured(json!(3)), json!(3));
    }

    #[test]
    fn object_results_are_never_wrapped() {
        let returns = Args::new(scheme::object().required("n", scheme::integer()).build());
        let tool = Tool::SingleCommand(def("count").with_returns(returns.clone()));
        let old = output_schema(&tool, true).unwrap();
        assert!(!old.wrapped);
        assert_eq!(&Value::Object(old.schema), returns.schema());
        assert!(output_schema(&Tool::SingleCommand(def("x")), true).is_none());
    }

    #[test]
    fn a_group_s_output_schema_keeps_each_command_s_references() {
        // As `returns_schema` writes recursive types: `$ref: "#"` to its own root, and a
        // type holding one with `$defs` at its root.
        let tree = json!({"type": "object", "properties": {
            "label": {"type": "string"},
            "children": {"type": "array", "items": {"$ref": "#"}}
        }, "required": ["label", "children"]});
        let forest = json!({"type": "object", "properties": {
            "trees": {"type": "array", "items": {"$ref": "#/$defs/Tree"}}
        }, "required": ["trees"], "$defs": {"Tree": {"type": "object", "properties": {
            "label": {"type": "string"},
            "children": {"type": "array", "items": {"$ref": "#/$defs/Tree"}}
        }, "required": ["label", "children"]}}});
        let group = Tool::MultiCommands(
            "woods".into(),
            vec![
                def("tree").with_returns(Args::new(tree)),
                def("forest").with_returns(Args::new(forest)),
            ],
        );
        for objects_only in [false, true] {
            let output = output_schema(&group, objects_only).unwrap();
            let validator = jsonschema::validator_for(&Value::Object(output.schema.clone()))
                .unwrap_or_else(|e| panic!("objects_only {objects_only}: {e}"));
            let valid = |value: Value| validator.is_valid(&output.structured(value));
            assert!(valid(
                json!({"label": "a", "children": [{"label": "b", "children": []}]})
            ));
            assert!(valid(
                json!({"trees": [{"label": "a", "children": [{"label": "b", "children": []}]}]})
            ));
            assert!(!valid(
                json!({"label": "a", "children": [{"label": 5, "children": []}]})
            ));
            assert!(!valid(
                json!({"trees": [{"label": "a", "children": [{"label": 5, "children": []}]}]})
            ));
        }
    }

    #[test]
    fn groups_combine_their_hints() {
        let group = Tool::MultiCommands(
            "memory".into(),
            vec![
                def("add").with_annotations(ToolAnnotations {
                    read_only: Some(false),
                    destructive: Some(false),
                    ..Default::default()
                }),
                def("remove").with_annotations(ToolAnnotations {
                    read_only: Some(false),
                    destructive: Some(true),
                    ..Default::default()
                }),
            ],
        );
        let hints = tool_annotations(&group);
        assert_eq!(hints.read_only, Some(false));
        assert_eq!(hints.destructive, Some(true));
        assert_eq!(hints.idempotent, None);
        let served = mcp_tool(&group, true);
        assert_eq!(served.input_schema["required"], json!(["command"]));
        assert_eq!(served.title.as_deref(), Some("Memory"));
    }

    #[test]
    fn titles_read_as_words() {
        assert_eq!(title_of("search_file"), "Search file");
        assert_eq!(title_of("get-weather"), "Get weather");
        assert_eq!(title_of("_"), "");
    }

    #[test]
    fn mcp_tools_become_definitions() {
        let remote = mcp::Tool::new(
            "fs.read",
            "Read a file.",
            Arc::new(
                json!({"type": "object", "properties": {"path": {"type": "string"}}})
                    .as_object()
                    .unwrap()
                    .clone(),
            ),
        )
        .with_annotations(mcp::ToolAnnotations::new().read_only(true))
        .with_raw_output_schema(Arc::new(
            json!({"type": "object", "properties": {"text": {"type": "string"}}})
                .as_object()
                .unwrap()
                .clone(),
        ));
        let (local, wrapped) = definition_from_mcp("fs_read", &remote, "mcp");
        assert!(!wrapped);
        assert_eq!(local.name, "fs_read");
        assert_eq!(local.description, "Read a file.");
        assert_eq!(local.annotations.read_only, Some(true));
        // Both schemas kept as text (the bridge shares them with every session), and read
        // back as the server sent them.
        let returns = local.returns.as_ref().unwrap();
        assert!(local.arguments.is_compact() && returns.is_compact());
        assert_eq!(
            local.arguments.schema(),
            &Value::Object(remote.input_schema.as_ref().clone())
        );
        assert_eq!(
            returns.schema(),
            &Value::Object(remote.output_schema.as_deref().unwrap().clone())
        );
    }
}
