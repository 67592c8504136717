//! What a tool is: its definition ([`ToolDefinition`](crate::ToolDefinition), with the
//! schemas of its arguments and result), the [`ToolImpl`](crate::ToolImpl) trait it implements, the
//! arguments a call carries, the result it gives back and the errors a call can end in.
//!
//! [`Tool`]: the shape a tool presents to providers, and [`ToolFunctionSpec`], its
//! provider-neutral function rendering.

pub(crate) mod args;
pub(crate) mod arguments;
pub(crate) mod bounded_json;
pub(crate) mod call_annotations;
pub(crate) mod call_context;
pub(crate) mod commands;
pub(crate) mod content_part;
pub(crate) mod definition;
pub(crate) mod echo;
pub(crate) mod error;
pub(crate) mod fn_tool;
pub(crate) mod future_block;
pub(crate) mod image;
pub(crate) mod image_header;
pub(crate) mod interned_definitions;
pub(crate) mod json_text;
pub(crate) mod json_with_images;
pub(crate) mod names;
pub(crate) mod nesting;
pub(crate) mod request;
pub(crate) mod result;
pub(crate) mod serde_private_keys;
pub(crate) mod shared_value;
pub(crate) mod stable_hash;
pub(crate) mod text_scan;
pub(crate) mod tool_impl;
pub(crate) mod with_images;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use crate::provider::refs::DEFINITION_KEYWORDS;
use crate::reading::tool_args::escape_pointer;
use crate::tool::args::type_names;
use crate::{Args, ToolDefinition};

/// The name of the argument that selects a command of a [`Tool::MultiCommands`] tool.
pub const COMMAND_ARGUMENT: &str = "command";

/// A tool as providers are shown it: one command, or a group of commands under one name.
///
/// ```
/// use toolsmith::{Args, Tool, ToolDefinition, scheme};
///
/// let add = ToolDefinition::new("add", "Remember a fact.",
///     Args::new(scheme::object().required("text", scheme::string()).build()));
/// let remove = ToolDefinition::new("remove", "Forget a fact.",
///     Args::new(scheme::object().required("id", scheme::integer()).build()));
/// let memory = Tool::MultiCommands("memory".into(), vec![add, remove]);
///
/// let spec = memory.function_spec();
/// assert_eq!(spec.name, "memory");
/// assert_eq!(spec.parameters["type"], "object");
/// assert_eq!(spec.parameters["properties"]["command"]["enum"], serde_json::json!(["add", "remove"]));
/// ```
///
/// A group's own description (what the group is for) is carried by its commands'
/// [`group_description`](ToolDefinition::group_description): build the group with
/// [`Tool::group`] to set it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Tool {
    /// A tool with a single command, e.g. `bash`.
    SingleCommand(ToolDefinition),
    /// A named group of commands, e.g. `memory` → `add`, `remove`; a call picks one with the
    /// `command` argument.
    MultiCommands(String, Vec<ToolDefinition>),
}

/// A schema of a tool nested deeper than [`MAX_JSON_DEPTH`](crate::MAX_JSON_DEPTH): which
/// one, for the error that refuses the tool.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct DeepSchema {
    /// The command whose schema it is, in a command group.
    pub(crate) command: Option<String>,
    /// Whether it is the result schema (`returns`) rather than the argument schema.
    pub(crate) returns: bool,
}

impl std::fmt::Display for DeepSchema {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let which = if self.returns { "result" } else { "argument" };
        write!(f, "the {which} schema")?;
        if let Some(command) = &self.command {
            write!(f, " of command '{command}'")?;
        }
        write!(f, " is {}", nesting::TooDeep)
    }
}

/// A tool rendered as one function: what every provider's wire format is made from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolFunctionSpec {
    /// The function's name.
    pub name: String,
    /// The function's description.
    pub description: String,
    /// The JSON Schema of the arguments; its root is always `{"type": "object", …}`.
    pub parameters: Value,
    /// The JSON Schema of the result, if declared.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub returns: Option<Value>,
}

impl Tool {
    /// The annotations that apply to a call with `arguments`: the tool's, or for a command
    /// group the called command's (none when the command is missing or unknown).
    pub fn call_annotations(&self, arguments: &crate::ToolArguments) -> crate::ToolAnnotations {
        call_annotations::call_annotations(self, arguments)
    }

    /// The name the model calls the tool by.
    pub fn name(&self) -> &str {
        match self {
            Self::SingleCommand(def) => &def.name,
            Self::MultiCommands(name, _) => name,
        }
    }

    /// The definitions of the tool's commands (one for a single-command tool).
    pub fn commands(&self) -> &[ToolDefinition] {
        match self {
            Self::SingleCommand(def) => std::slice::from_ref(def),
            Self::MultiCommands(_, commands) => commands,
        }
    }

    /// Keeps every schema of the tool as its JSON text (see [`Args`]): for a definition the
    /// registry holds alone, which only its first call, `shed` and a rendering read again.
    pub(crate) fn compact_schemas(&mut self) {
        let commands = match self {
            Self::SingleCommand(def) => std::slice::from_mut(def),
            Self::MultiCommands(_, commands) => commands.as_mut_slice(),
        };
        for command in commands {
            command.arguments.compact();
            if let Some(returns) = &mut command.returns {
                returns.compact();
            }
        }
    }

    /// The command definition called `name`, for a multi-command tool; the definition itself
    /// for a single-command tool.
    pub fn command(&self, name: &str) -> Option<&ToolDefinition> {
        match self {
            Self::SingleCommand(def) => Some(def),
            Self::MultiCommands(_, commands) => commands.iter().find(|c| c.name == name),
        }
    }

    /// The first of the tool's schemas nested deeper than
    /// [`MAX_JSON_DEPTH`](crate::MAX_JSON_DEPTH), if any: checked before anything walks
    /// them (compiling, copying into a rendering, transforming).
    pub(crate) fn deep_schema(&self) -> Option<DeepSchema> {
        let group = matches!(self, Self::MultiCommands(..));
        self.commands().iter().find_map(|command| {
            let deep = |args: &Args| !args.nests_within_limit();
            let returns = match &command.returns {
                _ if deep(&command.arguments) => false,
                Some(returns) if deep(returns) => true,
                _ => return None,
            };
            Some(DeepSchema {
                command: group.then(|| command.name.clone()),
                returns,
            })
        })
    }

    /// The tool's category: its definition's, or for a group the first command's.
    pub fn category(&self) -> &str {
        self.commands()
            .first()
            .map_or(crate::DEFAULT_CATEGORY, |def| def.category.as_str())
    }

    /// A command group with a description of its own: `Tool::MultiCommands(name, commands)`
    /// whose commands carry `description` as their
    /// [`group_description`](ToolDefinition::group_description), so that the group's
    /// [`description`](Self::description), and so its rendered function's, starts with it.
    ///
    /// ```
    /// use toolsmith::{Args, Tool, ToolDefinition};
    ///
    /// let memory = Tool::group("memory", "Long-term facts about the user.", vec![
    ///     ToolDefinition::new("add", "Remember a fact.", Args::empty()),
    ///     ToolDefinition::new("clear", "Forget every fact.", Args::empty()),
    /// ]);
    /// assert!(matches!(&memory, Tool::MultiCommands(name, _) if name == "memory"));
    /// assert_eq!(memory.group_description(), Some("Long-term facts about the user."));
    /// assert_eq!(memory.function_spec().description, "Long-term facts about the user.\n\n\
    ///     Commands (choose one with the `command` argument):\n- add: Remember a fact.\n\
    ///     - clear: Forget every fact.");
    /// ```
    pub fn group(
        name: impl Into<String>,
        description: impl Into<String>,
        commands: Vec<ToolDefinition>,
    ) -> Self {
        let description = description.into();
        Self::MultiCommands(
            name.into(),
            commands
                .into_iter()
                .map(|command| command.with_group_description(description.clone()))
                .collect(),
        )
    }

    /// A group's own description: the first non-blank
    /// [`group_description`](ToolDefinition::group_description) of its commands. `None` for
    /// a single-command tool and a group without one.
    pub fn group_description(&self) -> Option<&str> {
        match self {
            Self::SingleCommand(_) => None,
            Self::MultiCommands(_, commands) => commands
                .iter()
                .filter_map(|command| command.group_description.as_deref())
                .find(|description| !description.trim().is_empty()),
        }
    }

    /// The tool's description as one text. For a group, its own
    /// [description](Self::group_description) when it has one, then one line per command:
    /// the first paragraph of the command's description (up to a blank line), its lines
    /// joined.
    pub fn description(&self) -> String {
        match self {
            Self::SingleCommand(def) => def.description.clone(),
            Self::MultiCommands(_, commands) => {
                let mut text = self
                    .group_description()
                    .map(|description| format!("{}\n\n", description.trim_end()))
                    .unwrap_or_default();
                text.push_str("Commands (choose one with the `command` argument):");
                for command in commands {
                    text.push_str("\n- ");
                    text.push_str(&command.name);
                    text.push_str(": ");
                    push_summary(&mut text, &command.description);
                }
                text
            }
        }
    }

    /// Renders the tool as one function.
    ///
    /// A [`SingleCommand`](Self::SingleCommand) tool's parameters are its argument schema,
    /// its root typed `object` (when it names no type, or a list holding `object`) and given
    /// `properties` (empty when it has none): the form every provider takes.
    ///
    /// A [`MultiCommands`](Self::MultiCommands) tool becomes an object whose `command`
    /// property (an `enum` of the command names) picks the command, and whose other
    /// properties are the union of the commands' properties, each described with the commands
    /// it belongs to. Providers reject a root-level `oneOf`/`anyOf`, so the exact
    /// per-command requirements are left to validation, which checks the chosen command's own
    /// schema.
    ///
    /// `returns` is the tool's [`result_schema`](Self::result_schema): for a group, any of its
    /// commands' when every command declares one (so the group is strict under
    /// [`StrictMode::WhenReturnsDeclared`](crate::provider::StrictMode::WhenReturnsDeclared),
    /// as a single command with `returns` is), `None` otherwise.
    pub fn function_spec(&self) -> ToolFunctionSpec {
        match self {
            Self::SingleCommand(def) => ToolFunctionSpec {
                name: def.name.clone(),
                description: def.description.clone(),
                parameters: object_root(def.arguments.to_value()),
                returns: def.returns.as_ref().map(Args::to_value),
            },
            Self::MultiCommands(name, commands) => ToolFunctionSpec {
                name: name.clone(),
                description: self.description(),
                parameters: multi_command_parameters(commands),
                returns: self.result_schema(),
            },
        }
    }
}

/// `schema` as a function's parameters: typed `object` at the root, with `properties`. A
/// root that names no type, or a list of types holding `object`, accepts every object a call
/// can carry, but OpenAI and Anthropic refuse it (and Gemini's subset has no untyped object);
/// OpenAI refuses an object schema without `properties`, as MCP servers write a tool without
/// arguments. Neither change lets through a call the schema refused.
fn object_root(mut parameters: Value) -> Value {
    if let Value::Object(root) = &mut parameters {
        let object_type = root
            .get("type")
            .is_none_or(|declared| type_names(declared, "object") == Some(true));
        if object_type {
            root.insert("type".to_owned(), json!("object"));
        }
        if root.get("type").is_some_and(|ty| ty == "object") && !root.contains_key("properties") {
            root.insert("properties".to_owned(), json!({}));
        }
    }
    parameters
}

/// Appends a command's summary, its description's first paragraph on one line: a doc
/// comment wrapped over several lines is one sentence the model must read whole (its first
/// line alone stopped mid-sentence).
fn push_summary(text: &mut String, description: &str) {
    let lines = description.trim_start().lines().map(str::trim);
    for (index, line) in lines.take_while(|line| !line.is_empty()).enumerate() {
        if index > 0 {
            text.push(' ');
        }
        text.push_str(line);
    }
}

/// The union schema of a command group (see [`Tool::function_spec`]).
fn multi_command_parameters(commands: &[ToolDefinition]) -> Value {
    let names: Vec<&str> = commands.iter().map(|c| c.name.as_str()).collect();
    let mut properties = Map::new();
    properties.insert(
        COMMAND_ARGUMENT.to_owned(),
        json!({
            "type": "string",
            "enum": names,
            "description": format!("The command to run: {}.", names.join(", ")),
        }),
    );

    // Property name → (its schema without description, descriptions seen, commands using it,
    // commands requiring it).
    struct Merged {
        variants: Vec<Value>,
        descriptions: Vec<String>,
        used_by: Vec<String>,
        required_by: Vec<String>,
    }
    let mut merged: Vec<(String, Merged)> = Vec::new();
    // Every command's definitions, for the `$ref`s of its properties (recursive types).
    let mut definitions = Map::new();
    for command in commands {
        let tree = command.arguments.tree();
        let schema: &Value = &tree;
        let renamed = merge_definitions(schema, &mut definitions);
        let required: Vec<&str> = schema
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let Some(props) = schema.get("properties").and_then(Value::as_object) else {
            continue;
        };
        for (prop, prop_schema) in props {
            if prop == COMMAND_ARGUMENT {
                continue;
            }
            let mut bare = prop_schema.clone();
            rename_refs(&mut bare, &renamed);
            let description = bare
                .as_object_mut()
                .and_then(|o| o.remove("description"))
                .and_then(|d| d.as_str().map(str::to_owned));
            let index = match merged.iter().position(|(name, _)| name == prop) {
                Some(i) => i,
                None => {
                    merged.push((
                        prop.clone(),
                        Merged {
                            variants: Vec::new(),
                            descriptions: Vec::new(),
                            used_by: Vec::new(),
                            required_by: Vec::new(),
                        },
                    ));
                    merged.len() - 1
                }
            };
            let entry = &mut merged[index].1;
            if !entry.variants.contains(&bare) {
                entry.variants.push(bare);
            }
            if let Some(d) = description
                && !entry.descriptions.contains(&d)
            {
                entry.descriptions.push(d);
            }
            entry.used_by.push(command.name.clone());
            if required.contains(&prop.as_str()) {
                entry.required_by.push(command.name.clone());
            }
        }
    }

    for (prop, entry) in merged {
        let mut schema = if entry.variants.len() == 1 {
            entry
                .variants
                .into_iter()
                .next()
                .unwrap_or(Value::Bool(true))
        } else {
            json!({ "anyOf": entry.variants })
        };
        let mut description = entry.descriptions.join(" / ");
        if !description.is_empty() {
            description.push(' ');
        }
        description.push_str(&format!("(used by: {}", entry.used_by.join(", ")));
        if !entry.required_by.is_empty() {
            description.push_str(&format!("; required by: {}", entry.required_by.join(", ")));
        }
        description.push(')');
        if let Some(obj) = schema.as_object_mut() {
            obj.insert("description".to_owned(), Value::String(description));
        }
        properties.insert(prop, schema);
    }

    let mut parameters = json!({
        "type": "object",
        "properties": properties,
        "required": [COMMAND_ARGUMENT],
        "additionalProperties": false,
    });
    if !definitions.is_empty() {
        parameters["$defs"] = Value::Object(definitions);
    }
    parameters
}

/// Adds the definitions of a command's `schema` to the group's `$defs`, and gives the
/// references to rename in the command's schemas. When every name the command defines under
/// `$defs` is free or holds the very same definition (commands sharing a type), they are
/// kept and shared; otherwise each taken name gets a new one (`Tree_2`), so that no
/// definition of the command is read as another's. `#/definitions/X` is always renamed: the
/// group keeps `$defs` only.
fn merge_definitions(
    schema: &Value,
    definitions: &mut Map<String, Value>,
) -> Vec<(String, String)> {
    let own: Vec<(&str, &String, &Value)> = DEFINITION_KEYWORDS
        .iter()
        .filter_map(|keyword| Some((*keyword, schema.get(*keyword)?.as_object()?)))
        .flat_map(|(keyword, own)| own.iter().map(move |(name, def)| (keyword, name, def)))
        .collect();
    let shared = own.iter().all(|(keyword, name, definition)| {
        *keyword == "$defs"
            && definitions
                .get(*name)
                .is_none_or(|taken| taken == *definition)
    });
    if shared {
        for (_, name, definition) in own {
            definitions
                .entry(name.clone())
                .or_insert_with(|| definition.clone());
        }
        return Vec::new();
    }
    let reference = |keyword: &str, name: &str| format!("#/{keyword}/{}", escape_pointer(name));
    let mut renamed = Vec::new();
    let mut added = Vec::new();
    for (keyword, name, definition) in own {
        let mut unique = name.clone();
        let mut n = 1;
        while definitions.contains_key(&unique) {
            n += 1;
            unique = format!("{name}_{n}");
        }
        if keyword != "$defs" || unique != *name {
            renamed.push((reference(keyword, name), reference("$defs", &unique)));
        }
        definitions.insert(unique.clone(), definition.clone());
        added.push(unique);
    }
    // The command's definitions refer to one another by the names they had.
    for name in &added {
        if let Some(definition) = definitions.get_mut(name) {
            rename_refs(definition, &renamed);
        }
    }
    renamed
}

/// Rewrites the `$ref`s of `schema` that point into a renamed definition (`from` → `to`).
fn rename_refs(schema: &mut Value, renamed: &[(String, String)]) {
    if renamed.is_empty() {
        return;
    }
    match schema {
        Value::Object(object) => {
            for (key, value) in object.iter_mut() {
                if key == "$ref"
                    && let Value::String(target) = value
                    && let Some((from, to)) = renamed.iter().find(|(from, _)| {
                        target
                            .strip_prefix(from.as_str())
                            .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
                    })
                {
                    *target = format!("{to}{}", &target[from.len()..]);
                } else {
                    rename_refs(value, renamed);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|item| rename_refs(item, renamed)),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Args;

    /// A command taking `tree`, whose schema refers to its own `$defs/Tree`.
    fn command(name: &str, label: &str) -> ToolDefinition {
        let tree = json!({"type": "object", "properties": {
            label: {"type": "string"},
            "children": {"type": "array", "items": {"$ref": "#/$defs/Tree"}}
        }, "required": [label]});
        let arguments = json!({"type": "object",
            "properties": {"tree": tree.clone()}, "required": ["tree"],
            "additionalProperties": false, "$defs": {"Tree": tree}});
        ToolDefinition::new(name, "A command.", Args::new(arguments))
    }

    #[test]
    fn a_group_s_parameters_keep_each_command_s_definitions() {
        // Two commands whose definitions share a name but differ.
        let group = Tool::group(
            "garden",
            "Trees.",
            vec![command("plant", "label"), command("graft", "name")],
        );
        let parameters = group.function_spec().parameters;
        let validator = jsonschema::validator_for(&parameters).expect("every `$ref` resolves");
        let child = |key: &str| json!({key: "b", "children": []});
        let tree = |key: &str| json!({"tree": {key: "a", "children": [child(key)]}});
        for (command, key) in [("plant", "label"), ("graft", "name")] {
            let mut call = tree(key);
            call["command"] = json!(command);
            assert!(validator.is_valid(&call), "{call}");
        }
        // Each command's children are its own trees: a `graft` child has a `name`.
        let mixed = json!({"command": "graft",
            "tree": {"name": "a", "children": [{"label": "b", "children": []}]}});
        assert!(!validator.is_valid(&mixed), "{parameters}");
        let names: Vec<&String> = parameters["$defs"].as_object().unwrap().keys().collect();
        assert_eq!(names, ["Tree", "Tree_2"]);

        // Commands sharing a type share its definition.
        let group = Tool::group(
            "garden",
            "Trees.",
            vec![command("plant", "label"), command("sow", "label")],
        );
        let parameters = group.function_spec().parameters;
        let names: Vec<&String> = parameters["$defs"].as_object().unwrap().keys().collect();
        assert_eq!(names, ["Tree"]);
        assert_eq!(
            parameters["properties"]["tree"]["properties"]["children"]["items"],
            json!({"$ref": "#/$defs/Tree"})
        );
    }

    #[test]
    fn a_group_lists_each_command_by_its_whole_first_paragraph() {
        // A doc comment wrapped over two lines, then a paragraph for the developer.
        let pause = ToolDefinition::new(
            "pause",
            "Pause a running sub-agent: its calls finish, and it makes no new model\n\
             call until resumed.\n\nKept in the parent's list.",
            Args::empty(),
        );
        let stop = ToolDefinition::new("stop", "\n  Stop a sub-agent.  \n", Args::empty());
        let group = Tool::group("agent", "Sub-agents.", vec![pause, stop]);
        assert_eq!(
            group.description(),
            "Sub-agents.\n\nCommands (choose one with the `command` argument):\n\
             - pause: Pause a running sub-agent: its calls finish, and it makes no new model \
             call until resumed.\n\
             - stop: Stop a sub-agent."
        );
    }
}
