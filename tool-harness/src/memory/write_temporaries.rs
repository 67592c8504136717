//! The temporary files a [`FileMemory`](crate::FileMemory) write makes beside the memory file
//! (`.NAME.XXXXXX.tmp`, renamed over `NAME` once written and synced), and the removal of those
//! a crashed write left behind.
//!
//! Only the holder of the memory's writer lock makes them, and a name of their own (the
//! memory file's name and a fixed number of random letters) tells them apart from any other
//! file: so whoever takes the lock may remove those it finds, no write of theirs being under
//! way.

use std::ffi::OsString;
use std::path::Path;

use tempfile::NamedTempFile;

/// The random letters in a temporary's name (tempfile's `rand_bytes`).
const RANDOM_CHARS: usize = 6;
/// What ends a temporary's name.
const SUFFIX: &str = ".tmp";

/// What a temporary of the memory file `name` starts with: `.NAME.`.
fn prefix_of(name: &std::ffi::OsStr) -> OsString {
    let mut prefix = OsString::from(".");
    prefix.push(name);
    prefix.push(".");
    prefix
}

/// A new temporary file for the memory file at `path`, in `dir` (the file's directory).
pub(crate) fn new_temporary(path: &Path, dir: &Path) -> std::io::Result<NamedTempFile> {
    let name = path.file_name().unwrap_or_default();
    tempfile::Builder::new()
        .prefix(&prefix_of(name))
        .suffix(SUFFIX)
        .rand_bytes(RANDOM_CHARS)
        .tempfile_in(dir)
}

/// Whether `entry` is the name of a temporary of the memory file whose temporaries start
/// with `prefix` ([`prefix_of`]).
fn is_temporary_of(prefix: &std::ffi::OsStr, entry: &std::ffi::OsStr) -> bool {
    let Some(rest) = entry
        .as_encoded_bytes()
        .strip_prefix(prefix.as_encoded_bytes())
    else {
        return false;
    };
    let Some(random) = rest.strip_suffix(SUFFIX.as_bytes()) else {
        return false;
    };
    random.len() == RANDOM_CHARS && random.iter().all(u8::is_ascii_alphanumeric)
}

/// Removes the temporaries of the memory file at `path` that writes cut short by a crash
/// left in its directory. Called with the writer lock held. A directory that cannot be
/// read, or a file that cannot be removed, is logged and left: the memory opens all the same.
pub(crate) fn remove_left_by_crashes(path: &Path) {
    let (Some(dir), Some(name)) = (path.parent(), path.file_name()) else {
        return;
    };
    let prefix = prefix_of(name);
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(error) => {
            tracing::warn!(%error, dir = %dir.display(), "the memory's directory could not be read for temporary files a crashed write left");
            return;
        }
    };
    for entry in entries.flatten() {
        let entry_name = entry.file_name();
        // A regular file only: a directory or link of that name is not one of ours.
        if !is_temporary_of(&prefix, &entry_name)
            || !entry.file_type().is_ok_and(|kind| kind.is_file())
        {
            continue;
        }
        let left = entry.path();
        match std::fs::remove_file(&left) {
            Ok(()) => {
                tracing::info!(path = %left.display(), "removed a temporary file a crashed memory write left");
            }
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {}
            Err(error) => {
                tracing::warn!(%error, path = %left.display(), "a temporary file a crashed memory write left could not be removed");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_memory_file_s_own_temporaries_are_recognised() {
        let prefix = prefix_of(std::ffi::OsStr::new("memory.json"));
        for (entry, ours) in [
            (".memory.json.a1B2c3.tmp", true),
            (".memory.json.a1B2c.tmp", false),
            (".memory.json.a1B2c3d.tmp", false),
            (".memory.json.a1-2c3.tmp", false),
            (".memory.json.a1B2c3.tmpx", false),
            (".memory.json.x.a1B2c3.tmp", false),
            ("memory.json.a1B2c3.tmp", false),
            (".tmpa1B2c3", false),
            (".other.json.a1B2c3.tmp", false),
            ("memory.json", false),
        ] {
            assert_eq!(
                is_temporary_of(&prefix, std::ffi::OsStr::new(entry)),
                ours,
                "{entry}"
            );
        }
    }

    #[test]
    fn a_new_temporary_is_recognised_as_one() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("memory.json");
        let temp = new_temporary(&path, dir.path()).unwrap();
        let temp_name = temp.path().file_name().unwrap();
        assert!(
            is_temporary_of(&prefix_of(path.file_name().unwrap()), temp_name),
            "{temp_name:?}"
        );
    }
}
