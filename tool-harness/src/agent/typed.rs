//! Typed answers: a run's answer read as a Rust type ([`AgentSession::send_as`],
//! [`AgentSession::run_as`], and their `_input_` forms, which take images with the text).
//!
//! The run goes as any other, tools and all, to the model's answer in its own words. Then the
//! model is asked once more, with [`FINAL_ANSWER_TOOL`] declared and forced
//! ([`ToolChoice::Tool`]), whose arguments are the type's schema. Arguments are checked
//! against that schema as a tool's are before it runs; an answer that does not fit is sent
//! back with what was wrong, argument path and all, for the model to mend, up to
//! [`MAX_ANSWER_ATTEMPTS`] answers. A tool call is the one way every API (and a local
//! model's template) takes a schema, and it leaves the run's own answer free of format rules.
//! The exchange is under the session's context overflow policy as the run was, its own
//! request (and the question it answers) never shortened.

use std::sync::Arc;

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use toolsmith_core::provider::ParsedCall;
use toolsmith_core::{
    Args, CancellationToken, FnTool, ToolArgs, ToolCallManager, ToolCallResult, ToolDeclarations,
    ToolImpl, type_schema,
};
use tracing::Instrument as _;

use super::declaration_check::check_declarations;
use super::ledger::{LeftRun, RunLedger, RunOrigin};
use super::session::{AbandonedIfDropped, CancelledIfDropped, RunEnd, following, is_cancelled};
use super::token_estimate::TokenEstimate;
use super::{AgentRun, AgentSession, AgenticError, UserInput};
use crate::model::{ChatRequest, ChatResponse, Message, ToolChoice, ToolResultMessage};

/// The tool the model gives a typed answer with.
pub const FINAL_ANSWER_TOOL: &str = "final_answer";

/// How many answers the model may give before a typed run fails with
/// [`AgenticError::AnswerInvalid`]: the first, and two mended after being told what was
/// wrong.
pub const MAX_ANSWER_ATTEMPTS: usize = 3;

/// The property a type whose schema is not an object is asked for under: the APIs take only
/// objects as a tool's arguments.
const WRAPPED: &str = "answer";

/// What the model is told before each answer it is asked for.
const ASK: &str = "Now give your final answer by calling `final_answer`, in the form its \
                   parameters ask for.";

/// A run whose answer was read as a `T`.
#[derive(Debug, Clone)]
pub struct TypedRun<T> {
    /// The answer.
    pub value: T,
    /// The run: its transcript is the conversation up to the model's answer in its own words
    /// (the exchange that gave the typed answer is not kept), its `text` and `stop_reason`
    /// that answer's; its model calls and usage count that exchange too.
    pub run: AgentRun,
}

impl AgentSession {
    /// [`send`](Self::send), then the answer as a `T`: the model is asked to give it as the
    /// arguments of [`FINAL_ANSWER_TOOL`], whose schema is `T`'s, and told what was wrong
    /// (with the argument's path) when they do not fit, up to [`MAX_ANSWER_ATTEMPTS`]
    /// answers. The kept conversation ends with the model's answer in its own words, as
    /// after a `send`.
    ///
    /// A type whose schema is not an object (a `Vec`, a `String`, an enum, an `Option`,
    /// `serde_json::Value`) is asked for as the `answer` property of one, a recursive type's
    /// definitions moved to that object's root.
    ///
    /// `T` derives serde's `Deserialize` and schemars' `JsonSchema`, not `ToolArgs`: a
    /// `Deserialize` type is already read as a tool's arguments through serde, so the two
    /// derives on one type conflict (`conflicting implementations of trait FromToolArgs`).
    ///
    /// A session with a tool of its own named [`FINAL_ANSWER_TOOL`] cannot ask for a typed
    /// answer: the call fails with [`AgenticError::Config`] before the run starts (the
    /// model would see two tools of one name, and the API refuse the request).
    ///
    /// ```
    /// use serde::Deserialize;
    /// use serde_json::json;
    /// use toolsmith::harness::agent::AgentSession;
    /// use toolsmith::harness::model::{ScriptedModel, ScriptedTurn};
    ///
    /// /// A city's weather.
    /// #[derive(Debug, Deserialize, schemars::JsonSchema)]
    /// struct Weather {
    ///     /// The city.
    ///     city: String,
    ///     /// Degrees Celsius.
    ///     celsius: f64,
    /// }
    ///
    /// # #[tokio::main(flavor = "current_thread")] async fn main() {
    /// let model = ScriptedModel::new([
    ///     ScriptedTurn::text("It is 21 °C in Paris."),
    ///     ScriptedTurn::call("final_answer", json!({"city": "Paris", "celsius": 21.0})),
    /// ]);
    /// let session = AgentSession::builder(model).with_model("scripted").build().unwrap();
    /// let weather = session.send_as::<Weather>("Weather in Paris?").await.unwrap();
    /// assert_eq!(weather.value.city, "Paris");
    /// assert_eq!(weather.value.celsius, 21.0);
    /// assert_eq!(weather.run.text, "It is 21 °C in Paris.");
    /// # }
    /// ```
    pub async fn send_as<T: JsonSchema + DeserializeOwned>(
        &self,
        text: impl Into<String>,
    ) -> Result<TypedRun<T>, AgenticError> {
        self.send_input_as(UserInput::new(text)).await
    }

    /// [`send_as`](Self::send_as) of text with images (a [`UserInput`], as
    /// [`send_input`](Self::send_input) takes).
    pub async fn send_input_as<T: JsonSchema + DeserializeOwned>(
        &self,
        input: impl Into<UserInput>,
    ) -> Result<TypedRun<T>, AgenticError> {
        let origin = RunOrigin::here(self).leaving_its_ledger();
        let form = self.answer_form::<T>()?;
        let mut estimate = TokenEstimate::default();
        let run = self
            .continue_conversation(input.into(), None, (origin.clone(), &mut estimate))
            .await?;
        self.answer_as(&form, (run, estimate), (None, origin)).await
    }

    /// [`run`](Self::run), then the answer as a `T`, as [`send_as`](Self::send_as) reads
    /// it.
    pub async fn run_as<T: JsonSchema + DeserializeOwned>(
        &self,
        text: impl Into<String>,
    ) -> Result<TypedRun<T>, AgenticError> {
        self.run_input_as(UserInput::new(text)).await
    }

    /// [`run_as`](Self::run_as) of text with images (a [`UserInput`], as
    /// [`run_input`](Self::run_input) takes).
    pub async fn run_input_as<T: JsonSchema + DeserializeOwned>(
        &self,
        input: impl Into<UserInput>,
    ) -> Result<TypedRun<T>, AgenticError> {
        let origin = RunOrigin::here(self).leaving_its_ledger();
        let form = self.answer_form::<T>()?;
        let mut estimate = TokenEstimate::default();
        let run = self
            .run_under(input.into(), origin.clone(), &mut estimate)
            .await?;
        self.answer_as(&form, (run, estimate), (None, origin)).await
    }

    /// [`send_with_cancellation`](Self::send_with_cancellation), then the answer as a `T`, as
    /// [`send_as`](Self::send_as) reads it: `token` stops the answer's exchange too (the run
    /// then ends with [`AgenticError::Cancelled`], the kept conversation as after the run,
    /// and the `agent` children the run's calls started are stopped, as for a run cancelled
    /// before its answer).
    pub async fn send_as_with_cancellation<T: JsonSchema + DeserializeOwned>(
        &self,
        text: impl Into<String>,
        token: CancellationToken,
    ) -> Result<TypedRun<T>, AgenticError> {
        self.send_input_as_with_cancellation(UserInput::new(text), token)
            .await
    }

    /// [`send_as_with_cancellation`](Self::send_as_with_cancellation) of text with images.
    pub async fn send_input_as_with_cancellation<T: JsonSchema + DeserializeOwned>(
        &self,
        input: impl Into<UserInput>,
        token: CancellationToken,
    ) -> Result<TypedRun<T>, AgenticError> {
        let origin = RunOrigin::here(self).leaving_its_ledger();
        let form = self.answer_form::<T>()?;
        let mut estimate = TokenEstimate::default();
        let run = self
            .continue_conversation(input.into(), Some(&token), (origin.clone(), &mut estimate))
            .await?;
        self.answer_as(&form, (run, estimate), (Some(&token), origin))
            .await
    }

    /// [`run_with_cancellation`](Self::run_with_cancellation), then the answer as a `T`, as
    /// [`send_as_with_cancellation`](Self::send_as_with_cancellation) reads it.
    pub async fn run_as_with_cancellation<T: JsonSchema + DeserializeOwned>(
        &self,
        text: impl Into<String>,
        token: CancellationToken,
    ) -> Result<TypedRun<T>, AgenticError> {
        self.run_input_as_with_cancellation(UserInput::new(text), token)
            .await
    }

    /// [`run_as_with_cancellation`](Self::run_as_with_cancellation) of text with images.
    pub async fn run_input_as_with_cancellation<T: JsonSchema + DeserializeOwned>(
        &self,
        input: impl Into<UserInput>,
        token: CancellationToken,
    ) -> Result<TypedRun<T>, AgenticError> {
        let origin = RunOrigin::here(self).leaving_its_ledger();
        let form = self.answer_form::<T>()?;
        let mut estimate = TokenEstimate::default();
        let run = self
            .run_with_cancellation_estimated(input.into(), &token, (origin.clone(), &mut estimate))
            .await?;
        self.answer_as(&form, (run, estimate), (Some(&token), origin))
            .await
    }

    /// How a `T` is asked for, or why it cannot be: known before the run, so that nothing
    /// is spent on a run whose answer could not be read.
    fn answer_form<T: JsonSchema>(&self) -> Result<AnswerForm, AgenticError> {
        if self.manager.contains(FINAL_ANSWER_TOOL) {
            return Err(AgenticError::Config(format!(
                "a tool named `{FINAL_ANSWER_TOOL}` is registered: a typed answer (`send_as`, \
                 `run_as`) is given with a `{FINAL_ANSWER_TOOL}` of its own; rename the tool"
            )));
        }
        let form = AnswerForm::of::<T>().map_err(|reason| {
            AgenticError::Config(format!(
                "a typed answer cannot be asked for as `{}`: {reason}",
                std::any::type_name::<T>()
            ))
        })?;
        // Its `final_answer` declared as the exchange will declare it: a model that cannot
        // take it (Gemini and a recursive type) would otherwise fail only after the run.
        check_declarations(&*self.model, &form.checker, || {
            format!(
                "a typed answer cannot be asked for as `{}`: its `{FINAL_ANSWER_TOOL}` tool",
                std::any::type_name::<T>()
            )
        })?;
        Ok(form)
    }

    /// `run`'s answer as a `T`, asked for as the arguments of [`FINAL_ANSWER_TOOL`]; stopped
    /// by the session's token, and by `caller`'s when given; from the run's `origin` (its
    /// tokens counted and its events streamed where the run's were). `run` comes with the
    /// estimate of its last request, which the exchange continues.
    async fn answer_as<T: DeserializeOwned>(
        &self,
        form: &AnswerForm,
        run: (AgentRun, TokenEstimate),
        (caller, origin): (Option<&CancellationToken>, RunOrigin),
    ) -> Result<TypedRun<T>, AgenticError> {
        let cancel = self.cancellation.child_token();
        match caller {
            Some(token) => {
                let exchange = self.exchange(form, run, (&cancel, caller), origin);
                following(token, &cancel, exchange).await
            }
            None => self.exchange(form, run, (&cancel, None), origin).await,
        }
    }

    /// The answer's exchange, in the run's ledger and span: the exchange is the typed run's
    /// last part, so one cancelled, stopped, ended by a panic or a budget, or dropped, stops
    /// the background children the run's calls started, as the run ending so would have; the
    /// run's stream hears those children until it ends; and the run's `invoke_agent` span
    /// holds the exchange's model calls and ends with the typed run's usage and, when it
    /// failed, its `error.type` (`answer_invalid` among them).
    async fn exchange<T: DeserializeOwned>(
        &self,
        form: &AnswerForm,
        run: (AgentRun, TokenEstimate),
        tokens: (&CancellationToken, Option<&CancellationToken>),
        origin: RunOrigin,
    ) -> Result<TypedRun<T>, AgenticError> {
        // The run's own ledger: the exchange's calls count as the run's did (in the run
        // around it, if any, and toward the budget the run's children stop at), its events
        // streamed where the run's were.
        let LeftRun { ledger, span } = origin.left_run().unwrap_or_else(|| LeftRun {
            ledger: Arc::new(RunLedger::from_origin(origin)),
            span: tracing::Span::none(),
        });
        let dropped = AbandonedIfDropped(Some(&ledger));
        // The typed run's span says it was cancelled when its exchange is given up.
        let given_up = CancelledIfDropped(Some(&span));
        let answered = {
            // Pinned in place, as the run's loop is: the span's wrapper holds its address.
            let asked = std::pin::pin!(self.ask_for_answer(form, run, tokens, &ledger));
            asked.instrument(span.clone()).await
        };
        dropped.disarm();
        given_up.disarm();
        // The typed run ends here, not where its text came: its stream, which heard the
        // run's children until now, takes no more of them.
        ledger.run_ended();
        let ended = match &answered {
            Ok(typed) => Some(&typed.run),
            Err(error) => {
                span.record("error.type", error.kind_name());
                error.run()
            }
        };
        if let Some(run) = ended {
            span.record("gen_ai.usage.input_tokens", run.usage.input_tokens);
            span.record("gen_ai.usage.output_tokens", run.usage.output_tokens);
        }
        answered
    }

    /// The run's error for `end`, having stopped the run's children first when an end so
    /// stops them ([`RunEnd::stops_children`]).
    fn ended_in_exchange(&self, end: RunEnd, run: AgentRun, ledger: &RunLedger) -> AgenticError {
        if end.stops_children() {
            ledger.abandon();
        }
        end.into_error(run, self.max_turns)
    }

    /// Asks for the answer: up to [`MAX_ANSWER_ATTEMPTS`] answers under `cancel`, each
    /// asked under the session's context overflow policy, which is not shown the
    /// exchange's own request (from the first [`ASK`] on) and keeps the run's question.
    async fn ask_for_answer<T: DeserializeOwned>(
        &self,
        form: &AnswerForm,
        (mut run, mut estimate): (AgentRun, TokenEstimate),
        (cancel, caller): (&CancellationToken, Option<&CancellationToken>),
        ledger: &RunLedger,
    ) -> Result<TypedRun<T>, AgenticError> {
        let mut declared = ToolDeclarations::clone(&self.manager.offered_declarations());
        // A tool of that name registered since the check (the run's tools may register
        // more): its declaration would clash with the answer's, which takes its place.
        declared
            .tools
            .retain(|tool| tool.name() != FINAL_ANSWER_TOOL);
        declared
            .tools
            .push(form.checker_tool().definition().clone());
        let mut request = ChatRequest {
            model: self.model_name.clone(),
            system: self.system_prompt.clone(),
            messages: run.transcript.clone(),
            tools: Arc::new(declared),
            options: self.options.clone(),
        };
        // The exchange's own request starts here; the messages before it are the run's.
        let mut run_part = request.messages.len();
        request.messages.push(Message::user(ASK));
        let provider = match self.provider_name() {
            Ok(name) => name,
            Err(panic) => return Err(self.ended_in_exchange(RunEnd::Panicked(panic), run, ledger)),
        };
        // The run's answer's: `run.text`'s, which the exchange does not replace.
        let stop_reason = run.stop_reason.clone();
        let mut problem = String::new();
        for _ in 0..MAX_ANSWER_ATTEMPTS {
            // Looked at before each request, as the run's loop does: the model call below
            // polls the model first, so a token cancelled already (a stop pressed as the
            // run answered) would not keep it from being asked.
            if is_cancelled(cancel, caller) {
                return Err(self.ended_in_exchange(RunEnd::Cancelled, run, ledger));
            }
            // A paused session makes no model call, this exchange's included.
            if let Err(end) = self.wait_if_paused(cancel).await {
                return Err(self.ended_in_exchange(end, run, ledger));
            }
            if let Some(spent) = self.budget_spent(&run, ledger) {
                return Err(self.ended_in_exchange(spent, run, ledger));
            }
            let protected = request.messages.len() - run_part;
            let answered = self
                .call_model_fitting(
                    (&mut request, &mut estimate, protected),
                    ToolChoice::Tool(FINAL_ANSWER_TOOL.to_owned()),
                    cancel,
                    (caller, provider),
                    (&mut run, ledger),
                )
                .await;
            // The policy shortened the run's part only.
            run_part = request.messages.len() - protected;
            // What the run's children spent meanwhile is the run's too (a ledger not the
            // run's, which starts at none, counts less).
            let descendants = ledger.descendants();
            if descendants.total_tokens() > run.child_usage.total_tokens() {
                run.child_usage = descendants;
            }
            let response = match answered {
                Ok(response) => response,
                Err(end) => return Err(self.ended_in_exchange(end, run, ledger)),
            };
            run.stop_reason.clone_from(&stop_reason);
            match form.read::<T>(&response) {
                Ok(value) => return Ok(TypedRun { value, run }),
                Err(wrong) => {
                    send_back(&mut request.messages, &response, &wrong);
                    problem = wrong.summary;
                }
            }
        }
        Err(AgenticError::AnswerInvalid {
            type_name: std::any::type_name::<T>(),
            attempts: MAX_ANSWER_ATTEMPTS,
            reason: problem,
            run: Box::new(run),
        })
    }
}

/// The arguments [`FINAL_ANSWER_TOOL`] takes for a type, and how its answer is read back.
struct AnswerForm {
    /// The tool, registered alone, so that its arguments are checked as any tool's are.
    checker: ToolCallManager,
    /// Whether the type is asked for under [`WRAPPED`].
    wrapped: bool,
}

impl AnswerForm {
    /// The form for `T`, or why `T` cannot be asked for (a schema the checker refuses).
    fn of<T: JsonSchema>() -> Result<Self, String> {
        let schema = type_schema::<T>();
        let wrapped = schema.get("type") != Some(&json!("object"));
        let schema = if wrapped { wrap(schema) } else { schema };
        let tool = FnTool::new(
            FINAL_ANSWER_TOOL,
            "Give your final answer, in the form the parameters describe.",
            Args::new(schema),
            // Never run: only its arguments are checked.
            |_| async { Ok(ToolCallResult::text("")) },
        );
        let checker = ToolCallManager::new(FINAL_ANSWER_TOOL);
        checker
            .register(Arc::new(tool))
            .map_err(|error| error.to_string())?;
        Ok(Self { checker, wrapped })
    }

    fn checker_tool(&self) -> Arc<dyn ToolImpl> {
        self.checker
            .get(FINAL_ANSWER_TOOL)
            .expect("the manager holds the tool it was built with")
    }

    /// The answer in `response` as a `T`: its first call of [`FINAL_ANSWER_TOOL`] that fits,
    /// or what was wrong with each, for the model.
    fn read<T: DeserializeOwned>(&self, response: &ChatResponse) -> Result<T, Wrong> {
        let mut wrong = Wrong {
            by_call: vec![None; response.calls.len()],
            summary: format!("no call of `{FINAL_ANSWER_TOOL}` came"),
        };
        for (index, call) in response.calls.iter().enumerate() {
            if id_and_name(call).1 != FINAL_ANSWER_TOOL {
                continue;
            }
            match self.read_call(call) {
                Ok(value) => return Ok(value),
                Err(problem) => wrong.by_call[index] = Some(problem),
            }
        }
        if let Some(first) = wrong.by_call.iter().flatten().next() {
            wrong.summary.clone_from(first);
        }
        Err(wrong)
    }

    /// One call's arguments as a `T`, or what was wrong with them.
    fn read_call<T: DeserializeOwned>(&self, call: &ParsedCall) -> Result<T, String> {
        let call = match call {
            Ok(call) => call,
            // Arguments that could not be read at all.
            Err(rejected) => return Err(rejected.error.to_string()),
        };
        let arguments = self
            .checker
            .validate_arguments(FINAL_ANSWER_TOOL, &call.arguments)
            .map_err(|error| error.to_string())?;
        // Read as a tool's arguments are (bounded in depth, a failure naming its path, the
        // one the model wrote: under `answer` when wrapped), by the same reader.
        let args = ToolArgs::new(FINAL_ANSWER_TOOL, &arguments);
        let value = if self.wrapped {
            args.read_field(WRAPPED, arguments.get(WRAPPED).unwrap_or(&Value::Null))
        } else {
            args.parse::<T>()
        };
        value.map_err(|error| error.to_string())
    }
}

/// What was wrong with an answer: for each call of the response, the problem of a call of
/// [`FINAL_ANSWER_TOOL`] (`None` for another tool's), and the problem to report.
struct Wrong {
    by_call: Vec<Option<String>>,
    summary: String,
}

/// `schema`, a type's, as the property [`WRAPPED`] of an object. The type's definitions
/// (a recursive type's `$defs`) move to the new root, where their `#/$defs/…` references
/// look for them, and a reference to the type's own root (`#`) becomes one to the property.
fn wrap(mut schema: Value) -> Value {
    let mut definitions = schema
        .as_object_mut()
        .and_then(|object| object.remove("$defs"));
    let own_root = format!("#/properties/{WRAPPED}");
    // Without recursion: the walk does not depend on how deeply the type nests.
    let mut pending: Vec<&mut Value> = vec![&mut schema];
    pending.extend(definitions.as_mut());
    while let Some(value) = pending.pop() {
        match value {
            Value::Object(object) => {
                for (key, inner) in object.iter_mut() {
                    if key == "$ref" && inner == "#" {
                        *inner = Value::String(own_root.clone());
                    } else {
                        pending.push(inner);
                    }
                }
            }
            Value::Array(items) => pending.extend(items.iter_mut()),
            _ => {}
        }
    }
    let mut wrapper = json!({
        "type": "object",
        "properties": {WRAPPED: schema},
        "required": [WRAPPED],
        "additionalProperties": false,
    });
    if let Some(definitions) = definitions {
        wrapper["$defs"] = definitions;
    }
    wrapper
}

/// Adds `response` to `messages` with a result for each of its calls (what was `wrong` with
/// each answer, "not run" for any other call), so that the model, asked again, sees what to
/// mend; an answer without calls is followed by the request again.
fn send_back(messages: &mut Vec<Message>, response: &ChatResponse, wrong: &Wrong) {
    let results: Vec<ToolResultMessage> = response
        .calls
        .iter()
        .zip(&wrong.by_call)
        .map(|(call, problem)| {
            let (id, name) = id_and_name(call);
            ToolResultMessage {
                call_id: id.to_owned(),
                name: name.to_owned(),
                result: ToolCallResult::error(match problem {
                    Some(problem) => problem.clone(),
                    None => format!("Not run: only `{FINAL_ANSWER_TOOL}` is taken now."),
                }),
            }
        })
        .collect();
    messages.push(response.to_message());
    if results.is_empty() {
        messages.push(Message::user(ASK));
    } else {
        messages.push(Message::ToolResults { results });
    }
}

/// The id and tool name of a call, read or not.
fn id_and_name(call: &ParsedCall) -> (&str, &str) {
    match call {
        Ok(call) => (&call.id, &call.name),
        Err(rejected) => (&rejected.id, &rejected.name),
    }
}
