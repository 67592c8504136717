//! `search_file` over both file systems: .gitignore, hidden and binary files skipped, globs,
//! paths, caps and errors.

use std::os::unix::fs::symlink;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use crate::common::{error, file_systems, text};
use serde_json::json;
use toolsmith_core::{ToolCallManager, ToolErrorKind};
use toolsmith_harness::tools::SearchFileTool;
use toolsmith_harness::{FileSystem, InMemoryFileSystem, LocalFileSystem, SearchQuery, ToolPreset};

async fn tree(fs: &dyn FileSystem) {
    for (path, content) in [
        (".gitignore", &b"target/\n*.log\n"[..]),
        ("src/lib.rs", b"fn alpha() {}\nfn beta() {}\n"),
        ("src/main.rs", b"fn main() {\n    alpha();\n}\n"),
        ("target/debug/out.rs", b"fn alpha_generated() {}\n"),
        (".hidden/x.rs", b"fn alpha_hidden() {}\n"),
        ("notes.md", b"alpha notes\n"),
        ("bin.dat", b"alpha\0binary\n"),
        ("app.log", b"alpha in a log\n"),
        ("sub/.gitignore", b"!keep.log\n"),
        ("sub/keep.log", b"alpha kept\n"),
        ("sub/drop.log.txt", b"nothing here\n"),
    ] {
        fs.write(Path::new(path), content.to_vec()).await.unwrap();
    }
}

fn manager(fs: Arc<dyn FileSystem>) -> ToolCallManager {
    ToolPreset::file_search(fs).into_manager("search").unwrap()
}

#[tokio::test]
async fn respects_gitignore_hidden_and_binary_files() {
    for (kind, fs, _dir) in file_systems() {
        tree(&*fs).await;
        let m = manager(fs);
        assert_eq!(
            text(&m, "search_file", json!({"pattern": "alpha"})).await,
            "4 matches in 4 files (6 files searched)\n\
             notes.md:1: alpha notes\n\
             src/lib.rs:1: fn alpha() {}\n\
             src/main.rs:2:     alpha();\n\
             sub/keep.log:1: alpha kept",
            "{kind}"
        );
    }
}

#[tokio::test]
async fn narrows_by_path_and_glob() {
    for (kind, fs, _dir) in file_systems() {
        tree(&*fs).await;
        let m = manager(fs);
        assert_eq!(
            text(
                &m,
                "search_file",
                json!({"pattern": r"fn \w+", "path": "src"})
            )
            .await,
            "3 matches in 2 files (2 files searched)\n\
             src/lib.rs:1: fn alpha() {}\n\
             src/lib.rs:2: fn beta() {}\n\
             src/main.rs:1: fn main() {",
            "{kind}"
        );
        assert_eq!(
            text(
                &m,
                "search_file",
                json!({"pattern": "alpha", "glob": "*.md"})
            )
            .await,
            "1 match in 1 file (1 file searched)\nnotes.md:1: alpha notes",
            "{kind}"
        );
        assert_eq!(
            text(
                &m,
                "search_file",
                json!({"pattern": "alpha", "path": "src/main.rs"})
            )
            .await,
            "1 match in 1 file (1 file searched)\nsrc/main.rs:2:     alpha();",
            "{kind}"
        );
        assert_eq!(
            text(&m, "search_file", json!({"pattern": "zeta"})).await,
            "No matches for \"zeta\" (6 files searched)",
            "{kind}"
        );
    }
}

#[tokio::test]
async fn results_are_capped_with_a_note() {
    for (kind, fs, _dir) in file_systems() {
        for i in 0..30 {
            fs.write(Path::new(&format!("f{i:02}.txt")), b"hit\nhit\n".to_vec())
                .await
                .unwrap();
        }
        let m = ToolCallManager::new("s");
        m.register(Arc::new(SearchFileTool::new(fs, 25))).unwrap();
        let shown = text(&m, "search_file", json!({"pattern": "hit"})).await;
        let lines: Vec<&str> = shown.lines().collect();
        assert!(
            lines[0].starts_with("25 matches in "),
            "{kind}: {}",
            lines[0]
        );
        assert_eq!(lines.len(), 27, "{kind}");
        assert_eq!(
            lines[26],
            "[results capped at 25 matches; narrow the pattern, path or glob to see the rest]"
        );
    }
}

/// A file with a line past `MAX_SEARCHED_LINE_BYTES` is not read whole: it is left
/// unsearched, named in the report and in the tool's note, and the other files' matches
/// come as they would.
#[tokio::test]
async fn a_file_with_a_line_past_the_limit_is_left_unsearched_and_named() {
    use toolsmith_harness::MAX_SEARCHED_LINE_BYTES;
    for (kind, fs, _dir) in file_systems() {
        let mut huge = b"alpha ".to_vec();
        huge.resize(MAX_SEARCHED_LINE_BYTES + 1024, b'x');
        fs.write(Path::new("dist/app.min.js"), huge).await.unwrap();
        fs.write(Path::new("src/lib.rs"), b"fn alpha() {}\n".to_vec())
            .await
            .unwrap();
        let report = fs.search(SearchQuery::new("alpha")).await.unwrap();
        let found: Vec<&str> = report.matches.iter().map(|m| m.path.as_str()).collect();
        assert_eq!(found, ["src/lib.rs"], "{kind}");
        assert_eq!(report.files_searched, 1, "{kind}");
        assert_eq!(report.files_unsearched, 1, "{kind}");
        assert_eq!(report.unsearched, ["dist/app.min.js"], "{kind}");

        let shown = text(&manager(fs), "search_file", json!({"pattern": "alpha"})).await;
        assert_eq!(
            shown,
            "1 match in 1 file (1 file searched)\nsrc/lib.rs:1: fn alpha() {}\n\
             [1 file could not be searched (unreadable, or a line over 8 MiB): dist/app.min.js]",
            "{kind}"
        );
    }
}

#[tokio::test]
async fn bad_patterns_globs_and_paths_are_reported() {
    for (kind, fs, _dir) in file_systems() {
        tree(&*fs).await;
        let m = manager(fs);
        let err = error(&m, "search_file", json!({"pattern": "fn ("})).await;
        assert_eq!(err.kind(), ToolErrorKind::InvalidArguments, "{kind}");
        assert!(
            err.to_string()
                .contains("/pattern: the pattern \"fn (\" is not a valid regular expression"),
            "{kind}: {err}"
        );
        // A pattern that compiles to more than 10 MiB is refused (grep's 100 MiB took it).
        let err = error(&m, "search_file", json!({"pattern": r"\w{2000}"})).await;
        assert_eq!(err.kind(), ToolErrorKind::InvalidArguments, "{kind}");
        assert!(err.to_string().contains("size limit"), "{kind}: {err}");
        let err = error(&m, "search_file", json!({"pattern": "a", "glob": "src/[a"})).await;
        assert_eq!(err.kind(), ToolErrorKind::InvalidArguments, "{kind}");
        assert!(
            err.to_string()
                .contains("/glob: the glob \"src/[a\" is not valid"),
            "{kind}: {err}"
        );
        let err = error(
            &m,
            "search_file",
            json!({"pattern": "a", "path": "nowhere"}),
        )
        .await;
        assert_eq!(
            err.to_string(),
            "Tool 'search_file' failed: \"nowhere\" does not exist",
            "{kind}"
        );
        let err = error(&m, "search_file", json!({"pattern": "a", "path": "../"})).await;
        assert!(
            err.to_string().contains("outside the root"),
            "{kind}: {err}"
        );
    }
}

#[tokio::test]
async fn the_ignore_files_above_a_searched_directory_apply() {
    for (kind, fs, _dir) in file_systems() {
        fs.write(Path::new(".gitignore"), b"*.log\nsrc/generated/\n".to_vec())
            .await
            .unwrap();
        fs.write(Path::new("src/.gitignore"), b"scratch.rs\n".to_vec())
            .await
            .unwrap();
        fs.write(Path::new("src/lib.rs"), b"alpha\n".to_vec())
            .await
            .unwrap();
        fs.write(Path::new("src/debug.log"), b"alpha in a log\n".to_vec())
            .await
            .unwrap();
        fs.write(
            Path::new("src/generated/g.rs"),
            b"alpha generated\n".to_vec(),
        )
        .await
        .unwrap();
        fs.write(
            Path::new("src/deep/scratch.rs"),
            b"alpha scratch\n".to_vec(),
        )
        .await
        .unwrap();
        fs.write(Path::new("src/deep/kept.rs"), b"alpha kept\n".to_vec())
            .await
            .unwrap();
        let m = manager(fs);
        for path in [None, Some("src"), Some("src/deep")] {
            let mut arguments = json!({"pattern": "alpha"});
            if let Some(path) = path {
                arguments["path"] = json!(path);
            }
            let found = text(&m, "search_file", arguments).await;
            assert!(!found.contains(".log"), "{kind} {path:?}: {found}");
            assert!(!found.contains("generated"), "{kind} {path:?}: {found}");
            assert!(!found.contains("scratch"), "{kind} {path:?}: {found}");
            assert!(
                found.contains("src/deep/kept.rs:1: alpha kept"),
                "{kind} {path:?}: {found}"
            );
        }
    }
}

#[tokio::test]
async fn globs_mean_the_same_on_both_file_systems() {
    let cases: [(&str, Option<&str>, &[&str]); 6] = [
        ("!*.log", None, &["a.rs", "src/a.rs", "src/deep/c.rs"]),
        ("src/*.rs", None, &["src/a.rs"]),
        ("*.rs", None, &["a.rs", "src/a.rs", "src/deep/c.rs"]),
        ("*.rs", Some("src/a.rs"), &["src/a.rs"]),
        ("*.rs", Some("src"), &["src/a.rs", "src/deep/c.rs"]),
        ("deep/*", Some("src"), &["src/deep/c.rs", "src/deep/d.log"]),
    ];
    for (kind, fs, _dir) in file_systems() {
        for file in [
            "a.rs",
            "b.log",
            "src/a.rs",
            "src/deep/c.rs",
            "src/deep/d.log",
        ] {
            fs.write(Path::new(file), b"alpha\n".to_vec())
                .await
                .unwrap();
        }
        let m = manager(fs);
        for (glob, path, expected) in cases {
            let mut arguments = json!({"pattern": "alpha", "glob": glob});
            if let Some(path) = path {
                arguments["path"] = json!(path);
            }
            let found = text(&m, "search_file", arguments).await;
            let mut files: Vec<&str> = found
                .lines()
                .skip(1)
                .filter_map(|line| line.split(':').next())
                .collect();
            files.sort_unstable();
            assert_eq!(files, expected, "{kind}: {glob} in {path:?}: {found}");
        }
    }
}

#[tokio::test]
async fn a_file_searched_by_its_path_is_searched_whatever_ignore_files_and_globs_say() {
    // As ripgrep searches a file named on its command line.
    for (kind, fs, _dir) in file_systems() {
        for (path, content) in [
            (".gitignore", &b"*.log\nsecret.txt\n"[..]),
            ("logs/app.log", b"alpha in a log\n"),
            ("sub/secret.txt", b"alpha secret\n"),
        ] {
            fs.write(Path::new(path), content.to_vec()).await.unwrap();
        }
        let m = manager(fs);
        for (path, glob, expected) in [
            ("logs/app.log", None, "logs/app.log:1: alpha in a log"),
            ("sub/secret.txt", None, "sub/secret.txt:1: alpha secret"),
            (
                "sub/secret.txt",
                Some("*.rs"),
                "sub/secret.txt:1: alpha secret",
            ),
            (
                "logs/app.log",
                Some("!*.log"),
                "logs/app.log:1: alpha in a log",
            ),
        ] {
            let mut arguments = json!({"pattern": "alpha", "path": path});
            if let Some(glob) = glob {
                arguments["glob"] = json!(glob);
            }
            assert_eq!(
                text(&m, "search_file", arguments).await,
                format!("1 match in 1 file (1 file searched)\n{expected}"),
                "{kind}: {path} {glob:?}"
            );
        }
    }
}

#[tokio::test]
async fn a_subdirectory_searched_keeps_what_its_own_ignore_file_lets_back_in() {
    // The deepest ignore file that has a say decides, also when the search starts below the
    // one that ignores.
    for (kind, fs, _dir) in file_systems() {
        for (path, content) in [
            (".gitignore", &b"*.log\n"[..]),
            ("sub/.gitignore", b"!keep.log\n"),
            ("sub/keep.log", b"alpha kept\n"),
            ("sub/drop.log", b"alpha dropped\n"),
            ("sub/deep/keep.log", b"alpha deep\n"),
        ] {
            fs.write(Path::new(path), content.to_vec()).await.unwrap();
        }
        let m = manager(fs);
        for path in [None, Some("sub"), Some("sub/deep")] {
            let mut arguments = json!({"pattern": "alpha"});
            if let Some(path) = path {
                arguments["path"] = json!(path);
            }
            let found = text(&m, "search_file", arguments).await;
            assert!(!found.contains("dropped"), "{kind} {path:?}: {found}");
            assert!(found.contains("alpha deep"), "{kind} {path:?}: {found}");
            if path != Some("sub/deep") {
                assert!(found.contains("sub/keep.log:1"), "{kind} {path:?}: {found}");
            }
        }
    }
}

#[tokio::test]
async fn an_invalid_pattern_is_shown_as_written_with_the_caret_at_the_fault() {
    let m = manager(Arc::new(InMemoryFileSystem::new()));
    for (pattern, shown, caret, fault) in [
        ("fn main(", "fn main(", "       ^", "unclosed group"),
        ("a)b", "a)b", " ^", "unopened group"),
        (
            "x{2,1}",
            "x{2,1}",
            " ^^^^^",
            "invalid repetition count range, the start must be <= the end",
        ),
    ] {
        let err = error(&m, "search_file", json!({"pattern": pattern})).await;
        assert_eq!(err.kind(), ToolErrorKind::InvalidArguments);
        assert_eq!(
            err.to_string(),
            format!(
                "Invalid arguments for tool 'search_file': /pattern: the pattern {pattern:?} is \
                 not a valid regular expression: regex parse error:\n    {shown}\n    {caret}\n\
                 error: {fault}"
            )
        );
    }
}

#[tokio::test]
async fn a_directory_named_as_the_path_is_searched_though_an_ignore_file_names_it() {
    // As ripgrep searches a directory it is given (`rg alpha target`): what is below it still
    // answers to the ignore files.
    for (kind, fs, _dir) in file_systems() {
        for (path, content) in [
            (".gitignore", &b"target/\n*.log\n"[..]),
            ("target/debug/out.rs", b"alpha out\n"),
            ("target/debug/run.log", b"alpha log\n"),
            ("src/lib.rs", b"alpha lib\n"),
        ] {
            fs.write(Path::new(path), content.to_vec()).await.unwrap();
        }
        let m = manager(fs);
        for path in ["target", "target/debug"] {
            assert_eq!(
                text(&m, "search_file", json!({"pattern": "alpha", "path": path})).await,
                "1 match in 1 file (1 file searched)\ntarget/debug/out.rs:1: alpha out",
                "{kind}: {path}"
            );
        }
        assert_eq!(
            text(&m, "search_file", json!({"pattern": "alpha"})).await,
            "1 match in 1 file (1 file searched)\nsrc/lib.rs:1: alpha lib",
            "{kind}"
        );
    }
}

#[tokio::test]
async fn a_backslash_in_a_name_is_shown_as_it_is() {
    // On Unix `\` is a character of a name, not a separator: the path shown must read back.
    for (kind, fs, _dir) in file_systems() {
        fs.write(Path::new("dir\\name.txt"), b"alpha\n".to_vec())
            .await
            .unwrap();
        let m = ToolPreset::files(Arc::clone(&fs))
            .merge(ToolPreset::file_search(fs))
            .into_manager("search")
            .unwrap();
        let found = text(&m, "search_file", json!({"pattern": "alpha"})).await;
        assert_eq!(
            found, "1 match in 1 file (1 file searched)\ndir\\name.txt:1: alpha",
            "{kind}"
        );
        let path = found.lines().nth(1).unwrap().split(':').next().unwrap();
        assert_eq!(
            text(&m, "read", json!({"path": path})).await,
            "     1\talpha",
            "{kind}"
        );
    }
}

#[tokio::test]
async fn a_glob_starting_with_dot_slash_means_the_directory_searched() {
    // Accepted as staying below the directory searched, so it must match there.
    for (kind, fs, _dir) in file_systems() {
        for file in ["src/a.rs", "src/sub/b.rs", "c.rs", "src/d.log"] {
            fs.write(Path::new(file), b"alpha\n".to_vec())
                .await
                .unwrap();
        }
        let m = manager(fs);
        for (glob, path, expected) in [
            ("./src/*.rs", None, "src/a.rs:1: alpha"),
            ("!./src/**", None, "c.rs:1: alpha"),
            ("./sub/*.rs", Some("src"), "src/sub/b.rs:1: alpha"),
        ] {
            let mut arguments = json!({"pattern": "alpha", "glob": glob});
            if let Some(path) = path {
                arguments["path"] = json!(path);
            }
            assert_eq!(
                text(&m, "search_file", arguments).await,
                format!("1 match in 1 file (1 file searched)\n{expected}"),
                "{kind}: {glob} in {path:?}"
            );
        }
    }
}

/// A directory on disk holding `root` and, beside it, `outside`, with a local file system on
/// `root`.
fn root_and_outside() -> (tempfile::TempDir, std::path::PathBuf, Arc<dyn FileSystem>) {
    let base = tempfile::tempdir().unwrap();
    let root = base.path().canonicalize().unwrap().join("root");
    std::fs::create_dir_all(&root).unwrap();
    std::fs::create_dir_all(base.path().join("outside")).unwrap();
    let fs: Arc<dyn FileSystem> = Arc::new(LocalFileSystem::new(&root).unwrap());
    (base, root, fs)
}

#[test]
fn an_ignore_file_that_is_a_fifo_does_not_stall_the_search() {
    // The walk opened each `.gitignore` and `.ignore` it met with a blocking open: a FIFO in
    // their place (`mkfifo .gitignore`) stalled the search, and its blocking thread kept
    // the runtime from shutting down, for as long as no writer came.
    let (_base, root, fs) = root_and_outside();
    for directory in ["sub", "other"] {
        std::fs::create_dir_all(root.join(directory)).unwrap();
        std::fs::write(root.join(directory).join("a.txt"), "alpha\n").unwrap();
    }
    let fifos = [root.join("sub/.gitignore"), root.join("other/.ignore")];
    for fifo in &fifos {
        rustix::fs::mkfifoat(rustix::fs::CWD, fifo, rustix::fs::Mode::from(0o644)).unwrap();
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let outcomes: Vec<_> = [None, Some("sub/a.txt"), Some("other")]
        .into_iter()
        .map(|path| {
            let mut query = SearchQuery::new("alpha");
            query.path = path.map(Into::into);
            let outcome = runtime.block_on(async {
                tokio::time::timeout(Duration::from_secs(10), fs.search(query)).await
            });
            (path, outcome.map(|report| report.map(|r| r.matches.len())))
        })
        .collect();
    // Let a stalled open go on (a writer opens the FIFO and leaves: the reader sees its
    // end), so that a failure does not leave a thread behind.
    for fifo in &fifos {
        let unblock = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(fifo);
        drop(unblock);
    }
    runtime.shutdown_background();
    for (path, outcome) in outcomes {
        let expected = if path.is_none() { 2 } else { 1 };
        assert_eq!(
            outcome.expect("the search stalled on a FIFO").unwrap(),
            expected,
            "{path:?}"
        );
    }
}

#[tokio::test]
async fn ignore_files_are_read_beneath_the_root_only_and_within_a_size() {
    // The walk read `.gitignore` files ambiently: one that is a link out of the root was
    // followed (a link to `/dev/zero` is read without end), and one of any size read whole.
    let (base, root, fs) = root_and_outside();
    let outside_rules = base.path().join("outside/rules");
    std::fs::write(&outside_rules, "*.txt\n").unwrap();
    for directory in ["absolute", "relative", "inside", "huge"] {
        std::fs::create_dir_all(root.join(directory)).unwrap();
        std::fs::write(root.join(directory).join("a.txt"), "alpha\n").unwrap();
        std::fs::write(root.join(directory).join("b.log"), "alpha\n").unwrap();
    }
    symlink(&outside_rules, root.join("absolute/.gitignore")).unwrap();
    symlink("../../outside/rules", root.join("relative/.gitignore")).unwrap();
    // A link that stays beneath the root is still followed.
    std::fs::write(root.join("log-rules"), "*.log\n").unwrap();
    symlink("../log-rules", root.join("inside/.gitignore")).unwrap();
    // Thousands of lines past its rule, an ignore file is too large to be read.
    let mut huge = b"*.txt\n".to_vec();
    huge.resize(2 << 20, b'\n');
    std::fs::write(root.join("huge/.ignore"), huge).unwrap();

    let report = fs.search(SearchQuery::new("alpha")).await.unwrap();
    let mut found: Vec<&str> = report.matches.iter().map(|m| m.path.as_str()).collect();
    found.sort_unstable();
    assert_eq!(
        found,
        [
            "absolute/a.txt",
            "absolute/b.log",
            "huge/a.txt",
            "huge/b.log",
            "inside/a.txt",
            "relative/a.txt",
            "relative/b.log",
        ]
    );
    // The same holds for the ignore file of the directory searched.
    let report = fs
        .search(SearchQuery::new("alpha").in_path("relative"))
        .await
        .unwrap();
    assert_eq!(report.matches.len(), 2);
}

#[tokio::test]
async fn a_glob_does_not_bring_back_what_ignore_files_and_hidden_names_leave_out() {
    // On disk, a glob that matched a file the ignore files or a hidden name left out let it
    // back in when the root was searched (ripgrep's `-g` overrides them); in memory, and
    // below the root on disk, it did not.
    for (kind, fs, _dir) in file_systems() {
        for (path, content) in [
            (".gitignore", &b"*.log\n"[..]),
            ("a.log", b"alpha\n"),
            (".a.rs", b"alpha\n"),
            ("a.rs", b"alpha\n"),
            ("sub/b.log", b"alpha\n"),
            ("sub/.b.rs", b"alpha\n"),
            ("sub/b.rs", b"alpha\n"),
        ] {
            fs.write(Path::new(path), content.to_vec()).await.unwrap();
        }
        for (path, glob, expected) in [
            (None, "*.log", &[][..]),
            (Some("sub"), "*.log", &[]),
            (None, "*.rs", &["a.rs", "sub/b.rs"]),
            (Some("sub"), "*.rs", &["sub/b.rs"]),
            (None, "**/*", &["a.rs", "sub/b.rs"]),
        ] {
            let mut query = SearchQuery::new("alpha").with_glob(glob);
            query.path = path.map(Into::into);
            let report = fs.search(query).await.unwrap();
            let found: Vec<&str> = report.matches.iter().map(|m| m.path.as_str()).collect();
            assert_eq!(found, expected, "{kind}: {glob} in {path:?}");
        }
    }
}

#[tokio::test]
async fn ignore_and_exclude_files_apply_on_both_file_systems() {
    // In memory only `.gitignore` files were read: what `.ignore` and `.git/info/exclude`
    // leave out on disk was searched there.
    for (kind, fs, _dir) in file_systems() {
        for (path, content) in [
            (".gitignore", &b"*.md\n"[..]),
            // An `.ignore` file's say comes before a `.gitignore` file's.
            (".ignore", b"*.tmp\n!notes.md\n"),
            (".git/info/exclude", b"*.bak\n"),
            ("sub/.ignore", b"!keep.tmp\n"),
            ("a.rs", b"alpha\n"),
            ("a.tmp", b"alpha\n"),
            ("a.bak", b"alpha\n"),
            ("notes.md", b"alpha\n"),
            ("other.md", b"alpha\n"),
            ("sub/keep.tmp", b"alpha\n"),
            ("sub/drop.tmp", b"alpha\n"),
        ] {
            fs.write(Path::new(path), content.to_vec()).await.unwrap();
        }
        let report = fs.search(SearchQuery::new("alpha")).await.unwrap();
        let found: Vec<&str> = report.matches.iter().map(|m| m.path.as_str()).collect();
        assert_eq!(found, ["a.rs", "notes.md", "sub/keep.tmp"], "{kind}");
    }
}

#[tokio::test]
async fn the_tool_names_the_ignore_files_it_did_not_apply() {
    // A model saw the files an ignore file leaves out searched, with nothing to say that the
    // file was too large (or held too many patterns) to be applied.
    use toolsmith_harness::{IgnoreFileSkip, MAX_IGNORE_FILE_BYTES, MAX_IGNORE_FILE_PATTERNS};
    let mut too_large = b"*.log\n".to_vec();
    too_large.resize(MAX_IGNORE_FILE_BYTES as usize + 1, b'\n');
    let mut too_many = b"*.log\n".to_vec();
    for n in 0..MAX_IGNORE_FILE_PATTERNS {
        too_many.extend_from_slice(format!("{n}.tmp\n").as_bytes());
    }
    for (kind, fs, _dir) in file_systems() {
        for (path, content) in [
            ("big/.gitignore", &too_large[..]),
            ("big/a.log", b"alpha\n"),
            ("many/.gitignore", &too_many),
            ("many/a.log", b"alpha\n"),
            ("ok/.gitignore", b"*.log\n"),
            ("ok/a.log", b"alpha\n"),
        ] {
            fs.write(Path::new(path), content.to_vec()).await.unwrap();
        }
        let report = fs.search(SearchQuery::new("alpha")).await.unwrap();
        assert_eq!(report.ignore_files_skipped, 2, "{kind}");
        let reasons: Vec<(&str, IgnoreFileSkip)> = report
            .skipped_ignore_files
            .iter()
            .map(|file| (file.path.as_str(), file.reason))
            .collect();
        assert_eq!(
            reasons,
            [
                ("big/.gitignore", IgnoreFileSkip::TooLarge),
                ("many/.gitignore", IgnoreFileSkip::TooManyPatterns)
            ],
            "{kind}"
        );

        let m = manager(fs);
        assert_eq!(
            text(&m, "search_file", json!({"pattern": "alpha"})).await,
            "2 matches in 2 files (2 files searched)\n\
             big/a.log:1: alpha\n\
             many/a.log:1: alpha\n\
             [2 ignore files not applied, so what they would leave out was searched: \
             big/.gitignore (over 256 KiB), many/.gitignore (over 5000 patterns)]",
            "{kind}"
        );
        assert_eq!(
            text(&m, "search_file", json!({"pattern": "zeta", "path": "big"})).await,
            "No matches for \"zeta\" (1 file searched)\n\
             [1 ignore file not applied, so what it would leave out was searched: \
             big/.gitignore (over 256 KiB)]",
            "{kind}"
        );
    }
}

#[tokio::test]
async fn line_anchors_match_at_the_ends_of_crlf_lines() {
    // `read` shows a CRLF file's lines without their `\r`, but `$` matched only before `\n`:
    // `one$` found nothing in a file whose line visibly ends in "one".
    for (kind, fs, _dir) in file_systems() {
        fs.write(Path::new("w.txt"), b"one\r\ntwo\r\nthree one\n".to_vec())
            .await
            .unwrap();
        let m = manager(fs);
        assert_eq!(
            text(&m, "search_file", json!({"pattern": "one$"})).await,
            "2 matches in 1 file (1 file searched)\nw.txt:1: one\nw.txt:3: three one",
            "{kind}"
        );
        assert_eq!(
            text(&m, "search_file", json!({"pattern": "^two$"})).await,
            "1 match in 1 file (1 file searched)\nw.txt:2: two",
            "{kind}"
        );
    }
}
