//! `-` for an argument: its text read from stdin, bounded, so that a large one can be piped
//! in where the shell would refuse it on the command line ("Argument list too long").

use std::io::Read;

use crate::Failure;

/// The argument that stands for stdin.
pub const STDIN: &str = "-";

/// The most bytes read from stdin for one argument: 16 MiB.
pub const LIMIT: u64 = 16 * 1024 * 1024;

/// Reads what stdin holds for `what` (`the prompt`), all of it, on a blocking thread:
/// the command's interruption is still heard while a terminal waits for Ctrl-D.
pub async fn read(what: String) -> Result<String, Failure> {
    let reading = what.clone();
    tokio::task::spawn_blocking(move || bounded(std::io::stdin().lock(), LIMIT, &reading))
        .await
        .map_err(|error| Failure::new(format!("cannot read {what} from stdin: {error}")))?
}

/// Reads all of `input` as `what`, its trailing line breaks trimmed (`echo` and here-documents
/// end with one), refusing more than `limit` bytes and text that is not UTF-8 as usage
/// errors. At most `limit + 1` bytes are read, whatever `input` holds.
pub fn bounded(input: impl Read, limit: u64, what: &str) -> Result<String, Failure> {
    let mut bytes = Vec::new();
    input
        .take(limit.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|error| Failure::new(format!("cannot read {what} from stdin: {error}")))?;
    if bytes.len() as u64 > limit {
        return Err(Failure::usage(format!(
            "{what} on stdin: more than {limit} bytes, the most `-` reads"
        )));
    }
    let mut text = String::from_utf8(bytes).map_err(|error| {
        Failure::usage(format!(
            "{what} on stdin: not UTF-8 at byte {}",
            error.utf8_error().valid_up_to()
        ))
    })?;
    let kept = text.trim_end_matches(['\n', '\r']).len();
    text.truncate(kept);
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn all_of_the_input_is_read_with_its_trailing_line_breaks_trimmed() {
        let read = bounded(&b"line one\n\nline two\r\n\n"[..], 100, "the prompt").unwrap();
        assert_eq!(read, "line one\n\nline two");
        assert_eq!(bounded(&b""[..], 100, "the prompt").unwrap(), "");
    }

    #[test]
    fn the_limit_is_kept_and_named() {
        assert_eq!(bounded(&b"12345"[..], 5, "x").unwrap(), "12345");
        let over = bounded(&b"123456"[..], 5, "the prompt").unwrap_err();
        assert!(over.usage);
        assert_eq!(
            over.message,
            "the prompt on stdin: more than 5 bytes, the most `-` reads"
        );
        // No more than the limit and one byte is read, however much there is.
        let mut endless = std::io::repeat(b'a');
        assert!(bounded(&mut endless, 5, "x").unwrap_err().usage);
    }

    #[test]
    fn text_that_is_not_utf8_is_refused_naming_where() {
        let wrong = bounded(&b"ok \xff"[..], 100, "the prompt").unwrap_err();
        assert!(wrong.usage);
        assert_eq!(wrong.message, "the prompt on stdin: not UTF-8 at byte 3");
    }
}
