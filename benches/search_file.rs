//! `search_file` on disk: `LocalFileSystem::search` (the walk confined to the root, the
//! ignore files read through the root's handle) against the bare `ignore` walk with its own
//! ignore files and `grep-searcher`, the floor of any such search, over the same tree in the
//! same run.
//!
//! The tree: 40 directories of 50 files of 60 lines each (2,000 files, 1 in 100 lines a
//! match), and what the ignore files leave out: a `build/` of 400 files (the root's
//! `.gitignore`), `*.log` files beside the sources (the root's), a `generated.txt` in each
//! directory that has a `.gitignore` of its own (every fourth), and hidden files. Both
//! searches must find the same matches in the same files; the bench checks that first.
//!
//! Paired ratios, as the dispatch bench prints them: in each of 15 rounds each search runs 10
//! times, the two in alternating order, and the median of the rounds' ratios is reported with
//! each side's median time a search. Run with `cargo bench --bench search_file`.

use std::path::Path;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use grep_regex::RegexMatcher;
use grep_searcher::sinks::UTF8;
use grep_searcher::{BinaryDetection, SearcherBuilder};
use toolsmith::harness::{FileSystem as _, LocalFileSystem, SearchQuery};

const DIRECTORIES: usize = 40;
const FILES_A_DIRECTORY: usize = 50;
const LINES_A_FILE: usize = 60;
const PATTERN: &str = r"needle_\d+";
const ROUNDS: usize = 15;
const SEARCHES_A_ROUND: usize = 10;

/// Writes the tree into `root`.
fn write_tree(root: &Path) {
    let write = |path: &Path, text: &str| {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    };
    let file_text = |seed: usize| {
        (0..LINES_A_FILE)
            .map(|line| {
                if (seed + line).is_multiple_of(100) {
                    format!("let found = needle_{seed}; // line {line}\n")
                } else {
                    format!("let value_{line} = compute({seed}, {line}); // nothing here\n")
                }
            })
            .collect::<String>()
    };
    write(&root.join(".gitignore"), "build/\n*.log\n");
    for directory in 0..DIRECTORIES {
        let dir = root.join(format!("src/module_{directory}"));
        for file in 0..FILES_A_DIRECTORY {
            let seed = directory * FILES_A_DIRECTORY + file;
            write(&dir.join(format!("file_{file}.rs")), &file_text(seed));
        }
        write(&dir.join("run.log"), &file_text(7));
        write(&dir.join(".hidden.rs"), &file_text(11));
        if directory.is_multiple_of(4) {
            write(&dir.join(".gitignore"), "generated.txt\n");
            write(&dir.join("generated.txt"), &file_text(13));
        }
    }
    for file in 0..400 {
        write(&root.join(format!("build/out_{file}.rs")), &file_text(file));
    }
}

/// The bare search: the `ignore` crate's parallel walk with its standard filters (hidden
/// names, `.gitignore` without a git repository, nothing above the root), each file searched
/// by `grep-searcher`. The matches' count and the files searched.
fn bare_search(root: &Path, matcher: &RegexMatcher) -> (usize, usize) {
    let matches = AtomicUsize::new(0);
    let files = AtomicUsize::new(0);
    let searcher = Mutex::new(
        SearcherBuilder::new()
            .binary_detection(BinaryDetection::quit(b'\x00'))
            .line_number(true)
            .build(),
    );
    ignore::WalkBuilder::new(root)
        .require_git(false)
        .parents(false)
        .git_global(false)
        .build_parallel()
        .run(|| {
            let mut searcher = searcher.lock().unwrap().clone();
            let (matches, files) = (&matches, &files);
            Box::new(move |entry| {
                let Ok(entry) = entry else {
                    return ignore::WalkState::Continue;
                };
                if entry.file_type().is_some_and(|kind| kind.is_file()) {
                    files.fetch_add(1, Ordering::Relaxed);
                    let _ = searcher.search_path(
                        matcher,
                        entry.path(),
                        UTF8(|_, _| {
                            matches.fetch_add(1, Ordering::Relaxed);
                            Ok(true)
                        }),
                    );
                }
                ignore::WalkState::Continue
            })
        });
    (matches.into_inner(), files.into_inner())
}

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

fn main() {
    // `cargo bench` passes `--bench`; `cargo test --benches` runs this once with no argument.
    let quick = !std::env::args().any(|arg| arg == "--bench");
    let tree = tempfile::tempdir().unwrap();
    write_tree(tree.path());
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let local = LocalFileSystem::new(tree.path()).unwrap();
    let matcher = RegexMatcher::new_line_matcher(PATTERN).unwrap();
    let query = || SearchQuery {
        max_matches: 1_000_000,
        ..SearchQuery::new(PATTERN)
    };
    let sandboxed = || runtime.block_on(local.search(query())).unwrap();

    // The same search, first: the same matches in the same files.
    let report = sandboxed();
    let (bare_matches, bare_files) = bare_search(tree.path(), &matcher);
    assert!(!report.capped);
    assert_eq!(
        (report.matches.len(), report.files_searched),
        (bare_matches, bare_files),
        "the two searches disagree"
    );
    println!(
        "search_file: {} matches in {} files (both searches)",
        bare_matches, bare_files
    );
    if quick {
        return;
    }

    let time = |search: &dyn Fn()| {
        let started = Instant::now();
        for _ in 0..SEARCHES_A_ROUND {
            search();
        }
        started.elapsed() / SEARCHES_A_ROUND as u32
    };
    let sandboxed = || {
        std::hint::black_box(sandboxed());
    };
    let bare = || {
        std::hint::black_box(bare_search(tree.path(), &matcher));
    };
    // Warm the page cache and the threads.
    time(&sandboxed);
    time(&bare);
    let (mut ratios, mut sandboxed_times, mut bare_times) = (Vec::new(), Vec::new(), Vec::new());
    for round in 0..ROUNDS {
        let (ours, theirs) = if round.is_multiple_of(2) {
            let ours = time(&sandboxed);
            (ours, time(&bare))
        } else {
            let theirs = time(&bare);
            (time(&sandboxed), theirs)
        };
        ratios.push(ours.as_secs_f64() / theirs.as_secs_f64());
        sandboxed_times.push(ours.as_secs_f64());
        bare_times.push(theirs.as_secs_f64());
    }
    let as_duration = |seconds: f64| Duration::from_secs_f64(seconds);
    println!(
        "search_file/local: median {:?} a search; bare ignore walk + grep-searcher: {:?}; \
         paired ratio {:.3}",
        as_duration(median(&mut sandboxed_times)),
        as_duration(median(&mut bare_times)),
        median(&mut ratios)
    );
}
