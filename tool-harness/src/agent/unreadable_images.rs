//! A request's images replaced by a short note, when the model refused the request because
//! it could not read one of them ([`ModelError::ImageRefused`](crate::model::ModelError::ImageRefused)):
//! the conversation goes on without them rather than failing the same way at every call.

use toolsmith_core::{ContentPart, Image, UserModelContent};

use crate::model::Message;

/// What the model is shown in place of a removed image: its media type and size, so that
/// the model (and a reader of the transcript) knows what was there and why it is gone.
pub(super) fn removed_image_note(image: &Image) -> String {
    format!(
        "[image removed: the model could not read it ({}, {} bytes)]",
        image.media_type(),
        image.byte_len()
    )
}

/// Replaces every image of `messages` with its [note](removed_image_note), in place: a user
/// message keeps its text, after the notes (where its images were shown); a tool result
/// keeps its call id and its text parts, each image part becoming a text part. Gives how
/// many images were removed.
///
/// Every image, not the one the provider refused: the providers that locate it (Anthropic's
/// `messages.3.content.0.image…`) count in their own rendering of the request (its system
/// prompt apart, a turn sometimes split or merged), not in these messages, and the others
/// do not say which.
pub(super) fn remove_images(messages: &mut [Message]) -> usize {
    let mut removed = 0;
    for message in messages {
        match message {
            Message::User { text, images } if !images.is_empty() => {
                let mut notes: Vec<String> = images.iter().map(removed_image_note).collect();
                removed += images.len();
                images.clear();
                if !text.is_empty() {
                    notes.push(std::mem::take(text));
                }
                *text = notes.join("\n");
            }
            Message::ToolResults { results } => {
                for result in results {
                    let UserModelContent::Parts(parts) = &mut result.result.content else {
                        continue;
                    };
                    for part in parts.iter_mut() {
                        if let ContentPart::Image(image) = part {
                            *part = ContentPart::text(removed_image_note(image));
                            removed += 1;
                        }
                    }
                }
            }
            _ => {}
        }
    }
    removed
}

#[cfg(test)]
mod tests {
    use toolsmith_core::ToolCallResult;

    use super::*;
    use crate::model::ToolResultMessage;

    #[test]
    fn every_image_becomes_a_note_and_the_rest_stays() {
        let png = Image::from_bytes("image/png", b"\x89PNG\r\n\x1a\n\0\0").unwrap();
        let gif = Image::from_bytes("image/gif", b"GIF89a\x01\0\x01\0").unwrap();
        let mut messages = vec![
            Message::user_with_images("What is this?", vec![png.clone(), gif]),
            Message::ToolResults {
                results: vec![ToolResultMessage {
                    call_id: "c1".into(),
                    name: "shot".into(),
                    result: ToolCallResult::parts([ContentPart::text("Here:"), png.into()]),
                }],
            },
            Message::user("Thanks."),
        ];
        assert_eq!(remove_images(&mut messages), 3);
        assert_eq!(
            messages[0],
            Message::user(
                "[image removed: the model could not read it (image/png, 10 bytes)]\n\
                 [image removed: the model could not read it (image/gif, 10 bytes)]\n\
                 What is this?"
            )
        );
        let results = messages[1].results();
        assert_eq!(results[0].call_id, "c1");
        assert_eq!(
            results[0].result.content,
            UserModelContent::Parts(vec![
                ContentPart::text("Here:"),
                ContentPart::text(
                    "[image removed: the model could not read it (image/png, 10 bytes)]"
                ),
            ])
        );
        assert_eq!(messages[2], Message::user("Thanks."));
        // Nothing left to remove.
        assert_eq!(remove_images(&mut messages), 0);
    }
}
