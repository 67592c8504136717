//! Images in an agent session: a user's images go to the model with their text, and a
//! tool's image result goes back to it as an image, kept in the conversation for the next
//! `send`.

use toolsmith_core::{ContentPart, Image, ToolCallResult, ToolShed};
use toolsmith_harness::agent::{AgentSession, UserInput};
use toolsmith_harness::model::{Message, ScriptedModel, ScriptedTurn};

use super::common::image_files::screenshot_tool;

fn photo() -> Image {
    Image::from_bytes("image/jpeg", b"\xFF\xD8\xFF\xE0\0\x10JFIF").unwrap()
}

fn screenshot() -> Image {
    Image::from_bytes("image/png", b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR").unwrap()
}

#[tokio::test]
async fn a_users_images_and_a_tools_image_reach_the_model() {
    let model = ScriptedModel::new([
        ScriptedTurn::call("screenshot", serde_json::json!({})),
        ScriptedTurn::text("The page shows the same cat."),
        ScriptedTurn::text("Still a cat."),
    ]);
    let tool = screenshot_tool(
        "screenshot",
        ToolCallResult::parts([ContentPart::text("The page:"), screenshot().into()]),
    );
    let session = AgentSession::builder(model.clone())
        .with_model("scripted")
        .with_toolshed(ToolShed::new().tool(tool))
        .build()
        .unwrap();
    let names = session.tool_manager().names();
    session.tool_manager().activate(&names);

    let run = session
        .send_input(UserInput::new("Is this the cat on the page?").image(photo()))
        .await
        .unwrap();
    assert_eq!(run.text, "The page shows the same cat.");
    let requests = model.requests();
    assert_eq!(
        requests[0].messages[0],
        Message::user_with_images("Is this the cat on the page?", vec![photo()])
    );
    let results = requests[1].messages.last().unwrap().results();
    assert_eq!(
        results[0].result,
        ToolCallResult::parts([ContentPart::text("The page:"), screenshot().into()])
    );

    // Kept for the next `send`, images and all; text alone still sends as before.
    session.send("And now?").await.unwrap();
    let kept = &model.requests()[2].messages;
    assert_eq!(kept[0].images(), [photo()]);
    assert_eq!(kept.last(), Some(&Message::user("And now?")));
}
