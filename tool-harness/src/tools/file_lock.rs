//! One change of a file at a time: `edit` reads a file, changes it and writes it back, so a
//! write or edit of the same file in between (another request of an MCP client, a sub-agent
//! sharing the tree) would be lost. A batch runs its destructive calls one at a time; calls
//! outside one batch take these locks.

use std::hash::{DefaultHasher, Hash as _, Hasher as _};
use std::path::Path;

use tokio::sync::{Mutex, MutexGuard};

/// How many locks the files share.
const STRIPES: usize = 64;

static LOCKS: [Mutex<()>; STRIPES] = [const { Mutex::const_new(()) }; STRIPES];

/// Waits for the lock of the file at `path`, held until the guard is dropped. Chosen by the
/// file's name, so that every spelling of a path (`f.txt`, `./f.txt`, `d/../f.txt`, an
/// absolute one) takes the same lock; files of the same name share it (a link under another
/// name does not).
pub(crate) async fn lock_file(path: &str) -> MutexGuard<'static, ()> {
    let mut hasher = DefaultHasher::new();
    Path::new(path).file_name().hash(&mut hasher);
    LOCKS[(hasher.finish() % STRIPES as u64) as usize]
        .lock()
        .await
}
