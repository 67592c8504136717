//! [`serialized_len`] and [`serialized_chars`]: how long a value's JSON text is, in bytes
//! and in characters, without writing it.

/// How many bytes `value` takes written as compact JSON, counted without writing it
/// anywhere (an MCP server's listing against its byte bound, a request's estimate against
/// the context window). A value that cannot be serialized counts what was written before
/// it failed; the harness's types always can (a map with non-string keys cannot come from
/// JSON).
pub(crate) fn serialized_len(value: &impl serde::Serialize) -> usize {
    counted(value, <[u8]>::len)
}

/// How many characters `value` takes written as compact JSON, counted without writing it
/// anywhere (a bound stated in characters, as a retrieval result's is): its bytes less the
/// continuation bytes of UTF-8, which a character of more than one byte adds. A value that
/// cannot be serialized counts what was written before it failed, as [`serialized_len`].
pub(crate) fn serialized_chars(value: &impl serde::Serialize) -> usize {
    // Counted byte by byte: a write may end inside a character.
    counted(value, |bytes| {
        bytes.iter().filter(|&&byte| byte & 0xC0 != 0x80).count()
    })
}

/// The sum of `measure` over the pieces of `value`'s compact JSON text as serde_json writes
/// them.
fn counted(value: &impl serde::Serialize, measure: impl Fn(&[u8]) -> usize) -> usize {
    /// A writer that only counts.
    struct Count<M> {
        total: usize,
        measure: M,
    }

    impl<M: Fn(&[u8]) -> usize> std::io::Write for Count<M> {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.total += (self.measure)(bytes);
            Ok(bytes.len())
        }

        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    let mut count = Count { total: 0, measure };
    let _ = serde_json::to_writer(&mut count, value);
    count.total
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
