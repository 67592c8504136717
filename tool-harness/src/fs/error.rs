//! [`FsError`]: why a file-system operation was refused or failed, always naming the path.

use std::io;
use std::path::Path;

use crate::fs::blocking::BlockingCancelled;
use crate::fs::sandbox_path::MAX_PATH_BYTES;

/// Why a [`FileSystem`](crate::FileSystem) operation did not happen.
///
/// Every variant carries the path as the caller gave it (shown lossily when it is not UTF-8),
/// so the message a model reads says which path to correct. A path over twice
/// [`MAX_PATH_BYTES`](crate::MAX_PATH_BYTES) long, which no file has, is quoted cut.
///
/// ```
/// use toolsmith::harness::FsError;
///
/// let err = FsError::OutsideRoot { path: "../etc/passwd".into(), reason: "'..' leads above the root".into() };
/// assert_eq!(err.to_string(), "refused \"../etc/passwd\": it is outside the root ('..' leads above the root)");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum FsError {
    /// The path leads outside the root: `..` above it, an absolute path elsewhere, or a
    /// symbolic link that points out.
    #[error("refused {}: it is outside the root ({reason})", quoted(path))]
    OutsideRoot {
        /// The path as given.
        path: String,
        /// How it leads out.
        reason: String,
    },
    /// The path cannot be a name here: empty, with a NUL byte, not UTF-8, too long, or, where
    /// a file is meant, ending in `/` (which names a directory).
    #[error("refused {}: {reason}", quoted(path))]
    InvalidPath {
        /// The path as given (lossily, if it was not UTF-8).
        path: String,
        /// What is wrong with it.
        reason: String,
    },
    /// Nothing exists at the path.
    #[error("{} does not exist", quoted(path))]
    NotFound {
        /// The path as given.
        path: String,
    },
    /// The path names a directory where a file was expected.
    #[error("{} is a directory, not a file", quoted(path))]
    IsADirectory {
        /// The path as given.
        path: String,
    },
    /// The path names something that is neither a file nor a directory (a FIFO, a device, a
    /// socket), which the tools do not open.
    #[error("refused {}: it is not a regular file ({kind})", quoted(path))]
    NotARegularFile {
        /// The path as given.
        path: String,
        /// What it is instead.
        kind: String,
    },
    /// Symbolic links at the path form a loop (or a chain too long to follow).
    #[error(
        "refused {}: its symbolic links loop (or chain too deep to follow)",
        quoted(path)
    )]
    SymlinkLoop {
        /// The path as given.
        path: String,
    },
    /// The file is larger than the file system is configured to read at once.
    #[error(
        "refused {}: it is {size} bytes, more than the {limit}-byte limit",
        quoted(path)
    )]
    TooLarge {
        /// The path as given.
        path: String,
        /// The file's size.
        size: u64,
        /// The limit.
        limit: u64,
    },
    /// A conditional replacement ([`FileSystem::replace_if_unchanged`]) found the file no
    /// longer holding what the caller had read: another writer (a shell command, the
    /// user's editor) changed or removed it since. Nothing was written.
    ///
    /// [`FileSystem::replace_if_unchanged`]: crate::FileSystem::replace_if_unchanged
    #[error(
        "refused {}: the file changed since it was read (another program wrote to it or \
         removed it meanwhile), so nothing was written; read it again and redo the change",
        quoted(path)
    )]
    ChangedSinceRead {
        /// The path as given.
        path: String,
    },
    /// Any other I/O failure.
    #[error("{}: {reason}", quoted(path))]
    Io {
        /// The path as given.
        path: String,
        /// What the operating system said.
        reason: String,
    },
}

/// `path` quoted, cut to 240 characters when it is over twice as long as any path a file
/// system accepts (refused for that, or before its length was checked); one a little too
/// long is quoted whole, to be corrected.
fn quoted(path: &str) -> String {
    if path.len() <= 2 * MAX_PATH_BYTES {
        return format!("{path:?}");
    }
    let end = path
        .char_indices()
        .nth(240)
        .map_or(path.len(), |(at, _)| at);
    format!("{:?}… ({} bytes)", &path[..end], path.len())
}

/// The error for `shown_path`, whose ancestor `file` (relative to the root) is a file, so
/// that nothing can be below it: worded alike by both file systems.
pub(crate) fn file_in_the_way(shown_path: &str, file: &Path) -> FsError {
    FsError::Io {
        path: shown_path.to_owned(),
        reason: format!("{} is a file, not a directory", file.display()),
    }
}

impl FsError {
    /// The path the error concerns, as given.
    pub fn path(&self) -> &str {
        match self {
            Self::OutsideRoot { path, .. }
            | Self::InvalidPath { path, .. }
            | Self::NotFound { path }
            | Self::IsADirectory { path }
            | Self::NotARegularFile { path, .. }
            | Self::SymlinkLoop { path }
            | Self::TooLarge { path, .. }
            | Self::ChangedSinceRead { path }
            | Self::Io { path, .. } => path,
        }
    }

    /// The work on `path` was not done: the runtime's blocking pool was shutting down.
    pub(crate) fn cancelled(path: String, cancelled: BlockingCancelled) -> Self {
        Self::Io {
            path,
            reason: cancelled.to_string(),
        }
    }

    /// Classifies an I/O error of an operation on `path`, recognising the sandbox's refusals.
    pub(crate) fn from_io(path: &str, err: &io::Error) -> Self {
        let path = path.to_owned();
        #[cfg(unix)]
        match err.raw_os_error() {
            Some(libc::ELOOP) => return Self::SymlinkLoop { path },
            Some(libc::ENAMETOOLONG) => {
                return Self::InvalidPath {
                    path,
                    reason: "a name in it is too long".into(),
                };
            }
            // openat2's RESOLVE_BENEATH reports an escape as EXDEV.
            Some(libc::EXDEV) => {
                return Self::OutsideRoot {
                    path,
                    reason: "a symbolic link on its way leads out".into(),
                };
            }
            Some(libc::EISDIR) => return Self::IsADirectory { path },
            _ => {}
        }
        match err.kind() {
            io::ErrorKind::NotFound => Self::NotFound { path },
            io::ErrorKind::IsADirectory => Self::IsADirectory { path },
            // cap-std's word for an escape attempt.
            io::ErrorKind::PermissionDenied
                if err.to_string().contains("outside of the filesystem") =>
            {
                Self::OutsideRoot {
                    path,
                    reason: "a symbolic link on its way leads out".into(),
                }
            }
            _ => Self::Io {
                path,
                reason: err.to_string(),
            },
        }
    }
}
