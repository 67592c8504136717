//! The images of a request that the model's [`ImageLimits`] refuse, replaced by a note saying
//! why before the request is sent: a provider refuses a whole request for one image it will
//! not take, and the session would then have to remove every image
//! ([`unreadable_images`](super::unreadable_images)).

use toolsmith_core::Image;

use crate::model::{ImageLimits, ImagePlace, Message, image_places, replace_image};

/// Whether `image`'s longer side, when its header gave its size, is over `pixels`.
fn over(image: &Image, pixels: u32) -> bool {
    image
        .dimensions()
        .is_some_and(|(width, height)| width.max(height) > pixels)
}

/// `WIDTHxHEIGHT px` (only asked of an image whose size is known).
fn size(image: &Image) -> String {
    let (width, height) = image.dimensions().unwrap_or_default();
    format!("{width}x{height} px")
}

/// Replaces, in place, the images of `messages` that `limits` refuse by a note saying why
/// (a user message keeps its other images, and its text after the notes; a tool result's
/// image part becomes a text part), and gives the notes, oldest image first. The images
/// of an error result, which no format sends, are neither counted nor removed.
///
/// In turn: an image of a type the model does not take, an animated image where none is
/// taken, an image over the largest side; then, past the most images a request, the oldest
/// of the others; then, past the most bytes of images, the oldest; then, while the request has more images than the many-images rule
/// allows and some are over its smaller side, the oldest of those, the latest kept.
///
/// A count rule, once it removes any, removes a [`headroom`] more (the oldest, never one of
/// the newest it leaves): a conversation that gains a screenshot a turn then crosses the
/// rule again only every few turns. Each removal changes an old message, which a provider's
/// prompt cache reads as a new prompt from there on (the whole conversation written to the
/// cache again, at 1.25 times the price of input on Anthropic): once a turn, the cache
/// would never be read past the oldest image.
pub(super) fn remove_images_over_limits(
    messages: &mut [Message],
    limits: &ImageLimits,
) -> Vec<String> {
    // The images are read while the notes are decided, and replaced only after.
    // An error result's images are not sent (its text alone is): not counted, not removed.
    let (places, seen): (Vec<ImagePlace>, Vec<&Image>) = image_places(messages)
        .filter(|(place, _)| place.is_sent(messages))
        .unzip();
    let mut notes: Vec<Option<String>> = seen.iter().map(|_| None).collect();
    let taken = limits.taken_media_types();
    // Two models of no type in common take none: the note says so, not "(it takes )".
    let takes = if taken.is_empty() {
        "no image".to_owned()
    } else {
        taken.join(", ")
    };
    for (image, note) in seen.iter().zip(&mut notes) {
        if !taken.contains(&image.media_type()) {
            *note = Some(format!(
                "[image removed: an {}, a type the model does not take (it takes {takes})]",
                image.media_type(),
            ));
        } else if image.is_animated() && !limits.animated {
            *note = Some(format!(
                "[image removed: an animated {}, which the model does not take]",
                image.media_type()
            ));
        } else if let Some(max) = limits.max_side
            && over(image, max)
        {
            *note = Some(format!(
                "[image removed: {}, more than the {max} px a side the model takes]",
                size(image)
            ));
        }
    }
    let mut kept = notes.iter().filter(|note| note.is_none()).count();
    if let Some(max) = limits.max_images
        && kept > max
    {
        let (had, down_to) = (kept, max - headroom(max));
        for note in notes.iter_mut().filter(|note| note.is_none()) {
            if kept == down_to {
                break;
            }
            *note = Some(format!(
                "[image removed: the request had {had} images, more than the {max} the \
                 model takes; the oldest went, down to {down_to}]"
            ));
            kept -= 1;
        }
    }
    if let Some(max) = limits.max_image_bytes {
        let had: usize = kept_positions(&notes)
            .map(|position| seen[position].data().len())
            .sum();
        if had > max {
            let down_to = max - headroom(max);
            let mut left = had;
            for (image, note) in seen.iter().zip(&mut notes) {
                if left <= down_to {
                    break;
                }
                if note.is_none() {
                    *note = Some(format!(
                        "[image removed: the request's images came to {had} bytes as base64, \
                         more than the {max} the model takes; the oldest went, down to \
                         {down_to}]"
                    ));
                    left -= image.data().len();
                    kept -= 1;
                }
            }
        }
    }
    if let Some((above, max)) = limits.max_side_beyond
        && kept > above
    {
        // The newest images the headroom leaves are never taken for it: only the rule
        // itself may remove one of them.
        let down_to = above - headroom(above);
        let newest_from = kept_positions(&notes).nth_back(down_to.saturating_sub(1));
        for (position, (image, note)) in seen.iter().zip(&mut notes).enumerate() {
            let within_rule = kept <= above;
            if kept <= down_to || within_rule && newest_from.is_none_or(|from| position >= from) {
                break;
            }
            if note.is_none() && over(image, max) {
                *note = Some(format!(
                    "[image removed: {}, more than the {max} px a side the model takes in a \
                     request of more than {above} images]",
                    size(image)
                ));
                kept -= 1;
            }
        }
    }
    // Last first, as `replace_image` asks, so that a message's notes keep its images' order.
    for (&place, note) in places.iter().zip(&notes).rev() {
        if let Some(note) = note {
            replace_image(messages, place, |_| note.clone());
        }
    }
    notes.into_iter().flatten().collect()
}

/// How many images a count rule of `limit` removes beyond what it needs: a quarter of it.
fn headroom(limit: usize) -> usize {
    limit / 4
}

/// The positions (among all images) of the images `notes` leaves, oldest first.
fn kept_positions(notes: &[Option<String>]) -> impl DoubleEndedIterator<Item = usize> + '_ {
    notes
        .iter()
        .enumerate()
        .filter(|(_, note)| note.is_none())
        .map(|(position, _)| position)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A PNG whose header says `width` x `height` (no pixels: only the header is read).
    fn png(width: u32, height: u32) -> Image {
        let mut file = b"\x89PNG\r\n\x1a\n\0\0\0\x0dIHDR".to_vec();
        file.extend_from_slice(&width.to_be_bytes());
        file.extend_from_slice(&height.to_be_bytes());
        file.extend_from_slice(&[8, 6, 0, 0, 0, 0, 0, 0, 0]);
        Image::from_bytes("image/png", &file).unwrap()
    }

    #[test]
    fn a_screenshot_a_turn_crosses_the_many_images_rule_every_few_turns_not_every_turn() {
        let mut messages = Vec::new();
        let mut removing_turns = Vec::new();
        for turn in 1..=40 {
            messages.push(Message::user_with_images(
                format!("shot {turn}"),
                vec![png(2560, 1440)],
            ));
            messages.push(Message::assistant("Seen."));
            let removed = remove_images_over_limits(&mut messages, &ImageLimits::anthropic());
            if !removed.is_empty() {
                removing_turns.push((turn, removed.len()));
            }
            let left: Vec<usize> = messages
                .iter()
                .step_by(2)
                .enumerate()
                .filter(|(_, message)| !message.images().is_empty())
                .map(|(shot, _)| shot + 1)
                .collect();
            assert!(left.len() <= 20, "turn {turn}: {} images", left.len());
            assert_eq!(left.last(), Some(&turn), "the latest screenshot stays");
        }
        // At 21 images, the oldest 6 go (down to 15), and the cache's prefix holds until
        // the next 6 screenshots: 5 removals in 40 turns, not one a turn from the 21st.
        assert_eq!(removing_turns, [(21, 6), (27, 6), (33, 6), (39, 6)]);
    }

    #[test]
    fn past_the_most_images_the_oldest_go_down_to_the_headroom() {
        let mut messages: Vec<Message> = (0..12)
            .map(|shot| Message::user_with_images(format!("shot {shot}"), vec![png(100, 100)]))
            .collect();
        let removed =
            remove_images_over_limits(&mut messages, &ImageLimits::none().with_max_images(10));
        assert_eq!(
            removed,
            vec![
                "[image removed: the request had 12 images, more than the 10 the model takes; \
                 the oldest went, down to 8]"
                    .to_owned();
                4
            ]
        );
        let kept: Vec<bool> = messages.iter().map(|m| !m.images().is_empty()).collect();
        assert_eq!(kept, [[false; 4].as_slice(), &[true; 8]].concat());
        // Within the limit: nothing more goes.
        assert!(
            remove_images_over_limits(&mut messages, &ImageLimits::none().with_max_images(10))
                .is_empty()
        );
    }

    #[test]
    fn a_model_that_takes_no_type_is_said_to_take_none() {
        // Two models of no type in common (a fallback of a GIF-only model and Gemini).
        let limits = ImageLimits::none()
            .with_media_types(&["image/gif"])
            .intersect(ImageLimits::gemini());
        let mut messages = vec![Message::user_with_images("Look.", vec![png(10, 10)])];
        let removed = remove_images_over_limits(&mut messages, &limits);
        assert_eq!(
            removed,
            ["[image removed: an image/png, a type the model does not take (it takes no image)]"]
        );
    }

    #[test]
    fn an_image_beside_a_value_over_the_largest_side_is_a_note_and_the_value_stays() {
        use toolsmith_core::{ContentPart, JsonWithImages, ToolCallResult, UserModelContent};

        use crate::model::ToolResultMessage;

        let value = serde_json::json!({"url": "https://example.com"});
        let mut messages = vec![Message::ToolResults {
            results: vec![ToolResultMessage {
                call_id: "c1".into(),
                name: "browse".into(),
                result: ToolCallResult::json_with_images(
                    value.clone(),
                    [png(9000, 100), png(100, 100)],
                ),
            }],
        }];
        let removed = remove_images_over_limits(&mut messages, &ImageLimits::anthropic());
        assert_eq!(removed.len(), 1, "{removed:?}");
        assert_eq!(
            messages[0].results()[0].result.content,
            UserModelContent::JsonWithImages(JsonWithImages::new(
                value,
                [ContentPart::text(removed[0].clone()), png(100, 100).into()]
            ))
        );
    }

    /// A PNG of `len` bytes whose header says 1280x720 (its IDAT chunk makes up the rest).
    fn png_of_len(len: usize) -> Image {
        let mut file = b"\x89PNG\r\n\x1a\n\0\0\0\x0dIHDR".to_vec();
        file.extend_from_slice(&1280u32.to_be_bytes());
        file.extend_from_slice(&720u32.to_be_bytes());
        file.extend_from_slice(&[8, 6, 0, 0, 0, 0, 0, 0, 0]);
        file.resize(len, 0);
        Image::from_bytes("image/png", &file).unwrap()
    }

    #[test]
    fn past_the_most_bytes_of_images_the_oldest_go_down_to_the_headroom() {
        // Ten images of 3,000,000 bytes, 4,000,000 as base64: 40,000,000 in all.
        let mut messages: Vec<Message> = (0..10)
            .map(|shot| {
                Message::user_with_images(format!("shot {shot}"), vec![png_of_len(3_000_000)])
            })
            .collect();
        let limits = ImageLimits::none().with_max_image_bytes(30_000_000);
        let removed = remove_images_over_limits(&mut messages, &limits);
        // Down to 22,500,000 (three quarters of the limit): 5 images of 4,000,000 stay.
        let note = "[image removed: the request's images came to 40000000 bytes as base64, \
                    more than the 30000000 the model takes; the oldest went, down to 22500000]";
        assert_eq!(removed, vec![note.to_owned(); 5]);
        let kept: Vec<bool> = messages.iter().map(|m| !m.images().is_empty()).collect();
        assert_eq!(kept, [[false; 5].as_slice(), &[true; 5]].concat());
        assert!(remove_images_over_limits(&mut messages, &limits).is_empty());
    }
}
