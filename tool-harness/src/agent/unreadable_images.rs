//! A request's images replaced by a short note, when the model refused the request because
//! it could not read one of them ([`ModelError::ImageRefused`](crate::model::ModelError::ImageRefused)):
//! the one it named where it said which, else all of them, so that the conversation goes
//! on without them rather than failing the same way at every call.

use toolsmith_core::Image;

use crate::model::{ImagePlace, Message, image_places, replace_image};

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
/// For a refusal that does not say which image ([`remove_image`] is for one that does).
pub(super) fn remove_images(messages: &mut [Message]) -> usize {
    let places: Vec<ImagePlace> = image_places(messages).map(|(place, _)| place).collect();
    // Last first: each note goes before a user message's text, so the notes end in the
    // images' order, and the places before it stay where they were.
    for &place in places.iter().rev() {
        replace_image(messages, place, removed_image_note);
    }
    places.len()
}

/// Replaces the `index`-th image of `messages` (counted as
/// [`ModelError::ImageRefused`](crate::model::ModelError::ImageRefused)'s `image` is) with
/// its [note](removed_image_note), as [`remove_images`] does each; `false` when there is
/// no such image. A user message's note goes before its text and any earlier notes.
pub(super) fn remove_image(messages: &mut [Message], index: usize) -> bool {
    let Some((place, _)) = image_places(messages).nth(index) else {
        return false;
    };
    replace_image(messages, place, removed_image_note);
    true
}

#[cfg(test)]
mod tests {
    use toolsmith_core::{ContentPart, JsonWithImages, ToolCallResult, UserModelContent};

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

    #[test]
    fn the_images_beside_a_value_become_notes_and_the_value_stays() {
        let png = Image::from_bytes("image/png", b"\x89PNG\r\n\x1a\n\0\0").unwrap();
        let value = serde_json::json!({"url": "https://example.com"});
        let mut messages = vec![Message::ToolResults {
            results: vec![ToolResultMessage {
                call_id: "c1".into(),
                name: "browse".into(),
                result: ToolCallResult::json_with_images(value.clone(), [png.clone(), png]),
            }],
        }];
        assert!(remove_image(&mut messages, 1));
        assert_eq!(remove_images(&mut messages), 1);
        let note = "[image removed: the model could not read it (image/png, 10 bytes)]";
        assert_eq!(
            messages[0].results()[0].result.content,
            UserModelContent::JsonWithImages(JsonWithImages::new(
                value,
                [ContentPart::text(note), ContentPart::text(note)]
            ))
        );
    }

    #[test]
    fn only_the_named_image_becomes_a_note() {
        let png = Image::from_bytes("image/png", b"\x89PNG\r\n\x1a\n\0\0").unwrap();
        let gif = Image::from_bytes("image/gif", b"GIF89a\x01\0\x01\0").unwrap();
        let mut messages = vec![
            Message::user_with_images("What is this?", vec![png.clone(), gif.clone()]),
            Message::ToolResults {
                results: vec![ToolResultMessage {
                    call_id: "c1".into(),
                    name: "shot".into(),
                    result: ToolCallResult::parts([gif.clone().into(), png.clone().into()]),
                }],
            },
        ];
        // The third image: the result's first part.
        assert!(remove_image(&mut messages, 2));
        assert_eq!(
            messages[0],
            Message::user_with_images("What is this?", vec![png.clone(), gif.clone()])
        );
        assert_eq!(
            messages[1].results()[0].result.content,
            UserModelContent::Parts(vec![
                ContentPart::text(
                    "[image removed: the model could not read it (image/gif, 10 bytes)]"
                ),
                png.clone().into(),
            ])
        );
        // The user's second image: its note goes before the text, the first image stays.
        assert!(remove_image(&mut messages, 1));
        assert_eq!(
            messages[0],
            Message::user_with_images(
                "[image removed: the model could not read it (image/gif, 10 bytes)]\n\
                 What is this?",
                vec![png.clone()]
            )
        );
        // Two left: no third.
        assert!(!remove_image(&mut messages, 2));
        assert_eq!(remove_images(&mut messages), 2);
    }
}
