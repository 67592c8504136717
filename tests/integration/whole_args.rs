//! `#[args]`: a `#[tool_fn]` parameter whose `#[derive(ToolArgs)]` type is the whole
//! arguments, run through `ToolCallManager::execute_one`.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use schemars::JsonSchema;
use serde::Serialize;
use serde_json::json;
use toolsmith::{
    ArgsSchema, State, Tool, ToolArgs, ToolArguments, ToolCallContext, ToolConstructor, ToolError,
    ToolErrorKind, ToolImpl, UserModelContent, tool_fn,
};

use crate::support::json_calls::call;
use crate::support::registered::manager_with;

fn max_hits() -> u32 {
    10
}

/// A search, as one struct: renamed, defaulted and optional fields.
#[derive(ToolArgs, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
struct SearchArgs {
    /// What to look for.
    search_text: String,
    /// At most this many hits.
    #[serde(default = "max_hits")]
    max_hits: u32,
    /// Only hits with this tag.
    only_tag: Option<String>,
    /// The ids to leave out.
    #[arg(default)]
    skip_ids: Vec<u64>,
}

static SEARCH_RUNS: AtomicUsize = AtomicUsize::new(0);

/// Held by each test that calls `search`: `SEARCH_RUNS` counts for the whole process, whose
/// tests run in parallel, so a test counting runs must not see another's.
static SEARCH_CALLS: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// Searches the notes.
#[tool_fn(category = "search", read_only)]
async fn search(#[args] args: SearchArgs) -> String {
    SEARCH_RUNS.fetch_add(1, Ordering::SeqCst);
    format!(
        "{} {} {:?} {:?}",
        args.search_text, args.max_hits, args.only_tag, args.skip_ids
    )
}

#[tokio::test]
async fn the_schema_is_the_types_and_a_call_reads_the_whole_arguments() {
    let definition = Search.definition();
    let Tool::SingleCommand(command) = &definition else {
        panic!("a single command")
    };
    assert_eq!(command.arguments, SearchArgs::args_schema());
    assert_eq!(command.category, "search");
    assert_eq!(command.annotations.read_only, Some(true));
    assert_eq!(
        command.arguments.property_names().collect::<Vec<_>>(),
        ["searchText", "maxHits", "onlyTag", "skipIds"]
    );

    let _calls = SEARCH_CALLS.lock().await;
    let manager = manager_with(vec![Arc::new(Search)]);
    // Lenient as `ToolArgs::parse`: a number as a string; the defaults where left out.
    let result = manager
        .execute_one(&call(
            "search",
            json!({"searchText": "tides", "maxHits": "5"}),
        ))
        .await
        .unwrap();
    assert_eq!(result.content.to_text(), "tides 5 None []");
    let result = manager
        .execute_one(&call(
            "search",
            json!({"searchText": "moon", "onlyTag": "sky", "skipIds": [1, 2]}),
        ))
        .await
        .unwrap();
    assert_eq!(result.content.to_text(), "moon 10 Some(\"sky\") [1, 2]");
}

#[tokio::test]
async fn bad_arguments_are_refused_before_the_call_naming_their_path() {
    let _calls = SEARCH_CALLS.lock().await;
    let manager = manager_with(vec![Arc::new(Search)]);
    let runs = SEARCH_RUNS.load(Ordering::SeqCst);

    let err = manager
        .execute_one(&call(
            "search",
            json!({"searchText": "tides", "skipIds": [1, "two"]}),
        ))
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ToolErrorKind::InvalidArguments);
    assert!(err.to_string().contains("/skipIds/1"), "{err}");

    let err = manager
        .execute_one(&call("search", json!({"maxHits": 3})))
        .await
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "Invalid arguments for tool 'search': \"searchText\" is a required property"
    );

    // The field's Rust name is not the argument's: refused as any unknown argument.
    let err = manager
        .execute_one(&call("search", json!({"search_text": "tides"})))
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ToolErrorKind::InvalidArguments);
    assert!(err.to_string().contains("search_text"), "{err}");

    assert_eq!(SEARCH_RUNS.load(Ordering::SeqCst), runs);
}

/// The reading itself, without the manager's validation in front of it: the same error as
/// `ToolArgs::parse` gives, naming the argument.
#[tokio::test]
async fn the_reading_is_tool_args_parse() {
    let arguments = ToolArguments::try_from(json!({"searchText": "tides", "maxHits": "many"}))
        .expect("an object");
    let expected = ToolArgs::new("search", &arguments)
        .parse::<SearchArgs>()
        .unwrap_err();
    let err = Search.execute(arguments).await.unwrap_err();
    assert_eq!(err.to_string(), expected.to_string());
    assert!(err.to_string().contains("maxHits"), "{err}");

    // A sync tool answers the misread at once, the same way.
    let arguments =
        ToolArguments::try_from(json!({"width": "wide", "height": 1})).expect("an object");
    let expected = ToolArgs::new("measure", &arguments)
        .parse::<Rectangle>()
        .unwrap_err();
    let err = Measure.execute(arguments).await.unwrap_err();
    assert_eq!(err.to_string(), expected.to_string());
    assert!(err.to_string().contains("width"), "{err}");
}

/// The size of a rectangle.
#[derive(ToolArgs, Debug)]
struct Rectangle {
    /// Its width.
    width: f64,
    /// Its height.
    height: f64,
}

/// What `measure` answers.
#[derive(Serialize, JsonSchema)]
struct Measures {
    area: f64,
    perimeter: f64,
}

/// Measures a rectangle.
#[tool_fn]
fn measure(#[args] rectangle: Rectangle) -> Result<Measures, ToolError> {
    if rectangle.width < 0.0 || rectangle.height < 0.0 {
        return Err(ToolError::execution("measure", "a side is negative"));
    }
    Ok(Measures {
        area: rectangle.width * rectangle.height,
        perimeter: 2.0 * (rectangle.width + rectangle.height),
    })
}

/// Measures a rectangle, on the blocking pool.
#[tool_fn(blocking, timeout = "5s")]
fn measure_slowly(#[args] rectangle: Rectangle) -> f64 {
    rectangle.width * rectangle.height
}

#[tokio::test]
async fn sync_and_blocking_tools_with_results() {
    let tool = Measure.definition();
    let command = &tool.commands()[0];
    assert_eq!(command.arguments, Rectangle::args_schema());
    let returns = command.returns.as_ref().expect("a result schema");
    assert!(returns.property_names().eq(["area", "perimeter"]));

    let manager = manager_with(vec![Arc::new(Measure), Arc::new(MeasureSlowly)]);
    let result = manager
        .execute_one(&call("measure", json!({"width": 2, "height": "3"})))
        .await
        .unwrap();
    assert_eq!(
        result.content,
        UserModelContent::Json(json!({"area": 6.0, "perimeter": 10.0}))
    );
    let err = manager
        .execute_one(&call("measure", json!({"width": -2, "height": 3})))
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ToolErrorKind::Execution);
    let err = manager
        .execute_one(&call("measure", json!({"width": 2})))
        .await
        .unwrap_err();
    assert!(err.to_string().contains("height"), "{err}");

    let result = manager
        .execute_one(&call("measure_slowly", json!({"width": 2, "height": 4})))
        .await
        .unwrap();
    assert_eq!(result.content, UserModelContent::Json(json!(8.0)));
}

/// A greeting's arguments.
#[derive(ToolArgs)]
struct GreetArgs {
    /// Who to greet.
    name: String,
}

/// How to greet, kept in the session.
struct Salutation(&'static str);

/// Greets someone, naming the call.
///
/// # Arguments
///
/// * `args` - documents the Rust function only: the arguments are `GreetArgs`' fields.
#[tool_fn]
async fn greet(
    #[ctx] salutation: State<Salutation>,
    #[args] args: GreetArgs,
    #[ctx] call: ToolCallContext,
) -> String {
    format!("{}, {}! ({})", salutation.0.0, args.name, call.call_id())
}

/// Greets someone in the tool's own words.
#[tool_fn]
fn greet_with(
    #[bind] words: String,
    /// Dropped, as on a `#[ctx]` parameter: the type's fields describe the arguments.
    #[args]
    args: GreetArgs,
) -> String {
    format!("{words}, {}!", args.name)
}

#[tokio::test]
async fn beside_ctx_bind_and_the_call_context() {
    let definition = Greet.definition();
    let command = &definition.commands()[0];
    assert_eq!(command.arguments, GreetArgs::args_schema());
    // The `# Arguments` list is left out of the description, as for any tool.
    assert_eq!(command.description, "Greets someone, naming the call.");

    // A session constructor, as any tool with a `#[ctx]` value; built here from the value.
    assert!(Box::<dyn ToolConstructor>::from(Greet).needs_session());
    let greet = Greet::new(State(Arc::new(Salutation("Hello"))));
    let manager = manager_with(vec![
        Arc::new(greet),
        Arc::new(GreetWith::new("Hi".to_owned())),
    ]);
    let outcomes = manager
        .execute_batch(&[call("greet", json!({"name": "Ada"}))])
        .await;
    let result = outcomes[0].result.as_ref().unwrap();
    assert_eq!(result.content.to_text(), "Hello, Ada! (call-1)");
    let err = manager
        .execute_one(&call("greet", json!({"name": 7, "extra": 1})))
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ToolErrorKind::InvalidArguments);

    assert_eq!(
        GreetWith.definition().commands()[0].arguments,
        GreetArgs::args_schema()
    );
    let result = manager
        .execute_one(&call("greet_with", json!({"name": "Ada"})))
        .await
        .unwrap();
    assert_eq!(result.content.to_text(), "Hi, Ada!");
}

/// A renaming's arguments.
#[derive(ToolArgs)]
struct RenameArgs {
    /// The file's name now.
    from: String,
    /// Its new name.
    to: String,
}

/// Where a file is moved to.
#[derive(ToolArgs)]
#[serde(rename_all = "camelCase")]
struct MoveArgs {
    /// The file.
    file_name: String,
    /// The folder to move it to.
    #[arg(default)]
    folder: String,
}

#[derive(Default)]
struct Files {
    renamed: std::sync::Mutex<Vec<String>>,
}

/// The files of a folder.
#[tool_fn(name = "files")]
impl Files {
    /// Renames a file.
    fn rename(&self, #[args] args: RenameArgs) -> String {
        let done = format!("{} -> {}", args.from, args.to);
        self.renamed.lock().unwrap().push(done.clone());
        done
    }

    /// Moves a file.
    async fn move_to(&self, #[args] args: MoveArgs) -> Result<String, ToolError> {
        Ok(format!("{}/{}", args.folder, args.file_name))
    }

    /// Lists the renamings so far.
    fn list(&self) -> Vec<String> {
        self.renamed.lock().unwrap().clone()
    }
}

#[tokio::test]
async fn group_commands_take_whole_arguments() {
    let definition = Files::default().definition();
    let commands = definition.commands();
    assert_eq!(commands[0].name, "rename");
    assert_eq!(commands[0].arguments, RenameArgs::args_schema());
    assert_eq!(commands[1].arguments, MoveArgs::args_schema());

    let manager = manager_with(vec![Arc::new(Files::default())]);
    let result = manager
        .execute_one(&call(
            "files",
            json!({"command": "rename", "from": "a.txt", "to": "b.txt"}),
        ))
        .await
        .unwrap();
    assert_eq!(result.content.to_text(), "a.txt -> b.txt");
    let result = manager
        .execute_one(&call(
            "files",
            json!({"command": "move_to", "fileName": "b.txt"}),
        ))
        .await
        .unwrap();
    assert_eq!(result.content.to_text(), "/b.txt");
    let err = manager
        .execute_one(&call(
            "files",
            json!({"command": "rename", "from": "a.txt"}),
        ))
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ToolErrorKind::InvalidArguments);
    assert!(err.to_string().contains("\"to\""), "{err}");
    let err = manager
        .execute_one(&call(
            "files",
            json!({"command": "move_to", "fileName": ["b.txt"]}),
        ))
        .await
        .unwrap_err();
    assert!(err.to_string().contains("/fileName"), "{err}");
    let result = manager
        .execute_one(&call("files", json!({"command": "list"})))
        .await
        .unwrap();
    assert_eq!(
        result.content,
        UserModelContent::Json(json!(["a.txt -> b.txt"]))
    );
}
