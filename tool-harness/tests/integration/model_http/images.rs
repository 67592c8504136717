//! Images reach the model through every client: a user's images and a tool result's images
//! are in each request body in the API's own shape (Anthropic `image` blocks, Responses
//! `input_image` items, Chat `image_url` parts in a user message after the tool messages,
//! Gemini `inlineData` parts in a user content after the function responses).

use serde_json::{Value, json};
use toolsmith_core::{ContentPart, Image, ToolArguments, ToolCallResult};
use toolsmith_harness::model::{ChatRequest, Message, ModelCall, ToolResultMessage};

use super::server::{MockServer, Reply};
use super::{Api, Client};

/// A one-pixel-sized PNG's opening: enough for the type to be checked.
const PNG: &[u8] = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR";
const PNG_BASE64: &str = "iVBORw0KGgoAAAANSUhEUg==";
const GIF: &[u8] = b"GIF89a\x01\0\x01\0";
const GIF_BASE64: &str = "R0lGODlhAQABAA==";

/// The user sends a photo; the model calls `shot`, whose result is a caption and a
/// screenshot.
fn request(api: Api) -> ChatRequest {
    let photo = Image::from_bytes("image/png", PNG).unwrap();
    let shot = Image::from_bytes("image/gif", GIF).unwrap();
    let call = ModelCall::new("call_1", "shot", ToolArguments::new());
    ChatRequest {
        model: api.model_name().to_owned(),
        messages: vec![
            Message::user_with_images("What is this?", vec![photo]),
            Message::assistant_calls(None, vec![call]),
            Message::ToolResults {
                results: vec![ToolResultMessage {
                    call_id: "call_1".to_owned(),
                    name: "shot".to_owned(),
                    result: ToolCallResult::parts([ContentPart::text("The page:"), shot.into()]),
                }],
            },
        ],
        ..ChatRequest::default()
    }
}

/// The body `api`'s client sends for [`request`].
async fn sent(api: Api) -> Value {
    let server = MockServer::start([Reply::json(200, &api.text_answer("A cat."))]).await;
    let model = api.model(&server.base, &Client::default());
    let answer = model.complete(&request(api)).await.unwrap();
    assert_eq!(answer.text.as_deref(), Some("A cat."), "{api:?}");
    let requests = server.requests();
    api.check_request(&requests[0]);
    requests[0].body.clone()
}

#[tokio::test]
async fn anthropic_sends_image_blocks() {
    let body = sent(Api::Anthropic).await;
    let messages = body["messages"].as_array().unwrap();
    assert_eq!(
        messages[0],
        json!({"role": "user", "content": [
            {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG_BASE64}},
            {"type": "text", "text": "What is this?"}
        ]})
    );
    assert_eq!(
        messages[2]["content"][0],
        json!({"type": "tool_result", "tool_use_id": "call_1", "content": [
            {"type": "text", "text": "The page:"},
            {"type": "image", "source": {"type": "base64", "media_type": "image/gif", "data": GIF_BASE64}}
        ],
        // The last message's last block carries the prompt cache's mark (on by default).
        "cache_control": {"type": "ephemeral"}})
    );
}

#[tokio::test]
async fn responses_sends_input_images() {
    let body = sent(Api::Responses).await;
    let input = body["input"].as_array().unwrap();
    assert_eq!(
        input[0],
        json!({"role": "user", "content": [
            {"type": "input_image", "image_url": format!("data:image/png;base64,{PNG_BASE64}")},
            {"type": "input_text", "text": "What is this?"}
        ]})
    );
    assert_eq!(
        input[2],
        json!({"type": "function_call_output", "call_id": "call_1", "output": [
            {"type": "input_text", "text": "The page:"},
            {"type": "input_image", "image_url": format!("data:image/gif;base64,{GIF_BASE64}")}
        ]})
    );
}

#[tokio::test]
async fn chat_sends_result_images_in_a_user_message_after_the_tool_messages() {
    let body = sent(Api::Chat).await;
    let messages = body["messages"].as_array().unwrap();
    assert_eq!(
        messages[0],
        json!({"role": "user", "content": [
            {"type": "image_url", "image_url": {"url": format!("data:image/png;base64,{PNG_BASE64}")}},
            {"type": "text", "text": "What is this?"}
        ]})
    );
    assert_eq!(
        messages[2],
        json!({"role": "tool", "tool_call_id": "call_1", "content":
            "The page:\n[image: image/gif, 10 bytes; shown in the user message after these results]"})
    );
    assert_eq!(
        messages[3],
        json!({"role": "user", "content": [
            {"type": "text", "text": "The images of the result of call call_1 (shot):"},
            {"type": "image_url", "image_url": {"url": format!("data:image/gif;base64,{GIF_BASE64}")}}
        ]})
    );
    assert_eq!(messages.len(), 4);
}

#[tokio::test]
async fn gemini_sends_inline_data_in_a_user_content_after_the_function_responses() {
    let body = sent(Api::Gemini).await;
    let contents = body["contents"].as_array().unwrap();
    assert_eq!(
        contents[0],
        json!({"role": "user", "parts": [
            {"inlineData": {"mimeType": "image/png", "data": PNG_BASE64}},
            {"text": "What is this?"}
        ]})
    );
    assert_eq!(
        contents[2],
        json!({"role": "user", "parts": [
            {"functionResponse": {"id": "call_1", "name": "shot", "response": {"output":
                "The page:\n[image: image/gif, 10 bytes; shown in the user content after these function responses]"}}}
        ]})
    );
    assert_eq!(
        contents[3],
        json!({"role": "user", "parts": [
            {"text": "The images of the result of shot (call_1):"},
            {"inlineData": {"mimeType": "image/gif", "data": GIF_BASE64}}
        ]})
    );
    assert_eq!(contents.len(), 4);
}

#[tokio::test]
async fn a_user_message_without_images_is_sent_as_before() {
    for api in Api::ALL {
        let server = MockServer::start([Reply::json(200, &api.text_answer("Hi."))]).await;
        let model = api.model(&server.base, &Client::default());
        let request = ChatRequest {
            model: api.model_name().to_owned(),
            messages: vec![Message::user("Hello")],
            ..ChatRequest::default()
        };
        model.complete(&request).await.unwrap();
        let body = &server.requests()[0].body;
        let first = match api {
            Api::Chat | Api::Anthropic => &body["messages"][0],
            Api::Responses => &body["input"][0],
            Api::Gemini => &body["contents"][0],
        };
        let expected = match api {
            Api::Gemini => json!({"role": "user", "parts": [{"text": "Hello"}]}),
            // As before the images, with the prompt cache's mark on the last message's
            // block (on by default).
            Api::Anthropic => json!({"role": "user", "content": [
                {"type": "text", "text": "Hello", "cache_control": {"type": "ephemeral"}}
            ]}),
            _ => json!({"role": "user", "content": "Hello"}),
        };
        assert_eq!(first, &expected, "{api:?}");
    }
}

#[tokio::test]
async fn anthropic_sends_no_text_block_of_whitespace_beside_images() {
    // Anthropic refuses the whole request for a text block of whitespace alone ("text
    // content blocks must contain non-whitespace text"): a user's blank caption, or a
    // newline a tool puts between its images, goes no further than the images.
    let photo = Image::from_bytes("image/png", PNG).unwrap();
    let shot = Image::from_bytes("image/gif", GIF).unwrap();
    let call = ModelCall::new("call_1", "shot", ToolArguments::new());
    let request = ChatRequest {
        model: Api::Anthropic.model_name().to_owned(),
        messages: vec![
            Message::user_with_images(" \n", vec![photo]),
            Message::assistant_calls(None, vec![call]),
            Message::ToolResults {
                results: vec![ToolResultMessage {
                    call_id: "call_1".to_owned(),
                    name: "shot".to_owned(),
                    result: ToolCallResult::parts([
                        ContentPart::text("Before:"),
                        shot.clone().into(),
                        ContentPart::text("\n"),
                        shot.into(),
                    ]),
                }],
            },
        ],
        ..ChatRequest::default()
    };
    let body = &Api::Anthropic.body_sent(&request).await;
    let gif = json!({"type": "image", "source": {"type": "base64", "media_type": "image/gif", "data": GIF_BASE64}});
    assert_eq!(
        body["messages"][0],
        json!({"role": "user", "content": [
            {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG_BASE64}}
        ]})
    );
    assert_eq!(
        body["messages"][2]["content"][0]["content"],
        json!([{"type": "text", "text": "Before:"}, gif, gif])
    );
}

/// The `shot` call's result as `result`, after the user's photo.
fn request_with_result(api: Api, result: ToolCallResult) -> ChatRequest {
    let mut request = request(api);
    if let Message::ToolResults { results } = &mut request.messages[2] {
        results[0].result = result;
    }
    request
}

#[tokio::test]
async fn a_value_with_images_is_sent_as_its_json_text_then_its_images() {
    let shot = Image::from_bytes("image/gif", GIF).unwrap();
    let value = json!({"url": "https://example.com"});
    for api in Api::ALL {
        let with_images = request_with_result(
            api,
            ToolCallResult::json_with_images(value.clone(), [shot.clone()]),
        );
        let as_parts = request_with_result(
            api,
            ToolCallResult::parts([ContentPart::text(value.to_string()), shot.clone().into()]),
        );
        let body = api.body_sent(&with_images).await;
        assert_eq!(body, api.body_sent(&as_parts).await, "{api:?}");
        assert!(body.to_string().contains(GIF_BASE64), "{api:?}: {body}");
    }
    // Anthropic's, in full: the value's text, then the image, in the `tool_result`.
    let body = Api::Anthropic
        .body_sent(&request_with_result(
            Api::Anthropic,
            ToolCallResult::json_with_images(value, [shot]),
        ))
        .await;
    assert_eq!(
        body["messages"][2]["content"][0]["content"],
        json!([
            {"type": "text", "text": r#"{"url":"https://example.com"}"#},
            {"type": "image", "source": {"type": "base64", "media_type": "image/gif", "data": GIF_BASE64}}
        ])
    );
}
