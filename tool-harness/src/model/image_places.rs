//! Where each image of a conversation's messages is, in the one order a request's images
//! are counted: [`ModelError::ImageRefused`](super::ModelError::ImageRefused)'s `image`
//! counts in it, the client that reads it from the API's words maps back to it, and the
//! session that removes the image finds it by it, and replaces it by a note
//! ([`replace_image`]).

use toolsmith_core::{ContentPart, Image, UserModelContent};

use super::Message;

/// Where one image sits among a conversation's messages (indices into them).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ImagePlace {
    /// The `image`-th image of the user message `message`.
    User {
        /// The message's index.
        message: usize,
        /// The image's index among the message's images.
        image: usize,
    },
    /// The `part`-th part of the `result`-th result of the tool-results message `message`
    /// (of its parts, or of the parts after a structured result's value).
    Result {
        /// The message's index.
        message: usize,
        /// The result's index among the message's results.
        result: usize,
        /// The part's index among the result's parts.
        part: usize,
    },
}

impl ImagePlace {
    /// Whether the image here is sent to the model: not one of an error result, whose text
    /// alone the formats send (`toolsmith_core::provider`), though it is counted among the
    /// request's images.
    pub(crate) fn is_sent(self, messages: &[Message]) -> bool {
        match self {
            Self::User { .. } => true,
            Self::Result {
                message, result, ..
            } => match messages.get(message) {
                Some(Message::ToolResults { results }) => results
                    .get(result)
                    .is_some_and(|reply| !reply.result.is_error()),
                _ => false,
            },
        }
    }
}

/// Each image of `messages` with its place, in order: message by message; a user message's images
/// in order; a tool-results message's results in order, each result's image parts in order (a
/// structured result's value, given first, holds none) (an error result's too: they are the
/// conversation's, though the formats send an error's text alone).
pub(crate) fn image_places(messages: &[Message]) -> impl Iterator<Item = (ImagePlace, &Image)> {
    messages.iter().enumerate().flat_map(|(message, entry)| {
        // One of the two is empty: no iterator boxed a message (a session walks every
        // message before each request).
        let (images, results): (&[Image], &[_]) = match entry {
            Message::User { images, .. } => (images, &[]),
            Message::ToolResults { results } => (&[], results),
            Message::Assistant { .. } => (&[], &[]),
        };
        let users = images
            .iter()
            .enumerate()
            .map(move |(image, found)| (ImagePlace::User { message, image }, found));
        let parts = results.iter().enumerate().flat_map(move |(result, reply)| {
            let parts: &[ContentPart] = match &reply.result.content {
                UserModelContent::Parts(parts) => parts,
                UserModelContent::JsonWithImages(json) => json.parts(),
                _ => &[],
            };
            parts.iter().enumerate().filter_map(move |(part, content)| {
                let place = ImagePlace::Result {
                    message,
                    result,
                    part,
                };
                Some((place, content.as_image()?))
            })
        });
        users.chain(parts)
    })
}

/// The image at `place` (one of `image_places(messages)`) replaced by the text `note` makes
/// of it: a user message's note goes before its text and any earlier notes (so replacing a
/// message's images last first leaves their notes in the images' order, and the places
/// before stay where they were); a tool result's image part becomes a text part.
pub(crate) fn replace_image(
    messages: &mut [Message],
    place: ImagePlace,
    note: impl FnOnce(&Image) -> String,
) {
    match place {
        ImagePlace::User { message, image } => {
            if let Message::User { text, images } = &mut messages[message] {
                let note = note(&images.remove(image));
                *text = if text.is_empty() {
                    note
                } else {
                    format!("{note}\n{text}")
                };
            }
        }
        ImagePlace::Result {
            message,
            result,
            part,
        } => {
            let Message::ToolResults { results } = &mut messages[message] else {
                return;
            };
            let parts: &mut [ContentPart] = match &mut results[result].result.content {
                UserModelContent::Parts(parts) => parts,
                UserModelContent::JsonWithImages(json) => json.parts_mut(),
                _ => return,
            };
            if let ContentPart::Image(image) = &parts[part] {
                parts[part] = ContentPart::text(note(image));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use toolsmith_core::{JsonWithImages, ToolCallResult};

    use super::*;
    use crate::model::ToolResultMessage;

    #[test]
    fn images_are_counted_message_by_message_result_by_result_part_by_part() {
        let image = |name: &str| {
            Image::from_bytes(
                "image/png",
                &[b"\x89PNG\r\n\x1a\n", name.as_bytes()].concat(),
            )
            .unwrap()
        };
        let result = |id: &str, content: ToolCallResult| ToolResultMessage {
            call_id: id.into(),
            name: "shot".into(),
            result: content,
        };
        let messages = vec![
            Message::user("No image."),
            Message::user_with_images("Two:", vec![image("u0"), image("u1")]),
            Message::assistant("Looking."),
            Message::ToolResults {
                results: vec![
                    result("c1", ToolCallResult::text("none")),
                    result(
                        "c2",
                        ToolCallResult::parts([
                            image("r0").into(),
                            ContentPart::text("between"),
                            image("r1").into(),
                        ]),
                    ),
                    result(
                        "c3",
                        ToolCallResult {
                            error_detail: Some("failed".into()),
                            ..ToolCallResult::image(image("r2"))
                        },
                    ),
                ],
            },
        ];
        let places: Vec<(ImagePlace, Image)> = image_places(&messages)
            .map(|(place, found)| (place, found.clone()))
            .collect();
        let user = |message, i| ImagePlace::User { message, image: i };
        let part = |result, part| ImagePlace::Result {
            message: 3,
            result,
            part,
        };
        assert_eq!(
            places,
            [
                (user(1, 0), image("u0")),
                (user(1, 1), image("u1")),
                (part(1, 0), image("r0")),
                (part(1, 2), image("r1")),
                (part(2, 0), image("r2")),
            ]
        );
    }

    #[test]
    fn the_images_beside_a_value_are_placed_and_replaced_as_parts_are() {
        let image = |name: &str| {
            Image::from_bytes(
                "image/png",
                &[b"\x89PNG\r\n\x1a\n", name.as_bytes()].concat(),
            )
            .unwrap()
        };
        let mut messages = vec![Message::ToolResults {
            results: vec![ToolResultMessage {
                call_id: "c1".into(),
                name: "browse".into(),
                result: ToolCallResult::json_with_images(
                    serde_json::json!({"url": "u"}),
                    [image("a"), image("b")],
                ),
            }],
        }];
        let part = |part| ImagePlace::Result {
            message: 0,
            result: 0,
            part,
        };
        let places: Vec<(ImagePlace, Image)> = image_places(&messages)
            .map(|(place, found)| (place, found.clone()))
            .collect();
        assert_eq!(places, [(part(0), image("a")), (part(1), image("b"))]);
        replace_image(&mut messages, part(1), |_| "[gone]".to_owned());
        assert_eq!(
            messages[0].results()[0].result.content,
            UserModelContent::JsonWithImages(JsonWithImages::new(
                serde_json::json!({"url": "u"}),
                [image("a").into(), ContentPart::text("[gone]")]
            ))
        );
    }
}
