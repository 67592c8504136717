//! Pages of `tools/list`: an opaque cursor naming where the next page starts.

use rmcp::model::ErrorData;

use super::server::cut;

/// How many tools one `tools/list` page holds unless the server is told otherwise.
pub const DEFAULT_PAGE_SIZE: usize = 100;

/// The prefix of every cursor this server hands out; anything else is refused.
const CURSOR_PREFIX: &str = "toolsmith:";

/// The cursor of the page starting at `offset`.
pub(crate) fn cursor_at(offset: usize) -> String {
    format!("{CURSOR_PREFIX}{offset}")
}

/// The page `cursor` asks for, within a list of `len` tools: `(start, end, next cursor)`.
/// A cursor this server did not hand out is `-32602` (invalid params), as the protocol asks;
/// one past the end of a list that has shrunk since gives an empty last page.
pub(crate) fn page(
    cursor: Option<&str>,
    len: usize,
    page_size: usize,
) -> Result<(usize, usize, Option<String>), ErrorData> {
    let start = match cursor {
        None => 0,
        Some(cursor) => parse(cursor, len).ok_or_else(|| {
            ErrorData::invalid_params(
                format!(
                    "invalid cursor {:?}: pass a nextCursor from an earlier tools/list",
                    cut(cursor)
                ),
                None,
            )
        })?,
    };
    let end = start.saturating_add(page_size.max(1)).min(len);
    let next = (end < len).then(|| cursor_at(end));
    Ok((start, end, next))
}

fn parse(cursor: &str, len: usize) -> Option<usize> {
    let digits = cursor.strip_prefix(CURSOR_PREFIX)?;
    if digits.is_empty() || digits.len() > 20 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let offset: usize = digits.parse().ok()?;
    // A list that shrank since the cursor was given ends where it ends now.
    (offset > 0).then_some(offset.min(len))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_follow_their_cursors() {
        assert_eq!(page(None, 5, 2).unwrap(), (0, 2, Some(cursor_at(2))));
        assert_eq!(
            page(Some(&cursor_at(2)), 5, 2).unwrap(),
            (2, 4, Some(cursor_at(4)))
        );
        assert_eq!(page(Some(&cursor_at(4)), 5, 2).unwrap(), (4, 5, None));
        assert_eq!(page(None, 0, 2).unwrap(), (0, 0, None));
    }

    #[test]
    fn bad_cursors_are_invalid_params() {
        for bad in [
            "",
            "2",
            "toolsmith:",
            "toolsmith:-1",
            "toolsmith:x",
            "toolsmith:0",
            "toolsmith:99999999999999999999999",
        ] {
            let err = page(Some(bad), 5, 2).unwrap_err();
            assert_eq!(err.code, rmcp::model::ErrorCode::INVALID_PARAMS, "{bad}");
            assert!(err.message.contains("invalid cursor"), "{bad}");
        }
    }

    #[test]
    fn a_long_cursor_is_quoted_cut() {
        let err = page(Some(&"c".repeat(100_000)), 5, 2).unwrap_err();
        assert!(
            err.message.contains("invalid cursor \"ccc"),
            "{}",
            err.message
        );
        assert!(err.message.len() < 1_000, "{} bytes", err.message.len());
    }

    #[test]
    fn a_shrunken_list_ends_the_pages() {
        assert_eq!(page(Some(&cursor_at(4)), 3, 2).unwrap(), (3, 3, None));
    }
}
