//! [`WriterLock`]: one [`FileMemory`](crate::FileMemory) at a time over a memory file, in
//! this process or any other, under any of the file's names.

use std::fs::File;
use std::os::unix::fs::OpenOptionsExt as _;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};

use rustix::fs::FlockOperation;
use toolsmith_core::ServiceError;

/// An exclusive `flock` on an open file, let go when the value is dropped.
#[derive(Debug)]
struct Flock {
    /// Open for as long as the lock is held.
    file: File,
}

impl Drop for Flock {
    /// Lets the lock go at once. Closing the file alone would not while a copy of its
    /// descriptor lives: a child process another thread is spawning holds one from its fork
    /// to its exec, and the lock is the open file's, which every copy shares.
    fn drop(&mut self) {
        // An unlock that fails leaves the close to let the lock go, as before.
        let _ = rustix::fs::flock(&self.file, FlockOperation::Unlock);
    }
}

impl Flock {
    /// Locks `file` without waiting; `Ok(None)` while another holds it.
    fn try_lock(file: File) -> std::io::Result<Option<Self>> {
        match rustix::fs::flock(&file, FlockOperation::NonBlockingLockExclusive) {
            Ok(()) => Ok(Some(Self { file })),
            Err(rustix::io::Errno::WOULDBLOCK) => Ok(None),
            Err(errno) => Err(errno.into()),
        }
    }
}

/// An exclusive lock on a memory file, held for as long as the value lives.
///
/// Two `flock`s make it. One is on a file beside the memory's, `NAME.lock`: it stands for the
/// name, and so for a memory file not written yet. The other is on the memory file itself,
/// which every name of it (hard links) opens: it stands for the file's identity (its device
/// and inode). Every write replaces the memory file with a new one, which is locked before it
/// takes the name ([`lock_new_file`](Self::lock_new_file), then [`hold`](Self::hold)), so the
/// lock follows the file and a name linked to it later finds it held.
///
/// `flock` belongs to the open file, so a second open in the same process is refused as one
/// in another process is, and the kernel drops the lock when its holder ends, however it
/// ends. The lock file is left in place when the lock is let go: removing it would let an
/// opener that had just opened it lock a file no longer there, while a third locked a new
/// one.
#[derive(Debug)]
pub(crate) struct WriterLock {
    /// The lock on `NAME.lock`, held and never read.
    _by_name: Flock,
    /// The lock on the memory file as last read or written; none before it exists.
    by_identity: Mutex<Option<Flock>>,
}

impl WriterLock {
    /// Takes the lock of the memory file at `path` (absolute), creating its directory and its
    /// lock file if need be; refused, without waiting, while another holds it under this name
    /// or another.
    pub(crate) fn take(path: &Path) -> Result<Self, ServiceError> {
        let lock_path = lock_path_of(path)?;
        let failed = |err: std::io::Error| {
            ServiceError::with_source(
                "memory",
                format!(
                    "{}: could not lock it ({}): {err}",
                    path.display(),
                    lock_path.display()
                ),
                err,
            )
        };
        if let Some(dir) = lock_path.parent() {
            std::fs::create_dir_all(dir).map_err(failed)?;
        }
        let lock_file = File::options()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&lock_path)
            .map_err(failed)?;
        let Some(by_name) = Flock::try_lock(lock_file).map_err(failed)? else {
            return Err(ServiceError::new(
                "memory",
                format!(
                    "{} is open already, in another FileMemory of this process or another \
                     (a memory file has one writer at a time; the lock is on {})",
                    path.display(),
                    lock_path.display()
                ),
            ));
        };
        // Without waiting: a named pipe there would hold the open until a writer came.
        let opened = File::options()
            .read(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(path);
        let by_identity = match opened {
            Ok(file) => {
                let failed = |err: std::io::Error| {
                    ServiceError::with_source(
                        "memory",
                        format!("{}: could not lock it: {err}", path.display()),
                        err,
                    )
                };
                if !file.metadata().map_err(failed)?.is_file() {
                    return Err(ServiceError::new(
                        "memory",
                        format!(
                            "{} is not a regular file; a memory file must be one",
                            path.display()
                        ),
                    ));
                }
                let Some(lock) = Flock::try_lock(file).map_err(failed)? else {
                    return Err(ServiceError::new(
                        "memory",
                        format!(
                            "{} is open already under another name (a hard link to the same \
                             file), in another FileMemory of this process or another (a memory \
                             file has one writer at a time)",
                            path.display()
                        ),
                    ));
                };
                Some(lock)
            }
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => None,
            Err(err) => {
                return Err(ServiceError::with_source(
                    "memory",
                    format!("{}: {err}", path.display()),
                    err,
                ));
            }
        };
        Ok(Self {
            _by_name: by_name,
            by_identity: Mutex::new(by_identity),
        })
    }

    /// Calls `read` with the memory file as it was locked (at its start), if it existed.
    pub(crate) fn read_file<R>(&self, read: impl FnOnce(&File) -> R) -> Option<R> {
        let held = self
            .by_identity
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        held.as_ref().map(|lock| read(&lock.file))
    }

    /// Locks `file`, a new memory file about to replace the current one: locked before it
    /// takes the name, it is never a file of that name that an opener finds free.
    pub(crate) fn lock_new_file(file: &File) -> std::io::Result<()> {
        // A file just made, which no other has locked: this does not wait.
        rustix::fs::flock(file, FlockOperation::LockExclusive).map_err(Into::into)
    }

    /// Holds `file`, locked by [`lock_new_file`](Self::lock_new_file) and now the memory
    /// file, in place of the one it replaced (whose lock goes).
    pub(crate) fn hold(&self, file: File) {
        let mut held = self
            .by_identity
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        *held = Some(Flock { file });
    }
}

/// The lock file of the memory file at `path`: `NAME.lock` beside it. Refused for a path
/// that names no file: one ending in `..` or `/` (which `file_name` reads past, so that the
/// lock would be taken and every write would fail, the rename onto a name that must be a
/// directory).
fn lock_path_of(path: &Path) -> Result<PathBuf, ServiceError> {
    let Some(name) = path.file_name() else {
        return Err(ServiceError::new(
            "memory",
            format!("{} names no file to keep a memory in", path.display()),
        ));
    };
    if path.as_os_str().as_encoded_bytes().ends_with(b"/") {
        return Err(ServiceError::new(
            "memory",
            format!(
                "{} ends with /, so it names a directory; a memory is kept in a file (write \
                 its path without the final /)",
                path.display()
            ),
        ));
    }
    let mut lock_name = name.to_owned();
    lock_name.push(".lock");
    Ok(path.with_file_name(lock_name))
}

#[cfg(test)]
mod tests {
    use super::WriterLock;

    #[test]
    fn a_lock_let_go_is_free_though_a_copy_of_its_descriptor_lives_on() {
        // A child process spawned by another thread holds a copy of every descriptor from its
        // fork to its exec; the copy shares the lock. A drop that only closed its own
        // descriptor left the lock held that long, and an open just after was refused.
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("memory.json");
        std::fs::write(&path, "{}").unwrap();
        let lock = WriterLock::take(&path).unwrap();
        let inherited = lock._by_name.file.try_clone().unwrap();
        let inherited_file = lock.read_file(|file| file.try_clone().unwrap()).unwrap();
        drop(lock);
        let again = WriterLock::take(&path);
        assert!(again.is_ok(), "{again:?}");
        drop((inherited, inherited_file));
    }
}
