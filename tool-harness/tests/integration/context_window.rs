//! The context window guard (`with_context_window`): a request the session estimates too
//! long (the provider's count of the previous request plus what was added, or the whole
//! request by its bytes) is shortened by the overflow policy before it is sent, so the model
//! never sees it; the model's refusal is still the backstop; a window needs a policy. And
//! the typed answer's exchange (`send_as`, `run_as`) under the policy, its question kept.

use std::sync::{Arc, Mutex};

use serde_json::json;
use toolsmith_core::{ToolArguments, ToolCallRequest, ToolShed, tool_fn};
use toolsmith_harness::ToolPreset;
use toolsmith_harness::agent::{
    AgentEvent, AgentSession, AgentSessionBuilder, AgenticError, ContextEstimate, DROPPED_RESULT,
    DropOldestExchanges, FINAL_ANSWER_TOOL, Overflow, OverflowCause, Shortened, SubAgentConfig,
};
use toolsmith_harness::model::{
    ChatOptions, ChatResponse, Message, ModelError, ScriptedModel, ScriptedTurn, Usage,
};

use crate::typed_answers::Weather;

fn too_long() -> ModelError {
    ModelError::ContextTooLong {
        provider: "anthropic".into(),
        status: 400,
        message: "prompt is too long: 209353 tokens > 199999 maximum".into(),
    }
}

/// The `ContextShortened` events a session sends, recorded.
type Shortenings = Arc<Mutex<Vec<AgentEvent>>>;

/// A session over `model` with `DropOldestExchanges`, `window`, output reserved by
/// `max_output`, and its shortenings recorded.
fn guarded(
    model: &ScriptedModel,
    window: u64,
    max_output: Option<u32>,
) -> (AgentSession, Shortenings) {
    let shortenings = Shortenings::default();
    let seen = Arc::clone(&shortenings);
    let session = AgentSession::builder(model.clone())
        .with_model("m")
        .with_options(ChatOptions {
            max_output_tokens: max_output,
            ..ChatOptions::default()
        })
        .with_context_overflow(DropOldestExchanges::new())
        .with_context_window(window)
        .with_event_handler(move |event: &AgentEvent| {
            if matches!(event, AgentEvent::ContextShortened { .. }) {
                seen.lock().unwrap().push(event.clone());
            }
        })
        .build()
        .unwrap();
    (session, shortenings)
}

/// A question of `bytes` bytes (one token a 3 bytes, and 4 for the message).
fn question(bytes: usize) -> String {
    let end = "Which?";
    format!("{}{end}", "x".repeat(bytes - end.len()))
}

#[tokio::test]
async fn the_guard_shortens_before_sending_when_the_count_and_the_added_text_pass_the_window() {
    let long = question(300);
    let model = ScriptedModel::new([
        ScriptedTurn::text("Paris.").with_usage(Usage::new(800, 2)),
        ScriptedTurn::text("Rome."),
    ]);
    // 800 counted, "Paris." (2 + 4) and the question (100 + 4) added: 910, and 100 of
    // output reserved: 1010 > 1000.
    let (session, shortenings) = guarded(&model, 1000, Some(100));
    session
        .send("What is the capital of France?")
        .await
        .unwrap();
    let run = session.send(long.clone()).await.unwrap();
    assert_eq!(run.text, "Rome.");
    // The model never saw the long request: one model call, without the first exchange.
    assert_eq!(run.model_calls, 1);
    let requests = model.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(requests[1].messages, [Message::user(long.clone())]);
    assert_eq!(
        *shortenings.lock().unwrap(),
        [AgentEvent::ContextShortened {
            turn: 1,
            attempt: 1,
            dropped: 2,
            emptied: 0,
            estimate: Some(ContextEstimate::new(910, 100, 1000)),
        }]
    );
    // The kept conversation is the shortened one.
    assert_eq!(session.transcript().await.len(), 2);
    model.assert_complete();
}

#[tokio::test]
async fn the_guard_drops_only_the_exchanges_the_window_calls_for() {
    // Four exchanges of a question of 300 bytes (100 + 4) and "Answer N." (3 + 4): 111
    // each; no provider count, so every request is estimated whole by its bytes.
    let questions: Vec<String> = (1..=5).map(|n| format!("{n}{}", question(299))).collect();
    let model = ScriptedModel::new(
        (1..=5)
            .map(|n| ScriptedTurn::text(format!("Answer {n}.")))
            .collect::<Vec<_>>(),
    );
    // The fourth request (3 × 111 + 104 = 437) fits 500; the fifth (4 × 111 + 104 = 548)
    // passes it by 48, which the oldest exchange alone sheds.
    let (session, shortenings) = guarded(&model, 500, None);
    for question in &questions {
        session.send(question.clone()).await.unwrap();
    }
    let requests = model.requests();
    assert_eq!(requests.len(), 5);
    assert_eq!(requests[3].messages.len(), 7);
    // Sent without the first exchange only: the second, third and fourth are kept (halving
    // the earlier exchanges would have dropped the second too).
    let sent = &requests[4].messages;
    let asked: Vec<&str> = sent.iter().filter_map(Message::text).collect();
    assert_eq!(
        asked,
        [
            questions[1].as_str(),
            "Answer 2.",
            &questions[2],
            "Answer 3.",
            &questions[3],
            "Answer 4.",
            &questions[4],
        ]
    );
    assert_eq!(
        *shortenings.lock().unwrap(),
        [AgentEvent::ContextShortened {
            turn: 1,
            attempt: 1,
            dropped: 2,
            emptied: 0,
            estimate: Some(ContextEstimate::new(548, 0, 500)),
        }]
    );
    assert_eq!(session.transcript().await.len(), 8);
    model.assert_complete();
}

#[tokio::test]
async fn under_the_window_nothing_is_shortened() {
    let model = ScriptedModel::new([
        ScriptedTurn::text("Paris.").with_usage(Usage::new(800, 2)),
        ScriptedTurn::text("Rome."),
    ]);
    // 910 and 100 reserved: 1010, within 1010.
    let (session, shortenings) = guarded(&model, 1010, Some(100));
    session
        .send("What is the capital of France?")
        .await
        .unwrap();
    session.send(question(300)).await.unwrap();
    assert_eq!(model.requests()[1].messages.len(), 3);
    assert!(shortenings.lock().unwrap().is_empty());
}

#[tokio::test]
async fn a_first_request_is_estimated_whole_from_its_bytes() {
    // No count that holds: the kept conversation, set by hand (the count of the first
    // request no longer begins it), and the question are estimated by their bytes
    // (204 + 204 + 6 = 414 > 300).
    let model = ScriptedModel::new([
        ScriptedTurn::text("Hi.").with_usage(Usage::new(10, 1)),
        ScriptedTurn::respond(|request| {
            assert_eq!(request.messages, [Message::user("Now?")]);
            Ok(ChatResponse::text("Now."))
        }),
    ]);
    let (session, shortenings) = guarded(&model, 300, None);
    session.send("Hello").await.unwrap();
    session
        .edit_transcript(|messages| {
            messages.clear();
            messages.push(Message::user("q".repeat(600)));
            messages.push(Message::assistant("a".repeat(600)));
        })
        .await;
    assert_eq!(session.send("Now?").await.unwrap().text, "Now.");
    assert_eq!(
        *shortenings.lock().unwrap(),
        [AgentEvent::ContextShortened {
            turn: 1,
            attempt: 1,
            dropped: 2,
            emptied: 0,
            estimate: Some(ContextEstimate::new(414, 0, 300)),
        }]
    );
}

#[tokio::test]
async fn the_system_prompt_and_the_tools_count_and_a_policy_that_shortens_nothing_lets_the_model_decide()
 {
    // The system prompt alone (900 bytes: 300 tokens) passes the window: the policy is
    // asked, with the estimate, shortens nothing, and the request goes as it is.
    let causes: Arc<Mutex<Vec<(u64, u64)>>> = Arc::default();
    let seen = Arc::clone(&causes);
    let model = ScriptedModel::new([ScriptedTurn::text("Hello.")]);
    let session = AgentSession::builder(model.clone())
        .with_model("m")
        .with_system_prompt("s".repeat(900))
        .with_toolshed(ToolShed::new().tools(ToolPreset::agent(SubAgentConfig::new(
            ScriptedModel::default(),
            "child",
        ))))
        .with_context_overflow(move |_: &mut Vec<Message>, overflow: &Overflow<'_>| {
            if let OverflowCause::Estimated(estimate) = overflow.cause {
                seen.lock()
                    .unwrap()
                    .push((estimate.input_tokens, estimate.window));
            }
            Shortened::NOTHING
        })
        .with_context_window(300)
        .build()
        .unwrap();
    assert_eq!(session.run("Hi").await.unwrap().text, "Hello.");
    assert_eq!(model.requests().len(), 1);
    let tools = model.requests()[0].tools.clone();
    assert!(!tools.is_empty());
    let tool_tokens: u64 = tools
        .iter()
        .map(|tool| (serde_json::to_string(tool).unwrap().len() as u64).div_ceil(3) + 4)
        .sum();
    // Asked once: a policy that shortened nothing is not asked again for the estimate.
    assert_eq!(
        *causes.lock().unwrap(),
        [(300 + 4 + 1 + 4 + tool_tokens, 300)]
    );
}

#[tokio::test]
async fn the_model_s_refusal_is_still_answered_when_the_estimate_fell_short() {
    let model = ScriptedModel::new([
        ScriptedTurn::text("Paris.").with_usage(Usage::new(10, 2)),
        // Far under the window by the estimate, refused all the same.
        ScriptedTurn::error(too_long()),
        ScriptedTurn::respond(|request| {
            assert_eq!(request.messages, [Message::user("And Italy?")]);
            Ok(ChatResponse::text("Rome."))
        }),
    ]);
    let (session, shortenings) = guarded(&model, 100_000, None);
    session.send("France?").await.unwrap();
    let run = session.send("And Italy?").await.unwrap();
    assert_eq!(run.text, "Rome.");
    assert_eq!(run.model_calls, 2);
    assert_eq!(
        *shortenings.lock().unwrap(),
        [AgentEvent::ContextShortened {
            turn: 1,
            attempt: 1,
            dropped: 2,
            emptied: 0,
            estimate: None,
        }]
    );
}

/// The error `builder` is refused with.
fn refused(builder: AgentSessionBuilder) -> String {
    match builder.build() {
        Err(AgenticError::Config(message)) => message,
        other => panic!("expected a config error, got {other:?}"),
    }
}

#[test]
fn a_window_without_a_policy_or_of_nothing_is_refused_naming_the_settings() {
    let message = refused(
        AgentSession::builder(ScriptedModel::default())
            .with_model("m")
            .with_context_window(200_000),
    );
    assert!(message.contains("with_context_window(200000)"), "{message}");
    assert!(message.contains("with_context_overflow"), "{message}");
    let message = refused(
        AgentSession::builder(ScriptedModel::default())
            .with_model("m")
            .with_context_overflow(DropOldestExchanges::new())
            .with_context_window(0),
    );
    assert!(message.contains("context window of 0"), "{message}");
}

/// Whether `messages` holds the instruction to give the typed answer.
fn asks_for_the_answer(messages: &[Message]) -> bool {
    messages
        .last()
        .and_then(Message::text)
        .is_some_and(|text| text.contains(FINAL_ANSWER_TOOL))
}

/// Look up the weather of a city.
#[tool_fn]
fn forecast(
    /// The city.
    city: String,
) -> String {
    format!("21 °C in {city}, {}", REPORT)
}

/// The long part of `forecast`'s report: longer than `DROPPED_RESULT`, so that emptying it
/// shortens the request.
const REPORT: &str = "a long report of the wind, the rain and the clouds, hour by hour, for the \
                      whole of the coming week";

#[tokio::test]
async fn send_as_whose_exchange_is_refused_is_shortened_with_the_question_kept() {
    let model = ScriptedModel::new([
        ScriptedTurn::call("forecast", json!({"city": "Paris"})),
        ScriptedTurn::text("It is 21 °C in Paris."),
        // The answer's exchange no longer fits.
        ScriptedTurn::error(too_long()),
        ScriptedTurn::respond(|request| {
            // The question's exchange is the current one: kept, its tool result emptied
            // (not dropped whole as an exchange before the request for the answer).
            let messages = &request.messages;
            assert_eq!(messages.len(), 5, "{messages:?}");
            assert_eq!(messages[0], Message::user("Weather in Paris?"));
            assert_eq!(messages[1].calls()[0].name, "forecast");
            assert_eq!(
                messages[2].results()[0].result.content.to_text(),
                DROPPED_RESULT
            );
            assert_eq!(messages[3].text(), Some("It is 21 °C in Paris."));
            assert!(asks_for_the_answer(messages));
            Ok(ChatResponse::calls(vec![Ok(ToolCallRequest::new(
                "a1",
                FINAL_ANSWER_TOOL,
                ToolArguments::try_from(json!({"city": "Paris", "celsius": 21})).unwrap(),
            ))]))
        }),
    ]);
    let session = AgentSession::builder(model.clone())
        .with_model("m")
        .with_toolshed(ToolShed::new().tool(Forecast))
        .with_context_overflow(DropOldestExchanges::new())
        .build()
        .unwrap();
    let names = session.tool_manager().names();
    session.tool_manager().activate(&names);
    let typed = session
        .send_as::<Weather>("Weather in Paris?")
        .await
        .unwrap();
    assert_eq!(typed.value.city, "Paris");
    // The refused request and the one asked again count.
    assert_eq!(typed.run.model_calls, 4);
    // The run's transcript, and the kept conversation, keep the result.
    let kept = session.transcript().await;
    assert_eq!(
        kept[2].results()[0].result.content.to_text(),
        format!("21 °C in Paris, {REPORT}")
    );
    model.assert_complete();
}

#[tokio::test]
async fn a_policy_that_drops_the_question_of_a_typed_answer_has_it_put_back() {
    let model = ScriptedModel::new([
        ScriptedTurn::text("It is 21 °C in Paris."),
        ScriptedTurn::error(too_long()),
        ScriptedTurn::respond(|request| {
            // The policy kept only the run's last message: the question comes back first.
            assert_eq!(request.messages[0], Message::user("Weather in Paris?"));
            assert_eq!(request.messages[1].text(), Some("It is 21 °C in Paris."));
            assert!(asks_for_the_answer(&request.messages));
            assert_eq!(request.messages.len(), 3);
            Ok(ChatResponse::text("no call"))
        }),
        ScriptedTurn::call(FINAL_ANSWER_TOOL, json!({"city": "Paris", "celsius": 21})),
    ]);
    let session = AgentSession::builder(model.clone())
        .with_model("m")
        .with_context_overflow(|messages: &mut Vec<Message>, _: &Overflow<'_>| {
            let dropped = messages.len() - 1;
            messages.drain(..dropped);
            Shortened::new(dropped, 0)
        })
        .build()
        .unwrap();
    let typed = session
        .run_as::<Weather>("Weather in Paris?")
        .await
        .unwrap();
    assert_eq!(typed.value.celsius, 21.0);
    // The answer sent back to mend is the exchange's own: after the request, whole.
    let last = model.requests().last().unwrap().messages.clone();
    assert_eq!(last.len(), 5);
    assert_eq!(last[3].text(), Some("no call"));
    model.assert_complete();
}

#[tokio::test]
async fn send_as_with_a_window_is_shortened_before_its_exchange_is_sent() {
    let answer = "w".repeat(1500);
    let model = ScriptedModel::new([
        ScriptedTurn::text("Sunny.").with_usage(Usage::new(500, 2)),
        ScriptedTurn::text(answer.clone()).with_usage(Usage::new(520, 500)),
        ScriptedTurn::respond(move |request| {
            // 520 counted, the run's answer (500 + 4), the request for the typed answer
            // and the `final_answer` declaration: past 1000 before it was sent; sent
            // without the older exchange.
            assert_eq!(request.messages.len(), 3, "{:?}", request.messages);
            assert_eq!(request.messages[0], Message::user("Weather in Paris?"));
            assert!(asks_for_the_answer(&request.messages));
            Ok(ChatResponse::text("no call"))
        }),
        ScriptedTurn::call(FINAL_ANSWER_TOOL, json!({"city": "Paris", "celsius": 21})),
    ]);
    let (session, shortenings) = guarded(&model, 1000, None);
    session.send("Weather in London?").await.unwrap();
    let typed = session
        .send_as::<Weather>("Weather in Paris?")
        .await
        .unwrap();
    assert_eq!(typed.value.city, "Paris");
    assert_eq!(typed.run.text, answer);
    let shortenings = shortenings.lock().unwrap().clone();
    assert_eq!(shortenings.len(), 1, "{shortenings:?}");
    let AgentEvent::ContextShortened {
        turn,
        dropped,
        estimate: Some(estimate),
        ..
    } = &shortenings[0]
    else {
        panic!("expected a shortening by the estimate: {shortenings:?}");
    };
    // The exchange's first request, counted after the run's one.
    assert_eq!((*turn, *dropped), (2, 2));
    assert!(estimate.input_tokens > 1000, "{estimate:?}");
    // The run's transcript, and the kept conversation, are the run's: not shortened.
    assert_eq!(typed.run.transcript.len(), 4);
    assert_eq!(session.transcript().await.len(), 4);
    model.assert_complete();
}

/// The estimates the parent's policy (which shortens nothing) was asked with, as
/// (input tokens, window), in a run whose session has `window` and starts one child (system
/// prompt of 6000 bytes: 2000 tokens and more), whose config has `child_window`.
async fn estimates_asked(window: u64, child_window: Option<u64>) -> Vec<(u64, u64)> {
    let asked: Arc<Mutex<Vec<(u64, u64)>>> = Arc::default();
    let seen = Arc::clone(&asked);
    let mut config =
        SubAgentConfig::new(ScriptedModel::new([ScriptedTurn::text("child done")]), "c")
            .with_system_prompt("s".repeat(6000));
    if let Some(child_window) = child_window {
        config = config.with_context_window(child_window);
    }
    let model = ScriptedModel::new([
        ScriptedTurn::call("agent", json!({"command": "start", "task": "work"})),
        ScriptedTurn::call(
            "agent",
            json!({"command": "result", "id": "agent-1", "wait_ms": 5000}),
        ),
        ScriptedTurn::text("done"),
    ]);
    let session = AgentSession::builder(model)
        .with_model("m")
        .with_toolshed(ToolShed::new().tools(ToolPreset::agent(config)))
        .with_context_overflow(move |_: &mut Vec<Message>, overflow: &Overflow<'_>| {
            if let OverflowCause::Estimated(estimate) = overflow.cause {
                seen.lock()
                    .unwrap()
                    .push((estimate.input_tokens, estimate.window));
            }
            Shortened::NOTHING
        })
        .with_context_window(window)
        .build()
        .unwrap();
    let names = session.tool_manager().names();
    session.tool_manager().activate(&names);
    let run = session.run("delegate").await.unwrap();
    assert_eq!(run.tool_calls[1].result.content.to_text(), "child done");
    asked.lock().unwrap().clone()
}

#[tokio::test]
async fn children_inherit_the_session_s_window_unless_their_config_has_one() {
    // The parent's window of 1800 fits its own requests (its tools' declarations, some
    // 1300 tokens, included), not the child's first: asked once, for the child's.
    let asked = estimates_asked(1800, None).await;
    assert_eq!(asked.len(), 1, "{asked:?}");
    assert!(asked[0].0 > 2000 && asked[0].1 == 1800, "{asked:?}");
    // The config's own window in the session's place.
    let asked = estimates_asked(100_000, Some(900)).await;
    assert_eq!(asked.len(), 1, "{asked:?}");
    assert_eq!(asked[0].1, 900, "{asked:?}");
    let asked = estimates_asked(100_000, None).await;
    assert!(asked.is_empty(), "{asked:?}");
}

#[tokio::test]
async fn a_child_s_window_without_any_policy_fails_its_start_saying_so() {
    let config = SubAgentConfig::new(ScriptedModel::default(), "c").with_context_window(500);
    let model = ScriptedModel::new([
        ScriptedTurn::call("agent", json!({"command": "start", "task": "work"})),
        ScriptedTurn::text("done"),
    ]);
    let session = AgentSession::builder(model)
        .with_model("m")
        .with_toolshed(ToolShed::new().tools(ToolPreset::agent(config)))
        .build()
        .unwrap();
    let names = session.tool_manager().names();
    session.tool_manager().activate(&names);
    let run = session.run("delegate").await.unwrap();
    let result = &run.tool_calls[0].result;
    assert!(result.is_error());
    assert!(
        result.content.to_text().contains("with_context_overflow"),
        "{}",
        result.content.to_text()
    );
}

/// Read `size` bytes.
#[tool_fn]
fn read(
    /// How many.
    size: usize,
) -> String {
    "r".repeat(size)
}

#[tokio::test]
async fn after_shortening_the_request_is_estimated_again_from_what_is_left() {
    let model = ScriptedModel::new([
        ScriptedTurn::call("read", json!({"size": 2400})).with_usage(Usage::new(50, 5)),
        // The count of the request with the long result (50, the call and some 800 of
        // the result's bytes: it was sent): 990 of 1000.
        ScriptedTurn::call("read", json!({"size": 300})).with_usage(Usage::new(990, 5)),
        ScriptedTurn::respond(|request| {
            // 990 and the new call and result pass the window: the long result was
            // emptied, and what is left (estimated whole, the count being of the long
            // result) fits: the newer result is whole.
            let results: Vec<String> = request
                .messages
                .iter()
                .flat_map(Message::results)
                .map(|result| result.result.content.to_text())
                .collect();
            assert_eq!(results, [DROPPED_RESULT.to_owned(), "r".repeat(300)]);
            Ok(ChatResponse::text("done"))
        }),
    ]);
    let shortenings = Shortenings::default();
    let seen = Arc::clone(&shortenings);
    let session = AgentSession::builder(model.clone())
        .with_model("m")
        .with_toolshed(ToolShed::new().tool(Read))
        .with_context_overflow(DropOldestExchanges::new())
        .with_context_window(1000)
        .with_event_handler(move |event: &AgentEvent| {
            if matches!(event, AgentEvent::ContextShortened { .. }) {
                seen.lock().unwrap().push(event.clone());
            }
        })
        .build()
        .unwrap();
    let names = session.tool_manager().names();
    session.tool_manager().activate(&names);
    assert_eq!(session.run("Read twice.").await.unwrap().text, "done");
    let shortenings = shortenings.lock().unwrap().clone();
    assert_eq!(shortenings.len(), 1, "{shortenings:?}");
    assert!(
        matches!(
            shortenings[0],
            AgentEvent::ContextShortened {
                turn: 3,
                emptied: 1,
                estimate: Some(_),
                ..
            }
        ),
        "{shortenings:?}"
    );
    model.assert_complete();
}

/// `ScriptedModel` answering as it does, with an output limit of its own (as an HTTP
/// client's builder default, or Anthropic's `max_tokens` it always sends).
struct LimitedOutput {
    model: ScriptedModel,
    limit: u32,
}

#[async_trait::async_trait]
impl toolsmith_harness::model::ChatModel for LimitedOutput {
    fn name(&self) -> &str {
        "limited"
    }

    fn output_limit(&self, request: &toolsmith_harness::model::ChatRequest) -> Option<u32> {
        Some(request.options.max_output_tokens.unwrap_or(self.limit))
    }

    async fn complete(
        &self,
        request: &toolsmith_harness::model::ChatRequest,
    ) -> Result<ChatResponse, ModelError> {
        toolsmith_harness::model::ChatModel::complete(&self.model, request).await
    }
}

#[tokio::test]
async fn the_model_s_own_output_limit_is_reserved_when_the_request_sets_none() {
    let model = ScriptedModel::new([
        ScriptedTurn::text("Paris.").with_usage(Usage::new(800, 2)),
        ScriptedTurn::text("Rome."),
    ]);
    // No `max_output_tokens` in the options: the model's own 100 is reserved. 800 counted,
    // "Paris." (2 + 4) and the question (30 + 4) added: 840, and 100: 940 < 1000; a
    // question of 300 bytes: 1010 > 1000.
    let session = AgentSession::builder(LimitedOutput {
        model: model.clone(),
        limit: 100,
    })
    .with_model("m")
    .with_context_overflow(DropOldestExchanges::new())
    .with_context_window(1000)
    .build()
    .unwrap();
    session
        .send("What is the capital of France?")
        .await
        .unwrap();
    let run = session.send(question(300)).await.unwrap();
    assert_eq!(run.text, "Rome.");
    // Shortened before sending: the first exchange is gone.
    assert_eq!(model.requests()[1].messages, [Message::user(question(300))]);
}

#[cfg(feature = "http-models")]
#[test]
fn the_http_clients_say_the_output_limit_they_send() {
    use toolsmith_harness::model::ChatModel as _;
    use toolsmith_harness::model::ChatRequest;
    use toolsmith_harness::model::http::{
        AnthropicModel, DEFAULT_ANTHROPIC_MAX_TOKENS, OpenAiChatModel,
    };
    let local = "http://127.0.0.1:1";
    let unset = ChatRequest::default();
    let set = ChatRequest {
        options: ChatOptions {
            max_output_tokens: Some(64),
            ..ChatOptions::default()
        },
        ..ChatRequest::default()
    };
    let anthropic = AnthropicModel::builder().base_url(local).build().unwrap();
    assert_eq!(
        anthropic.output_limit(&unset),
        Some(DEFAULT_ANTHROPIC_MAX_TOKENS)
    );
    assert_eq!(anthropic.output_limit(&set), Some(64));
    let chat = OpenAiChatModel::builder().base_url(local).build().unwrap();
    assert_eq!(chat.output_limit(&unset), None);
    assert_eq!(chat.output_limit(&set), Some(64));
    let bounded = OpenAiChatModel::builder()
        .base_url(local)
        .max_output_tokens(512)
        .build()
        .unwrap();
    assert_eq!(bounded.output_limit(&unset), Some(512));
    assert_eq!(bounded.output_limit(&set), Some(64));
}
