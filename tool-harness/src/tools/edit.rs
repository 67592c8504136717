//! The `edit` tool: replaces an exact, unique piece of a text file.

use std::path::Path;
use std::sync::Arc;

use toolsmith_core::{ToolError, tool_fn};

use crate::FileSystem;
use crate::tools::file_lock::lock_file;
use crate::tools::read::binary_refusal;

/// The tool's name.
pub const EDIT_TOOL: &str = "edit";

/// The most bytes one edit may add to a file: 64 MiB. Past it, [`replace_unique`] refuses
/// before it builds the result (`replace_all` of a short text by a long one multiplies).
pub const MAX_EDIT_GROWTH_BYTES: usize = 64 * 1024 * 1024;

/// Replaces `old` by `new` in `text`: exactly one occurrence, or all with `replace_all`.
/// The error says how many occurrences there were and on which lines (1-based, as `read`
/// numbers them; the first ten of them), or that `old` is empty. A replacement that would add
/// more than [`MAX_EDIT_GROWTH_BYTES`] to `text` is refused before it is made.
///
/// ```
/// use toolsmith::harness::tools::replace_unique;
///
/// assert_eq!(replace_unique("a b a", "b", "c", false).unwrap(), ("a c a".to_owned(), 1));
/// assert_eq!(replace_unique("a b a", "a", "x", true).unwrap(), ("x b x".to_owned(), 2));
/// assert!(replace_unique("a\nb\na", "a", "x", false).unwrap_err().contains("occurs 2 times (on lines 1 and 3)"));
/// assert!(replace_unique("a b a", "z", "x", false).unwrap_err().contains("was not found"));
/// // Overlapping occurrences count: which one was meant is not known.
/// assert!(replace_unique("}\n}\n}\n", "}\n}", "x", false).unwrap_err().contains("occurs 2 times"));
/// ```
pub fn replace_unique(
    text: &str,
    old: &str,
    new: &str,
    replace_all: bool,
) -> Result<(String, usize), String> {
    if old.is_empty() {
        return Err("old_string is empty, so it marks no text to replace".to_owned());
    }
    // Every occurrence, overlapping ones included: `}\n}` occurs twice in `}\n}\n}`, and
    // replacing "the" one would be a guess.
    let mut lines = OccurrenceLines::new(text);
    let count = occurrences(text, old, |start| lines.add(start));
    match count {
        0 => Err(
            "old_string was not found (0 matches); read the file and copy the text exactly, \
             whitespace and indentation included"
                .to_owned(),
        ),
        1 => {
            within_growth_limit(text, old, new, 1)?;
            Ok((text.replacen(old, new, 1), 1))
        }
        // All of them, when none overlaps (counted apart, they are as many).
        n if replace_all && n == text.matches(old).count() => {
            within_growth_limit(text, old, new, n)?;
            Ok((text.replace(old, new), n))
        }
        n if replace_all => Err(format!(
            "old_string occurs {n} times ({lines}), some of them overlapping, so replacing all \
             of them is ambiguous; add surrounding lines to make it unique"
        )),
        n => Err(format!(
            "old_string occurs {n} times ({lines}); add surrounding lines to make it unique, or \
             set replace_all to replace all {n}"
        )),
    }
}

/// Refuses replacing `count` occurrences of `old` in `text` by `new` when that would add
/// more than [`MAX_EDIT_GROWTH_BYTES`] to it, saying how large the file would be.
fn within_growth_limit(text: &str, old: &str, new: &str, count: usize) -> Result<(), String> {
    let growth = count.saturating_mul(new.len().saturating_sub(old.len()));
    if growth <= MAX_EDIT_GROWTH_BYTES {
        return Ok(());
    }
    let occurrences = match count {
        1 => "the occurrence".to_owned(),
        n => format!("the {n} occurrences"),
    };
    Err(format!(
        "replacing {occurrences} would make the file {} bytes, {growth} more than it is; an \
         edit adds at most {MAX_EDIT_GROWTH_BYTES} bytes",
        text.len().saturating_add(growth)
    ))
}

/// The most line numbers an error about several occurrences lists.
const MAX_LINES_LISTED: usize = 10;

/// The lines on which occurrences start, for an error: the first [`MAX_LINES_LISTED`]
/// distinct ones, and whether there are more. Fed starts in increasing order, it counts the
/// newlines between them once, so the whole costs one pass over the text.
struct OccurrenceLines<'a> {
    text: &'a [u8],
    /// Where the newlines were counted to, and the line there (1-based).
    counted_to: usize,
    line: usize,
    listed: Vec<usize>,
    more: bool,
}

impl<'a> OccurrenceLines<'a> {
    fn new(text: &'a str) -> Self {
        Self {
            text: text.as_bytes(),
            counted_to: 0,
            line: 1,
            listed: Vec::new(),
            more: false,
        }
    }

    fn add(&mut self, start: usize) {
        if self.more {
            return;
        }
        self.line += memchr::memchr_iter(b'\n', &self.text[self.counted_to..start]).count();
        self.counted_to = start;
        if self.listed.last() == Some(&self.line) {
            return;
        }
        if self.listed.len() == MAX_LINES_LISTED {
            self.more = true;
        } else {
            self.listed.push(self.line);
        }
    }
}

impl std::fmt::Display for OccurrenceLines<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let numbers: Vec<String> = self.listed.iter().map(ToString::to_string).collect();
        match numbers.as_slice() {
            [one] => write!(f, "on line {one}"),
            [first @ .., last] if !self.more => {
                write!(f, "on lines {} and {last}", first.join(", "))
            }
            all => write!(f, "on lines {}, …", all.join(", ")),
        }
    }
}

/// How many times `needle` (not empty) occurs in `text`, overlapping occurrences included,
/// in one pass over each (Knuth–Morris–Pratt): a search from each occurrence in turn compared
/// the whole needle again, quadratic on a long run of one character. Bytes are compared; an
/// occurrence of UTF-8 in UTF-8 starts at a character either way. `found` is given each
/// occurrence's start (a byte offset), in increasing order.
fn occurrences(text: &str, needle: &str, mut found: impl FnMut(usize)) -> usize {
    let (text, needle) = (text.as_bytes(), needle.as_bytes());
    if needle.is_empty() {
        return 0;
    }
    // For each prefix of the needle, the length of its longest proper prefix that is also
    // its suffix: where a partial match goes on from after a mismatch, or a whole one.
    let mut border = vec![0usize; needle.len()];
    let mut length = 0;
    for at in 1..needle.len() {
        while length > 0 && needle[at] != needle[length] {
            length = border[length - 1];
        }
        if needle[at] == needle[length] {
            length += 1;
        }
        border[at] = length;
    }
    let mut count = 0;
    let mut matched = 0;
    for (at, &byte) in text.iter().enumerate() {
        while matched > 0 && byte != needle[matched] {
            matched = border[matched - 1];
        }
        if byte == needle[matched] {
            matched += 1;
        }
        if matched == needle.len() {
            count += 1;
            found(at + 1 - needle.len());
            matched = border[matched - 1];
        }
    }
    count
}

/// Whether `text` has line ends, and each is CRLF (none a `\n` alone).
fn ends_every_line_in_crlf(text: &str) -> bool {
    let bytes = text.as_bytes();
    let mut newlines = memchr::memchr_iter(b'\n', bytes).peekable();
    newlines.peek().is_some() && newlines.all(|at| at > 0 && bytes[at - 1] == b'\r')
}

/// The `edit` tool's logic: reads the file, replaces the match, writes it back atomically.
/// Edits and writes of one file (through these tools, in this process) wait for each other,
/// so that none is lost; a change by another writer between the read and the write (a shell
/// command, the user's editor) is refused rather than overwritten
/// ([`FileSystem::replace_if_unchanged`]), the model told to read the file again. In a file
/// whose lines all end in CRLF, the `\n`s of `new_string` are written as CRLF, and an
/// `old_string` spanning lines with `\n` (as `read` shows them) is found with the file's line
/// ends. A file `read` refuses as binary (a NUL byte in its
/// first 8 KiB), or one that is not UTF-8, is refused, naming it. The tool is
/// `EditTool::new(fs)`.
#[tool_fn(
    name = "edit",
    category = "write",
    read_only = false,
    destructive,
    idempotent = false,
    open_world = false,
    description = "Replace an exact piece of text in a file of the workspace. `old_string` must \
                   occur exactly once (include surrounding lines to make it unique) unless \
                   `replace_all` is set. Read the file first."
)]
pub async fn edit_tool(
    #[bind] fs: Arc<dyn FileSystem>,
    /// The file to edit, relative to the workspace root.
    path: String,
    /// The exact text to replace (whitespace included); it must occur exactly once unless
    /// `replace_all` is set.
    old_string: String,
    /// The text to put in its place.
    new_string: String,
    /// Replace every occurrence instead of requiring a unique one.
    #[arg(default)]
    replace_all: bool,
) -> Result<String, ToolError> {
    if old_string.is_empty() {
        return Err(ToolError::invalid_arguments(
            EDIT_TOOL,
            "/old_string: must not be empty (to create a file, use write)",
        ));
    }
    if old_string == new_string {
        return Err(ToolError::invalid_arguments(
            EDIT_TOOL,
            "/new_string: is the same as old_string, so nothing would change",
        ));
    }
    let file = Path::new(&path);
    // Held from the read to the write, so that no other change of the file falls between.
    let _lock = lock_file(&path).await;
    let contents = fs
        .read(file)
        .await
        .map_err(|err| ToolError::execution(EDIT_TOOL, err))?;
    // The files `read` refuses as binary: a NUL byte may well sit in valid UTF-8.
    if let Some(refusal) = binary_refusal(&path, &contents) {
        return Err(ToolError::execution(
            EDIT_TOOL,
            format!("{refusal}; edit works on text files only"),
        ));
    }
    let text = String::from_utf8(contents).map_err(|_| {
        ToolError::execution(
            EDIT_TOOL,
            format!("refused {path:?}: it is not UTF-8 text; edit works on text files only"),
        )
    })?;
    // `read` shows a CRLF file's lines without their `\r`: text copied from it spans lines
    // with `\n` alone. Tried again with the file's line ends, it matches what the model saw.
    let crlf = |text: &str| text.replace("\r\n", "\n").replace('\n', "\r\n");
    let in_crlf = |reason: String| format!("{reason} (the file's lines end in CRLF)");
    let replaced = if ends_every_line_in_crlf(&text) {
        // Both with the file's line ends: lines added end in CRLF too, not in the `\n` a
        // model writes; and an `old_string` that starts with `\n`, found as it is, would
        // leave the `\r` before it beside the new text's own.
        replace_unique(&text, &crlf(&old_string), &crlf(&new_string), replace_all).map_err(
            |reason| match old_string.contains('\n') {
                true => in_crlf(reason),
                false => reason,
            },
        )
    } else {
        match replace_unique(&text, &old_string, &new_string, replace_all) {
            Err(_)
                if text.contains("\r\n")
                    && old_string.contains('\n')
                    && !text.contains(old_string.as_str()) =>
            {
                replace_unique(&text, &crlf(&old_string), &crlf(&new_string), replace_all)
                    .map_err(in_crlf)
            }
            other => other,
        }
    };
    let (edited, count) = replaced
        .map_err(|reason| ToolError::execution(EDIT_TOOL, format!("in {path:?}: {reason}")))?;
    // Only over what was read: a change by another writer since (`bash`, the user's editor)
    // is refused, not overwritten.
    fs.replace_if_unchanged(file, text.as_bytes(), edited.into_bytes())
        .await
        .map_err(|err| ToolError::execution(EDIT_TOOL, err))?;
    Ok(format!(
        "Edited {path:?}: replaced {count} occurrence{}",
        if count == 1 { "" } else { "s" }
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn occurrences_are_counted_in_linear_time() {
        // Each of the million overlapping occurrences was found by a search of its own,
        // comparing the whole needle: 9 s here in a debug build.
        let text = "a".repeat(1 << 20);
        let needle = "a".repeat(2000);
        let started = cpu_time::ThreadTime::now();
        assert_eq!(occurrences(&text, &needle, |_| {}), (1 << 20) - 2000 + 1);
        assert!(started.elapsed() < std::time::Duration::from_secs(2));
    }

    #[test]
    fn occurrences_count_overlaps_and_respect_characters() {
        for (text, needle, count) in [
            ("}\n}\n}\n", "}\n}", 2),
            ("abababa", "aba", 3),
            ("aaa", "aaaa", 0),
            ("xyz", "xyz", 1),
            ("ééé", "éé", 2),
            ("aabaabaaab", "aab", 3),
            ("€€", "\u{82}", 0),
        ] {
            assert_eq!(
                occurrences(text, needle, |_| {}),
                count,
                "{needle:?} in {text:?}"
            );
        }
    }

    #[test]
    fn an_empty_old_string_is_refused_not_a_panic() {
        let err = replace_unique("abc", "", "x", false).unwrap_err();
        assert!(err.contains("old_string is empty"), "{err}");
    }
}
