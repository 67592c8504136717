//! The searchable text of a tool, field by field: what the lexical index weighs and what an
//! embedder is shown.

use serde_json::Value;

use crate::{DEFAULT_CATEGORY, Tool};

/// The fields of a tool that search looks at, each weighted on its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Field {
    /// The tool's name (and, for a group, its commands' names).
    Name = 0,
    /// What the tool does.
    Description = 1,
    /// Its category, unless it is the default one (which says nothing).
    Category = 2,
    /// The names of its arguments, nested ones included.
    ParameterName = 3,
    /// The descriptions (and enumerated values) of its arguments.
    ParameterDescription = 4,
}

/// The number of [`Field`]s.
pub(crate) const FIELD_COUNT: usize = 5;

/// How deep into nested argument schemas names and descriptions are collected.
const MAX_SCHEMA_DEPTH: usize = 6;

/// Calls `visit` with every piece of text of `tool`, tagged with its field.
pub(crate) fn for_each_field_text(tool: &Tool, mut visit: impl FnMut(Field, &str)) {
    visit(Field::Name, tool.name());
    if let Tool::MultiCommands(_, commands) = tool {
        for command in commands {
            visit(Field::Name, &command.name);
        }
    }
    if let Some(description) = tool.group_description() {
        visit(Field::Description, description);
    }
    for command in tool.commands() {
        visit(Field::Description, &command.description);
        if command.category != DEFAULT_CATEGORY {
            visit(Field::Category, &command.category);
        }
        visit_schema(&command.arguments.tree(), 0, &mut visit);
    }
}

fn visit_schema(schema: &Value, depth: usize, visit: &mut impl FnMut(Field, &str)) {
    if depth > MAX_SCHEMA_DEPTH {
        return;
    }
    let Some(object) = schema.as_object() else {
        return;
    };
    if let Some(properties) = object.get("properties").and_then(Value::as_object) {
        for (name, property) in properties {
            visit(Field::ParameterName, name);
            if let Some(description) = property.get("description").and_then(Value::as_str) {
                visit(Field::ParameterDescription, description);
            }
            if let Some(values) = property.get("enum").and_then(Value::as_array) {
                for value in values.iter().filter_map(Value::as_str) {
                    visit(Field::ParameterDescription, value);
                }
            }
            visit_schema(property, depth + 1, visit);
        }
    }
    if let Some(items) = object.get("items") {
        visit_schema(items, depth + 1, visit);
    }
    for combinator in ["anyOf", "oneOf", "allOf"] {
        if let Some(variants) = object.get(combinator).and_then(Value::as_array) {
            for variant in variants {
                visit_schema(variant, depth + 1, visit);
            }
        }
    }
}

/// The most characters of a tool's text an embedder is given: about 400 tokens, within the
/// context of the small embedding models (512 tokens; text-embeddings-inference and vLLM
/// refuse a longer input rather than cut it, and one such text failed its whole batch on
/// every search). The name and description come first, and say the most.
pub(crate) const MAX_EMBEDDED_CHARS: usize = 1_500;

/// The tool as one passage for an embedder: its name, description, category and arguments,
/// cut after [`MAX_EMBEDDED_CHARS`] characters.
pub(crate) fn embedding_text(tool: &Tool) -> String {
    let mut text = String::new();
    let mut last = None;
    for_each_field_text(tool, |field, piece| {
        let separator = match (last, field) {
            (None, _) => "",
            (Some(Field::Name), Field::Name) => ", ",
            (Some(Field::ParameterName), Field::ParameterDescription) => ": ",
            (_, Field::Description) => ". ",
            (_, Field::Category) => ". Category: ",
            (Some(Field::ParameterName | Field::ParameterDescription), Field::ParameterName) => {
                "; "
            }
            (_, Field::ParameterName) => ". Arguments: ",
            _ => ", ",
        };
        // A description usually ends with its own full stop.
        let separator = match separator.strip_prefix('.') {
            Some(rest) if text.ends_with('.') => rest,
            _ => separator,
        };
        text.push_str(separator);
        text.push_str(piece);
        last = Some(field);
    });
    if let Some((end, _)) = text.char_indices().nth(MAX_EMBEDDED_CHARS) {
        text.truncate(end);
    }
    text
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::{Args, ToolDefinition};

    fn weather() -> Tool {
        Tool::SingleCommand(
            ToolDefinition::new(
                "get_weather",
                "Current weather for a city.",
                Args::new(json!({
                    "type": "object",
                    "properties": {
                        "city": {"type": "string", "description": "The city name."},
                        "units": {"type": "string", "enum": ["celsius", "fahrenheit"]},
                        "options": {"type": "object", "properties": {
                            "hourly": {"type": "boolean", "description": "Hour by hour."}
                        }}
                    }
                })),
            )
            .with_category("weather"),
        )
    }

    #[test]
    fn collects_every_field_nested_arguments_included() {
        let mut seen = Vec::new();
        for_each_field_text(&weather(), |field, text| {
            seen.push((field, text.to_owned()))
        });
        let of = |f: Field| -> Vec<&str> {
            seen.iter()
                .filter(|(g, _)| *g == f)
                .map(|(_, t)| t.as_str())
                .collect()
        };
        assert_eq!(of(Field::Name), ["get_weather"]);
        assert_eq!(of(Field::Category), ["weather"]);
        assert_eq!(
            of(Field::ParameterName),
            ["city", "units", "options", "hourly"]
        );
        assert_eq!(
            of(Field::ParameterDescription),
            ["The city name.", "celsius", "fahrenheit", "Hour by hour."]
        );
    }

    #[test]
    fn a_group_s_own_description_is_searched() {
        let group = Tool::group(
            "lights",
            "The lights of the house.",
            vec![ToolDefinition::new("on", "Turn a light on.", Args::empty())],
        );
        let mut descriptions = Vec::new();
        for_each_field_text(&group, |field, text| {
            if field == Field::Description {
                descriptions.push(text.to_owned());
            }
        });
        assert_eq!(
            descriptions,
            ["The lights of the house.", "Turn a light on."]
        );
    }

    #[test]
    fn the_default_category_is_not_indexed() {
        let tool = Tool::SingleCommand(ToolDefinition::new("t", "d", Args::empty()));
        let mut categories = 0;
        for_each_field_text(&tool, |field, _| {
            categories += usize::from(field == Field::Category)
        });
        assert_eq!(categories, 0);
    }

    #[test]
    fn embedding_text_is_cut_at_a_character() {
        let long = "é".repeat(MAX_EMBEDDED_CHARS * 2);
        let tool = Tool::SingleCommand(ToolDefinition::new("t", &long, Args::empty()));
        let text = embedding_text(&tool);
        assert_eq!(text.chars().count(), MAX_EMBEDDED_CHARS);
        assert!(text.starts_with("t. éé"), "{text}");
    }

    #[test]
    fn embedding_text_reads_as_a_passage() {
        assert_eq!(
            embedding_text(&weather()),
            "get_weather. Current weather for a city. Category: weather. Arguments: city: The \
             city name.; units: celsius, fahrenheit; options; hourly: Hour by hour."
        );
    }
}
