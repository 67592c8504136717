//! [`ToolCommands`]: a command enum that describes and reads a command group's calls.

use crate::{FromToolArgs, ToolDefinition};

/// The commands of a [`Tool::MultiCommands`](crate::Tool::MultiCommands) tool as one enum,
/// implemented by `#[derive(ToolArgs)]` on an enum: each variant is a command (its name in
/// snake_case unless renamed), its fields are the command's arguments, and reading a call
/// ([`FromToolArgs`]) picks the variant named by the `command` argument.
pub trait ToolCommands: FromToolArgs {
    /// One definition per command, in the [default category](crate::DEFAULT_CATEGORY) (set
    /// another with [`ToolDefinition::with_category`]).
    fn command_definitions() -> Vec<ToolDefinition>;
}
