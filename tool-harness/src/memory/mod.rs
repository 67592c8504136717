//! [`FileMemory`]: working facts ([`MemoryAccess`]) in a JSON file written atomically, one
//! [`FileMemory`] at a time over a file (`writer_lock`). The in-memory store is the core's
//! [`InMemoryMemory`](toolsmith_core::in_memory::InMemoryMemory).

mod write_temporaries;
mod writer_lock;

use std::fs::File;
use std::io::{Read as _, Write as _};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use toolsmith_core::{MemoryAccess, MemoryFact, ServiceError, Versioned};

use crate::fs::blocking::run_blocking;
use crate::memory::writer_lock::WriterLock;

/// The facts and counters every store keeps.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
struct Facts {
    /// Writes so far.
    version: u64,
    /// The id the next fact gets.
    next_id: u64,
    facts: Vec<MemoryFact>,
}

impl Facts {
    /// Adds a fact under the next id; `None` when every id has been given (a file's counter
    /// may be at its end), as an id is never given twice.
    fn add(&mut self, text: String) -> Option<MemoryFact> {
        self.next_id = self.next_id.checked_add(1)?;
        let fact = MemoryFact {
            id: self.next_id,
            text,
        };
        self.facts.push(fact.clone());
        self.bump();
        Some(fact)
    }

    /// Counts a write; a count at its end (a file's) stays there.
    fn bump(&mut self) {
        self.version = self.version.saturating_add(1);
    }

    fn remove(&mut self, id: u64) -> bool {
        let before = self.facts.len();
        self.facts.retain(|fact| fact.id != id);
        let removed = self.facts.len() != before;
        if removed {
            self.bump();
        }
        removed
    }

    fn replace(&mut self, id: u64, text: String) -> bool {
        match self.facts.iter_mut().find(|fact| fact.id == id) {
            Some(fact) => {
                fact.text = text;
                self.bump();
                true
            }
            None => false,
        }
    }

    /// `value`, what a write just made returned, with the version the facts are at.
    fn versioned<T>(&self, value: T) -> Versioned<T> {
        Versioned {
            value,
            version: self.version,
        }
    }
}

/// Working memory kept in a JSON file: every write replaces the file atomically (a temporary
/// file in the same directory, synced, then renamed), so the file always holds one complete
/// version, and reopening it gives back the facts, ids and version. The file keeps its
/// permissions across writes; one made by the first write is its owner's alone (0600).
///
/// One `FileMemory` at a time has a file (its clones share it): while it lives, another
/// [`open`](Self::open) of the same file, in this process or another, under the same name or
/// another (a hard link), is refused, as the two would each write their own facts over the
/// other's. The lock is an `flock` on `NAME.lock` beside the file and one on the file itself
/// (each write's new file is locked before it takes the name), let go when the last clone is
/// dropped (or the process ends); the lock file stays.
///
/// A file is read whole when it is opened, up to [`DEFAULT_MAX_BYTES`](Self::DEFAULT_MAX_BYTES)
/// ([`open_with_max_bytes`](Self::open_with_max_bytes) sets another limit); a larger one is
/// refused, and so is a write that would make the file larger, so that it can be opened
/// again.
///
/// Reads ([`facts`](MemoryAccess::facts), [`version`](MemoryAccess::version)) never wait for
/// a write's disk I/O: they see the state of the last write that reached the file. Writes
/// wait for one another, off the async executor's threads, and reach the file in the order
/// they apply.
///
/// ```
/// use toolsmith::MemoryAccess;
/// use toolsmith::harness::FileMemory;
///
/// # futures::executor::block_on(async {
/// let dir = tempfile::tempdir().unwrap();
/// let path = dir.path().join("memory.json");
/// let memory = FileMemory::open(&path).unwrap();
/// memory.add("deploys happen on Fridays".into()).await.unwrap();
/// drop(memory);
///
/// let reopened = FileMemory::open(&path).unwrap();
/// assert_eq!(reopened.facts().await.unwrap()[0].text, "deploys happen on Fridays");
/// assert_eq!(reopened.version(), 1);
/// // While it is open, the file has no second writer.
/// assert!(FileMemory::open(&path).is_err());
/// # });
/// ```
#[derive(Debug, Clone)]
pub struct FileMemory {
    path: Arc<PathBuf>,
    /// The facts as the file last had them, replaced whole once a write has reached the file:
    /// a read takes the `Arc` under this short lock and waits on no write's disk I/O.
    current: Arc<Mutex<Arc<Facts>>>,
    /// Held by a write from reading `current` until its successor is in place, the file's
    /// write included, so that writes reach the file in the order they apply, each from the
    /// one before's result. Taken on the blocking pool only, never on an executor's thread.
    writing: Arc<Mutex<()>>,
    /// Held while any clone lives; the write that replaces the file moves it to the new file.
    lock: Arc<WriterLock>,
    /// The most bytes the file may hold.
    max_bytes: u64,
}

impl FileMemory {
    /// The most bytes a memory file may hold, unless set with
    /// [`open_with_max_bytes`](Self::open_with_max_bytes): 64 MiB, hundreds of thousands of
    /// facts, read whole on every open.
    pub const DEFAULT_MAX_BYTES: u64 = 64 * 1024 * 1024;

    /// Opens the memory kept at `path`: its facts if the file exists, none if it does not or
    /// is empty (the file is created by the first write; its directory and lock file now). A
    /// file that is not a memory is an error, and so is a file another `FileMemory` has open
    /// (see above), a file larger than [`DEFAULT_MAX_BYTES`](Self::DEFAULT_MAX_BYTES), and a
    /// `path` that names no file (ending in `/` or `..`). A `path` that is a symbolic link
    /// opens the file it links to (its [`path`](Self::path)), and the link stays. Temporary
    /// files that writes cut short by a crash left beside it (`.NAME.XXXXXX.tmp`, each write's
    /// new file before it takes the name) are removed.
    pub fn open(path: impl AsRef<Path>) -> Result<Self, ServiceError> {
        Self::open_with_max_bytes(path, Self::DEFAULT_MAX_BYTES)
    }

    /// [`open`](Self::open), the file limited to `max_bytes`: a larger file is refused when
    /// opened (its size is checked before it is read), and a write that would make it larger
    /// fails and changes nothing.
    pub fn open_with_max_bytes(
        path: impl AsRef<Path>,
        max_bytes: u64,
    ) -> Result<Self, ServiceError> {
        let path = std::path::absolute(path.as_ref()).map_err(|err| {
            ServiceError::with_source("memory", format!("{}: {err}", path.as_ref().display()), err)
        })?;
        let path = linked_file(path)?;
        // Taken before the file is read: the facts read are the ones no other writer changes.
        let lock = WriterLock::take(&path)?;
        write_temporaries::remove_left_by_crashes(&path);
        let not_a_memory = |reason: &dyn std::fmt::Display| {
            format!("{} is not a memory file: {reason}", path.display())
        };
        let read = lock.read_file(|file| read_at_most(file, max_bytes));
        let facts = match read {
            // An empty file (made with `touch`, or by a program that creates it before the
            // first write) holds no facts yet, as a missing one does. Our writes never leave
            // one: each replaces the file whole.
            Some(Ok(bytes)) if bytes.iter().all(u8::is_ascii_whitespace) => Facts::default(),
            Some(Ok(bytes)) => {
                // Editors that save UTF-8 with a byte order mark (which JSON does not allow)
                // leave the facts readable after it.
                let text = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(&bytes);
                let mut facts: Facts = serde_json::from_slice(text)
                    .map_err(|err| ServiceError::with_source("memory", not_a_memory(&err), err))?;
                // Ids stay stable and distinct whoever wrote the file: one given twice is
                // refused, and the next one is above every id there.
                let mut ids = std::collections::HashSet::with_capacity(facts.facts.len());
                if let Some(fact) = facts.facts.iter().find(|fact| !ids.insert(fact.id)) {
                    let reason = not_a_memory(&format_args!("two facts have the id {}", fact.id));
                    return Err(ServiceError::new("memory", reason));
                }
                facts.next_id = ids.into_iter().max().unwrap_or(0).max(facts.next_id);
                facts
            }
            None => Facts::default(),
            Some(Err(ReadError::TooLarge(size))) => {
                return Err(ServiceError::new(
                    "memory",
                    format!(
                        "{} is {size} bytes, more than the {max_bytes} a memory file may \
                         hold (FileMemory::open_with_max_bytes sets the limit)",
                        path.display()
                    ),
                ));
            }
            Some(Err(ReadError::Io(err))) => {
                return Err(ServiceError::with_source(
                    "memory",
                    format!("{}: {err}", path.display()),
                    err,
                ));
            }
        };
        Ok(Self {
            path: Arc::new(path),
            current: Arc::new(Mutex::new(Arc::new(facts))),
            writing: Arc::new(Mutex::new(())),
            lock: Arc::new(lock),
            max_bytes,
        })
    }

    /// The file the memory is kept in.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Applies `change` to a copy of the facts (once the writes before it are done), writes
    /// the copy, and only then makes it the current state: a failed write changes nothing.
    /// Returns what `change` did with the version it made (the one it found if it changed
    /// nothing).
    async fn write<T: Send + 'static>(
        &self,
        change: impl FnOnce(&mut Facts) -> (T, bool) + Send + 'static,
    ) -> Result<Versioned<T>, ServiceError> {
        self.write_pausing(change, || {}).await
    }

    /// [`write`](Self::write), calling `before_persist` once the change is made and just
    /// before the file is written: a test stalls a write there, in its disk I/O.
    async fn write_pausing<T: Send + 'static>(
        &self,
        change: impl FnOnce(&mut Facts) -> (T, bool) + Send + 'static,
        before_persist: impl FnOnce() + Send + 'static,
    ) -> Result<Versioned<T>, ServiceError> {
        let path = Arc::clone(&self.path);
        let current = Arc::clone(&self.current);
        let writing = Arc::clone(&self.writing);
        let lock = Arc::clone(&self.lock);
        let max_bytes = self.max_bytes;
        let shown_path = self.path.display().to_string();
        run_blocking(
            move || {
                // Held until the next state is in place (see `writing`). A write that panicked
                // holding it published nothing, so a poisoned lock still guards a whole state.
                let _writing = writing.lock().unwrap_or_else(PoisonError::into_inner);
                let found = Arc::clone(&current.lock().unwrap_or_else(PoisonError::into_inner));
                let mut next = Facts::clone(&found);
                let (value, changed) = change(&mut next);
                if !changed {
                    return Ok(found.versioned(value));
                }
                before_persist();
                persist(&path, &next, &lock, max_bytes).map_err(|err| {
                    ServiceError::with_source("memory", format!("{}: {err}", path.display()), err)
                })?;
                let made = next.versioned(value);
                *current.lock().unwrap_or_else(PoisonError::into_inner) = Arc::new(next);
                Ok(made)
            },
            |cancelled| ServiceError::new("memory", format!("{shown_path}: {cancelled}")),
        )
        .await
    }
}

/// How many symbolic links a memory file's path may go through (Linux's own limit).
const MAX_LINKS: usize = 40;

/// The file the absolute `path` names once the symbolic links of its last component are
/// followed (it may not exist yet). Every write replaces the file: written at a link's path,
/// it would replace the link and leave the file linked to as it was, and a lock beside the
/// link would not keep out an opener of that file.
fn linked_file(mut path: PathBuf) -> Result<PathBuf, ServiceError> {
    for _ in 0..MAX_LINKS {
        let is_link = std::fs::symlink_metadata(&path)
            .is_ok_and(|metadata| metadata.file_type().is_symlink());
        if !is_link {
            return Ok(path);
        }
        let failed = |err: std::io::Error| {
            ServiceError::with_source("memory", format!("{}: {err}", path.display()), err)
        };
        let target = std::fs::read_link(&path).map_err(failed)?;
        // A relative target is read from the link's directory; `absolute` leaves an
        // absolute one as it is.
        let dir = path.parent().unwrap_or(Path::new("/"));
        path = std::path::absolute(dir.join(target)).map_err(failed)?;
    }
    Err(ServiceError::new(
        "memory",
        format!(
            "{}: more than {MAX_LINKS} symbolic links to follow (a loop of links?)",
            path.display()
        ),
    ))
}

/// Why a memory file was not read.
enum ReadError {
    /// It holds more bytes than the limit: this many (at least).
    TooLarge(u64),
    Io(std::io::Error),
}

/// The bytes of `file`, unless it holds more than `max_bytes`.
fn read_at_most(file: &File, max_bytes: u64) -> Result<Vec<u8>, ReadError> {
    let size = file.metadata().map_err(ReadError::Io)?.len();
    if size > max_bytes {
        return Err(ReadError::TooLarge(size));
    }
    // Read to one byte past the limit: a file that grew since its size was read is caught.
    let mut bytes = Vec::with_capacity(size as usize);
    file.take(max_bytes.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(ReadError::Io)?;
    if bytes.len() as u64 > max_bytes {
        return Err(ReadError::TooLarge(bytes.len() as u64));
    }
    Ok(bytes)
}

/// Writes `facts` to `path` atomically, the new file locked by `lock` before it takes the
/// name; refused when it would hold more than `max_bytes`.
fn persist(path: &Path, facts: &Facts, lock: &WriterLock, max_bytes: u64) -> std::io::Result<()> {
    let mut bytes = serde_json::to_vec_pretty(facts)?;
    bytes.push(b'\n');
    if bytes.len() as u64 > max_bytes {
        return Err(std::io::Error::other(format!(
            "the memory would be {} bytes, more than the {max_bytes} its file may hold \
             (FileMemory::open_with_max_bytes sets the limit); nothing was written: remove \
             facts no longer needed to make room",
            bytes.len()
        )));
    }
    // The file being replaced keeps its permissions (a new file is made 0600, its owner's
    // alone): replaced by a file of the temporary's, it would lose them at every write.
    let permissions = lock
        .read_file(|file| file.metadata().map(|metadata| metadata.permissions()))
        .transpose()?;
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    let mut temp = write_temporaries::new_temporary(path, dir)?;
    temp.write_all(&bytes)?;
    if let Some(permissions) = permissions {
        temp.as_file().set_permissions(permissions)?;
    }
    temp.as_file().sync_all()?;
    WriterLock::lock_new_file(temp.as_file())?;
    let file = temp.persist(path).map_err(|err| err.error)?;
    lock.hold(file);
    // The rename is the directory's change: until the directory is synced, a crash could
    // bring back the file before it (the new content was synced above, under the old name).
    #[cfg(unix)]
    if let Err(error) = std::fs::File::open(dir).and_then(|dir| dir.sync_all()) {
        // Written and renamed: the memory holds it; only its durability is in doubt.
        tracing::warn!(%error, path = %path.display(), "the memory's directory could not be synced after a write");
    }
    Ok(())
}

#[async_trait]
impl MemoryAccess for FileMemory {
    async fn facts(&self) -> Result<Vec<MemoryFact>, ServiceError> {
        let current = Arc::clone(&self.current.lock().unwrap_or_else(PoisonError::into_inner));
        // Copied outside the lock: a large memory keeps no other reader or write waiting.
        Ok(current.facts.clone())
    }

    async fn facts_with_version(&self) -> Result<Versioned<Vec<MemoryFact>>, ServiceError> {
        let current = Arc::clone(&self.current.lock().unwrap_or_else(PoisonError::into_inner));
        // The facts and their version are one value, replaced whole by each write.
        Ok(Versioned {
            value: current.facts.clone(),
            version: current.version,
        })
    }

    async fn add(&self, text: String) -> Result<Versioned<MemoryFact>, ServiceError> {
        let Versioned { value, version } = self
            .write(|facts| {
                let fact = facts.add(text);
                let added = fact.is_some();
                (fact, added)
            })
            .await?;
        let fact = value.ok_or_else(|| {
            ServiceError::new(
                "memory",
                format!("{}: every fact id has been given", self.path.display()),
            )
        })?;
        Ok(Versioned {
            value: fact,
            version,
        })
    }

    async fn remove(&self, id: u64) -> Result<Versioned<bool>, ServiceError> {
        self.write(move |facts| {
            let removed = facts.remove(id);
            (removed, removed)
        })
        .await
    }

    async fn replace(&self, id: u64, text: String) -> Result<Versioned<bool>, ServiceError> {
        self.write(move |facts| {
            let replaced = facts.replace(id, text);
            (replaced, replaced)
        })
        .await
    }

    fn version(&self) -> u64 {
        self.current
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .version
    }
}

#[cfg(test)]
mod tests {
    use std::sync::mpsc;
    use std::time::Duration;

    use toolsmith_core::MemoryAccess as _;

    use super::FileMemory;

    /// Far longer than a read that waits on nothing takes on any machine: reached only when
    /// the read waits for the stalled write, that is when the test fails.
    const NO_ANSWER: Duration = Duration::from_secs(30);

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_read_does_not_wait_for_a_write_stuck_writing_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let memory = FileMemory::open(dir.path().join("memory.json")).unwrap();
        memory.add("first".into()).await.unwrap();

        let (stalled, is_stalled) = tokio::sync::oneshot::channel();
        let (release, wait_for_release) = mpsc::channel::<()>();
        let writer = tokio::spawn({
            let memory = memory.clone();
            async move {
                memory
                    .write_pausing(
                        |facts| {
                            let added = facts.add("second".into()).is_some();
                            (added, added)
                        },
                        move || {
                            stalled.send(()).unwrap();
                            // Also let go if the test fails and drops `release`.
                            let _ = wait_for_release.recv();
                        },
                    )
                    .await
            }
        });
        is_stalled.await.unwrap();

        // Read on a worker, as the tools and the agent loop do: it answers at once, with the
        // state from before the stalled write.
        let reader = memory.clone();
        let read = tokio::spawn(async move { (reader.facts().await, reader.version()) });
        let (facts, version) = tokio::time::timeout(NO_ANSWER, read)
            .await
            .expect("the read waited for the write's disk I/O")
            .unwrap();
        let texts: Vec<String> = facts.unwrap().into_iter().map(|fact| fact.text).collect();
        assert_eq!((texts, version), (vec!["first".to_owned()], 1));

        release.send(()).unwrap();
        let written = writer.await.unwrap().unwrap();
        assert_eq!((written.value, written.version), (true, 2));
        let texts: Vec<String> = memory
            .facts()
            .await
            .unwrap()
            .into_iter()
            .map(|fact| fact.text)
            .collect();
        assert_eq!(
            (texts, memory.version()),
            (vec!["first".to_owned(), "second".to_owned()], 2)
        );
    }
}
