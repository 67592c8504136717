//! `#[tool_fn]` and `#[derive(ToolArgs)]`, run through `ToolCallManager::execute_one`.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use toolsmith::async_trait;
use toolsmith::{
    ArgsSchema, ContextHit, ContextSearch, MemoryAccess, MemoryFact, ServiceError, SessionParts,
    SessionState, State, Tool, ToolArgs, ToolArguments, ToolCallManager, ToolCallResult,
    ToolCommands, ToolConstructor, ToolError, ToolErrorKind, ToolImpl, UserModelContent, Versioned,
    tool_fn,
};

use crate::support::json_calls::call;
use crate::support::registered::manager_with;

// ---- Function tools ----

static ADD_RUNS: AtomicUsize = AtomicUsize::new(0);

/// Adds two numbers together and returns the sum.
#[tool_fn(category = "math")]
async fn add(
    /// The first number to add.
    a: f64,
    /// The second number to add.
    b: f64,
) -> Result<f64, ToolError> {
    ADD_RUNS.fetch_add(1, Ordering::SeqCst);
    Ok(a + b)
}

#[tokio::test]
async fn function_tool_definition_and_schema() {
    let tool = Add.definition();
    let Tool::SingleCommand(def) = &tool else {
        panic!("a single command")
    };
    assert_eq!(def.name, "add");
    assert_eq!(def.category, "math");
    assert_eq!(
        def.description,
        "Adds two numbers together and returns the sum."
    );
    assert_eq!(
        def.arguments.schema(),
        &json!({
            "type": "object",
            "properties": {
                "a": {"type": "number", "format": "double", "description": "The first number to add."},
                "b": {"type": "number", "format": "double", "description": "The second number to add."}
            },
            "required": ["a", "b"],
            "additionalProperties": false
        })
    );
    assert_eq!(
        def.returns.as_ref().map(|r| r.schema()),
        Some(&json!({"type": "number", "format": "double"}))
    );
    // The function itself is still callable.
    assert_eq!(add(1.0, 2.0).await.unwrap(), 3.0);
}

#[tokio::test]
async fn valid_invalid_missing_and_lenient_arguments() {
    let manager = manager_with(vec![Arc::new(Add)]);
    let ok = manager
        .execute_one(&call("add", json!({"a": 2, "b": 40.5})))
        .await
        .unwrap();
    assert_eq!(ok.content, UserModelContent::Json(json!(42.5)));

    // Lenient: numbers as strings.
    let ok = manager
        .execute_one(&call("add", json!({"a": "2", "b": "3"})))
        .await
        .unwrap();
    assert_eq!(ok.content.to_text(), "5.0");

    let runs = ADD_RUNS.load(Ordering::SeqCst);
    let err = manager
        .execute_one(&call("add", json!({"a": "two", "b": 1})))
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ToolErrorKind::InvalidArguments);
    assert!(err.to_string().contains("/a"), "{err}");

    let err = manager
        .execute_one(&call("add", json!({"a": 1})))
        .await
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "Invalid arguments for tool 'add': \"b\" is a required property"
    );

    let err = manager
        .execute_one(&call("add", json!({"a": 1, "b": 2, "c": 3})))
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ToolErrorKind::InvalidArguments);
    // None of the invalid calls ran the function.
    assert_eq!(ADD_RUNS.load(Ordering::SeqCst), runs);
}

/// The default of `times`: named like the tool's last parameter, which the generated reading
/// must not take for it.
fn limit() -> u32 {
    3
}

/// Repeats a word. The body (an inner attribute, an item, a labelled loop) reaches the
/// compiler as written.
#[tool_fn]
async fn repeat(word: String, #[arg(default = "limit")] times: u32, limit: Option<u32>) -> String {
    #![allow(clippy::explicit_counter_loop)]
    fn joined(parts: &[String]) -> String {
        parts.join("-")
    }
    let mut parts = Vec::new();
    'repeat: for _ in 0..times {
        if limit.is_some_and(|limit| parts.len() as u32 >= limit) {
            break 'repeat;
        }
        parts.push(word.clone());
    }
    joined(&parts)
}

#[tokio::test]
async fn bodies_are_kept_and_defaults_are_not_shadowed_by_parameters() {
    let manager = manager_with(vec![Arc::new(Repeat)]);
    let text = |arguments: Value| {
        let manager = &manager;
        async move {
            manager
                .execute_one(&call("repeat", arguments))
                .await
                .map(|result| result.content.to_text())
        }
    };
    assert_eq!(text(json!({"word": "ab"})).await.unwrap(), "ab-ab-ab");
    assert_eq!(
        text(json!({"word": "ab", "times": 2})).await.unwrap(),
        "ab-ab"
    );
    assert_eq!(text(json!({"word": "ab", "limit": 1})).await.unwrap(), "ab");
    let err = text(json!({"times": 2})).await.unwrap_err();
    assert_eq!(err.kind(), ToolErrorKind::InvalidArguments);
    assert!(err.to_string().contains("word"), "{err}");
}

#[tokio::test]
async fn generated_reader_names_the_argument_without_the_manager() {
    // Calling the tool directly (no validation first): the generated reader is lenient and
    // its errors name the argument.
    let ok = Add
        .execute(ToolArguments::try_from(json!({"a": "1.5", "b": 1})).unwrap())
        .await
        .unwrap();
    assert_eq!(ok.content.to_text(), "2.5");
    let err = Add
        .execute(ToolArguments::try_from(json!({"a": [1], "b": 1})).unwrap())
        .await
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "Invalid arguments for tool 'add': /a: invalid type: sequence, expected f64"
    );
    let err = Add
        .execute(ToolArguments::try_from(json!({"a": 1})).unwrap())
        .await
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "Invalid arguments for tool 'add': missing required argument 'b'"
    );
}

#[tokio::test]
async fn generated_tools_start_on_lent_arguments_and_answer_alike_when_given_them() {
    fn shown(result: Result<ToolCallResult, ToolError>) -> String {
        match result {
            Ok(result) => format!("ok {}", result.content.to_text()),
            Err(err) => format!("err {err}"),
        }
    }
    let memory = Memory::default();
    // Async, blocking and synchronous functions, and a group's async and synchronous
    // commands, called directly (no validation first), so reading errors come from the tool.
    let cases: [(&dyn ToolImpl, Value, &str); 9] = [
        (&Add, json!({"a": 1, "b": "2"}), "ok 3.0"),
        (
            &Add,
            json!({"a": [1], "b": 1}),
            "err Invalid arguments for tool 'add': /a: invalid type: sequence, expected f64",
        ),
        (&SlowSquare, json!({"n": 7}), "ok 49"),
        (
            &SlowSquare,
            json!({"n": "seven"}),
            "err Invalid arguments for tool 'slow_square': /n: invalid type: string \"seven\", \
             expected u64",
        ),
        (&Hello, json!({"name": "Ada"}), "ok Hello, Ada!"),
        (
            &memory,
            json!({"command": "add", "text": "tea"}),
            "ok fact #0",
        ),
        (
            &memory,
            json!({"command": "find", "word": "tea"}),
            "ok [\"tea\"]",
        ),
        (
            &memory,
            json!({"command": "forget", "id": "x"}),
            "err Invalid arguments for tool 'memory': /id: invalid type: string \"x\", expected usize",
        ),
        (
            &memory,
            json!({"text": "no command"}),
            "err Invalid arguments for tool 'memory': missing required argument 'command'",
        ),
    ];
    for (tool, arguments, expected) in cases {
        let arguments = ToolArguments::try_from(arguments).unwrap();
        let name = tool.definition().name().to_owned();
        assert_eq!(
            shown(tool.execute_lent(&arguments).await),
            expected,
            "{name}"
        );
        if !expected.contains("fact #") {
            assert_eq!(shown(tool.execute(arguments).await), expected, "{name}");
        }
    }
}

/// Says hello.
#[tool_fn]
fn hello(name: &str) -> String {
    format!("Hello, {name}!")
}

/// Returns a constant text.
#[tool_fn]
fn motto() -> &'static str {
    "keep going"
}

/// Returns a ready-made result that reports a failure to the model.
#[tool_fn]
async fn refuse() -> ToolCallResult {
    ToolCallResult::error("not today")
}

static PINGS: AtomicUsize = AtomicUsize::new(0);

/// Records a ping.
#[tool_fn]
async fn ping() {
    PINGS.fetch_add(1, Ordering::SeqCst);
}

#[derive(Serialize, JsonSchema)]
struct TextStats {
    /// How many words.
    words: usize,
    longest: Option<String>,
}

/// Computes statistics of a text.
#[tool_fn]
fn stats(text: String) -> TextStats {
    TextStats {
        words: text.split_whitespace().count(),
        longest: text
            .split_whitespace()
            .max_by_key(|w| w.len())
            .map(str::to_owned),
    }
}

/// The opening of a PNG file: enough for its type to be checked.
const PNG: &[u8] = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR";

/// Takes a screenshot.
#[tool_fn]
async fn screenshot() -> Result<toolsmith::Image, String> {
    toolsmith::Image::from_bytes("image/png", PNG).map_err(|err| err.to_string())
}

/// Shows a captioned picture.
#[tool_fn]
fn captioned(caption: String) -> Vec<toolsmith::ContentPart> {
    let image = toolsmith::Image::from_bytes("image/png", PNG).expect("a PNG");
    vec![
        toolsmith::ContentPart::text(caption),
        toolsmith::ContentPart::Image(image),
    ]
}

#[tokio::test]
async fn an_image_returned_is_shown_as_the_image_not_sent_as_its_json() {
    let manager = manager_with(vec![Arc::new(Screenshot), Arc::new(Captioned)]);
    let image = toolsmith::Image::from_bytes("image/png", PNG).unwrap();
    let shot = manager
        .execute_one(&call("screenshot", json!({})))
        .await
        .unwrap();
    assert_eq!(shot, ToolCallResult::image(image.clone()));
    let shown = manager
        .execute_one(&call("captioned", json!({"caption": "The login page"})))
        .await
        .unwrap();
    assert_eq!(
        shown,
        ToolCallResult::parts([
            toolsmith::ContentPart::text("The login page"),
            toolsmith::ContentPart::Image(image),
        ])
    );
    // No result schema: the model is shown the image, not a JSON value to check.
    for tool in [&Screenshot as &dyn ToolImpl, &Captioned] {
        assert!(tool.definition().commands()[0].returns.is_none());
    }
}

/// Takes a screenshot of each screen.
#[tool_fn]
fn screens(count: usize) -> Vec<toolsmith::Image> {
    let image = toolsmith::Image::from_bytes("image/png", PNG).expect("a PNG");
    vec![image; count]
}

/// Takes a screenshot of the window, if there is one.
#[tool_fn]
async fn window_shot(open: bool) -> Result<Option<toolsmith::Image>, String> {
    Ok(open.then(|| toolsmith::Image::from_bytes("image/png", PNG).expect("a PNG")))
}

#[tokio::test]
async fn images_returned_in_a_vec_or_an_option_are_shown_not_sent_as_their_json() {
    let manager = manager_with(vec![Arc::new(Screens), Arc::new(WindowShot)]);
    let image = toolsmith::Image::from_bytes("image/png", PNG).unwrap();
    let run = |name: &'static str, arguments: Value| {
        let manager = &manager;
        async move { manager.execute_one(&call(name, arguments)).await.unwrap() }
    };
    assert_eq!(
        run("screens", json!({"count": 2})).await,
        ToolCallResult::parts([
            toolsmith::ContentPart::Image(image.clone()),
            toolsmith::ContentPart::Image(image.clone()),
        ])
    );
    assert_eq!(
        run("window_shot", json!({"open": true})).await,
        ToolCallResult::image(image)
    );
    // No image: `null`, as any other `Option` returned.
    assert_eq!(
        run("window_shot", json!({"open": false})).await,
        ToolCallResult::json(Value::Null)
    );
    for tool in [&Screens as &dyn ToolImpl, &WindowShot] {
        assert!(tool.definition().commands()[0].returns.is_none());
    }
}

#[derive(Serialize, JsonSchema)]
struct PageSeen {
    url: String,
    title: String,
}

/// Opens a page and shows it.
#[tool_fn]
async fn browse(url: String) -> Result<toolsmith::WithImages<PageSeen>, String> {
    let shot = toolsmith::Image::from_bytes("image/png", PNG).map_err(|err| err.to_string())?;
    let title = format!("The page at {url}");
    Ok(toolsmith::WithImages::new(PageSeen { url, title }, [shot]))
}

/// Shows the screen and the pointer's place.
#[tool_fn]
fn pointer() -> toolsmith::WithImages<(u32, u32)> {
    let shot = toolsmith::Image::from_bytes("image/png", PNG).expect("a PNG");
    toolsmith::WithImages::new((3, 4), []).with_image(shot)
}

/// Shows the screen and some JSON.
#[tool_fn]
fn untyped_view() -> Result<toolsmith::WithImages<Value>, ToolError> {
    Ok(toolsmith::WithImages::new(json!({"any": "thing"}), []))
}

/// Claims a JSON object and returns a map whose keys cannot be JSON.
#[tool_fn]
fn unwritable_view() -> toolsmith::WithImages<BTreeMap<(u8, u8), u8>> {
    toolsmith::WithImages::new([((1, 2), 3)].into(), [])
}

#[tokio::test]
async fn a_value_with_images_returned_is_structured_and_its_type_the_result_schema() {
    let manager = manager_with(vec![
        Arc::new(Browse),
        Arc::new(Pointer),
        Arc::new(UntypedView),
        Arc::new(UnwritableView),
    ]);
    let image = toolsmith::Image::from_bytes("image/png", PNG).unwrap();
    let seen = manager
        .execute_one(&call("browse", json!({"url": "https://example.com"})))
        .await
        .unwrap();
    assert_eq!(
        seen,
        ToolCallResult::json_with_images(
            json!({"url": "https://example.com", "title": "The page at https://example.com"}),
            [image.clone()]
        )
    );
    assert_eq!(
        manager
            .execute_one(&call("pointer", json!({})))
            .await
            .unwrap(),
        ToolCallResult::json_with_images(json!([3, 4]), [image])
    );
    // The result schema is the value's type's, alone or in a `Result`; none for untyped JSON,
    // as for a `Value` returned alone.
    let returns = |tool: &dyn ToolImpl| {
        tool.definition().commands()[0]
            .returns
            .as_ref()
            .map(|returns| returns.schema().clone())
    };
    let page = returns(&Browse).expect("a result schema");
    assert_eq!(page["type"], "object");
    assert_eq!(page["required"], json!(["url", "title"]));
    assert_eq!(returns(&Pointer).expect("a result schema")["type"], "array");
    assert_eq!(returns(&UntypedView), None);
    // A value that cannot be written as JSON fails the call, as it does without images.
    let err = manager
        .execute_one(&call("unwritable_view", json!({})))
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ToolErrorKind::Execution);
    assert!(err.to_string().contains("could not be serialised"), "{err}");
}

/// Returns raw JSON.
#[tool_fn]
fn raw() -> Value {
    json!({"raw": true})
}

/// Divides two integers.
#[tool_fn]
fn divide(a: i64, b: i64) -> Result<i64, String> {
    if b == 0 {
        Err("division by zero".to_owned())
    } else {
        Ok(a / b)
    }
}

/// An error that shows its cause only in its alternate form (`{:#}`), as `anyhow::Error`
/// does: "reading config: file not found" where `{}` gives "reading config".
#[derive(Debug)]
struct WithCause;

impl std::fmt::Display for WithCause {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("reading config")?;
        if f.alternate() {
            f.write_str(": file not found")?;
        }
        Ok(())
    }
}

/// Fails with an error that has a cause.
#[tool_fn]
fn load_config() -> Result<String, WithCause> {
    Err(WithCause)
}

/// Fails with an error whose text is blank.
#[tool_fn]
fn fail_silently() -> Result<String, String> {
    Err(" ".to_owned())
}

/// Always fails with a network error.
#[tool_fn]
async fn flaky() -> Result<String, ToolError> {
    Err(ToolError::network("flaky", "connection reset"))
}

#[derive(Debug)]
struct QuotaExceeded;

impl From<QuotaExceeded> for ToolError {
    fn from(_: QuotaExceeded) -> Self {
        ToolError::Cancelled("quota exceeded".into())
    }
}

/// Fails with an error that converts into a ToolError.
#[tool_fn]
async fn quota() -> Result<(), QuotaExceeded> {
    Err(QuotaExceeded)
}

/// A result under another name: the schema is still its success type's.
type Outcome<T> = Result<T, String>;

/// Counts the words of a text, through an alias of `Result`.
#[tool_fn]
fn count_words(text: String) -> Outcome<usize> {
    Ok(text.split_whitespace().count())
}

/// A type of the user's that is named `Result` and is no `std` result.
mod verdict {
    use schemars::JsonSchema;
    use serde::Serialize;

    /// A verdict and its reason.
    #[derive(Debug, Serialize, JsonSchema)]
    pub struct Result<T> {
        /// The verdict.
        pub value: T,
        /// Why.
        pub reason: String,
    }
}

/// Judges a text.
#[tool_fn]
fn judge(text: String) -> verdict::Result<bool> {
    verdict::Result {
        value: !text.is_empty(),
        reason: "it has words".to_owned(),
    }
}

/// Judges a text, in a `std` result around the user's `Result`.
#[tool_fn]
fn judge_or_fail(text: String) -> std::result::Result<verdict::Result<bool>, String> {
    Ok(judge(text))
}

#[test]
fn result_schemas_follow_the_type_not_its_name() {
    let returns = |tool: &dyn ToolImpl| {
        tool.definition().commands()[0]
            .returns
            .as_ref()
            .map(|r| r.schema().clone())
    };
    // An alias of `Result` is split like `Result`: its success type's schema.
    assert_eq!(
        returns(&CountWords).expect("a schema")["type"],
        json!("integer")
    );
    // The user's own `Result` is a structured value, described whole.
    for tool in [&Judge as &dyn ToolImpl, &JudgeOrFail] {
        let schema = returns(tool).expect("a schema");
        assert_eq!(schema["type"], json!("object"), "{schema}");
        assert_eq!(schema["properties"]["value"]["type"], json!("boolean"));
        assert_eq!(schema["required"], json!(["value", "reason"]));
    }
}

#[tokio::test]
async fn each_result_kind() {
    let manager = manager_with(vec![
        Arc::new(Hello),
        Arc::new(Motto),
        Arc::new(Refuse),
        Arc::new(Ping),
        Arc::new(Stats),
        Arc::new(Raw),
        Arc::new(Divide),
        Arc::new(LoadConfig),
        Arc::new(FailSilently),
        Arc::new(Flaky),
        Arc::new(Quota),
    ]);
    let run = |name: &'static str, args: Value| {
        let manager = &manager;
        async move { manager.execute_one(&call(name, args)).await }
    };

    let text = run("hello", json!({"name": "Ada"})).await.unwrap();
    assert_eq!(text.content, UserModelContent::Text("Hello, Ada!".into()));
    assert_eq!(
        run("motto", json!({})).await.unwrap().content,
        UserModelContent::Text("keep going".into())
    );
    let refused = run("refuse", json!({})).await.unwrap();
    assert!(refused.is_error());
    assert_eq!(refused.content.to_text(), "not today");

    let before = PINGS.load(Ordering::SeqCst);
    let empty = run("ping", json!({})).await.unwrap();
    assert_eq!(empty, ToolCallResult::empty());
    assert_eq!(PINGS.load(Ordering::SeqCst), before + 1);

    let stats = run("stats", json!({"text": "a bb ccc"})).await.unwrap();
    assert_eq!(
        stats.content,
        UserModelContent::Json(json!({"words": 3, "longest": "ccc"}))
    );
    manager.check_result("stats", &stats).unwrap();
    // `None` is written as `null`, and the tool's own result schema takes it.
    let no_words = run("stats", json!({"text": ""})).await.unwrap();
    assert_eq!(
        no_words.content,
        UserModelContent::Json(json!({"words": 0, "longest": null}))
    );
    manager.check_result("stats", &no_words).unwrap();
    assert_eq!(
        run("raw", json!({})).await.unwrap().content,
        UserModelContent::Json(json!({"raw": true}))
    );

    assert_eq!(
        run("divide", json!({"a": 9, "b": 3}))
            .await
            .unwrap()
            .content,
        UserModelContent::Json(json!(3))
    );
    let err = run("divide", json!({"a": 1, "b": 0})).await.unwrap_err();
    assert_eq!(err, ToolError::execution("divide", "division by zero"));
    // The cause an error shows in its alternate form reaches the model too.
    let err = run("load_config", json!({})).await.unwrap_err();
    assert_eq!(
        err.to_string(),
        "Tool 'load_config' failed: reading config: file not found"
    );
    // A blank error says so rather than ending the message on nothing.
    let err = run("fail_silently", json!({})).await.unwrap_err();
    assert_eq!(
        err.to_string(),
        "Tool 'fail_silently' failed: its error gave no message"
    );

    // A ToolError is kept as it is (a network error stays retryable).
    let err = run("flaky", json!({})).await.unwrap_err();
    assert_eq!(err.kind(), ToolErrorKind::Network);
    // An error that converts into a ToolError is converted.
    let err = run("quota", json!({})).await.unwrap_err();
    assert_eq!(err, ToolError::Cancelled("quota exceeded".into()));
}

#[test]
fn result_schemas_only_for_structured_results() {
    let returns = |tool: &dyn ToolImpl| tool.definition().commands()[0].returns.clone();
    assert_eq!(returns(&Hello), None);
    assert_eq!(returns(&Motto), None);
    assert_eq!(returns(&Refuse), None);
    assert_eq!(returns(&Ping), None);
    assert_eq!(returns(&Raw), None);
    assert_eq!(returns(&Flaky), None);
    let stats = returns(&Stats).expect("a schema");
    assert_eq!(
        stats.schema(),
        &json!({
            "type": "object",
            "properties": {
                "words": {"type": "integer", "format": "uint", "minimum": 0, "maximum": usize::MAX, "description": "How many words."},
                // Written as `null` when `None`: the result schema says so.
                "longest": {"type": ["string", "null"]}
            },
            "required": ["words"]
        })
    );
    assert_eq!(
        returns(&Divide).map(|r| r.schema().clone()),
        Some(
            json!({"type": "integer", "format": "int64", "minimum": i64::MIN, "maximum": i64::MAX})
        )
    );
}

// ---- Parameter types and schemas ----

#[derive(Debug, Deserialize, JsonSchema, PartialEq)]
#[serde(rename_all = "snake_case")]
enum Unit {
    Celsius,
    Fahrenheit,
}

#[derive(Debug, Deserialize, JsonSchema, PartialEq)]
struct Filter {
    /// The field to filter on.
    field: String,
    #[serde(rename = "minimum")]
    min: Option<f64>,
}

#[derive(Debug, Deserialize, JsonSchema)]
struct Node {
    label: String,
    children: Vec<Node>,
}

fn five() -> u32 {
    5
}

/// Exercises every kind of parameter.
///
/// # Arguments
///
/// * `unit` - The unit to report in.
/// * `tags` - Tags to match.
#[tool_fn(name = "kitchen-sink")]
#[allow(clippy::too_many_arguments)]
async fn kitchen_sink(
    unit: Unit,
    tags: Vec<String>,
    /// Counts per key.
    counts: BTreeMap<String, u32>,
    filters: Vec<Filter>,
    note: Option<String>,
    anything: Value,
    #[arg(rename = "max", description = "The most hits.")] limit: u64,
    #[arg(default = "five")] page_size: u32,
    #[arg(default)] verbose: bool,
    tree: Option<Node>,
) -> String {
    format!(
        "{unit:?} {tags:?} {counts:?} {filters:?} {note:?} {anything} {limit} {page_size} {verbose} {}",
        tree.map_or(0, |t| t.children.len() + t.label.len())
    )
}

#[test]
fn schemas_are_provider_safe() {
    let tool = KitchenSink.definition();
    assert_eq!(tool.name(), "kitchen-sink");
    let def = &tool.commands()[0];
    assert_eq!(def.description, "Exercises every kind of parameter.");
    let schema = def.arguments.schema();
    assert_eq!(schema["type"], "object");
    assert_eq!(schema["additionalProperties"], false);
    assert!(schema.get("title").is_none());
    assert_eq!(
        schema["required"],
        json!(["unit", "tags", "counts", "filters", "max"])
    );
    let props = &schema["properties"];
    assert_eq!(
        props["unit"],
        json!({"type": "string", "enum": ["celsius", "fahrenheit"], "description": "The unit to report in."})
    );
    assert_eq!(props["tags"]["description"], "Tags to match.");
    assert_eq!(props["tags"]["items"]["type"], "string");
    assert_eq!(props["counts"]["type"], "object");
    assert_eq!(props["counts"]["description"], "Counts per key.");
    // Nested user types are inlined, with their serde renames and docs.
    let filter = &props["filters"]["items"];
    assert_eq!(filter["type"], "object");
    assert_eq!(
        filter["properties"]["field"]["description"],
        "The field to filter on."
    );
    assert_eq!(filter["properties"]["minimum"]["type"], "number");
    assert_eq!(filter["required"], json!(["field"]));
    // Option is "not required", not nullable.
    assert_eq!(props["note"], json!({"type": "string"}));
    assert_eq!(props["anything"], json!({}));
    assert_eq!(props["max"]["description"], "The most hits.");
    assert_eq!(props["page_size"]["type"], "integer");
    assert_eq!(props["verbose"]["type"], "boolean");
    // The one recursive type keeps a definition; nothing else refers to one.
    assert_eq!(
        props["tree"]["properties"]["children"]["items"]["$ref"],
        "#/$defs/Node"
    );
    assert_eq!(
        schema["$defs"]
            .as_object()
            .map(|d| d.keys().cloned().collect::<Vec<_>>()),
        Some(vec!["Node".to_owned()])
    );
    let without_tree = schema.to_string().replace("\"$ref\":\"#/$defs/Node\"", "");
    assert!(!without_tree.contains("$ref"), "{schema}");
}

#[tokio::test]
async fn every_parameter_kind_reads() {
    let manager = manager_with(vec![Arc::new(KitchenSink)]);
    let result = manager
        .execute_one(&call(
            "kitchen-sink",
            json!({
                "unit": "celsius",
                "tags": ["a", "b"],
                "counts": {"x": "2"},
                "filters": [{"field": "f", "minimum": "1.5"}],
                "anything": [1, "two"],
                "max": "7",
                "note": null,
                "tree": {"label": "root", "children": [{"label": "leaf", "children": []}]}
            }),
        ))
        .await
        .unwrap();
    assert_eq!(
        result.content.to_text(),
        "Celsius [\"a\", \"b\"] {\"x\": 2} [Filter { field: \"f\", min: Some(1.5) }] None [1,\"two\"] 7 5 false 5"
    );
    let err = manager
        .execute_one(&call(
            "kitchen-sink",
            json!({"unit": "kelvin", "tags": [], "counts": {}, "filters": [], "max": 1}),
        ))
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ToolErrorKind::InvalidArguments);
    assert!(err.to_string().contains("/unit"), "{err}");
}

// ---- Sync, blocking, timeout, annotations ----

/// Sleeps on a blocking thread, then answers.
#[tool_fn(blocking, read_only, idempotent)]
fn slow_square(n: u64) -> u64 {
    std::thread::sleep(Duration::from_millis(10));
    n * n
}

/// Panics on the blocking pool.
#[tool_fn(blocking)]
fn blocking_panic() -> String {
    panic!("blocking boom")
}

/// Takes longer than its limit.
#[tool_fn(timeout = "50ms", destructive, open_world)]
async fn too_slow() -> String {
    tokio::time::sleep(Duration::from_secs(5)).await;
    "late".to_owned()
}

#[tokio::test]
async fn blocking_timeout_and_annotations() {
    let manager = manager_with(vec![
        Arc::new(SlowSquare),
        Arc::new(BlockingPanic),
        Arc::new(TooSlow),
    ]);
    let result = manager
        .execute_one(&call("slow_square", json!({"n": 12})))
        .await
        .unwrap();
    assert_eq!(result.content.to_text(), "144");
    let err = manager
        .execute_one(&call("blocking_panic", json!({})))
        .await
        .unwrap_err();
    assert_eq!(
        err,
        ToolError::execution("blocking_panic", "panicked: blocking boom")
    );

    assert_eq!(TooSlow.timeout(), Some(Duration::from_millis(50)));
    assert_eq!(SlowSquare.timeout(), None);
    let err = manager
        .execute_one(&call("too_slow", json!({})))
        .await
        .unwrap_err();
    assert_eq!(err, ToolError::timeout("too_slow"));

    let hints = |tool: &dyn ToolImpl| tool.definition().commands()[0].annotations;
    let square = hints(&SlowSquare);
    assert_eq!(
        (
            square.read_only,
            square.destructive,
            square.idempotent,
            square.open_world
        ),
        (Some(true), None, Some(true), None)
    );
    let slow = hints(&TooSlow);
    assert_eq!(
        (
            slow.read_only,
            slow.destructive,
            slow.idempotent,
            slow.open_world
        ),
        (None, Some(true), None, Some(true))
    );
    assert!(hints(&Add).is_empty());
}

#[test]
fn a_blocking_tool_run_without_a_tokio_runtime_says_so() {
    let arguments = ToolArguments::try_from(json!({"n": 3})).unwrap();
    let err = futures::executor::block_on(SlowSquare.execute(arguments)).unwrap_err();
    assert_eq!(err.kind(), ToolErrorKind::Execution);
    assert!(err.to_string().contains("Tokio runtime"), "{err}");
}

// ---- Command groups ----

#[derive(Default)]
struct Memory {
    facts: Mutex<Vec<String>>,
}

/// Long-term facts about the user.
#[tool_fn(name = "memory", category = "memory")]
impl Memory {
    /// Remember a new fact.
    async fn add(
        &self,
        /** The fact. */
        text: String,
    ) -> Result<String, ToolError> {
        let mut facts = self.facts.lock().unwrap();
        facts.push(text);
        Ok(format!("fact #{}", facts.len() - 1))
    }

    /// Forget a fact by its id.
    #[command(name = "forget", destructive)]
    async fn remove(&self, id: usize) -> Result<(), String> {
        let mut facts = self.facts.lock().unwrap();
        if id < facts.len() {
            facts.remove(id);
            Ok(())
        } else {
            Err(format!("no fact #{id}"))
        }
    }

    /// List the facts that contain a word.
    #[command(read_only)]
    fn find(&self, word: &str, limit: Option<usize>) -> Vec<String> {
        let facts = self.facts.lock().unwrap();
        facts
            .iter()
            .filter(|f| f.contains(word))
            .take(limit.unwrap_or(usize::MAX))
            .cloned()
            .collect()
    }

    #[command(skip)]
    fn len(&self) -> usize {
        self.facts.lock().unwrap().len()
    }

    fn helper() -> &'static str {
        "not a command: no self"
    }
}

#[tokio::test]
async fn command_group_definition_and_dispatch() {
    let memory = Arc::new(Memory::default());
    let tool = memory.definition();
    let Tool::MultiCommands(name, commands) = &tool else {
        panic!("a command group")
    };
    assert_eq!(name, "memory");
    let names: Vec<&str> = commands.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["add", "forget", "find"]);
    assert!(commands.iter().all(|c| c.category == "memory"));
    assert_eq!(commands[0].description, "Remember a new fact.");
    assert_eq!(
        commands[0].arguments.schema()["properties"]["text"]["description"],
        "The fact."
    );
    assert_eq!(commands[1].annotations.destructive, Some(true));
    assert_eq!(commands[2].annotations.read_only, Some(true));
    assert_eq!(commands[2].arguments.schema()["required"], json!(["word"]));
    assert_eq!(
        commands[2].returns.as_ref().unwrap().schema()["type"],
        "array"
    );
    assert_eq!(Memory::helper(), "not a command: no self");

    let manager = ToolCallManager::new("s");
    manager.register(memory.clone()).unwrap();
    let run = |args: Value| {
        let manager = &manager;
        async move { manager.execute_one(&call("memory", args)).await }
    };
    assert_eq!(
        run(json!({"command": "add", "text": "likes tea"}))
            .await
            .unwrap()
            .content
            .to_text(),
        "fact #0"
    );
    run(json!({"command": "add", "text": "likes cats"}))
        .await
        .unwrap();
    assert_eq!(
        run(json!({"command": "find", "word": "likes", "limit": "1"}))
            .await
            .unwrap()
            .content,
        UserModelContent::Json(json!(["likes tea"]))
    );
    assert_eq!(
        run(json!({"command": "forget", "id": 0})).await.unwrap(),
        ToolCallResult::empty()
    );
    assert_eq!(memory.len(), 1);
    let err = run(json!({"command": "forget", "id": 9}))
        .await
        .unwrap_err();
    assert_eq!(err, ToolError::execution("memory", "no fact #9"));

    // Unknown and missing commands, and arguments of another command.
    let err = run(json!({"command": "clear"})).await.unwrap_err();
    assert_eq!(err.kind(), ToolErrorKind::InvalidArguments);
    assert!(
        err.to_string().contains("unknown command \"clear\""),
        "{err}"
    );
    let err = run(json!({"text": "x"})).await.unwrap_err();
    assert!(
        err.to_string()
            .contains("missing required argument 'command'"),
        "{err}"
    );
    let err = run(json!({"command": "forget", "text": "x"}))
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ToolErrorKind::InvalidArguments);
    assert_eq!(memory.len(), 1);

    // Called directly, the generated dispatch reports an unknown command itself.
    let err = memory
        .execute(ToolArguments::try_from(json!({"command": "clear"})).unwrap())
        .await
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "Invalid arguments for tool 'memory': /command: unknown command \"clear\"; valid commands are 'add', 'forget', 'find'"
    );
    // A long name is quoted cut, as validation quotes it.
    let long = "x".repeat(100_000);
    let err = memory
        .execute(ToolArguments::try_from(json!({ "command": long })).unwrap())
        .await
        .unwrap_err();
    assert!(
        err.to_string().len() < 400,
        "{} bytes",
        err.to_string().len()
    );
    assert!(
        err.to_string()
            .ends_with("…; valid commands are 'add', 'forget', 'find'")
    );
}

/// A group described by the attribute rather than a doc comment.
struct Lights;

/// Rustdoc for the developer: not what the model sees when `description` is given.
#[tool_fn(description = "The lights of the house.")]
impl Lights {
    /// Turn a light on.
    fn on(&self, room: String) -> String {
        format!("{room}: on")
    }
}

/// A group with no description of its own.
struct Bare;

#[tool_fn]
impl Bare {
    /// Do nothing.
    fn noop(&self) {}
}

#[test]
fn a_documented_group_describes_its_rendered_function() {
    use toolsmith::provider::{Provider, RenderOptions};
    let tool = Memory::default().definition();
    assert_eq!(
        tool.group_description(),
        Some("Long-term facts about the user.")
    );
    let description = tool.function_spec().description;
    assert_eq!(
        description,
        "Long-term facts about the user.\n\n\
         Commands (choose one with the `command` argument):\n\
         - add: Remember a new fact.\n\
         - forget: Forget a fact by its id.\n\
         - find: List the facts that contain a word."
    );
    // What the model is shown: the rendered function's description.
    let declarations = toolsmith::ToolDeclarations {
        shed: None,
        tools: vec![tool],
    };
    let rendered = Provider::OpenAiChat
        .render_tools(&declarations, &RenderOptions::default())
        .unwrap();
    assert_eq!(rendered.tools[0]["function"]["description"], description);
    let rendered = Provider::Anthropic
        .render_tools(&declarations, &RenderOptions::default())
        .unwrap();
    assert_eq!(rendered.tools[0]["description"], description);

    // `description = "..."` wins over the doc comment.
    let lights = Lights.definition();
    assert_eq!(lights.group_description(), Some("The lights of the house."));
    assert!(
        lights
            .function_spec()
            .description
            .starts_with("The lights of the house.\n\nCommands")
    );
    // Without either, the list of commands alone, as before.
    let bare = Bare.definition();
    assert_eq!(bare.group_description(), None);
    assert_eq!(
        bare.function_spec().description,
        "Commands (choose one with the `command` argument):\n- noop: Do nothing."
    );
}

/// A group with a command named like the `shed` meta-tool: only a tool may not be named so.
struct Garden;

/// The garden.
#[tool_fn]
impl Garden {
    /// Open the shed.
    fn shed(&self) -> String {
        "the shed is open".to_owned()
    }
}

/// Commands of a derived enum, one named like the `shed` meta-tool.
#[derive(ToolArgs, Debug, PartialEq)]
enum GardenCommand {
    /// Open the shed.
    Shed,
}

#[tokio::test]
async fn a_command_may_be_named_shed() {
    let manager = manager_with(vec![Arc::new(Garden)]);
    let result = manager
        .execute_one(&call("garden", json!({"command": "shed"})))
        .await
        .unwrap();
    assert_eq!(result.content.to_text(), "the shed is open");
    let names: Vec<String> = GardenCommand::command_definitions()
        .into_iter()
        .map(|definition| definition.name)
        .collect();
    assert_eq!(names, ["shed"]);
    let arguments = ToolArguments::try_from(json!({"command": "shed"})).unwrap();
    let command: GardenCommand = ToolArgs::new("garden", &arguments).parse().unwrap();
    assert_eq!(command, GardenCommand::Shed);
}

// ---- #[derive(ToolArgs)] ----

#[derive(toolsmith::ToolArgs, Debug, PartialEq)]
struct SearchArgs {
    /// What to look for.
    query: String,
    /// At most this many hits.
    #[arg(default = "five")]
    limit: u32,
    #[arg(rename = "tag", description = "Only hits with this tag.")]
    only_tag: Option<String>,
    filters: Vec<Filter>,
}

#[test]
fn derived_struct_reads_and_describes() {
    let schema = SearchArgs::args_schema();
    assert_eq!(schema.schema()["required"], json!(["query", "filters"]));
    assert_eq!(
        schema.schema()["properties"]["tag"],
        json!({"type": "string", "description": "Only hits with this tag."})
    );
    assert_eq!(schema.schema()["additionalProperties"], false);

    let arguments =
        ToolArguments::try_from(json!({"query": "q", "tag": "t", "filters": [{"field": "x"}]}))
            .unwrap();
    let args: SearchArgs = ToolArgs::new("search", &arguments).parse().unwrap();
    assert_eq!(
        args,
        SearchArgs {
            query: "q".into(),
            limit: 5,
            only_tag: Some("t".into()),
            filters: vec![Filter {
                field: "x".into(),
                min: None
            }],
        }
    );
    let arguments = ToolArguments::try_from(
        json!({"query": "q", "filters": [{"field": "x", "minimum": "low"}]}),
    )
    .unwrap();
    let err = ToolArgs::new("search", &arguments)
        .parse::<SearchArgs>()
        .unwrap_err();
    assert!(
        err.to_string()
            .starts_with("Invalid arguments for tool 'search': /filters/0/minimum: "),
        "{err}"
    );
}

/// Arguments whose required field a model may spell in snake case.
#[derive(toolsmith::ToolArgs, Debug, PartialEq)]
struct LookupArgs {
    #[arg(rename = "queryText", description = "What to look up.")]
    query_text: String,
    /// At most this many hits.
    limit: Option<u32>,
}

#[test]
fn a_derived_struct_s_missing_field_names_an_argument_sent_under_a_close_name() {
    let read = |v: Value| {
        let arguments = ToolArguments::try_from(v).unwrap();
        ToolArgs::new("lookup", &arguments)
            .parse::<LookupArgs>()
            .map_err(|err| err.to_string())
    };
    assert_eq!(
        read(json!({"query_text": "tea", "limit": 2})),
        Err(
            "Invalid arguments for tool 'lookup': missing required argument 'queryText' \
             (for 'query_text', did you mean 'queryText'?)"
                .to_owned()
        )
    );
    assert_eq!(
        read(json!({"limit": 2, "topic": "tea"})),
        Err(
            "Invalid arguments for tool 'lookup': missing required argument 'queryText'".to_owned()
        )
    );
    assert_eq!(
        read(json!({"queryText": "tea", "query_text": "x"})),
        Ok(LookupArgs {
            query_text: "tea".into(),
            limit: None
        })
    );
}

#[derive(toolsmith::ToolArgs, Debug, PartialEq)]
enum NoteCommand {
    /// Write a note.
    Write {
        /// The note's text.
        text: String,
        pinned: Option<bool>,
    },
    /// Delete a note.
    #[arg(rename = "delete")]
    DeleteNote { id: u64 },
    /// Delete every note.
    Clear,
}

/// A command group written by hand over a derived command enum.
struct Notes {
    log: Mutex<Vec<NoteCommand>>,
}

#[async_trait]
impl ToolImpl for Notes {
    fn definition(&self) -> Tool {
        Tool::MultiCommands(
            "notes".into(),
            NoteCommand::command_definitions()
                .into_iter()
                .map(|d| d.with_category("notes"))
                .collect(),
        )
    }

    async fn execute(&self, arguments: ToolArguments) -> Result<ToolCallResult, ToolError> {
        let command: NoteCommand = ToolArgs::new("notes", &arguments).parse()?;
        let shown = format!("{command:?}");
        self.log.lock().unwrap().push(command);
        Ok(ToolCallResult::text(shown))
    }
}

#[tokio::test]
async fn derived_enum_is_a_command_group() {
    let definitions = NoteCommand::command_definitions();
    let names: Vec<&str> = definitions.iter().map(|d| d.name.as_str()).collect();
    assert_eq!(names, ["write", "delete", "clear"]);
    assert_eq!(definitions[0].description, "Write a note.");
    assert_eq!(
        definitions[0].arguments.schema()["required"],
        json!(["text"])
    );
    assert_eq!(
        definitions[2].arguments.schema(),
        &json!({"type": "object", "properties": {}, "additionalProperties": false})
    );

    let notes = Arc::new(Notes {
        log: Mutex::new(Vec::new()),
    });
    let manager = ToolCallManager::new("s");
    manager.register(notes.clone()).unwrap();
    let text = |r: ToolCallResult| r.content.to_text();
    assert_eq!(
        text(
            manager
                .execute_one(&call(
                    "notes",
                    json!({"command": "write", "text": "hi", "pinned": "true"})
                ))
                .await
                .unwrap()
        ),
        "Write { text: \"hi\", pinned: Some(true) }"
    );
    assert_eq!(
        text(
            manager
                .execute_one(&call("notes", json!({"command": "delete", "id": 4})))
                .await
                .unwrap()
        ),
        "DeleteNote { id: 4 }"
    );
    assert_eq!(
        text(
            manager
                .execute_one(&call("notes", json!({"command": "clear"})))
                .await
                .unwrap()
        ),
        "Clear"
    );
    let err = manager
        .execute_one(&call("notes", json!({"command": "delete"})))
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ToolErrorKind::InvalidArguments);
    assert_eq!(notes.log.lock().unwrap().len(), 3);

    // Read directly: an unknown command and a missing argument are named.
    let read = |v: Value| {
        let arguments = ToolArguments::try_from(v).unwrap();
        ToolArgs::new("notes", &arguments).parse::<NoteCommand>()
    };
    assert_eq!(
        read(json!({"command": "archive"})).unwrap_err().to_string(),
        "Invalid arguments for tool 'notes': /command: unknown command \"archive\"; valid commands are 'write', 'delete', 'clear'"
    );
    assert_eq!(
        read(json!({"command": "delete"})).unwrap_err().to_string(),
        "Invalid arguments for tool 'notes': missing required argument 'id'"
    );
    let long = read(json!({ "command": "y".repeat(100_000) })).unwrap_err();
    assert!(long.to_string().len() < 400, "{long}");
}

/// The default distance of a move: named like the local a derived enum reads the command into.
fn command() -> u32 {
    7
}

/// Moves, by a distance whose default function is named `command`.
#[derive(ToolArgs, Debug, PartialEq)]
enum MoveCommand {
    /// Move forward.
    Forward {
        /// How far.
        #[arg(default = "command")]
        steps: u32,
    },
}

#[test]
fn a_default_function_named_command_is_called_by_a_derived_enum() {
    let arguments = ToolArguments::try_from(json!({"command": "forward"})).unwrap();
    let read = ToolArgs::new("move", &arguments).parse::<MoveCommand>();
    assert_eq!(read.unwrap(), MoveCommand::Forward { steps: command() });
}

// ---- #[ctx] parameters ----

struct FixedContext;

#[async_trait]
impl ContextSearch for FixedContext {
    async fn search(&self, query: &str, limit: usize) -> Result<Vec<ContextHit>, ServiceError> {
        Ok((0..limit)
            .map(|i| ContextHit {
                source: format!("doc{i}"),
                text: format!("{query} #{i}"),
                score: 1.0 - i as f32 / 10.0,
            })
            .collect())
    }
}

#[derive(Default)]
struct VecMemory {
    facts: Mutex<Vec<MemoryFact>>,
}

#[async_trait]
impl MemoryAccess for VecMemory {
    async fn facts(&self) -> Result<Vec<MemoryFact>, ServiceError> {
        Ok(self.facts.lock().unwrap().clone())
    }
    async fn add(&self, text: String) -> Result<Versioned<MemoryFact>, ServiceError> {
        let mut facts = self.facts.lock().unwrap();
        let fact = MemoryFact {
            id: facts.len() as u64,
            text,
        };
        facts.push(fact.clone());
        Ok(Versioned {
            value: fact,
            version: 0,
        })
    }
    async fn remove(&self, id: u64) -> Result<Versioned<bool>, ServiceError> {
        let mut facts = self.facts.lock().unwrap();
        let before = facts.len();
        facts.retain(|f| f.id != id);
        Ok(Versioned {
            value: facts.len() < before,
            version: 0,
        })
    }
    async fn replace(&self, _id: u64, _text: String) -> Result<Versioned<bool>, ServiceError> {
        Ok(Versioned {
            value: false,
            version: 0,
        })
    }
    fn version(&self) -> u64 {
        0
    }
}

fn parts(memory: Arc<VecMemory>, state: SessionState) -> SessionParts {
    SessionParts {
        session_id: "session-7".into(),
        context: Arc::new(FixedContext),
        memory,
        embedder: None,
        state,
    }
}

/// Remembers a fact about the user.
#[tool_fn(category = "memory")]
async fn remember(
    #[ctx] memory: Arc<dyn MemoryAccess>,
    #[ctx] session: SessionParts,
    /// The fact.
    text: String,
) -> Result<String, ToolError> {
    let added = memory
        .add(text)
        .await
        .map_err(|e| ToolError::execution("remember", e))?;
    Ok(format!("{}: fact #{}", session.session_id, added.value.id))
}

struct Greeting(String);

/// Searches the session's context and greets.
#[tool_fn]
async fn recall(
    #[ctx] context: Arc<dyn ContextSearch>,
    #[ctx] greeting: State<Greeting>,
    query: String,
) -> Result<Vec<String>, ServiceError> {
    let hits = context.search(&query, 2).await?;
    Ok(hits
        .into_iter()
        .map(|h| format!("{} {}", greeting.0.0, h.text))
        .collect())
}

#[tokio::test]
async fn ctx_tools_are_constructors() {
    let memory = Arc::new(VecMemory::default());
    let constructor: Box<dyn ToolConstructor> = Remember.into();
    assert_eq!(constructor.name(), "remember");
    assert!(constructor.needs_session());
    // The schema leaves the session values out.
    let schema = Remember.definition().commands()[0]
        .arguments
        .schema()
        .clone();
    assert_eq!(
        schema["properties"]
            .as_object()
            .unwrap()
            .keys()
            .collect::<Vec<_>>(),
        ["text"]
    );

    let tool = constructor.construct(&parts(memory.clone(), SessionState::new()));
    let manager = manager_with(vec![tool]);
    let result = manager
        .execute_one(&call("remember", json!({"text": "likes tea"})))
        .await
        .unwrap();
    assert_eq!(result.content.to_text(), "session-7: fact #0");
    assert_eq!(memory.facts.lock().unwrap()[0].text, "likes tea");
    let err = manager
        .execute_one(&call("remember", json!({})))
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ToolErrorKind::InvalidArguments);
}

#[tokio::test]
async fn ctx_state_present_and_missing() {
    let mut state = SessionState::new();
    state.insert(Greeting("hi".into()));
    let tool = Box::<dyn ToolConstructor>::from(Recall)
        .construct(&parts(Arc::new(VecMemory::default()), state));
    let result = tool
        .execute(ToolArguments::try_from(json!({"query": "rust"})).unwrap())
        .await
        .unwrap();
    assert_eq!(
        result.content,
        UserModelContent::Json(json!(["hi rust #0", "hi rust #1"]))
    );

    // Without the state, the tool still registers, and every call says what was missing.
    let tool = Box::<dyn ToolConstructor>::from(Recall)
        .construct(&parts(Arc::new(VecMemory::default()), SessionState::new()));
    assert_eq!(tool.definition(), Recall.definition());
    let manager = manager_with(vec![tool]);
    let err = manager
        .execute_one(&call("recall", json!({"query": "rust"})))
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ToolErrorKind::Execution);
    assert!(err.to_string().contains("no state of type"), "{err}");
    assert!(err.to_string().contains("Greeting"), "{err}");
}

/// A value given to `with_state` as an `Arc` is kept as an `Arc<T>`, which `State<T>` does
/// not read: the error says so, where it only said to use `with_state`, already used.
#[tokio::test]
async fn ctx_state_added_as_an_arc_is_named_as_such() {
    let mut state = SessionState::new();
    state.insert(Arc::new(Greeting("hi".into())));
    let tool = Box::<dyn ToolConstructor>::from(Recall)
        .construct(&parts(Arc::new(VecMemory::default()), state));
    let manager = manager_with(vec![tool]);
    let err = manager
        .execute_one(&call("recall", json!({"query": "rust"})))
        .await
        .unwrap_err();
    let message = err.to_string();
    let greeting = std::any::type_name::<Greeting>();
    assert!(
        message.ends_with(&format!(
            "no state of type `{greeting}` was added to the shed (use `ToolShed::with_state`): \
             an `Arc<{greeting}>` was, which `State<{greeting}>` does not read; give \
             `with_state` the value itself (`State` shares it), or take `State<Arc<{greeting}>>`"
        )),
        "{message}"
    );
}

// ---- `crate = "..."` ----

mod renamed {
    pub use toolsmith as tools;
}

/// Uses a re-exported path to the API.
#[tool_fn(crate = "crate::macros::renamed::tools")]
fn through_path() -> &'static str {
    "ok"
}

/// The same, under the specification's name for the key.
#[tool_fn(
    crate_path = "crate::macros::renamed::tools",
    name = "through_crate_path"
)]
fn through_crate_path() -> &'static str {
    "ok"
}

#[derive(toolsmith::ToolArgs)]
#[toolsmith(crate = "crate::macros::renamed::tools")]
struct ThroughPathArgs {
    /// A value.
    value: i32,
}

#[test]
fn crate_path_override() {
    assert_eq!(ThroughPath.definition().name(), "through_path");
    assert_eq!(ThroughCratePath.definition().name(), "through_crate_path");
    assert_eq!(
        ThroughPathArgs::args_schema().schema()["required"],
        json!(["value"])
    );
    let arguments = ToolArguments::try_from(json!({"value": 3})).unwrap();
    let args: ThroughPathArgs = ToolArgs::new("t", &arguments).parse().unwrap();
    assert_eq!(args.value, 3);
}

#[test]
fn definitions_register_as_they_are() {
    // Every generated definition passes the manager's registration checks.
    let manager = ToolCallManager::new("s");
    let tools: Vec<Arc<dyn ToolImpl>> = vec![
        Arc::new(Add),
        Arc::new(KitchenSink),
        Arc::new(Memory::default()),
        Arc::new(Stats),
        Arc::new(ThroughPath),
    ];
    for tool in tools {
        manager.register(tool).unwrap();
    }
    manager
        .register(Arc::new(Notes {
            log: Mutex::new(Vec::new()),
        }))
        .unwrap();
    assert_eq!(manager.len(), 6);
}

/// A parameter named like the generated code's own variables.
#[tool_fn]
fn echo_arguments(#[ctx] arguments: SessionParts, output: String) -> String {
    format!("{} {output}", arguments.session_id)
}

#[tokio::test]
async fn parameter_names_do_not_clash_with_generated_code() {
    let tool = Box::<dyn ToolConstructor>::from(EchoArguments)
        .construct(&parts(Arc::new(VecMemory::default()), SessionState::new()));
    let result = tool
        .execute(ToolArguments::try_from(json!({"output": "x"})).unwrap())
        .await
        .unwrap();
    assert_eq!(result.content.to_text(), "session-7 x");
}

/// Shouts a text, asynchronously.
#[tool_fn(name = "shout", description = "Repeat the text in capitals.")]
async fn shout_async(text: &str, times: Option<usize>) -> String {
    tokio::task::yield_now().await;
    text.to_uppercase().repeat(times.unwrap_or(1))
}

#[tokio::test]
async fn async_str_parameter_and_description_override() {
    let tool = ShoutAsync.definition();
    assert_eq!(tool.name(), "shout");
    assert_eq!(
        tool.commands()[0].description,
        "Repeat the text in capitals."
    );
    let manager = manager_with(vec![Arc::new(ShoutAsync)]);
    let result = manager
        .execute_one(&call("shout", json!({"text": "hey", "times": "2"})))
        .await
        .unwrap();
    assert_eq!(result.content.to_text(), "HEYHEY");
}

#[derive(Debug, Default, Clone, Deserialize, Serialize, JsonSchema)]
struct Range {
    low: i64,
    high: i64,
}

/// A range that commands can widen.
#[tool_fn(name = "range")]
impl Range {
    /// The range covering this one and another.
    fn union(&self, other: Self) -> Self {
        Self {
            low: self.low.min(other.low),
            high: self.high.max(other.high),
        }
    }
}

#[tokio::test]
async fn self_in_command_types_means_the_impl_type() {
    let range = Range { low: 0, high: 5 };
    let definition = range.definition();
    let union = &definition.commands()[0];
    assert_eq!(
        union.arguments.schema()["properties"]["other"]["required"],
        json!(["low", "high"])
    );
    assert_eq!(union.returns.as_ref().unwrap().schema()["type"], "object");
    let result = range
        .execute(
            ToolArguments::try_from(json!({"command": "union", "other": {"low": -3, "high": 2}}))
                .unwrap(),
        )
        .await
        .unwrap();
    assert_eq!(
        result.content,
        UserModelContent::Json(json!({"low": -3, "high": 5}))
    );
}

// ---- Synchronous answers (`execute_now`) and one-pass reading ----

/// What `tool.execute_now` answers, as the manager asks it: with no answer yet.
fn answered_now(
    tool: &(impl ToolImpl + ?Sized),
    arguments: &ToolArguments,
) -> Option<Result<ToolCallResult, ToolError>> {
    let mut answer = None;
    tool.execute_now(arguments, &mut answer);
    answer
}

#[test]
fn synchronous_functions_and_commands_answer_without_a_future() {
    let arguments = |v: Value| ToolArguments::try_from(v).unwrap();
    // A plain function answers at once; an `async` one leaves the call to `execute`.
    let answer = answered_now(&Divide, &arguments(json!({"a": 7, "b": 2})));
    assert_eq!(answer.unwrap().unwrap().content.to_text(), "3");
    assert!(answered_now(&Add, &arguments(json!({"a": 1, "b": 2}))).is_none());
    // Only a tool with synchronous calls asks the manager to try `execute_now`.
    assert!(Divide.may_answer_now());
    assert!(!Add.may_answer_now());
    // Reading errors are answers too, naming the tool and the argument.
    let err = answered_now(&Divide, &arguments(json!({"a": 7})))
        .unwrap()
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "Invalid arguments for tool 'divide': missing required argument 'b'"
    );

    // In a group, the synchronous commands answer; the `async` ones go through `execute`.
    let memory = Memory::default();
    memory.facts.lock().unwrap().push("tea is hot".into());
    assert!(memory.may_answer_now());
    let found = answered_now(
        &memory,
        &arguments(json!({"command": "find", "word": "tea"})),
    )
    .expect("`find` is synchronous")
    .unwrap();
    assert_eq!(found.content, UserModelContent::Json(json!(["tea is hot"])));
    assert!(answered_now(&memory, &arguments(json!({"command": "add", "text": "x"}))).is_none());
    let unknown = answered_now(&memory, &arguments(json!({"command": "drop"})))
        .expect("an unknown command is answered")
        .unwrap_err();
    assert_eq!(
        unknown.to_string(),
        "Invalid arguments for tool 'memory': /command: unknown command \"drop\"; valid commands are 'add', 'forget', 'find'"
    );
    let missing = answered_now(&memory, &arguments(json!({"word": "tea"})))
        .expect("a call without a command is answered")
        .unwrap_err();
    assert_eq!(missing.kind(), ToolErrorKind::InvalidArguments);
    assert!(missing.to_string().contains("'command'"), "{missing}");
}

#[tokio::test]
async fn execute_and_execute_now_agree() {
    let arguments = ToolArguments::try_from(json!({"a": "9", "b": 3})).unwrap();
    let now = answered_now(&Divide, &arguments).unwrap().unwrap();
    let later = Divide.execute(arguments).await.unwrap();
    assert_eq!(now, later);
    let memory = Memory::default();
    let added = memory
        .execute(ToolArguments::try_from(json!({"command": "add", "text": "tea"})).unwrap())
        .await
        .unwrap();
    assert_eq!(added.content.to_text(), "fact #0");
    // `execute` on a synchronous command goes through `execute_now`.
    let found = memory
        .execute(ToolArguments::try_from(json!({"command": "find", "word": "tea"})).unwrap())
        .await
        .unwrap();
    assert_eq!(found.content, UserModelContent::Json(json!(["tea"])));
    let err = memory
        .execute(ToolArguments::try_from(json!({"command": "drop"})).unwrap())
        .await
        .unwrap_err();
    assert!(
        err.to_string().contains("unknown command \"drop\""),
        "{err}"
    );
}

#[test]
fn one_pass_reading_takes_arguments_in_any_order() {
    let read = |v: Value| {
        let arguments = ToolArguments::try_from(v).unwrap();
        ToolArgs::new("search", &arguments).parse::<SearchArgs>()
    };
    let expected = SearchArgs {
        query: "q".into(),
        limit: 7,
        only_tag: None,
        filters: vec![],
    };
    // Any order, unknown arguments skipped, `null` read as absent (the default, or `None`).
    assert_eq!(
        read(json!({"filters": [], "extra": 1, "limit": "7", "tag": null, "query": "q"})).unwrap(),
        expected
    );
    assert_eq!(
        read(json!({"query": "q", "filters": [], "limit": null})).unwrap(),
        SearchArgs {
            limit: 5,
            ..expected
        }
    );
    // A required argument absent or `null` is missing; a bad value names its path.
    for missing in [
        json!({"filters": []}),
        json!({"query": null, "filters": []}),
    ] {
        assert_eq!(
            read(missing).unwrap_err().to_string(),
            "Invalid arguments for tool 'search': missing required argument 'query'"
        );
    }
    let err = read(json!({"query": "q", "filters": [], "limit": "many"})).unwrap_err();
    assert!(
        err.to_string()
            .starts_with("Invalid arguments for tool 'search': /limit: "),
        "{err}"
    );
}

/// A group whose commands are all synchronous: `execute` answers through `execute_now`.
#[derive(Default)]
struct Counter {
    count: Mutex<i64>,
}

/// A counter.
#[tool_fn(name = "counter")]
impl Counter {
    /// Adds to the count.
    fn bump(&self, by: i64) -> i64 {
        let mut count = self.count.lock().unwrap();
        *count += by;
        *count
    }

    /// The count.
    fn get(&self) -> i64 {
        *self.count.lock().unwrap()
    }
}

#[tokio::test]
async fn a_group_of_synchronous_commands_answers_every_way() {
    let counter = Arc::new(Counter::default());
    let arguments = |v: Value| ToolArguments::try_from(v).unwrap();
    let bumped = answered_now(&*counter, &arguments(json!({"command": "bump", "by": "2"})))
        .expect("synchronous")
        .unwrap();
    assert_eq!(bumped.content.to_text(), "2");
    let got = counter
        .execute(arguments(json!({"command": "get"})))
        .await
        .unwrap();
    assert_eq!(got.content.to_text(), "2");
    let err = counter
        .execute(arguments(json!({"command": "reset"})))
        .await
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "Invalid arguments for tool 'counter': /command: unknown command \"reset\"; valid commands are 'bump', 'get'"
    );
    let manager = manager_with(vec![counter.clone()]);
    let bumped = manager
        .execute_one(&call("counter", json!({"command": "bump", "by": 40})))
        .await
        .unwrap();
    assert_eq!(bumped.content.to_text(), "42");
    let err = manager
        .execute_one(&call("counter", json!({"command": "bump"})))
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ToolErrorKind::InvalidArguments);
}

// ---- Hygiene: no prelude in scope ----

#[no_implicit_prelude]
mod without_prelude {
    /// Echoes a flag.
    #[::toolsmith::tool_fn(read_only, idempotent)]
    pub(super) fn echo_flag(
        /// The flag.
        flag: bool,
    ) -> bool {
        flag
    }

    /// Recalls what the session's memory holds (a constructor struct: `#[ctx]`).
    #[::toolsmith::tool_fn]
    pub(super) async fn recall_plain(
        #[ctx] memory: ::std::sync::Arc<dyn ::toolsmith::MemoryAccess>,
        /// What to recall.
        query: ::std::string::String,
    ) -> ::std::string::String {
        let _ = &memory;
        query
    }

    /// Adds a bound step.
    #[::toolsmith::tool_fn]
    pub(super) fn add_step(#[bind] step: u32, x: u32) -> u32 {
        x + step
    }

    pub(super) struct Undescribed;

    #[::toolsmith::tool_fn]
    impl Undescribed {
        /// Doubles a number.
        fn double(&self, x: u32) -> u32 {
            x * 2
        }
    }
}

/// Two `#[ctx]` values, the first named like the constructor's own parameter.
#[tool_fn]
async fn recall_with_parts(
    #[ctx] parts: SessionParts,
    #[ctx] memory: Arc<dyn MemoryAccess>,
    /// What to recall.
    query: String,
) -> String {
    let _ = (&parts, &memory);
    query
}

#[test]
fn generated_names_stay_apart_from_the_users() {
    let tool = ToolConstructor::construct(Box::new(RecallWithParts), &SessionParts::in_memory("s"));
    assert_eq!(tool.definition().name(), "recall_with_parts");
    let Tool::MultiCommands(name, _) = without_prelude::Undescribed.definition() else {
        panic!("a group");
    };
    assert_eq!(name, "undescribed");
}

#[tokio::test]
async fn ctx_and_bind_tools_compile_without_the_prelude() {
    let recall = ToolConstructor::construct(
        Box::new(without_prelude::RecallPlain),
        &SessionParts::in_memory("s"),
    );
    assert_eq!(recall.definition().name(), "recall_plain");
    let manager = ToolCallManager::new("s");
    manager.register(recall).unwrap();
    manager
        .register(Arc::new(without_prelude::AddStep::new(3)))
        .unwrap();
    let recalled = manager
        .execute_one(&call("recall_plain", json!({"query": "tea"})))
        .await
        .unwrap();
    assert_eq!(recalled.content.to_text(), "tea");
    let added = manager
        .execute_one(&call("add_step", json!({"x": 4})))
        .await
        .unwrap();
    assert_eq!(added.content.to_text(), "7");
}

#[tokio::test]
async fn a_tool_with_hints_compiles_without_the_prelude() {
    let manager = ToolCallManager::new("s");
    manager
        .register(Arc::new(without_prelude::EchoFlag))
        .unwrap();
    let hints = without_prelude::EchoFlag.definition().commands()[0].annotations;
    assert_eq!(
        (hints.read_only, hints.idempotent),
        (Some(true), Some(true))
    );
    let result = manager
        .execute_one(&call("echo_flag", json!({"flag": true})))
        .await
        .unwrap();
    assert_eq!(result.content.to_text(), "true");
}

/// Requests over HTTP.
#[derive(Debug, ToolArgs)]
#[expect(dead_code, reason = "only the commands' names are read")]
enum HttpRequests {
    /// Fetches a URL.
    GetURL {
        /// The URL.
        url: String,
    },
    /// Parses a JSON body.
    ParseJSONBody {
        /// The body.
        body: String,
    },
}

#[test]
fn a_run_of_capitals_is_one_word_of_a_command_name() {
    let names: Vec<String> = <HttpRequests as ToolCommands>::command_definitions()
        .into_iter()
        .map(|command| command.name)
        .collect();
    assert_eq!(names, ["get_url", "parse_json_body"]);
}

#[test]
fn a_tool_fn_definition_is_shared_by_every_instance() {
    // A tool function: every registration of it (every session) holds one definition.
    let (first, again) = (Add.shared_definition(), Add.shared_definition());
    assert!(Arc::ptr_eq(&first, &again));
    assert_eq!(Add.definition(), *first);
    assert_eq!(first.name(), "add");

    // A command group, two instances.
    let group = Memory::default().shared_definition();
    assert!(Arc::ptr_eq(&group, &Memory::default().shared_definition()));
    assert_eq!(Memory::default().definition(), *group);
    assert!(!Arc::ptr_eq(&first, &group), "each tool has its own");

    // A tool built from `#[ctx]` values, in two sessions.
    let build = || {
        let constructor: Box<dyn ToolConstructor> = Box::new(Remember);
        constructor.construct(&parts(Arc::new(VecMemory::default()), SessionState::new()))
    };
    let (one, other) = (build(), build());
    assert!(Arc::ptr_eq(
        &one.shared_definition(),
        &other.shared_definition()
    ));
    assert_eq!(one.definition(), Remember.definition());
    assert_eq!(one.shared_definition().name(), "remember");
}

/// A hand-written tool that takes its name from the instance.
struct NamedByInstance(&'static str);

#[async_trait]
impl ToolImpl for NamedByInstance {
    fn definition(&self) -> Tool {
        Tool::SingleCommand(toolsmith::ToolDefinition::new(
            self.0,
            "Named by its instance.",
            toolsmith::Args::new(json!({"type": "object"})),
        ))
    }

    async fn execute(&self, _: ToolArguments) -> Result<ToolCallResult, ToolError> {
        Ok(ToolCallResult::text(self.0))
    }
}

#[test]
fn a_tool_whose_definition_depends_on_the_instance_keeps_its_own() {
    // Shared by equality only: each instance is registered under its own name.
    for name in ["first", "second", "first", "third"] {
        let manager = manager_with(vec![Arc::new(NamedByInstance(name))]);
        assert_eq!(manager.names(), [name]);
        assert_eq!(NamedByInstance(name).shared_definition().name(), name);
    }
}

static COUNTED_BUILDS: AtomicUsize = AtomicUsize::new(0);

/// A hand-written tool that counts how often its definition is built.
struct CountsItsDefinitions;

#[async_trait]
impl ToolImpl for CountsItsDefinitions {
    fn definition(&self) -> Tool {
        COUNTED_BUILDS.fetch_add(1, Ordering::SeqCst);
        Tool::SingleCommand(toolsmith::ToolDefinition::new(
            "counted",
            "Counts its definitions.",
            toolsmith::Args::new(json!({"type": "object"})),
        ))
    }

    async fn execute(&self, _: ToolArguments) -> Result<ToolCallResult, ToolError> {
        Ok(ToolCallResult::text("counted"))
    }
}

#[test]
fn a_session_builds_a_ready_tool_s_definition_once() {
    let before = COUNTED_BUILDS.load(Ordering::SeqCst);
    let manager = toolsmith::ToolShed::new()
        .tool(CountsItsDefinitions)
        .build(SessionParts::in_memory("s"))
        .unwrap();
    assert_eq!(manager.names(), ["counted"]);
    // Asked once for its name when added; the session registers it with that one.
    assert_eq!(COUNTED_BUILDS.load(Ordering::SeqCst) - before, 1);
}
