//! [`ToolDefinition`]: one command as the model sees it, and its [`ToolAnnotations`].

use serde::{Deserialize, Serialize};

use crate::Args;

/// The category a tool gets when none is given.
pub const DEFAULT_CATEGORY: &str = "custom";

/// One command's descriptor: its name, what it does, and the schemas of its arguments and
/// result.
///
/// A [`Tool::SingleCommand`](crate::Tool::SingleCommand) has one; a
/// [`Tool::MultiCommands`](crate::Tool::MultiCommands) has one per command.
///
/// ```
/// use toolsmith::{Args, ToolDefinition, scheme};
///
/// let def = ToolDefinition::new(
///     "greet",
///     "Greet someone by name.",
///     Args::new(scheme::object().required("name", scheme::string().min_len(1)).build()),
/// )
/// .with_category("social");
/// assert_eq!(def.category, "social");
/// assert!(def.returns.is_none());
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolDefinition {
    /// The tool's (or command's) name, matching `^[a-zA-Z0-9_-]{1,64}$`.
    pub name: String,
    /// A coarse grouping: "read", "write", "shell", "memory", "custom", …
    pub category: String,
    /// What the tool does, written for the model: it decides when to call the tool from this.
    pub description: String,
    /// The JSON Schema of the arguments (always an object schema).
    pub arguments: Args,
    /// The JSON Schema of a structured result, if the tool declares one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub returns: Option<Args>,
    /// Behaviour hints (read-only, destructive, …) that steer execution.
    #[serde(default, skip_serializing_if = "ToolAnnotations::is_empty")]
    pub annotations: ToolAnnotations,
    /// For a command of a [`Tool::MultiCommands`](crate::Tool::MultiCommands) group, what the
    /// group as a whole is for: the group's description, which
    /// [`Tool::group`](crate::Tool::group) sets on each of its commands (`#[tool_fn]` takes it
    /// from the `impl` block's doc comment) and [`Tool::description`](crate::Tool::description)
    /// puts before the list of commands. `None` for a single-command tool.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group_description: Option<String>,
}

impl ToolDefinition {
    /// A definition in the [default category](DEFAULT_CATEGORY), with no result schema and no
    /// annotations.
    #[must_use]
    pub fn new(name: impl Into<String>, description: impl Into<String>, arguments: Args) -> Self {
        Self {
            name: name.into(),
            category: DEFAULT_CATEGORY.to_owned(),
            description: description.into(),
            arguments,
            returns: None,
            annotations: ToolAnnotations::default(),
            group_description: None,
        }
    }

    /// Sets the category.
    #[must_use]
    pub fn with_category(mut self, category: impl Into<String>) -> Self {
        self.category = category.into();
        self
    }

    /// Sets the result schema.
    #[must_use]
    pub fn with_returns(mut self, returns: Args) -> Self {
        self.returns = Some(returns);
        self
    }

    /// Sets the annotations.
    #[must_use]
    pub fn with_annotations(mut self, annotations: ToolAnnotations) -> Self {
        self.annotations = annotations;
        self
    }

    /// Sets the description of the group this command belongs to (see
    /// [`group_description`](Self::group_description); [`Tool::group`](crate::Tool::group)
    /// sets it on every command of a group).
    #[must_use]
    pub fn with_group_description(mut self, description: impl Into<String>) -> Self {
        self.group_description = Some(description.into());
        self
    }
}

/// Hints about what a tool does to the world, as MCP's tool annotations: they steer execution
/// (destructive tools run one at a time, only safe tools are retried by default) and are
/// passed on to clients that show them.
///
/// Every hint is optional; `None` means "not said".
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolAnnotations {
    /// The tool does not change its environment.
    #[serde(
        default,
        rename = "readOnlyHint",
        skip_serializing_if = "Option::is_none"
    )]
    pub read_only: Option<bool>,
    /// The tool may make changes that cannot be undone.
    #[serde(
        default,
        rename = "destructiveHint",
        skip_serializing_if = "Option::is_none"
    )]
    pub destructive: Option<bool>,
    /// Calling the tool again with the same arguments has no further effect.
    #[serde(
        default,
        rename = "idempotentHint",
        skip_serializing_if = "Option::is_none"
    )]
    pub idempotent: Option<bool>,
    /// The tool reaches outside the session (the web, other systems).
    #[serde(
        default,
        rename = "openWorldHint",
        skip_serializing_if = "Option::is_none"
    )]
    pub open_world: Option<bool>,
}

impl ToolAnnotations {
    /// True when no hint is given.
    pub fn is_empty(&self) -> bool {
        *self == Self::default()
    }

    /// Annotations of a tool that only reads.
    #[must_use]
    pub fn read_only() -> Self {
        Self {
            read_only: Some(true),
            destructive: Some(false),
            idempotent: Some(true),
            ..Self::default()
        }
    }
}
