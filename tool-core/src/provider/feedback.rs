//! Errors written for the model: what went wrong, and what to send instead.

use std::borrow::Cow;

use crate::ToolError;
use crate::manager::suggestion::{closest_names, did_you_mean};

/// `text` cut after `max_chars` characters, marked with `…` when cut: what a message to the
/// model repeats of something long (a validation message, a description it wrote, an id of
/// any length).
///
/// ```
/// use toolsmith_core::provider::cut_to;
///
/// assert_eq!(cut_to("agent-1", 240), "agent-1");
/// assert_eq!(cut_to("ééééé", 2), "éé…");
/// ```
pub fn cut_to(text: &str, max_chars: usize) -> Cow<'_, str> {
    match text.char_indices().nth(max_chars) {
        None => Cow::Borrowed(text),
        Some((end, _)) => Cow::Owned(format!("{}…", &text[..end])),
    }
}

/// How many tool names an unknown-tool error lists.
const MAX_LISTED_TOOLS: usize = 20;

/// The text the model reads for a failed call, written so it can correct itself: argument
/// errors with their JSON paths and a request to call again, an unknown tool with the closest
/// names among `known_tools` and the list of tools it may call.
///
/// ```
/// use toolsmith_core::ToolError;
/// use toolsmith_core::provider::error_for_model;
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
            let mut text = if name.is_empty() {
                "The call did not name a tool.".to_owned()
            } else {
                let suggestions = closest_names(name, known_tools.iter().copied());
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
        ToolError::InvalidArguments { tool, .. } => {
            let mut text = error.to_string();
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
}
