//! [`open_to_read`]: a file beneath the root opened to read without waiting on it.

use std::path::Path;

use cap_std::fs::{Dir, File, OpenOptions, OpenOptionsExt as _};

/// Opens `path` (relative to the root's handle `dir`, so resolved beneath it) to read,
/// without blocking: a FIFO there (swapped in since it was judged a file) does not wait for
/// a writer. The caller checks what was opened (a regular file, or not).
pub(crate) fn open_to_read(dir: &Dir, path: &Path) -> std::io::Result<File> {
    let mut options = OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    options.custom_flags(libc::O_NONBLOCK);
    dir.open_with(path, &options)
}
