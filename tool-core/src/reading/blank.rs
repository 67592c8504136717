//! [`is_blank`]: whether a text a model sent holds anything to act on.

use unicode_general_category::{GeneralCategory, get_general_category};

/// Whether `text` has no visible character: it is empty, or holds only whitespace, control
/// characters and Unicode format characters (general category `Cf`: the zero-width space
/// U+200B, the joiners U+200C and U+200D, the word joiner U+2060, the byte order mark U+FEFF,
/// the soft hyphen, bidirectional controls, tags).
///
/// A schema's `minLength` counts such characters, and `str::trim` keeps the format ones (they
/// are not whitespace): a task, query or fact made of them passes both, and gives the tool
/// nothing to do. A hand-written tool refuses such an argument as it would an empty one.
///
/// ```
/// use toolsmith::is_blank;
///
/// assert!(is_blank(""));
/// assert!(is_blank(" \t\n"));
/// assert!(is_blank("\u{200B}\u{FEFF} \u{2060}"));
/// assert!(!is_blank("\u{200B}tea"));
/// ```
pub fn is_blank(text: &str) -> bool {
    text.chars().all(|c| {
        c.is_whitespace() || c.is_control() || get_general_category(c) == GeneralCategory::Format
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn invisible_characters_alone_are_blank() {
        for text in [
            "",
            "   ",
            "\u{200B}",
            "\u{FEFF}",
            "\u{200C}\u{200D}",
            "\u{2060}",
            " \u{200B}\n\u{FEFF}\t",
            "\u{00AD}",
            "\u{202E}\u{2066}",
            "\u{E0001}\u{E0041}",
            "\0\u{7F}",
        ] {
            assert!(is_blank(text), "{text:?}");
        }
    }

    #[test]
    fn any_visible_character_is_not_blank() {
        for text in ["a", " ? ", "\u{200B}tea\u{200B}", "é", "\u{0301}", "日本"] {
            assert!(!is_blank(text), "{text:?}");
        }
    }
}
