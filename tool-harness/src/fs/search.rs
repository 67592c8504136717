//! The search behind `search_file`: ripgrep's crates (`ignore` to walk respecting
//! `.gitignore`, `grep-regex` and `grep-searcher` to match), with a cap on results.

use std::borrow::Cow;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use cap_std::fs::Dir;
use grep_regex::{RegexMatcher, RegexMatcherBuilder};
use grep_searcher::sinks::Lossy;
use grep_searcher::{BinaryDetection, Searcher, SearcherBuilder};
use ignore::WalkState;
use ignore::gitignore::Gitignore;
use toolsmith_core::provider::cut_to;

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
    /// A glob the searched files must match (`*.rs`, `src/**/*.toml`), as ripgrep's `-g`.
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
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SearchReport {
    /// The matches, ordered by path and line, at most `max_matches` of them (when capped on
    /// disk, which ones depends on the order the parallel walk met the files in).
    pub matches: Vec<SearchMatch>,
    /// The number of files searched.
    pub files_searched: usize,
    /// Whether more matches existed than were returned (the search stopped early).
    pub capped: bool,
}

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

pub(crate) fn matcher(pattern: &str) -> Result<RegexMatcher, SearchError> {
    RegexMatcherBuilder::new()
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
pub(crate) fn check_glob(glob: &str) -> Result<(), SearchError> {
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
pub(crate) fn anchored_glob(glob: &str) -> String {
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
        .build()
}

/// Collects matches across threads, stopping once more than the cap have been seen.
pub(crate) struct Collector {
    max: usize,
    seen: AtomicUsize,
    files: AtomicUsize,
    full: AtomicBool,
    matches: Mutex<Vec<SearchMatch>>,
}

impl Collector {
    pub(crate) fn new(max: usize) -> Self {
        Self {
            max,
            seen: AtomicUsize::new(0),
            files: AtomicUsize::new(0),
            full: AtomicBool::new(false),
            matches: Mutex::new(Vec::new()),
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
        self.files.fetch_add(1, Ordering::Relaxed);
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
        // A file that cannot be read is skipped, as ripgrep does (it reports, then goes on).
        let _ = search(&mut sink);
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
        SearchReport {
            matches,
            files_searched: self.files.load(Ordering::Relaxed),
            capped,
        }
    }
}

/// Searches below `start` (relative to the root, already resolved beneath it) of the local
/// tree at `root`, whose handle is `dir`.
pub(crate) fn search_local(
    dir: &Dir,
    root: &Path,
    start: &Path,
    query: &SearchQuery,
) -> Result<SearchReport, SearchError> {
    let matcher = matcher(&query.pattern)?;
    if let Some(glob) = &query.glob {
        check_glob(glob)?;
    }
    let walk_root = root.join(start);
    let mut walk = ignore::WalkBuilder::new(&walk_root);
    walk.follow_links(false)
        .hidden(true)
        .git_ignore(true)
        .ignore(true)
        .git_exclude(true)
        // Stay inside the root: no ignore files from above it, no global git config.
        .parents(false)
        .git_global(false)
        // `.gitignore` counts even where the tree is not a git repository.
        .require_git(false);
    // The walk reads the ignore files from `start` down; those of the directories above it,
    // up to the root, still apply (ripgrep reads them too).
    let ancestors = ancestor_ignores(dir, root, start);
    if !ancestors.is_empty() {
        let dir = dir.try_clone().map_err(|err| {
            FsError::from_io(
                &shown(query.path.as_deref().unwrap_or(Path::new("."))),
                &err,
            )
        })?;
        let root = root.to_owned();
        let walk_root = walk_root.clone();
        // The ignore rules of the directories from `start` down, read when first needed.
        let below: Mutex<HashMap<PathBuf, Option<Gitignore>>> = Mutex::default();
        walk.filter_entry(move |entry| {
            let is_dir = entry.file_type().is_some_and(|t| t.is_dir());
            // The deepest file that has a say decides, as in git. The entry is judged alone:
            // each directory below `start` was judged as the walk entered it, and `start`
            // itself, named by the caller, is searched (as ripgrep searches what it is given).
            let ignored_above = ancestors
                .iter()
                .rev()
                .map(|ignore| ignore.matched(entry.path(), is_dir))
                .find(|verdict| !verdict.is_none())
                .is_some_and(|verdict| verdict.is_ignore());
            if !ignored_above {
                return true;
            }
            // The files from `start` down are the walk's own: what they ignore, it leaves out
            // anyway. One of them that lets the entry back in (`!keep.log`) is deeper than
            // those above, and decides.
            let mut below = below.lock().unwrap_or_else(|p| p.into_inner());
            entry
                .path()
                .ancestors()
                .skip(1)
                .take_while(|directory| directory.starts_with(&walk_root))
                .any(|directory| {
                    let rules = below.entry(directory.to_owned()).or_insert_with(|| {
                        let relative = directory.strip_prefix(&root).unwrap_or(directory);
                        directory_ignore(&dir, &root, relative)
                    });
                    rules
                        .as_ref()
                        .is_some_and(|rules| rules.matched(entry.path(), is_dir).is_whitelist())
                })
        });
    }
    if let Some(glob) = &query.glob {
        let mut overrides = ignore::overrides::OverrideBuilder::new(&walk_root);
        let invalid = |err: ignore::Error| SearchError::InvalidGlob {
            glob: glob.clone(),
            reason: err.to_string(),
        };
        overrides.add(&anchored_glob(glob)).map_err(invalid)?;
        walk.overrides(overrides.build().map_err(invalid)?);
    }
    let collector = Collector::new(query.max_matches);
    walk.build_parallel().run(|| {
        let matcher = matcher.clone();
        let collector = &collector;
        let mut searcher = searcher();
        Box::new(move |entry| {
            if collector.is_full() {
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
            // Opened through the root's handle, so a file swapped for a link that leads out
            // between the walk and the open is refused rather than read.
            collector.search_one(&shown, |sink| {
                let file = dir.open(relative)?.into_std();
                searcher.search_file(&matcher, &file, sink)
            });
            if collector.is_full() {
                WalkState::Quit
            } else {
                WalkState::Continue
            }
        })
    });
    Ok(collector.finish())
}

/// The `.gitignore` and `.ignore` rules of the directories from the root down to `start`'s
/// parent (read through the root's handle, so a link that leads out is not read), the root's
/// first; none when `start` is the root.
fn ancestor_ignores(dir: &Dir, root: &Path, start: &Path) -> Vec<Gitignore> {
    let mut ignores = Vec::new();
    let mut ancestor = PathBuf::new();
    for component in start.components() {
        ignores.extend(directory_ignore(dir, root, &ancestor));
        ancestor.push(component);
    }
    ignores
}

/// The rules of the `.gitignore` and `.ignore` files of `directory` (relative to the root,
/// read through the root's handle), or `None` when it has none.
fn directory_ignore(dir: &Dir, root: &Path, directory: &Path) -> Option<Gitignore> {
    let mut builder = ignore::gitignore::GitignoreBuilder::new(root.join(directory));
    for name in [".gitignore", ".ignore"] {
        if let Ok(text) = dir.read_to_string(directory.join(name)) {
            for line in text.lines() {
                // A line that is no pattern is passed over, as git does.
                let _ = builder.add_line(None, line);
            }
        }
    }
    builder.build().ok().filter(|ignore| !ignore.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

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
