//! Which image of a request Anthropic refused: its message starts with a path into the body
//! it was sent (`messages.6.content.5.image.source.base64.data: Image does not match the
//! provided media type image/png`, `messages.92.content.0.tool_result.content.1.image
//! .source.base64: …`), mapped back here to the request's own count of its images
//! ([`image_places()`]), which is what a session removes by.

use serde_json::Value;
use toolsmith_core::Image;

use crate::model::{Message, image_places};

/// The index among `request`'s images of the one the path `message` starts with names in
/// `rendered`, the `messages` of the body sent for it; `None` when the message has no such
/// path, or the path names no image block of `rendered`.
///
/// The body's image blocks are matched to the request's images in order, each to the next
/// image of the same type and data: the body carries them in the request's order (a user
/// message's images before its text, a result's in its `tool_result`), but not an error
/// result's, whose text alone is sent, and the match passes those over. Of two identical
/// images, one passed over and one sent, the first is taken: the same bytes fail the same
/// way, and the other is named on the next refusal.
pub(super) fn refused_image(
    message: &str,
    rendered: &[Value],
    request: &[Message],
) -> Option<usize> {
    let named = BlockPath::parse(message)?.image_in(rendered)?;
    let mut images = image_places(request).map(|(_, image)| image).enumerate();
    for block in image_blocks(rendered) {
        // A block of no image of the request: the body is not this request's rendering.
        let (index, _) = images.find(|(_, image)| shows(block, image))?;
        if std::ptr::eq(block, named) {
            return Some(index);
        }
    }
    None
}

/// A block of the body's `messages`, as Anthropic's paths name one: the `block`-th of the
/// `message`-th message's content, or the `inner`-th of that `tool_result`'s content.
#[derive(Debug, PartialEq, Eq)]
struct BlockPath {
    message: usize,
    block: usize,
    inner: Option<usize>,
}

impl BlockPath {
    /// The path `message` starts with (up to a `:` or a space), if it is one to an image:
    /// `messages.N.content.M.image…` or `messages.N.content.M.tool_result.content.K.image…`.
    fn parse(message: &str) -> Option<Self> {
        let path = message.split([':', ' ']).next()?;
        let mut steps = path.split('.');
        let mut step = || steps.next();
        let index = |step: Option<&str>| step?.parse::<usize>().ok();
        let named = |step: Option<&str>, name: &str| (step? == name).then_some(());
        named(step(), "messages")?;
        let message = index(step())?;
        named(step(), "content")?;
        let block = index(step())?;
        let inner = match step()? {
            "image" => None,
            "tool_result" => {
                named(step(), "content")?;
                let inner = index(step())?;
                named(step(), "image")?;
                Some(inner)
            }
            _ => return None,
        };
        Some(Self {
            message,
            block,
            inner,
        })
    }

    /// The block this path names in `messages`, if it is there and an image (inside a
    /// `tool_result` where the path says so).
    fn image_in<'a>(&self, messages: &'a [Value]) -> Option<&'a Value> {
        let block = messages
            .get(self.message)?
            .get("content")?
            .get(self.block)?;
        let block = match self.inner {
            None => block,
            Some(inner) => {
                is_type(block, "tool_result").then_some(())?;
                block.get("content")?.get(inner)?
            }
        };
        is_type(block, "image").then_some(block)
    }
}

/// The image blocks of the body's `messages`, in order, a `tool_result`'s where it stands.
fn image_blocks(messages: &[Value]) -> impl Iterator<Item = &Value> {
    messages
        .iter()
        .filter_map(|message| message.get("content")?.as_array())
        .flatten()
        .flat_map(|block| {
            let blocks: &[Value] = if is_type(block, "tool_result") {
                block
                    .get("content")
                    .and_then(Value::as_array)
                    .map_or(&[], Vec::as_slice)
            } else {
                std::slice::from_ref(block)
            };
            blocks.iter().filter(|block| is_type(block, "image"))
        })
}

fn is_type(block: &Value, kind: &str) -> bool {
    block.get("type").and_then(Value::as_str) == Some(kind)
}

/// Whether the image block `block` carries `image` (its type and data).
fn shows(block: &Value, image: &Image) -> bool {
    let source = |field: &str| block.get("source")?.get(field)?.as_str();
    source("media_type") == Some(image.media_type()) && source("data") == Some(image.data())
}

#[cfg(test)]
mod tests {
    use toolsmith_core::provider::Provider;
    use toolsmith_core::{ContentPart, ToolArguments, ToolCallResult};

    use super::*;
    use crate::model::http::body;
    use crate::model::{ModelCall, ToolResultMessage};

    fn png(name: &str) -> Image {
        Image::from_bytes(
            "image/png",
            &[b"\x89PNG\r\n\x1a\n", name.as_bytes()].concat(),
        )
        .unwrap()
    }

    #[test]
    fn a_path_is_read_up_to_its_colon_and_only_to_an_image() {
        let parse = BlockPath::parse;
        assert_eq!(
            parse("messages.6.content.5.image.source.base64.data: Image does not match"),
            Some(BlockPath {
                message: 6,
                block: 5,
                inner: None
            })
        );
        assert_eq!(
            parse("messages.92.content.0.tool_result.content.1.image.source.base64: The image"),
            Some(BlockPath {
                message: 92,
                block: 0,
                inner: Some(1)
            })
        );
        for other in [
            "Could not process image",
            "messages.6.content.5.text: text content blocks must be non-empty",
            "messages.6.content.x.image.source: …",
            "messages.6.content.5.tool_result.content.1.text: …",
            "system.0.image: …",
            "messages: text content blocks must be non-empty",
        ] {
            assert_eq!(parse(other), None, "{other}");
        }
    }

    #[test]
    fn an_error_result_s_image_is_counted_though_not_sent() {
        let failed = ToolCallResult {
            error_detail: Some("failed".into()),
            ..ToolCallResult::parts([ContentPart::text("Failed at:"), png("failed").into()])
        };
        let result = |id: &str, result| ToolResultMessage {
            call_id: id.into(),
            name: "shot".into(),
            result,
        };
        let request = vec![
            Message::user_with_images("Look.", vec![png("photo")]),
            Message::assistant_calls(
                None,
                vec![
                    ModelCall::new("toolu_1", "shot", ToolArguments::new()),
                    ModelCall::new("toolu_2", "shot", ToolArguments::new()),
                ],
            ),
            Message::ToolResults {
                results: vec![
                    result("toolu_1", failed),
                    result("toolu_2", ToolCallResult::image(png("page"))),
                ],
            },
        ];
        let rendered = body::conversation(Provider::Anthropic, &request).unwrap();
        let message = |path: &str| format!("{path}: Could not process image");
        assert_eq!(
            refused_image(
                &message("messages.0.content.0.image.source.base64.data"),
                &rendered,
                &request
            ),
            Some(0)
        );
        // The error result is sent as text: the page is the request's third image.
        assert_eq!(
            refused_image(
                &message("messages.2.content.1.tool_result.content.0.image.source.base64"),
                &rendered,
                &request
            ),
            Some(2)
        );
        // A body that is not this request's rendering names no image of it.
        let other = vec![Message::user_with_images("Look.", vec![png("other")])];
        assert_eq!(
            refused_image(
                &message("messages.0.content.0.image.source.base64.data"),
                &rendered,
                &other
            ),
            None
        );
    }
}
