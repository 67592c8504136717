//! `toolsmith call NAME JSON`: one call, run here (`-` for JSON: read from stdin).

use toolsmith::provider::error_for_model;
use toolsmith::{ToolArguments, ToolError, value_from_str};

use crate::cli::CallArgs;
use crate::from_stdin::{self, STDIN};
use crate::presets;
use crate::{Failure, output};

/// Runs the call: its result on stdout; a tool error on stderr, as a failure. Arguments
/// that cannot be read and a name the preset has no tool by are usage errors: the command
/// line is wrong, not the tool.
pub async fn run(args: CallArgs) -> Result<(), Failure> {
    let manager = presets::manager(&args.preset)?;
    let name = &args.name;
    let json = if args.json == STDIN {
        from_stdin::read(format!("the arguments of '{name}'")).await?
    } else {
        args.json
    };
    // Read as a model's arguments are: 16 MiB of stdin would otherwise be a `Value` of
    // some 40 times its size.
    let value = value_from_str(&json).map_err(|error| {
        Failure::usage(format!("the arguments of '{name}' are not JSON: {error}"))
    })?;
    let arguments = ToolArguments::try_from(value).map_err(|error| {
        Failure::usage(format!("the arguments of '{name}' are not usable: {error}"))
    })?;
    let result = match manager.execute_call(name, &arguments).await {
        Ok(result) => result,
        // A mistyped name: say which names are close and which the preset has.
        Err(error @ ToolError::UnknownTool(_)) => {
            let names = manager.names();
            let names: Vec<&str> = names.iter().map(String::as_str).collect();
            return Err(Failure::usage(error_for_model(&error, &names)));
        }
        Err(error) => return Err(error.into()),
    };
    manager.check_result(&args.name, &result)?;
    if result.is_error() {
        return Err(Failure::new(format!(
            "tool '{}' reported an error: {}",
            args.name,
            result.content.to_text()
        )));
    }
    output::line(output::escaped_lines(&result.content.to_text()))
}
