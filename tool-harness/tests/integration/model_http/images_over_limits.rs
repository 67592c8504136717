//! Each client reports its API's documented limits on images, and an `AgentSession` over
//! it sends no image those limits refuse: the body that reaches the API has the note in
//! its place.

use serde_json::Value;
use toolsmith_harness::agent::{AgentSession, UserInput};
use toolsmith_harness::model::ImageLimits;

use super::server::{MockServer, Reply};
use super::{Api, Client};
use crate::common::image_files::{gif, png};

#[test]
fn each_client_gives_its_api_s_limits_and_the_builder_others() {
    let server = "http://127.0.0.1:9";
    let limits = |api: Api| api.model(server, &Client::default()).image_limits();
    assert_eq!(
        limits(Api::Anthropic),
        ImageLimits::none()
            .with_max_side(8000)
            .with_max_side_beyond(20, 2000)
            .with_max_images(100)
            .with_max_image_bytes(30_000_000)
    );
    for api in [Api::Chat, Api::Responses] {
        assert_eq!(
            limits(api),
            ImageLimits::none()
                .with_max_images(500)
                .with_max_image_bytes(48_000_000)
                .with_animated(false),
            "{api:?}"
        );
    }
    assert_eq!(
        limits(Api::Gemini),
        ImageLimits::none()
            .with_max_images(900)
            .with_max_image_bytes(98_000_000)
            .with_media_types(&["image/png", "image/jpeg", "image/webp"])
    );
    // The same facts, as a builder starts from them.
    assert_eq!(limits(Api::Anthropic), ImageLimits::anthropic());
    assert_eq!(limits(Api::Chat), ImageLimits::openai());
    assert_eq!(limits(Api::Gemini), ImageLimits::gemini());
    let local = toolsmith_harness::model::http::OpenAiChatModel::builder()
        .base_url(server)
        .image_limits(ImageLimits::none())
        .build()
        .unwrap();
    use toolsmith_harness::model::ChatModel as _;
    assert_eq!(local.image_limits(), ImageLimits::none());
}

/// The body `api`'s client sent for a user message of `images`, asked through a session.
async fn sent_body(api: Api, images: Vec<toolsmith_core::Image>) -> Value {
    let server = MockServer::start([Reply::json(200, &api.text_answer("Seen."))]).await;
    let session = AgentSession::builder(api.model(&server.base, &Client::default()))
        .with_model(api.model_name())
        .build()
        .unwrap();
    let input = images
        .into_iter()
        .fold(UserInput::new("What is this?"), UserInput::image);
    session.send_input(input).await.unwrap();
    let requests = server.requests();
    api.check_request(&requests[0]);
    requests[0].body.clone()
}

#[tokio::test]
async fn anthropic_is_sent_no_image_over_8000_px() {
    let (large, small) = (png(9000, 4000), png(640, 480));
    let body = sent_body(Api::Anthropic, vec![large.clone(), small.clone()]).await;
    let content = body["messages"][0]["content"].as_array().unwrap();
    let images: Vec<&str> = content
        .iter()
        .filter(|block| block["type"] == "image")
        .map(|block| block["source"]["data"].as_str().unwrap())
        .collect();
    assert_eq!(images, [small.data()], "{body}");
    let text = content
        .iter()
        .find(|block| block["type"] == "text")
        .unwrap()["text"]
        .as_str()
        .unwrap();
    assert_eq!(
        text,
        "[image removed: 9000x4000 px, more than the 8000 px a side the model takes]\n\
         What is this?"
    );
    assert!(!body.to_string().contains(large.data()));
}

#[tokio::test]
async fn openai_chat_is_sent_no_animated_gif() {
    let (animated, still) = (gif(2), gif(1));
    assert!(animated.is_animated());
    let body = sent_body(Api::Chat, vec![animated.clone(), still.clone()]).await;
    let sent = body.to_string();
    assert!(!sent.contains(animated.data()), "{sent}");
    assert!(sent.contains(&still.data_url()), "{sent}");
    assert!(
        sent.contains("[image removed: an animated image/gif, which the model does not take]"),
        "{sent}"
    );
}

#[tokio::test]
async fn gemini_is_sent_no_gif() {
    let (still, photo) = (gif(1), png(640, 480));
    let body = sent_body(Api::Gemini, vec![still.clone(), photo.clone()]).await;
    let sent = body.to_string();
    assert!(!sent.contains(still.data()), "{sent}");
    assert!(!sent.contains(r#""mimeType":"image/gif""#), "{sent}");
    assert!(sent.contains(photo.data()), "{sent}");
    assert!(
        sent.contains(
            "[image removed: an image/gif, a type the model does not take (it takes \
             image/png, image/jpeg, image/webp)]"
        ),
        "{sent}"
    );
}
