//! Texts for the index's property tests, made of a small vocabulary so that random
//! documents and queries share terms.

/// The vocabulary: every pick is one of these words.
pub(super) const WORDS: &[&str] = &[
    "file", "read", "write", "weather", "city", "email", "send", "list", "user", "get", "search",
    "image", "resize", "stock", "price", "convert", "unit", "date", "time", "math", "hotel",
    "book", "flight", "route", "tax", "order",
];

/// The words `picks` choose (modulo the vocabulary), separated by spaces.
pub(super) fn text(picks: &[usize]) -> String {
    picks
        .iter()
        .map(|&i| WORDS[i % WORDS.len()])
        .collect::<Vec<_>>()
        .join(" ")
}
