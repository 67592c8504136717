//! Typed answers under unusual and hostile model output: answers in the wrong shape, in
//! pairs, beside other calls, nested or sized without bound; types whose schema is no plain
//! object; the run ending (an error, a cancellation) while the answer is asked for.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde::Deserialize;
use serde_json::{Value, json};
use toolsmith_core::{ToolArguments, ToolCallRequest, ToolCallResult, ToolShed, tool_fn};
use toolsmith_harness::agent::{
    AgentEvent, AgentSession, AgenticError, FINAL_ANSWER_TOOL, MAX_ANSWER_ATTEMPTS,
};
use toolsmith_harness::model::{
    ChatResponse, ModelError, ScriptedModel, ScriptedTurn, StopReason, Usage,
};

use crate::typed_answers::{Weather, results, session};

/// The schema `final_answer` was declared with in `model`'s request `index`.
fn declared_schema(model: &ScriptedModel, index: usize) -> Value {
    model.requests()[index]
        .tools
        .iter()
        .find(|tool| tool.name() == FINAL_ANSWER_TOOL)
        .expect("final_answer declared")
        .function_spec()
        .parameters
}

/// A node of a tree: recursive, so its schema keeps `$defs`.
#[derive(Debug, PartialEq, Deserialize, schemars::JsonSchema)]
struct Node {
    name: String,
    children: Vec<Node>,
}

/// An expression: recursive at its root, which it refers to as `#`.
#[derive(Debug, PartialEq, Deserialize, schemars::JsonSchema)]
enum Expr {
    Num(f64),
    Neg(Box<Expr>),
}

#[tokio::test]
async fn a_recursive_type_under_answer_keeps_its_definitions_reachable() {
    let tree = json!([{"name": "a", "children": [{"name": "b", "children": []}]}]);
    let model = ScriptedModel::new([
        ScriptedTurn::text("A tree."),
        ScriptedTurn::call(FINAL_ANSWER_TOOL, json!({ "answer": tree })),
    ]);
    let typed = session(&model).send_as::<Vec<Node>>("Tree?").await.unwrap();
    assert_eq!(typed.value[0].children[0].name, "b");
    // The definitions moved to the root, where `#/$defs/Node` finds them.
    let schema = declared_schema(&model, 1);
    assert_eq!(schema["$defs"]["Node"]["type"], "object");
    assert!(schema["properties"]["answer"].get("$defs").is_none());

    // `#`, the type's own root, is now the `answer` property: `-(-1)` fits.
    let model = ScriptedModel::new([
        ScriptedTurn::text("-(-1)"),
        ScriptedTurn::call(
            FINAL_ANSWER_TOOL,
            json!({"answer": {"Neg": {"Neg": {"Num": 1.0}}}}),
        ),
    ]);
    let typed = session(&model).send_as::<Expr>("Expr?").await.unwrap();
    assert_eq!(
        typed.value,
        Expr::Neg(Box::new(Expr::Neg(Box::new(Expr::Num(1.0)))))
    );
}

/// An even number: any integer fits its schema; reading refuses an odd one.
#[derive(Debug, PartialEq, schemars::JsonSchema)]
#[schemars(transparent)]
struct Even(u32);

impl<'de> Deserialize<'de> for Even {
    fn deserialize<D: serde::Deserializer<'de>>(reader: D) -> Result<Self, D::Error> {
        let n = u32::deserialize(reader)?;
        if n % 2 == 0 {
            Ok(Self(n))
        } else {
            Err(serde::de::Error::custom(format!("{n} is odd")))
        }
    }
}

/// Even numbers.
#[derive(Debug, PartialEq, Deserialize, schemars::JsonSchema)]
struct Evens {
    items: Vec<Even>,
}

#[tokio::test]
async fn an_answer_that_fits_the_schema_but_not_the_type_is_sent_back_with_its_path() {
    let model = ScriptedModel::new([
        ScriptedTurn::text("2 and 3."),
        ScriptedTurn::call(FINAL_ANSWER_TOOL, json!({"items": [2, 3]})),
        ScriptedTurn::call(FINAL_ANSWER_TOOL, json!({"items": [2, 4]})),
    ]);
    let typed = session(&model).send_as::<Evens>("Evens?").await.unwrap();
    assert_eq!(typed.value.items, [Even(2), Even(4)]);
    assert_eq!(
        results(model.requests()[2].messages.last().unwrap())[0].1,
        "Invalid arguments for tool 'final_answer': /items/1: 3 is odd"
    );

    // Under `answer`, the path the model wrote.
    let model = ScriptedModel::new([
        ScriptedTurn::text("2 and 3."),
        ScriptedTurn::call(FINAL_ANSWER_TOOL, json!({"answer": [2, 3]})),
        ScriptedTurn::call(FINAL_ANSWER_TOOL, json!({"answer": [4]})),
    ]);
    let typed = session(&model)
        .send_as::<Vec<Even>>("Evens?")
        .await
        .unwrap();
    assert_eq!(typed.value, [Even(4)]);
    assert_eq!(
        results(model.requests()[2].messages.last().unwrap())[0].1,
        "Invalid arguments for tool 'final_answer': /answer/1: 3 is odd"
    );
}

#[tokio::test]
async fn of_two_answers_the_first_that_fits_is_taken_and_each_wrong_one_told_its_own_problem() {
    // The second of two answers fits: taken, nothing sent back.
    let model = ScriptedModel::new([
        ScriptedTurn::text("3 °C in Paris."),
        ScriptedTurn::call(FINAL_ANSWER_TOOL, json!({"city": 1, "celsius": 3}))
            .and_call(FINAL_ANSWER_TOOL, json!({"city": "Paris", "celsius": 3})),
    ]);
    let typed = session(&model)
        .send_as::<Weather>("Weather?")
        .await
        .unwrap();
    assert_eq!(typed.value.celsius, 3.0);
    assert_eq!(typed.run.model_calls, 2);
    model.assert_complete();

    // Neither fits: each is told what was wrong with it.
    let model = ScriptedModel::new([
        ScriptedTurn::text("3 °C in Paris."),
        ScriptedTurn::call(FINAL_ANSWER_TOOL, json!({"city": 1, "celsius": 3}))
            .and_call(FINAL_ANSWER_TOOL, json!({"city": "Paris"})),
        ScriptedTurn::call(FINAL_ANSWER_TOOL, json!({"city": "Paris", "celsius": 3})),
    ]);
    session(&model)
        .send_as::<Weather>("Weather?")
        .await
        .unwrap();
    let shown = results(model.requests()[2].messages.last().unwrap());
    assert_eq!(
        shown,
        [
            (
                FINAL_ANSWER_TOOL.to_owned(),
                r#"Invalid arguments for tool 'final_answer': /city: 1 is not of type "string""#
                    .to_owned(),
                true
            ),
            (
                FINAL_ANSWER_TOOL.to_owned(),
                r#"Invalid arguments for tool 'final_answer': "celsius" is a required property"#
                    .to_owned(),
                true
            ),
        ]
    );
}

/// A tool of the user's that happens to be named `final_answer`.
#[tool_fn]
async fn final_answer(text: String) -> String {
    text
}

#[tokio::test]
async fn a_registered_tool_named_final_answer_is_refused_before_the_run() {
    let model = ScriptedModel::new([ScriptedTurn::text("unused")]);
    let session = AgentSession::builder(model.clone())
        .with_model("m")
        .with_toolshed(ToolShed::new().tool(FinalAnswer))
        .build()
        .unwrap();
    let err = session.send_as::<Weather>("Weather?").await.unwrap_err();
    let AgenticError::Config(message) = &err else {
        panic!("{err}");
    };
    assert!(
        message.contains("a tool named `final_answer` is registered"),
        "{message}"
    );
    assert!(model.requests().is_empty());
    assert!(session.transcript().await.is_empty());
    // Without a type, the tool is the user's, as before.
    session.send("Hi").await.unwrap();
}

#[tokio::test]
async fn the_typed_run_keeps_the_stop_reason_of_the_runs_own_answer() {
    let model = ScriptedModel::new([
        ScriptedTurn::text("It is 21 °C in Par").with_stop_reason(StopReason::MaxTokens),
        ScriptedTurn::call(FINAL_ANSWER_TOOL, json!({"city": "Paris", "celsius": 21})),
    ]);
    let typed = session(&model)
        .send_as::<Weather>("Weather?")
        .await
        .unwrap();
    // The text was cut off, as `run.stop_reason` says of `run.text`.
    assert_eq!(typed.run.stop_reason, Some(StopReason::MaxTokens));
}

/// How many times `counted` ran.
static COUNTED_RUNS: AtomicUsize = AtomicUsize::new(0);

/// Counts its runs.
#[tool_fn]
async fn counted() -> ToolCallResult {
    COUNTED_RUNS.fetch_add(1, Ordering::SeqCst);
    ToolCallResult::text("ran")
}

#[tokio::test]
async fn another_tool_called_instead_of_the_answer_is_not_run_and_counts_as_an_attempt() {
    let model = ScriptedModel::new([
        ScriptedTurn::text("Ready."),
        ScriptedTurn::call("counted", json!({})),
        ScriptedTurn::call("shed", json!({"description": "x"})),
        ScriptedTurn::call(FINAL_ANSWER_TOOL, json!({"city": "Paris", "celsius": 1}))
            .and_call("counted", json!({})),
    ]);
    let session = AgentSession::builder(model.clone())
        .with_model("m")
        .with_toolshed(ToolShed::new().tool(Counted))
        .build()
        .unwrap();
    session.tool_manager().activate(&["counted".to_owned()]);
    let typed = session.send_as::<Weather>("Weather?").await.unwrap();
    assert_eq!(typed.value.celsius, 1.0);
    assert_eq!(typed.run.model_calls, 4);
    assert_eq!(COUNTED_RUNS.load(Ordering::SeqCst), 0);
    assert!(typed.run.tool_calls.is_empty());
    for (request, tool) in [(2, "counted"), (3, "shed")] {
        assert_eq!(
            results(model.requests()[request].messages.last().unwrap()),
            [(
                tool.to_owned(),
                "Not run: only `final_answer` is taken now.".to_owned(),
                true
            )]
        );
    }

    // Only other calls, every time: the attempts run out, and the error says what was missing.
    let mut script = vec![ScriptedTurn::text("Ready.")];
    script.extend((0..MAX_ANSWER_ATTEMPTS).map(|_| ScriptedTurn::call("counted", json!({}))));
    let model = ScriptedModel::new(script);
    let session = AgentSession::builder(model.clone())
        .with_model("m")
        .with_toolshed(ToolShed::new().tool(Counted))
        .build()
        .unwrap();
    session.tool_manager().activate(&["counted".to_owned()]);
    let err = session.send_as::<Weather>("Weather?").await.unwrap_err();
    let AgenticError::AnswerInvalid { reason, .. } = &err else {
        panic!("{err}");
    };
    assert_eq!(reason, "no call of `final_answer` came");
    assert_eq!(COUNTED_RUNS.load(Ordering::SeqCst), 0);
}

/// A model's answer of one call of `final_answer` whose `answer` nests `levels` deep (as a
/// client of the user's could build it: the scripted model is given only arguments it can
/// copy).
fn nested_answer(levels: usize) -> ScriptedTurn {
    ScriptedTurn::respond(move |_| {
        let mut deep = json!(1);
        for _ in 0..levels {
            deep = Value::Array(vec![deep]);
        }
        let mut arguments = ToolArguments::new();
        arguments.insert("answer", deep);
        let call = ToolCallRequest::new("deep", FINAL_ANSWER_TOOL, arguments);
        Ok(ChatResponse::calls(vec![Ok(call)]))
    })
}

#[tokio::test]
async fn arguments_nested_without_bound_or_huge_are_refused_with_a_short_reason() {
    let raw = format!(
        "{{\"answer\": {}1{}}}",
        "[".repeat(10_000),
        "]".repeat(10_000)
    );
    let huge = "x".repeat(4_000_000);
    let model = ScriptedModel::new([
        ScriptedTurn::text("Deep."),
        // A value 10,000 levels deep, and the same as text, as an API sends it.
        nested_answer(10_000),
        ScriptedTurn::text("").and_raw_call(FINAL_ANSWER_TOOL, raw),
        ScriptedTurn::call(FINAL_ANSWER_TOOL, json!({"answer": huge})),
    ]);
    let session = session(&model);
    let err = session.send_as::<Vec<u32>>("Deep?").await.unwrap_err();
    let AgenticError::AnswerInvalid { reason, .. } = &err else {
        panic!("{err}");
    };
    assert!(reason.starts_with("Invalid arguments for tool 'final_answer': /answer: "));
    assert!(reason.len() < 1_000, "{} bytes", reason.len());
    let requests = model.requests();
    for request in &requests[2..] {
        let (_, text, _) = &results(request.messages.last().unwrap())[0];
        assert!(
            text.contains("nested deeper than 128 levels"),
            "{text:.200}"
        );
    }
}

#[tokio::test]
async fn a_model_error_while_the_answer_is_asked_for_ends_the_run_with_it_all_counted() {
    let model = ScriptedModel::new([
        ScriptedTurn::text("Mild.").with_usage(Usage::new(10, 2)),
        ScriptedTurn::call(FINAL_ANSWER_TOOL, json!({"city": 1})).with_usage(Usage::new(20, 3)),
        ScriptedTurn::error(ModelError::RateLimited {
            provider: "p".into(),
            retry_after: None,
            message: "slow down".into(),
        }),
    ]);
    let session = session(&model);
    let err = session.send_as::<Weather>("Weather?").await.unwrap_err();
    let AgenticError::Model { source, run } = &err else {
        panic!("{err}");
    };
    assert!(matches!(source, ModelError::RateLimited { .. }), "{source}");
    assert_eq!(run.model_calls, 3);
    assert_eq!(run.usage, Usage::new(30, 5));
    assert_eq!(run.text, "Mild.");
    // The conversation kept is the run's, without the exchange.
    assert_eq!(session.transcript().await, run.transcript);
    assert_eq!(run.transcript.len(), 2);
}

#[tokio::test]
async fn the_sessions_cancellation_while_the_answer_is_asked_for_ends_the_run_cancelled() {
    let model = ScriptedModel::new([
        ScriptedTurn::text("Mild.").with_usage(Usage::new(10, 2)),
        ScriptedTurn::call(FINAL_ANSWER_TOOL, json!({"city": "Paris", "celsius": 1}))
            .with_usage(Usage::new(20, 3)),
    ]);
    let token = toolsmith_core::CancellationToken::new();
    let cancels = token.clone();
    let session = AgentSession::builder(model.clone())
        .with_model("m")
        .with_cancellation(token)
        // Cancelled as the answer is asked for: the answer comes, and is not used.
        .with_event_handler(move |event: &AgentEvent| {
            if let AgentEvent::ModelRequest { turn: 2, .. } = event {
                cancels.cancel();
            }
        })
        .build()
        .unwrap();
    let err = session.send_as::<Weather>("Weather?").await.unwrap_err();
    let AgenticError::Cancelled { run } = &err else {
        panic!("{err}");
    };
    assert_eq!(run.model_calls, 2);
    assert_eq!(run.usage, Usage::new(30, 5));
    assert_eq!(session.transcript().await.len(), 2);
}

#[tokio::test]
async fn the_answer_is_asked_for_beyond_max_turns_and_through_a_streaming_session() {
    let model = ScriptedModel::new([
        ScriptedTurn::text("Mild."),
        ScriptedTurn::text("Mild, I said."),
        ScriptedTurn::call(FINAL_ANSWER_TOOL, json!({"city": "Paris", "celsius": 1})),
    ]);
    let session = AgentSession::builder(model.clone())
        .with_model("m")
        .with_max_turns(1)
        .with_streaming(true)
        .build()
        .unwrap();
    let typed = session.send_as::<Weather>("Weather?").await.unwrap();
    assert_eq!(typed.value.celsius, 1.0);
    // One call for the run, its limit, and two for the answer.
    assert_eq!(typed.run.model_calls, 3);
}

#[tokio::test]
async fn a_session_with_only_shed_declares_the_answer_beside_it() {
    let model = ScriptedModel::new([
        ScriptedTurn::text("Mild."),
        ScriptedTurn::call(FINAL_ANSWER_TOOL, json!({"city": "Paris", "celsius": 1})),
    ]);
    let session = AgentSession::builder(model.clone())
        .with_model("m")
        .with_toolshed(ToolShed::new().tool(Counted))
        .build()
        .unwrap();
    session.send_as::<Weather>("Weather?").await.unwrap();
    let requests = model.requests();
    assert_eq!(requests[0].tool_names(), ["shed"]);
    assert_eq!(requests[1].tool_names(), ["shed", FINAL_ANSWER_TOOL]);
}

#[tokio::test]
async fn a_parent_asking_for_a_typed_answer_after_a_sub_agent_counts_the_child_once() {
    let child_model =
        ScriptedModel::new([ScriptedTurn::text("Paris: 4 °C.").with_usage(Usage::new(5, 1))]);
    let child = AgentSession::builder(child_model)
        .with_model("child")
        .build()
        .unwrap();
    let model = ScriptedModel::new([
        ScriptedTurn::call("research", json!({"input": "Paris"})).with_usage(Usage::new(10, 2)),
        ScriptedTurn::text("4 °C in Paris.").with_usage(Usage::new(10, 2)),
        ScriptedTurn::call(FINAL_ANSWER_TOOL, json!({"city": "Paris", "celsius": 4}))
            .with_usage(Usage::new(10, 2)),
    ]);
    let parent = session(&model);
    parent
        .tool_manager()
        .register(Arc::new(toolsmith_harness::agent::AgentTool::new(
            Arc::new(child),
            "research",
            "Research.",
        )))
        .unwrap();
    parent.tool_manager().activate(&["research".to_owned()]);
    let typed = parent.send_as::<Weather>("Weather?").await.unwrap();
    assert_eq!(typed.value.celsius, 4.0);
    assert_eq!(typed.run.usage, Usage::new(30, 6));
    assert_eq!(typed.run.child_usage, Usage::new(5, 1));
    assert_eq!(
        typed.run.tool_calls[0].result.content.to_text(),
        "Paris: 4 °C."
    );
}

/// Done: a unit struct.
#[derive(Debug, PartialEq, Deserialize, schemars::JsonSchema)]
struct Done;

/// Degrees: a newtype.
#[derive(Debug, PartialEq, Deserialize, schemars::JsonSchema)]
struct Degrees(f64);

/// A point: a tuple struct.
#[derive(Debug, PartialEq, Deserialize, schemars::JsonSchema)]
struct Point(i32, i32);

/// A mood: unit variants.
#[derive(Debug, PartialEq, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
enum Mood {
    Calm,
    Stormy,
}

/// Weather with whatever else the model adds.
#[derive(Debug, PartialEq, Deserialize, schemars::JsonSchema)]
struct Open {
    city: String,
    #[serde(flatten)]
    rest: std::collections::BTreeMap<String, Value>,
}

/// Weather with nothing else.
#[derive(Debug, PartialEq, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
struct Closed {
    city: String,
}

/// The typed value `T` read from a run whose answers are `answers`, and the schema declared.
async fn answered<T: schemars::JsonSchema + serde::de::DeserializeOwned>(
    answers: impl IntoIterator<Item = Value>,
) -> (T, Value, usize) {
    let mut script = vec![ScriptedTurn::text("Done.")];
    script.extend(
        answers
            .into_iter()
            .map(|answer| ScriptedTurn::call(FINAL_ANSWER_TOOL, answer)),
    );
    let model = ScriptedModel::new(script);
    let typed = session(&model)
        .send_as::<T>("?")
        .await
        .unwrap_or_else(|err| panic!("{}: {err}", std::any::type_name::<T>()));
    model.assert_complete();
    (
        typed.value,
        declared_schema(&model, 1),
        typed.run.model_calls,
    )
}

#[tokio::test]
async fn types_whose_schema_is_no_plain_object_are_read_under_answer_or_as_the_object() {
    let (value, schema, _) = answered::<Done>([json!({"answer": null})]).await;
    assert_eq!(
        (value, &schema["properties"]["answer"]["type"]),
        (Done, &json!("null"))
    );
    let (value, ..) = answered::<Degrees>([json!({"answer": 21.5})]).await;
    assert_eq!(value, Degrees(21.5));
    let (value, schema, calls) =
        answered::<Point>([json!({"answer": [1]}), json!({"answer": [1, 2]})]).await;
    assert_eq!((value, calls), (Point(1, 2), 3));
    assert_eq!(schema["properties"]["answer"]["type"], "array");
    let (value, ..) =
        answered::<Mood>([json!({"answer": "windy"}), json!({"answer": "calm"})]).await;
    assert_eq!(value, Mood::Calm);
    let (value, ..) = answered::<String>([json!({"answer": "Paris"})]).await;
    assert_eq!(value, "Paris");
    let (value, ..) = answered::<Option<Weather>>([json!({"answer": null})]).await;
    assert_eq!(value, None);
    let (value, ..) =
        answered::<Option<Weather>>([json!({"answer": {"city": "Paris", "celsius": 2}})]).await;
    assert_eq!(value.unwrap().celsius, 2.0);
    // Any JSON at all, under `answer`; a missing `answer` is refused.
    let (value, schema, calls) =
        answered::<Value>([json!({}), json!({"answer": {"any": [1, "x"]}})]).await;
    assert_eq!((value, calls), (json!({"any": [1, "x"]}), 3));
    assert_eq!(schema["required"], json!(["answer"]));
    // Objects are the arguments themselves.
    let (value, ..) = answered::<Open>([json!({"city": "Paris", "wind": 3})]).await;
    assert_eq!(value.rest["wind"], 3);
    let (value, _, calls) = answered::<Closed>([
        json!({"city": "Paris", "wind": 3}),
        json!({"city": "Paris"}),
    ])
    .await;
    assert_eq!((value.city.as_str(), calls), ("Paris", 3));
}

#[tokio::test]
async fn a_paused_session_asks_for_the_answer_only_once_resumed() {
    let model = ScriptedModel::new([
        ScriptedTurn::text("Mild."),
        ScriptedTurn::call(FINAL_ANSWER_TOOL, json!({"city": "Paris", "celsius": 1})),
    ]);
    let pause = toolsmith_harness::agent::PauseHandle::new();
    let pauses = pause.clone();
    let session = AgentSession::builder(model.clone())
        .with_model("m")
        .with_pause(pause.clone())
        // Paused as the run's answer comes, before the typed answer is asked for.
        .with_event_handler(move |event: &AgentEvent| {
            if let AgentEvent::ModelResponse { turn: 1, .. } = event {
                pauses.pause();
            }
        })
        .build()
        .unwrap();
    let asked = tokio::spawn(async move { session.send_as::<Weather>("Weather?").await });
    for _ in 0..50 {
        tokio::task::yield_now().await;
    }
    assert_eq!(model.requests().len(), 1, "asked while paused");
    pause.resume();
    let typed = asked.await.unwrap().unwrap();
    assert_eq!(typed.value.celsius, 1.0);
    assert_eq!(model.requests().len(), 2);
}

#[tokio::test]
async fn a_session_cancelled_while_paused_before_the_answer_ends_cancelled() {
    let model = ScriptedModel::new([ScriptedTurn::text("Mild.")]);
    let pause = toolsmith_harness::agent::PauseHandle::new();
    let pauses = pause.clone();
    let session = AgentSession::builder(model.clone())
        .with_model("m")
        .with_pause(pause)
        .with_event_handler(move |event: &AgentEvent| {
            if let AgentEvent::ModelResponse { turn: 1, .. } = event {
                pauses.pause();
            }
        })
        .build()
        .unwrap();
    let token = session.cancellation_token().clone();
    let (ended, ()) = tokio::join!(session.send_as::<Weather>("Weather?"), async {
        for _ in 0..20 {
            tokio::task::yield_now().await;
        }
        token.cancel();
    });
    let err = ended.unwrap_err();
    let AgenticError::Cancelled { run } = &err else {
        panic!("{err}");
    };
    assert_eq!((run.model_calls, run.text.as_str()), (1, "Mild."));
}

#[tokio::test]
async fn a_typed_answer_asked_inside_a_tool_counts_in_the_calling_runs_child_usage() {
    let child_model = ScriptedModel::new([
        ScriptedTurn::text("4 °C.").with_usage(Usage::new(5, 1)),
        ScriptedTurn::call(FINAL_ANSWER_TOOL, json!({"city": "Paris", "celsius": 4}))
            .with_usage(Usage::new(7, 3)),
    ]);
    let child = Arc::new(session(&child_model));
    let tool = toolsmith_core::FnTool::new(
        "typed_research",
        "Research, typed.",
        toolsmith_core::ArgsObject::new().build(),
        move |_| {
            let child = Arc::clone(&child);
            async move {
                let typed = child.run_as::<Weather>("Paris?").await.unwrap();
                Ok(ToolCallResult::text(typed.value.celsius.to_string()))
            }
        },
    );
    let model = ScriptedModel::new([
        ScriptedTurn::call("typed_research", json!({})).with_usage(Usage::new(10, 2)),
        ScriptedTurn::text("4 °C in Paris.").with_usage(Usage::new(10, 2)),
    ]);
    let parent = session(&model);
    parent.tool_manager().register(Arc::new(tool)).unwrap();
    parent
        .tool_manager()
        .activate(&["typed_research".to_owned()]);
    let run = parent.run("Weather?").await.unwrap();
    assert_eq!(run.tool_calls[0].result.content.to_text(), "4");
    assert_eq!(run.usage, Usage::new(20, 4));
    // The child's run and its answer exchange, both.
    assert_eq!(run.child_usage, Usage::new(12, 4));
}

/// The caller's token stops the answer's exchange while the model is still answering, not
/// once it has answered; the session's own token is untouched, for the next run.
#[tokio::test]
async fn a_callers_token_stops_the_answer_exchange_at_once() {
    let model = ScriptedModel::new([
        ScriptedTurn::text("Mild.").with_usage(Usage::new(10, 2)),
        // An answer that would come long after the test gives up.
        ScriptedTurn::call(FINAL_ANSWER_TOOL, json!({"city": "Paris", "celsius": 1}))
            .with_delay(std::time::Duration::from_secs(600)),
        ScriptedTurn::text("Still mild."),
    ]);
    let stop = toolsmith_core::CancellationToken::new();
    let pressed = stop.clone();
    let session = AgentSession::builder(model.clone())
        .with_model("m")
        // Pressed as the answer is asked for.
        .with_event_handler(move |event: &AgentEvent| {
            if let AgentEvent::ModelRequest { turn: 2, .. } = event {
                pressed.cancel();
            }
        })
        .build()
        .unwrap();
    let ended = tokio::time::timeout(
        std::time::Duration::from_secs(60),
        session.send_as_with_cancellation::<Weather>("Weather?", stop),
    )
    .await
    .expect("the stop ended the exchange while the model answered");
    let err = ended.unwrap_err();
    let AgenticError::Cancelled { run } = &err else {
        panic!("{err}");
    };
    assert_eq!(run.model_calls, 2);
    assert_eq!(run.text, "Mild.");
    // The kept conversation is the run's; the session goes on.
    assert_eq!(session.transcript().await.len(), 2);
    assert!(!session.cancellation_token().is_cancelled());
    assert_eq!(session.send("And now?").await.unwrap().text, "Still mild.");
}

#[tokio::test]
async fn run_as_with_a_token_never_cancelled_reads_the_answer() {
    let model = ScriptedModel::new([
        ScriptedTurn::text("Mild."),
        ScriptedTurn::call(FINAL_ANSWER_TOOL, json!({"city": "Paris", "celsius": 1})),
    ]);
    let typed = session(&model)
        .run_as_with_cancellation::<Weather>("Weather?", toolsmith_core::CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(typed.value.city, "Paris");
    assert_eq!(typed.run.model_calls, 2);
}

/// A caller's token cancelled as the run answers (its stop pressed as the text came) ends
/// the typed run cancelled before the answer is asked for: the model is not called again.
#[tokio::test]
async fn a_callers_token_cancelled_as_the_run_answers_asks_the_model_for_no_typed_answer() {
    let model = ScriptedModel::new([
        ScriptedTurn::text("Mild.").with_usage(Usage::new(10, 2)),
        ScriptedTurn::call(FINAL_ANSWER_TOOL, json!({"city": "Paris", "celsius": 1}))
            .with_usage(Usage::new(20, 3)),
    ]);
    let stop = toolsmith_core::CancellationToken::new();
    let pressed = stop.clone();
    let session = AgentSession::builder(model.clone())
        .with_model("m")
        .with_event_handler(move |event: &AgentEvent| {
            if let AgentEvent::ModelResponse { turn: 1, .. } = event {
                pressed.cancel();
            }
        })
        .build()
        .unwrap();
    let err = session
        .run_as_with_cancellation::<Weather>("Weather?", stop)
        .await
        .unwrap_err();
    let AgenticError::Cancelled { run } = &err else {
        panic!("{err}");
    };
    assert_eq!(model.remaining(), 1, "the answer was asked for");
    assert_eq!(run.model_calls, 1);
    assert_eq!(run.usage, Usage::new(10, 2));
}
