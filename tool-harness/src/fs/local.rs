//! [`LocalFileSystem`]: a directory on disk, confined with capability-based lookups.

use std::io::{Read as _, Write as _};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use async_trait::async_trait;
use cap_std::ambient_authority;
use cap_std::fs::{Dir, OpenOptions, OpenOptionsExt as _};

use crate::fs::blocking::run_blocking;
use crate::fs::sandbox_path::{file_relative_to_root, relative_to_root, shown};
use crate::{FileSystem, FsError, SearchError, SearchQuery, SearchReport};

/// The largest file [`LocalFileSystem::read`](FileSystem::read) reads by default: 64 MiB.
pub const DEFAULT_MAX_READ_BYTES: u64 = 64 * 1024 * 1024;

/// A directory on disk as a [`FileSystem`], confined to that directory.
///
/// Every lookup goes through a `cap_std::fs::Dir` handle on the root, so a path is resolved
/// beneath the root component by component (with `openat2(RESOLVE_BENEATH)` where the kernel
/// has it): `..` above the root, absolute symbolic links, and relative links that climb out
/// are refused with [`FsError::OutsideRoot`], symbolic-link loops with
/// [`FsError::SymlinkLoop`]. Paths are checked before that for NUL bytes, non-UTF-8 names and
/// length. Writes are atomic (a temporary file in the same directory, then a rename).
///
/// What it does not stop: see the crate's README ("What the sandbox protects against").
///
/// ```
/// use std::path::Path;
/// use toolsmith_harness::{FileSystem, FsError, LocalFileSystem};
///
/// # futures::executor::block_on(async {
/// let dir = tempfile::tempdir().unwrap();
/// let fs = LocalFileSystem::new(dir.path()).unwrap();
/// fs.write(Path::new("src/main.rs"), b"fn main() {}\n".to_vec()).await.unwrap();
/// assert_eq!(fs.read(Path::new("src/main.rs")).await.unwrap(), b"fn main() {}\n");
///
/// let err = fs.read(Path::new("../../etc/passwd")).await.unwrap_err();
/// assert!(matches!(err, FsError::OutsideRoot { .. }), "{err}");
/// # });
/// ```
#[derive(Debug, Clone)]
pub struct LocalFileSystem {
    inner: Arc<Inner>,
    max_read_bytes: u64,
}

#[derive(Debug)]
struct Inner {
    /// The root as given (absolute), and as the kernel resolves it.
    given_root: PathBuf,
    root: PathBuf,
    dir: Dir,
}

impl LocalFileSystem {
    /// The directory `root` (which must exist) as a file system.
    pub fn new(root: impl AsRef<Path>) -> std::io::Result<Self> {
        let given = root.as_ref();
        let canonical = std::fs::canonicalize(given)?;
        let given_root = std::path::absolute(given)?;
        let dir = Dir::open_ambient_dir(&canonical, ambient_authority())?;
        Ok(Self {
            inner: Arc::new(Inner {
                given_root,
                root: canonical,
                dir,
            }),
            max_read_bytes: DEFAULT_MAX_READ_BYTES,
        })
    }

    /// Sets the largest file `read` accepts (default [`DEFAULT_MAX_READ_BYTES`]).
    #[must_use]
    pub fn with_max_read_bytes(mut self, limit: u64) -> Self {
        self.max_read_bytes = limit;
        self
    }

    /// The root directory, as the kernel resolves it.
    pub fn root(&self) -> &Path {
        &self.inner.root
    }

    /// `path` relative to the root, checked lexically (see [`relative_to_root`]).
    fn relative(&self, path: &Path) -> Result<PathBuf, FsError> {
        relative_to_root(path, Some(self.inner.root_of(path)))
    }

    /// The path of a file to read or write relative to the root, checked lexically (see
    /// [`file_relative_to_root`]).
    fn file_relative(&self, path: &Path) -> Result<PathBuf, FsError> {
        file_relative_to_root(path, Some(self.inner.root_of(path)))
    }
}

impl Inner {
    /// The spelling of the root an absolute `path` starts with: as given, or as resolved.
    fn root_of(&self, path: &Path) -> &Path {
        if path.starts_with(&self.given_root) {
            &self.given_root
        } else {
            &self.root
        }
    }

    fn read(&self, shown_path: &str, relative: &Path, limit: u64) -> Result<Vec<u8>, FsError> {
        let io = |err: std::io::Error| FsError::from_io(shown_path, &err);
        if relative.as_os_str().is_empty() {
            return Err(FsError::IsADirectory {
                path: shown_path.to_owned(),
            });
        }
        // Non-blocking, so that opening a FIFO does not hang; anything not a regular file is
        // refused once open.
        let mut options = OpenOptions::new();
        options.read(true);
        #[cfg(unix)]
        options.custom_flags(libc::O_NONBLOCK);
        let file = self.dir.open_with(relative, &options).map_err(io)?;
        let metadata = file.metadata().map_err(io)?;
        if metadata.is_dir() {
            return Err(FsError::IsADirectory {
                path: shown_path.to_owned(),
            });
        }
        if !metadata.is_file() {
            return Err(FsError::NotARegularFile {
                path: shown_path.to_owned(),
                kind: file_kind(&metadata.file_type()).to_owned(),
            });
        }
        if metadata.len() > limit {
            return Err(FsError::TooLarge {
                path: shown_path.to_owned(),
                size: metadata.len(),
                limit,
            });
        }
        let mut contents = Vec::with_capacity(metadata.len() as usize);
        file.into_std()
            .take(limit + 1)
            .read_to_end(&mut contents)
            .map_err(io)?;
        Ok(contents)
    }

    /// Where a write to `relative` lands: the path itself, or, when it is a symbolic link,
    /// the file it resolves to beneath the root.
    fn write_target(&self, shown_path: &str, relative: &Path) -> Result<PathBuf, FsError> {
        let io = |err: std::io::Error| FsError::from_io(shown_path, &err);
        match self.dir.symlink_metadata(relative) {
            Ok(metadata) if metadata.file_type().is_symlink() => {
                match self.dir.canonicalize(relative) {
                    Ok(target) => Ok(target),
                    Err(err) if err.kind() == std::io::ErrorKind::NotFound => {
                        Err(FsError::Io {
                            path: shown_path.to_owned(),
                            reason: "it is a symbolic link whose target does not exist; write to the target's own path".into(),
                        })
                    }
                    Err(err) => Err(io(err)),
                }
            }
            Ok(metadata) if metadata.is_dir() => Err(FsError::IsADirectory {
                path: shown_path.to_owned(),
            }),
            Ok(_) => Ok(relative.to_owned()),
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(relative.to_owned()),
            Err(err) => Err(io(err)),
        }
    }

    fn write(&self, shown_path: &str, relative: &Path, contents: &[u8]) -> Result<bool, FsError> {
        let io = |err: std::io::Error| FsError::from_io(shown_path, &err);
        let target = self.write_target(shown_path, relative)?;
        let Some(name) = target.file_name().map(ToOwned::to_owned) else {
            return Err(FsError::IsADirectory {
                path: shown_path.to_owned(),
            });
        };
        let parent = target.parent().unwrap_or(Path::new(""));
        let parent_dir = if parent.as_os_str().is_empty() {
            self.dir.try_clone().map_err(io)?
        } else {
            // Both resolve beneath the root: a parent reached through a link that leads out
            // is refused here, before anything is created outside.
            self.dir.create_dir_all(parent).map_err(io)?;
            self.dir.open_dir(parent).map_err(io)?
        };
        let existing = match parent_dir.symlink_metadata(&name) {
            Ok(metadata) if metadata.is_dir() => {
                return Err(FsError::IsADirectory {
                    path: shown_path.to_owned(),
                });
            }
            // A FIFO, device or socket is not replaced by a file, as `read` does not open one.
            Ok(metadata) if !metadata.is_file() => {
                return Err(FsError::NotARegularFile {
                    path: shown_path.to_owned(),
                    kind: file_kind(&metadata.file_type()).to_owned(),
                });
            }
            Ok(metadata) => Some(metadata.permissions()),
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => None,
            Err(err) => return Err(io(err)),
        };

        let temp_name = temporary_name(&name);
        let mut options = OpenOptions::new();
        options.write(true).create_new(true);
        #[cfg(unix)]
        options.mode(0o644);
        let mut file = parent_dir.open_with(&temp_name, &options).map_err(io)?;
        let written = (|| {
            file.write_all(contents)?;
            if let Some(permissions) = existing.clone() {
                file.set_permissions(permissions)?;
            }
            // The data must be on disk before the rename makes it the file's content.
            file.sync_all()?;
            drop(file);
            parent_dir.rename(&temp_name, &parent_dir, &name)
        })();
        if let Err(err) = written {
            let _ = parent_dir.remove_file(&temp_name);
            return Err(io(err));
        }
        Ok(existing.is_none())
    }
}

/// A fresh name for the temporary file of a write to `name`, hidden and recognisable.
fn temporary_name(name: &std::ffi::OsStr) -> std::ffi::OsString {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let count = COUNTER.fetch_add(1, Ordering::Relaxed);
    let mut temp = std::ffi::OsString::from(".");
    // Keep the temporary name within NAME_MAX whatever the target's length.
    let lossy = name.to_string_lossy();
    let stem: String = lossy.chars().take(128).collect();
    temp.push(stem);
    temp.push(format!(".toolsmith-{}-{count}.tmp", std::process::id()));
    temp
}

fn file_kind(file_type: &cap_std::fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use cap_std::fs::FileTypeExt as _;
        if file_type.is_fifo() {
            return "a FIFO";
        }
        if file_type.is_socket() {
            return "a socket";
        }
        if file_type.is_block_device() || file_type.is_char_device() {
            return "a device";
        }
    }
    if file_type.is_symlink() {
        "a symbolic link"
    } else {
        "not a regular file"
    }
}

#[async_trait]
impl FileSystem for LocalFileSystem {
    fn local_root(&self) -> Option<&Path> {
        Some(&self.inner.root)
    }

    async fn read(&self, path: &Path) -> Result<Vec<u8>, FsError> {
        let relative = self.file_relative(path)?;
        let shown_path = shown(path);
        let inner = Arc::clone(&self.inner);
        let limit = self.max_read_bytes;
        run_blocking(move || inner.read(&shown_path, &relative, limit)).await
    }

    async fn write(&self, path: &Path, contents: Vec<u8>) -> Result<bool, FsError> {
        let relative = self.file_relative(path)?;
        let shown_path = shown(path);
        let inner = Arc::clone(&self.inner);
        run_blocking(move || inner.write(&shown_path, &relative, &contents)).await
    }

    async fn search(&self, query: SearchQuery) -> Result<SearchReport, SearchError> {
        let start = match &query.path {
            Some(path) => self.relative(path)?,
            None => PathBuf::new(),
        };
        let inner = Arc::clone(&self.inner);
        run_blocking(move || {
            let dir = &inner.dir;
            // Resolve the starting point beneath the root (a link that leads out is refused),
            // then walk from its real location.
            let start = if start.as_os_str().is_empty() {
                start
            } else {
                let shown_start = shown(query.path.as_deref().unwrap_or(Path::new(".")));
                dir.canonicalize(&start)
                    .map_err(|err| FsError::from_io(&shown_start, &err))?
            };
            crate::fs::search::search_local(dir, &inner.root, &start, &query)
        })
        .await
    }
}
