//! [`InMemoryFileSystem`]: a file tree held in memory, for tests and for agents that must not
//! touch the disk.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, PoisonError, RwLock};

use async_trait::async_trait;

use crate::fs::blocking::run_blocking;
use crate::fs::error::file_in_the_way;
use crate::fs::sandbox_path::{file_relative_to_root, relative_to_root, shown};
use crate::fs::search::{
    Collector, IgnoreFiles, IgnoreRules, MAX_IGNORE_FILE_BYTES, QueryMatchers, SearchStop,
    StoppableRead, match_path, searcher,
};

/// Where a glob is rooted: the directory searched, as a path of its own.
const GLOB_ROOT: &str = "/";
/// The tree's root as the ignore files' rules see it (they match absolute paths).
const RULES_ROOT: &str = "/";
use crate::{FileSystem, FsError, SearchError, SearchQuery, SearchReport};

/// An entry of the tree. A directory is held only as an ancestor of a file (nothing makes
/// an empty one or removes a file): the search's walk relies on it ([`TreeWalk`]).
#[derive(Debug, Clone)]
enum Node {
    File(Arc<[u8]>),
    Dir,
}

/// A [`FileSystem`] held in memory: same path rules as the local one (no `..` above the
/// root, no absolute paths, no NUL bytes, bounded lengths), writes that replace whole
/// contents at once, and `search_file` with the same regex engine, honouring the ignore files
/// in the tree (`.gitignore`, `.ignore`, `.git/info/exclude`) as
/// [`LocalFileSystem`](crate::LocalFileSystem) does (those of the directories its walk
/// enters, within the same bounds) and skipping hidden names. A search runs on Tokio's blocking pool (inline without a
/// runtime), and stops soon after its future is dropped or its call's
/// [token](toolsmith_core::ToolCallContext::cancellation) is cancelled, as a local one does:
/// then, if awaited still, it is an error ([`FsError::Io`], "not done: the search was
/// stopped"). A search reads the tree as it was when it began: writes meanwhile do not wait
/// for it, and it does not see them.
///
/// Cloning shares the tree.
///
/// ```
/// use std::path::Path;
/// use toolsmith::harness::{FileSystem, InMemoryFileSystem};
///
/// # futures::executor::block_on(async {
/// let fs = InMemoryFileSystem::new().with_file("src/lib.rs", "pub fn answer() -> u32 { 42 }\n");
/// assert!(fs.read(Path::new("src/lib.rs")).await.unwrap().starts_with(b"pub fn"));
/// assert!(fs.read(Path::new("src")).await.is_err()); // a directory
/// # });
/// ```
#[derive(Debug, Clone, Default)]
pub struct InMemoryFileSystem {
    /// The tree, shared with the searches running on it: a search holds the tree as it was
    /// when it began, and a write meanwhile copies it first (`Arc::make_mut`), so neither
    /// waits for the other and a search copies nothing.
    nodes: Arc<RwLock<Arc<BTreeMap<PathBuf, Node>>>>,
}

impl InMemoryFileSystem {
    /// An empty tree.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a file (panics if `path` is refused: for setting up tests and examples).
    #[must_use]
    pub fn with_file(self, path: impl AsRef<Path>, contents: impl AsRef<[u8]>) -> Self {
        let path = path.as_ref();
        let relative = file_relative_to_root(path, None)
            .unwrap_or_else(|err| panic!("InMemoryFileSystem::with_file: {err}"));
        self.put(&shown(path), &relative, contents.as_ref(), None)
            .unwrap_or_else(|err| panic!("InMemoryFileSystem::with_file: {err}"));
        self
    }

    /// The paths of every file, in order.
    pub fn files(&self) -> Vec<PathBuf> {
        let nodes = self.nodes.read().unwrap_or_else(PoisonError::into_inner);
        nodes
            .iter()
            .filter(|(_, node)| matches!(node, Node::File(_)))
            .map(|(path, _)| path.clone())
            .collect()
    }

    /// Puts `contents` at `relative`; with `read`, only if a file there holds `read` (checked
    /// under the same lock as the replacement, so nothing can come in between).
    fn put(
        &self,
        shown_path: &str,
        relative: &Path,
        contents: &[u8],
        read: Option<&[u8]>,
    ) -> Result<bool, FsError> {
        if relative.as_os_str().is_empty() {
            return Err(FsError::IsADirectory {
                path: shown_path.to_owned(),
            });
        }
        let mut tree = self.nodes.write().unwrap_or_else(PoisonError::into_inner);
        if let Some(read) = read
            && !matches!(tree.get(relative), Some(Node::File(now)) if **now == *read)
        {
            return Err(FsError::ChangedSinceRead {
                path: shown_path.to_owned(),
            });
        }
        let nodes = Arc::make_mut(&mut tree);
        if let Some(file) = file_above(nodes, relative) {
            return Err(file_in_the_way(shown_path, file));
        }
        if let Some(Node::Dir) = nodes.get(relative) {
            return Err(FsError::IsADirectory {
                path: shown_path.to_owned(),
            });
        }
        for ancestor in relative.ancestors().skip(1) {
            if !ancestor.as_os_str().is_empty() {
                nodes.insert(ancestor.to_owned(), Node::Dir);
            }
        }
        let previous = nodes.insert(relative.to_owned(), Node::File(Arc::from(contents)));
        Ok(previous.is_none())
    }
}

/// The file among the ancestors of `relative` (the first from the root), which leaves no
/// room for anything at `relative`.
fn file_above<'a>(nodes: &BTreeMap<PathBuf, Node>, relative: &'a Path) -> Option<&'a Path> {
    let mut ancestors: Vec<&Path> = relative
        .ancestors()
        .skip(1)
        .filter(|p| !p.as_os_str().is_empty())
        .collect();
    ancestors.reverse();
    ancestors
        .into_iter()
        .find(|ancestor| matches!(nodes.get(*ancestor), Some(Node::File(_))))
}

#[async_trait]
impl FileSystem for InMemoryFileSystem {
    async fn read(&self, path: &Path) -> Result<Vec<u8>, FsError> {
        let relative = file_relative_to_root(path, None)?;
        let nodes = self.nodes.read().unwrap_or_else(PoisonError::into_inner);
        match nodes.get(&relative) {
            Some(Node::File(contents)) => Ok(contents.to_vec()),
            Some(Node::Dir) => Err(FsError::IsADirectory { path: shown(path) }),
            None if relative.as_os_str().is_empty() => {
                Err(FsError::IsADirectory { path: shown(path) })
            }
            None => Err(match file_above(&nodes, &relative) {
                Some(file) => file_in_the_way(&shown(path), file),
                None => FsError::NotFound { path: shown(path) },
            }),
        }
    }

    async fn write(&self, path: &Path, contents: Vec<u8>) -> Result<bool, FsError> {
        let relative = file_relative_to_root(path, None)?;
        self.put(&shown(path), &relative, &contents, None)
    }

    async fn replace_if_unchanged(
        &self,
        path: &Path,
        read: &[u8],
        contents: Vec<u8>,
    ) -> Result<(), FsError> {
        let relative = file_relative_to_root(path, None)?;
        self.put(&shown(path), &relative, &contents, Some(read))
            .map(drop)
    }

    async fn search(&self, query: SearchQuery) -> Result<SearchReport, SearchError> {
        self.search_until(query, SearchStop::for_current_call())
            .await
    }
}

impl InMemoryFileSystem {
    /// [`search`](FileSystem::search), which stops soon after `stop` is set, or after this
    /// future is dropped (it sets `stop` then): the search runs on a blocking thread (a large
    /// tree with a costly pattern takes seconds), which the future's end would not stop.
    async fn search_until(
        &self,
        query: SearchQuery,
        stop: SearchStop,
    ) -> Result<SearchReport, SearchError> {
        let _stop_when_dropped = stop.set_on_drop();
        // The tree as it is now, held, not copied: a write meanwhile copies it first.
        let nodes = Arc::clone(&self.nodes.read().unwrap_or_else(PoisonError::into_inner));
        let cancelled_path = query.shown_path();
        run_blocking(
            move || search_tree(&nodes, &query, &stop),
            |cancelled| FsError::cancelled(cancelled_path, cancelled).into(),
        )
        .await
    }
}

/// Searches the tree `nodes` as `query` asks, until `stop` is set: then the search ends soon,
/// and is an error rather than a report of part of the tree.
fn search_tree(
    nodes: &BTreeMap<PathBuf, Node>,
    query: &SearchQuery,
    stop: &SearchStop,
) -> Result<SearchReport, SearchError> {
    // The path first, then the pattern and glob, as on disk: the same call is refused for
    // the same reason by both.
    let start = match &query.path {
        Some(path) => relative_to_root(path, None)?,
        None => PathBuf::new(),
    };
    if !start.as_os_str().is_empty() && !nodes.contains_key(&start) {
        let shown_start = query.shown_path();
        return Err(match file_above(nodes, &start) {
            Some(file) => file_in_the_way(&shown_start, file),
            None => FsError::NotFound { path: shown_start },
        }
        .into());
    }
    // The glob is matched below the directory searched, as on disk.
    let QueryMatchers {
        pattern: matcher,
        glob,
    } = QueryMatchers::new(query, Path::new(GLOB_ROOT))?;
    let mut walk = TreeWalk {
        rules: IgnoreRules::new(IgnoreFilesInMemory(nodes), PathBuf::from(RULES_ROOT)),
        glob,
        start: &start,
        entered: HashMap::new(),
    };
    let collector = Collector::new(query.max_matches);
    let mut searcher = searcher();
    for (path, node) in nodes.range(start.clone()..) {
        if stop.is_set() {
            return Err(SearchStop::stopped(query));
        }
        if !path.starts_with(&start) {
            break;
        }
        let Node::File(contents) = node else { continue };
        // A file searched by its own path is searched whatever ignore files, hidden names and
        // the glob say, as on disk (and as ripgrep searches a file it is given).
        if path != &start && !walk.meets(path) {
            continue;
        }
        let shown_path = match_path(path);
        #[cfg(test)]
        stop.starting_file();
        // Read as a file on disk is (in a buffer bounded by the longest line searched, each
        // read refused once the search should stop), so that both report the same.
        collector.search_one(&shown_path, |sink| {
            let reads = StoppableRead {
                inner: &contents[..],
                stop,
            };
            searcher.search_reader(&matcher, reads, sink)
        });
        if collector.is_full() {
            break;
        }
    }
    if stop.is_set() {
        return Err(SearchStop::stopped(query));
    }
    let mut report = collector.finish();
    walk.rules.note_skipped(&mut report);
    Ok(report)
}

/// The ignore files of a tree in memory.
struct IgnoreFilesInMemory<'a>(&'a BTreeMap<PathBuf, Node>);

impl IgnoreFiles for IgnoreFilesInMemory<'_> {
    fn read(&self, path: &Path) -> Option<Vec<u8>> {
        match self.0.get(path) {
            Some(Node::File(contents)) => {
                let enough = usize::try_from(MAX_IGNORE_FILE_BYTES + 1).unwrap_or(usize::MAX);
                Some(contents[..contents.len().min(enough)].to_vec())
            }
            Some(Node::Dir) | None => None,
        }
    }
}

/// What a walk of a tree in memory from `start` meets, judged as the walk on disk judges:
/// each entry below `start` (`start` itself is not judged: a directory searched by name is
/// searched, as ripgrep searches one it is given), from the top down, by the glob, then its
/// name (hidden or not), then the ignore files of the directories above it. A directory left
/// out is not entered, so its ignore files are never read, as on disk.
///
/// A directory is judged on the way to the first file below it: every directory has one
/// ([`Node`]), so every entry of a directory entered is judged, as on disk, and the same
/// ignore files are read. Only the order differs: here by path, depth first; on disk as the
/// parallel walk goes. That decides which files are past the search's budget of patterns
/// (see [`IgnoreFileSkip::PastSearchBudget`](crate::IgnoreFileSkip::PastSearchBudget)).
struct TreeWalk<'a> {
    rules: IgnoreRules<IgnoreFilesInMemory<'a>>,
    glob: Option<ignore::overrides::Override>,
    start: &'a Path,
    /// The directories judged so far, and whether the walk enters them.
    entered: HashMap<PathBuf, bool>,
}

impl TreeWalk<'_> {
    /// Whether the walk meets the file at `path` (below `start`).
    fn meets(&mut self, path: &Path) -> bool {
        let mut levels: Vec<&Path> = path
            .ancestors()
            .take_while(|level| *level != self.start)
            .collect();
        levels.reverse();
        levels.into_iter().all(|level| {
            if level == path {
                return self.judge(level, false);
            }
            if let Some(&entered) = self.entered.get(level) {
                return entered;
            }
            let entered = self.judge(level, true);
            self.entered.insert(level.to_owned(), entered);
            entered
        })
    }

    /// Whether the walk keeps the entry at `path`, whose parent it entered.
    fn judge(&self, path: &Path, is_dir: bool) -> bool {
        let below = path.strip_prefix(self.start).unwrap_or(path);
        // Matched as ripgrep's `-g` matches, below the directory searched.
        let glob_excludes = self.glob.as_ref().is_some_and(|glob| {
            glob.matched(Path::new(GLOB_ROOT).join(below), is_dir)
                .is_ignore()
        });
        let hidden = path
            .file_name()
            .is_some_and(|name| name.as_encoded_bytes().starts_with(b"."));
        !glob_excludes
            && !hidden
            && !self
                .rules
                .ignores(&Path::new(RULES_ROOT).join(path), is_dir)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use std::sync::atomic::Ordering;
    use std::time::{Duration, Instant};

    use toolsmith_core::{CancellationToken, ToolCallContext};

    const FILES: usize = 4000;

    /// A tree of [`FILES`] files that do not match "never-there", in directories of 100.
    fn tree() -> InMemoryFileSystem {
        let text = "a line of text that the pattern does not match\n".repeat(40);
        (0..FILES).fold(InMemoryFileSystem::new(), |fs, n| {
            fs.with_file(format!("d{}/f{n}.txt", n / 100), &text)
        })
    }

    /// A search of `fs` for what no file holds, on a task of its own, held at its first file
    /// by its stop's closed gate (so that it cannot end first on a busy machine): the stop,
    /// and the task.
    async fn held_search(
        fs: &InMemoryFileSystem,
    ) -> (
        SearchStop,
        tokio::task::JoinHandle<Result<SearchReport, SearchError>>,
    ) {
        let stop = SearchStop::default();
        stop.gate.close();
        let search = {
            let (fs, stop) = (fs.clone(), stop.clone());
            tokio::spawn(
                async move { fs.search_until(SearchQuery::new("never-there"), stop).await },
            )
        };
        stop.first_file_started().await;
        (stop, search)
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_dropped_search_stops() {
        // The search ran to its end inside one poll, whatever became of its future: a search
        // dropped by a time limit went on through the whole tree, holding the thread.
        let fs = tree();
        // Held at its first file until dropped.
        let (stop, search) = held_search(&fs).await;
        search.abort();
        let _ = search.await;
        stop.gate.open();
        // The blocking work holds the search's stop (a clone of it) until it ends.
        let deadline = Instant::now() + Duration::from_secs(300);
        while Arc::strong_count(&stop.files_started) > 1 {
            assert!(Instant::now() < deadline, "the search is still going");
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        let started = stop.files_started.load(Ordering::Relaxed);
        assert_eq!(
            started, 1,
            "the search went on to {started} files of {FILES} after it was dropped"
        );
    }

    #[tokio::test(flavor = "current_thread")]
    async fn a_write_during_a_search_does_not_wait_for_it() {
        // The search held the tree's read lock to its end, and a write waited for it on the
        // runtime's thread: on a current-thread runtime nothing else ran meanwhile, not even
        // the time limit that would have stopped the search.
        let fs = tree();
        let (stop, search) = held_search(&fs).await;
        let created = fs
            .write(Path::new("written.txt"), b"never-there\n".to_vec())
            .await
            .unwrap();
        assert!(created);
        let started = stop.files_started.load(Ordering::Relaxed);
        assert_eq!(started, 1, "the write waited for the search to go on");
        stop.gate.open();
        // The search reads the tree as it was when it began.
        let report = search.await.unwrap().unwrap();
        assert_eq!((report.files_searched, report.matches.len()), (FILES, 0));
        let report = fs.search(SearchQuery::new("never-there")).await.unwrap();
        assert_eq!(
            (report.files_searched, report.matches.len()),
            (FILES + 1, 1)
        );
    }

    #[tokio::test]
    async fn a_search_whose_call_is_cancelled_is_an_error() {
        // The call's token was not looked at: a cancelled call's search went on to the end.
        let fs = tree();
        let token = CancellationToken::new();
        token.cancel();
        let context = ToolCallContext::new("call-1", "search_file", token);
        let err = context
            .scope(fs.search(SearchQuery::new("never-there").in_path("d1")))
            .await
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "\"d1\": not done: the search was stopped (its call was cancelled or timed out)"
        );
    }
}
