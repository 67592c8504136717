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

    /// Searches the files below `query.path` (the root when absent) for lines matching a
    /// regular expression, skipping what ignore files (`.gitignore`, `.ignore`,
    /// `.git/info/exclude`) and hidden names exclude (whatever the glob says). A file named by `query.path` itself is searched whatever they and the
    /// glob say, as ripgrep searches a file it is given. A glob with a `..` segment or a
    /// leading `/` would match nothing below `query.path` and is refused
    /// ([`SearchError::InvalidGlob`]).
    async fn search(&self, query: SearchQuery) -> Result<SearchReport, SearchError>;
}
