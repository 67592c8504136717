//! [`Refusal`]: an API's error that asking again cannot mend, read from its words once for
//! an error status's body and for an error reported inside a stream alike.

use crate::model::ModelError;

use super::context_overflow::{ErrorSigns, OverflowShape};

/// What an API's error says of the request itself, so that it is not asked again (it would
/// fail the same way) and is answered with its own [`ModelError`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Refusal {
    /// Longer than the model's context window
    /// ([`says_too_long`](OverflowShape::says_too_long)).
    ContextTooLong,
    /// With an image the model cannot read or will not take
    /// ([`says_image_refused`](OverflowShape::says_image_refused)).
    ImageRefused,
}

impl Refusal {
    /// The refusal `signs` state in `shape`'s words (too long first: a request both too
    /// long and with a bad image is shortened first), if any.
    pub(crate) fn of(shape: OverflowShape, signs: &ErrorSigns<'_>) -> Option<Self> {
        if shape.says_too_long(signs) {
            Some(Self::ContextTooLong)
        } else if shape.says_image_refused(signs) {
            Some(Self::ImageRefused)
        } else {
            None
        }
    }

    /// The error of `provider` this refusal is, with the status it came with (or stands
    /// for) and the API's message.
    pub(crate) fn into_error(self, provider: String, status: u16, message: String) -> ModelError {
        match self {
            Self::ContextTooLong => ModelError::ContextTooLong {
                provider,
                status,
                message,
            },
            // Which image, where the API says, is read by its client, which knows the
            // body it sent (`HttpApi::refused_image`).
            Self::ImageRefused => ModelError::ImageRefused {
                provider,
                status,
                message,
                image: None,
            },
        }
    }
}
