//! Property test: each provider's recorded response (`tests/fixtures/providers/*/response.json`
//! and `text/response.txt`), broken the ways a model or a proxy breaks them: bytes flipped,
//! the text cut short, values of the wrong type, huge strings, deep nesting (as text inside
//! an arguments string, inline in the text, and as a value built by the caller), duplicate
//! keys. Reading the calls gives `Ok` or `Err`, never a panic or an abort; every call read
//! runs through `execute_one`, and every outcome renders.
//!
//! Runs on a thread with a Tokio worker's 2 MiB stack, where an unbounded recursion aborts
//! the test binary. The case count is kept small, so that the whole test takes a few
//! seconds; each case applies several mutations at once.

use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use serde_json::{Map, Value};
use toolsmith::provider::{Provider, parse_text_calls};
use toolsmith::{MAX_JSON_DEPTH, ToolCallManager};

use crate::support::deep::{self, free, on_small_stack};
use crate::support::provider_tools::{Outcome, fixture, fixture_json, manager};

/// Cases per run, over the five providers.
const CASES: u32 = 160;

/// The length of a huge string.
const HUGE: usize = 256 * 1024;

/// How deep the deep mutations nest: at the limit, one past it, and far past the stack.
const DEPTHS: [usize; 4] = [MAX_JSON_DEPTH, MAX_JSON_DEPTH + 1, 10_000, 100_000];

/// Which node of the response a mutation changes: any node (by its place in a walk of the
/// response), or one holding a call's arguments (`arguments`, `input`, `args`).
#[derive(Debug, Clone, Copy)]
enum Target {
    Any(usize),
    Arguments(usize),
}

/// A JSON type to put where another was.
#[derive(Debug, Clone, Copy)]
enum Kind {
    Null,
    Bool,
    Number,
    Text,
    Array,
    Object,
}

/// A change to the response as a value, before it is written out as text.
#[derive(Debug, Clone)]
enum Edit {
    WrongType(Target, Kind),
    HugeString(Target),
    /// The node becomes a string holding deep JSON text (arrays, or objects), perhaps in a
    /// Markdown fence whose language tag holds a quote.
    DeepText(Target, usize, bool, bool),
    /// The node, an object or a string holding one, gets its first key twice: the copy
    /// (with a string value) written before the original or after it.
    DuplicateKey(Target, bool),
}

/// A change to the text of the response.
#[derive(Debug, Clone)]
enum TextEdit {
    FlipBit(usize, u8),
    Truncate(usize),
    /// A snippet inserted after the n-th `{` (or at the end when there are fewer).
    InsertAfterBrace(usize, Snippet),
}

/// What [`TextEdit::InsertAfterBrace`] inserts: members that duplicate a key, carry the
/// wrong type, or nest deeply.
#[derive(Debug, Clone)]
enum Snippet {
    NameOfWrongType,
    DuplicateName,
    ArgumentsOfWrongType,
    DeepArguments(usize, bool),
    DeepArgumentsText(usize),
    HugeMember,
}

impl Snippet {
    fn text(&self) -> String {
        match self {
            Self::NameOfWrongType => r#""name": 7, "#.to_owned(),
            Self::DuplicateName => r#""name": "add", "#.to_owned(),
            Self::ArgumentsOfWrongType => r#""arguments": [1, "x"], "#.to_owned(),
            Self::DeepArguments(levels, true) => {
                format!(r#""arguments": {}, "#, deep::object_text(*levels, true))
            }
            Self::DeepArguments(levels, false) => {
                format!(r#""arguments": {}, "#, deep::array_text(*levels, true))
            }
            Self::DeepArgumentsText(levels) => format!(
                r#""arguments": {}, "#,
                Value::String(deep::array_text(*levels, false))
            ),
            Self::HugeMember => format!(r#""x": "{}", "#, "y".repeat(HUGE)),
        }
    }
}

#[derive(Debug, Clone)]
struct Case {
    provider: usize,
    edits: Vec<Edit>,
    text_edits: Vec<TextEdit>,
    /// A deep value (its depth, and whether of objects) put at a node after parsing, as a
    /// caller could build one.
    deep_value: Option<(Target, usize, bool)>,
}

fn target() -> impl Strategy<Value = Target> {
    prop_oneof![
        any::<usize>().prop_map(Target::Any),
        any::<usize>().prop_map(Target::Arguments),
    ]
}

fn kind() -> impl Strategy<Value = Kind> {
    prop::sample::select(vec![
        Kind::Null,
        Kind::Bool,
        Kind::Number,
        Kind::Text,
        Kind::Array,
        Kind::Object,
    ])
}

fn depth() -> impl Strategy<Value = usize> {
    prop::sample::select(DEPTHS.to_vec())
}

fn edit() -> impl Strategy<Value = Edit> {
    prop_oneof![
        (target(), kind()).prop_map(|(t, k)| Edit::WrongType(t, k)),
        target().prop_map(Edit::HugeString),
        (target(), depth(), any::<bool>(), any::<bool>())
            .prop_map(|(t, d, o, f)| Edit::DeepText(t, d, o, f)),
        (target(), any::<bool>()).prop_map(|(t, last)| Edit::DuplicateKey(t, last)),
    ]
}

fn snippet() -> impl Strategy<Value = Snippet> {
    prop_oneof![
        Just(Snippet::NameOfWrongType),
        Just(Snippet::DuplicateName),
        Just(Snippet::ArgumentsOfWrongType),
        (depth(), any::<bool>()).prop_map(|(d, o)| Snippet::DeepArguments(d, o)),
        depth().prop_map(Snippet::DeepArgumentsText),
        Just(Snippet::HugeMember),
    ]
}

fn text_edit() -> impl Strategy<Value = TextEdit> {
    prop_oneof![
        (any::<usize>(), 0u8..8).prop_map(|(at, bit)| TextEdit::FlipBit(at, bit)),
        any::<usize>().prop_map(TextEdit::Truncate),
        (0usize..24, snippet()).prop_map(|(n, s)| TextEdit::InsertAfterBrace(n, s)),
    ]
}

fn case() -> impl Strategy<Value = Case> {
    (
        0..Provider::ALL.len(),
        prop::collection::vec(edit(), 0..3),
        prop::collection::vec(text_edit(), 0..3),
        prop::option::of((target(), depth(), any::<bool>())),
    )
        .prop_map(|(provider, edits, text_edits, deep_value)| Case {
            provider,
            edits,
            text_edits,
            deep_value,
        })
}

/// The JSON pointers of the nodes of `value` (a shallow recorded response, so recursion is
/// fine here), and of those that hold a call's arguments.
fn pointers(value: &Value) -> (Vec<String>, Vec<String>) {
    fn walk(value: &Value, at: String, all: &mut Vec<String>, arguments: &mut Vec<String>) {
        let is_arguments = ["/arguments", "/input", "/args"]
            .iter()
            .any(|end| at.ends_with(end));
        if is_arguments {
            arguments.push(at.clone());
        }
        match value {
            Value::Array(items) => {
                for (i, item) in items.iter().enumerate() {
                    walk(item, format!("{at}/{i}"), all, arguments);
                }
            }
            Value::Object(map) => {
                for (key, item) in map {
                    let key = key.replace('~', "~0").replace('/', "~1");
                    walk(item, format!("{at}/{key}"), all, arguments);
                }
            }
            _ => {}
        }
        all.push(at);
    }
    let (mut all, mut arguments) = (Vec::new(), Vec::new());
    walk(value, String::new(), &mut all, &mut arguments);
    (all, arguments)
}

/// The node `target` names, if the response has one.
fn node(value: &mut Value, target: Target) -> Option<&mut Value> {
    let (all, arguments) = pointers(value);
    let pointer = match target {
        Target::Any(n) => all.get(n % all.len().max(1))?,
        Target::Arguments(_) if arguments.is_empty() => return None,
        Target::Arguments(n) => &arguments[n % arguments.len()],
    };
    value.pointer_mut(pointer)
}

/// The key that marks an object whose first key is to be written twice; its value says the
/// key, and `"\u{0}last"` or `"\u{0}first"` where the copy goes.
const DUPLICATE: &str = "\u{0}duplicate";

/// Marks `object` to have its first key written twice (see [`write`]).
fn mark_duplicate(object: &mut Map<String, Value>, last: bool) {
    let Some(first) = object.keys().next().cloned() else {
        return;
    };
    let mark = Value::String(first);
    if last {
        object.insert(DUPLICATE.to_owned(), mark);
    } else {
        object.shift_insert(0, DUPLICATE.to_owned(), mark);
    }
}

/// `value` as JSON text, each marked object with its first key written a second time (with
/// the value `"duplicate"`) where the mark was: serde_json cannot hold duplicate keys, so
/// they are made in the text.
fn write(value: &Value) -> String {
    let mut text = serde_json::to_string(value).expect("a shallow value serialises");
    let mark = format!("{}:", Value::String(DUPLICATE.to_owned()));
    while let Some(at) = text.find(&mark) {
        let rest = &text[at + mark.len()..];
        // The mark's value is a JSON string: the key, already escaped.
        let end = string_end(rest);
        let key = rest[..end].to_owned();
        text.replace_range(at..at + mark.len() + end, &format!("{key}:\"duplicate\""));
    }
    text
}

/// The length of the JSON string token at the start of `text`.
fn string_end(text: &str) -> usize {
    let mut escaped = false;
    for (i, ch) in text.char_indices().skip(1) {
        match ch {
            _ if escaped => escaped = false,
            '\\' => escaped = true,
            '"' => return i + 1,
            _ => {}
        }
    }
    text.len()
}

fn apply(value: &mut Value, edit: &Edit) {
    match edit {
        Edit::WrongType(target, kind) => {
            if let Some(node) = node(value, *target) {
                *node = match kind {
                    Kind::Null => Value::Null,
                    Kind::Bool => Value::Bool(true),
                    Kind::Number => Value::from(-1.5),
                    Kind::Text => Value::from("{\"a\": 1"),
                    Kind::Array => Value::Array(vec![Value::from(1)]),
                    Kind::Object => Value::Object(Map::new()),
                };
            }
        }
        Edit::HugeString(target) => {
            if let Some(node) = node(value, *target) {
                *node = Value::String("{".repeat(HUGE));
            }
        }
        Edit::DeepText(target, levels, objects, fenced) => {
            if let Some(node) = node(value, *target) {
                let text = if *objects {
                    deep::object_text(*levels, true)
                } else {
                    deep::array_text(*levels, true)
                };
                *node = Value::String(if *fenced {
                    format!("```'\n{text}\n```")
                } else {
                    text
                });
            }
        }
        Edit::DuplicateKey(target, last) => match node(value, *target) {
            Some(Value::Object(object)) => mark_duplicate(object, *last),
            Some(node @ Value::String(_)) => {
                // Arguments sent as a JSON string: the duplicate goes into that text.
                if let Ok(Value::Object(mut object)) =
                    serde_json::from_str::<Value>(node.as_str().unwrap_or_default())
                {
                    mark_duplicate(&mut object, *last);
                    *node = Value::String(write(&Value::Object(object)));
                }
            }
            _ => {}
        },
    }
}

fn apply_text(text: String, edit: &TextEdit) -> String {
    match edit {
        TextEdit::FlipBit(at, bit) => {
            let mut bytes = text.into_bytes();
            if !bytes.is_empty() {
                let at = at % bytes.len();
                bytes[at] ^= 1 << bit;
            }
            String::from_utf8_lossy(&bytes).into_owned()
        }
        TextEdit::Truncate(at) => {
            let mut at = at % (text.len() + 1);
            while !text.is_char_boundary(at) {
                at -= 1;
            }
            text[..at].to_owned()
        }
        TextEdit::InsertAfterBrace(n, snippet) => {
            let at = text
                .match_indices('{')
                .nth(*n)
                .map_or(text.len(), |(at, _)| at + 1);
            let mut text = text;
            text.insert_str(at, &snippet.text());
            text
        }
    }
}

/// Reads the calls of `response`, runs those read, and renders every outcome.
fn read_run_render(manager: &ToolCallManager, provider: Provider, response: &Value) {
    let Ok(calls) = provider.parse_calls(response) else {
        return;
    };
    let mut outcomes: Vec<Outcome> = Vec::new();
    for call in calls {
        match call {
            Ok(request) => {
                let result = futures::executor::block_on(manager.execute_one(&request));
                outcomes.push((request.id.clone(), request.name.clone(), result));
            }
            Err(rejected) => outcomes.push(rejected.into_parts()),
        }
    }
    let rendered = manager.render_results(provider, &outcomes);
    // What is rendered is within the limit, so printing it is safe.
    let _ = Value::Array(rendered).to_string();
}

fn check(case: &Case, manager: &ToolCallManager) {
    let provider = Provider::ALL[case.provider];
    let text = if provider == Provider::Text {
        fixture(provider, "response.txt")
    } else {
        let mut value = fixture_json(provider, "response.json");
        for edit in &case.edits {
            apply(&mut value, edit);
        }
        write(&value)
    };
    let text = case.text_edits.iter().fold(text, apply_text);

    // The text as the text backends' completion, and as a response of the wrong shape.
    for call in parse_text_calls(&text) {
        drop(call);
    }
    let as_text = Value::String(text.clone());
    read_run_render(manager, Provider::Text, &as_text);
    read_run_render(manager, provider, &as_text);

    // The text as the provider's response, when it still parses, with a deep value put in.
    if let Ok(mut response) = serde_json::from_str::<Value>(&text) {
        if let Some((target, levels, objects)) = case.deep_value
            && let Some(node) = node(&mut response, target)
        {
            let deep = if objects {
                deep::object(levels)
            } else {
                deep::array(levels)
            };
            free(std::mem::replace(node, deep));
        }
        read_run_render(manager, provider, &response);
        free(response);
    }
}

#[test]
fn mutated_provider_responses_never_panic_or_abort() {
    on_small_stack(|| {
        let (manager, _) = manager();
        let config = Config {
            cases: CASES,
            // Failures are reported with their minimal case; nothing to persist to.
            failure_persistence: None,
            ..Config::default()
        };
        let mut runner = TestRunner::new(config);
        let result = runner.run(&case(), |case| {
            check(&case, &manager);
            Ok(())
        });
        if let Err(failure) = result {
            panic!("{failure}");
        }
    });
}
