//! Anthropic says which image it refused (its message starts with a path into the body it
//! was sent): the client gives that image's index among the request's images, and a
//! session replaces that image alone, asking again while refusals name other images and
//! ending with the refusal once none is left.

use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use toolsmith_core::{ContentPart, FnTool, Image, ToolArguments, ToolCallResult, ToolShed};
use toolsmith_harness::agent::{AgentEvent, AgentSession, AgenticError, UserInput};
use toolsmith_harness::model::{ChatRequest, Message, ModelCall, ModelError, ToolResultMessage};

use super::server::{MockServer, Recorded, Reply, error_stream};
use super::{Api, Client};
use crate::common::image_files::screenshot_tool;

/// A distinct image: a PNG signature and `name` (all `Image` checks is the signature).
fn png(name: &str) -> Image {
    Image::from_bytes(
        "image/png",
        &[b"\x89PNG\r\n\x1a\n", name.as_bytes()].concat(),
    )
    .unwrap()
}

/// Anthropic's error for the image at `path` of the body it was sent.
fn refusal_error(path: &str) -> Value {
    json!({"type": "invalid_request_error",
        "message": format!("{path}: Image does not match the provided media type image/png")})
}

/// Anthropic's 400 for the image at `path`.
fn refusal(path: &str) -> Reply {
    Reply::json(
        400,
        &json!({"type": "error", "error": refusal_error(path),
            "request_id": "req_011CV6WfUDyhWK5bmewu1Tnq"}),
    )
}

/// Anthropic's stream reporting, after its `200`, the refusal of the image at `path`.
fn refusal_in_stream(path: &str) -> Reply {
    let stream = error_stream(Api::Anthropic, refusal_error(path));
    Reply::sse(&stream, 64)
}

/// The paths of the three images of a request after the `shot_a`, `shot_b` calls: the
/// user's photo (before its text), then each result's image after its caption.
const PHOTO: &str = "messages.0.content.0.image.source.base64.data";
const PAGE_A: &str = "messages.2.content.0.tool_result.content.1.image.source.base64";
const PAGE_B: &str = "messages.2.content.1.tool_result.content.1.image.source.base64";

/// A request of three images: one in the user's message, one in each of two tool results.
fn three_images() -> ChatRequest {
    let result = |id: &str, name: &str, page: &str| ToolResultMessage {
        call_id: id.to_owned(),
        name: name.to_owned(),
        result: ToolCallResult::parts([
            ContentPart::text(format!("Page {page}:")),
            png(page).into(),
        ]),
    };
    ChatRequest {
        model: Api::Anthropic.model_name().to_owned(),
        messages: vec![
            Message::user_with_images("Compare.", vec![png("photo")]),
            Message::assistant_calls(
                None,
                vec![
                    ModelCall::new("toolu_a", "shot_a", ToolArguments::new()),
                    ModelCall::new("toolu_b", "shot_b", ToolArguments::new()),
                ],
            ),
            Message::ToolResults {
                results: vec![
                    result("toolu_a", "shot_a", "A"),
                    result("toolu_b", "shot_b", "B"),
                ],
            },
        ],
        ..ChatRequest::default()
    }
}

/// What the Anthropic client gives for [`three_images`] refused at `path`, whole,
/// streamed, and inside a stream: the refused image's index, or `None`.
async fn located(path: &str) -> [Option<usize>; 3] {
    let mut found = [None; 3];
    let replies = [
        (false, refusal(path)),
        (true, refusal(path)),
        (true, refusal_in_stream(path)),
    ];
    for ((streamed, reply), slot) in replies.into_iter().zip(&mut found) {
        let server = MockServer::start([reply]).await;
        let model = Api::Anthropic.model(&server.base, &Client::default());
        let request = three_images();
        let answer = if streamed {
            model.stream(&request, &mut |_| {}).await
        } else {
            model.complete(&request).await
        };
        match answer {
            Err(ModelError::ImageRefused { message, image, .. }) => {
                assert!(message.starts_with(path), "{message}");
                *slot = image;
            }
            other => panic!("{path} (streamed: {streamed}): expected ImageRefused, got {other:?}"),
        }
        assert_eq!(server.requests().len(), 1);
    }
    found
}

#[tokio::test]
async fn the_anthropic_client_maps_the_path_back_to_the_request_s_image() {
    assert_eq!(located(PAGE_A).await, [Some(1); 3]);
    assert_eq!(located(PHOTO).await, [Some(0); 3]);
    assert_eq!(located(PAGE_B).await, [Some(2); 3]);
}

#[tokio::test]
async fn a_path_that_names_no_image_of_the_request_is_none() {
    for path in [
        // The user's text block, the assistant's `tool_use`, a caption of a result.
        "messages.0.content.1.image.source.base64.data",
        "messages.1.content.0.image.source.base64.data",
        "messages.2.content.0.tool_result.content.0.image.source.base64",
        // Past the messages, the blocks, a result's content.
        "messages.3.content.0.image.source.base64.data",
        "messages.0.content.7.image.source.base64.data",
        "messages.2.content.1.tool_result.content.2.image.source.base64",
        // Not a path at all, or not one into the messages.
        "Could not process image",
        "system.0.image.source.base64.data",
    ] {
        assert_eq!(located(path).await, [None; 3], "{path}");
    }
}

/// Anthropic's answer calling `shot_a` and `shot_b`.
fn calls_answer() -> Value {
    json!({"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
        "content": [
            {"type": "tool_use", "id": "toolu_a", "name": "shot_a", "input": {}},
            {"type": "tool_use", "id": "toolu_b", "name": "shot_b", "input": {}}],
        "stop_reason": "tool_use", "stop_sequence": null,
        "usage": {"input_tokens": 30, "output_tokens": 10}})
}

/// A tool returning a caption and `png(page)`.
fn shot(name: &'static str, page: &'static str) -> FnTool {
    screenshot_tool(
        name,
        ToolCallResult::parts([ContentPart::text(format!("Page {page}:")), png(page).into()]),
    )
}

/// The note the model is shown in place of `png(name)`.
fn note(name: &str) -> String {
    format!(
        "[image removed: the model could not read it (image/png, {} bytes)]",
        8 + name.len()
    )
}

/// A session of the Anthropic client on a server answering `replies` (after the calls of
/// `shot_a` and `shot_b`), asked "Compare." with `png("photo")`: how the run ended, what
/// the server was sent, and the `ImagesRemoved` events (`turn`, `removed`, `image`).
async fn session_run(
    replies: Vec<Reply>,
) -> (
    Result<String, AgenticError>,
    Vec<Recorded>,
    Vec<(usize, usize, Option<usize>)>,
) {
    let server =
        MockServer::start(std::iter::once(Reply::json(200, &calls_answer())).chain(replies)).await;
    let events = Arc::new(Mutex::new(Vec::new()));
    let seen = Arc::clone(&events);
    let session = AgentSession::builder(Api::Anthropic.model(&server.base, &Client::default()))
        .with_model(Api::Anthropic.model_name())
        .with_toolshed(
            ToolShed::new()
                .tool(shot("shot_a", "A"))
                .tool(shot("shot_b", "B")),
        )
        .with_event_handler(move |event: &AgentEvent| {
            if let AgentEvent::ImagesRemoved {
                turn,
                removed,
                image,
                ..
            } = event
            {
                seen.lock().unwrap().push((*turn, *removed, *image));
            }
        })
        .build()
        .unwrap();
    session
        .tool_manager()
        .activate(&["shot_a".into(), "shot_b".into()]);
    let run = session
        .send_input(UserInput::new("Compare.").image(png("photo")))
        .await
        .map(|run| run.text);
    let events = events.lock().unwrap().clone();
    (run, server.requests(), events)
}

/// The `data` of each image block a body's messages carry, in order.
fn sent_images(body: &Value) -> Vec<String> {
    fn collect(blocks: &Value, into: &mut Vec<String>) {
        for block in blocks.as_array().into_iter().flatten() {
            match block["type"].as_str() {
                Some("image") => into.push(block["source"]["data"].as_str().unwrap().to_owned()),
                Some("tool_result") => collect(&block["content"], into),
                _ => {}
            }
        }
    }
    let mut images = Vec::new();
    for message in body["messages"].as_array().unwrap() {
        collect(&message["content"], &mut images);
    }
    images
}

fn data(name: &str) -> String {
    png(name).data().to_owned()
}

#[tokio::test]
async fn a_session_removes_only_the_image_named_and_asks_again() {
    let (run, requests, events) = session_run(vec![
        refusal(PAGE_A),
        Reply::json(200, &Api::Anthropic.text_answer("B is newer.")),
    ])
    .await;
    assert_eq!(run.unwrap(), "B is newer.");
    assert_eq!(requests.len(), 3);
    assert_eq!(
        sent_images(&requests[1].body),
        [data("photo"), data("A"), data("B")]
    );
    // Asked again with the photo and page B; page A's image a note after its caption.
    assert_eq!(sent_images(&requests[2].body), [data("photo"), data("B")]);
    assert_eq!(
        requests[2].body["messages"][2]["content"][0]["content"],
        json!([{"type": "text", "text": "Page A:"}, {"type": "text", "text": note("A")}])
    );
    assert_eq!(events, [(2, 1, Some(1))]);
}

#[tokio::test]
async fn refusals_naming_one_image_then_another_remove_both_then_the_call_is_answered() {
    let (run, requests, events) = session_run(vec![
        refusal(PAGE_A),
        refusal(PHOTO),
        Reply::json(200, &Api::Anthropic.text_answer("Only B is left.")),
    ])
    .await;
    assert_eq!(run.unwrap(), "Only B is left.");
    assert_eq!(requests.len(), 4);
    assert_eq!(sent_images(&requests[2].body), [data("photo"), data("B")]);
    assert_eq!(sent_images(&requests[3].body), [data("B")]);
    // The user's text kept, after the photo's note.
    assert_eq!(
        requests[3].body["messages"][0]["content"],
        json!(format!("{}\nCompare.", note("photo")))
    );
    assert_eq!(events, [(2, 1, Some(1)), (3, 1, Some(0))]);
}

#[tokio::test]
async fn a_provider_that_keeps_refusing_ends_the_run_once_no_image_is_left() {
    // Each refusal names an image still there (the photo, A, B), then the photo's place
    // again, and so on while the server has refusals left.
    let (run, requests, events) = session_run(vec![
        refusal(PHOTO),
        refusal(PAGE_A),
        refusal(PAGE_B),
        refusal(PHOTO),
        refusal(PHOTO),
        Reply::json(200, &Api::Anthropic.text_answer("unused")),
    ])
    .await;
    let Err(AgenticError::Model { source, run }) = run else {
        panic!("expected the refusal, got {run:?}");
    };
    assert!(
        matches!(source, ModelError::ImageRefused { image: None, .. }),
        "{source:?}"
    );
    // The three images removed one at a time; the fourth refusal (its path now names a
    // text block) finds none to remove and ends the run.
    assert_eq!(events, [(2, 1, Some(0)), (3, 1, Some(0)), (4, 1, Some(0))]);
    assert_eq!(requests.len(), 5);
    assert!(sent_images(&requests[4].body).is_empty());
    assert_eq!(run.model_calls, 5);
}
