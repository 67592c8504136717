//! The search behind `search_file`: ripgrep's crates (`ignore` to walk respecting
//! `.gitignore`, `grep-regex` and `grep-searcher` to match), with a cap on results.

use std::borrow::Cow;
use std::collections::{BTreeSet, HashMap};
use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError, RwLock};

use cap_std::fs::Dir;
use grep_regex::{RegexMatcher, RegexMatcherBuilder};
use grep_searcher::sinks::Lossy;
use grep_searcher::{BinaryDetection, Searcher, SearcherBuilder};
use ignore::WalkState;
use ignore::gitignore::{Gitignore, GitignoreBuilder};
use toolsmith_core::provider::cut_to;
use toolsmith_core::{CancellationToken, ToolCallContext};

use crate::FsError;
use crate::fs::sandbox_path::shown;

/// The most matches a search returns by default.
pub const DEFAULT_MAX_MATCHES: usize = 200;
/// The longest line text a match shows, in characters; longer lines are cut.
pub const MAX_MATCH_LINE_CHARS: usize = 300;

/// What to search for.
///
/// ```
/// use toolsmith::harness::SearchQuery;
///
/// let query = SearchQuery::new(r"fn \w+").in_path("src").with_glob("*.rs");
/// assert_eq!(query.glob.as_deref(), Some("*.rs"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SearchQuery {
    /// A regular expression (Rust `regex` syntax), matched line by line.
    pub pattern: String,
    /// The directory (or file) to search, relative to the root; the root when `None`.
    pub path: Option<PathBuf>,
    /// A glob the searched files must match (`*.rs`, `src/**/*.toml`), as ripgrep's `-g`,
    /// except that it lets back in no file the ignore files or a hidden name leave out.
    pub glob: Option<String>,
    /// The most matches to return; more are counted as [`SearchReport::capped`].
    pub max_matches: usize,
}

impl SearchQuery {
    /// A search for `pattern` below the root, with the default cap.
    #[must_use]
    pub fn new(pattern: impl Into<String>) -> Self {
        Self {
            pattern: pattern.into(),
            path: None,
            glob: None,
            max_matches: DEFAULT_MAX_MATCHES,
        }
    }

    /// Searches below `path` only.
    #[must_use]
    pub fn in_path(mut self, path: impl Into<PathBuf>) -> Self {
        self.path = Some(path.into());
        self
    }

    /// Searches only the files matching `glob`.
    #[must_use]
    pub fn with_glob(mut self, glob: impl Into<String>) -> Self {
        self.glob = Some(glob.into());
        self
    }

    /// Sets the cap on matches.
    #[must_use]
    pub fn with_max_matches(mut self, max: usize) -> Self {
        self.max_matches = max;
        self
    }

    /// The path searched as errors show it (`.` for the root).
    pub(crate) fn shown_path(&self) -> String {
        shown(self.path.as_deref().unwrap_or(Path::new(".")))
    }
}

/// One matching line.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct SearchMatch {
    /// The file, relative to the root, with `/` separators.
    pub path: String,
    /// The 1-based line number.
    pub line: u64,
    /// The line, without its line ending, cut at [`MAX_MATCH_LINE_CHARS`].
    pub text: String,
}

/// What a search found.
///
/// Built with [`Default`] and then its fields set (it is `#[non_exhaustive]`: more may come).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct SearchReport {
    /// The matches, ordered by path and line, at most `max_matches` of them (when capped on
    /// disk, which ones depends on the order the parallel walk met the files in).
    pub matches: Vec<SearchMatch>,
    /// The number of files searched.
    pub files_searched: usize,
    /// Whether more matches existed than were returned (the search stopped early).
    pub capped: bool,
    /// How many files could not be searched to their end: unreadable (a permission, a file
    /// gone meanwhile), or with a line longer than [`MAX_SEARCHED_LINE_BYTES`]. Matches found
    /// in one before it stopped are kept; it is not counted in `files_searched`.
    pub files_unsearched: usize,
    /// The first [`MAX_UNSEARCHED_LISTED`] of those files (relative to the root, sorted).
    pub unsearched: Vec<String>,
    /// How many ignore files the search met but did not apply (too large, too many patterns,
    /// or past the search's budget): what they would leave out was searched.
    pub ignore_files_skipped: usize,
    /// The first [`MAX_SKIPPED_IGNORE_FILES_LISTED`] of those files (sorted by path), and why
    /// each was skipped.
    pub skipped_ignore_files: Vec<SkippedIgnoreFile>,
}

/// An ignore file a search met but did not apply, and why.
///
/// A [`FileSystem`](crate::FileSystem) of your own reports one as the built-in ones do:
///
/// ```
/// use toolsmith::harness::{IgnoreFileSkip, SearchReport, SkippedIgnoreFile};
///
/// let mut report = SearchReport::default();
/// report.ignore_files_skipped = 1;
/// report
///     .skipped_ignore_files
///     .push(SkippedIgnoreFile::new("vendor/.gitignore", IgnoreFileSkip::TooLarge));
/// assert_eq!(report.skipped_ignore_files[0].path, "vendor/.gitignore");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub struct SkippedIgnoreFile {
    /// The file, relative to the root, with `/` separators (`src/.gitignore`).
    pub path: String,
    /// Why it was not applied.
    pub reason: IgnoreFileSkip,
}

impl SkippedIgnoreFile {
    /// The ignore file at `path` (relative to the root, with `/` separators), not applied
    /// for `reason`.
    #[must_use]
    pub fn new(path: impl Into<String>, reason: IgnoreFileSkip) -> Self {
        Self {
            path: path.into(),
            reason,
        }
    }
}

/// Why a search did not apply an ignore file (it is then taken as absent).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub enum IgnoreFileSkip {
    /// It is larger than [`MAX_IGNORE_FILE_BYTES`].
    TooLarge,
    /// It holds more than [`MAX_IGNORE_FILE_PATTERNS`] patterns.
    TooManyPatterns,
    /// The search had compiled, from the ignore files met before it, so many patterns that
    /// this one's would pass [`MAX_IGNORE_PATTERNS_PER_SEARCH`] (or
    /// [`MAX_IGNORE_PATTERN_BYTES_PER_SEARCH`] bytes of them). On disk, which files those
    /// are depends on the order the parallel walk meets them in.
    PastSearchBudget,
}

impl std::fmt::Display for IgnoreFileSkip {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::TooLarge => write!(f, "over {} KiB", MAX_IGNORE_FILE_BYTES >> 10),
            Self::TooManyPatterns => write!(f, "over {MAX_IGNORE_FILE_PATTERNS} patterns"),
            Self::PastSearchBudget => f.write_str("past the search's budget of patterns"),
        }
    }
}

/// How many of the ignore files a search skipped its report names.
pub const MAX_SKIPPED_IGNORE_FILES_LISTED: usize = 20;

/// The longest line a search reads, in bytes: a file with a longer one (a gigabyte of
/// minified text on one line) is left unsearched from there on, and said to be
/// ([`SearchReport::unsearched`]), rather than read whole into memory.
pub const MAX_SEARCHED_LINE_BYTES: usize = 8 * 1024 * 1024;

/// How many of the files a search could not search its report names.
pub const MAX_UNSEARCHED_LISTED: usize = 20;

/// Why a search could not run.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SearchError {
    /// The pattern is not a valid regular expression. (The message quotes a long pattern
    /// cut.)
    #[error(
        "the pattern {} is not a valid regular expression: {}",
        quoted(pattern),
        quoting_cut(reason, pattern)
    )]
    InvalidPattern {
        /// The pattern.
        pattern: String,
        /// What the regex parser said.
        reason: String,
    },
    /// The glob is not a valid glob. (The message quotes a long glob cut.)
    #[error(
        "the glob {} is not valid: {}",
        quoted(glob),
        quoting_cut(reason, glob)
    )]
    InvalidGlob {
        /// The glob.
        glob: String,
        /// What the glob parser said.
        reason: String,
    },
    /// The path to search is refused or missing.
    #[error(transparent)]
    Fs(#[from] FsError),
}

/// The most characters of a pattern or glob a message quotes: the model wrote it, and reads
/// the message.
const MAX_QUOTED_CHARS: usize = 240;

/// `text` quoted, cut to [`MAX_QUOTED_CHARS`] characters (saying how long it is) when longer.
pub(crate) fn quoted(text: &str) -> String {
    match text.char_indices().nth(MAX_QUOTED_CHARS) {
        None => format!("{text:?}"),
        Some((end, _)) => format!("{:?}… ({} characters)", &text[..end], text.chars().count()),
    }
}

/// A parser's `reason` about a long `text`, with `text` cut in it and lines still long (a
/// caret's run of spaces) cut, so that it does not quote the whole of `text` again.
fn quoting_cut(reason: &str, text: &str) -> String {
    let cut = cut_to(text, MAX_QUOTED_CHARS);
    if matches!(cut, Cow::Borrowed(_)) {
        return reason.to_owned();
    }
    let reason = reason.replace(text, &cut);
    let lines: Vec<Cow<'_, str>> = reason
        .split('\n')
        .map(|line| cut_to(line, 2 * MAX_QUOTED_CHARS))
        .collect();
    lines.join("\n")
}

/// The most memory a pattern may compile to. A model writes the pattern: grep's defaults
/// (100 MiB, and 1 GiB for the lazy DFA's cache), made for a person at a terminal, let
/// `(?:\w{100}){40}` take seconds and tens of MiB before it is refused. These are the
/// `regex` crate's own defaults.
const PATTERN_SIZE_LIMIT: usize = 10 << 20;
const PATTERN_DFA_SIZE_LIMIT: usize = 2 << 20;

/// What a search matches with: its pattern's matcher, and its glob's when it has one.
pub(crate) struct QueryMatchers {
    pub(crate) pattern: RegexMatcher,
    pub(crate) glob: Option<ignore::overrides::Override>,
}

impl QueryMatchers {
    /// `query`'s pattern and glob compiled, the glob matching the paths below `glob_root`
    /// (the directory searched) as ripgrep's `-g` matches them (`!` excludes, `*` stays
    /// within a name, a glob without `/` matches a name at any depth); an error names the
    /// pattern, or else the glob, when it is invalid.
    pub(crate) fn new(query: &SearchQuery, glob_root: &Path) -> Result<Self, SearchError> {
        let pattern = matcher(&query.pattern)?;
        let glob = match &query.glob {
            Some(glob) => {
                check_glob(glob)?;
                Some(glob_overrides(glob_root, glob)?)
            }
            None => None,
        };
        Ok(Self { pattern, glob })
    }
}

fn matcher(pattern: &str) -> Result<RegexMatcher, SearchError> {
    RegexMatcherBuilder::new()
        // `^` and `$` at a line's ends, a CRLF line's too (never between its `\r` and `\n`),
        // as `read` shows its lines; lines are still split at `\n`, and no match spans one.
        // In this order: `crlf` sets the line terminator too.
        .multi_line(true)
        .crlf(true)
        .line_terminator(Some(b'\n'))
        .size_limit(PATTERN_SIZE_LIMIT)
        .dfa_size_limit(PATTERN_DFA_SIZE_LIMIT)
        .build(pattern)
        .map_err(|err| {
            // grep-regex parses the pattern wrapped, `(?:PATTERN)`: its message shows that, the
            // caret off by three, or at the wrapper's group. The pattern read alone, as grep
            // reads it, shows the fault where the model wrote it.
            let alone = regex_syntax::ParserBuilder::new()
                .utf8(false)
                .build()
                .parse(pattern);
            SearchError::InvalidPattern {
                pattern: pattern.to_owned(),
                reason: match alone {
                    Err(fault) => fault.to_string(),
                    Ok(_) => err.to_string(),
                },
            }
        })
}

/// Refuses a glob that could only match paths outside the directory searched: one with a
/// `..` segment, or one that starts with `/`, in any of its `{a,b}` alternatives and after a
/// leading `!`. Such a glob matches nothing beneath, so the search would quietly find nothing.
fn check_glob(glob: &str) -> Result<(), SearchError> {
    let refuse = |reason: &str| {
        Err(SearchError::InvalidGlob {
            glob: glob.to_owned(),
            reason: reason.to_owned(),
        })
    };
    let climbs = "it leads out of the directory searched ('..' climbs above it); a glob \
                  matches the paths below that directory, so give another directory as `path` \
                  instead";
    let absolute = "it starts with '/', so it names paths from the file system's root; a glob \
                    matches the paths below the directory searched (relative to it), so drop \
                    the '/' and give the directory as `path`";
    let body = glob.strip_prefix('!').unwrap_or(glob);
    let mut segment = String::new();
    // Whether the next character begins an alternative: the glob's start, or after `{`/`,`.
    let mut alternative_start = true;
    let mut depth = 0usize;
    let mut chars = body.chars();
    while let Some(mut c) = chars.next() {
        if c == '\\' {
            // An escaped character is itself (`\.\.` is the name `..`); an escaped `/` still
            // separates names.
            match chars.next() {
                Some('/') => c = '/',
                Some(escaped) => {
                    segment.push(escaped);
                    alternative_start = false;
                    continue;
                }
                None => break,
            }
        }
        let boundary = match c {
            '/' if alternative_start => return refuse(absolute),
            '/' => true,
            '{' => {
                depth += 1;
                true
            }
            '}' if depth > 0 => {
                depth -= 1;
                true
            }
            ',' if depth > 0 => true,
            _ => false,
        };
        if boundary {
            if segment == ".." {
                return refuse(climbs);
            }
            segment.clear();
            alternative_start = matches!(c, '{' | ',');
        } else {
            segment.push(c);
            alternative_start = false;
        }
    }
    if segment == ".." {
        return refuse(climbs);
    }
    Ok(())
}

/// A matched file's path (relative to the root) as a match shows it: with `/` separators. Only
/// on Windows is `\` a separator; elsewhere it is a character of a name, kept so that the
/// path reads back.
pub(crate) fn match_path(relative: &Path) -> String {
    let shown = relative.to_string_lossy();
    if cfg!(windows) {
        shown.replace('\\', "/")
    } else {
        shown.into_owned()
    }
}

/// `glob` as the override matcher reads it: a leading `./` (after a `!`) means the directory
/// searched, as the `/` that anchors a glob there does (the matcher has no `.` segment, so
/// `./src/*.rs` matched nothing).
fn anchored_glob(glob: &str) -> String {
    let (negation, body) = match glob.strip_prefix('!') {
        Some(body) => ("!", body),
        None => ("", glob),
    };
    let mut rest = body;
    while let Some(after) = rest.strip_prefix("./") {
        rest = after.trim_start_matches('/');
    }
    if rest.len() == body.len() || rest.is_empty() {
        return glob.to_owned();
    }
    format!("{negation}/{rest}")
}

pub(crate) fn searcher() -> Searcher {
    SearcherBuilder::new()
        .line_number(true)
        // As ripgrep: a NUL byte means a binary file, which is skipped.
        .binary_detection(BinaryDetection::quit(0))
        // The buffer holds a line at least: without a bound, one line without end (a FIFO
        // is refused, but a huge file is not) is read whole.
        .heap_limit(Some(MAX_SEARCHED_LINE_BYTES))
        .build()
}

/// Collects matches across threads, stopping once more than the cap have been seen.
pub(crate) struct Collector {
    max: usize,
    seen: AtomicUsize,
    files: AtomicUsize,
    full: AtomicBool,
    matches: Mutex<Vec<SearchMatch>>,
    /// The files that could not be searched to their end: how many, and the first few.
    unsearched: Mutex<(usize, Vec<String>)>,
}

impl Collector {
    pub(crate) fn new(max: usize) -> Self {
        Self {
            max,
            seen: AtomicUsize::new(0),
            files: AtomicUsize::new(0),
            full: AtomicBool::new(false),
            matches: Mutex::new(Vec::new()),
            unsearched: Mutex::default(),
        }
    }

    pub(crate) fn is_full(&self) -> bool {
        self.full.load(Ordering::Relaxed)
    }

    /// Searches one file's content (through `search`), recording its matches under `path`.
    pub(crate) fn search_one(
        &self,
        path: &str,
        search: impl FnOnce(
            &mut Lossy<&mut dyn FnMut(u64, &str) -> std::io::Result<bool>>,
        ) -> std::io::Result<()>,
    ) {
        if self.is_full() {
            return;
        }
        let mut found = Vec::new();
        let mut on_match = |line: u64, text: &str| {
            let text = text.trim_end_matches(['\n', '\r']);
            let shown: String = if text.chars().count() > MAX_MATCH_LINE_CHARS {
                let cut: String = text.chars().take(MAX_MATCH_LINE_CHARS).collect();
                format!("{cut}… [line cut]")
            } else {
                text.to_owned()
            };
            found.push(SearchMatch {
                path: path.to_owned(),
                line,
                text: shown,
            });
            let seen = self.seen.fetch_add(1, Ordering::Relaxed) + 1;
            if seen > self.max {
                self.full.store(true, Ordering::Relaxed);
                return Ok(false);
            }
            Ok(true)
        };
        let mut sink = Lossy(&mut on_match as &mut dyn FnMut(u64, &str) -> std::io::Result<bool>);
        // A file that cannot be read (or has a line past the limit) is skipped, and said to
        // be, as ripgrep reports it, then goes on.
        if search(&mut sink).is_ok() {
            self.files.fetch_add(1, Ordering::Relaxed);
        } else {
            let mut unsearched = self.unsearched.lock().unwrap_or_else(|p| p.into_inner());
            unsearched.0 += 1;
            unsearched.1.push(path.to_owned());
        }
        if !found.is_empty() {
            let mut matches = self.matches.lock().unwrap_or_else(|p| p.into_inner());
            matches.extend(found);
        }
    }

    pub(crate) fn finish(self) -> SearchReport {
        let mut matches = self.matches.into_inner().unwrap_or_else(|p| p.into_inner());
        matches.sort();
        let capped = self.full.load(Ordering::Relaxed) || matches.len() > self.max;
        matches.truncate(self.max);
        let (files_unsearched, mut unsearched) = self
            .unsearched
            .into_inner()
            .unwrap_or_else(|p| p.into_inner());
        unsearched.sort();
        unsearched.truncate(MAX_UNSEARCHED_LISTED);
        SearchReport {
            matches,
            files_searched: self.files.load(Ordering::Relaxed),
            capped,
            files_unsearched,
            unsearched,
            ..SearchReport::default()
        }
    }
}

/// When a search should stop: no one waits for it any more (the future awaiting it was
/// dropped, by a time limit or a cancelled batch or run), or the call it runs for was
/// cancelled. A search runs on a blocking thread, which nothing else stops: the walk on disk
/// checks this before each entry it judges or visits, the one in memory before each file,
/// and each read of a file searched does.
#[derive(Debug, Clone, Default)]
pub(crate) struct SearchStop {
    dropped: Arc<AtomicBool>,
    call: Option<CancellationToken>,
    /// How many files the walk went on to search: how far a stopped walk got.
    #[cfg(test)]
    pub(crate) files_started: Arc<AtomicUsize>,
    /// Holds the walk before each file while a test holds it: a search that cannot end
    /// before the test lets it, whatever the machine's load.
    #[cfg(test)]
    pub(crate) gate: Arc<FileGate>,
}

impl SearchStop {
    /// A stop for a search run by the tool call now running (if any): set when its token
    /// is cancelled.
    pub(crate) fn for_current_call() -> Self {
        Self {
            call: ToolCallContext::current().map(|context| context.cancellation().clone()),
            ..Self::default()
        }
    }

    /// Whether the search should stop.
    pub(crate) fn is_set(&self) -> bool {
        self.dropped.load(Ordering::Relaxed)
            || self
                .call
                .as_ref()
                .is_some_and(CancellationToken::is_cancelled)
    }

    /// A guard that sets the stop when dropped: the future awaiting the search holds it.
    pub(crate) fn set_on_drop(&self) -> SetStopOnDrop {
        SetStopOnDrop(Arc::clone(&self.dropped))
    }

    /// Notes that the walk goes on to search a file, once the test's gate lets it.
    #[cfg(test)]
    pub(crate) fn starting_file(&self) {
        self.files_started.fetch_add(1, Ordering::Relaxed);
        self.gate.pass();
    }

    /// Waits (on the runtime) until the search of this stop has gone on to its first file.
    #[cfg(test)]
    pub(crate) async fn first_file_started(&self) {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(300);
        while self.files_started.load(Ordering::Relaxed) == 0 {
            assert!(
                std::time::Instant::now() < deadline,
                "the search never started"
            );
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
    }

    /// The error of a search of `query` that was stopped before its end.
    pub(crate) fn stopped(query: &SearchQuery) -> SearchError {
        SearchError::from(FsError::Io {
            path: query.shown_path(),
            reason: "not done: the search was stopped (its call was cancelled or timed out)"
                .to_owned(),
        })
    }
}

/// A gate a test closes to hold a search's walk before its next file, and opens to let it go
/// on.
#[cfg(test)]
#[derive(Debug, Default)]
pub(crate) struct FileGate {
    closed: Mutex<bool>,
    opened: std::sync::Condvar,
}

#[cfg(test)]
impl FileGate {
    /// The longest a walk waits at a closed gate, which then opens for good: a test whose
    /// code under test blocks the thread that would open it fails, rather than hanging.
    const MAX_WAIT: std::time::Duration = std::time::Duration::from_secs(60);

    pub(crate) fn close(&self) {
        *self.closed.lock().unwrap_or_else(PoisonError::into_inner) = true;
    }

    pub(crate) fn open(&self) {
        *self.closed.lock().unwrap_or_else(PoisonError::into_inner) = false;
        self.opened.notify_all();
    }

    /// Waits while the gate is closed, up to [`Self::MAX_WAIT`].
    fn pass(&self) {
        let closed = self.closed.lock().unwrap_or_else(PoisonError::into_inner);
        let (mut closed, _) = self
            .opened
            .wait_timeout_while(closed, Self::MAX_WAIT, |closed| *closed)
            .unwrap_or_else(PoisonError::into_inner);
        *closed = false;
    }
}

/// Sets a [`SearchStop`] when dropped.
pub(crate) struct SetStopOnDrop(Arc<AtomicBool>);

impl Drop for SetStopOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

/// A file's reads, refused once its search should stop: one large file's search ends with
/// the rest of the walk.
pub(crate) struct StoppableRead<'a, R> {
    pub(crate) inner: R,
    pub(crate) stop: &'a SearchStop,
}

impl<R: std::io::Read> std::io::Read for StoppableRead<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.stop.is_set() {
            return Err(std::io::Error::other("the search was stopped"));
        }
        self.inner.read(buf)
    }
}

/// Searches below `start` (relative to the root, already resolved beneath it) of the local
/// tree at `root`, whose handle is `dir`, until `stop` is set: then the walk ends soon, and
/// the search is an error rather than a report of part of the tree.
pub(crate) fn search_local(
    dir: &Dir,
    root: &Path,
    start: &Path,
    query: &SearchQuery,
    stop: &SearchStop,
) -> Result<SearchReport, SearchError> {
    let walk_root = root.join(start);
    let QueryMatchers {
        pattern: matcher,
        glob: glob_overrides,
    } = QueryMatchers::new(query, &walk_root)?;
    if stop.is_set() {
        return Err(SearchStop::stopped(query));
    }
    let mut walk = ignore::WalkBuilder::new(&walk_root);
    walk.follow_links(false)
        .hidden(true)
        // The walk would open the ignore files itself, by path: a FIFO there stalls it, a link
        // out of the root is followed (to `/dev/zero`, read without end). They are read
        // through the root's handle instead (`IgnoreRules`), and judged in `filter_entry`.
        .git_ignore(false)
        .ignore(false)
        .git_exclude(false)
        .parents(false)
        .git_global(false);
    let handle = dir
        .try_clone()
        .map_err(|err| FsError::from_io(&query.shown_path(), &err))?;
    let rules = Arc::new(IgnoreRules::new(IgnoreFilesOnDisk(handle), root.to_owned()));
    let filter_rules = Arc::clone(&rules);
    let filter_stop = stop.clone();
    walk.filter_entry(move |entry| {
        // A stopped walk lists what is left of a directory without judging (so without
        // reading ignore files) or queueing any of it.
        if filter_stop.is_set() {
            return false;
        }
        let is_dir = entry.file_type().is_some_and(|t| t.is_dir());
        // Whatever the glob says, as in memory: the walk skips no hidden name the glob
        // matches (ripgrep's `-g` overrides that), so it is left out here. The walk's start,
        // named by the caller, is not judged (as ripgrep searches what it is given); each
        // directory below it was judged as the walk entered it.
        let hidden = entry.file_name().as_encoded_bytes().starts_with(b".");
        !hidden && !filter_rules.ignores(entry.path(), is_dir)
    });
    if let Some(overrides) = glob_overrides {
        walk.overrides(overrides);
    }
    let collector = Collector::new(query.max_matches);
    walk.build_parallel().run(|| {
        let matcher = matcher.clone();
        let collector = &collector;
        let mut searcher = searcher();
        Box::new(move |entry| {
            if collector.is_full() || stop.is_set() {
                return WalkState::Quit;
            }
            let Ok(entry) = entry else {
                return WalkState::Continue;
            };
            if !entry.file_type().is_some_and(|t| t.is_file()) {
                return WalkState::Continue;
            }
            let Ok(relative) = entry.path().strip_prefix(root) else {
                return WalkState::Continue;
            };
            let shown = match_path(relative);
            #[cfg(test)]
            stop.starting_file();
            // Opened through the root's handle, so a file swapped for a link that leads out
            // between the walk and the open is refused rather than read; and as a regular file
            // only, so a FIFO swapped in does not stall the search.
            collector.search_one(&shown, |sink| {
                let file = open_regular_file(dir, relative)?;
                let reads = StoppableRead { inner: &file, stop };
                searcher.search_reader(&matcher, reads, sink)
            });
            if collector.is_full() {
                WalkState::Quit
            } else {
                WalkState::Continue
            }
        })
    });
    if stop.is_set() {
        return Err(SearchStop::stopped(query));
    }
    let mut report = collector.finish();
    rules.note_skipped(&mut report);
    Ok(report)
}

/// `glob` as the walk's override matcher, rooted at the directory searched.
fn glob_overrides(
    walk_root: &Path,
    glob: &str,
) -> Result<ignore::overrides::Override, SearchError> {
    let invalid = |err: ignore::Error| SearchError::InvalidGlob {
        glob: glob.to_owned(),
        reason: err.to_string(),
    };
    let mut overrides = ignore::overrides::OverrideBuilder::new(walk_root);
    overrides.add(&anchored_glob(glob)).map_err(invalid)?;
    overrides.build().map_err(invalid)
}

/// The largest ignore file read, in bytes: the largest real ones are tens of KiB. A larger
/// one is taken as absent, as git takes one past its own limit (100 MiB); read whole, and
/// compiled, it would cost memory and time out of all proportion.
pub const MAX_IGNORE_FILE_BYTES: u64 = 256 << 10;

/// The most patterns an ignore file may hold and be applied: real ones hold at most a few
/// thousand. Compiling costs by the pattern (for one anchored to a directory, `/src/x/*.o`,
/// about 10 µs in a release build and 0.7 ms in a debug one): a file with more is taken as
/// absent.
pub const MAX_IGNORE_FILE_PATTERNS: usize = 5_000;

/// The most patterns one search compiles from all the ignore files it meets together (a tree
/// can hold one in every directory); the files met past it are taken as absent.
pub const MAX_IGNORE_PATTERNS_PER_SEARCH: usize = 20_000;

/// The most bytes of patterns one search compiles from all the ignore files it meets
/// together (a long pattern costs by its length); the files met past it are taken as absent.
pub const MAX_IGNORE_PATTERN_BYTES_PER_SEARCH: usize = 2 << 20;

/// What one search may still compile of the ignore files it meets: each one is applied whole
/// or taken as absent, so a tree that holds more (or a file larger) than the bounds above
/// costs no more than they allow. Past the budget, which files are applied depends on the
/// order the walk meets them in.
struct IgnoreBudget {
    /// Patterns, and bytes of patterns, still to spend.
    left: Mutex<(usize, usize)>,
    /// The files not applied: how many, and the first few by path.
    skipped: Mutex<(usize, BTreeSet<SkippedIgnoreFile>)>,
}

impl IgnoreBudget {
    fn new() -> Self {
        Self {
            left: Mutex::new((
                MAX_IGNORE_PATTERNS_PER_SEARCH,
                MAX_IGNORE_PATTERN_BYTES_PER_SEARCH,
            )),
            skipped: Mutex::default(),
        }
    }

    /// The rules of the ignore file at `path` (relative to the root) holding `bytes`, rooted
    /// at the directory `base` it sits in; `None` when it has none that compile, or when it
    /// is skipped (noted): larger than [`MAX_IGNORE_FILE_BYTES`], with more patterns than
    /// [`MAX_IGNORE_FILE_PATTERNS`] or than what is left of the budget (which it is taken
    /// from otherwise).
    fn compile(&self, path: &Path, base: &Path, bytes: &[u8]) -> Option<Gitignore> {
        if bytes.len() as u64 > MAX_IGNORE_FILE_BYTES {
            return self.skip(path, IgnoreFileSkip::TooLarge);
        }
        let text = String::from_utf8_lossy(bytes);
        // As the matcher reads a line: `#` starts a comment, and a blank line is no pattern.
        let (patterns, bytes) = text
            .lines()
            .filter(|line| !line.starts_with('#') && !line.trim().is_empty())
            .fold((0usize, 0usize), |(count, bytes), line| {
                (count + 1, bytes + line.len())
            });
        if patterns == 0 {
            return None;
        }
        if patterns > MAX_IGNORE_FILE_PATTERNS {
            return self.skip(path, IgnoreFileSkip::TooManyPatterns);
        }
        {
            let mut left = self.left.lock().unwrap_or_else(PoisonError::into_inner);
            if patterns > left.0 || bytes > left.1 {
                drop(left);
                return self.skip(path, IgnoreFileSkip::PastSearchBudget);
            }
            left.0 -= patterns;
            left.1 -= bytes;
        }
        let mut builder = GitignoreBuilder::new(base);
        for line in text.lines() {
            // A line that is no pattern is passed over, as git does.
            let _ = builder.add_line(None, line);
        }
        builder.build().ok().filter(|rules| !rules.is_empty())
    }

    /// Notes that the ignore file at `path` was skipped for `reason`.
    fn skip(&self, path: &Path, reason: IgnoreFileSkip) -> Option<Gitignore> {
        let mut skipped = self.skipped.lock().unwrap_or_else(PoisonError::into_inner);
        skipped.0 += 1;
        skipped
            .1
            .insert(SkippedIgnoreFile::new(match_path(path), reason));
        // Only the first few by path are listed: a tree of many files keeps no more.
        if skipped.1.len() > MAX_SKIPPED_IGNORE_FILES_LISTED {
            skipped.1.pop_last();
        }
        None
    }
}

/// Where a search reads the ignore files of a tree from.
pub(crate) trait IgnoreFiles {
    /// The bytes of the ignore file at `path` (relative to the root), up to one past
    /// [`MAX_IGNORE_FILE_BYTES`] (enough to tell one too large), or `None` when there is none
    /// to read.
    fn read(&self, path: &Path) -> Option<Vec<u8>>;
}

/// The ignore files of a tree on disk, read through the root's handle.
struct IgnoreFilesOnDisk(Dir);

impl IgnoreFiles for IgnoreFilesOnDisk {
    fn read(&self, path: &Path) -> Option<Vec<u8>> {
        read_ignore_file(&self.0, path)
    }
}

/// The ignore files of a tree (on disk or in memory), read when the walk first needs a
/// directory's, and what they say about an entry. Both file systems judge through this, so
/// that they read the same ignore files, of the directories a walk enters (not those of a
/// hidden or ignored directory, nor of one whose entries are all hidden or left out by the
/// glob), and spend the same budget on them.
pub(crate) struct IgnoreRules<F> {
    files: F,
    root: PathBuf,
    /// For each directory met (by its path relative to the root), the rules of it and of the
    /// directories above it that have any, the deepest first: an entry's judgement takes one
    /// look-up, of its parent's.
    chains: RwLock<HashMap<PathBuf, RulesChain>>,
    budget: IgnoreBudget,
}

/// The rules that bear on the entries of one directory, the deepest first.
type RulesChain = Arc<[Arc<DirectoryRules>]>;

/// The rules of one directory, kept apart by kind: anywhere up the tree, an `.ignore` file's
/// say comes before a `.gitignore` file's, and theirs before `.git/info/exclude`'s, as in
/// ripgrep.
struct DirectoryRules {
    ignore: Option<Gitignore>,
    gitignore: Option<Gitignore>,
    exclude: Option<Gitignore>,
}

impl<F: IgnoreFiles> IgnoreRules<F> {
    /// The rules of the ignore files of the tree at `root` (an absolute path, which the paths
    /// judged start with), read from `files`.
    pub(crate) fn new(files: F, root: PathBuf) -> Self {
        Self {
            files,
            root,
            chains: RwLock::default(),
            budget: IgnoreBudget::new(),
        }
    }

    /// Whether the ignore files of the directories above `path` (absolute, beneath the root)
    /// leave it out: of each kind, the deepest file that has a say decides, as in git. The
    /// first judgement of an entry of a directory reads its ignore files, and those above.
    pub(crate) fn ignores(&self, path: &Path, is_dir: bool) -> bool {
        let Some(parent) = path.strip_prefix(&self.root).ok().and_then(Path::parent) else {
            return false;
        };
        let chain = self.chain_of(parent);
        let verdict = |kind: fn(&DirectoryRules) -> Option<&Gitignore>| {
            chain
                .iter()
                .filter_map(|rules| kind(rules))
                .map(|rules| rules.matched(path, is_dir))
                .find(|verdict| !verdict.is_none())
                .unwrap_or(ignore::Match::None)
        };
        verdict(|rules| rules.ignore.as_ref())
            .or(verdict(|rules| rules.gitignore.as_ref()))
            .or(verdict(|rules| rules.exclude.as_ref()))
            .is_ignore()
    }

    /// The chain of `directory` (relative to the root), made from its parent's the first time
    /// (the walk enters a directory after its parent, so that one is known; a loop, not
    /// recursion, for the first directory judged below the root).
    fn chain_of(&self, directory: &Path) -> RulesChain {
        if let Some(chain) = self
            .chains
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .get(directory)
        {
            return Arc::clone(chain);
        }
        // The directories from the nearest known one down to `directory`.
        let mut unknown: Vec<&Path> = Vec::new();
        let mut chain: RulesChain = Arc::from([]);
        for ancestor in directory.ancestors() {
            let known = self
                .chains
                .read()
                .unwrap_or_else(PoisonError::into_inner)
                .get(ancestor)
                .cloned();
            if let Some(known) = known {
                chain = known;
                break;
            }
            unknown.push(ancestor);
        }
        for directory in unknown.into_iter().rev() {
            // Read outside the lock: reading ignore files keeps no other thread waiting.
            if let Some(own) = self.rules_in(directory) {
                chain = std::iter::once(Arc::new(own))
                    .chain(chain.iter().cloned())
                    .collect();
            }
            let mut chains = self.chains.write().unwrap_or_else(PoisonError::into_inner);
            // Another thread may have made it meanwhile: the same rules, either will do.
            chain = Arc::clone(chains.entry(directory.to_owned()).or_insert(chain));
        }
        chain
    }

    /// Notes in `report` the ignore files read so far but not applied.
    pub(crate) fn note_skipped(&self, report: &mut SearchReport) {
        let (count, listed) = std::mem::take(
            &mut *self
                .budget
                .skipped
                .lock()
                .unwrap_or_else(PoisonError::into_inner),
        );
        report.ignore_files_skipped = count;
        report.skipped_ignore_files = listed.into_iter().collect();
    }

    /// The rules of the ignore files of `directory` (relative to the root), or `None` when it
    /// has none.
    fn rules_in(&self, directory: &Path) -> Option<DirectoryRules> {
        let rules_in = |name: &str| {
            let path = directory.join(name);
            let bytes = self.files.read(&path)?;
            self.budget
                .compile(&path, &self.root.join(directory), &bytes)
        };
        let rules = DirectoryRules {
            ignore: rules_in(".ignore"),
            gitignore: rules_in(".gitignore"),
            exclude: rules_in(".git/info/exclude"),
        };
        (rules.ignore.is_some() || rules.gitignore.is_some() || rules.exclude.is_some())
            .then_some(rules)
    }
}

/// The regular file at `path` (relative to the root's handle `dir`), opened to read. It is
/// opened without blocking, so that a FIFO there (swapped in since the walk listed a file)
/// does not wait for a writer, and anything but a regular file is refused once open.
fn open_regular_file(dir: &Dir, path: &Path) -> std::io::Result<std::fs::File> {
    let file = crate::fs::read_open::open_to_read(dir, path)?;
    if !file.metadata()?.is_file() {
        return Err(std::io::Error::other("not a regular file"));
    }
    Ok(file.into_std())
}

/// The bytes of the ignore file at `path` (relative to the root's handle `dir`), up to one
/// past [`MAX_IGNORE_FILE_BYTES`], or `None` when there is none to read: missing, a link that
/// leads out of the root (refused by the handle), or anything but a regular file (opened
/// without blocking, so a FIFO does not stall the search).
fn read_ignore_file(dir: &Dir, path: &Path) -> Option<Vec<u8>> {
    let file = open_regular_file(dir, path).ok()?;
    let mut bytes = Vec::new();
    file.take(MAX_IGNORE_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .ok()?;
    Some(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_being_searched_is_read_no_further_once_the_search_stops() {
        use std::io::Read as _;
        let stop = SearchStop::default();
        let mut reads = StoppableRead {
            inner: &b"first read"[..],
            stop: &stop,
        };
        let mut buf = [0u8; 5];
        assert_eq!(reads.read(&mut buf).unwrap(), 5);
        drop(stop.set_on_drop());
        let err = reads.read(&mut buf).unwrap_err();
        assert_eq!(err.to_string(), "the search was stopped");
    }

    /// The tree of `files` (paths relative to the root, and contents) on disk, in a
    /// directory kept as long as the first value, and in memory.
    fn both_trees(
        files: &[(String, String)],
    ) -> (
        tempfile::TempDir,
        crate::LocalFileSystem,
        crate::InMemoryFileSystem,
    ) {
        let dir = tempfile::tempdir().unwrap();
        let mut in_memory = crate::InMemoryFileSystem::new();
        for (path, content) in files {
            let on_disk = dir.path().join(path);
            std::fs::create_dir_all(on_disk.parent().unwrap()).unwrap();
            std::fs::write(on_disk, content).unwrap();
            in_memory = in_memory.with_file(path, content.as_str());
        }
        let local = crate::LocalFileSystem::new(dir.path()).unwrap();
        (dir, local, in_memory)
    }

    /// The `.log` files a search of the whole tree of `files` finds for "alpha", on disk and
    /// in memory.
    async fn logs_found(files: &[(String, String)]) -> [(&'static str, usize); 2] {
        use crate::FileSystem as _;
        let (_dir, local, in_memory) = both_trees(files);
        let logs = |report: SearchReport| {
            report
                .matches
                .iter()
                .filter(|found| found.path.ends_with(".log"))
                .count()
        };
        [
            (
                "local",
                logs(local.search(SearchQuery::new("alpha")).await.unwrap()),
            ),
            (
                "in memory",
                logs(in_memory.search(SearchQuery::new("alpha")).await.unwrap()),
            ),
        ]
    }

    #[tokio::test]
    async fn both_file_systems_refuse_a_missing_directory_before_a_bad_pattern() {
        // In memory, the pattern and glob were checked first: a bad pattern in a missing
        // directory was `InvalidPattern` there and `NotFound` on disk.
        use crate::{FileSystem as _, InMemoryFileSystem, LocalFileSystem};
        let dir = tempfile::tempdir().unwrap();
        let local = LocalFileSystem::new(dir.path()).unwrap();
        let in_memory = InMemoryFileSystem::new().with_file("a.txt", "alpha");
        for (pattern, glob) in [("(", None), ("alpha", Some("[z"))] {
            let mut query = SearchQuery::new(pattern);
            query.path = Some(PathBuf::from("missing"));
            query.glob = glob.map(str::to_owned);
            let on_disk = local.search(query.clone()).await.unwrap_err();
            let in_mem = in_memory.search(query).await.unwrap_err();
            assert!(
                matches!(&on_disk, SearchError::Fs(FsError::NotFound { .. })),
                "{on_disk:?}"
            );
            assert_eq!(on_disk, in_mem, "{pattern} {glob:?}");
        }
    }

    /// An ignore file in `directory` that leaves out `*.log`, with `patterns` patterns in all,
    /// each of the others `pattern_bytes` long (at least 8), and a log file it leaves out.
    fn ignored_log(
        directory: &str,
        patterns: usize,
        pattern_bytes: usize,
    ) -> [(String, String); 2] {
        let mut rules = String::from("*.log\n");
        for n in 1..patterns {
            rules.push_str(&format!("{n:0pattern_bytes$}\n"));
        }
        [
            (format!("{directory}/.gitignore"), rules),
            (format!("{directory}/a.log"), "alpha\n".to_owned()),
        ]
    }

    #[tokio::test]
    async fn an_ignore_file_with_too_many_patterns_is_taken_as_absent() {
        // An ignore file up to 1 MiB was compiled whatever it held: tens of thousands of
        // patterns, seconds to compile, in each directory of the tree.
        let within = ignored_log("within", MAX_IGNORE_FILE_PATTERNS, 8);
        assert_eq!(logs_found(&within).await, [("local", 0), ("in memory", 0)]);
        let past = ignored_log("past", MAX_IGNORE_FILE_PATTERNS + 1, 8);
        assert_eq!(logs_found(&past).await, [("local", 1), ("in memory", 1)]);
    }

    #[tokio::test]
    async fn an_ignore_file_past_its_size_is_taken_as_absent() {
        let pad = |rules: &mut String, to: u64| {
            let comment = format!("#{}\n", "x".repeat(99));
            while (rules.len() + comment.len()) as u64 <= to {
                rules.push_str(&comment);
            }
        };
        let mut within = String::from("*.log\n");
        pad(&mut within, MAX_IGNORE_FILE_BYTES);
        let mut past = within.clone();
        past.push_str(&"#".repeat((MAX_IGNORE_FILE_BYTES + 1) as usize - past.len()));
        for (rules, logs) in [(within, 0), (past, 1)] {
            let files = [
                ("d/.gitignore".to_owned(), rules),
                ("d/a.log".to_owned(), "alpha\n".to_owned()),
            ];
            assert_eq!(
                logs_found(&files).await,
                [("local", logs), ("in memory", logs)]
            );
        }
    }

    #[tokio::test]
    async fn a_search_compiles_ignore_files_within_a_budget_of_patterns() {
        // A directory each, every ignore file within its own bounds: one more file than the
        // budget holds is taken as absent.
        let files = MAX_IGNORE_PATTERNS_PER_SEARCH / MAX_IGNORE_FILE_PATTERNS + 1;
        let tree: Vec<(String, String)> = (0..files)
            .flat_map(|n| ignored_log(&format!("d{n}"), MAX_IGNORE_FILE_PATTERNS, 8))
            .collect();
        assert_eq!(logs_found(&tree).await, [("local", 1), ("in memory", 1)]);
    }

    #[tokio::test]
    async fn a_search_compiles_ignore_files_within_a_budget_of_bytes() {
        let (patterns, pattern_bytes) = (1_000, 200);
        let file_bytes = "*.log".len() + (patterns - 1) * pattern_bytes;
        let files = MAX_IGNORE_PATTERN_BYTES_PER_SEARCH / file_bytes + 1;
        assert!(files * patterns <= MAX_IGNORE_PATTERNS_PER_SEARCH);
        let tree: Vec<(String, String)> = (0..files)
            .flat_map(|n| ignored_log(&format!("d{n}"), patterns, pattern_bytes))
            .collect();
        assert_eq!(logs_found(&tree).await, [("local", 1), ("in memory", 1)]);
    }

    #[tokio::test]
    async fn only_the_ignore_files_of_directories_the_walk_enters_spend_the_budget() {
        // In memory, every `.gitignore` in the tree was compiled, those of hidden and ignored
        // directories too, which the walk on disk never enters: with them filling the budget,
        // the one leaving out `d/a.log` was past it in memory only.
        let full = |directory: &str| ignored_log(directory, MAX_IGNORE_FILE_PATTERNS, 8);
        let hidden: Vec<(String, String)> = (0..4).flat_map(|n| full(&format!(".h{n}"))).collect();
        // The root's rule takes one pattern of the budget: these leave it three.
        let ignored: Vec<(String, String)> = (0..4)
            .flat_map(|n| ignored_log(&format!("b/{n}"), MAX_IGNORE_FILE_PATTERNS - 1, 8))
            .chain([(".gitignore".to_owned(), "/b/\n".to_owned())])
            .collect();
        // A directory whose entries are all hidden is entered, but none is judged.
        let only_hidden: Vec<(String, String)> = (0..4)
            .map(|n| {
                (format!("c{n}/.gitignore"), {
                    let [(_, rules), _] = full("");
                    rules
                })
            })
            .collect();
        for (case, tree) in [
            ("hidden directories", hidden),
            ("an ignored directory", ignored),
            ("directories of hidden entries", only_hidden),
        ] {
            let tree: Vec<(String, String)> =
                tree.into_iter().chain(ignored_log("d", 10, 8)).collect();
            assert_eq!(
                logs_found(&tree).await,
                [("local", 0), ("in memory", 0)],
                "{case}"
            );
        }
    }

    /// The skipped ignore files a search of the whole tree of `files` reports, on disk and in
    /// memory: how many, and those listed.
    async fn skipped_reported(
        files: &[(String, String)],
    ) -> [(&'static str, usize, Vec<SkippedIgnoreFile>); 2] {
        use crate::FileSystem as _;
        let (_dir, local, in_memory) = both_trees(files);
        let local = local.search(SearchQuery::new("alpha")).await.unwrap();
        let in_memory = in_memory.search(SearchQuery::new("alpha")).await.unwrap();
        [
            (
                "local",
                local.ignore_files_skipped,
                local.skipped_ignore_files,
            ),
            (
                "in memory",
                in_memory.ignore_files_skipped,
                in_memory.skipped_ignore_files,
            ),
        ]
    }

    #[tokio::test]
    async fn the_ignore_files_not_applied_are_reported_with_why() {
        // A search that took an ignore file as absent said nothing of it: a model saw the
        // files it leaves out searched, and could not tell why.
        let mut too_large = String::from("*.log\n");
        too_large.push_str(&"#".repeat(MAX_IGNORE_FILE_BYTES as usize));
        let tree: Vec<(String, String)> = [
            ("big/.gitignore".to_owned(), too_large.clone()),
            ("big/a.log".to_owned(), "alpha\n".to_owned()),
            // Never read: a hidden directory, and one the root's rule leaves out.
            (".h/.gitignore".to_owned(), too_large.clone()),
            ("out/.gitignore".to_owned(), too_large),
            ("out/a.log".to_owned(), "alpha\n".to_owned()),
            (".gitignore".to_owned(), "/out/\n".to_owned()),
        ]
        .into_iter()
        .chain(ignored_log("many", MAX_IGNORE_FILE_PATTERNS + 1, 8))
        // One past what the budget holds, less the root's pattern.
        .chain(
            (0..MAX_IGNORE_PATTERNS_PER_SEARCH / 1000)
                .flat_map(|n| ignored_log(&format!("d{n:02}"), 1000 - usize::from(n == 0), 8)),
        )
        .chain(ignored_log("d99", 1, 8))
        .collect();
        for (kind, count, listed) in skipped_reported(&tree).await {
            assert_eq!(count, 3, "{kind}: {listed:?}");
            // Which file is past the budget depends on the walk's order on disk.
            let past = listed
                .iter()
                .find(|file| file.reason == IgnoreFileSkip::PastSearchBudget)
                .map_or("none", |file| file.path.as_str());
            assert!(past.starts_with('d'), "{kind}: {listed:?}");
            assert_eq!(
                listed,
                [
                    SkippedIgnoreFile::new("big/.gitignore", IgnoreFileSkip::TooLarge),
                    SkippedIgnoreFile::new(past, IgnoreFileSkip::PastSearchBudget),
                    SkippedIgnoreFile::new("many/.gitignore", IgnoreFileSkip::TooManyPatterns),
                ],
                "{kind}"
            );
        }
        assert_eq!(
            skipped_reported(&tree).await[1].2[1].path,
            "d99/.gitignore",
            "in memory, the files are met in order"
        );
    }

    #[tokio::test]
    async fn the_ignore_files_not_applied_are_listed_up_to_a_cap_by_path() {
        let tree: Vec<(String, String)> = (0..=MAX_SKIPPED_IGNORE_FILES_LISTED)
            .rev()
            .flat_map(|n| ignored_log(&format!("d{n:02}"), MAX_IGNORE_FILE_PATTERNS + 1, 1))
            .collect();
        let first: Vec<SkippedIgnoreFile> = (0..MAX_SKIPPED_IGNORE_FILES_LISTED)
            .map(|n| {
                SkippedIgnoreFile::new(
                    format!("d{n:02}/.gitignore"),
                    IgnoreFileSkip::TooManyPatterns,
                )
            })
            .collect();
        let expected = MAX_SKIPPED_IGNORE_FILES_LISTED + 1;
        assert_eq!(
            skipped_reported(&tree).await,
            [
                ("local", expected, first.clone()),
                ("in memory", expected, first)
            ]
        );
    }

    #[test]
    fn globs_that_stay_below_are_accepted() {
        for glob in [
            "*.rs",
            "src/**/*.toml",
            "**/lib.rs",
            "./src/*.rs",
            "a..b/*",
            "..rs",
            "{src,tests}/**",
            "!*.log",
            "a//b",
            "x,/y",
        ] {
            assert_eq!(check_glob(glob), Ok(()), "{glob}");
        }
    }

    #[test]
    fn globs_that_leave_are_refused_naming_the_glob() {
        for (glob, needle) in [
            ("..", "'..' climbs"),
            ("../**", "'..' climbs"),
            ("src/../../x", "'..' climbs"),
            ("{../a,b}", "'..' climbs"),
            ("{a,..}/x", "'..' climbs"),
            ("!../x", "'..' climbs"),
            ("\\.\\./x", "'..' climbs"),
            ("/**/x", "starts with '/'"),
            ("\\/etc", "starts with '/'"),
            ("!/etc", "starts with '/'"),
            ("{a,/etc/**}", "starts with '/'"),
        ] {
            let err = check_glob(glob).unwrap_err();
            let message = err.to_string();
            assert!(
                message.starts_with(&format!("the glob {glob:?} is not valid: "))
                    && message.contains(needle),
                "{glob}: {message}"
            );
        }
    }
}
