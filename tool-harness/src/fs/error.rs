//! [`FsError`]: why a file-system operation was refused or failed, always naming the path.

use std::io;

/// Why a [`FileSystem`](crate::FileSystem) operation did not happen.
///
/// Every variant carries the path as the caller gave it (shown lossily when it is not UTF-8),
/// so the message a model reads says which path to correct.
///
/// ```
/// use toolsmith_harness::FsError;
///
/// let err = FsError::OutsideRoot { path: "../etc/passwd".into(), reason: "'..' leads above the root".into() };
/// assert_eq!(err.to_string(), "refused \"../etc/passwd\": it is outside the root ('..' leads above the root)");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum FsError {
    /// The path leads outside the root: `..` above it, an absolute path elsewhere, or a
    /// symbolic link that points out.
    #[error("refused {path:?}: it is outside the root ({reason})")]
    OutsideRoot {
        /// The path as given.
        path: String,
        /// How it leads out.
        reason: String,
    },
    /// The path cannot be a name here: empty, with a NUL byte, not UTF-8, too long, or, where
    /// a file is meant, ending in `/` (which names a directory).
    #[error("refused {path:?}: {reason}")]
    InvalidPath {
        /// The path as given (lossily, if it was not UTF-8).
        path: String,
        /// What is wrong with it.
        reason: String,
    },
    /// Nothing exists at the path.
    #[error("{path:?} does not exist")]
    NotFound {
        /// The path as given.
        path: String,
    },
    /// The path names a directory where a file was expected.
    #[error("{path:?} is a directory, not a file")]
    IsADirectory {
        /// The path as given.
        path: String,
    },
    /// The path names something that is neither a file nor a directory (a FIFO, a device, a
    /// socket), which the tools do not open.
    #[error("refused {path:?}: it is not a regular file ({kind})")]
    NotARegularFile {
        /// The path as given.
        path: String,
        /// What it is instead.
        kind: String,
    },
    /// Symbolic links at the path form a loop (or a chain too long to follow).
    #[error("refused {path:?}: its symbolic links loop (or chain too deep to follow)")]
    SymlinkLoop {
        /// The path as given.
        path: String,
    },
    /// The file is larger than the file system is configured to read at once.
    #[error("refused {path:?}: it is {size} bytes, more than the {limit}-byte limit")]
    TooLarge {
        /// The path as given.
        path: String,
        /// The file's size.
        size: u64,
        /// The limit.
        limit: u64,
    },
    /// Any other I/O failure.
    #[error("{path:?}: {reason}")]
    Io {
        /// The path as given.
        path: String,
        /// What the operating system said.
        reason: String,
    },
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
            | Self::Io { path, .. } => path,
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
