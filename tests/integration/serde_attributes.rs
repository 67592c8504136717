//! `#[serde(...)]` on a `#[derive(ToolArgs)]` type: every key the derive honours, read
//! through the derived reader and checked against the derived schema, through a manager
//! (which validates the arguments against the schema before the reader sees them), so that
//! schema, reader and the type's serde form are seen to agree.

use std::fmt::Debug;
use std::marker::PhantomData;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde::Serialize;
use serde_json::{Value, json};
use toolsmith::async_trait;
use toolsmith::{
    ArgsSchema, FromToolArgs, Tool, ToolArgs, ToolArguments, ToolCallManager, ToolCallRequest,
    ToolCallResult, ToolCommands, ToolDefinition, ToolError, ToolErrorKind, ToolImpl,
};

/// A tool over a derived type `T`: its schema is `T`'s, and a call answers with what `T`
/// read, as `Debug` text.
struct Reads<T> {
    definition: Tool,
    read: PhantomData<fn() -> T>,
}

impl<T: ArgsSchema> Reads<T> {
    fn single() -> Self {
        Self {
            definition: Tool::SingleCommand(ToolDefinition::new(
                "t",
                "Reads its arguments.",
                T::args_schema(),
            )),
            read: PhantomData,
        }
    }
}

impl<T: ToolCommands> Reads<T> {
    fn group() -> Self {
        Self {
            definition: Tool::MultiCommands("t".into(), T::command_definitions()),
            read: PhantomData,
        }
    }
}

#[async_trait]
impl<T: FromToolArgs + Debug + 'static> ToolImpl for Reads<T> {
    fn definition(&self) -> Tool {
        self.definition.clone()
    }

    async fn execute(&self, arguments: ToolArguments) -> Result<ToolCallResult, ToolError> {
        let read: T = ToolArgs::new("t", &arguments).parse()?;
        Ok(ToolCallResult::text(format!("{read:?}")))
    }
}

/// Registers `tool` and calls it with `arguments`: the `Debug` text of what was read, or the
/// error.
async fn run(tool: impl ToolImpl + 'static, arguments: Value) -> Result<String, ToolError> {
    let manager = ToolCallManager::new("serde");
    manager.register(std::sync::Arc::new(tool)).unwrap();
    let arguments = ToolArguments::try_from(arguments).unwrap();
    let request = ToolCallRequest::new("call-1", "t", arguments);
    manager
        .execute_one(&request)
        .await
        .map(|result| result.content.to_text())
}

fn ten() -> u32 {
    10
}

/// Not readable from JSON, and without a schema: only a skipped field can hold it.
#[derive(Debug, Default, PartialEq)]
struct Cache;

#[derive(ToolArgs, Serialize, Debug, PartialEq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct Search {
    /// What to look for.
    #[serde(rename = "q")]
    search_text: String,
    /// At most this many hits.
    #[serde(default)]
    max_hits: u32,
    /// Hits per page.
    #[serde(default = "ten")]
    page_size: u32,
    /// Only hits with this tag.
    #[serde(rename(serialize = "tag", deserialize = "onlyTag"))]
    only_tag: Option<String>,
    /// A note, written only when there is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[arg(rename = "note_text")]
    #[serde(rename = "note_text")]
    note: Option<String>,
    #[serde(skip)]
    cache: Cache,
    #[serde(skip_deserializing, default = "ten")]
    seen: u32,
}

#[tokio::test]
async fn a_struct_is_named_defaulted_and_skipped_as_its_serde_attributes_say() {
    let schema = Search::args_schema();
    let properties: Vec<&str> = schema.property_names().collect();
    assert_eq!(
        properties,
        ["q", "maxHits", "pageSize", "onlyTag", "note_text"]
    );
    assert_eq!(schema.schema()["required"], json!(["q"]));
    assert_eq!(
        schema.schema()["properties"]["q"]["description"],
        "What to look for."
    );

    let read = run(
        Reads::<Search>::single(),
        json!({"q": "rust", "onlyTag": "t"}),
    )
    .await
    .unwrap();
    assert_eq!(
        read,
        format!(
            "{:?}",
            Search {
                search_text: "rust".into(),
                max_hits: 0,
                page_size: 10,
                only_tag: Some("t".into()),
                note: None,
                cache: Cache,
                seen: 10,
            }
        )
    );
    let read = run(
        Reads::<Search>::single(),
        json!({"q": "rust", "maxHits": "3", "pageSize": 7, "note_text": "n"}),
    )
    .await
    .unwrap();
    assert!(
        read.contains("max_hits: 3, page_size: 7, only_tag: None, note: Some(\"n\")"),
        "{read}"
    );

    // The Rust names, and the skipped fields, are no arguments.
    for wrong in [
        json!({"search_text": "rust"}),
        json!({"q": "rust", "max_hits": 3}),
        json!({"q": "rust", "cache": 1}),
        json!({"q": "rust", "seen": 1}),
    ] {
        let err = run(Reads::<Search>::single(), wrong.clone())
            .await
            .unwrap_err();
        assert_eq!(
            err.kind(),
            ToolErrorKind::InvalidArguments,
            "{wrong}: {err}"
        );
    }
}

#[test]
fn the_schema_names_what_serde_writes_for_fields_renamed_alike() {
    let search = Search {
        search_text: "rust".into(),
        max_hits: 1,
        page_size: 2,
        only_tag: None,
        note: Some("n".into()),
        cache: Cache,
        seen: 0,
    };
    let written = serde_json::to_value(&search).unwrap();
    let written: Vec<&str> = written
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    // `only_tag` is written as `tag` and read as `onlyTag`; `seen` is written only.
    assert_eq!(
        written,
        ["q", "maxHits", "pageSize", "tag", "note_text", "seen"]
    );
    let schema = Search::args_schema();
    for name in ["q", "maxHits", "pageSize", "note_text"] {
        assert!(schema.property_names().any(|p| p == name), "{name}");
    }
}

#[derive(ToolArgs, Debug, PartialEq)]
#[serde(rename_all(serialize = "UPPERCASE", deserialize = "SCREAMING-KEBAB-CASE"))]
struct Shout {
    loud_text: String,
    #[arg(rename = "v")]
    volume: Option<u8>,
}

#[tokio::test]
async fn rename_all_reads_by_its_deserialize_case_and_arg_rename_wins() {
    let schema = Shout::args_schema();
    let properties: Vec<&str> = schema.property_names().collect();
    assert_eq!(properties, ["LOUD-TEXT", "v"]);
    let read = run(Reads::<Shout>::single(), json!({"LOUD-TEXT": "hi", "v": 3}))
        .await
        .unwrap();
    assert_eq!(
        read,
        format!(
            "{:?}",
            Shout {
                loud_text: "hi".into(),
                volume: Some(3)
            }
        )
    );
}

#[derive(ToolArgs, Debug, PartialEq)]
#[serde(default)]
struct Page {
    size: u32,
    #[serde(default = "ten")]
    number: u32,
    #[serde(skip)]
    label: String,
}

impl Default for Page {
    fn default() -> Self {
        Self {
            size: 25,
            number: 1,
            label: "from the struct's default".into(),
        }
    }
}

#[derive(ToolArgs, Debug, PartialEq)]
#[serde(default = "Settings::quiet")]
struct Settings {
    verbose: bool,
}

impl Settings {
    fn quiet() -> Self {
        Self { verbose: false }
    }
}

#[tokio::test]
async fn a_struct_default_fills_every_field_left_out() {
    assert_eq!(Page::args_schema().schema().get("required"), None);
    let read = run(Reads::<Page>::single(), json!({})).await.unwrap();
    assert_eq!(
        read,
        format!(
            "{:?}",
            Page {
                size: 25,
                number: 10,
                label: "from the struct's default".into(),
            }
        )
    );
    let read = run(Reads::<Page>::single(), json!({"size": 5}))
        .await
        .unwrap();
    assert!(read.starts_with("Page { size: 5, number: 10,"), "{read}");

    assert_eq!(Settings::args_schema().schema().get("required"), None);
    let read = run(Reads::<Settings>::single(), json!({})).await.unwrap();
    assert_eq!(read, "Settings { verbose: false }");
    let read = run(Reads::<Settings>::single(), json!({"verbose": "true"}))
        .await
        .unwrap();
    assert_eq!(read, "Settings { verbose: true }");
}

/// How many times each struct's default below was built (one counter a struct, each read by
/// one test).
static COUNTED_DEFAULTS: AtomicUsize = AtomicUsize::new(0);
static COUNTED_SKIPPED_DEFAULTS: AtomicUsize = AtomicUsize::new(0);
static COUNTED_RANGE_DEFAULTS: AtomicUsize = AtomicUsize::new(0);

#[derive(ToolArgs, Debug)]
#[serde(default)]
struct Counted {
    first: u32,
    second: String,
    third: bool,
    #[serde(default)]
    own: u32,
}

impl Default for Counted {
    fn default() -> Self {
        COUNTED_DEFAULTS.fetch_add(1, Ordering::SeqCst);
        Self {
            first: 1,
            second: "two".into(),
            third: true,
            own: 4,
        }
    }
}

#[derive(ToolArgs, Debug)]
#[serde(default)]
struct CountedWithSkipped {
    first: u32,
    second: u32,
    #[serde(skip)]
    kept: String,
}

impl Default for CountedWithSkipped {
    fn default() -> Self {
        COUNTED_SKIPPED_DEFAULTS.fetch_add(1, Ordering::SeqCst);
        Self {
            first: 1,
            second: 2,
            kept: "kept".into(),
        }
    }
}

#[derive(ToolArgs, Debug)]
#[serde(default = "counted_range")]
struct CountedRange {
    low: u32,
    high: u32,
}

fn counted_range() -> CountedRange {
    COUNTED_RANGE_DEFAULTS.fetch_add(1, Ordering::SeqCst);
    CountedRange { low: 1, high: 9 }
}

/// Reads `T` from `arguments` directly (no schema check), and how many times `counter` went up
/// meanwhile.
fn read_counting<T: FromToolArgs>(counter: &AtomicUsize, arguments: Value) -> (T, usize) {
    let arguments = ToolArguments::try_from(arguments).unwrap();
    let before = counter.load(Ordering::SeqCst);
    let read: T = ToolArgs::new("t", &arguments).parse().unwrap();
    (read, counter.load(Ordering::SeqCst) - before)
}

#[test]
fn a_struct_default_is_built_once_for_every_field_left_out_and_not_for_none() {
    // Three fields left out take their values from one default value (a field's own
    // `#[serde(default)]` is `u32`'s, not the struct's).
    let (read, built) = read_counting::<Counted>(&COUNTED_DEFAULTS, json!({}));
    assert_eq!(built, 1);
    assert_eq!(
        (read.first, read.second.as_str(), read.third, read.own),
        (1, "two", true, 0)
    );
    let (read, built) = read_counting::<Counted>(&COUNTED_DEFAULTS, json!({"second": "2"}));
    assert_eq!(built, 1);
    assert_eq!(
        (read.first, read.second.as_str(), read.third),
        (1, "2", true)
    );
    // Nothing left out that takes the struct's default: it is not built.
    let (read, built) = read_counting::<Counted>(
        &COUNTED_DEFAULTS,
        json!({"first": 5, "second": "s", "third": false}),
    );
    assert_eq!(built, 0);
    assert_eq!(
        (read.first, read.second.as_str(), read.third, read.own),
        (5, "s", false, 0)
    );

    // A skipped field takes its value from the struct's default on every read: built once,
    // and the fields left out share it.
    let (read, built) = read_counting::<CountedWithSkipped>(&COUNTED_SKIPPED_DEFAULTS, json!({}));
    assert_eq!(built, 1);
    assert_eq!(
        (read.first, read.second, read.kept.as_str()),
        (1, 2, "kept")
    );
    let (read, built) = read_counting::<CountedWithSkipped>(
        &COUNTED_SKIPPED_DEFAULTS,
        json!({"first": 7, "second": 8}),
    );
    assert_eq!(built, 1);
    assert_eq!(
        (read.first, read.second, read.kept.as_str()),
        (7, 8, "kept")
    );

    // `default = "path"` alike.
    let (read, built) = read_counting::<CountedRange>(&COUNTED_RANGE_DEFAULTS, json!({}));
    assert_eq!(built, 1);
    assert_eq!((read.low, read.high), (1, 9));
    let (read, built) =
        read_counting::<CountedRange>(&COUNTED_RANGE_DEFAULTS, json!({"low": 3, "high": 4}));
    assert_eq!(built, 0);
    assert_eq!((read.low, read.high), (3, 4));

    // A read that fails builds none.
    let arguments = ToolArguments::try_from(json!({"first": "not a number"})).unwrap();
    let before = COUNTED_DEFAULTS.load(Ordering::SeqCst);
    let err = ToolArgs::new("t", &arguments)
        .parse::<Counted>()
        .unwrap_err();
    assert_eq!(err.kind(), ToolErrorKind::InvalidArguments, "{err}");
    assert!(err.to_string().contains("first"), "{err}");
    assert_eq!(COUNTED_DEFAULTS.load(Ordering::SeqCst), before);
}

/// Commands whose names hold an underscore already, under the kebab cases: serde makes
/// every underscore a hyphen (`Foo_Bar` is `foo--bar`), so the command names must too.
#[allow(non_camel_case_types)]
#[derive(ToolArgs, Debug, PartialEq)]
#[serde(tag = "command", rename_all = "kebab-case")]
enum KebabCommand {
    /// One.
    Add_Fact {},
    /// Two.
    Tag_fact {},
}

#[allow(non_camel_case_types)]
#[derive(ToolArgs, Debug, PartialEq)]
#[serde(tag = "command", rename_all = "SCREAMING-KEBAB-CASE")]
enum ScreamingKebabCommand {
    /// One.
    Add_Fact {},
    /// Two.
    Tag_fact {},
}

/// The same variants' names as serde writes them.
#[allow(non_camel_case_types)]
#[derive(Serialize)]
#[serde(rename_all = "kebab-case")]
enum KebabNames {
    Add_Fact,
    Tag_fact,
}

#[allow(non_camel_case_types)]
#[derive(Serialize)]
#[serde(rename_all = "SCREAMING-KEBAB-CASE")]
enum ScreamingKebabNames {
    Add_Fact,
    Tag_fact,
}

#[test]
fn kebab_cases_name_commands_with_underscores_as_serde_does() {
    let names = |definitions: Vec<toolsmith::ToolDefinition>| -> Vec<String> {
        definitions.into_iter().map(|d| d.name).collect()
    };
    let serde_names = |values: [serde_json::Value; 2]| -> Vec<String> {
        values
            .into_iter()
            .map(|v| v.as_str().unwrap().to_owned())
            .collect()
    };
    let kebab = serde_names([
        serde_json::to_value(KebabNames::Add_Fact).unwrap(),
        serde_json::to_value(KebabNames::Tag_fact).unwrap(),
    ]);
    assert_eq!(kebab, ["add--fact", "tag-fact"]);
    assert_eq!(names(KebabCommand::command_definitions()), kebab);
    let screaming = serde_names([
        serde_json::to_value(ScreamingKebabNames::Add_Fact).unwrap(),
        serde_json::to_value(ScreamingKebabNames::Tag_fact).unwrap(),
    ]);
    assert_eq!(
        names(ScreamingKebabCommand::command_definitions()),
        screaming
    );
}

/// Not a command the model can send.
#[derive(Debug, PartialEq)]
struct Internal;

#[derive(ToolArgs, Debug, PartialEq)]
#[serde(
    tag = "command",
    rename_all = "kebab-case",
    rename_all_fields = "camelCase"
)]
enum FactCommand {
    /// Remember a fact.
    AddFact {
        fact_text: String,
        #[serde(default)]
        pinned_first: bool,
    },
    /// Tag a fact.
    #[serde(rename_all = "SCREAMING_SNAKE_CASE")]
    TagFact { fact_id: u64, tag_name: String },
    /// Forget every fact.
    #[serde(rename = "wipe")]
    Clear,
    #[serde(skip_deserializing)]
    Replay(Internal),
    #[serde(skip)]
    Reindex {
        #[serde(skip)]
        cache: Cache,
    },
}

#[tokio::test]
async fn a_command_enum_names_commands_and_their_arguments_as_serde_says() {
    let definitions = FactCommand::command_definitions();
    let names: Vec<&str> = definitions.iter().map(|d| d.name.as_str()).collect();
    assert_eq!(names, ["add-fact", "tag-fact", "wipe"]);
    let arguments = |i: usize| -> Vec<String> {
        definitions[i]
            .arguments
            .property_names()
            .map(str::to_owned)
            .collect()
    };
    assert_eq!(arguments(0), ["factText", "pinnedFirst"]);
    assert_eq!(arguments(1), ["FACT_ID", "TAG_NAME"]);
    assert_eq!(
        definitions[0].arguments.schema()["required"],
        json!(["factText"])
    );

    let read = run(
        Reads::<FactCommand>::group(),
        json!({"command": "add-fact", "factText": "likes tea"}),
    )
    .await
    .unwrap();
    assert_eq!(
        read,
        format!(
            "{:?}",
            FactCommand::AddFact {
                fact_text: "likes tea".into(),
                pinned_first: false
            }
        )
    );
    let read = run(
        Reads::<FactCommand>::group(),
        json!({"command": "tag-fact", "FACT_ID": "4", "TAG_NAME": "food"}),
    )
    .await
    .unwrap();
    assert_eq!(
        read,
        format!(
            "{:?}",
            FactCommand::TagFact {
                fact_id: 4,
                tag_name: "food".into()
            }
        )
    );
    let read = run(Reads::<FactCommand>::group(), json!({"command": "wipe"}))
        .await
        .unwrap();
    assert_eq!(read, "Clear");

    // The Rust names and the skipped variants are no commands.
    for command in ["clear", "AddFact", "replay", "reindex"] {
        let err = run(Reads::<FactCommand>::group(), json!({"command": command}))
            .await
            .unwrap_err();
        assert_eq!(
            err.kind(),
            ToolErrorKind::InvalidArguments,
            "{command}: {err}"
        );
    }
    // Read without a manager, an unknown command lists the commands there are.
    let arguments = ToolArguments::try_from(json!({"command": "replay"})).unwrap();
    let err = ToolArgs::new("t", &arguments)
        .parse::<FactCommand>()
        .unwrap_err();
    assert!(
        err.to_string()
            .ends_with("valid commands are 'add-fact', 'tag-fact', 'wipe'"),
        "{err}"
    );
    let _ = FactCommand::Replay(Internal);
    let _ = FactCommand::Reindex { cache: Cache };
}
