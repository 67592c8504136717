//! Result schemas: a tool's `returns` schema checked when the tool is registered, compiled
//! when its first result is checked, and checked against its structured results before they
//! reach the model.

use serde_json::json;

use crate::schema::validation::CompiledSchema;
use crate::tool::nesting::check_depth;
use crate::{Args, Tool, ToolCallManager, ToolCallResult, ToolError, UserModelContent};

/// The compiled [`result_schema`](Tool::result_schema) of `tool`. `Err` says why it does
/// not compile.
pub(crate) fn compile_returns(tool: &Tool) -> Result<Option<CompiledSchema>, String> {
    match tool.result_schema() {
        Some(schema) => CompiledSchema::compile(&schema).map(Some),
        None => Ok(None),
    }
}

impl Tool {
    /// The schema every structured result of the tool matches, when it declares one: a
    /// single command's `returns`; for a group whose every command declares one, any of them
    /// (the result does not say which command ran), each branch given an `$id` of its own
    /// (unless it has one) so that its local references (`#`, `#/$defs/…`) resolve against
    /// itself rather than against the `anyOf` around it. `None` when a command declares none.
    ///
    /// ```
    /// use serde_json::json;
    /// use toolsmith::{Args, Tool, ToolDefinition};
    ///
    /// let count = ToolDefinition::new("count", "Counts.", Args::empty())
    ///     .with_returns(Args::new(json!({"type": "integer"})));
    /// assert_eq!(Tool::SingleCommand(count).result_schema(), Some(json!({"type": "integer"})));
    /// ```
    pub fn result_schema(&self) -> Option<serde_json::Value> {
        // `None` at the first command without one, before copying the rest.
        let mut schemas: Vec<serde_json::Value> = self
            .commands()
            .iter()
            .map(|command| command.returns.as_ref().map(Args::to_value))
            .collect::<Option<_>>()?;
        if schemas.is_empty() {
            return None;
        }
        Some(match self {
            Tool::SingleCommand(_) => schemas.swap_remove(0),
            Tool::MultiCommands(..) => {
                let branches: Vec<_> = schemas.into_iter().enumerate().map(own_resource).collect();
                json!({ "anyOf": branches })
            }
        })
    }
}

/// The `index`th command's `returns` schema as a branch of the group's `anyOf`, with an
/// `$id` of its own unless it has one.
fn own_resource((index, mut schema): (usize, serde_json::Value)) -> serde_json::Value {
    if let serde_json::Value::Object(object) = &mut schema
        && !object.contains_key("$id")
    {
        object.insert(
            "$id".to_owned(),
            format!("urn:toolsmith:returns:{index}").into(),
        );
    }
    schema
}

impl ToolCallManager {
    /// Checks a result of the tool `name` against the tool's `returns` schema.
    ///
    /// Only structured ([`UserModelContent::Json`], [`UserModelContent::JsonText`], and
    /// [`UserModelContent::JsonWithImages`]' value) results that do not report an error are
    /// checked; tools without a `returns` schema (and
    /// unknown names) pass, unless the result is nested deeper than
    /// [`MAX_JSON_DEPTH`](crate::MAX_JSON_DEPTH), which no tool's result may be (it could not
    /// be rendered; a `JsonText` never is). A mismatch is
    /// [`ToolError::Execution`] naming every violation with its JSON path: a tool that breaks
    /// its own contract has a bug, and its result must not reach the model as valid.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use toolsmith::{Args, FnTool, ToolArgs, ToolCallManager, ToolCallResult, scheme};
    /// use serde_json::json;
    ///
    /// let manager = ToolCallManager::new("demo");
    /// manager.register(Arc::new(FnTool::new("count", "Count things.", Args::empty(),
    ///     |_: ToolArgs<'_>| async { Ok(ToolCallResult::json(json!({"count": 3}))) })
    ///     .with_returns(Args::new(scheme::object().required("count", scheme::integer()).build()))))
    ///     .unwrap();
    ///
    /// assert!(manager.check_result("count", &ToolCallResult::json(json!({"count": 3}))).is_ok());
    /// let err = manager.check_result("count", &ToolCallResult::json(json!({"count": "three"}))).unwrap_err();
    /// assert_eq!(err.to_string(),
    ///     "Tool 'count' failed: its result does not match its `returns` schema: /count: \"three\" is not of type \"integer\"");
    /// ```
    pub fn check_result(&self, name: &str, result: &ToolCallResult) -> Result<(), ToolError> {
        if result.is_error() || !result.content.is_json() {
            return Ok(());
        }
        // A `JsonText` was checked to parse, and so to nest within the bound, when it was made.
        let value = match &result.content {
            UserModelContent::Json(value) => Some(value),
            UserModelContent::JsonWithImages(json) => Some(json.value()),
            _ => None,
        };
        if let Some(value) = value
            && let Err(too_deep) = check_depth(value)
        {
            return Err(ToolError::execution(
                name,
                format!("its result is {too_deep}"),
            ));
        }
        let Some(entry) = self.entry(name) else {
            return Ok(());
        };
        let returns = entry
            .returns_schema()
            .map_err(|reason| ToolError::execution(name, reason))?;
        let Some(returns) = returns else {
            return Ok(());
        };
        // Only now is a `JsonText` parsed: most tools have no `returns` schema.
        let Some(value) = result.content.json_value() else {
            return Ok(());
        };
        returns.verify(&value).map_err(|reason| {
            ToolError::execution(
                name,
                format!("its result does not match its `returns` schema: {reason}"),
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Args, ToolDefinition};
    use serde_json::Value;

    /// A group of two commands with these `returns` schemas.
    fn group(first: Value, second: Value) -> Tool {
        Tool::MultiCommands(
            "g".to_owned(),
            vec![
                ToolDefinition::new("one", "One.", Args::empty()).with_returns(Args::new(first)),
                ToolDefinition::new("two", "Two.", Args::empty()).with_returns(Args::new(second)),
            ],
        )
    }

    #[test]
    fn a_group_s_returns_keep_each_command_s_references() {
        // As `returns_schema` writes a recursive type: `$ref: "#"` to its own root.
        let tree = json!({"type": "object", "properties": {
            "label": {"type": "string"},
            "children": {"type": "array", "items": {"$ref": "#"}}
        }, "required": ["label", "children"]});
        // And a type holding one: `$defs` at its root.
        let forest = json!({"type": "object", "properties": {
            "trees": {"type": "array", "items": {"$ref": "#/$defs/Tree"}}
        }, "required": ["trees"], "$defs": {"Tree": {"type": "object", "properties": {
            "label": {"type": "string"},
            "children": {"type": "array", "items": {"$ref": "#/$defs/Tree"}}
        }, "required": ["label", "children"]}}});
        let compiled = compile_returns(&group(tree, forest))
            .expect("compiles")
            .expect("declared");
        let leaf = json!({"label": "b", "children": []});
        for valid in [
            json!({"label": "a", "children": [leaf.clone()]}),
            json!({"trees": [{"label": "a", "children": [leaf]}]}),
        ] {
            assert_eq!(compiled.verify(&valid), Ok(()), "{valid}");
        }
        // A child of a tree is a tree, not a forest.
        let wrong = json!({"label": "a", "children": [{"trees": []}]});
        assert!(compiled.verify(&wrong).is_err());
    }

    #[test]
    fn the_value_beside_images_is_checked() {
        use std::sync::Arc;

        use crate::{FnTool, Image, ToolArgs, scheme};

        let manager = ToolCallManager::new("s");
        let page = scheme::object().required("url", scheme::string()).build();
        let tool = FnTool::new(
            "browse",
            "Browse.",
            Args::empty(),
            |_: ToolArgs<'_>| async { Ok(ToolCallResult::empty()) },
        )
        .with_returns(Args::new(page));
        manager.register(Arc::new(tool)).unwrap();
        let shot = Image::from_bytes("image/png", b"\x89PNG\r\n\x1a\n").unwrap();
        let result = |value| ToolCallResult::json_with_images(value, [shot.clone()]);

        assert_eq!(
            manager.check_result("browse", &result(json!({"url": "https://example.com"}))),
            Ok(())
        );
        let err = manager
            .check_result("browse", &result(json!({"url": 3})))
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "Tool 'browse' failed: its result does not match its `returns` schema: /url: 3 is not of type \"string\""
        );
        // An error result is not checked, as a JSON one is not.
        let failed = ToolCallResult {
            error_detail: Some("no page".into()),
            ..result(json!({}))
        };
        assert_eq!(manager.check_result("browse", &failed), Ok(()));
    }
}
