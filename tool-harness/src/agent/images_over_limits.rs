//! The images of a request that the model's [`ImageLimits`] refuse, replaced by a note saying
//! why before the request is sent: a provider refuses a whole request for one image it will
//! not take, and the session would then have to remove every image
//! ([`unreadable_images`](super::unreadable_images)).

use toolsmith_core::Image;

use crate::model::{ImageLimits, ImagePlace, Message, image_places, replace_image};

/// What is known of one image of the request, in conversation order.
struct Seen {
    /// The longer side, when the header was read.
    side: Option<u32>,
    dimensions: Option<(u32, u32)>,
    animated: bool,
    media_type: &'static str,
}

impl Seen {
    fn of(image: &Image) -> Self {
        let dimensions = image.dimensions();
        Self {
            side: dimensions.map(|(width, height)| width.max(height)),
            dimensions,
            animated: image.is_animated(),
            media_type: image.media_type(),
        }
    }

    /// `WIDTHxHEIGHT px` (only asked of an image whose size is known).
    fn size(&self) -> String {
        let (width, height) = self.dimensions.unwrap_or_default();
        format!("{width}x{height} px")
    }

    fn over(&self, pixels: u32) -> bool {
        self.side.is_some_and(|side| side > pixels)
    }
}

/// Replaces, in place, the images of `messages` that `limits` refuse by a note saying why
/// (a user message keeps its other images, and its text after the notes; a tool result's
/// image part becomes a text part), and gives the notes, oldest image first.
///
/// In turn: an image of a type the model does not take, an animated image where none is
/// taken, an image over the largest side; then,
/// past the most images a request, the oldest of the others; then, while the request has
/// more images than the many-images rule allows and some are over its smaller side, the
/// oldest of those, so that as few go as the rule needs and the latest stay.
pub(super) fn remove_images_over_limits(
    messages: &mut [Message],
    limits: &ImageLimits,
) -> Vec<String> {
    let (places, seen): (Vec<ImagePlace>, Vec<Seen>) = image_places(messages)
        .map(|(place, image)| (place, Seen::of(image)))
        .unzip();
    let mut notes: Vec<Option<String>> = seen.iter().map(|_| None).collect();
    for (image, note) in seen.iter().zip(&mut notes) {
        if !limits.media_types.contains(&image.media_type) {
            *note = Some(format!(
                "[image removed: an {}, a type the model does not take (it takes {})]",
                image.media_type,
                limits.media_types.join(", ")
            ));
        } else if image.animated && !limits.animated {
            *note = Some(format!(
                "[image removed: an animated {}, which the model does not take]",
                image.media_type
            ));
        } else if let Some(max) = limits.max_side
            && image.over(max)
        {
            *note = Some(format!(
                "[image removed: {}, more than the {max} px a side the model takes]",
                image.size()
            ));
        }
    }
    let mut kept = notes.iter().filter(|note| note.is_none()).count();
    if let Some(max) = limits.max_images
        && kept > max
    {
        let had = kept;
        for note in notes.iter_mut().filter(|note| note.is_none()) {
            if kept == max {
                break;
            }
            *note = Some(format!(
                "[image removed: the request had {had} images, more than the {max} the \
                 model takes; the oldest were removed]"
            ));
            kept -= 1;
        }
    }
    if let Some((above, max)) = limits.max_side_beyond {
        for (image, note) in seen.iter().zip(&mut notes) {
            if kept <= above {
                break;
            }
            if note.is_none() && image.over(max) {
                *note = Some(format!(
                    "[image removed: {}, more than the {max} px a side the model takes in a \
                     request of more than {above} images]",
                    image.size()
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
