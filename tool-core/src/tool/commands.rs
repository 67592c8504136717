//! [`ToolCommands`]: a command enum that describes and reads a command group's calls; and
//! [`ToolShape`]: the tool a function taking its whole arguments as one type makes.

use crate::{ArgsSchema, FromToolArgs, Tool, ToolDefinition};

/// The commands of a [`Tool::MultiCommands`](crate::Tool::MultiCommands) tool as one enum,
/// implemented by `#[derive(ToolArgs)]` on an enum: each variant is a command (its name in
/// snake_case unless renamed), its fields are the command's arguments, and reading a call
/// ([`FromToolArgs`]) picks the variant named by the `command` argument.
pub trait ToolCommands: FromToolArgs {
    /// One definition per command, in the [default category](crate::DEFAULT_CATEGORY) (set
    /// another with [`ToolDefinition::with_category`]), with the annotations the variant gives
    /// (`#[command(read_only)]`, ..; none when it gives none).
    fn command_definitions() -> Vec<ToolDefinition>;
}

/// The tool a `#[tool_fn]` function makes when it takes its whole arguments as one value of
/// this type (a parameter marked `#[args]`): the type, not the macro, knows whether it is one
/// object of arguments or a list of commands.
///
/// Implemented for every type with an [`ArgsSchema`] (`#[derive(ToolArgs)]` on a struct): one
/// command whose arguments are that schema. `#[derive(ToolArgs)]` on an enum implements it
/// too: a command group ([`Tool::MultiCommands`]), one command per variant as
/// [`ToolCommands::command_definitions`] gives them. A command enum whose [`ToolCommands`] is
/// written by hand implements it the same way, by hand.
///
/// ```
/// use toolsmith::{Args, Tool, ToolArgs, ToolDefinition, ToolShape};
///
/// #[derive(ToolArgs)]
/// enum Lamp {
///     /// Switch it on.
///     On,
///     /// Switch it off.
///     Off,
/// }
///
/// let function = ToolDefinition::new("lamp", "The desk lamp.", Args::empty()).with_category("home");
/// let tool = <Lamp as ToolShape>::tool(function);
/// assert_eq!(tool.name(), "lamp");
/// assert_eq!(tool.group_description(), Some("The desk lamp."));
/// let commands: Vec<_> = tool.commands().iter().map(|c| (c.name.as_str(), c.category.as_str())).collect();
/// assert_eq!(commands, [("on", "home"), ("off", "home")]);
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a tool's whole arguments: derive `ToolArgs` on it",
    label = "this type needs `#[derive(ToolArgs)]` (on a struct with named fields, or an enum of commands)",
    note = "`#[derive(toolsmith::ToolArgs)]` on a struct makes its fields the tool's arguments; on an enum, its variants the commands of a command group, each variant's fields that command's arguments",
    note = "a type deriving `serde::Deserialize` and `schemars::JsonSchema` is one argument, not the whole arguments: a `#[tool_fn]` parameter without `#[args]` takes it so"
)]
pub trait ToolShape {
    /// The tool of a function whose definition is `function`: its name, description,
    /// category, result schema and annotations are the tool's (for a group: its name, its
    /// description, and each command's category, result schema and annotations where the
    /// command sets none); its `arguments` are not used, the type's own replace them.
    fn tool(function: ToolDefinition) -> Tool;
}

// Not offered in errors as "a type implementing `ArgsSchema` would do": the message of
// `ToolShape` itself says what to derive for both shapes.
#[diagnostic::do_not_recommend]
impl<T: ArgsSchema> ToolShape for T {
    fn tool(function: ToolDefinition) -> Tool {
        crate::generated::call::single_command(function, T::args_schema())
    }
}
