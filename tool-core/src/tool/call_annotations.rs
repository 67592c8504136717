//! The annotations that apply to one call: its tool's, or for a command group the called
//! command's.

use crate::{COMMAND_ARGUMENT, Tool, ToolAnnotations, ToolArguments};

/// The annotations of the command a call with `arguments` runs; none when a group's command
/// is missing or unknown (such a call fails validation anyway).
pub(crate) fn call_annotations(definition: &Tool, arguments: &ToolArguments) -> ToolAnnotations {
    match definition {
        Tool::SingleCommand(def) => def.annotations,
        Tool::MultiCommands(..) => arguments
            .get(COMMAND_ARGUMENT)
            .and_then(|command| command.as_str())
            .and_then(|command| definition.command(command))
            .map(|def| def.annotations)
            .unwrap_or_default(),
    }
}
