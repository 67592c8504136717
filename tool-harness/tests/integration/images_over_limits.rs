//! The images a model's `ImageLimits` refuse are replaced by a note saying why before the
//! request is sent, once: the kept conversation carries the notes. The many-images rule
//! removes as few as it needs, the oldest first; the most-images rule the oldest. Off, the
//! images are sent as they are; sub-agents follow their parent's setting.

use std::sync::{Arc, Mutex};

use serde_json::json;
use toolsmith_core::{ContentPart, Image, ToolArguments, ToolCallResult, ToolShed};
use toolsmith_harness::ToolPreset;
use toolsmith_harness::agent::{
    AgentEvent, AgentSession, AgentSessionBuilder, SubAgentConfig, UserInput,
};
use toolsmith_harness::model::{
    ImageLimits, Message, ModelCall, ScriptedModel, ScriptedTurn, ToolResultMessage,
};

use super::common::image_files::{png, screenshot_tool};

const OVER_8000: &str =
    "[image removed: 9000x4000 px, more than the 8000 px a side the model takes]";

/// Anthropic's limits, as its client gives them.
fn anthropic_like() -> ImageLimits {
    ImageLimits::none()
        .with_max_side(8000)
        .with_max_side_beyond(20, 2000)
        .with_max_images(100)
}

/// A session over `model` whose events are recorded.
fn session(
    model: &ScriptedModel,
    configure: impl FnOnce(AgentSessionBuilder) -> AgentSessionBuilder,
) -> (AgentSession, Arc<Mutex<Vec<AgentEvent>>>) {
    let events = Arc::new(Mutex::new(Vec::new()));
    let seen = Arc::clone(&events);
    let builder = AgentSession::builder(model.clone())
        .with_model("scripted")
        .with_event_handler(move |event: &AgentEvent| seen.lock().unwrap().push(event.clone()));
    (configure(builder).build().unwrap(), events)
}

/// The notes of every `ImagesOverLimits` event, with its turn.
fn over_limits(events: &Mutex<Vec<AgentEvent>>) -> Vec<(usize, Vec<String>)> {
    events
        .lock()
        .unwrap()
        .iter()
        .filter_map(|event| match event {
            AgentEvent::ImagesOverLimits { turn, removed } => Some((*turn, removed.clone())),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn an_oversized_image_becomes_a_note_once_and_the_kept_conversation_has_it() {
    let model = ScriptedModel::new([
        ScriptedTurn::text("A small picture."),
        ScriptedTurn::text("Still the small one."),
    ])
    .with_image_limits(anthropic_like());
    let (session, events) = session(&model, |b| b);
    let small = png(800, 600);
    session
        .send_input(
            UserInput::new("What is this?")
                .image(png(9000, 4000))
                .image(small.clone()),
        )
        .await
        .unwrap();
    let expected = Message::user_with_images(format!("{OVER_8000}\nWhat is this?"), vec![small]);
    assert_eq!(model.requests()[0].messages[0], expected);
    assert_eq!(over_limits(&events), [(1, vec![OVER_8000.to_owned()])]);
    assert_eq!(session.transcript().await[0], expected);

    // The next request carries the note as it was: nothing removed again.
    session.send("And now?").await.unwrap();
    assert_eq!(model.requests()[1].messages[0], expected);
    assert_eq!(over_limits(&events).len(), 1);
    model.assert_complete();
}

/// A conversation of `sizes.len()` screenshots, one a user message, each answered.
fn screenshots(sizes: &[(u32, u32)]) -> Vec<Message> {
    sizes
        .iter()
        .enumerate()
        .flat_map(|(i, &(width, height))| {
            [
                Message::user_with_images(format!("shot {i}"), vec![png(width, height)]),
                Message::assistant("Seen."),
            ]
        })
        .collect()
}

/// Which screenshots of the request `messages` (as [`screenshots`] wrote them) became
/// notes, by their number.
fn removed_shots(messages: &[Message]) -> Vec<usize> {
    messages
        .iter()
        .step_by(2)
        .enumerate()
        .filter(|(_, message)| message.images().is_empty() && message.text() != Some("Next?"))
        .map(|(i, _)| i)
        .collect()
}

/// Sends "Next?" after `sizes`' screenshots to a model of Anthropic's limits: which were
/// removed, and the notes of the event.
async fn send_after(sizes: &[(u32, u32)]) -> (Vec<usize>, Vec<String>) {
    let model =
        ScriptedModel::new([ScriptedTurn::text("Seen.")]).with_image_limits(anthropic_like());
    let (session, events) = session(&model, |b| b);
    let conversation = screenshots(sizes);
    session.edit_transcript(|kept| *kept = conversation).await;
    session.send("Next?").await.unwrap();
    let removed = removed_shots(&model.requests()[0].messages);
    assert_eq!(removed_shots(&session.transcript().await), removed);
    let notes = over_limits(&events)
        .into_iter()
        .flat_map(|(_, notes)| notes)
        .collect();
    (removed, notes)
}

#[tokio::test]
async fn many_images_lose_the_oldest_over_the_smaller_limit_and_no_more() {
    const BEYOND: &str = "[image removed: 2560x1440 px, more than the 2000 px a side the model takes in a request of more than 20 images]";
    // 25 screenshots of 2560x1440: the 5 oldest go for the rule, and 5 more for the
    // headroom (a quarter of 20), so that the next 5 turns' screenshots remove none: 15 stay.
    let (removed, notes) = send_after(&[(2560, 1440); 25]).await;
    assert_eq!(removed, [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    assert_eq!(notes, vec![BEYOND.to_owned(); 10]);

    // 25 where only 3 are over 2000 px: those 3, though 22 images stay.
    let mut sizes = [(1280, 720); 25];
    for large in [3, 10, 20] {
        sizes[large] = (2560, 1440);
    }
    let (removed, notes) = send_after(&sizes).await;
    assert_eq!(removed, [3, 10, 20]);
    assert_eq!(notes.len(), 3);

    // 21 with the oldest and the latest large: the oldest alone brings it to 20, and the
    // headroom never takes one of the newest 15.
    let mut sizes = [(1280, 720); 21];
    sizes[0] = (2560, 1440);
    sizes[20] = (2560, 1440);
    assert_eq!(send_after(&sizes).await.0, [0]);

    // 20 large ones are within the rule.
    assert_eq!(send_after(&[(2560, 1440); 20]).await, (vec![], vec![]));
}

#[tokio::test]
async fn past_the_most_images_a_request_the_oldest_go() {
    let model = ScriptedModel::new([ScriptedTurn::text("Seen.")])
        .with_image_limits(ImageLimits::none().with_max_images(10));
    let (session, events) = session(&model, |b| b);
    let conversation = screenshots(&[(100, 100); 12]);
    session.edit_transcript(|kept| *kept = conversation).await;
    session.send("Next?").await.unwrap();
    // The 2 past the limit, and 2 more of headroom (a quarter of 10).
    assert_eq!(removed_shots(&model.requests()[0].messages), [0, 1, 2, 3]);
    let note = "[image removed: the request had 12 images, more than the 10 the model takes; \
                the oldest went, down to 8]";
    assert_eq!(over_limits(&events), [(1, vec![note.to_owned(); 4])]);
    assert_eq!(
        model.requests()[0].messages[0],
        Message::user(format!("{note}\nshot 0"))
    );
}

#[tokio::test]
async fn a_tool_result_s_image_over_the_limit_becomes_a_text_part() {
    let tool = screenshot_tool(
        "screenshot",
        ToolCallResult::parts([ContentPart::text("The screen:"), png(9000, 4000).into()]),
    );
    let model = ScriptedModel::new([
        ScriptedTurn::call("screenshot", json!({})),
        ScriptedTurn::text("Too large to see."),
    ])
    .with_image_limits(anthropic_like());
    let (session, events) = session(&model, |b| b.with_toolshed(ToolShed::new().tool(tool)));
    let names = session.tool_manager().names();
    session.tool_manager().activate(&names);
    let run = session.run("Look.").await.unwrap();
    let requests = model.requests();
    let sent = &requests[1].messages[2].results()[0].result;
    assert_eq!(
        *sent,
        ToolCallResult::parts([
            ContentPart::text("The screen:"),
            ContentPart::text(OVER_8000)
        ])
    );
    assert_eq!(run.transcript[2].results()[0].result, *sent);
    assert_eq!(over_limits(&events), [(2, vec![OVER_8000.to_owned()])]);
}

#[tokio::test]
async fn an_animated_image_is_removed_where_the_model_takes_none() {
    let model = ScriptedModel::new([ScriptedTurn::text("A still one.")])
        .with_image_limits(ImageLimits::none().with_animated(false));
    let (session, events) = session(&model, |b| b);
    let still = super::common::image_files::gif(1);
    session
        .send_input(
            UserInput::new("Which?")
                .image(super::common::image_files::gif(3))
                .image(still.clone()),
        )
        .await
        .unwrap();
    let note = "[image removed: an animated image/gif, which the model does not take]";
    assert_eq!(
        model.requests()[0].messages[0],
        Message::user_with_images(format!("{note}\nWhich?"), vec![still])
    );
    assert_eq!(over_limits(&events), [(1, vec![note.to_owned()])]);
}

#[tokio::test]
async fn off_nothing_is_removed_before_sending() {
    let model = ScriptedModel::new([ScriptedTurn::text("Sent as it was.")])
        .with_image_limits(anthropic_like());
    let (session, events) = session(&model, |b| b.with_unreadable_images_removed(false));
    let large = png(9000, 4000);
    session
        .send_input(UserInput::new("What is this?").image(large.clone()))
        .await
        .unwrap();
    assert_eq!(model.requests()[0].messages[0].images(), [large]);
    assert!(over_limits(&events).is_empty());
}

/// What the child's second request carried of its `screenshot` result (a 9000 px image),
/// under a parent built with `remove`.
async fn child_sent(remove: bool) -> ContentPart {
    let screenshot = screenshot_tool("screenshot", ToolCallResult::image(png(9000, 4000)));
    let child_model = ScriptedModel::new([
        ScriptedTurn::call("screenshot", json!({})),
        ScriptedTurn::text("done"),
    ])
    .with_image_limits(anthropic_like());
    let config = SubAgentConfig::new(child_model.clone(), "child-model")
        .with_tools(vec![Arc::new(screenshot)]);
    let parent_model = ScriptedModel::new([
        ScriptedTurn::call("agent", json!({"command": "start", "task": "look"})),
        ScriptedTurn::call(
            "agent",
            json!({"command": "result", "id": "agent-1", "wait_ms": 5000}),
        ),
        ScriptedTurn::text("The child finished."),
    ]);
    let parent = AgentSession::builder(parent_model)
        .with_model("parent-model")
        .with_toolshed(ToolShed::new().tools(ToolPreset::agent(config)))
        .with_unreadable_images_removed(remove)
        .build()
        .unwrap();
    parent.tool_manager().activate(&["agent".into()]);
    parent.run("delegate").await.unwrap();
    let requests = child_model.requests();
    let toolsmith_core::UserModelContent::Parts(parts) =
        &requests[1].messages[2].results()[0].result.content
    else {
        panic!("an image result is parts: {:?}", requests[1].messages[2]);
    };
    parts[0].clone()
}

#[tokio::test]
async fn sub_agents_follow_their_parent_s_setting() {
    assert_eq!(child_sent(true).await, ContentPart::text(OVER_8000));
    let sent = child_sent(false).await;
    assert_eq!(
        sent.as_image().map(Image::dimensions),
        Some(Some((9000, 4000)))
    );
}

/// An error result's images are not sent (a format sends its text alone): they count
/// toward no limit, and are not replaced by a note, so that the images sent are not
/// removed for them (and the old message is left as it was).
#[tokio::test]
async fn an_error_result_s_images_count_toward_no_limit() {
    let model = ScriptedModel::new([ScriptedTurn::text("Seen.")])
        .with_image_limits(ImageLimits::none().with_max_images(10).with_max_side(8000));
    let (session, events) = session(&model, |b| b);
    // 8 screenshots sent, and 4 calls that failed with a picture of the failure (one of
    // them over 8000 px): 12 images in the conversation, 8 of them sent.
    let mut conversation = screenshots(&[(100, 100); 8]);
    let calls = (0..4)
        .map(|i| ModelCall::new(format!("c{i}"), "screenshot", ToolArguments::new()))
        .collect();
    conversation.push(Message::assistant_calls(None, calls));
    let failed = |i: usize| ToolResultMessage {
        call_id: format!("c{i}"),
        name: "screenshot".into(),
        result: ToolCallResult {
            error_detail: Some("the window closed".into()),
            ..ToolCallResult::parts([
                ContentPart::text("Failed at:"),
                if i == 0 {
                    png(9000, 4000)
                } else {
                    png(100, 100)
                }
                .into(),
            ])
        },
    };
    conversation.push(Message::ToolResults {
        results: (0..4).map(failed).collect(),
    });
    conversation.push(Message::assistant("It failed."));
    let kept = conversation.clone();
    session.edit_transcript(|messages| *messages = kept).await;
    session.send("Next?").await.unwrap();
    assert_eq!(over_limits(&events), []);
    let sent = &model.requests()[0].messages;
    assert_eq!(sent[..conversation.len()], conversation[..]);
}

/// A model's media types are matched as an image's are named, in any case: a model
/// that lists `image/PNG` takes a PNG.
#[tokio::test]
async fn media_types_are_taken_in_any_case() {
    let model = ScriptedModel::new([ScriptedTurn::text("Seen.")])
        .with_image_limits(ImageLimits::none().with_media_types(&["image/PNG", " Image/Jpeg "]));
    let (session, events) = session(&model, |b| b);
    let shot = png(800, 600);
    session
        .send_input(
            UserInput::new("Which?")
                .image(shot.clone())
                .image(super::common::image_files::gif(1)),
        )
        .await
        .unwrap();
    let note = "[image removed: an image/gif, a type the model does not take (it takes \
                image/png, image/jpeg)]";
    assert_eq!(
        model.requests()[0].messages[0],
        Message::user_with_images(format!("{note}\nWhich?"), vec![shot])
    );
    assert_eq!(over_limits(&events), [(1, vec![note.to_owned()])]);
}

#[tokio::test]
async fn images_a_long_run_gathers_turn_by_turn_cross_the_limit_when_they_come() {
    // Screenshots between turns without images: each request after a turn of text alone is
    // within the limits as the one before was; the third screenshot crosses the rule.
    let shot = screenshot_tool(
        "screenshot",
        ToolCallResult::parts([ContentPart::text("The screen:"), png(100, 100).into()]),
    );
    let note = screenshot_tool("note", ToolCallResult::text("Noted."));
    let model = ScriptedModel::new([
        ScriptedTurn::call("screenshot", json!({})),
        ScriptedTurn::call("note", json!({})),
        ScriptedTurn::call("screenshot", json!({})),
        ScriptedTurn::call("note", json!({})),
        ScriptedTurn::call("screenshot", json!({})),
        ScriptedTurn::call("note", json!({})),
        ScriptedTurn::text("Three screens."),
    ])
    .with_image_limits(ImageLimits::none().with_max_images(2));
    let (session, events) = session(&model, |b| {
        b.with_toolshed(ToolShed::new().tool(shot).tool(note))
    });
    let names = session.tool_manager().names();
    session.tool_manager().activate(&names);
    let run = session.run("Watch the screen.").await.unwrap();
    let removed = "[image removed: the request had 3 images, more than the 2 the model takes; \
                   the oldest went, down to 2]";
    assert_eq!(over_limits(&events), [(6, vec![removed.to_owned()])]);
    let requests = model.requests();
    let first_shot = |request: usize| requests[request].messages[2].results()[0].result.clone();
    assert_eq!(
        first_shot(4),
        ToolCallResult::parts([ContentPart::text("The screen:"), png(100, 100).into()])
    );
    let noted =
        ToolCallResult::parts([ContentPart::text("The screen:"), ContentPart::text(removed)]);
    assert_eq!(first_shot(5), noted);
    assert_eq!(first_shot(6), noted);
    assert_eq!(run.transcript[2].results()[0].result, noted);
}
