//! [`ScriptedModel`]: a model that replays scripted turns and records what it was sent, for
//! testing agents without an API.

use std::collections::VecDeque;
use std::fmt;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use async_trait::async_trait;
use serde_json::{Map, Value};
use toolsmith_core::provider::Provider;
use toolsmith_core::{clone_value, free_value};

use super::{
    ChatModel, ChatRequest, ChatResponse, ImageLimits, Message, ModelError, ProviderTurn,
    StopReason, Usage,
};

type Responder = Arc<dyn Fn(&ChatRequest) -> Result<ChatResponse, ModelError> + Send + Sync>;

/// One scripted answer.
#[derive(Clone)]
pub struct ScriptedTurn {
    answer: Answer,
    usage: Usage,
    delay: Option<Duration>,
}

#[derive(Clone)]
enum Answer {
    Reply {
        text: Option<String>,
        calls: Vec<ScriptedCall>,
        provider_turn: Option<KeptTurn>,
        /// The stop reason to report instead of the one the answer implies.
        stop_reason: Option<StopReason>,
    },
    Fail(ModelError),
    Respond(Responder),
}

/// A scripted call: its arguments as an object, or as raw text (read the way a provider's
/// arguments string is, so unreadable JSON becomes a rejected call).
///
/// The arguments are a caller's value, which may nest deeper than serde_json's recursive
/// copy and drop fit on a stack: they are copied and freed with core's loops instead.
struct ScriptedCall {
    id: Option<String>,
    name: String,
    arguments: Value,
    /// A recorded call's Gemini signature, given back when it is replayed.
    thought_signature: Option<String>,
}

impl Clone for ScriptedCall {
    fn clone(&self) -> Self {
        Self {
            id: self.id.clone(),
            name: self.name.clone(),
            arguments: clone_value(&self.arguments),
            thought_signature: self.thought_signature.clone(),
        }
    }
}

impl Drop for ScriptedCall {
    fn drop(&mut self) {
        free_value(std::mem::take(&mut self.arguments));
    }
}

/// A provider's turn a script answers with: a caller's values, copied and freed with core's
/// loops as a call's arguments are (an agent refuses one nested too deep as malformed).
struct KeptTurn(ProviderTurn);

impl Clone for KeptTurn {
    fn clone(&self) -> Self {
        Self(copy_turn(&self.0))
    }
}

impl Drop for KeptTurn {
    fn drop(&mut self) {
        std::mem::take(&mut self.0.entries)
            .into_iter()
            .for_each(free_value);
    }
}

/// A copy of `turn`, its entries copied without recursion.
fn copy_turn(turn: &ProviderTurn) -> ProviderTurn {
    ProviderTurn {
        provider: turn.provider,
        entries: turn.entries.iter().map(clone_value).collect(),
    }
}

impl ScriptedCall {
    /// The call as an OpenAI Chat `tool_calls` entry under `id`, its arguments copied
    /// without recursion (a `json!` would serialise them, once per level).
    fn to_openai(&self, id: String) -> Value {
        let mut function = Map::new();
        function.insert("name".to_owned(), Value::String(self.name.clone()));
        function.insert("arguments".to_owned(), clone_value(&self.arguments));
        let mut entry = Map::new();
        entry.insert("id".to_owned(), Value::String(id));
        entry.insert("type".to_owned(), Value::from("function"));
        entry.insert("function".to_owned(), Value::Object(function));
        Value::Object(entry)
    }
}

impl ScriptedTurn {
    /// A text answer, which ends an agent's run.
    #[must_use]
    pub fn text(text: impl Into<String>) -> Self {
        Self::reply(Some(text.into()), Vec::new())
    }

    /// One tool call with `arguments` (its id is generated: `call-<turn>-<index>`).
    #[must_use]
    pub fn call(name: impl Into<String>, arguments: Value) -> Self {
        Self::reply(None, Vec::new()).and_call(name, arguments)
    }

    /// Tool calls, each `(name, arguments)`, ids generated.
    #[must_use]
    pub fn calls<N: Into<String>>(calls: impl IntoIterator<Item = (N, Value)>) -> Self {
        calls
            .into_iter()
            .fold(Self::reply(None, Vec::new()), |turn, (name, arguments)| {
                turn.and_call(name, arguments)
            })
    }

    /// A failed model call.
    #[must_use]
    pub fn error(error: ModelError) -> Self {
        Self {
            answer: Answer::Fail(error),
            usage: Usage::default(),
            delay: None,
        }
    }

    /// An answer computed from the request (for scripts that depend on what was sent).
    #[must_use]
    pub fn respond(
        respond: impl Fn(&ChatRequest) -> Result<ChatResponse, ModelError> + Send + Sync + 'static,
    ) -> Self {
        Self {
            answer: Answer::Respond(Arc::new(respond)),
            usage: Usage::default(),
            delay: None,
        }
    }

    /// The same turn with one more call.
    #[must_use]
    pub fn and_call(self, name: impl Into<String>, arguments: Value) -> Self {
        self.and_scripted_call(ScriptedCall {
            id: None,
            name: name.into(),
            arguments,
            thought_signature: None,
        })
    }

    /// The same turn with one more call under the id `id`.
    #[must_use]
    pub fn and_call_with_id(
        self,
        id: impl Into<String>,
        name: impl Into<String>,
        arguments: Value,
    ) -> Self {
        self.and_scripted_call(ScriptedCall {
            id: Some(id.into()),
            name: name.into(),
            arguments,
            thought_signature: None,
        })
    }

    /// The same turn with `call` after its calls (a turn that fails or computes its answer
    /// has none).
    fn and_scripted_call(mut self, call: ScriptedCall) -> Self {
        if let Answer::Reply { calls, .. } = &mut self.answer {
            calls.push(call);
        }
        self
    }

    /// The same turn with one more call whose arguments are the raw text `arguments`, read
    /// as a provider's arguments string is (broken JSON is repaired where it can be, and a
    /// call that cannot be read is rejected with the error the model gets back).
    #[must_use]
    pub fn and_raw_call(self, name: impl Into<String>, arguments: impl Into<String>) -> Self {
        self.and_call(name, Value::String(arguments.into()))
    }

    /// The same turn with text beside its calls.
    #[must_use]
    pub fn with_text(mut self, text: impl Into<String>) -> Self {
        if let Answer::Reply { text: slot, .. } = &mut self.answer {
            *slot = Some(text.into());
        }
        self
    }

    /// The same turn answered as a provider wrote it ([`ChatResponse::provider_turn`]), as
    /// a recorded turn is replayed.
    #[must_use]
    pub fn with_provider_turn(mut self, turn: ProviderTurn) -> Self {
        if let Answer::Reply {
            provider_turn: slot,
            ..
        } = &mut self.answer
        {
            *slot = Some(KeptTurn(turn));
        }
        self
    }

    /// The same turn reporting `reason` as why the model stopped (by default
    /// [`StopReason::ToolCalls`] for an answer with calls, [`StopReason::EndTurn`] for one
    /// without): [`StopReason::MaxTokens`] makes an answer cut off at the output limit,
    /// whose calls an agent does not run.
    #[must_use]
    pub fn with_stop_reason(mut self, reason: StopReason) -> Self {
        if let Answer::Reply {
            stop_reason: slot, ..
        } = &mut self.answer
        {
            *slot = Some(reason);
        }
        self
    }

    /// The same turn reporting `usage`. Without it a turn reports none (all zeros), so
    /// a session's [token budget](crate::agent::AgentSessionBuilder::with_token_budget)
    /// never ends a scripted run.
    #[must_use]
    pub fn with_usage(mut self, usage: Usage) -> Self {
        self.usage = usage;
        self
    }

    /// The same turn answered after `delay` (a slow model; Tokio's clock).
    #[must_use]
    pub fn with_delay(mut self, delay: Duration) -> Self {
        self.delay = Some(delay);
        self
    }

    fn reply(text: Option<String>, calls: Vec<ScriptedCall>) -> Self {
        Self {
            answer: Answer::Reply {
                text,
                calls,
                provider_turn: None,
                stop_reason: None,
            },
            usage: Usage::default(),
            delay: None,
        }
    }

    /// The answer to `request`, the `turn`-th of the script.
    fn answer(&self, turn: usize, request: &ChatRequest) -> Result<ChatResponse, ModelError> {
        let mut response = match &self.answer {
            Answer::Fail(error) => return Err(error.clone()),
            Answer::Respond(respond) => {
                let mut response = respond(request)?;
                // `with_usage` on a computed answer reports that usage instead of its own.
                if self.usage != Usage::default() {
                    response.usage = self.usage;
                }
                return Ok(response);
            }
            Answer::Reply {
                text,
                calls,
                provider_turn,
                stop_reason,
            } => {
                // Read through the OpenAI Chat parser, so scripted calls are read exactly as
                // a provider's are (ids, repairs, rejected arguments).
                let tool_calls: Vec<Value> = calls
                    .iter()
                    .enumerate()
                    .map(|(index, call)| {
                        let id = call
                            .id
                            .clone()
                            .unwrap_or_else(|| format!("call-{turn}-{index}"));
                        call.to_openai(id)
                    })
                    .collect();
                let mut message = Map::new();
                message.insert("tool_calls".to_owned(), Value::Array(tool_calls));
                let message = Value::Object(message);
                // Arguments nested too deep are rejected here, as a provider's are.
                let parsed = Provider::OpenAiChat.parse_calls(&message);
                free_value(message);
                let mut parsed = parsed.map_err(|err| ModelError::Script(err.to_string()))?;
                for (parsed, call) in parsed.iter_mut().zip(calls) {
                    if let Ok(request) = parsed {
                        request
                            .thought_signature
                            .clone_from(&call.thought_signature);
                    }
                }
                let mut response = ChatResponse::calls(parsed);
                response.text = text.clone();
                response.provider_turn = provider_turn.as_ref().map(|kept| copy_turn(&kept.0));
                if !response.has_calls() {
                    response.stop_reason = StopReason::EndTurn;
                }
                if let Some(reason) = stop_reason {
                    response.stop_reason = reason.clone();
                }
                response
            }
        };
        response.usage = self.usage;
        Ok(response)
    }
}

impl fmt::Debug for ScriptedTurn {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.answer {
            Answer::Reply { text, calls, .. } => {
                let names: Vec<&str> = calls.iter().map(|c| c.name.as_str()).collect();
                write!(f, "text {text:?}, calls {names:?}")
            }
            Answer::Fail(error) => write!(f, "error {error}"),
            Answer::Respond(_) => f.write_str("computed answer"),
        }
    }
}

/// A model that replays a list of [`ScriptedTurn`]s, one per request, and records every
/// request it was sent. It is how Toolsmith tests its agent loop, and how you test yours.
///
/// ```
/// use serde_json::json;
/// use toolsmith::harness::model::{ChatModel, ChatRequest, ScriptedModel, ScriptedTurn};
///
/// # futures::executor::block_on(async {
/// let model = ScriptedModel::new([
///     ScriptedTurn::call("add", json!({"a": 2, "b": 3})),
///     ScriptedTurn::text("2 + 3 = 5"),
/// ]);
/// let first = model.complete(&ChatRequest::default()).await.unwrap();
/// assert_eq!(first.calls[0].as_ref().unwrap().name, "add");
/// assert_eq!(model.remaining(), 1);
/// let last = model.complete(&ChatRequest::default()).await.unwrap();
/// assert_eq!(last.text.as_deref(), Some("2 + 3 = 5"));
/// model.assert_complete();
/// assert_eq!(model.requests().len(), 2);
/// # });
/// ```
#[derive(Debug, Clone, Default)]
pub struct ScriptedModel {
    state: Arc<Mutex<ScriptState>>,
    /// What [`ChatModel::image_limits`] answers.
    image_limits: ImageLimits,
}

#[derive(Debug, Default)]
struct ScriptState {
    turns: VecDeque<ScriptedTurn>,
    requests: Vec<ChatRequest>,
}

impl ScriptedModel {
    /// A model that answers with `turns`, in order.
    pub fn new(turns: impl IntoIterator<Item = ScriptedTurn>) -> Self {
        Self {
            state: Arc::new(Mutex::new(ScriptState {
                turns: turns.into_iter().collect(),
                requests: Vec::new(),
            })),
            image_limits: ImageLimits::none(),
        }
    }

    /// The model with `limits` as its [`image_limits`](ChatModel::image_limits) (by
    /// default [`ImageLimits::none`]), to test what a session sends a model that refuses
    /// some images. The script and the requests stay shared with the model's clones.
    ///
    /// ```
    /// use toolsmith::harness::model::{ChatModel, ImageLimits, ScriptedModel};
    ///
    /// let model = ScriptedModel::default().with_image_limits(ImageLimits::none().with_max_side(8000));
    /// assert_eq!(model.image_limits().max_side, Some(8000));
    /// ```
    #[must_use]
    pub fn with_image_limits(mut self, limits: ImageLimits) -> Self {
        self.image_limits = limits;
        self
    }

    /// A model that answers as the assistant did in `transcript` (a recorded
    /// [`AgentRun::transcript`](crate::agent::AgentRun::transcript)): one turn per assistant
    /// message, with its text, its calls under their recorded ids (a call that could not be
    /// read as the model wrote it, Gemini's signatures kept), the provider's own turn and
    /// the stop reason (so that an answer cut off at the output limit is cut off again).
    /// Replaying a run through the same session sends the same requests and records the
    /// same transcript, which is how a test pins them.
    pub fn replaying(transcript: &[Message]) -> Self {
        Self::new(transcript.iter().filter_map(|message| match message {
            Message::Assistant {
                text,
                calls,
                provider_turn,
                stop_reason,
            } => {
                let calls = calls
                    .iter()
                    .map(|call| ScriptedCall {
                        id: Some(call.id.clone()),
                        name: call.name.clone(),
                        // A rejected call is replayed as it was written, to be rejected
                        // the same way.
                        arguments: call
                            .as_written
                            .clone()
                            .map_or_else(|| clone_value(call.arguments.as_value()), Value::String),
                        thought_signature: call.thought_signature.clone(),
                    })
                    .collect();
                let mut turn = ScriptedTurn::reply(text.clone(), calls);
                if let Some(provider_turn) = provider_turn {
                    turn = turn.with_provider_turn(copy_turn(provider_turn));
                }
                if let Some(reason) = stop_reason {
                    turn = turn.with_stop_reason(reason.clone());
                }
                Some(turn)
            }
            _ => None,
        }))
    }

    /// Appends turns to the script.
    pub fn push(&self, turns: impl IntoIterator<Item = ScriptedTurn>) {
        self.lock().turns.extend(turns);
    }

    /// Every request sent so far, in order.
    pub fn requests(&self) -> Vec<ChatRequest> {
        self.lock().requests.clone()
    }

    /// How many scripted turns have not been used.
    pub fn remaining(&self) -> usize {
        self.lock().turns.len()
    }

    /// Panics, listing them, if scripted turns were never used: a test's script and its
    /// agent disagree.
    #[track_caller]
    pub fn assert_complete(&self) {
        let state = self.lock();
        if !state.turns.is_empty() {
            let unused: Vec<String> = state.turns.iter().map(|t| format!("{t:?}")).collect();
            panic!(
                "ScriptedModel: {} scripted turn(s) never used after {} request(s): {}",
                unused.len(),
                state.requests.len(),
                unused.join("; ")
            );
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, ScriptState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[async_trait]
impl ChatModel for ScriptedModel {
    fn name(&self) -> &str {
        "scripted"
    }

    fn image_limits(&self) -> ImageLimits {
        self.image_limits
    }

    async fn complete(&self, request: &ChatRequest) -> Result<ChatResponse, ModelError> {
        let (turn, number) = {
            let mut state = self.lock();
            state.requests.push(request.clone());
            let number = state.requests.len();
            (state.turns.pop_front(), number)
        };
        let Some(turn) = turn else {
            return Err(ModelError::Script(format!(
                "no scripted turn left for request {number}"
            )));
        };
        if let Some(delay) = turn.delay {
            tokio::time::sleep(delay).await;
        }
        turn.answer(number, request)
    }
}
