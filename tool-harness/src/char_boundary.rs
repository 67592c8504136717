//! Char boundaries near a byte offset, for cutting text to a byte budget: `str`'s
//! `floor_char_boundary` and `ceil_char_boundary` are newer than the crate's Rust version
//! (1.88).

/// The char boundary of `text` at or before `at` (its end when `at` is past it).
pub(crate) fn floor_char_boundary(text: &str, at: usize) -> usize {
    let mut at = at.min(text.len());
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

/// The char boundary of `text` at or after `at` (its end when `at` is past it).
pub(crate) fn ceil_char_boundary(text: &str, at: usize) -> usize {
    let mut at = at.min(text.len());
    while !text.is_char_boundary(at) {
        at += 1;
    }
    at
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn boundaries_are_found_around_a_character_of_several_bytes() {
        // "é" is bytes 1 and 2.
        let text = "héllo";
        assert_eq!(floor_char_boundary(text, 2), 1);
        assert_eq!(ceil_char_boundary(text, 2), 3);
        assert_eq!(floor_char_boundary(text, 3), 3);
        assert_eq!(ceil_char_boundary(text, 1), 1);
        assert_eq!(floor_char_boundary(text, 99), text.len());
        assert_eq!(ceil_char_boundary(text, 99), text.len());
    }
}
