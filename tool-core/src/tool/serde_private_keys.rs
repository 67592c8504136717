//! serde_json's private keys: an object whose one key is `$serde_json::private::RawValue`
//! (or, with its `arbitrary_precision` feature, `$serde_json::private::Number`) is not read
//! as an object by serde_json's `Value`, but as the JSON text its string holds, parsed anew,
//! with a recursion limit of its own. Any crate in a build can turn those features on (axum
//! turns `raw_value` on), so that objects nested in such strings, string in string, reach
//! any depth from a few kilobytes of text, past the limit and the byte scans that bound
//! nesting, and overflow the stack (measured: 19 KB overflowed a 2 MiB thread). JSON from
//! outside holding either key is refused where Toolsmith reads it.

/// The keys serde_json keeps for itself. With its `raw_value` feature (which any crate of a
/// build may turn on: axum does), serde_json's `Value` reads an object keyed
/// `$serde_json::private::RawValue` as the JSON text its string holds, parsed anew with a
/// recursion limit of its own, so that objects nested in such strings reach any depth from
/// a few kilobytes and overflow the stack; `arbitrary_precision` does the like for
/// `$serde_json::private::Number`. JSON holding one as an object's key is refused by
/// [`value_from_slice`](crate::value_from_slice), and text holding one so by
/// [`json_text_excess`](crate::json_text_excess) and [`JsonText::new`](crate::JsonText::new);
/// a string value that spells one is a string like any other.
pub const SERDE_JSON_PRIVATE_KEYS: [&str; 2] = [
    "$serde_json::private::RawValue",
    "$serde_json::private::Number",
];

/// The longest text a private key can be written as in JSON: each of its characters as a
/// `\uXXXX` escape.
const LONGEST_WRITTEN: usize = 6 * SERDE_JSON_PRIVATE_KEYS[0].len();

/// Whether `key` is one of [`SERDE_JSON_PRIVATE_KEYS`].
pub(crate) fn is_private_key(key: &str) -> bool {
    SERDE_JSON_PRIVATE_KEYS.contains(&key)
}

/// Whether the JSON string written as `raw` (between its quotes; `escaped` when it holds a
/// backslash) is one of [`SERDE_JSON_PRIVATE_KEYS`], however its characters are escaped.
pub(crate) fn is_written_private_key(raw: &[u8], escaped: bool) -> bool {
    if !escaped {
        return SERDE_JSON_PRIVATE_KEYS
            .iter()
            .any(|key| key.as_bytes() == raw);
    }
    if raw.len() > LONGEST_WRITTEN {
        return false;
    }
    let mut quoted = Vec::with_capacity(raw.len() + 2);
    quoted.push(b'"');
    quoted.extend_from_slice(raw);
    quoted.push(b'"');
    serde_json::from_slice::<String>(&quoted).is_ok_and(|key| is_private_key(&key))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_is_known_however_it_is_written() {
        assert!(is_written_private_key(
            b"$serde_json::private::RawValue",
            false
        ));
        assert!(is_written_private_key(
            b"$serde_json::private::Number",
            false
        ));
        assert!(is_written_private_key(
            br"\u0024serde_json::private::Raw\u0056alue",
            true
        ));
        let all_escaped: String = SERDE_JSON_PRIVATE_KEYS[0]
            .chars()
            .map(|c| format!("\\u{:04x}", c as u32))
            .collect();
        assert!(is_written_private_key(all_escaped.as_bytes(), true));
        assert!(!is_written_private_key(
            b"$serde_json::private::RawValu",
            false
        ));
        assert!(!is_written_private_key(br"\u0024serde_json", true));
        assert!(!is_written_private_key(br"\x", true));
    }
}
