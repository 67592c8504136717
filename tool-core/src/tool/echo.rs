//! What the model wrote, repeated back to it: an error or a hint quotes a name, an id or a
//! description the model sent, cut after a limit so that a text of a million characters is
//! not sent back whole. Every cut falls on a character boundary and ends with `…`.

use std::borrow::Cow;

/// The most characters of what the model wrote (a tool's name, a call's id, a search's
/// description) that a message to it repeats: enough to tell what it sent (no tool's name is
/// longer than [`MAX_NAME_LEN`](crate::MAX_NAME_LEN), 64), and a name of any length does not
/// fill the next request.
pub(crate) const MAX_ECHOED_CHARS: usize = 240;

/// The most characters of a call's id a batch's planning error quotes: fewer than
/// [`MAX_ECHOED_CHARS`], since that error goes into the outcome of every call of the batch,
/// and may quote several ids.
pub(crate) const MAX_ECHOED_BATCH_ID_CHARS: usize = 64;

/// `text` cut after `max_chars` characters, marked with `…` when cut: what a message repeats
/// of something long (a validation message, a description the model wrote, an id of any
/// length).
///
/// ```
/// use toolsmith::provider::cut_to;
///
/// assert_eq!(cut_to("agent-1", 240), "agent-1");
/// assert_eq!(cut_to("ééééé", 2), "éé…");
/// ```
pub fn cut_to(text: &str, max_chars: usize) -> Cow<'_, str> {
    match text.char_indices().nth(max_chars) {
        None => Cow::Borrowed(text),
        Some((end, _)) => Cow::Owned(format!("{}…", &text[..end])),
    }
}

/// `text`, which the model wrote, as a message to it repeats it: cut after
/// [`MAX_ECHOED_CHARS`] characters.
pub(crate) fn echoed(text: &str) -> Cow<'_, str> {
    cut_to(text, MAX_ECHOED_CHARS)
}

/// A call's `id`, which the model wrote, as a batch's planning error repeats it: cut after
/// [`MAX_ECHOED_BATCH_ID_CHARS`] characters.
pub(crate) fn echoed_batch_id(id: &str) -> Cow<'_, str> {
    cut_to(id, MAX_ECHOED_BATCH_ID_CHARS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cut_falls_between_characters_and_is_marked() {
        assert_eq!(cut_to("", 0), "");
        assert_eq!(cut_to("abc", 3), "abc");
        assert_eq!(cut_to("abc", 0), "…");
        assert_eq!(cut_to("日本語のテキスト", 3), "日本語…");
        assert!(matches!(echoed("wether"), Cow::Borrowed("wether")));
        let long = "é".repeat(MAX_ECHOED_CHARS + 1);
        assert_eq!(echoed(&long), format!("{}…", "é".repeat(MAX_ECHOED_CHARS)));
        assert_eq!(
            echoed(&long[..2 * MAX_ECHOED_CHARS]),
            long[..2 * MAX_ECHOED_CHARS]
        );
    }
}
