//! An image the model cannot read is not a dead end: the session replaces the request's
//! images with a note and asks the same model call again, once; the kept conversation goes
//! on without them. Off, or refused twice, the run ends with the refusal.

use std::sync::{Arc, Mutex};

use serde_json::json;
use toolsmith_core::{ContentPart, Image, ToolCallResult, ToolShed};
use toolsmith_harness::agent::{
    AgentEvent, AgentRun, AgentSession, AgentSessionBuilder, AgenticError, FINAL_ANSWER_TOOL,
    UserInput,
};
use toolsmith_harness::model::{Message, ModelError, ScriptedModel, ScriptedTurn};

use super::common::image_files::screenshot_tool;
use super::typed_answers::Weather;

/// A file that begins as a PNG: the signature is all `Image` checks.
fn broken_png() -> Image {
    Image::from_bytes("image/png", b"\x89PNG\r\n\x1a\n(cut off)").unwrap()
}

fn refusal() -> ModelError {
    ModelError::ImageRefused {
        provider: "anthropic".into(),
        status: 400,
        message: "Could not process image".into(),
        image: None,
    }
}

/// The note the model is shown instead of `broken_png()`.
const NOTE: &str = "[image removed: the model could not read it (image/png, 17 bytes)]";

/// A session over `model` with a `screenshot` tool returning text and `broken_png()`, and
/// the events it sends.
fn session(
    model: &ScriptedModel,
    configure: impl FnOnce(AgentSessionBuilder) -> AgentSessionBuilder,
) -> (AgentSession, Arc<Mutex<Vec<AgentEvent>>>) {
    let tool = screenshot_tool(
        "screenshot",
        ToolCallResult::parts([ContentPart::text("The page:"), broken_png().into()]),
    );
    let events = Arc::new(Mutex::new(Vec::new()));
    let seen = Arc::clone(&events);
    let builder = AgentSession::builder(model.clone())
        .with_model("scripted")
        .with_toolshed(ToolShed::new().tool(tool))
        .with_event_handler(move |event: &AgentEvent| seen.lock().unwrap().push(event.clone()));
    let session = configure(builder).build().unwrap();
    let names = session.tool_manager().names();
    session.tool_manager().activate(&names);
    (session, events)
}

fn image_count(messages: &[Message]) -> usize {
    messages
        .iter()
        .map(|message| {
            message.images().len()
                + message
                    .results()
                    .iter()
                    .map(|r| match &r.result.content {
                        toolsmith_core::UserModelContent::Parts(parts) => {
                            parts.iter().filter(|p| p.as_image().is_some()).count()
                        }
                        _ => 0,
                    })
                    .sum::<usize>()
        })
        .sum()
}

fn removed_events(events: &Mutex<Vec<AgentEvent>>) -> Vec<(usize, usize, String)> {
    events
        .lock()
        .unwrap()
        .iter()
        .filter_map(|event| match event {
            AgentEvent::ImagesRemoved {
                turn,
                removed,
                reason,
                ..
            } => Some((*turn, *removed, reason.clone())),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn the_images_are_replaced_the_call_asked_again_and_the_kept_conversation_goes_on() {
    let model = ScriptedModel::new([
        ScriptedTurn::call("screenshot", json!({})),
        ScriptedTurn::error(refusal()),
        ScriptedTurn::text("I could not read the screenshot."),
        ScriptedTurn::text("Go on, then."),
    ]);
    let (session, events) = session(&model, |b| b);
    let run = session
        .send_input(UserInput::new("Is this the page?").image(broken_png()))
        .await
        .unwrap();
    assert_eq!(run.text, "I could not read the screenshot.");
    assert_eq!(run.model_calls, 3);

    let requests = model.requests();
    assert_eq!(image_count(&requests[1].messages), 2);
    // The same call asked again: the same messages, each image a note.
    let again = &requests[2].messages;
    assert_eq!(again.len(), requests[1].messages.len());
    assert_eq!(image_count(again), 0);
    assert_eq!(
        again[0],
        Message::user(format!("{NOTE}\nIs this the page?"))
    );
    let results = again[2].results();
    assert_eq!(
        results[0].call_id,
        requests[1].messages[2].results()[0].call_id
    );
    assert_eq!(
        results[0].result,
        ToolCallResult::parts([ContentPart::text("The page:"), ContentPart::text(NOTE)])
    );
    assert_eq!(
        removed_events(&events),
        [(2, 2, "Could not process image".to_owned())]
    );

    // Kept without the images: the next `send` is not refused again.
    assert_eq!(image_count(&session.transcript().await), 0);
    let next = session.send("Try again?").await.unwrap();
    assert_eq!(next.text, "Go on, then.");
    assert_eq!(image_count(&model.requests()[3].messages), 0);
    model.assert_complete();
}

/// `session` asked about a broken image, its run ending on the model's error: that error
/// and the run.
async fn ended_on_the_model(session: &AgentSession) -> (ModelError, Box<AgentRun>) {
    let ended = session
        .send_input(UserInput::new("What is this?").image(broken_png()))
        .await;
    let Err(AgenticError::Model { source, run }) = ended else {
        panic!("expected the model's error, got {ended:?}");
    };
    (source, run)
}

#[tokio::test]
async fn a_second_refusal_ends_the_run_with_the_typed_error_and_the_run() {
    let model = ScriptedModel::new([
        ScriptedTurn::error(refusal()),
        ScriptedTurn::error(refusal()),
    ]);
    let (session, events) = session(&model, |b| b);
    let (source, run) = ended_on_the_model(&session).await;
    assert_eq!(source, refusal());
    assert_eq!(run.model_calls, 2);
    assert_eq!(image_count(&run.transcript), 0);
    assert_eq!(removed_events(&events).len(), 1);
    // The kept conversation is the run's, without the image.
    assert_eq!(image_count(&session.transcript().await), 0);
}

#[tokio::test]
async fn switched_off_the_refusal_ends_the_run_at_once() {
    let model = ScriptedModel::new([ScriptedTurn::error(refusal())]);
    let (session, events) = session(&model, |b| b.with_unreadable_images_removed(false));
    let (source, run) = ended_on_the_model(&session).await;
    assert_eq!(source, refusal());
    assert_eq!(run.model_calls, 1);
    assert_eq!(image_count(&run.transcript), 1);
    assert!(removed_events(&events).is_empty());
    assert_eq!(model.requests().len(), 1);
}

#[tokio::test]
async fn a_request_without_images_is_not_asked_again() {
    let model = ScriptedModel::new([ScriptedTurn::error(refusal()), ScriptedTurn::text("unused")]);
    let (session, events) = session(&model, |b| b);
    let ended = session.send("What is this?").await;
    assert!(
        matches!(&ended, Err(AgenticError::Model { source, .. }) if *source == refusal()),
        "{ended:?}"
    );
    assert_eq!(model.requests().len(), 1);
    assert!(removed_events(&events).is_empty());
}

#[tokio::test]
async fn the_typed_answer_s_exchange_is_asked_again_without_the_images() {
    let model = ScriptedModel::new([
        ScriptedTurn::text("It is 21 °C in Paris."),
        ScriptedTurn::error(refusal()),
        ScriptedTurn::call(FINAL_ANSWER_TOOL, json!({"city": "Paris", "celsius": 21})),
    ]);
    let (session, events) = session(&model, |b| b);
    let typed = session
        .send_input_as::<Weather>(UserInput::new("Weather in this photo?").image(broken_png()))
        .await
        .unwrap();
    assert_eq!(typed.value.city, "Paris");
    let requests = model.requests();
    assert_eq!(image_count(&requests[1].messages), 1);
    assert_eq!(image_count(&requests[2].messages), 0);
    // The exchange's own request is still there, after the run's messages.
    assert_eq!(
        requests[2].messages.len(),
        requests[1].messages.len(),
        "{:?}",
        requests[2].messages
    );
    assert_eq!(
        removed_events(&events),
        [(2, 1, "Could not process image".to_owned())]
    );
}

/// The refusal of a model that says which image: `image`'s index among the request's.
fn located_refusal(image: usize) -> ModelError {
    ModelError::ImageRefused {
        provider: "anthropic".into(),
        status: 400,
        message: "messages.0.content.0.image.source.base64.data: Could not process image".into(),
        image: Some(image),
    }
}

#[tokio::test]
async fn a_model_naming_an_image_again_and_again_is_asked_once_per_image_then_the_run_ends() {
    let model = ScriptedModel::new([
        ScriptedTurn::error(located_refusal(0)),
        ScriptedTurn::error(located_refusal(0)),
        ScriptedTurn::error(located_refusal(0)),
        ScriptedTurn::text("unused"),
    ]);
    let (session, events) = session(&model, |b| b);
    let other = Image::from_bytes("image/gif", b"GIF89a\x01\0\x01\0").unwrap();
    let ended = session
        .send_input(
            UserInput::new("What are these?")
                .image(other)
                .image(broken_png()),
        )
        .await;
    let Err(AgenticError::Model { source, run }) = ended else {
        panic!("expected the model's error, got {ended:?}");
    };
    // Two images, two removals, one at a time; the third refusal has none left to name.
    assert_eq!(source, located_refusal(0));
    assert_eq!(run.model_calls, 3);
    let requests = model.requests();
    assert_eq!(image_count(&requests[0].messages), 2);
    assert_eq!(requests[1].messages[0].images(), [broken_png()]);
    assert_eq!(image_count(&requests[2].messages), 0);
    assert_eq!(
        requests[2].messages[0],
        Message::user(format!(
            "{NOTE}\n[image removed: the model could not read it (image/gif, 10 bytes)]\n\
             What are these?"
        ))
    );
    assert_eq!(removed_events(&events).len(), 2);
    assert_eq!(image_count(&session.transcript().await), 0);
}

#[tokio::test]
async fn an_image_named_past_the_request_s_images_has_them_all_removed() {
    let model = ScriptedModel::new([
        ScriptedTurn::error(located_refusal(5)),
        ScriptedTurn::text("I could not read them."),
    ]);
    let (session, events) = session(&model, |b| b);
    let run = session
        .send_input(UserInput::new("What is this?").image(broken_png()))
        .await
        .unwrap();
    assert_eq!(run.text, "I could not read them.");
    assert_eq!(image_count(&model.requests()[1].messages), 0);
    assert_eq!(removed_events(&events).len(), 1);
}
