//! [`Tool::check`]: every check registration makes of a definition on its own (not against
//! the tools already registered), for code that must know a tool will register before it
//! offers it (an MCP client leaves out a remote tool that would not).

use crate::manager::{RegistrationError, compile_arguments, compile_returns};
use crate::provider::cut_to;
use crate::{SHED_TOOL_NAME, Tool, check_name};

/// How much of a refused root `type` an error quotes (a list of names may be long).
const MAX_DECLARED_TYPE_CHARS: usize = 120;

impl Tool {
    /// Checks the definition as [`ToolCallManager::register`](crate::ToolCallManager::register)
    /// does before it looks at the registry: `register` runs this same check, so a definition
    /// it passes is refused only for a name already registered
    /// ([`RegistrationError::DuplicateTool`]).
    ///
    /// Refuses, with the error `register` gives: the name `shed`; a tool or command name
    /// providers reject (`^[a-zA-Z0-9_-]{1,64}$`); a command group without commands, or with
    /// two of one name; a schema nested deeper than [`MAX_JSON_DEPTH`](crate::MAX_JSON_DEPTH);
    /// an argument schema whose root `type` refuses objects (a call's arguments are one);
    /// an argument schema or a `returns` schema that does not compile as JSON Schema (a
    /// `pattern` that is not a regular expression, a `$ref` to another document, which is
    /// never fetched).
    ///
    /// It compiles the schemas and drops what it compiled, as registration does (a tool's
    /// first call compiles them again), so it costs what a registration costs.
    ///
    /// ```
    /// use toolsmith::{Args, RegistrationError, Tool, ToolDefinition};
    /// use serde_json::json;
    ///
    /// let fine = Tool::SingleCommand(ToolDefinition::new("find", "Find.", Args::empty()));
    /// assert_eq!(fine.check(), Ok(()));
    ///
    /// let broken = Tool::SingleCommand(ToolDefinition::new("find", "Find.",
    ///     Args::new(json!({"type": "object", "properties": {"q": {"pattern": "("}}}))));
    /// assert!(matches!(broken.check(), Err(RegistrationError::InvalidSchema { tool, .. }) if tool == "find"));
    /// ```
    pub fn check(&self) -> Result<(), RegistrationError> {
        let name = self.name();
        if name == SHED_TOOL_NAME {
            return Err(RegistrationError::ReservedName(name.to_owned()));
        }
        let invalid = |name: &str, reason| RegistrationError::InvalidName {
            name: name.to_owned(),
            reason,
        };
        check_name(name).map_err(|reason| invalid(name, reason))?;
        if let Tool::MultiCommands(group, commands) = self {
            if commands.is_empty() {
                return Err(RegistrationError::NoCommands(group.clone()));
            }
            for (i, command) in commands.iter().enumerate() {
                check_name(&command.name).map_err(|reason| invalid(&command.name, reason))?;
                if commands[..i].iter().any(|c| c.name == command.name) {
                    return Err(RegistrationError::DuplicateCommand {
                        tool: group.clone(),
                        command: command.name.clone(),
                    });
                }
            }
        }
        // Compiling walks a schema recursively: one nested too deep is refused first.
        if let Some(deep) = self.deep_schema() {
            let reason = deep.to_string();
            return Err(if deep.returns {
                RegistrationError::InvalidReturnsSchema {
                    tool: name.to_owned(),
                    reason,
                }
            } else {
                RegistrationError::InvalidSchema {
                    tool: name.to_owned(),
                    command: deep.command,
                    reason,
                }
            });
        }
        let group = matches!(self, Tool::MultiCommands(..));
        for command in self.commands() {
            // Read without keeping a tree: a compacted schema stays compact.
            if let Some(declared) = command.arguments.root_type_refusing_objects_text() {
                return Err(RegistrationError::ArgumentsNotAnObject {
                    tool: name.to_owned(),
                    command: group.then(|| command.name.clone()),
                    declared: cut_to(&declared, MAX_DECLARED_TYPE_CHARS).into_owned(),
                });
            }
        }
        // Compiled only to refuse a schema that does not compile now, with the error that
        // names it; the compiled forms are dropped (a registered tool compiles them on its
        // first call: `CompiledOnFirstUse`).
        compile_arguments(self)?;
        compile_returns(self)?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use serde_json::{Value, json};

    use crate::{
        Args, RegistrationError, Tool, ToolArguments, ToolCallManager, ToolCallResult,
        ToolDefinition, ToolError, ToolImpl,
    };

    /// A tool that is only its definition.
    struct Defined(Tool);

    #[async_trait::async_trait]
    impl ToolImpl for Defined {
        fn definition(&self) -> Tool {
            self.0.clone()
        }

        async fn execute(&self, _: ToolArguments) -> Result<ToolCallResult, ToolError> {
            Ok(ToolCallResult::text("ok"))
        }
    }

    fn single(name: &str, schema: Value) -> Tool {
        Tool::SingleCommand(ToolDefinition::new(name, "Do it.", Args::new(schema)))
    }

    fn returning(schema: Value) -> Tool {
        Tool::SingleCommand(
            ToolDefinition::new("count", "Count.", Args::empty()).with_returns(Args::new(schema)),
        )
    }

    fn command(name: &str, schema: Value) -> ToolDefinition {
        ToolDefinition::new(name, "Do it.", Args::new(schema))
    }

    /// `{"a": {"a": … }}`, `levels` deep, as a property of an object schema.
    fn nested(levels: usize) -> Value {
        let mut value = json!({"type": "string"});
        for _ in 0..levels {
            value = json!({ "a": value });
        }
        json!({"type": "object", "properties": {"deep": {"default": value}}})
    }

    #[test]
    fn the_check_refuses_what_register_refuses_with_the_same_error() {
        let object = || json!({"type": "object"});
        let bad = [
            single(crate::SHED_TOOL_NAME, object()),
            single("read file", object()),
            single("", object()),
            single(&"x".repeat(65), object()),
            Tool::MultiCommands("group".into(), vec![]),
            Tool::MultiCommands("group".into(), vec![command("bad name", object())]),
            Tool::MultiCommands(
                "group".into(),
                vec![command("add", object()), command("add", object())],
            ),
            single(
                "pattern",
                json!({"type": "object", "properties": {"q": {"pattern": "("}}}),
            ),
            single(
                "remote_ref",
                json!({"$ref": "https://example.invalid/schema.json"}),
            ),
            single("wrong_type", json!({"type": 12})),
            single("deep", nested(200)),
            Tool::MultiCommands(
                "group".into(),
                vec![
                    command("fine", object()),
                    command("broken", json!({"properties": {"q": {"pattern": "("}}})),
                ],
            ),
            returning(json!({"pattern": "("})),
            returning(json!({"$ref": "https://example.invalid/schema.json"})),
            returning(nested(200)),
        ];
        for definition in bad {
            let checked = definition.check();
            let manager = ToolCallManager::new("s");
            let registered = manager.register(Arc::new(Defined(definition.clone())));
            assert!(checked.is_err(), "the check passed {definition:?}");
            assert_eq!(checked, registered, "{definition:?}");
            assert!(manager.is_empty(), "{definition:?}");
        }
    }

    #[test]
    fn a_definition_the_check_passes_registers() {
        let good = [
            single(
                "find",
                json!({"type": "object", "properties": {"q": {"pattern": "^a+$"}}}),
            ),
            single("deep_enough", nested(100)),
            returning(json!({"$defs": {"N": {"type": "integer"}}, "$ref": "#/$defs/N"})),
            Tool::MultiCommands(
                "group".into(),
                vec![
                    command("add", json!({"type": "object"})),
                    command("remove", json!({})),
                ],
            ),
        ];
        for definition in good {
            assert_eq!(definition.check(), Ok(()), "{definition:?}");
            let manager = ToolCallManager::new("s");
            assert_eq!(
                manager.register(Arc::new(Defined(definition.clone()))),
                Ok(())
            );
            // Only the registry's contents refuse it now.
            assert_eq!(
                manager.register(Arc::new(Defined(definition.clone()))),
                Err(RegistrationError::DuplicateTool(
                    definition.name().to_owned()
                ))
            );
        }
    }
}
