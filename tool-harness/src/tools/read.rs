//! The `read` tool: a text file's lines, numbered, a window at a time; an image file as the
//! image.

use std::fmt::Write as _;
use std::path::Path;
use std::sync::Arc;

use toolsmith_core::{
    ContentPart, Image, MAX_IMAGE_BASE64_LEN, ToolCallResult, ToolError, tool_fn,
};

use crate::FileSystem;

/// The tool's name.
pub const READ_TOOL: &str = "read";

/// The largest image file `read` shows: the most bytes whose base64 fits in
/// [`MAX_IMAGE_BASE64_LEN`] (3,932,160 bytes, 3.75 MiB).
pub const MAX_READ_IMAGE_BYTES: usize = MAX_IMAGE_BASE64_LEN / 4 * 3;

/// What `read` shows, and how much at once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReadLimits {
    /// Lines shown when the call gives no `limit`.
    pub default_lines: usize,
    /// The most bytes of output; the window is cut at the last whole line that fits.
    pub max_output_bytes: usize,
    /// The most characters shown of one line; the rest is replaced by a marker.
    pub max_line_chars: usize,
    /// Whether an image file (PNG, JPEG, GIF or WebP, told by its bytes) is shown to the
    /// model as the image (default `true`). Turn it off for a model without vision: an
    /// image is then refused with an error saying so, as other binary files are.
    pub images: bool,
}

impl Default for ReadLimits {
    fn default() -> Self {
        Self {
            default_lines: 2000,
            max_output_bytes: 100 * 1024,
            max_line_chars: 2000,
            images: true,
        }
    }
}

/// How many leading bytes are looked at for a NUL byte, the sign of a binary file (as git and
/// ripgrep do).
const BINARY_SNIFF_BYTES: usize = 8192;

/// Why `contents`, the file `path`'s, is refused as binary, or `None` for text: a NUL byte in
/// its first [`BINARY_SNIFF_BYTES`]. `read` and `edit` refuse the same files with it, each
/// adding what it works on.
pub(super) fn binary_refusal(path: &str, contents: &[u8]) -> Option<String> {
    let sniff = &contents[..contents.len().min(BINARY_SNIFF_BYTES)];
    let at = memchr::memchr(0, sniff)?;
    Some(format!(
        "refused {path:?}: it looks like a binary file ({} bytes, a NUL byte at offset {at})",
        contents.len()
    ))
}

/// Renders `contents` of the file `path` as `read` shows it: lines numbered like `cat -n`,
/// from `offset`, at most `limit` lines and the limits' bytes, with a closing note saying
/// how to read on when anything was left out. Binary content is refused.
///
/// ```
/// use toolsmith::harness::tools::{ReadLimits, render_lines};
///
/// let text = render_lines("a.txt", b"one\ntwo\nthree\n", Some(2), Some(1), &ReadLimits::default()).unwrap();
/// assert_eq!(text, "     2\ttwo\n[lines 2-2 of 3 shown; call read with offset=3 to read on]");
/// assert!(render_lines("a.bin", b"\x7fELF\0\0", None, None, &ReadLimits::default()).is_err());
/// ```
pub fn render_lines(
    path: &str,
    contents: &[u8],
    offset: Option<usize>,
    limit: Option<usize>,
    limits: &ReadLimits,
) -> Result<String, String> {
    if let Some(refusal) = binary_refusal(path, contents) {
        return Err(format!("{refusal}; read shows text files only"));
    }
    if contents.is_empty() {
        return Ok(format!("{path:?} is empty (0 bytes)"));
    }
    // Work on bytes, and decode only the lines shown: a window of a large file costs a
    // newline count, not a decoding of the whole file.
    let body = contents.strip_suffix(b"\n").unwrap_or(contents);
    let total = memchr::memchr_iter(b'\n', body).count() + 1;
    let start = offset.unwrap_or(1).max(1);
    if start > total {
        return Err(format!(
            "offset {start} is past the end of {path:?}, which has {total} line{}",
            if total == 1 { "" } else { "s" }
        ));
    }
    let window_start = match start {
        1 => 0,
        _ => memchr::memchr_iter(b'\n', body)
            .nth(start - 2)
            .map_or(body.len(), |newline| newline + 1),
    };
    let wanted = limit.unwrap_or(limits.default_lines).max(1);
    let mut out = String::new();
    let mut last = start - 1;
    let mut cut_by_bytes = false;
    let mut lossy = false;
    for (index, line) in body[window_start..]
        .split(|&b| b == b'\n')
        .take(wanted)
        .enumerate()
    {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        let line = String::from_utf8_lossy(line);
        lossy |= matches!(line, std::borrow::Cow::Owned(_));
        let number = start + index;
        let entry_start = out.len();
        let _ = write!(out, "{number:>6}\t");
        // A line has at least as many bytes as characters: count them only when it may be long.
        let length = if line.len() > limits.max_line_chars {
            line.chars().count()
        } else {
            line.len().min(limits.max_line_chars)
        };
        if length > limits.max_line_chars {
            out.extend(line.chars().take(limits.max_line_chars));
            let rest = length - limits.max_line_chars;
            let _ = write!(out, "… [line cut: {rest} more characters]");
        } else {
            out.push_str(&line);
        }
        out.push('\n');
        // Always show at least one line, so that reading on always makes progress.
        if last >= start && out.len() > limits.max_output_bytes {
            out.truncate(entry_start);
            cut_by_bytes = true;
            break;
        }
        last = number;
    }
    if cut_by_bytes {
        out.push_str(&format!(
            "[read stopped at the {}-byte output cap after line {last} of {total}; call read with offset={} to continue]",
            limits.max_output_bytes,
            last + 1
        ));
    } else if last < total {
        out.push_str(&format!(
            "[lines {start}-{last} of {total} shown; call read with offset={} to read on]",
            last + 1
        ));
    } else if out.ends_with('\n') {
        out.pop();
    }
    if lossy {
        out.push_str("\n[not valid UTF-8: undecodable bytes are shown as U+FFFD]");
    }
    Ok(out)
}

/// The `read` tool's logic: reads the file through `fs`, then shows an image file as the
/// image (when `limits.images`), anything else as [`render_lines`] renders the requested
/// window. The tool is `ReadTool::new(fs, limits)`.
///
/// The file is read within the file system's own limit (a [`LocalFileSystem`]'s
/// [`with_max_read_bytes`], 64 MiB by default, checked from the file's size before it is
/// read), whatever it holds; an image is then refused past [`MAX_READ_IMAGE_BYTES`], before
/// it is encoded.
///
/// [`LocalFileSystem`]: crate::LocalFileSystem
/// [`with_max_read_bytes`]: crate::LocalFileSystem::with_max_read_bytes
///
/// ```
/// use std::sync::Arc;
/// use toolsmith::{ToolArguments, ToolCallManager, ToolCallRequest};
/// use toolsmith::harness::{InMemoryFileSystem, tools::{ReadLimits, ReadTool}};
/// use serde_json::json;
///
/// let fs = Arc::new(InMemoryFileSystem::new().with_file("hello.txt", "hi\nthere\n"));
/// let manager = ToolCallManager::new("demo");
/// manager.register(Arc::new(ReadTool::new(fs, ReadLimits::default()))).unwrap();
/// let call = ToolCallRequest::new("1", "read", ToolArguments::from_iter([("path", json!("hello.txt"))]));
/// let result = futures::executor::block_on(manager.execute_one(&call)).unwrap();
/// assert_eq!(result.content.to_text(), "     1\thi\n     2\tthere");
/// ```
///
/// An image, told by its bytes whatever its name, comes back as a short text naming it and
/// the image itself (`offset` and `limit` do not apply: it is shown whole):
///
/// ```
/// use std::sync::Arc;
/// use toolsmith::{Image, ToolArguments, ToolCallManager, ToolCallRequest};
/// use toolsmith::harness::{InMemoryFileSystem, tools::{ReadLimits, ReadTool}};
/// use serde_json::json;
///
/// let png = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR";
/// let fs = Arc::new(InMemoryFileSystem::new().with_file("docs/diagram.png", png));
/// let manager = ToolCallManager::new("demo");
/// manager.register(Arc::new(ReadTool::new(fs, ReadLimits::default()))).unwrap();
/// let call = ToolCallRequest::new("1", "read", ToolArguments::from_iter([("path", json!("docs/diagram.png"))]));
/// let result = futures::executor::block_on(manager.execute_one(&call)).unwrap();
/// let images: Vec<&Image> = result.content.images().collect();
/// assert_eq!(images, [&Image::from_bytes("image/png", png).unwrap()]);
/// assert_eq!(
///     result.content.to_text(),
///     "\"docs/diagram.png\": an image/png image, 16 bytes\n[image: image/png, 16 bytes]"
/// );
/// ```
#[tool_fn(
    name = "read",
    category = "read",
    read_only,
    destructive = false,
    idempotent,
    description = "Read a file of the workspace. A text file's lines come numbered (`cat -n` \
                   style); use `offset` and `limit` to page through a long one. An image file \
                   (PNG, JPEG, GIF or WebP) comes back as the image itself, whole (unless image \
                   reading is turned off). Other binary files are refused."
)]
pub async fn read_tool(
    #[bind] fs: Arc<dyn FileSystem>,
    #[bind] limits: ReadLimits,
    /// The file to read, relative to the workspace root.
    path: String,
    /// The 1-based line to start at (default 1; 0 is read as 1). Text files only: an image
    /// is shown whole.
    offset: Option<usize>,
    /// How many lines to show at most (default 2000; 0 is read as 1). Text files only.
    limit: Option<usize>,
) -> Result<ToolCallResult, ToolError> {
    let contents = fs
        .read(Path::new(&path))
        .await
        .map_err(|err| ToolError::execution(READ_TOOL, err))?;
    let shown = match Image::media_type_of(&contents) {
        Some(media_type) => {
            let paged = offset.is_some() || limit.is_some();
            read_image(&path, media_type, &contents, paged, &limits)
        }
        None => render_lines(&path, &contents, offset, limit, &limits).map(ToolCallResult::text),
    };
    shown.map_err(|reason| ToolError::execution(READ_TOOL, reason))
}

/// An image file's result: a line naming the file, its type and size, then the image. Its
/// size is checked before it is encoded. `paged` (an `offset` or `limit` given) is answered
/// with a note rather than an error: a model that pages every file by habit still gets the
/// image, and learns that the window was not applied.
fn read_image(
    path: &str,
    media_type: &'static str,
    contents: &[u8],
    paged: bool,
    limits: &ReadLimits,
) -> Result<ToolCallResult, String> {
    let size = contents.len();
    if !limits.images {
        return Err(format!(
            "refused {path:?}: it is an {media_type} image ({size} bytes), and this read tool \
             shows text files only"
        ));
    }
    if size > MAX_READ_IMAGE_BYTES {
        return Err(format!(
            "refused {path:?}: it is an {media_type} image of {size} bytes, more than the \
             {MAX_READ_IMAGE_BYTES} bytes an image may be (5 MiB as base64, the most every \
             provider takes); make it smaller"
        ));
    }
    let image = Image::from_bytes(media_type, contents)
        .map_err(|err| format!("refused {path:?}: {err}"))?;
    let mut caption = format!("{path:?}: an {media_type} image, {size} bytes");
    if paged {
        caption.push_str(" (shown whole: offset and limit apply to text files only)");
    }
    Ok(ToolCallResult::parts([
        ContentPart::text(caption),
        image.into(),
    ]))
}
