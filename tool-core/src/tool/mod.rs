//! What a tool is: its definition ([`ToolDefinition`](crate::ToolDefinition), with the
//! schemas of its arguments and result), the [`ToolImpl`](crate::ToolImpl) trait it implements, the
//! arguments a call carries, the result it gives back and the errors a call can end in.
//!
//! [`Tool`]: the shape a tool presents to providers, and [`ToolFunctionSpec`], its
//! provider-neutral function rendering.

pub(crate) mod args;
pub(crate) mod arguments;
pub(crate) mod call_annotations;
pub(crate) mod call_context;
pub(crate) mod commands;
pub(crate) mod definition;
pub(crate) mod error;
pub(crate) mod fn_tool;
pub(crate) mod future_block;
pub(crate) mod json_text;
pub(crate) mod names;
pub(crate) mod nesting;
pub(crate) mod request;
pub(crate) mod result;
pub(crate) mod shared_value;
pub(crate) mod tool_impl;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use crate::ToolDefinition;

/// The name of the argument that selects a command of a [`Tool::MultiCommands`] tool.
pub const COMMAND_ARGUMENT: &str = "command";

/// A tool as providers are shown it: one command, or a group of commands under one name.
///
/// ```
/// use toolsmith_core::{Args, Tool, ToolDefinition, scheme};
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
            let deep = |args: &crate::Args| nesting::check_depth(args.schema()).is_err();
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
    /// use toolsmith_core::{Args, Tool, ToolDefinition};
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
    /// [description](Self::group_description) when it has one, then one line per command.
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
                    text.push_str(first_line(&command.description));
                }
                text
            }
        }
    }

    /// Renders the tool as one function.
    ///
    /// A [`MultiCommands`](Self::MultiCommands) tool becomes an object whose `command`
    /// property (an `enum` of the command names) picks the command, and whose other
    /// properties are the union of the commands' properties, each described with the commands
    /// it belongs to. Providers reject a root-level `oneOf`/`anyOf`, so the exact
    /// per-command requirements are left to validation, which checks the chosen command's own
    /// schema.
    pub fn function_spec(&self) -> ToolFunctionSpec {
        match self {
            Self::SingleCommand(def) => ToolFunctionSpec {
                name: def.name.clone(),
                description: def.description.clone(),
                parameters: def.arguments.schema().clone(),
                returns: def.returns.as_ref().map(|r| r.schema().clone()),
            },
            Self::MultiCommands(name, commands) => ToolFunctionSpec {
                name: name.clone(),
                description: self.description(),
                parameters: multi_command_parameters(commands),
                returns: None,
            },
        }
    }
}

fn first_line(text: &str) -> &str {
    text.lines().next().unwrap_or("").trim()
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
    for command in commands {
        let schema = command.arguments.schema();
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

    json!({
        "type": "object",
        "properties": properties,
        "required": [COMMAND_ARGUMENT],
        "additionalProperties": false,
    })
}
