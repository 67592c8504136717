//! [`RenderedSummary`]: a registered tool's summary as `shed` writes it, rendered by the
//! first `shed` call that returns the tool and kept with its registration.
//!
//! Writing a summary copies the tool's argument schema; a `shed` result of ten tools that
//! builds a `serde_json::Value` copies ten schemas into a new tree and frees it again, which
//! is most of what a call costs beyond its search. Rendered once, a summary is only copied
//! as bytes into each result's text ([`JsonText`](crate::JsonText)). It belongs to the
//! registration, so a tool registered again under the same name starts with none (a
//! registration changed in place keeps it: only its time limit changes, not its
//! definition).

use std::borrow::Cow;
use std::sync::OnceLock;

use serde::Serialize;
use serde_json::Value;

use crate::Tool;
use crate::tool::nesting::nests_within;

/// The deepest a summary may nest for a `shed` result holding it (`{"tools": [ … ]}`, two
/// levels more) to nest no deeper than serde_json reads back (127 levels).
const MAX_SUMMARY_DEPTH: usize = 125;

/// A tool's summary as JSON text, rendered on first use; `None` once rendered when it nests
/// deeper than [`MAX_SUMMARY_DEPTH`] (its schema is nearly as deep as registration allows).
#[derive(Debug, Clone, Default)]
pub(crate) struct RenderedSummary(OnceLock<Option<Box<str>>>);

impl RenderedSummary {
    /// The JSON text of [`ToolSummary::of`](super::ToolSummary::of)`(tool)`, exactly as
    /// serializing it writes it; `None` when it nests too deep for a result written as text.
    /// `tool` must be the definition of the registration this belongs to.
    pub(crate) fn text(&self, tool: &Tool) -> Option<&str> {
        self.0.get_or_init(|| render(tool)).as_deref()
    }
}

/// The text of `tool`'s summary, written from its definition (a single command's schema is
/// borrowed, not copied); `None` when it would nest deeper than [`MAX_SUMMARY_DEPTH`].
fn render(tool: &Tool) -> Option<Box<str>> {
    let summary = SummaryView::of(tool);
    // The summary is one level around its arguments.
    if !nests_within(&summary.arguments, MAX_SUMMARY_DEPTH - 1) {
        return None;
    }
    let text =
        serde_json::to_string(&summary).expect("a summary (strings and a JSON value) serializes");
    Some(text.into_boxed_str())
}

/// [`ToolSummary`](super::ToolSummary) borrowing from the definition: the same fields, in
/// the same order, so it serializes alike.
#[derive(Serialize)]
struct SummaryView<'a> {
    name: &'a str,
    description: Cow<'a, str>,
    category: &'a str,
    arguments: Cow<'a, Value>,
}

impl<'a> SummaryView<'a> {
    /// What [`ToolSummary::of`](super::ToolSummary::of) makes of `tool`: a single command
    /// as it is; a group as its function spec makes it.
    fn of(tool: &'a Tool) -> Self {
        let (description, arguments) = match tool {
            Tool::SingleCommand(definition) => (
                Cow::Borrowed(definition.description.as_str()),
                definition.arguments.tree(),
            ),
            Tool::MultiCommands(..) => {
                let spec = tool.function_spec();
                (Cow::Owned(spec.description), Cow::Owned(spec.parameters))
            }
        };
        Self {
            name: tool.name(),
            description,
            category: tool.category(),
            arguments,
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::{MAX_SUMMARY_DEPTH, RenderedSummary};
    use crate::shed::ToolSummary;
    use crate::tool::nesting::testing::nested;
    use crate::{Args, Tool, ToolDefinition};

    fn tool_with_schema_depth(levels: usize) -> Tool {
        // An object schema whose one property nests `levels - 2` arrays.
        let schema = json!({"type": "object", "properties": {"x": nested(levels - 2)}});
        Tool::SingleCommand(ToolDefinition::new("t", "A tool.", Args::new(schema)))
    }

    #[test]
    fn renders_the_summary_once() {
        let tool = tool_with_schema_depth(3);
        let summary = RenderedSummary::default();
        let text = summary.text(&tool).unwrap();
        assert_eq!(
            text,
            serde_json::to_string(&ToolSummary::of(&tool)).unwrap()
        );
        // Kept: the same text, not rendered again.
        assert!(std::ptr::eq(text, summary.text(&tool).unwrap()));
    }

    #[test]
    fn a_group_is_summarised_as_its_function_spec() {
        let command = |name: &str| {
            ToolDefinition::new(name, format!("{name} a note."), Args::empty())
                .with_category("notes")
        };
        let group = Tool::group("notes", "Notes.", vec![command("add"), command("remove")]);
        let text = RenderedSummary::default().text(&group).unwrap().to_owned();
        assert_eq!(
            text,
            serde_json::to_string(&ToolSummary::of(&group)).unwrap()
        );
        let summary: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(summary["category"], json!("notes"));
    }

    #[test]
    fn a_summary_too_deep_for_text_is_none() {
        // The summary adds one level (`arguments`) to its schema.
        let fits = tool_with_schema_depth(MAX_SUMMARY_DEPTH - 1);
        assert!(RenderedSummary::default().text(&fits).is_some());
        let deep = tool_with_schema_depth(MAX_SUMMARY_DEPTH);
        assert!(RenderedSummary::default().text(&deep).is_none());
    }
}
