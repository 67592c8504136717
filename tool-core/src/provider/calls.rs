//! Calls read from a provider response: the requests to run, and the calls that could not be
//! read (each with the error the model gets back for it).

use serde_json::Value;

use super::repair::repair_json;
use crate::tool::arguments::json_type_name;
use crate::tool::nesting::{TooDeep, check_depth};
use crate::{
    ToolArguments, ToolCallManager, ToolCallOutcome, ToolCallRequest, ToolCallResult, ToolError,
};

/// The prefix of the ids given to calls that came without one (Gemini calls may have none,
/// text calls usually do): `toolsmith-call-0`, `toolsmith-call-1`, … Ids with this prefix are
/// not echoed back to providers that match results by name.
pub const GENERATED_CALL_ID_PREFIX: &str = "toolsmith-call-";

/// The name a call that named no tool is echoed back under, and its result sent under, in
/// the formats whose APIs check names (all but text backends). Echoed with an empty name,
/// the call would have every later request of the conversation refused.
pub const UNNAMED_CALL_NAME: &str = "unnamed_call";

/// `name` as a call is echoed under: [`UNNAMED_CALL_NAME`] for an empty one.
pub(crate) fn echoed_name(name: &str) -> &str {
    if name.is_empty() {
        UNNAMED_CALL_NAME
    } else {
        name
    }
}

/// `call`, a call of a turn sent back as its provider wrote it, under the name it is echoed
/// and its result sent with: [`UNNAMED_CALL_NAME`] where its `key` holds no name (missing,
/// empty, not a string), which the APIs refuse in a conversation. `call` is an object.
pub(crate) fn named_as_echoed(call: &mut Value, key: &str) {
    let named = call
        .get(key)
        .and_then(Value::as_str)
        .is_some_and(|name| !name.is_empty());
    if !named && call.is_object() {
        call[key] = Value::String(UNNAMED_CALL_NAME.to_owned());
    }
}

/// One call of a response: a request ready to run, or a call that could not be read.
pub type ParsedCall = Result<ToolCallRequest, RejectedCall>;

/// A call whose arguments (or whole body) could not be read: it does not run, and its error
/// goes back to the model as the call's result, while the other calls of the turn still run.
#[derive(Debug, Clone, PartialEq)]
pub struct RejectedCall {
    /// The call's id (generated when the provider gave none).
    pub id: String,
    /// The tool the call named (empty when it named none).
    pub name: String,
    /// Why it was rejected: [`ToolError::InvalidArguments`] quoting the parse error, or
    /// [`ToolError::UnknownTool`] for a call that names no tool.
    pub error: ToolError,
    /// The arguments as the model wrote them, where they were text: the arguments string of
    /// the formats that send arguments as JSON text (OpenAI's, or an Anthropic input cut off
    /// while streaming); in the text format, the JSON written as `arguments` (a string's
    /// text), or, in a call too broken to read, the text after `"arguments":`. Echoing the
    /// call back with it ([`AssistantCall::as_written`](super::AssistantCall::as_written))
    /// shows the model the call it made, not an empty one. `None` where the arguments came
    /// as a JSON value (Anthropic, Gemini: those formats echo an empty object) or none were
    /// found.
    pub as_written: Option<Box<str>>,
}

impl RejectedCall {
    /// The call as `(id, name, Err(error))`, the shape results are rendered from.
    pub fn into_parts(self) -> (String, String, Result<ToolCallResult, ToolError>) {
        (self.id, self.name, Err(self.error))
    }
}

impl ToolCallManager {
    /// Runs the calls of a model's answer as one turn ([`execute_turn`]: offer-checked,
    /// concurrent where annotations allow) and gives one outcome per call **of the answer**,
    /// in its order: a call that could not be read keeps its place, with its error and no
    /// attempt, and so does a call whose id an earlier call of the answer has (its result
    /// could not be told apart; the others run). With [`render_results`](ToolCallManager::render_results) it makes the round
    /// trip three lines:
    ///
    /// ```
    /// use std::sync::Arc;
    /// use serde_json::json;
    /// use toolsmith::{ToolCallManager, tool_fn};
    /// use toolsmith::provider::Provider;
    ///
    /// /// Add two integers.
    /// #[tool_fn]
    /// fn add(a: i64, b: i64) -> i64 { a + b }
    ///
    /// # futures::executor::block_on(async {
    /// let manager = ToolCallManager::new("s");
    /// manager.register(Arc::new(Add)).unwrap();
    /// manager.activate(&["add".into()]);
    /// let response = json!({"role": "assistant", "tool_calls": [
    ///     {"id": "c1", "type": "function", "function": {"name": "add", "arguments": "{\"a\": 2, \"b\": 3}"}},
    ///     {"id": "c2", "type": "function", "function": {"name": "add", "arguments": "{\"a\": "}}
    /// ]});
    ///
    /// let calls = Provider::OpenAiChat.parse_calls(&response).unwrap();
    /// let outcomes = manager.execute_parsed(&calls).await;
    /// let messages = manager.render_results(Provider::OpenAiChat, &outcomes);
    ///
    /// assert_eq!(messages[0]["tool_call_id"], "c1");
    /// assert_eq!(messages[0]["content"], "5");
    /// assert_eq!(messages[1]["tool_call_id"], "c2");
    /// assert!(messages[1]["content"].as_str().unwrap().contains("not valid JSON"));
    /// # });
    /// ```
    ///
    /// [`execute_turn`]: ToolCallManager::execute_turn
    pub async fn execute_parsed(&self, calls: &[ParsedCall]) -> Vec<ToolCallOutcome> {
        let repeated = repeated_ids(calls);
        let requests: Vec<ToolCallRequest> = calls
            .iter()
            .zip(&repeated)
            .filter(|(_, repeated)| !**repeated)
            .filter_map(|(call, _)| call.as_ref().ok().cloned())
            .collect();
        let mut ran = self.execute_turn(&requests).await.into_iter();
        calls
            .iter()
            .zip(repeated)
            .map(|(call, repeated)| match call {
                Ok(request) if repeated => {
                    let reason = repeated_id_reason(&request.id);
                    let error = ToolError::invalid_arguments(&request.name, reason);
                    ToolCallOutcome::not_run(&request.id, &request.name, error)
                }
                Ok(_) => ran.next().expect("one outcome per request run"),
                Err(rejected) => {
                    ToolCallOutcome::not_run(&rejected.id, &rejected.name, rejected.error.clone())
                }
            })
            .collect()
    }
}

/// For each call of a model's answer, whether an earlier call of the answer has its id.
/// Such a call's result could not be told apart from the earlier one's, so it is answered
/// on its own without running ([`repeated_id_reason`]), and the others run, as
/// [`ToolCallManager::execute_parsed`] and the harness's agent loop do.
///
/// ```
/// use serde_json::json;
/// use toolsmith::provider::{Provider, repeated_ids};
///
/// let answer = json!({"role": "assistant", "tool_calls": [
///     {"id": "c1", "type": "function", "function": {"name": "a", "arguments": "{}"}},
///     {"id": "c1", "type": "function", "function": {"name": "b", "arguments": "{}"}},
/// ]});
/// let calls = Provider::OpenAiChat.parse_calls(&answer).unwrap();
/// assert_eq!(repeated_ids(&calls), [false, true]);
/// ```
pub fn repeated_ids(calls: &[ParsedCall]) -> Vec<bool> {
    let mut seen = std::collections::HashSet::with_capacity(calls.len());
    calls
        .iter()
        .map(|call| {
            !seen.insert(match call {
                Ok(request) => request.id.as_str(),
                Err(rejected) => rejected.id.as_str(),
            })
        })
        .collect()
}

/// Why a call whose id an earlier call of the answer has ([`repeated_ids`]) was not run, as
/// the model is told.
pub fn repeated_id_reason(id: &str) -> String {
    let id = crate::tool::echo::echoed(id);
    format!(
        "not run: an earlier call of this answer has the id '{id}'; give each call an id of its own"
    )
}

/// The id of the `index`-th call of a response that gave none.
pub(crate) fn generated_id(index: usize) -> String {
    format!("{GENERATED_CALL_ID_PREFIX}{index}")
}

/// The id the provider gave the `index`-th call, or a generated one when it gave none: no
/// id, or an empty one (as some OpenAI-compatible servers send), which every such call of
/// the answer would share, so that only the first would run. The echo of the turn has the
/// new id: rendered, or, for the turns sent back as written (Anthropic, Responses), written
/// into their entries.
pub(crate) fn call_id(given: Option<&Value>, index: usize) -> String {
    given
        .and_then(Value::as_str)
        .filter(|id| !id.is_empty())
        .map_or_else(|| generated_id(index), str::to_owned)
}

/// Gives a call whose id was generated (`toolsmith-call-N` for the `N`-th call) and that
/// another call of the response also has a suffix that makes it unique: a model may write
/// ids of that form itself, copying them from an earlier turn, and two calls with one id
/// could not be told apart (a batch refuses both).
pub(crate) fn distinct_generated_ids(calls: &mut [ParsedCall]) {
    let mut ids: Vec<&mut String> = calls
        .iter_mut()
        .map(|call| match call {
            Ok(request) => &mut request.id,
            Err(rejected) => &mut rejected.id,
        })
        .collect();
    distinct_generated_call_ids(&mut ids);
}

/// [`distinct_generated_ids`] on the ids of a response's calls, in call order: the ids a
/// turn sent back as the provider wrote it must carry, those its results are sent with.
pub(crate) fn distinct_generated_call_ids(ids: &mut [&mut String]) {
    let mut seen = std::collections::HashSet::with_capacity(ids.len());
    if ids.iter().all(|id| seen.insert(id.as_str())) {
        return;
    }
    // How many calls have each id, counted once: looking each one up again in every call
    // would be quadratic in the calls of an answer.
    let mut counts: std::collections::HashMap<String, usize> =
        std::collections::HashMap::with_capacity(ids.len());
    for id in ids.iter() {
        *counts.entry((**id).clone()).or_default() += 1;
    }
    for (index, id) in ids.iter_mut().enumerate() {
        let generated = generated_id(index);
        let shared = **id == generated && counts.get(&generated) > Some(&1);
        if !shared {
            continue;
        }
        let unique = (1..)
            .map(|n| format!("{generated}-{n}"))
            .find(|candidate| !counts.contains_key(candidate))
            .expect("a suffix no call has");
        counts.insert(unique.clone(), 1);
        if let Some(count) = counts.get_mut(&generated) {
            *count -= 1;
        }
        **id = unique;
    }
}

/// A call from its parts; `arguments` is the provider's value for them (an object, a JSON
/// string, or nothing).
pub(crate) fn read_call(id: String, name: Option<&str>, arguments: Option<&Value>) -> ParsedCall {
    let Some(name) = name.filter(|n| !n.is_empty()) else {
        return Err(RejectedCall {
            id,
            name: String::new(),
            error: ToolError::UnknownTool(String::new()),
            as_written: written_text(arguments),
        });
    };
    match read_arguments(arguments) {
        Ok(arguments) => Ok(ToolCallRequest::new(id, name, arguments)),
        Err(reason) => Err(RejectedCall {
            id,
            name: name.to_owned(),
            error: ToolError::invalid_arguments(name, reason),
            as_written: written_text(arguments),
        }),
    }
}

/// The arguments as the model wrote them, when they came as text.
fn written_text(arguments: Option<&Value>) -> Option<Box<str>> {
    match arguments {
        Some(Value::String(text)) => Some(text.as_str().into()),
        _ => None,
    }
}

/// The arguments of a call: an object as it is, a string parsed (and repaired) as JSON,
/// nothing or `null` as no arguments. Arguments nested deeper than
/// [`MAX_JSON_DEPTH`](crate::MAX_JSON_DEPTH), as text or as a value, are refused before
/// they are parsed or copied.
fn read_arguments(arguments: Option<&Value>) -> Result<ToolArguments, String> {
    let value = match arguments {
        None | Some(Value::Null) => return Ok(ToolArguments::new()),
        Some(Value::String(text)) if text.trim().is_empty() => return Ok(ToolArguments::new()),
        Some(Value::String(text)) => repair_json(text).map_err(|err| {
            if err.too_deep {
                return TooDeep.in_arguments();
            }
            format!(
                "the arguments are not valid JSON ({err}); send them as one JSON object, e.g. {{\"name\": \"value\"}}"
            )
        })?,
        Some(value) => {
            check_depth(value).map_err(|too_deep| too_deep.in_arguments_at(value))?;
            value.clone()
        }
    };
    // Arguments encoded twice (a JSON string holding the JSON text) are read once more.
    let value = match value {
        Value::String(inner) => match repair_json(&inner) {
            Ok(decoded @ Value::Object(_)) => decoded,
            Err(err) if err.too_deep => return Err(TooDeep.in_arguments()),
            _ => Value::String(inner),
        },
        other => other,
    };
    match value {
        // `null` written as text is no arguments, as the value is.
        Value::Object(_) | Value::Null => {
            ToolArguments::try_from(value).map_err(|err| err.to_string())
        }
        other => Err(format!(
            "the arguments must be a JSON object of named arguments, got {}",
            json_type_name(&other)
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reads_arguments_in_every_spelling() {
        let ok = |v: Option<Value>| {
            read_call("1".into(), Some("t"), v.as_ref())
                .unwrap()
                .arguments
        };
        assert_eq!(ok(None).as_value(), &json!({}));
        assert_eq!(ok(Some(json!(""))).as_value(), &json!({}));
        // `null` as text, as its value, is no arguments.
        assert_eq!(ok(Some(json!("null"))).as_value(), &json!({}));
        assert_eq!(ok(Some(json!(" null "))).as_value(), &json!({}));
        assert_eq!(ok(Some(json!("{\"a\": 1}"))).as_value(), &json!({"a": 1}));
        assert_eq!(ok(Some(json!("{a: 1,}"))).as_value(), &json!({"a": 1}));
        assert_eq!(ok(Some(json!({"a": 1}))).as_value(), &json!({"a": 1}));
        assert_eq!(
            ok(Some(json!("\"{\\\"a\\\": 1}\""))).as_value(),
            &json!({"a": 1})
        );
        let err = read_call("1".into(), Some("t"), Some(&json!("\"just text\""))).unwrap_err();
        assert!(
            err.error.to_string().ends_with("got string"),
            "{}",
            err.error
        );

        let err = read_call("1".into(), Some("t"), Some(&json!("{\"a\": "))).unwrap_err();
        assert_eq!(err.id, "1");
        assert_eq!(
            err.error.to_string(),
            "Invalid arguments for tool 't': the arguments are not valid JSON (EOF while parsing a value at line 1 column 6); send them as one JSON object, e.g. {\"name\": \"value\"}"
        );
        let err = read_call("1".into(), Some("t"), Some(&json!([1]))).unwrap_err();
        assert!(
            err.error.to_string().ends_with("got array"),
            "{}",
            err.error
        );
        let err = read_call("2".into(), None, None).unwrap_err();
        assert_eq!(err.error, ToolError::UnknownTool(String::new()));
        assert_eq!(err.into_parts().0, "2");
    }

    #[test]
    fn a_repeated_long_id_is_repeated_cut() {
        let long = "c".repeat(100_000);
        let reason = repeated_id_reason(&long);
        assert!(reason.chars().count() < 400, "{}", reason.len());
        assert!(
            reason.contains(&format!("'{}…'", "c".repeat(240))),
            "{reason}"
        );
        assert_eq!(
            repeated_id_reason("c1"),
            "not run: an earlier call of this answer has the id 'c1'; give each call an id of its own"
        );
    }

    #[test]
    fn generated_ids_are_made_distinct_in_linear_time() {
        use super::super::Provider;
        // Every other call has no id, and the call after it copies the one it gets.
        let calls = 40_000;
        let items: Vec<String> = (0..calls)
            .map(|i| match i % 2 {
                0 => "{\"name\": \"a\"}".to_owned(),
                _ => format!("{{\"name\": \"a\", \"id\": \"{}\"}}", generated_id(i - 1)),
            })
            .collect();
        let text = Value::String(format!("[{}]", items.join(",")));
        let started = cpu_time::ThreadTime::now();
        let parsed = Provider::Text.parse_calls(&text).unwrap();
        // Quadratic, this took over ten seconds (a debug build).
        assert!(
            started.elapsed() < std::time::Duration::from_secs(10),
            "{:?}",
            started.elapsed()
        );
        let ids: Vec<&str> = parsed
            .iter()
            .map(|call| call.as_ref().unwrap().id.as_str())
            .collect();
        assert_eq!(
            &ids[..4],
            [
                "toolsmith-call-0-1",
                "toolsmith-call-0",
                "toolsmith-call-2-1",
                "toolsmith-call-2"
            ]
        );
        assert!(!repeated_ids(&parsed).contains(&true));
    }

    #[test]
    fn arguments_nested_too_deep_are_rejected_unread() {
        use crate::tool::nesting::testing::{nested, on_small_stack};
        use crate::tool::nesting::{MAX_JSON_DEPTH, free_value};
        on_small_stack(|| {
            let text = format!("{{\"a\": {}1", "[".repeat(10_000));
            let twice = Value::String(text.clone()).to_string();
            let mut object = serde_json::Map::new();
            object.insert("a".to_owned(), nested(10_000));
            let value = Value::Object(object);
            // Text refused unparsed names no argument; a value names the one too deep.
            for (arguments, place) in [
                (Value::String(text), ""),
                (Value::String(twice), ""),
                (value, ", in '/a'"),
            ] {
                let err = read_call("1".into(), Some("t"), Some(&arguments)).unwrap_err();
                assert_eq!(
                    err.error.to_string(),
                    format!(
                        "Invalid arguments for tool 't': the arguments are nested deeper than {MAX_JSON_DEPTH} levels{place}; send them with less nesting"
                    )
                );
                free_value(arguments);
            }
        });
    }

    #[test]
    fn a_rejected_call_keeps_its_arguments_as_written() {
        let err = read_call("1".into(), Some("t"), Some(&json!("{\"a\": 1, \"b\""))).unwrap_err();
        assert_eq!(err.as_written.as_deref(), Some("{\"a\": 1, \"b\""));
        let err = read_call("1".into(), None, Some(&json!("{}"))).unwrap_err();
        assert_eq!(err.as_written.as_deref(), Some("{}"));
        // Arguments that came as a value are echoed by formats that send values.
        let err = read_call("1".into(), Some("t"), Some(&json!([1]))).unwrap_err();
        assert_eq!(err.as_written, None);
    }
}
