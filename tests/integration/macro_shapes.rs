//! Macro inputs of every shape compile in a crate that depends only on the facade, and the
//! tools they generate can be built. (What the tools do is tested in `macros` and
//! `bound_tools`; these were trybuild "pass" cases, which made trybuild build every
//! dependency a second time with code generation.)

/// Function tools of every shape compile, depending only on the facade crate.
mod function_tools {
    use std::collections::HashMap;

    use toolsmith::{ToolCallResult, ToolError, ToolImpl, tool_fn};

    /// Adds two numbers.
    #[tool_fn(category = "math", read_only, idempotent)]
    pub async fn add(a: f64, b: f64) -> Result<f64, ToolError> {
        Ok(a + b)
    }

    /// Greets.
    #[tool_fn]
    fn greet(name: &str, title: Option<String>) -> String {
        format!("{} {name}", title.unwrap_or_default())
    }

    /// Counts on a blocking thread.
    #[tool_fn(blocking, timeout = "2m")]
    fn count(words: Vec<String>, weights: HashMap<String, f32>) -> usize {
        words.len() + weights.len()
    }

    /// Does nothing.
    #[tool_fn(name = "noop-tool", description = "Does nothing, overridden.")]
    async fn noop() {}

    /// Returns a result as is.
    #[tool_fn]
    async fn raw(value: serde_json::Value) -> ToolCallResult {
        ToolCallResult::json(value)
    }

    #[test]
    fn builds() {
        let tools: Vec<Box<dyn ToolImpl>> = vec![
            Box::new(Add),
            Box::new(Greet),
            Box::new(Count),
            Box::new(Noop),
            Box::new(Raw),
        ];
        let names: Vec<String> = tools
            .iter()
            .map(|tool| tool.definition().name().to_owned())
            .collect();
        assert_eq!(names, ["add", "greet", "count", "noop-tool", "raw"]);
    }
}

/// A command group with async, sync, renamed and skipped methods.
mod command_group {
    use std::sync::Mutex;

    use toolsmith::{ToolError, ToolImpl, tool_fn};

    #[derive(Default)]
    struct Todo {
        items: Mutex<Vec<String>>,
    }

    /// A to-do list.
    #[tool_fn(category = "productivity", timeout = "5s")]
    impl Todo {
        /// Add an item.
        async fn add(&self, item: String) -> Result<usize, ToolError> {
            let mut items = self.items.lock().unwrap();
            items.push(item);
            Ok(items.len())
        }

        /// List the items.
        #[command(name = "list", read_only)]
        fn all(&self) -> Vec<String> {
            self.items.lock().unwrap().clone()
        }

        #[command(skip)]
        fn clear(&self) {
            self.items.lock().unwrap().clear();
        }

        /// Count the items (the receiver written out).
        #[allow(clippy::needless_arbitrary_self_type)]
        fn count(self: &Self) -> usize {
            self.items.lock().unwrap().len()
        }

        /// Whether there are none (the receiver written with the type's name).
        #[allow(clippy::needless_arbitrary_self_type)]
        fn empty(self: &Todo) -> bool {
            self.items.lock().unwrap().is_empty()
        }

        fn new() -> Self {
            Self::default()
        }
    }

    #[test]
    fn builds() {
        let todo = Todo::new();
        todo.clear();
        let definition = todo.definition();
        assert_eq!(definition.name(), "todo");
        let names: Vec<&str> = definition
            .commands()
            .iter()
            .map(|c| c.name.as_str())
            .collect();
        assert_eq!(names, ["add", "list", "count", "empty"]);
    }
}

/// Derived argument structs and command enums.
mod derive_args {
    use serde_json::json;
    use toolsmith::{ArgsSchema, ToolArgs, ToolArguments, ToolCommands};

    fn default_limit() -> u32 {
        10
    }

    #[derive(ToolArgs)]
    pub struct Search {
        /// The query.
        pub query: String,
        #[arg(default = "default_limit")]
        pub limit: u32,
        #[arg(rename = "type", default)]
        pub kind: String,
    }

    #[derive(ToolArgs)]
    pub enum Shape {
        /// A circle.
        Circle { radius: f64 },
        /// A rectangle.
        #[arg(rename = "rect")]
        Rectangle { width: f64, height: f64 },
        /// Nothing.
        Empty,
    }

    #[derive(ToolArgs)]
    pub struct NoArguments;

    #[test]
    fn builds() {
        let _ = Search::args_schema();
        let _ = NoArguments::args_schema();
        assert_eq!(Shape::command_definitions().len(), 3);

        let arguments = ToolArguments::try_from(json!({"query": "q", "type": "t"})).unwrap();
        let search: Search = ToolArgs::new("search", &arguments).parse().unwrap();
        assert_eq!(
            (search.query, search.limit, search.kind),
            ("q".into(), 10, "t".into())
        );

        let arguments =
            ToolArguments::try_from(json!({"command": "rect", "width": 2, "height": 3})).unwrap();
        let area = match ToolArgs::new("shape", &arguments).parse().unwrap() {
            Shape::Circle { radius } => radius * radius * std::f64::consts::PI,
            Shape::Rectangle { width, height } => width * height,
            Shape::Empty => 0.0,
        };
        assert_eq!(area, 6.0);
    }
}

/// Tools that take values from the session.
mod ctx_tools {
    use std::sync::Arc;

    use toolsmith::{ContextSearch, Embedder, SessionParts, State, ToolConstructor, tool_fn};

    struct Config {
        greeting: String,
    }

    /// Searches with the session's context.
    #[tool_fn]
    async fn recall(
        #[ctx] context: Arc<dyn ContextSearch>,
        #[ctx] embedder: Option<Arc<dyn Embedder>>,
        #[ctx] config: State<Config>,
        #[ctx] parts: SessionParts,
        query: String,
    ) -> String {
        let _ = (context, embedder, parts);
        format!("{} {query}", config.greeting)
    }

    #[test]
    fn builds() {
        let constructors: Vec<Box<dyn ToolConstructor>> = vec![Recall.into()];
        assert_eq!(constructors[0].name(), "recall");
    }
}

/// Tools built from values with the generated `new`: `#[bind]` values, `#[ctx]` values.
mod bound_tools {
    use std::sync::Arc;

    use toolsmith::{MemoryAccess, ToolConstructor, ToolImpl, tool_fn};

    #[derive(Clone)]
    struct Limits {
        max: usize,
    }

    /// Cuts a text to the limit.
    #[tool_fn(category = "text")]
    fn cut(#[bind] limits: Limits, #[bind] prefix: Arc<str>, text: String) -> String {
        format!("{prefix}{}", &text[..text.len().min(limits.max)])
    }

    /// Counts the facts.
    #[tool_fn]
    async fn facts(#[ctx] memory: Arc<dyn MemoryAccess>) -> usize {
        let _ = memory;
        0
    }

    fn ready(tool: impl ToolImpl + Clone + 'static) -> Box<dyn ToolConstructor> {
        tool.clone().into()
    }

    #[test]
    fn builds() {
        let cut = ready(Cut::new(Limits { max: 3 }, Arc::from(">")));
        assert!(!cut.needs_session());
        // A `#[ctx]` tool is still a session constructor, and can be built from a value too.
        let from_session: Box<dyn ToolConstructor> = Facts.into();
        assert!(from_session.needs_session());
        let _ = |memory: Arc<dyn MemoryAccess>| ready(Facts::new(memory));
    }
}

/// `struct_name` names the generated struct, for a function whose PascalCase name is taken.
mod struct_names {
    use std::sync::Arc;

    use toolsmith::{ToolConstructor, ToolImpl, tool_fn};

    /// The user's own type: `#[tool_fn] fn constrained` would generate a second `Constrained`.
    #[derive(Debug, Clone, Default)]
    pub struct Constrained {
        pub limit: u32,
    }

    /// Checks that a value stays under the limit.
    #[tool_fn(struct_name = "ConstrainedTool")]
    fn constrained(value: u32) -> bool {
        value < Constrained { limit: 10 }.limit
    }

    /// With `#[ctx]` values too.
    #[tool_fn(struct_name = "RecallTool")]
    async fn recall(#[ctx] parts: toolsmith::SessionParts, query: String) -> String {
        let _ = parts;
        query
    }

    #[test]
    fn builds() {
        let tool: Arc<dyn ToolImpl> = Arc::new(ConstrainedTool);
        assert_eq!(tool.definition().name(), "constrained");
        let constructor: Box<dyn ToolConstructor> = RecallTool.into();
        assert_eq!(constructor.name(), "recall");
        assert_eq!(Constrained::default().limit, 0);
    }
}

/// Descriptions a macro writes (`#[doc = include_str!(..)]`), which the model sees as written.
mod docs_written_by_macros {
    use toolsmith::{Tool, ToolImpl, tool_fn};

    #[doc = include_str!("../fixtures/docs/search_notes.md")]
    #[tool_fn]
    fn search_notes(
        /// What to look for.
        query: String,
        limit: Option<u32>,
    ) -> Vec<String> {
        vec![query; limit.unwrap_or(1) as usize]
    }

    /// Counts the notes.
    ///
    #[doc = concat!("At most ", stringify!(100), " are counted.")]
    #[tool_fn]
    fn count_notes() -> u32 {
        0
    }

    struct Notes;

    #[doc = include_str!("../fixtures/docs/notes_group.md")]
    #[tool_fn(name = "notes")]
    impl Notes {
        #[doc = include_str!("../fixtures/docs/search_notes.md")]
        fn find(&self, query: String) -> Vec<String> {
            vec![query]
        }
    }

    #[test]
    fn the_model_sees_the_text_the_macro_wrote() {
        let file = include_str!("../fixtures/docs/search_notes.md").trim();
        let spec = SearchNotes.definition().function_spec();
        assert_eq!(spec.description, file);
        // The parameters' own docs are still read.
        assert_eq!(
            spec.parameters["properties"]["query"]["description"],
            "What to look for."
        );
        assert_eq!(
            CountNotes.definition().function_spec().description,
            "Counts the notes.\n\nAt most 100 are counted."
        );
        let Tool::MultiCommands(_, commands) = Notes.definition() else {
            panic!("a group");
        };
        assert_eq!(commands[0].description, file);
        assert_eq!(
            Notes.definition().group_description(),
            Some("Notes kept between sessions.")
        );
    }
}
