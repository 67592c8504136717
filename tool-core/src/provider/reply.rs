//! The results of a turn's calls, as each provider wants them back.

use serde_json::Value;

use super::Provider;
use super::feedback::error_for_model;
use crate::tool::content_part::{images_of, joined_text};
use crate::tool::nesting::check_depth;
use crate::{
    ContentPart, Image, JsonText, ToolCallManager, ToolCallResult, ToolError, UserModelContent,
};

/// One call's answer to render: the call's id, the tool's name, and what the call ended in.
///
/// Made from `(id, name, result)` tuples, owned or borrowed:
///
/// ```
/// use toolsmith::{ToolCallResult, ToolError};
/// use toolsmith::provider::{CallReply, Provider};
///
/// let results: Vec<(String, String, Result<ToolCallResult, ToolError>)> = vec![
///     ("call_1".into(), "add".into(), Ok(ToolCallResult::text("5"))),
/// ];
/// let messages = Provider::OpenAiChat.render_results(&results);
/// assert_eq!(messages[0]["tool_call_id"], "call_1");
///
/// let ok = Ok(ToolCallResult::text("5"));
/// let reply = CallReply { id: "call_1", name: "add", result: &ok };
/// assert_eq!(Provider::OpenAiChat.render_results([reply]), messages);
/// ```
#[derive(Debug, Clone, Copy)]
pub struct CallReply<'a> {
    /// The id of the call, as the provider sent it.
    pub id: &'a str,
    /// The tool that was called.
    pub name: &'a str,
    /// What the call ended in.
    pub result: &'a Result<ToolCallResult, ToolError>,
}

impl<'a> From<&'a (String, String, Result<ToolCallResult, ToolError>)> for CallReply<'a> {
    fn from((id, name, result): &'a (String, String, Result<ToolCallResult, ToolError>)) -> Self {
        Self { id, name, result }
    }
}

impl<'a> From<(&'a str, &'a str, &'a Result<ToolCallResult, ToolError>)> for CallReply<'a> {
    fn from((id, name, result): (&'a str, &'a str, &'a Result<ToolCallResult, ToolError>)) -> Self {
        Self { id, name, result }
    }
}

impl<'a> From<&'a crate::ToolCallOutcome> for CallReply<'a> {
    fn from(outcome: &'a crate::ToolCallOutcome) -> Self {
        Self {
            id: &outcome.id,
            name: &outcome.name,
            result: &outcome.result,
        }
    }
}

/// A reply reduced to what every format needs.
pub(crate) struct Reply<'a> {
    pub(crate) id: &'a str,
    pub(crate) name: &'a str,
    pub(crate) body: Body,
}

/// A reply's content.
pub(crate) enum Body {
    Text(String),
    Json(Value),
    /// Structured content already written: formats that take text take it as it is.
    JsonText(JsonText),
    /// A failure, written for the model.
    Error(String),
    /// Text and images: each format gives the model the images where its API takes them.
    Parts(Vec<ContentPart>),
}

impl Body {
    /// The content as one text.
    pub(crate) fn text(&self) -> String {
        match self {
            Self::Text(text) | Self::Error(text) => text.clone(),
            Self::Json(value) => value.to_string(),
            Self::JsonText(text) => text.as_str().to_owned(),
            Self::Parts(_) => self.text_placing_images(Image::placeholder),
        }
    }

    /// The content as one text, each image written by `placeholder` (where a format puts
    /// images elsewhere, or cannot carry them, the text says so).
    pub(crate) fn text_placing_images(&self, placeholder: impl Fn(&Image) -> String) -> String {
        match self {
            Self::Parts(parts) => joined_text(parts, placeholder),
            other => other.text(),
        }
    }

    /// Parts as a result's `content` where an API takes a list of text and image items
    /// (`item` makes one; `None` for an empty text, which the APIs refuse as an item), an
    /// empty text when nothing is left, as an empty result is (never an empty list).
    pub(crate) fn parts_content(
        parts: &[ContentPart],
        item: impl Fn(&ContentPart) -> Option<Value>,
    ) -> Value {
        let items: Vec<Value> = parts.iter().filter_map(item).collect();
        if items.is_empty() {
            Value::String(String::new())
        } else {
            Value::Array(items)
        }
    }

    /// The images of the content, in order.
    pub(crate) fn images(&self) -> impl Iterator<Item = &Image> {
        images_of(match self {
            Self::Parts(parts) => parts,
            _ => &[],
        })
    }

    /// The structured content as a value (written text parsed), for formats that embed it;
    /// `None` for text and failures.
    pub(crate) fn json_value(&self) -> Option<Value> {
        match self {
            Self::Json(value) => Some(value.clone()),
            Self::JsonText(text) => Some(text.to_value()),
            Self::Text(_) | Self::Error(_) | Self::Parts(_) => None,
        }
    }

    /// The content as text, failures marked as such for formats without an error flag.
    pub(crate) fn text_marking_errors(&self) -> String {
        match self {
            Self::Error(text) => format!("Error: {text}"),
            other => other.text(),
        }
    }

    pub(crate) fn is_error(&self) -> bool {
        matches!(self, Self::Error(_))
    }
}

impl<'a> Reply<'a> {
    /// A reply with errors written as they are (no tool names to suggest from).
    pub(crate) fn plain(reply: CallReply<'a>) -> Self {
        Self::with_known_tools(reply, &[])
    }

    pub(crate) fn with_known_tools(reply: CallReply<'a>, known_tools: &[&str]) -> Self {
        let body = match reply.result {
            Ok(result) => body_of(reply.name, result),
            Err(error) => Body::Error(error_for_model(error, known_tools)),
        };
        Self {
            id: reply.id,
            name: reply.name,
            body,
        }
    }
}

/// The images of `replies`' results as the items of one entry after the results, for a
/// format whose results cannot hold images: each result's images introduced by `intro`
/// (an item naming its call), each made an item by `item`. Empty when no result has one.
pub(crate) fn images_after_results(
    replies: &[Reply<'_>],
    intro: impl Fn(&Reply<'_>) -> Value,
    item: impl Fn(&Image) -> Value,
) -> Vec<Value> {
    let mut items = Vec::new();
    for reply in replies {
        let mut images = reply.body.images().peekable();
        if images.peek().is_some() {
            items.push(intro(reply));
            items.extend(images.map(&item));
        }
    }
    items
}

/// The body of a result of the tool `name`. A structured result nested deeper than
/// [`MAX_JSON_DEPTH`](crate::MAX_JSON_DEPTH) is not copied or rendered: it becomes the
/// execution error [`ToolCallManager::check_result`] gives for it; an error result with no
/// message becomes an execution error that says so.
fn body_of(name: &str, result: &ToolCallResult) -> Body {
    if result.is_error() {
        // Only an error's text is sent: its images say they are not shown, or the model
        // would take the placeholder for an image it was given.
        let text = result.content.text_placing_images(|image| {
            image.placeholder_noting("not shown: an error result carries its text only")
        });
        // Anthropic refuses an error result with no content (and a model learns nothing
        // from one): the failure is named.
        if text.trim().is_empty() {
            let error = ToolError::execution(name, "it reported an error without a message");
            return Body::Error(error.to_string());
        }
        return Body::Error(text);
    }
    match &result.content {
        UserModelContent::Text(text) => Body::Text(text.clone()),
        UserModelContent::Json(value) => match check_depth(value) {
            Ok(()) => Body::Json(value.clone()),
            Err(too_deep) => Body::Error(
                ToolError::execution(name, format!("its result is {too_deep}")).to_string(),
            ),
        },
        // Checked to parse (and so to nest within the bound) when it was made.
        UserModelContent::JsonText(text) => Body::JsonText(text.clone()),
        // Each image was checked (type, base64, size) when it was made.
        UserModelContent::Parts(parts) => Body::Parts(parts.clone()),
        // Given as parts are: the value's JSON text, then the images.
        UserModelContent::JsonWithImages(json) => match check_depth(json.value()) {
            Ok(()) => Body::Parts(result.content.text_and_image_parts()),
            Err(too_deep) => Body::Error(
                ToolError::execution(name, format!("its result is {too_deep}")).to_string(),
            ),
        },
    }
}

pub(crate) fn render(provider: Provider, replies: &[Reply<'_>]) -> Vec<Value> {
    match provider {
        Provider::OpenAiChat => super::openai_chat::render_results(replies),
        Provider::OpenAiResponses => super::openai_responses::render_results(replies),
        Provider::Anthropic => super::anthropic::render_results(replies),
        Provider::Gemini => super::gemini::render_results(replies),
        Provider::Text => super::text::render_results(replies),
    }
}

impl ToolCallManager {
    /// Renders a turn's results for `provider` (see [`Provider::render_results`]), after
    /// checking each structured result against its tool's `returns` schema (a mismatch is
    /// rendered as the [`ToolError::Execution`] that [`check_result`](Self::check_result)
    /// gives, so a tool's bug never reaches the model as a valid answer), and with the
    /// closest of [`names_for_the_model`](Self::names_for_the_model) suggested for an unknown
    /// tool.
    pub fn render_results<'a, I>(&self, provider: Provider, replies: I) -> Vec<Value>
    where
        I: IntoIterator,
        I::Item: Into<CallReply<'a>>,
    {
        let names = self.names_for_the_model();
        let known: Vec<&str> = names.iter().map(String::as_str).collect();
        let checked: Vec<(CallReply<'a>, Option<Result<ToolCallResult, ToolError>>)> = replies
            .into_iter()
            .map(Into::into)
            .map(|reply: CallReply<'a>| {
                let failed = match reply.result {
                    Ok(result) => self.check_result(reply.name, result).err().map(Err),
                    Err(_) => None,
                };
                (reply, failed)
            })
            .collect();
        let replies: Vec<Reply<'_>> = checked
            .iter()
            .map(|(reply, failed)| {
                let reply = match failed {
                    Some(failed) => CallReply {
                        result: failed,
                        ..*reply
                    },
                    None => *reply,
                };
                Reply::with_known_tools(reply, &known)
            })
            .collect();
        render(provider, &replies)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{ContentPart, Image};

    #[test]
    fn json_with_images_is_rendered_as_parts_of_the_json_text_then_the_images() {
        let image = Image::from_bytes("image/png", b"\x89PNG\r\n\x1a\n").unwrap();
        let value = serde_json::json!({"url": "https://example.com"});
        let result = ToolCallResult::json_with_images(value.clone(), [image.clone()]);
        let with_images = Ok(result.clone());
        let as_parts = Ok(ToolCallResult::parts([
            ContentPart::text(value.to_string()),
            image.into(),
        ]));
        for provider in Provider::ALL {
            let rendered = provider.render_results([("call-1", "browse", &with_images)]);
            assert_eq!(
                rendered,
                provider.render_results([("call-1", "browse", &as_parts)]),
                "{provider}"
            );
            // The text format carries no images.
            let sent = serde_json::to_string(&rendered)
                .unwrap()
                .contains("iVBORw0KGgo=");
            assert_eq!(sent, provider != Provider::Text, "{provider}: {rendered:?}");
        }
        // As an error, its text only, its images said not to be shown.
        let failed = Ok(ToolCallResult {
            error_detail: Some("the page did not load".into()),
            ..result
        });
        let rendered = Provider::Anthropic.render_results([("call-1", "browse", &failed)]);
        let text = serde_json::to_string(&rendered).unwrap();
        assert!(text.contains("not shown: an error result carries its text only"));
        assert!(!text.contains("iVBORw0KGgo="), "{text}");
    }

    #[test]
    fn an_error_result_s_images_are_said_not_to_be_shown() {
        let image = Image::from_bytes("image/png", b"\x89PNG\r\n\x1a\n").unwrap();
        let failed = Ok(ToolCallResult {
            error_detail: Some("the page did not load".into()),
            ..ToolCallResult::parts([
                ContentPart::text("the page did not load"),
                ContentPart::Image(image),
            ])
        });
        for provider in [Provider::Anthropic, Provider::OpenAiChat, Provider::Gemini] {
            let rendered = provider.render_results([("call-1", "browse", &failed)]);
            let text = serde_json::to_string(&rendered).unwrap();
            assert!(
                text.contains(
                    "[image: image/png, 8 bytes; not shown: an error result carries its text only]"
                ),
                "{provider}: {text}"
            );
        }
    }
}
