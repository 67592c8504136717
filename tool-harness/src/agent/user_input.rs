//! [`UserInput`]: what a user sends an [`AgentSession`](super::AgentSession): text, and
//! images with it.

use std::borrow::Cow;

use toolsmith_core::Image;

use crate::model::Message;

/// What a user sends a session ([`AgentSession::send_input`](super::AgentSession::send_input)):
/// text, and any images with it. Text converts into one.
///
/// ```
/// use toolsmith::Image;
/// use toolsmith::harness::agent::{AgentSession, UserInput};
/// use toolsmith::harness::model::{Message, ScriptedModel, ScriptedTurn};
///
/// # #[tokio::main(flavor = "current_thread")] async fn main() {
/// let session = AgentSession::builder(ScriptedModel::new([ScriptedTurn::text("A cat.")]))
///     .with_model("scripted")
///     .build()
///     .unwrap();
/// let photo = Image::from_bytes("image/png", b"\x89PNG\r\n\x1a\n").unwrap();
/// let run = session
///     .send_input(UserInput::new("What is in this photo?").image(photo.clone()))
///     .await
///     .unwrap();
/// assert_eq!(run.text, "A cat.");
/// assert_eq!(run.transcript[0].images(), [photo]);
/// # }
/// ```
#[derive(Debug, Clone, PartialEq, Default)]
pub struct UserInput {
    /// The text.
    pub text: String,
    /// The images, shown to the model before the text.
    pub images: Vec<Image>,
}

impl UserInput {
    /// Text alone.
    pub fn new(text: impl Into<String>) -> Self {
        Self {
            text: text.into(),
            images: Vec::new(),
        }
    }

    /// The input with `image` added after its other images.
    #[must_use]
    pub fn image(mut self, image: Image) -> Self {
        self.images.push(image);
        self
    }

    /// The input with `images` added after its other images.
    #[must_use]
    pub fn images(mut self, images: impl IntoIterator<Item = Image>) -> Self {
        self.images.extend(images);
        self
    }

    /// The input as the user message of a conversation.
    pub fn into_message(self) -> Message {
        Message::user_with_images(self.text, self.images)
    }
}

impl From<String> for UserInput {
    fn from(text: String) -> Self {
        Self::new(text)
    }
}

impl From<&str> for UserInput {
    fn from(text: &str) -> Self {
        Self::new(text)
    }
}

impl From<&String> for UserInput {
    fn from(text: &String) -> Self {
        Self::new(text.as_str())
    }
}

impl From<Cow<'_, str>> for UserInput {
    fn from(text: Cow<'_, str>) -> Self {
        Self::new(text)
    }
}

impl From<Box<str>> for UserInput {
    fn from(text: Box<str>) -> Self {
        Self::new(text)
    }
}
