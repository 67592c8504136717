//! Typed answers (`AgentSession::send_as`, `run_as`): the run's answer asked for as the
//! arguments of `final_answer`, checked against the type's schema, sent back with what was
//! wrong until it fits or the attempts run out.

use serde::Deserialize;
use serde_json::json;
use toolsmith_core::{ToolCallResult, ToolShed, tool_fn};
use toolsmith_harness::agent::{
    AgentSession, AgenticError, FINAL_ANSWER_TOOL, MAX_ANSWER_ATTEMPTS,
};
use toolsmith_harness::model::{Message, ScriptedModel, ScriptedTurn, ToolChoice};

/// A city's weather (also asked for through each HTTP client, in `model_http::typed`).
#[derive(Debug, PartialEq, Deserialize, schemars::JsonSchema)]
pub(crate) struct Weather {
    /// The city.
    pub(crate) city: String,
    /// Degrees Celsius.
    pub(crate) celsius: f64,
}

pub(crate) fn session(model: &ScriptedModel) -> AgentSession {
    AgentSession::builder(model.clone())
        .with_model("m")
        .build()
        .unwrap()
}

/// The results the model was shown in `message`, by tool name, as text.
pub(crate) fn results(message: &Message) -> Vec<(String, String, bool)> {
    let Message::ToolResults { results } = message else {
        panic!("not results: {message:?}");
    };
    results
        .iter()
        .map(|r| {
            (
                r.name.clone(),
                r.result.content.to_text(),
                r.result.is_error(),
            )
        })
        .collect()
}

#[tokio::test]
async fn an_answer_that_fits_is_read_and_the_conversation_kept_ends_with_the_text() {
    let model = ScriptedModel::new([
        ScriptedTurn::text("It is 21 °C in Paris."),
        ScriptedTurn::call(FINAL_ANSWER_TOOL, json!({"city": "Paris", "celsius": 21})),
    ]);
    let session = session(&model);
    let typed = session
        .send_as::<Weather>("Weather in Paris?")
        .await
        .unwrap();
    assert_eq!(
        typed.value,
        Weather {
            city: "Paris".into(),
            celsius: 21.0
        }
    );
    assert_eq!(typed.run.text, "It is 21 °C in Paris.");
    assert_eq!(typed.run.model_calls, 2);
    let kept = session.transcript().await;
    assert_eq!(kept, typed.run.transcript);
    assert_eq!(kept.len(), 2);
    assert_eq!(kept[0], Message::user("Weather in Paris?"));
    assert_eq!(kept[1].text(), Some("It is 21 °C in Paris."));
    // The answer was asked for with the tool forced, its schema the type's.
    let asked = &model.requests()[1];
    assert_eq!(
        asked.options.tool_choice,
        ToolChoice::Tool(FINAL_ANSWER_TOOL.into())
    );
    let declared = asked
        .tools
        .iter()
        .find(|tool| tool.name() == FINAL_ANSWER_TOOL)
        .expect("final_answer declared");
    let schema = declared.function_spec().parameters;
    assert_eq!(schema["required"], json!(["city", "celsius"]));
    assert_eq!(
        schema["properties"]["celsius"]["description"],
        "Degrees Celsius."
    );
    assert!(
        matches!(asked.messages.last(), Some(Message::User { text, .. }) if text.contains("final_answer"))
    );
    model.assert_complete();
}

#[tokio::test]
async fn an_answer_that_does_not_fit_is_sent_back_with_what_was_wrong_and_where() {
    let model = ScriptedModel::new([
        ScriptedTurn::text("Mild in Paris."),
        // A string where a number goes, and another tool called beside it.
        ScriptedTurn::call(
            FINAL_ANSWER_TOOL,
            json!({"city": "Paris", "celsius": "mild"}),
        )
        .and_call("weather_lookup", json!({})),
        ScriptedTurn::call(FINAL_ANSWER_TOOL, json!({"city": "Paris", "celsius": 18.5})),
    ]);
    let session = session(&model);
    let typed = session.send_as::<Weather>("Weather?").await.unwrap();
    assert_eq!(typed.value.celsius, 18.5);
    assert_eq!(typed.run.model_calls, 3);
    let mended = &model.requests()[2];
    let shown = results(mended.messages.last().unwrap());
    assert_eq!(shown.len(), 2);
    let (name, text, is_error) = &shown[0];
    assert_eq!((name.as_str(), *is_error), (FINAL_ANSWER_TOOL, true));
    assert_eq!(
        text,
        r#"Invalid arguments for tool 'final_answer': /celsius: "mild" is not of type "number""#
    );
    assert_eq!(
        shown[1],
        (
            "weather_lookup".to_owned(),
            "Not run: only `final_answer` is taken now.".to_owned(),
            true
        )
    );
    // Asked for as before, the tool forced again.
    assert_eq!(
        mended.options.tool_choice,
        ToolChoice::Tool(FINAL_ANSWER_TOOL.into())
    );
    // The exchange is not kept.
    assert_eq!(session.transcript().await.len(), 2);
}

#[tokio::test]
async fn answers_that_never_fit_fail_naming_the_type_the_attempts_and_the_last_problem() {
    let mut script = vec![ScriptedTurn::text("Cold.")];
    script.extend(
        (0..MAX_ANSWER_ATTEMPTS).map(|_| ScriptedTurn::call(FINAL_ANSWER_TOOL, json!({"city": 7}))),
    );
    script.push(ScriptedTurn::text("Still here."));
    let model = ScriptedModel::new(script);
    let session = session(&model);
    let err = session.send_as::<Weather>("Weather?").await.unwrap_err();
    let AgenticError::AnswerInvalid {
        type_name,
        attempts,
        reason,
        run,
    } = &err
    else {
        panic!("{err}");
    };
    assert!(type_name.ends_with("Weather"), "{type_name}");
    assert_eq!(*attempts, MAX_ANSWER_ATTEMPTS);
    assert!(
        reason.contains(r#""celsius" is a required property; /city: 7 is not of type "string""#),
        "{reason}"
    );
    assert_eq!(run.model_calls, 1 + MAX_ANSWER_ATTEMPTS);
    assert_eq!(run.text, "Cold.");
    assert!(err.to_string().contains("did not fit"), "{err}");
    // The conversation kept is the run's, which the next send continues.
    let next = session.send("And tomorrow?").await.unwrap();
    assert_eq!(next.text, "Still here.");
    assert_eq!(next.transcript.len(), 4);
}

#[tokio::test]
async fn a_text_answer_is_asked_again_and_a_type_that_is_no_object_comes_under_answer() {
    let model = ScriptedModel::new([
        ScriptedTurn::text("Paris, Lyon."),
        // The model answers in text, not as asked (a local model may ignore the choice).
        ScriptedTurn::text("Paris and Lyon."),
        ScriptedTurn::call(FINAL_ANSWER_TOOL, json!({"answer": ["Paris", "Lyon"]})),
    ]);
    let session = session(&model);
    let typed = session.run_as::<Vec<String>>("Two cities?").await.unwrap();
    assert_eq!(typed.value, ["Paris", "Lyon"]);
    let requests = model.requests();
    let schema = requests[1]
        .tools
        .iter()
        .find(|tool| tool.name() == FINAL_ANSWER_TOOL)
        .unwrap()
        .function_spec()
        .parameters;
    assert_eq!(schema["required"], json!(["answer"]));
    assert_eq!(schema["properties"]["answer"]["type"], "array");
    // After the text answer, the request again, as a user message.
    assert!(matches!(
        &requests[2].messages[requests[2].messages.len() - 2..],
        [Message::Assistant { .. }, Message::User { text, .. }] if text.contains("final_answer")
    ));
    // `run_as` keeps no conversation.
    assert!(session.transcript().await.is_empty());
}

/// Reports the weather.
#[tool_fn]
async fn weather_lookup(city: String) -> ToolCallResult {
    ToolCallResult::text(format!("{city}: 21 °C"))
}

#[tokio::test]
async fn the_run_uses_its_tools_first_and_every_tool_stays_declared_for_the_answer() {
    let model = ScriptedModel::new([
        ScriptedTurn::call("weather_lookup", json!({"city": "Paris"})),
        ScriptedTurn::text("21 °C in Paris."),
        ScriptedTurn::call(FINAL_ANSWER_TOOL, json!({"city": "Paris", "celsius": 21})),
    ]);
    let session = AgentSession::builder(model.clone())
        .with_model("m")
        .with_toolshed(ToolShed::new().tool(WeatherLookup))
        .build()
        .unwrap();
    session
        .tool_manager()
        .activate(&["weather_lookup".to_owned()]);
    let typed = session.send_as::<Weather>("Weather?").await.unwrap();
    assert_eq!(typed.value.city, "Paris");
    assert_eq!(typed.run.tool_calls.len(), 1);
    // The earlier calls' tools are still declared beside `final_answer`.
    assert_eq!(
        model.requests()[2].tool_names(),
        ["shed", "weather_lookup", FINAL_ANSWER_TOOL]
    );
}

#[tokio::test]
async fn a_run_that_fails_fails_as_it_would_without_a_type() {
    let model = ScriptedModel::new([ScriptedTurn::call("nowhere", json!({}))]);
    let session = AgentSession::builder(model.clone())
        .with_model("m")
        .with_max_turns(1)
        .build()
        .unwrap();
    let err = session.send_as::<Weather>("Weather?").await.unwrap_err();
    assert!(matches!(err, AgenticError::MaxTurns { .. }), "{err}");
    assert_eq!(model.requests().len(), 1);
}
