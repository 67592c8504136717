//! [`LocalFileSystem`]: a directory on disk, confined with capability-based lookups.

use std::ffi::OsString;
use std::io::{Read as _, Write as _};
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use async_trait::async_trait;
use cap_std::ambient_authority;
use cap_std::fs::{Dir, FileType, OpenOptions, OpenOptionsExt as _};

use crate::fs::blocking::run_blocking;
use crate::fs::error::file_in_the_way;
use crate::fs::read_open::open_to_read;
use crate::fs::sandbox_path::{file_relative_to_root, relative_to_root, shown};
use crate::fs::search::SearchStop;
use crate::{FileSystem, FsError, SearchError, SearchQuery, SearchReport};

/// The largest file [`LocalFileSystem::read`](FileSystem::read) reads by default: 64 MiB.
pub const DEFAULT_MAX_READ_BYTES: u64 = 64 * 1024 * 1024;

/// The most symbolic links one lookup follows (Linux's own limit).
const MAX_LINK_HOPS: usize = 40;

/// A directory on disk as a [`FileSystem`], confined to that directory.
///
/// Every lookup goes through a `cap_std::fs::Dir` handle on the root, so a path is resolved
/// beneath the root component by component (with `openat2(RESOLVE_BENEATH)` where the kernel
/// has it). Symbolic links are followed one at a time beneath the root: an absolute link
/// whose target lies beneath the root (as given or as the kernel resolves it) is taken
/// relative to the root; `..` above the root, and a link whose target leads out, are refused
/// with [`FsError::OutsideRoot`] (naming the link and its target), loops and chains of more
/// than 40 links with [`FsError::SymlinkLoop`]. Paths are checked before that for NUL bytes,
/// non-UTF-8 names and length, and a path to read or write must not end in `/`. Only regular
/// files are read or written (a FIFO, a device or a socket is refused). Writes are atomic (a
/// temporary file in the same directory, then a rename). `search` reads the ignore files
/// (`.gitignore`, `.ignore`, `.git/info/exclude`) through the same handle: one that is a link
/// leading out of the root, anything but a regular file, larger than 256 KiB or holding more
/// than 5,000 patterns is taken as absent, and so are those met once the search has compiled
/// 20,000 patterns (or 2 MiB of them) from the others. A search walks on a blocking thread,
/// and stops soon after its future is dropped (a time limit, a cancelled batch or run) or its
/// call's [token](toolsmith_core::ToolCallContext::cancellation) is cancelled: then, if
/// awaited still, it is an error ([`FsError::Io`], "not done: the search was stopped").
///
/// What it does not stop: see the crate's README ("What the sandbox protects against").
///
/// ```
/// use std::path::Path;
/// use toolsmith::harness::{FileSystem, FsError, LocalFileSystem};
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

/// One name still to look up, and the link whose target it comes from (an index into the
/// links followed), if any.
struct Pending {
    name: OsString,
    from_link: Option<usize>,
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

    /// `relative` (checked lexically: plain names only) with every symbolic link on its way
    /// replaced by its target, and the last name's too when `follow_last`: the same place as
    /// a path beneath the root with no link in it, as things stood during the lookup (a
    /// missing name is kept as it is, for a write to create).
    ///
    /// cap-std refuses every absolute link; here one whose target lies beneath the root is
    /// taken relative to the root. An absolute target is judged by how it is written: it must
    /// start with the root's path, as given or as resolved. A target that leads out is
    /// refused with [`FsError::OutsideRoot`] naming the link (relative to the root) and where
    /// it points; more than [`MAX_LINK_HOPS`] links is [`FsError::SymlinkLoop`]. Every
    /// lookup still goes through the root's handle, so a link swapped in meanwhile is
    /// refused by cap-std rather than followed out.
    fn resolve(
        &self,
        shown_path: &str,
        relative: &Path,
        follow_last: bool,
    ) -> Result<PathBuf, FsError> {
        let io = |err: std::io::Error| FsError::from_io(shown_path, &err);
        let leads_out = |link: &Path, target: &Path, why: String| FsError::OutsideRoot {
            path: shown_path.to_owned(),
            reason: format!("the symbolic link {link:?} points to {target:?}, {why}"),
        };
        // The names still to look up, the next one last.
        let mut pending: Vec<Pending> = Vec::new();
        let push_all = |pending: &mut Vec<Pending>, path: &Path, from_link: Option<usize>| {
            let names: Vec<Pending> = path
                .components()
                .filter_map(|component| match component {
                    Component::Normal(name) => Some(name.to_owned()),
                    Component::ParentDir => Some(OsString::from("..")),
                    // `.` changes nothing; a root or prefix was stripped by the caller.
                    Component::CurDir | Component::RootDir | Component::Prefix(_) => None,
                })
                .map(|name| Pending { name, from_link })
                .collect();
            pending.extend(names.into_iter().rev());
        };
        push_all(&mut pending, relative, None);
        // The links followed so far: (the link, relative to the root; its target).
        let mut links: Vec<(PathBuf, PathBuf)> = Vec::new();
        let mut resolved = PathBuf::new();
        // Whether a name in `resolved` does not exist: `..` cannot climb back out of it.
        let mut missing = false;
        while let Some(Pending { name, from_link }) = pending.pop() {
            if name == ".." {
                if missing {
                    return Err(FsError::NotFound {
                        path: shown_path.to_owned(),
                    });
                }
                if !resolved.pop() {
                    return Err(match from_link {
                        Some(index) => {
                            let (link, target) = &links[index];
                            leads_out(link, target, "which leads above the root".into())
                        }
                        // The path itself was checked lexically, so this is not reached.
                        None => FsError::OutsideRoot {
                            path: shown_path.to_owned(),
                            reason: "'..' leads above the root".into(),
                        },
                    });
                }
                continue;
            }
            let candidate = resolved.join(&name);
            if pending.is_empty() && !follow_last {
                resolved = candidate;
                break;
            }
            let is_link = match self.dir.symlink_metadata(&candidate) {
                Ok(metadata) => metadata.file_type().is_symlink(),
                Err(err) if err.kind() == std::io::ErrorKind::NotFound => {
                    missing = true;
                    false
                }
                // Each name of `resolved` was looked up on the way: the last is in the way.
                Err(err) => return Err(self.lookup_error(shown_path, &resolved, &err)),
            };
            if !is_link {
                resolved = candidate;
                continue;
            }
            if links.len() >= MAX_LINK_HOPS {
                return Err(FsError::SymlinkLoop {
                    path: shown_path.to_owned(),
                });
            }
            let target = self.dir.read_link_contents(&candidate).map_err(io)?;
            let index = links.len();
            if target.has_root() {
                let Some(inside) = [&self.root, &self.given_root]
                    .into_iter()
                    .find_map(|root| target.strip_prefix(root).ok())
                else {
                    let why = format!("which is outside the root {}", self.root.display());
                    return Err(leads_out(&candidate, &target, why));
                };
                // Taken from the root: what the link names beneath it.
                push_all(&mut pending, inside, Some(index));
                resolved = PathBuf::new();
            } else {
                // Relative to the directory holding the link, `resolved`.
                push_all(&mut pending, &target, Some(index));
            }
            links.push((candidate, target));
        }
        Ok(resolved)
    }

    fn read(&self, shown_path: &str, relative: &Path, limit: u64) -> Result<Vec<u8>, FsError> {
        let io = |err: std::io::Error| FsError::from_io(shown_path, &err);
        let relative = self.resolve(shown_path, relative, true)?;
        if relative.as_os_str().is_empty() {
            return Err(FsError::IsADirectory {
                path: shown_path.to_owned(),
            });
        }
        // What is there when it is not a regular file: a directory, or what kind it is.
        let refused = |file_type: FileType| {
            if file_type.is_dir() {
                FsError::IsADirectory {
                    path: shown_path.to_owned(),
                }
            } else {
                FsError::NotARegularFile {
                    path: shown_path.to_owned(),
                    kind: file_kind(&file_type).to_owned(),
                }
            }
        };
        // Judged before it is opened: opening a socket fails (ENXIO) as if an I/O error, and
        // opening a device may act on it.
        match self.dir.symlink_metadata(&relative) {
            // A link swapped in since the lookup is resolved beneath the root by the open.
            Ok(metadata) if metadata.is_file() || metadata.file_type().is_symlink() => {}
            Ok(metadata) => return Err(refused(metadata.file_type())),
            Err(err) => return Err(io(err)),
        }
        // Non-blocking, so that opening a FIFO swapped in meanwhile does not hang; anything
        // not a regular file is refused once open too.
        let file = open_to_read(&self.dir, &relative).map_err(io)?;
        let metadata = file.metadata().map_err(io)?;
        if !metadata.is_file() {
            return Err(refused(metadata.file_type()));
        }
        if metadata.len() > limit {
            return Err(FsError::TooLarge {
                path: shown_path.to_owned(),
                size: metadata.len(),
                limit,
            });
        }
        read_checked_file(shown_path, &file.into_std(), metadata.len(), limit)
    }

    /// Where a write to `relative` lands, with no link on the way: the path itself, or, when
    /// it is a symbolic link, the file it resolves to beneath the root.
    fn write_target(&self, shown_path: &str, relative: &Path) -> Result<PathBuf, FsError> {
        let io = |err: std::io::Error| FsError::from_io(shown_path, &err);
        let path = self.resolve(shown_path, relative, false)?;
        match self.dir.symlink_metadata(&path) {
            Ok(metadata) if metadata.file_type().is_symlink() => {
                let target = self.resolve(shown_path, &path, true)?;
                match self.dir.symlink_metadata(&target) {
                    Ok(_) => Ok(target),
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
            Ok(_) => Ok(path),
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(path),
            Err(err) => {
                Err(self.lookup_error(shown_path, path.parent().unwrap_or(Path::new("")), &err))
            }
        }
    }

    /// The error of a lookup beneath `parent` (relative to the root, each name of it looked
    /// up): when `parent` is a file, one naming it, as an [`InMemoryFileSystem`]'s does; the
    /// OS's word otherwise.
    ///
    /// [`InMemoryFileSystem`]: crate::InMemoryFileSystem
    fn lookup_error(&self, shown_path: &str, parent: &Path, err: &std::io::Error) -> FsError {
        if err.kind() == std::io::ErrorKind::NotADirectory
            && !parent.as_os_str().is_empty()
            && self
                .dir
                .symlink_metadata(parent)
                .is_ok_and(|metadata| metadata.is_file())
        {
            return file_in_the_way(shown_path, parent);
        }
        FsError::from_io(shown_path, err)
    }

    /// Writes `contents` to `relative` through a temporary and a rename; with `read`, only
    /// over a regular file that still holds `read` just before the rename.
    fn write(
        &self,
        shown_path: &str,
        relative: &Path,
        contents: &[u8],
        read: Option<&[u8]>,
    ) -> Result<bool, FsError> {
        let io = |err: std::io::Error| FsError::from_io(shown_path, &err);
        let changed = || FsError::ChangedSinceRead {
            path: shown_path.to_owned(),
        };
        let target = self.write_target(shown_path, relative)?;
        let Some(name) = target.file_name().map(ToOwned::to_owned) else {
            return Err(FsError::IsADirectory {
                path: shown_path.to_owned(),
            });
        };
        let parent = target.parent().unwrap_or(Path::new(""));
        let parent_dir = if parent.as_os_str().is_empty() {
            self.dir.try_clone().map_err(io)?
        } else if read.is_some() {
            // A replacement of a file read: its directory removed since, as the file was,
            // is not made again.
            self.dir.open_dir(parent).map_err(|err| match err.kind() {
                std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory => changed(),
                _ => io(err),
            })?
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
            // Removed since it was read: not made again.
            Err(err) if err.kind() == std::io::ErrorKind::NotFound && read.is_some() => {
                return Err(changed());
            }
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
            // Checked last, the temporary ready: the nearest to the rename it can be.
            if let Some(read) = read
                && !holds(&parent_dir, &name, read)?
            {
                return Ok(false);
            }
            parent_dir.rename(&temp_name, &parent_dir, &name)?;
            Ok(true)
        })();
        match written {
            Ok(true) => Ok(existing.is_none()),
            Ok(false) => {
                let _ = parent_dir.remove_file(&temp_name);
                Err(changed())
            }
            Err(err) => {
                let _ = parent_dir.remove_file(&temp_name);
                Err(io(err))
            }
        }
    }
}

/// Whether `name` in `dir` is a regular file holding exactly `expected`: its length is
/// compared first, then its bytes, a block at a time. Gone, or anything but a regular file,
/// it does not.
fn holds(dir: &Dir, name: &std::ffi::OsStr, expected: &[u8]) -> std::io::Result<bool> {
    let metadata = match dir.symlink_metadata(name) {
        Ok(metadata) => metadata,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(false),
        Err(err) => return Err(err),
    };
    if !metadata.is_file() || metadata.len() != expected.len() as u64 {
        return Ok(false);
    }
    let mut file = open_to_read(dir, Path::new(name))?.into_std();
    let mut block = vec![0; (64 * 1024).min(expected.len() + 1)];
    let mut compared = 0;
    loop {
        let count = match file.read(&mut block) {
            Ok(count) => count,
            Err(err) if err.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(err) => return Err(err),
        };
        if count == 0 {
            return Ok(compared == expected.len());
        }
        match expected.get(compared..compared + count) {
            Some(part) if *part == block[..count] => compared += count,
            // Different, or longer than it was a moment ago.
            _ => return Ok(false),
        }
    }
}

/// A fresh name for the temporary file of a write to `name`, hidden and recognisable.
fn temporary_name(name: &std::ffi::OsStr) -> std::ffi::OsString {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let count = COUNTER.fetch_add(1, Ordering::Relaxed);
    let mut temp = std::ffi::OsString::from(".");
    // Keep the temporary name within NAME_MAX (255 bytes) whatever the target's length:
    // a dot, at most 200 bytes of the name (cut at a character), and the suffix.
    let lossy = name.to_string_lossy();
    let end = lossy
        .char_indices()
        .map(|(at, c)| at + c.len_utf8())
        .take_while(|&end| end <= 200)
        .last()
        .unwrap_or(0);
    let stem = &lossy[..end];
    temp.push(stem);
    temp.push(format!(".toolsmith-{}-{count}.tmp", std::process::id()));
    temp
}

/// The content of `file`, whose size was `checked_size` (at most `limit`) when it was checked.
/// The file may have grown since: one byte past the limit is read, to tell, and a file
/// grown past it is refused as too large (it was returned, `limit + 1` bytes of it).
fn read_checked_file(
    shown_path: &str,
    mut file: &std::fs::File,
    checked_size: u64,
    limit: u64,
) -> Result<Vec<u8>, FsError> {
    let io = |err: std::io::Error| FsError::from_io(shown_path, &err);
    let mut contents = Vec::with_capacity(checked_size.min(limit) as usize);
    (&mut file)
        .take(limit.saturating_add(1))
        .read_to_end(&mut contents)
        .map_err(io)?;
    let read = contents.len() as u64;
    if read > limit {
        // Its size now, which is more than was read unless it shrank back meanwhile.
        let size = file.metadata().map_or(read, |now| now.len().max(read));
        return Err(FsError::TooLarge {
            path: shown_path.to_owned(),
            size,
            limit,
        });
    }
    Ok(contents)
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
        let cancelled_path = shown_path.clone();
        run_blocking(
            move || inner.read(&shown_path, &relative, limit),
            |cancelled| FsError::cancelled(cancelled_path, cancelled),
        )
        .await
    }

    async fn write(&self, path: &Path, contents: Vec<u8>) -> Result<bool, FsError> {
        let relative = self.file_relative(path)?;
        let shown_path = shown(path);
        let inner = Arc::clone(&self.inner);
        let cancelled_path = shown_path.clone();
        run_blocking(
            move || inner.write(&shown_path, &relative, &contents, None),
            |cancelled| FsError::cancelled(cancelled_path, cancelled),
        )
        .await
    }

    async fn replace_if_unchanged(
        &self,
        path: &Path,
        read: &[u8],
        contents: Vec<u8>,
    ) -> Result<(), FsError> {
        let relative = self.file_relative(path)?;
        let shown_path = shown(path);
        let inner = Arc::clone(&self.inner);
        let read = read.to_vec();
        let cancelled_path = shown_path.clone();
        run_blocking(
            move || inner.write(&shown_path, &relative, &contents, Some(&read)),
            |cancelled| FsError::cancelled(cancelled_path, cancelled),
        )
        .await
        .map(drop)
    }

    async fn search(&self, query: SearchQuery) -> Result<SearchReport, SearchError> {
        self.search_until(query, SearchStop::for_current_call())
            .await
    }
}

impl LocalFileSystem {
    /// [`search`](FileSystem::search), whose walk stops soon after `stop` is set, or after
    /// this future is dropped (it sets `stop` then): the walk runs on a blocking thread,
    /// which the future's end would not stop.
    async fn search_until(
        &self,
        query: SearchQuery,
        stop: SearchStop,
    ) -> Result<SearchReport, SearchError> {
        let _stop_when_dropped = stop.set_on_drop();
        let start = match &query.path {
            Some(path) => self.relative(path)?,
            None => PathBuf::new(),
        };
        let inner = Arc::clone(&self.inner);
        let cancelled_path = query.shown_path();
        run_blocking(
            move || {
                let dir = &inner.dir;
                // Resolve the starting point beneath the root (a link that leads out is refused),
                // then walk from its real location.
                let start = if start.as_os_str().is_empty() {
                    start
                } else {
                    let shown_start = query.shown_path();
                    let resolved = inner.resolve(&shown_start, &start, true)?;
                    // A link to the root itself resolves to the root: nothing to look up.
                    if !resolved.as_os_str().is_empty() {
                        dir.symlink_metadata(&resolved)
                            .map_err(|err| FsError::from_io(&shown_start, &err))?;
                    }
                    resolved
                };
                crate::fs::search::search_local(dir, &inner.root, &start, &query, &stop)
            },
            |cancelled| FsError::cancelled(cancelled_path, cancelled).into(),
        )
        .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use std::time::{Duration, Instant};

    use toolsmith_core::{CancellationToken, ToolCallContext};

    /// A tree of `files` files that do not match "never-there", in directories of 100.
    fn tree_of(files: usize) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        let text = "a line of text that the pattern does not match\n".repeat(40);
        for n in 0..files {
            let directory = dir.path().join(format!("d{}", n / 100));
            std::fs::create_dir_all(&directory).unwrap();
            std::fs::write(directory.join(format!("f{n}.txt")), &text).unwrap();
        }
        dir
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_dropped_search_stops_its_walk() {
        // The walk ran on a blocking thread with nothing to stop it: a search dropped by a
        // time limit went on through the whole tree, holding that thread.
        const FILES: usize = 4000;
        let dir = tree_of(FILES);
        let fs = LocalFileSystem::new(dir.path()).unwrap();
        let stop = SearchStop::default();
        // Held at its first file until dropped, so that it cannot end first on a busy machine.
        stop.gate.close();
        let search = fs.search_until(SearchQuery::new("never-there"), stop.clone());
        tokio::select! {
            _ = search => panic!("the search ended though held at its first file"),
            () = stop.first_file_started() => {}
        }
        // Dropped: the walk goes on from the gate only to see that it is to stop.
        stop.gate.open();
        // The blocking work holds a handle on the file system until it ends.
        let deadline = Instant::now() + Duration::from_secs(300);
        while Arc::strong_count(&fs.inner) > 1 {
            assert!(Instant::now() < deadline, "the walk is still going");
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        let started = stop.files_started.load(Ordering::Relaxed);
        assert!(
            started < FILES,
            "the walk searched all {started} files after its search was dropped"
        );
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_search_whose_call_is_cancelled_stops_with_an_error() {
        // The call's token was not looked at: a cancelled call's search went on to the end
        // (and reported the whole tree) for as long as its future was awaited.
        let dir = tree_of(4000);
        let fs = LocalFileSystem::new(dir.path()).unwrap();
        let token = CancellationToken::new();
        let context = ToolCallContext::new("call-1", "search_file", token.clone());
        let search = context.scope(fs.search(SearchQuery::new("never-there")));
        let canceller = tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(5)).await;
            token.cancel();
        });
        let outcome = tokio::time::timeout(Duration::from_secs(300), search)
            .await
            .expect("the search is still going");
        canceller.await.unwrap();
        let err = outcome.unwrap_err();
        assert_eq!(
            err.to_string(),
            "\".\": not done: the search was stopped (its call was cancelled or timed out)"
        );
    }

    #[test]
    fn a_file_grown_past_the_limit_after_its_check_is_refused_as_too_large() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("growing.log");
        std::fs::write(&path, b"0123456789").unwrap();
        let file = std::fs::File::open(&path).unwrap();
        let checked_size = file.metadata().unwrap().len();
        assert_eq!(checked_size, 10, "at the limit: it passes the check");
        // Another writer appends between the check and the read.
        std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap()
            .write_all(b"more")
            .unwrap();
        let err = read_checked_file("growing.log", &file, checked_size, 10).unwrap_err();
        assert!(
            matches!(
                &err,
                FsError::TooLarge { path, size: 14, limit: 10 } if path == "growing.log"
            ),
            "{err:?}"
        );
        assert_eq!(
            err.to_string(),
            "refused \"growing.log\": it is 14 bytes, more than the 10-byte limit"
        );

        // Grown within the limit, it is read whole, as it is now.
        let file = std::fs::File::open(&path).unwrap();
        assert_eq!(
            read_checked_file("growing.log", &file, checked_size, 14).unwrap(),
            b"0123456789more"
        );
    }

    #[test]
    fn holds_compares_length_then_every_block() {
        let dir = tempfile::tempdir().unwrap();
        let root = Dir::open_ambient_dir(dir.path(), ambient_authority()).unwrap();
        // Over one block (64 KiB), so that a difference in a later block is compared too.
        let big: Vec<u8> = (0..200_000u32).map(|n| (n % 251) as u8).collect();
        std::fs::write(dir.path().join("big"), &big).unwrap();
        std::fs::write(dir.path().join("empty"), b"").unwrap();
        std::fs::create_dir(dir.path().join("sub")).unwrap();
        let mut last_differs = big.clone();
        *last_differs.last_mut().unwrap() ^= 1;
        let holds = |name: &str, expected: &[u8]| holds(&root, name.as_ref(), expected).unwrap();
        assert!(holds("big", &big));
        assert!(
            !holds("big", &last_differs),
            "the same length, the last byte differs"
        );
        assert!(!holds("big", &big[..big.len() - 1]), "shorter");
        assert!(holds("empty", b""));
        assert!(!holds("empty", b"x"));
        assert!(!holds("missing", b""), "gone");
        assert!(!holds("sub", b""), "a directory");
    }
}
