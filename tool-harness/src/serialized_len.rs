//! [`serialized_len`] and [`serialized_chars`]: how long a value's JSON text is, in bytes
//! and in characters, without writing it.

/// How many bytes `value` takes written as compact JSON, counted without writing it
/// anywhere (an MCP server's listing against its byte bound, a request's estimate against
/// the context window). A value that cannot be serialized counts what was written before
/// it failed; the harness's types always can (a map with non-string keys cannot come from
/// JSON).
pub(crate) fn serialized_len(value: &impl serde::Serialize) -> usize {
    /// A writer that only counts.
    struct ByteCount(usize);

    impl std::io::Write for ByteCount {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0 += bytes.len();
            Ok(bytes.len())
        }

        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    let mut count = ByteCount(0);
    let _ = serde_json::to_writer(&mut count, value);
    count.0
}

/// How many characters `value` takes written as compact JSON, counted without writing it
/// anywhere (a bound stated in characters, as a retrieval result's is): its bytes less the
/// continuation bytes of UTF-8, which a character of more than one byte adds. A value that
/// cannot be serialized counts what was written before it failed, as [`serialized_len`].
pub(crate) fn serialized_chars(value: &impl serde::Serialize) -> usize {
    /// A writer that only counts the bytes that begin a character.
    struct CharCount(usize);

    impl std::io::Write for CharCount {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            // Counted byte by byte: a write may end inside a character.
            self.0 += bytes.iter().filter(|&&b| b & 0xC0 != 0x80).count();
            Ok(bytes.len())
        }

        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    let mut count = CharCount(0);
    let _ = serde_json::to_writer(&mut count, value);
    count.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serialized_lengths_are_those_of_the_json_text() {
        let value = serde_json::json!({"name": "é", "list": [1, 2.5, null]});
        assert_eq!(serialized_len(&value), value.to_string().len());
    }

    #[test]
    fn serialized_characters_are_those_of_the_json_text() {
        let value = serde_json::json!({"name": "é東京🐱", "list": [1, 2.5, null], "q": "\"\n"});
        assert_eq!(serialized_chars(&value), value.to_string().chars().count());
    }
}
