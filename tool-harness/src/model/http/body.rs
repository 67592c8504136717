//! The parts of a request body and of an answer that the four clients read the same way,
//! each through `toolsmith_core::provider` (the wire formats live there, once).

use std::sync::Arc;

use serde_json::value::RawValue;
use serde_json::{Map, Value};
use toolsmith_core::provider::{AssistantCall, CallReply, Provider, RenderError, RenderOptions};
use toolsmith_core::{Tool, ToolCallResult, ToolDeclarations, ToolError};

use super::call_ids::{self, DistinctCallIds};
use super::rendered_sets::RenderedSets;
use super::request_body::RequestBody;

use crate::model::{
    ChatRequest, ChatResponse, Message, ModelCall, ModelError, ProviderTurn, ToolChoice, Usage,
};

impl<'a> From<&'a ModelCall> for AssistantCall<'a> {
    fn from(call: &'a ModelCall) -> Self {
        Self {
            thought_signature: call.thought_signature.as_deref(),
            as_written: call.as_written.as_deref(),
            ..Self::new(&call.id, &call.name, call.arguments.as_value())
        }
    }
}

/// The conversation's messages in `provider`'s format (the system prompt aside: each API
/// has its own place for it). For an API that refuses a call id used twice, a repeated id
/// is sent with a suffix, and its result with it ([`DistinctCallIds`]); a user message an
/// API refuses as empty is an error before anything is rendered ([`check_user_messages`]).
pub(crate) fn conversation(
    provider: Provider,
    messages: &[Message],
) -> Result<Vec<Value>, ModelError> {
    check_user_messages(provider, messages)?;
    let mut rendered = Vec::with_capacity(messages.len());
    let mut distinct_ids =
        call_ids::refuses_repeated_ids(provider).then(|| DistinctCallIds::new(provider));
    for message in messages {
        match message {
            Message::User { text, images } => {
                rendered.push(provider.render_user_with_images(text, images));
            }
            Message::Assistant {
                provider_turn: Some(turn),
                ..
            } if turn.provider == provider => match &mut distinct_ids {
                Some(ids) => rendered.extend(ids.verbatim_turn(&turn.entries)),
                None => rendered.extend(turn.entries.iter().cloned()),
            },
            Message::Assistant { text, calls, .. } => {
                let sent_ids = distinct_ids.as_mut().map(|ids| ids.calls(calls));
                let calls = calls.iter().enumerate().map(|(index, call)| AssistantCall {
                    id: sent_ids.as_ref().map_or(&call.id, |ids| &ids[index]),
                    ..AssistantCall::from(call)
                });
                rendered.extend(provider.render_assistant(text.as_deref(), calls));
            }
            Message::ToolResults { results } => {
                let sent_ids = distinct_ids.as_mut().map(|ids| ids.results(results));
                // Errors were already written for the model as error results.
                let outcomes: Vec<Result<ToolCallResult, ToolError>> =
                    results.iter().map(|r| Ok(r.result.clone())).collect();
                rendered.extend(
                    provider.render_results(results.iter().zip(&outcomes).enumerate().map(
                        |(index, (r, result))| CallReply {
                            id: sent_ids.as_ref().map_or(&r.call_id, |ids| &ids[index]),
                            name: &r.name,
                            result,
                        },
                    )),
                );
            }
        }
    }
    Ok(rendered)
}

/// A user message with no text but whitespace and no image, which `provider` refuses (the
/// whole request with it), as a [`ModelError::InvalidRequest`] naming its index in
/// `messages`, before anything is sent: Anthropic ("all messages must have non-empty
/// content except for the optional final assistant message"; whitespace alone too, "text
/// content blocks must contain non-whitespace text") and Gemini (a part of empty text).
///
/// Refused rather than left out: a message said nothing only where it is not the one the
/// model is to answer, and without the last user message the model would answer the turn
/// before again, or, for Anthropic, carry on an assistant message the conversation would
/// end with. An assistant message without text or calls is left out by the rendering
/// ([`Provider::render_assistant`]): the user messages either side then go in a row, which
/// both APIs take.
fn check_user_messages(provider: Provider, messages: &[Message]) -> Result<(), ModelError> {
    if !matches!(provider, Provider::Anthropic | Provider::Gemini) {
        // OpenAI takes a user message of empty content.
        return Ok(());
    }
    let empty = messages.iter().position(|message| {
        matches!(message, Message::User { text, images } if images.is_empty() && text.trim().is_empty())
    });
    match empty {
        Some(index) => Err(ModelError::InvalidRequest {
            provider: provider.name().to_owned(),
            reason: format!(
                "messages[{index}], a user message, is empty (no text but whitespace, and no \
                 image), and {provider} refuses a request with an empty message: give it text, \
                 or leave it out"
            ),
        }),
        None => Ok(()),
    }
}

/// `fields` written into `body` where the client wrote nothing
/// ([`HttpModelBuilder::body_field`](super::HttpModelBuilder::body_field)): a key the body
/// lacks is added, an object both hold is filled the same way, key by key, and any other
/// value the body holds stays.
pub(crate) fn fill_in(body: &mut Map<String, Value>, fields: &Map<String, Value>) {
    for (name, value) in fields {
        match (body.get_mut(name), value) {
            (None, _) => {
                body.insert(name.clone(), value.clone());
            }
            (Some(Value::Object(written)), Value::Object(more)) => fill_in(written, more),
            (Some(_), _) => {}
        }
    }
}

/// Whether `provider`'s requests can declare each of `tools`: the error a request declaring
/// the first that cannot would fail with ([`render_tools`]), before any is sent.
pub(crate) fn check_declarations(provider: Provider, tools: &[&Tool]) -> Result<(), ModelError> {
    provider
        .check_tools(tools.iter().copied())
        .map_err(|err| unrenderable(provider, &err))
}

/// A tool `provider`'s format cannot express, as the request that declares it fails.
fn unrenderable(provider: Provider, err: &RenderError) -> ModelError {
    ModelError::InvalidRequest {
        provider: provider.name().to_owned(),
        reason: err.to_string(),
    }
}

/// A [`ToolChoice`] that forces a call no declared tool can answer (`Required` with no tool
/// declared, `Tool` naming one not declared) is a [`ModelError::InvalidRequest`]: the APIs
/// refuse it with a message that names neither.
fn check_choice(provider: Provider, request: &ChatRequest) -> Result<(), ModelError> {
    let unanswerable = match &request.options.tool_choice {
        ToolChoice::Required if request.tools.is_empty() => {
            Some("the tool choice requires a tool call, but no tool is declared".to_owned())
        }
        ToolChoice::Tool(name) if !request.tools.iter().any(|tool| tool.name() == name) => {
            Some(format!(
                "the tool choice forces a call of '{name}', which the request does not declare"
            ))
        }
        _ => None,
    };
    match unanswerable {
        Some(reason) => Err(ModelError::InvalidRequest {
            provider: provider.name().to_owned(),
            reason,
        }),
        None => Ok(()),
    }
}

/// The declared tools as `provider`'s `tools` array, `None` when there are none (the APIs
/// refuse an empty one). A tool that cannot be strict is declared non-strict, with a
/// `tracing` warning naming it, the JSON path and why: the request goes on. A tool the
/// format cannot express at all (recursion for Gemini) is a [`ModelError::InvalidRequest`]
/// naming it.
pub(crate) fn render_tools(
    provider: Provider,
    declarations: &ToolDeclarations,
    options: &RenderOptions,
) -> Result<Option<Value>, ModelError> {
    let rendered = provider
        .render_tools(declarations, options)
        .map_err(|err| unrenderable(provider, &err))?;
    for not_strict in &rendered.not_strict {
        tracing::warn!(
            provider = provider.name(),
            tool = %not_strict.tool,
            path = %not_strict.path,
            reason = %not_strict.reason,
            "tool '{}' is declared non-strict: it cannot be rendered in {}'s strict mode",
            not_strict.tool,
            provider,
        );
    }
    let tools = rendered.tools;
    Ok(tools
        .as_array()
        .is_some_and(|t| !t.is_empty())
        .then_some(tools))
}

/// [`render_tools`] as JSON text, to be written into bodies as it is, the last tool
/// given `last_tool_field` (a name and its value) where one is.
fn render_raw(
    provider: Provider,
    declarations: &ToolDeclarations,
    options: &RenderOptions,
    last_tool_field: Option<(&str, &Value)>,
) -> Result<Option<Arc<RawValue>>, ModelError> {
    let Some(mut tools) = render_tools(provider, declarations, options)? else {
        return Ok(None);
    };
    if let Some((name, value)) = last_tool_field {
        let last = tools
            .as_array_mut()
            .and_then(|tools| tools.last_mut())
            .and_then(Value::as_object_mut);
        if let Some(last) = last {
            last.insert(name.to_owned(), value.clone());
        }
    }
    let raw =
        serde_json::value::to_raw_value(&tools).map_err(|err| ModelError::InvalidRequest {
            provider: provider.name().to_owned(),
            reason: format!("the declared tools cannot be written as JSON: {err}"),
        })?;
    Ok(Some(Arc::from(raw)))
}

/// The declared tools written into `body` as `tools` ([`render_tools`], once a set of
/// declarations for this client: `rendered` keeps them, and logs a set's warnings once),
/// and with them the request's tool choice as the API takes it: `tool_choice` writes it,
/// `None` where the API needs nothing said ([`ToolChoice::Auto`], every API's default), and
/// it goes under `choice_field`. Without tools, neither is written. A tool choice no
/// declared tool answers is refused first (see [`check_choice`]). `last_tool_field` is a
/// field the last tool declaration carries (Anthropic's cache mark), rendered with the set:
/// a client gives the same one on every request, as `rendered` is the client's own.
pub(crate) fn declare_tools(
    provider: Provider,
    request: &ChatRequest,
    rendered: &RenderedSets,
    body: &mut RequestBody,
    choice_field: &str,
    tool_choice: impl FnOnce(&ToolChoice) -> Option<Value>,
    last_tool_field: Option<(&str, &Value)>,
) -> Result<(), ModelError> {
    check_choice(provider, request)?;
    let options = RenderOptions {
        strict: request.options.strict,
    };
    // A request without tools (often a new empty set each time) would only crowd out the
    // sets worth keeping.
    let tools = if request.tools.is_empty() {
        None
    } else {
        rendered.tools(&request.tools, provider, options, |set| {
            render_raw(provider, set, &options, last_tool_field)
        })?
    };
    if let Some(tools) = tools {
        body.declare_tools(tools);
        if let Some(choice) = tool_choice(&request.options.tool_choice) {
            body.insert(choice_field.to_owned(), choice);
        }
    }
    Ok(())
}

/// The request's model name; an empty one is a [`ModelError::InvalidRequest`].
pub(crate) fn model_name(provider: Provider, request: &ChatRequest) -> Result<&str, ModelError> {
    let model = request.model.trim();
    if model.is_empty() {
        return Err(ModelError::InvalidRequest {
            provider: provider.name().to_owned(),
            reason: "the request names no model (`ChatRequest::model` is empty)".to_owned(),
        });
    }
    Ok(model)
}

/// A body that names the request's model in its `model` field, its first (Gemini names
/// the model in the path instead); an empty name is a [`ModelError::InvalidRequest`].
pub(crate) fn naming_model(
    provider: Provider,
    request: &ChatRequest,
) -> Result<RequestBody, ModelError> {
    let mut body = RequestBody::default();
    body.insert(
        "model".to_owned(),
        Value::String(model_name(provider, request)?.to_owned()),
    );
    Ok(body)
}

/// A sampling number as JSON, written as its shortest decimal (`0.2`, not
/// `0.20000000298023224`); `None` for NaN and infinities.
pub(crate) fn number(value: f32) -> Option<Value> {
    let decimal: f64 = value.to_string().parse().ok()?;
    serde_json::Number::from_f64(decimal).map(Value::Number)
}

/// The unsigned count at `pointer` (0 where the API reported none).
pub(crate) fn count(body: &Value, pointer: &str) -> u64 {
    body.pointer(pointer).and_then(Value::as_u64).unwrap_or(0)
}

/// The model an answer in `provider`'s format says answered: Gemini's `modelVersion`, the
/// others' `model`; `None` where it is missing, empty or not a string.
fn answering_model(provider: Provider, body: &Value) -> Option<String> {
    let key = match provider {
        Provider::Gemini => "modelVersion",
        _ => "model",
    };
    body.get(key)
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|model| !model.is_empty())
        .map(str::to_owned)
}

/// The answer in `body`: calls, text, stop reason and answering model read by `provider`'s
/// format, with `usage`. A body of the wrong shape is a [`ModelError::MalformedResponse`]
/// (quoting an `error` the body carries, for servers that answer errors with a 200).
pub(crate) fn answer(
    provider: Provider,
    body: &Value,
    usage: Usage,
) -> Result<ChatResponse, ModelError> {
    let malformed = |err: toolsmith_core::provider::ResponseError| {
        let mut reason = err.to_string();
        if body.get("error").is_some() {
            let quoted = super::transport::api_message(body.to_string().as_bytes());
            reason.push_str(&format!(" (the body holds an error: {quoted})"));
        }
        ModelError::MalformedResponse {
            provider: provider.name().to_owned(),
            reason,
        }
    };
    let provider_turn = provider
        .parse_turn_entries(body)
        .map_err(malformed)?
        .map(|entries| ProviderTurn { provider, entries });
    let answer = provider.parse_answer(body).map_err(malformed)?;
    Ok(ChatResponse {
        calls: answer.calls,
        text: answer.text,
        stop_reason: answer.stop_reason,
        usage,
        provider_turn,
        model: answering_model(provider, body),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn body_fields_fill_in_and_never_replace() {
        let mut body = json!({"model": "m", "store": false,
            "generationConfig": {"temperature": 0.2}, "messages": [{"role": "user"}]});
        let fields = json!({"model": "other", "store": true, "top_p": 0.9,
            "generationConfig": {"temperature": 1.0, "thinkingConfig": {"thinkingBudget": 0}},
            "messages": {"role": "system"}});
        fill_in(body.as_object_mut().unwrap(), fields.as_object().unwrap());
        assert_eq!(
            body,
            json!({"model": "m", "store": false, "top_p": 0.9,
                "generationConfig": {"temperature": 0.2, "thinkingConfig": {"thinkingBudget": 0}},
                "messages": [{"role": "user"}]})
        );
    }

    #[test]
    fn numbers_are_written_as_decimals() {
        assert_eq!(number(0.2), Some(json!(0.2)));
        assert_eq!(number(1.0), Some(json!(1.0)));
        assert_eq!(number(f32::NAN), None);
        assert_eq!(number(f32::INFINITY), None);
    }
}
