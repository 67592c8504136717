//! Typed answers: a run's answer read as a Rust type ([`AgentSession::send_as`],
//! [`AgentSession::run_as`]).
//!
//! The run goes as any other, tools and all, to the model's answer in its own words. Then the
//! model is asked once more, with [`FINAL_ANSWER_TOOL`] declared and forced
//! ([`ToolChoice::Tool`]), whose arguments are the type's schema. Arguments are checked
//! against that schema as a tool's are before it runs; an answer that does not fit is sent
//! back with what was wrong, argument path and all, for the model to mend, up to
//! [`MAX_ANSWER_ATTEMPTS`] answers. A tool call is the one way every API (and a local
//! model's template) takes a schema, and it leaves the run's own answer free of format rules.

use std::sync::Arc;

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use toolsmith_core::provider::ParsedCall;
use toolsmith_core::{
    Args, FnTool, ToolCallManager, ToolCallResult, ToolDeclarations, ToolImpl, type_schema,
};

use super::ledger::RunLedger;
use super::{AgentRun, AgentSession, AgenticError};
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
    /// (the exchange that gave the typed answer is not kept); its model calls and usage
    /// count that exchange too.
    pub run: AgentRun,
}

impl AgentSession {
    /// [`send`](Self::send), then the answer as a `T`: the model is asked to give it as the
    /// arguments of [`FINAL_ANSWER_TOOL`], whose schema is `T`'s, and told what was wrong
    /// (with the argument's path) when they do not fit, up to [`MAX_ANSWER_ATTEMPTS`]
    /// answers. The kept conversation ends with the model's answer in its own words, as
    /// after a `send`.
    ///
    /// A type whose schema is not an object (a `Vec`, a `String`, an enum of variants with
    /// data) is asked for as the `answer` property of one.
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
        let run = self.send(text).await?;
        self.answer_as(run).await
    }

    /// [`run`](Self::run), then the answer as a `T`, as [`send_as`](Self::send_as) reads
    /// it.
    pub async fn run_as<T: JsonSchema + DeserializeOwned>(
        &self,
        text: impl Into<String>,
    ) -> Result<TypedRun<T>, AgenticError> {
        let run = self.run(text).await?;
        self.answer_as(run).await
    }

    /// `run`'s answer as a `T`, asked for as the arguments of [`FINAL_ANSWER_TOOL`].
    async fn answer_as<T: JsonSchema + DeserializeOwned>(
        &self,
        mut run: AgentRun,
    ) -> Result<TypedRun<T>, AgenticError> {
        let form = AnswerForm::of::<T>();
        let mut declared = ToolDeclarations::clone(&self.manager.offered_declarations());
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
        request.messages.push(Message::user(ASK));
        let provider = match self.provider_name() {
            Ok(name) => name,
            Err(panic) => return Err(panic.into_error(Box::new(run))),
        };
        // Counted where the run's own calls were: in the run around this one, if any.
        let ledger = RunLedger::under(RunLedger::of_calling_run());
        let cancel = self.cancellation.child_token();
        let mut problem = String::new();
        for _ in 0..MAX_ANSWER_ATTEMPTS {
            let response = match self
                .call_model(
                    &mut request,
                    ToolChoice::Tool(FINAL_ANSWER_TOOL.to_owned()),
                    &cancel,
                    (None, provider),
                    (&mut run, &ledger),
                )
                .await
            {
                Ok(response) => response,
                Err(end) => return Err(end.into_error(run, self.max_turns)),
            };
            match form.read::<T>(&response) {
                Ok(value) => return Ok(TypedRun { value, run }),
                Err(wrong) => {
                    send_back(&mut request.messages, &response, &wrong);
                    problem = wrong;
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
    fn of<T: JsonSchema>() -> Self {
        let schema = type_schema::<T>();
        let wrapped = schema.get("type") != Some(&json!("object"));
        let schema = if wrapped {
            json!({
                "type": "object",
                "properties": {WRAPPED: schema},
                "required": [WRAPPED],
                "additionalProperties": false,
            })
        } else {
            schema
        };
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
            .expect("one tool in a manager of its own registers");
        Self { checker, wrapped }
    }

    fn checker_tool(&self) -> Arc<dyn ToolImpl> {
        self.checker
            .get(FINAL_ANSWER_TOOL)
            .expect("the manager holds the tool it was built with")
    }

    /// The answer in `response` as a `T`, or what was wrong with it, for the model.
    fn read<T: DeserializeOwned>(&self, response: &ChatResponse) -> Result<T, String> {
        let answer = response
            .calls
            .iter()
            .find(|call| id_and_name(call).1 == FINAL_ANSWER_TOOL);
        let call = match answer {
            Some(Ok(call)) => call,
            // Arguments that could not be read at all.
            Some(Err(rejected)) => return Err(rejected.error.to_string()),
            None => return Err(format!("no call of `{FINAL_ANSWER_TOOL}` came")),
        };
        let arguments = self
            .checker
            .validate_arguments(FINAL_ANSWER_TOOL, &call.arguments)
            .map_err(|error| error.to_string())?;
        let value = if self.wrapped {
            arguments.get(WRAPPED).unwrap_or(&Value::Null)
        } else {
            arguments.as_value()
        };
        T::deserialize(value)
            .map_err(|error| format!("Invalid arguments for tool '{FINAL_ANSWER_TOOL}': {error}"))
    }
}

/// Adds `response` to `messages` with a result for each of its calls (what was `wrong` for
/// the answer, "not run" for any other), so that the model, asked again, sees what to mend;
/// an answer without calls is followed by the request again.
fn send_back(messages: &mut Vec<Message>, response: &ChatResponse, wrong: &str) {
    let results: Vec<ToolResultMessage> = response
        .calls
        .iter()
        .map(|call| {
            let (id, name) = id_and_name(call);
            ToolResultMessage {
                call_id: id.to_owned(),
                name: name.to_owned(),
                result: ToolCallResult::error(if name == FINAL_ANSWER_TOOL {
                    wrong.to_owned()
                } else {
                    format!("Not run: only `{FINAL_ANSWER_TOOL}` is taken now.")
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
