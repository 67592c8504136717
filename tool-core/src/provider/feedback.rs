//! Errors written for the model: what went wrong, and what to send instead.

use crate::ToolError;
use crate::manager::suggestion::{closest_names, did_you_mean};
use crate::tool::echo::echoed;

/// How many tool names an unknown-tool error lists.
const MAX_LISTED_TOOLS: usize = 20;

/// The text the model reads for a failed call, written so it can correct itself: argument
/// errors with their JSON paths and a request to call again, an unknown tool with the closest
/// names among `known_tools` and the list of tools it may call. A name the model wrote is
/// repeated cut after 240 characters (no tool's name is longer than 64), as every text the
/// model wrote is ([`cut_to`](super::cut_to)).
///
/// ```
/// use toolsmith::ToolError;
/// use toolsmith::provider::error_for_model;
///
/// let text = error_for_model(&ToolError::UnknownTool("raed_file".into()), &["read_file", "write_file"]);
/// assert_eq!(text, "Unknown tool 'raed_file': did you mean 'read_file'? The tools you can call are: read_file, write_file.");
///
/// let text = error_for_model(&ToolError::invalid_arguments("add", "/a: \"x\" is not of type \"integer\""), &[]);
/// assert_eq!(text, "Invalid arguments for tool 'add': /a: \"x\" is not of type \"integer\". Correct the arguments and call 'add' again.");
/// ```
pub fn error_for_model(error: &ToolError, known_tools: &[&str]) -> String {
    match error {
        ToolError::UnknownTool(name) => {
            let name = echoed(name);
            let mut text = if name.is_empty() {
                "The call did not name a tool.".to_owned()
            } else {
                let suggestions = closest_names(&name, known_tools.iter().copied());
                if suggestions.is_empty() {
                    format!("Unknown tool '{name}'.")
                } else {
                    format!("Unknown tool '{name}': {}", did_you_mean(&suggestions))
                }
            };
            if !known_tools.is_empty() {
                let listed: Vec<&str> =
                    known_tools.iter().take(MAX_LISTED_TOOLS).copied().collect();
                text.push_str(" The tools you can call are: ");
                text.push_str(&listed.join(", "));
                if known_tools.len() > MAX_LISTED_TOOLS {
                    text.push_str(&format!(
                        " and {} more",
                        known_tools.len() - MAX_LISTED_TOOLS
                    ));
                }
                text.push('.');
            }
            text
        }
        ToolError::InvalidArguments { tool, reason } => {
            let tool = echoed(tool).into_owned();
            let reason = reason.clone();
            let mut text = ToolError::InvalidArguments {
                tool: tool.clone(),
                reason,
            }
            .to_string();
            if !text.ends_with(['.', '?']) {
                text.push('.');
            }
            text.push_str(&format!(" Correct the arguments and call '{tool}' again."));
            text
        }
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tool::echo::{MAX_ECHOED_CHARS, cut_to};

    #[test]
    fn unknown_tools_list_what_exists() {
        assert_eq!(
            error_for_model(&ToolError::UnknownTool(String::new()), &["a"]),
            "The call did not name a tool. The tools you can call are: a."
        );
        assert_eq!(
            error_for_model(&ToolError::UnknownTool("zzz".into()), &[]),
            "Unknown tool 'zzz'."
        );
        let many: Vec<String> = (0..25).map(|i| format!("tool{i}")).collect();
        let many: Vec<&str> = many.iter().map(String::as_str).collect();
        let text = error_for_model(&ToolError::UnknownTool("x".into()), &many);
        assert!(text.ends_with("tool19 and 5 more."), "{text}");
        assert_eq!(
            error_for_model(&ToolError::timeout("slow"), &[]),
            "Tool 'slow' timed out"
        );
    }

    #[test]
    fn a_long_name_the_model_wrote_is_repeated_cut() {
        let long = "x".repeat(100_000);
        let cut = format!("'{}…'", "x".repeat(MAX_ECHOED_CHARS));
        let known = ["read_file", "write_file"];
        for error in [
            ToolError::UnknownTool(long.clone()),
            ToolError::invalid_arguments(long.clone(), "the arguments are not valid JSON"),
        ] {
            let text = error_for_model(&error, &known);
            assert!(
                text.chars().count() < 2 * MAX_ECHOED_CHARS + 200,
                "{}",
                text.len()
            );
            assert!(text.contains(&cut), "{}", cut_to(&text, 300));
        }
        let text = error_for_model(
            &ToolError::invalid_arguments(long, "the arguments are not valid JSON"),
            &[],
        );
        assert!(
            text.contains("…': the arguments are not valid JSON. Correct the arguments and call '")
                && text.ends_with("…' again."),
            "{}",
            cut_to(&text, 300)
        );
        // What a long name begins with is still suggested from.
        let text = error_for_model(
            &ToolError::UnknownTool(format!("read_file{}", "x".repeat(100_000))),
            &known,
        );
        assert!(
            text.contains("did you mean 'read_file'?"),
            "{}",
            cut_to(&text, 300)
        );
        // Short names are quoted as they are.
        assert_eq!(
            error_for_model(&ToolError::invalid_arguments("add", "/a: bad"), &[]),
            "Invalid arguments for tool 'add': /a: bad. Correct the arguments and call 'add' again."
        );
    }
}
