//! [`WriterLock`]: one [`FileMemory`](crate::FileMemory) at a time over a memory file, in
//! this process or any other.

use std::fs::File;
use std::path::{Path, PathBuf};

use toolsmith_core::ServiceError;

/// An exclusive lock on a memory file, held for as long as the value lives.
///
/// The lock is an `flock` on a file beside the memory's, `NAME.lock`: the memory file itself
/// cannot carry it, as every write replaces it with a new file (a lock on the old one would
/// not stop an opener of the new). `flock` belongs to the open file, so a second open in the
/// same process is refused as one in another process is, and the kernel drops the lock when
/// its holder ends, however it ends. The lock file is left in place when the lock is let go:
/// removing it would let an opener that had just opened it lock a file no longer there,
/// while a third locked a new one.
#[derive(Debug)]
pub(crate) struct WriterLock {
    /// Open for as long as the lock is held.
    file: File,
}

impl Drop for WriterLock {
    /// Lets the lock go at once. Closing the file alone would not while a copy of its
    /// descriptor lives: a child process another thread is spawning holds one from its fork
    /// to its exec, and the lock is the open file's, which every copy shares.
    fn drop(&mut self) {
        // An unlock that fails leaves the close to let the lock go, as before.
        let _ = rustix::fs::flock(&self.file, rustix::fs::FlockOperation::Unlock);
    }
}

impl WriterLock {
    /// Takes the lock of the memory file at `path` (absolute), creating its directory and its
    /// lock file if need be; refused, without waiting, while another holds it.
    pub(crate) fn take(path: &Path) -> Result<Self, ServiceError> {
        let lock_path = lock_path_of(path)?;
        let failed = |err: std::io::Error| {
            ServiceError::new(
                "memory",
                format!(
                    "{}: could not lock it ({}): {err}",
                    path.display(),
                    lock_path.display()
                ),
            )
        };
        if let Some(dir) = lock_path.parent() {
            std::fs::create_dir_all(dir).map_err(failed)?;
        }
        let file = File::options()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&lock_path)
            .map_err(failed)?;
        match rustix::fs::flock(&file, rustix::fs::FlockOperation::NonBlockingLockExclusive) {
            Ok(()) => Ok(Self { file }),
            Err(rustix::io::Errno::WOULDBLOCK) => Err(ServiceError::new(
                "memory",
                format!(
                    "{} is open already, in another FileMemory of this process or another \
                     (a memory file has one writer at a time; the lock is on {})",
                    path.display(),
                    lock_path.display()
                ),
            )),
            Err(errno) => Err(failed(errno.into())),
        }
    }
}

/// The lock file of the memory file at `path`: `NAME.lock` beside it.
fn lock_path_of(path: &Path) -> Result<PathBuf, ServiceError> {
    let Some(name) = path.file_name() else {
        return Err(ServiceError::new(
            "memory",
            format!("{} names no file to keep a memory in", path.display()),
        ));
    };
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
        let lock = WriterLock::take(&path).unwrap();
        let inherited = lock.file.try_clone().unwrap();
        drop(lock);
        let again = WriterLock::take(&path);
        assert!(again.is_ok(), "{again:?}");
        drop(inherited);
    }
}
