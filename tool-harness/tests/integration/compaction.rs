//! `Compaction`: a request nearing the context window has the conversation's older part
//! summarised by the model (a transcript in text, no tools), replaced by one user message
//! with the summary and the user's latest message, and the run goes on from it; a failed
//! summary changes nothing; the summary is counted, not streamed; children inherit it.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::json;
use toolsmith_core::{CancellationToken, ToolShed, tool_fn};
use toolsmith_harness::ToolPreset;
use toolsmith_harness::agent::{
    AgentEvent, AgentSession, AgenticError, Compaction, ContextEstimate,
    DEFAULT_COMPACTION_INSTRUCTIONS, SUMMARIZED_QUESTION_HEADING, SUMMARY_HEADING, SubAgentConfig,
};
use toolsmith_harness::model::{
    ChatResponse, Message, ModelError, ScriptedModel, ScriptedTurn, Usage,
};

use crate::common::warnings::Warnings;

/// Read `size` bytes.
#[tool_fn]
fn read(
    /// How many.
    size: usize,
) -> String {
    "r".repeat(size)
}

/// The events a session sent, recorded.
type Events = Arc<Mutex<Vec<AgentEvent>>>;

/// A session over `model` with the `read` tool, a window of 1,000 tokens, `Compaction::new()`
/// (from 800, keeping 200) and no overflow policy; its events recorded.
fn compacting(model: &ScriptedModel, streaming: bool) -> (AgentSession, Events) {
    let events = Events::default();
    let seen = Arc::clone(&events);
    let session = AgentSession::builder(model.clone())
        .with_model("m")
        .with_toolshed(ToolShed::new().tool(Read))
        .with_context_window(1_000)
        .with_compaction(Compaction::new())
        .with_streaming(streaming)
        .with_event_handler(move |event: &AgentEvent| seen.lock().unwrap().push(event.clone()))
        .build()
        .unwrap();
    let names = session.tool_manager().names();
    session.tool_manager().activate(&names);
    (session, events)
}

/// The `ContextCompacted` events among `events`.
fn compactions(events: &Events) -> Vec<AgentEvent> {
    events
        .lock()
        .unwrap()
        .iter()
        .filter(|event| matches!(event, AgentEvent::ContextCompacted { .. }))
        .cloned()
        .collect()
}

/// The first two turns of a run that reads 1,500 bytes, then 300: its third request is
/// counted past 800 of the window of 1,000 (700 reported for the second, and the call and
/// the 300 bytes added).
fn two_reads() -> [ScriptedTurn; 2] {
    [
        ScriptedTurn::call("read", json!({"size": 1500})).with_usage(Usage::new(100, 5)),
        ScriptedTurn::call("read", json!({"size": 300})).with_usage(Usage::new(700, 5)),
    ]
}

#[tokio::test]
async fn a_run_nearing_the_window_is_summarised_and_goes_on_from_the_summary() {
    let [first, second] = two_reads();
    let model = ScriptedModel::new([
        first,
        second,
        ScriptedTurn::respond(|request| {
            // The summary: the instructions, the older part as one text message, no tools.
            assert_eq!(
                request.system.as_deref(),
                Some(DEFAULT_COMPACTION_INSTRUCTIONS)
            );
            assert!(request.tools.is_empty());
            assert_eq!(request.messages.len(), 1, "{:?}", request.messages);
            let transcript = request.messages[0].text().unwrap();
            assert!(
                transcript.contains("## User\nRead the logs.\n"),
                "{transcript}"
            );
            assert!(
                transcript.contains("Called `read` (call ")
                    && transcript.contains("{\"size\":1500}"),
                "{transcript}"
            );
            assert!(transcript.contains(&"r".repeat(1500)), "{transcript}");
            // The newest call and its result are kept, not summarised.
            assert!(!transcript.contains("{\"size\":300}"), "{transcript}");
            Ok(ChatResponse::text("The first log was all r.").with_usage(Usage::new(600, 20)))
        }),
        ScriptedTurn::respond(|request| {
            // The summary with the question, then the newest call and its result as they were.
            assert_eq!(request.messages.len(), 3, "{:?}", request.messages);
            assert_eq!(
                request.messages[0].text(),
                Some(
                    format!(
                        "{SUMMARY_HEADING}\n\nThe first log was all r.\n\n\
                         {SUMMARIZED_QUESTION_HEADING}\n\nRead the logs."
                    )
                    .as_str()
                )
            );
            assert_eq!(
                request.messages[1].calls()[0].arguments.get("size"),
                Some(&json!(300))
            );
            assert_eq!(
                request.messages[2].results()[0].result.content.to_text(),
                "r".repeat(300)
            );
            assert!(!request.tools.is_empty());
            Ok(ChatResponse::text("Both read.").with_usage(Usage::new(300, 3)))
        }),
    ]);
    let (session, events) = compacting(&model, false);
    let run = session.send("Read the logs.").await.unwrap();
    assert_eq!(run.text, "Both read.");
    // The summary is a model call of the run, and its tokens count.
    assert_eq!(run.model_calls, 4);
    assert_eq!(run.usage.input_tokens, 100 + 700 + 600 + 300);
    let compacted = compactions(&events);
    let [
        AgentEvent::ContextCompacted {
            turn,
            summarized,
            estimate,
        },
    ] = compacted.as_slice()
    else {
        panic!("one compaction expected: {compacted:?}");
    };
    assert_eq!((*turn, *summarized), (4, 3));
    assert!(estimate.input_tokens > 800, "{estimate:?}");
    assert_eq!(
        *estimate,
        ContextEstimate::new(estimate.input_tokens, 0, 1_000)
    );
    // The run's transcript, and the conversation kept, are the compacted one.
    assert_eq!(run.transcript.len(), 4);
    assert!(
        run.transcript[0]
            .text()
            .unwrap()
            .starts_with(SUMMARY_HEADING)
    );
    assert_eq!(session.transcript().await, run.transcript);
    model.assert_complete();
}

#[tokio::test]
async fn a_request_under_the_threshold_is_not_summarised() {
    let model = ScriptedModel::new([
        ScriptedTurn::call("read", json!({"size": 1500})).with_usage(Usage::new(100, 5)),
        // 100 counted and the call and the 1,500 bytes added: some 620 of 800.
        ScriptedTurn::text("Read.").with_usage(Usage::new(620, 2)),
    ]);
    let (session, events) = compacting(&model, false);
    let run = session.send("Read the logs.").await.unwrap();
    assert_eq!(run.model_calls, 2);
    assert!(compactions(&events).is_empty());
    model.assert_complete();
}

#[tokio::test]
async fn a_failed_summary_leaves_the_conversation_as_it_was_with_a_warning() {
    let [first, second] = two_reads();
    let model = ScriptedModel::new([
        first,
        second,
        ScriptedTurn::error(ModelError::Api {
            provider: "scripted".into(),
            status: 500,
            message: "internal error".into(),
        }),
        ScriptedTurn::respond(|request| {
            // Sent whole: the question, both calls and both results.
            assert_eq!(request.messages.len(), 5, "{:?}", request.messages);
            assert_eq!(request.messages[0], Message::user("Read the logs."));
            Ok(ChatResponse::text("Both read."))
        }),
    ]);
    let (session, events) = compacting(&model, false);
    let warnings = Warnings::default();
    let run = {
        let _guard = tracing::subscriber::set_default(warnings.clone());
        session.send("Read the logs.").await.unwrap()
    };
    assert_eq!(run.text, "Both read.");
    assert_eq!(run.model_calls, 4);
    assert!(compactions(&events).is_empty());
    assert_eq!(run.transcript.len(), 6);
    let lines = warnings.lines();
    assert!(
        lines
            .iter()
            .any(|line| line.contains("could not be summarised") && line.contains("internal error")),
        "{lines:?}"
    );
    model.assert_complete();
}

#[tokio::test]
async fn an_empty_summary_is_not_used() {
    let [first, second] = two_reads();
    let model = ScriptedModel::new([
        first,
        second,
        ScriptedTurn::text("  "),
        ScriptedTurn::respond(|request| {
            assert_eq!(request.messages.len(), 5, "{:?}", request.messages);
            Ok(ChatResponse::text("Both read."))
        }),
    ]);
    let (session, events) = compacting(&model, false);
    let run = session.send("Read the logs.").await.unwrap();
    assert_eq!(run.text, "Both read.");
    assert!(compactions(&events).is_empty());
    model.assert_complete();
}

#[tokio::test]
async fn a_streaming_session_does_not_stream_the_summary() {
    let [first, second] = two_reads();
    let model = ScriptedModel::new([
        first,
        second,
        ScriptedTurn::text("The first log was all r."),
        ScriptedTurn::text("Both read."),
    ]);
    let (session, events) = compacting(&model, true);
    let run = session.send("Read the logs.").await.unwrap();
    assert_eq!(run.text, "Both read.");
    assert_eq!(compactions(&events).len(), 1);
    let streamed: String = events
        .lock()
        .unwrap()
        .iter()
        .filter_map(|event| match event {
            AgentEvent::TextDelta(text) => Some(text.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(streamed, "Both read.");
    model.assert_complete();
}

#[tokio::test]
async fn a_cancellation_during_the_summary_ends_the_run_as_cancelled() {
    let [first, second] = two_reads();
    let model = ScriptedModel::new([
        first,
        second,
        ScriptedTurn::text("never used").with_delay(Duration::from_secs(30)),
    ]);
    let (session, events) = compacting(&model, false);
    let token = CancellationToken::new();
    let cancel = token.clone();
    let asked = {
        let model = model.clone();
        tokio::spawn(async move {
            while model.requests().len() < 3 {
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
            cancel.cancel();
        })
    };
    let ended = session
        .send_with_cancellation("Read the logs.", token)
        .await;
    asked.await.unwrap();
    let Err(AgenticError::Cancelled { run }) = ended else {
        panic!("expected a cancellation: {ended:?}");
    };
    // Nothing was replaced: the conversation is the run's as it stood.
    assert_eq!(run.transcript.len(), 5);
    assert!(compactions(&events).is_empty());
}

#[tokio::test]
async fn a_second_compaction_summarises_the_first_and_repeats_the_question_once() {
    let long = "The answer is long. ".repeat(40);
    let model = ScriptedModel::new([
        ScriptedTurn::text(long.clone()).with_usage(Usage::new(50, 270)),
        // 50 counted, the 800-byte answer and the second question: some 330, not summarised.
        ScriptedTurn::text(long.clone()).with_usage(Usage::new(900, 270)),
        // 900 counted, the answer and the third question: past 800. Summarised.
        ScriptedTurn::text("First summary."),
        ScriptedTurn::text(long.clone()).with_usage(Usage::new(900, 270)),
        // Again past 800: the first summary is summarised with the rest.
        ScriptedTurn::text("Second summary."),
        ScriptedTurn::text("Short."),
    ]);
    let (session, events) = compacting(&model, false);
    session.send("Question one?").await.unwrap();
    session.send("Question two?").await.unwrap();
    session.send("Question three?").await.unwrap();
    session.send("Question four?").await.unwrap();
    assert_eq!(compactions(&events).len(), 2);
    let kept = session.transcript().await;
    let first = kept[0].text().unwrap();
    assert_eq!(
        first,
        format!(
            "{SUMMARY_HEADING}\n\nSecond summary.\n\n{SUMMARIZED_QUESTION_HEADING}\n\n\
             Question four?"
        )
    );
    assert_eq!(kept.len(), 2);
    assert_eq!(kept[1].text(), Some("Short."));
    // The second summary was asked of the first one, which the transcript shows as said.
    let asked = model.requests()[4].messages[0].text().unwrap().to_owned();
    assert!(asked.contains("First summary."), "{asked}");
    model.assert_complete();
}

#[test]
fn compaction_needs_a_window_and_settings_that_can_work() {
    let build = |compaction: Compaction, window: Option<u64>| {
        let mut builder = AgentSession::builder(ScriptedModel::default())
            .with_model("m")
            .with_compaction(compaction);
        if let Some(window) = window {
            builder = builder.with_context_window(window);
        }
        builder.build()
    };
    let Err(AgenticError::Config(reason)) = build(Compaction::new(), None) else {
        panic!("a compaction without a window should be refused");
    };
    assert!(reason.contains("with_context_window"), "{reason}");
    let Err(AgenticError::Config(reason)) =
        build(Compaction::new().keeping_recent_percent(90), Some(1_000))
    else {
        panic!("keeping more than the threshold should be refused");
    };
    assert!(reason.contains("keeping_recent_percent(90)"), "{reason}");
    let Err(AgenticError::Config(reason)) =
        build(Compaction::new().starting_at_percent(0), Some(1_000))
    else {
        panic!("a threshold of 0 should be refused");
    };
    assert!(reason.contains("starting_at_percent(0)"), "{reason}");
    // A window with a compaction needs no overflow policy.
    assert!(build(Compaction::new(), Some(1_000)).is_ok());
}

#[tokio::test]
async fn children_inherit_the_session_s_compaction() {
    // The child's window of 1,000 and no policy of its own: it starts (a window needs a
    // policy or a compaction, and the session's compaction is inherited), and compacts.
    let [first, second] = two_reads();
    let child_model = ScriptedModel::new([
        first,
        second,
        ScriptedTurn::text("Child summary."),
        ScriptedTurn::respond(|request| {
            assert!(
                request.messages[0]
                    .text()
                    .unwrap()
                    .starts_with(SUMMARY_HEADING)
            );
            Ok(ChatResponse::text("child done"))
        }),
    ]);
    let config = SubAgentConfig::new(child_model.clone(), "c")
        .with_tools(vec![Arc::new(Read)])
        .with_context_window(1_000);
    let model = ScriptedModel::new([
        ScriptedTurn::call(
            "agent",
            json!({"command": "start", "task": "Read the logs."}),
        ),
        ScriptedTurn::call(
            "agent",
            json!({"command": "result", "id": "agent-1", "wait_ms": 5000}),
        ),
        ScriptedTurn::text("done"),
    ]);
    let session = AgentSession::builder(model.clone())
        .with_model("m")
        .with_toolshed(ToolShed::new().tools(ToolPreset::agent(config)))
        .with_context_window(100_000)
        .with_compaction(Compaction::new())
        .build()
        .unwrap();
    let names = session.tool_manager().names();
    session.tool_manager().activate(&names);
    let run = session.run("delegate").await.unwrap();
    let started = &run.tool_calls[0].result;
    assert!(!started.is_error(), "{}", started.content.to_text());
    assert_eq!(run.tool_calls[1].result.content.to_text(), "child done");
    child_model.assert_complete();
}

#[tokio::test]
async fn a_typed_answer_s_exchange_is_not_summarised() {
    let model = ScriptedModel::new([
        // 500 counted: the request for the answer (the run's, its 800-byte answer, the
        // request for the typed one and the `final_answer` declaration) passes 800, and
        // more than the 200 kept; but it is the exchange's.
        ScriptedTurn::text("It is 21 °C in Paris. ".repeat(36)).with_usage(Usage::new(500, 270)),
        ScriptedTurn::call(
            toolsmith_harness::agent::FINAL_ANSWER_TOOL,
            json!({"city": "Paris", "celsius": 21}),
        ),
    ]);
    let (session, events) = compacting(&model, false);
    let typed = session
        .send_as::<crate::typed_answers::Weather>("Weather in Paris?")
        .await
        .unwrap();
    assert_eq!(typed.value.city, "Paris");
    assert!(compactions(&events).is_empty());
    model.assert_complete();
}

#[tokio::test]
async fn compacting_on_demand_with_nothing_to_summarise_makes_no_model_call() {
    let model = ScriptedModel::new([ScriptedTurn::text("Hello.")]);
    let session = AgentSession::builder(model.clone())
        .with_model("m")
        .build()
        .unwrap();
    let empty = session.compact_conversation().await.unwrap();
    assert_eq!((empty.model_calls, empty.transcript.len()), (0, 0));
    session.send("Hi?").await.unwrap();
    // The question and the answer after it: the question would only be repeated.
    let answered = session.compact_conversation().await.unwrap();
    assert_eq!(answered.model_calls, 0);
    assert_eq!(answered.transcript, session.transcript().await);
    assert_eq!(answered.transcript.len(), 2);
    model.assert_complete();
}

#[tokio::test]
async fn compacting_on_demand_keeps_the_last_answer_and_the_next_send_follows_it() {
    let model = ScriptedModel::new([
        ScriptedTurn::text("Paris."),
        ScriptedTurn::text("Rome."),
        ScriptedTurn::text("Two capitals asked: Paris and Rome.").with_usage(Usage::new(40, 9)),
        ScriptedTurn::respond(|request| {
            // The summary with the question it repeats, the last answer, the new question.
            assert_eq!(request.messages.len(), 3, "{:?}", request.messages);
            assert!(
                request.messages[0]
                    .text()
                    .unwrap()
                    .ends_with("And of Italy?")
            );
            assert_eq!(request.messages[1].text(), Some("Rome."));
            assert_eq!(request.messages[2], Message::user("And of Spain?"));
            Ok(ChatResponse::text("Madrid."))
        }),
    ]);
    let session = AgentSession::builder(model.clone())
        .with_model("m")
        .with_system_prompt("Answer briefly.")
        .build()
        .unwrap();
    session.send("The capital of France?").await.unwrap();
    session.send("And of Italy?").await.unwrap();
    let summary = session.compact_conversation().await.unwrap();
    assert_eq!(summary.text, "Two capitals asked: Paris and Rome.");
    assert_eq!((summary.model_calls, summary.usage.input_tokens), (1, 40));
    assert_eq!(summary.transcript, session.transcript().await);
    // The summary request: the compaction's instructions, not the session's prompt.
    let asked = &model.requests()[2];
    assert_eq!(
        asked.system.as_deref(),
        Some(DEFAULT_COMPACTION_INSTRUCTIONS)
    );
    let transcript = asked.messages[0].text().unwrap();
    assert!(
        transcript.contains("## Assistant\nParis.\n"),
        "{transcript}"
    );
    assert!(!transcript.contains("Rome."), "{transcript}");
    assert_eq!(session.send("And of Spain?").await.unwrap().text, "Madrid.");
    model.assert_complete();
}

#[tokio::test]
async fn compacting_on_demand_with_a_window_keeps_the_newest_share_of_it() {
    let long = "w".repeat(900);
    let model = ScriptedModel::new([
        ScriptedTurn::text(long.clone()),
        ScriptedTurn::text("Two."),
        ScriptedTurn::text("Three."),
        ScriptedTurn::text("The first answer was all w."),
    ]);
    // A window of 1,000: the newest 200 tokens are kept, which the long answer is not.
    let (session, _) = compacting(&model, false);
    for question in ["One?", "Two?", "Three?"] {
        session.send(question).await.unwrap();
    }
    session.compact_conversation().await.unwrap();
    let kept = session.transcript().await;
    let texts: Vec<Option<&str>> = kept.iter().map(Message::text).collect();
    assert_eq!(
        texts[1..],
        [Some("Two."), Some("Three?"), Some("Three.")],
        "{kept:?}"
    );
    assert!(kept[0].text().unwrap().ends_with("\n\nTwo?"), "{kept:?}");
    assert!(!kept[0].text().unwrap().contains(&long));
    model.assert_complete();
}

#[tokio::test]
async fn compacting_on_demand_fails_with_the_model_s_error_and_changes_nothing() {
    let model = ScriptedModel::new([
        ScriptedTurn::text("Paris."),
        ScriptedTurn::text("Rome."),
        ScriptedTurn::error(ModelError::Api {
            provider: "scripted".into(),
            status: 503,
            message: "overloaded".into(),
        }),
    ]);
    let session = AgentSession::builder(model.clone())
        .with_model("m")
        .build()
        .unwrap();
    session.send("The capital of France?").await.unwrap();
    session.send("And of Italy?").await.unwrap();
    let before = session.transcript().await;
    let failed = session.compact_conversation().await;
    let Err(AgenticError::Model { source, run }) = failed else {
        panic!("expected the model's error: {failed:?}");
    };
    assert!(source.to_string().contains("overloaded"), "{source}");
    assert_eq!(run.model_calls, 1);
    assert_eq!(run.transcript, before);
    assert_eq!(session.transcript().await, before);
    model.assert_complete();
}

#[tokio::test]
async fn a_user_message_that_begins_with_the_summary_heading_is_still_repeated_whole() {
    // A user who pastes a summary's first line (from another session, say): without a
    // question heading of its own, the message is the user's question as it stands.
    let asked = format!("{SUMMARY_HEADING}\n\nThose were my notes. Read the logs.");
    let [first, second] = two_reads();
    let model = ScriptedModel::new([
        first,
        second,
        ScriptedTurn::text("The first log was all r."),
        ScriptedTurn::text("Both read."),
    ]);
    let (session, events) = compacting(&model, false);
    session.send(asked.clone()).await.unwrap();
    assert_eq!(compactions(&events).len(), 1);
    let sent = model.requests()[3].messages[0].text().unwrap().to_owned();
    assert!(
        sent.ends_with(&format!("\n\n{SUMMARIZED_QUESTION_HEADING}\n\n{asked}")),
        "the user's message is lost: {sent}"
    );
    model.assert_complete();
}

#[tokio::test]
async fn a_user_message_at_the_cut_shaped_like_a_summary_loses_nothing() {
    // The user's message, taken into the summary's at the cut, is written as they wrote
    // it: none of it is read as an earlier summary's (it was not summarised).
    let pasted = format!(
        "{SUMMARY_HEADING}\n\nNotes from yesterday: the key is 42.\n\n\
         {SUMMARIZED_QUESTION_HEADING}\n\nGo on from there."
    );
    let model = ScriptedModel::new([
        ScriptedTurn::text("Paris is the capital of France. ".repeat(50))
            .with_usage(Usage::new(900, 500)),
        ScriptedTurn::text("The user asked for France's capital: Paris."),
        ScriptedTurn::text("Going on."),
    ]);
    let (session, events) = compacting(&model, false);
    session.send("The capital of France?").await.unwrap();
    session.send(pasted.clone()).await.unwrap();
    assert_eq!(compactions(&events).len(), 1);
    let sent = model.requests()[2].messages[0].text().unwrap().to_owned();
    assert!(
        sent.contains("the key is 42"),
        "the pasted notes are lost: {sent}"
    );
    assert!(sent.ends_with(&pasted), "{sent}");
    model.assert_complete();
}

#[tokio::test]
async fn a_summary_that_quotes_the_question_heading_does_not_blur_the_question_later() {
    // The model sees the heading in the transcript of an earlier summary and may write it
    // in its own: a later compaction still repeats the user's message alone.
    let echoed =
        format!("Read two logs.\n\n{SUMMARIZED_QUESTION_HEADING}\n\nSomething else entirely.");
    let [first, second] = two_reads();
    let model = ScriptedModel::new([
        first,
        second,
        ScriptedTurn::text(echoed),
        // After the first compaction: another 1,500 bytes, past 800 again.
        ScriptedTurn::call("read", json!({"size": 1500})).with_usage(Usage::new(300, 5)),
        ScriptedTurn::text("Three logs read."),
        ScriptedTurn::text("All read."),
    ]);
    let (session, events) = compacting(&model, false);
    let run = session.send("Read the logs.").await.unwrap();
    assert_eq!(run.text, "All read.");
    assert_eq!(compactions(&events).len(), 2);
    let kept = run.transcript[0].text().unwrap().to_owned();
    assert!(
        kept.ends_with(&format!(
            "\n\n{SUMMARIZED_QUESTION_HEADING}\n\nRead the logs."
        )),
        "{kept}"
    );
    assert!(!kept.contains("Something else entirely."), "{kept}");
    model.assert_complete();
}

/// A session as [`compacting`]'s, changed by `build` first.
fn compacting_with(
    model: &ScriptedModel,
    build: impl FnOnce(
        toolsmith_harness::agent::AgentSessionBuilder,
    ) -> toolsmith_harness::agent::AgentSessionBuilder,
) -> (AgentSession, Events) {
    let events = Events::default();
    let seen = Arc::clone(&events);
    let builder = AgentSession::builder(model.clone())
        .with_model("m")
        .with_toolshed(ToolShed::new().tool(Read))
        .with_context_window(1_000)
        .with_compaction(Compaction::new())
        .with_event_handler(move |event: &AgentEvent| seen.lock().unwrap().push(event.clone()));
    let session = build(builder).build().unwrap();
    let names = session.tool_manager().names();
    session.tool_manager().activate(&names);
    (session, events)
}

#[tokio::test]
async fn a_summary_that_spends_the_token_budget_ends_the_run_before_another_call() {
    let [first, second] = two_reads();
    let model = ScriptedModel::new([
        first,
        second,
        // 810 spent before it; the summary's 1,300 pass the budget of 2,000.
        ScriptedTurn::text("The first log was all r.").with_usage(Usage::new(1_200, 100)),
    ]);
    let (session, _) = compacting_with(&model, |builder| builder.with_token_budget(2_000));
    let ended = session.send("Read the logs.").await;
    let Err(AgenticError::TokenBudget { limit, spent, run }) = ended else {
        panic!("expected the budget to end the run: {ended:?}");
    };
    assert_eq!((limit, spent), (2_000, 2_110));
    // The summary was the last call, and the conversation is the compacted one.
    assert_eq!(run.model_calls, 3);
    assert!(
        run.transcript[0]
            .text()
            .unwrap()
            .starts_with(SUMMARY_HEADING)
    );
    model.assert_complete();
}

#[tokio::test]
async fn a_summary_does_not_take_the_run_past_its_max_turns() {
    // Three calls allowed: the third is the answer's, which a summary would push to a
    // fourth. The request goes as it is, under the window.
    let [first, second] = two_reads();
    let model = ScriptedModel::new([
        first,
        second,
        ScriptedTurn::respond(|request| {
            assert_eq!(request.messages.len(), 5, "{:?}", request.messages);
            Ok(ChatResponse::text("Both read."))
        }),
    ]);
    let (session, events) = compacting_with(&model, |builder| builder.with_max_turns(3));
    let run = session.send("Read the logs.").await.unwrap();
    assert_eq!(run.text, "Both read.");
    assert_eq!(run.model_calls, 3);
    assert!(compactions(&events).is_empty());
    model.assert_complete();
}

#[tokio::test]
async fn a_question_that_alone_passes_the_threshold_is_not_summarised_at_every_call() {
    // The user's message is some 900 tokens of the 1,000: past 800 whatever is summarised,
    // since the summary repeats it. Summarising would only cost a model call each turn.
    // Each read of 300 bytes: the newest two no longer fit the 200 kept, so there would be
    // something to summarise from the third request on.
    let question = format!("Read the logs. {}", "Context: ".repeat(300));
    let model = ScriptedModel::new([
        ScriptedTurn::call("read", json!({"size": 300})).with_usage(Usage::new(920, 5)),
        ScriptedTurn::call("read", json!({"size": 300})).with_usage(Usage::new(1_040, 5)),
        ScriptedTurn::call("read", json!({"size": 300})).with_usage(Usage::new(1_160, 5)),
        ScriptedTurn::text("All read.").with_usage(Usage::new(1_280, 5)),
    ]);
    let (session, events) = compacting_with(&model, |builder| builder);
    let warnings = Warnings::default();
    let run = {
        let _guard = tracing::subscriber::set_default(warnings.clone());
        session.send(question).await.unwrap()
    };
    assert_eq!(run.text, "All read.");
    assert_eq!(run.model_calls, 4);
    assert!(compactions(&events).is_empty());
    let lines = warnings.lines();
    assert!(
        lines.iter().any(|line| line.contains("not summarised")),
        "{lines:?}"
    );
    model.assert_complete();
}

#[tokio::test]
async fn a_pause_during_the_summary_holds_the_next_model_call() {
    let pause = toolsmith_harness::agent::PauseHandle::new();
    let pressed = pause.clone();
    let [first, second] = two_reads();
    let model = ScriptedModel::new([
        first,
        second,
        // Paused while the model writes the summary: the next call waits for the resume.
        ScriptedTurn::respond(move |_| {
            pressed.pause();
            Ok(ChatResponse::text("The first log was all r."))
        }),
        ScriptedTurn::text("Both read."),
    ]);
    let (session, events) = compacting_with(&model, |builder| builder.with_pause(pause.clone()));
    let session = Arc::new(session);
    let running = {
        let session = Arc::clone(&session);
        tokio::spawn(async move { session.send("Read the logs.").await })
    };
    for _ in 0..50 {
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    assert_eq!(
        model.requests().len(),
        3,
        "a model call was made while paused"
    );
    assert_eq!(compactions(&events).len(), 1);
    pause.resume();
    let run = running.await.unwrap().unwrap();
    assert_eq!(run.text, "Both read.");
    model.assert_complete();
}

/// The guard's estimate of `request` by its bytes: what a request sent whole is counted.
fn whole_estimate(request: &toolsmith_harness::model::ChatRequest) -> u64 {
    let system = request
        .system
        .as_deref()
        .map_or(0, |system| system.len() as u64 / 3 + 5);
    request
        .messages
        .iter()
        .map(toolsmith_harness::agent::estimate_message_tokens)
        .sum::<u64>()
        + system
}

#[tokio::test]
async fn a_summarised_part_larger_than_the_window_is_shortened_to_fit_the_summary_request() {
    // One result of 9,000 bytes, some 3,000 tokens: three windows. Sent whole, the summary
    // request would be refused as too long, and the conversation never compacted.
    let model = ScriptedModel::new([
        ScriptedTurn::call("read", json!({"size": 9000})).with_usage(Usage::new(100, 5)),
        ScriptedTurn::respond(|request| {
            let estimated = whole_estimate(request);
            assert!(
                estimated <= 1_000,
                "the summary request is {estimated} tokens"
            );
            let transcript = request.messages[0].text().unwrap();
            // Both ends of the long result are kept, and the cut says how much went.
            assert!(
                transcript.contains("## User\nRead the logs.\n"),
                "{transcript}"
            );
            assert!(transcript.contains("{\"size\":9000}"), "{transcript}");
            assert!(transcript.contains("bytes left out"), "{transcript}");
            assert!(transcript.contains(&"r".repeat(500)), "{transcript}");
            Ok(ChatResponse::text("The log was all r."))
        }),
        ScriptedTurn::text("Read."),
    ]);
    let (session, events) = compacting_with(&model, |builder| builder);
    let run = session.send("Read the logs.").await.unwrap();
    assert_eq!(run.text, "Read.");
    assert_eq!(compactions(&events).len(), 1);
    model.assert_complete();
}

#[tokio::test]
async fn compacting_on_demand_shortens_the_transcript_to_the_window_too() {
    let model = ScriptedModel::new([ScriptedTurn::respond(|request| {
        let estimated = whole_estimate(request);
        assert!(
            estimated <= 1_000,
            "the summary request is {estimated} tokens"
        );
        Ok(ChatResponse::text("A long answer of w."))
    })]);
    let (session, _) = compacting_with(&model, |builder| builder);
    // A conversation of three windows, as an application restores one.
    session
        .edit_transcript(|messages: &mut Vec<Message>| {
            *messages = vec![
                Message::user("One?"),
                Message::assistant("w".repeat(9_000)),
                Message::user("Two?"),
                Message::assistant("Two."),
            ];
        })
        .await;
    let summary = session.compact_conversation().await.unwrap();
    assert_eq!(summary.text, "A long answer of w.");
    model.assert_complete();
}
