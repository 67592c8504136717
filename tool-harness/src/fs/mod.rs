//! File systems the file tools work through: the [`FileSystem`] trait (this file), a confined
//! directory on disk (`local`), an in-memory tree (`in_memory`), the path checks both share
//! (`sandbox_path`), the search behind `search_file` (`search`) and their errors (`error`).
//!
//! [`FileSystem`]: the handle the file tools work through, confined to a root.

pub(crate) mod blocking;
pub(crate) mod error;
pub(crate) mod in_memory;
pub(crate) mod local;
pub(crate) mod read_open;
pub(crate) mod sandbox_path;
pub(crate) mod search;

use std::path::Path;

use async_trait::async_trait;

use crate::{FsError, SearchError, SearchQuery, SearchReport};

/// A file tree the `read`, `write`, `edit` and `search_file` tools work on, shared as
/// `Arc<dyn FileSystem>`.
///
/// Paths are relative to the tree's root; an implementation refuses every path that leads
/// outside it ([`FsError::OutsideRoot`]). Two implementations come with the crate:
/// [`LocalFileSystem`](crate::LocalFileSystem), a directory on disk confined with
/// capability-based (`cap-std`) lookups, and [`InMemoryFileSystem`](crate::InMemoryFileSystem).
///
/// ```
/// use std::path::Path;
/// use std::sync::Arc;
/// use toolsmith::harness::{FileSystem, InMemoryFileSystem};
///
/// # futures::executor::block_on(async {
/// let fs: Arc<dyn FileSystem> = Arc::new(InMemoryFileSystem::new());
/// fs.write(Path::new("notes/todo.md"), b"- ship it\n".to_vec()).await.unwrap();
/// assert_eq!(fs.read(Path::new("notes/todo.md")).await.unwrap(), b"- ship it\n");
/// assert!(fs.read(Path::new("../escape")).await.is_err());
/// # });
/// ```
#[async_trait]
pub trait FileSystem: Send + Sync + std::fmt::Debug {
    /// The directory on disk this tree is, for a local file system (where `bash` runs).
    fn local_root(&self) -> Option<&Path> {
        None
    }

    /// The whole content of the regular file at `path`. A path ending in `/` names a
    /// directory and is refused ([`FsError::InvalidPath`]), as is anything at `path` that is
    /// not a regular file.
    async fn read(&self, path: &Path) -> Result<Vec<u8>, FsError>;

    /// Replaces (or creates) the file at `path` with `contents` atomically: a reader sees the
    /// old content or the new, never a mix, even if the writer dies midway. Parent
    /// directories are created. Returns whether the file was created. A path ending in `/`
    /// is refused ([`FsError::InvalidPath`]), and so is a directory, FIFO, device or socket
    /// at `path` (never replaced by a file).
    async fn write(&self, path: &Path, contents: Vec<u8>) -> Result<bool, FsError>;

    /// Replaces the existing file at `path` with `contents` as [`write`](Self::write) does,
    /// only while it still holds `read`: what the caller read and made `contents` from (an
    /// edit). A file another writer changed or removed since is refused with
    /// [`FsError::ChangedSinceRead`], nothing written, so that the other change is not lost
    /// silently.
    ///
    /// The check compares the file's length, then its bytes, with `read`, just before it is
    /// replaced: [`InMemoryFileSystem`](crate::InMemoryFileSystem) checks and replaces
    /// under one lock; [`LocalFileSystem`](crate::LocalFileSystem) checks once the new
    /// content is written to its temporary, right before the rename (a file system offers
    /// no rename-if-unchanged: a change within that instant is not seen). The provided
    /// method, for a file system of your own, reads the file again and compares before it
    /// calls `write`; override it to check closer to the replacement.
    ///
    /// ```
    /// use std::path::Path;
    /// use toolsmith::harness::{FileSystem, FsError, InMemoryFileSystem};
    ///
    /// # futures::executor::block_on(async {
    /// let fs = InMemoryFileSystem::new().with_file("notes.md", "- one\n");
    /// let read = fs.read(Path::new("notes.md")).await.unwrap();
    /// // Another writer adds a line meanwhile.
    /// fs.write(Path::new("notes.md"), b"- one\n- two\n".to_vec()).await.unwrap();
    /// let err = fs
    ///     .replace_if_unchanged(Path::new("notes.md"), &read, b"- 1\n".to_vec())
    ///     .await
    ///     .unwrap_err();
    /// assert!(matches!(err, FsError::ChangedSinceRead { .. }), "{err}");
    /// assert_eq!(fs.read(Path::new("notes.md")).await.unwrap(), b"- one\n- two\n");
    /// # });
    /// ```
    async fn replace_if_unchanged(
        &self,
        path: &Path,
        read: &[u8],
        contents: Vec<u8>,
    ) -> Result<(), FsError> {
        let now = match self.read(path).await {
            Ok(now) => now,
            Err(FsError::NotFound { .. }) => return Err(changed_since_read(path)),
            Err(err) => return Err(err),
        };
        if now != read {
            return Err(changed_since_read(path));
        }
        self.write(path, contents).await.map(drop)
    }

    /// Searches the files below `query.path` (the root when absent) for lines matching a
    /// regular expression, skipping what ignore files (`.gitignore`, `.ignore`,
    /// `.git/info/exclude`) and hidden names exclude (whatever the glob says). A file named by `query.path` itself is searched whatever they and the
    /// glob say, as ripgrep searches a file it is given. A glob with a `..` segment or a
    /// leading `/` would match nothing below `query.path` and is refused
    /// ([`SearchError::InvalidGlob`]).
    async fn search(&self, query: SearchQuery) -> Result<SearchReport, SearchError>;
}

/// The refusal of a replacement of `path`, which changed since it was read.
pub(crate) fn changed_since_read(path: &Path) -> FsError {
    FsError::ChangedSinceRead {
        path: sandbox_path::shown(path),
    }
}
