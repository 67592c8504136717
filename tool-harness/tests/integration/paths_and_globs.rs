//! Paths that name a directory, FIFOs under `write`, globs that leave the root, and absolute
//! symbolic links that stay inside it: each refused with an error that says why, or followed,
//! alike on both file systems where both have the feature.

use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::common::{error, file_systems, text};
use serde_json::json;
use toolsmith_core::{ToolCallManager, ToolErrorKind};
use toolsmith_harness::{
    FileSystem, FsError, LocalFileSystem, SearchError, SearchQuery, ToolPreset,
};

fn manager(fs: Arc<dyn FileSystem>) -> ToolCallManager {
    (ToolPreset::files(Arc::clone(&fs)) + ToolPreset::file_search(fs))
        .into_manager("paths")
        .unwrap()
}

// ---- A path that ends in '/' names a directory ----

#[tokio::test]
async fn a_path_ending_in_a_slash_is_not_a_file() {
    for (kind, fs, _dir) in file_systems() {
        fs.write(Path::new("notes.txt"), b"text\n".to_vec())
            .await
            .unwrap();
        fs.write(Path::new("dir/inner.txt"), b"inner\n".to_vec())
            .await
            .unwrap();
        for path in [
            "newdir/",
            "newdir/.",
            "newdir/sub/",
            "notes.txt/",
            "dir/",
            "dir/.",
        ] {
            let err = fs
                .write(Path::new(path), b"x".to_vec())
                .await
                .expect_err(&format!("{kind}: write {path:?} was allowed"));
            assert!(
                matches!(err, FsError::InvalidPath { .. }),
                "{kind}: {path}: {err}"
            );
            assert_eq!(err.path(), path, "{kind}: {err}");
            assert!(
                err.to_string().contains("names a directory"),
                "{kind}: {path}: {err}"
            );
        }
        for path in ["notes.txt/", "notes.txt/.", "dir/inner.txt/"] {
            let err = fs
                .read(Path::new(path))
                .await
                .expect_err(&format!("{kind}: read {path:?} was allowed"));
            assert_eq!(err.path(), path, "{kind}: {err}");
            assert!(
                err.to_string().contains("names a directory"),
                "{kind}: {path}: {err}"
            );
        }
        // Nothing was created, and what was there is unchanged.
        assert!(
            fs.read(Path::new("newdir")).await.is_err(),
            "{kind}: a file 'newdir' was created"
        );
        assert_eq!(fs.read(Path::new("notes.txt")).await.unwrap(), b"text\n");

        let m = manager(Arc::clone(&fs));
        for (tool, arguments) in [
            ("write", json!({"path": "newdir/", "content": "x"})),
            ("read", json!({"path": "notes.txt/"})),
            (
                "edit",
                json!({"path": "notes.txt/", "old_string": "text", "new_string": "new"}),
            ),
        ] {
            let message = error(&m, tool, arguments).await.to_string();
            let path = if tool == "write" {
                "newdir/"
            } else {
                "notes.txt/"
            };
            assert!(
                message.contains(&format!("{path:?}")) && message.contains("names a directory"),
                "{kind}: {tool}: {message}"
            );
        }
        assert_eq!(fs.read(Path::new("notes.txt")).await.unwrap(), b"text\n");
    }
}

// ---- FIFOs ----

#[tokio::test]
async fn write_and_edit_refuse_a_fifo_and_leave_it() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("pipe");
    let status = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(status.success());
    let fs: Arc<dyn FileSystem> = Arc::new(LocalFileSystem::new(dir.path()).unwrap());
    let err = fs
        .write(Path::new("pipe"), b"data".to_vec())
        .await
        .unwrap_err();
    assert!(matches!(err, FsError::NotARegularFile { .. }), "{err}");
    assert_eq!(
        err.to_string(),
        "refused \"pipe\": it is not a regular file (a FIFO)"
    );
    // Through a link to it, too.
    symlink("pipe", dir.path().join("pipe_link")).unwrap();
    let err = fs
        .write(Path::new("pipe_link"), b"data".to_vec())
        .await
        .unwrap_err();
    assert!(matches!(err, FsError::NotARegularFile { .. }), "{err}");

    let m = manager(fs);
    let message = error(&m, "write", json!({"path": "pipe", "content": "x"}))
        .await
        .to_string();
    assert!(message.contains("a FIFO"), "{message}");
    let message = error(
        &m,
        "edit",
        json!({"path": "pipe", "old_string": "a", "new_string": "b"}),
    )
    .await
    .to_string();
    assert!(message.contains("a FIFO"), "{message}");
    use std::os::unix::fs::FileTypeExt as _;
    assert!(
        std::fs::symlink_metadata(&fifo)
            .unwrap()
            .file_type()
            .is_fifo(),
        "the FIFO was replaced"
    );
}

// ---- Globs that leave the root ----

#[tokio::test]
async fn globs_that_leave_the_search_root_are_refused() {
    for (kind, fs, _dir) in file_systems() {
        fs.write(Path::new("src/lib.rs"), b"fn alpha() {}\n".to_vec())
            .await
            .unwrap();
        for glob in [
            "../**",
            "../*.rs",
            "src/../../**",
            "/**/x",
            "/etc/passwd",
            "!../x",
            "{../**,*.rs}",
            "..",
        ] {
            let query = SearchQuery::new("alpha").with_glob(glob);
            let err = fs
                .search(query)
                .await
                .expect_err(&format!("{kind}: glob {glob:?} was allowed"));
            assert!(
                matches!(&err, SearchError::InvalidGlob { glob: g, .. } if g == glob),
                "{kind}: {glob}: {err}"
            );
            assert!(
                err.to_string().contains(&format!("{glob:?}")),
                "{kind}: {glob}: {err}"
            );
        }
        let m = manager(Arc::clone(&fs));
        let err = error(
            &m,
            "search_file",
            json!({"pattern": "alpha", "glob": "../**"}),
        )
        .await;
        assert_eq!(err.kind(), ToolErrorKind::InvalidArguments, "{kind}: {err}");
        let message = err.to_string();
        assert!(
            message.contains("/glob: ") && message.contains("\"../**\""),
            "{kind}: {message}"
        );
        // Globs that stay inside still work.
        for glob in ["*.rs", "src/**/*.rs", "**/lib.rs", "{src,tests}/*.rs"] {
            assert_eq!(
                text(&m, "search_file", json!({"pattern": "alpha", "glob": glob})).await,
                "1 match in 1 file (1 file searched)\nsrc/lib.rs:1: fn alpha() {}",
                "{kind}: {glob}"
            );
        }
    }
}

// ---- Absolute symbolic links ----

struct Tree {
    _base: tempfile::TempDir,
    base: PathBuf,
    root: PathBuf,
}

/// A root with `inside.txt` and `a/b/deep.txt`, and a sibling `outside/secret.txt`.
fn tree() -> Tree {
    let base_dir = tempfile::tempdir().unwrap();
    let base = base_dir.path().canonicalize().unwrap();
    let root = base.join("root");
    std::fs::create_dir_all(root.join("a/b")).unwrap();
    std::fs::create_dir_all(base.join("outside")).unwrap();
    std::fs::write(root.join("inside.txt"), "inside\n").unwrap();
    std::fs::write(root.join("a/b/deep.txt"), "deep\n").unwrap();
    std::fs::write(base.join("outside/secret.txt"), "secret\n").unwrap();
    Tree {
        _base: base_dir,
        base,
        root,
    }
}

#[tokio::test]
async fn absolute_links_that_resolve_beneath_the_root_are_followed() {
    let t = tree();
    let root = &t.root;
    symlink(root.join("inside.txt"), root.join("abs_file")).unwrap();
    symlink(root.join("a"), root.join("abs_dir")).unwrap();
    symlink(root.join("a/b/deep.txt"), root.join("a/abs_deep")).unwrap();
    // A chain: absolute to relative to absolute.
    symlink("abs_file", root.join("rel_to_abs")).unwrap();
    symlink(root.join("rel_to_abs"), root.join("a/chain")).unwrap();
    // A relative link whose absolute target does not exist beneath the root.
    symlink("abs_file", root.join("a/b/rel_missing")).unwrap();
    // An absolute target with '..' that stays inside.
    symlink(root.join("a/b/../../inside.txt"), root.join("abs_dotdot")).unwrap();
    let fs = LocalFileSystem::new(root).unwrap();

    for (path, expected) in [
        ("abs_file", &b"inside\n"[..]),
        ("abs_dir/b/deep.txt", b"deep\n"),
        ("a/abs_deep", b"deep\n"),
        ("a/chain", b"inside\n"),
        ("abs_dotdot", b"inside\n"),
    ] {
        assert_eq!(
            fs.read(Path::new(path))
                .await
                .unwrap_or_else(|err| panic!("{path}: {err}")),
            expected,
            "{path}"
        );
    }
    assert_eq!(fs.read(Path::new("a/chain")).await.unwrap(), b"inside\n");
    // `a/b/rel_missing` points to `abs_file` next to it, `a/b/abs_file`, which does not exist.
    let err = fs.read(Path::new("a/b/rel_missing")).await.unwrap_err();
    assert!(matches!(err, FsError::NotFound { .. }), "{err}");
    // As the kernel does, `..` does not climb back out of a directory that does not exist.
    symlink(root.join("nowhere/../inside.txt"), root.join("via_nowhere")).unwrap();
    let err = fs.read(Path::new("via_nowhere")).await.unwrap_err();
    assert!(matches!(err, FsError::NotFound { .. }), "{err}");
    assert_eq!(err.path(), "via_nowhere");
    // Absolute links that loop end, as relative ones do.
    symlink(root.join("loop_b"), root.join("loop_a")).unwrap();
    symlink(root.join("loop_a"), root.join("loop_b")).unwrap();
    let err = fs.read(Path::new("loop_a")).await.unwrap_err();
    assert!(matches!(err, FsError::SymlinkLoop { .. }), "{err}");
    let err = fs
        .write(Path::new("loop_a"), b"x".to_vec())
        .await
        .unwrap_err();
    assert!(matches!(err, FsError::SymlinkLoop { .. }), "{err}");

    // A write through an absolute link lands on the target and keeps the link.
    fs.write(Path::new("abs_file"), b"changed\n".to_vec())
        .await
        .unwrap();
    assert_eq!(
        std::fs::read(root.join("inside.txt")).unwrap(),
        b"changed\n"
    );
    assert!(
        std::fs::symlink_metadata(root.join("abs_file"))
            .unwrap()
            .file_type()
            .is_symlink()
    );
    // New files and directories below an absolute directory link go to its target.
    fs.write(Path::new("abs_dir/new/made.txt"), b"made\n".to_vec())
        .await
        .unwrap();
    assert_eq!(
        std::fs::read(root.join("a/new/made.txt")).unwrap(),
        b"made\n"
    );

    // search_file starts at a directory reached through an absolute link.
    let report = fs
        .search(SearchQuery::new("deep|made").in_path("abs_dir"))
        .await
        .unwrap();
    let paths: Vec<&str> = report.matches.iter().map(|m| m.path.as_str()).collect();
    assert_eq!(paths, ["a/b/deep.txt", "a/new/made.txt"], "{report:?}");

    // Through the tools too.
    let m = manager(Arc::new(fs));
    assert_eq!(
        text(&m, "read", json!({"path": "abs_dir/b/deep.txt"})).await,
        "     1\tdeep"
    );
    text(
        &m,
        "edit",
        json!({"path": "a/abs_deep", "old_string": "deep", "new_string": "deeper"}),
    )
    .await;
    assert_eq!(
        std::fs::read(root.join("a/b/deep.txt")).unwrap(),
        b"deeper\n"
    );
}

#[tokio::test]
async fn absolute_links_beneath_the_root_as_given_are_followed() {
    // The root given through a link of its own: a target under either spelling is inside.
    let t = tree();
    let alias = t.base.join("alias");
    symlink(&t.root, &alias).unwrap();
    symlink(alias.join("inside.txt"), t.root.join("via_alias")).unwrap();
    let fs = LocalFileSystem::new(&alias).unwrap();
    assert_eq!(fs.read(Path::new("via_alias")).await.unwrap(), b"inside\n");
}

#[tokio::test]
async fn absolute_links_that_leave_the_root_say_where_they_point() {
    let t = tree();
    let root = &t.root;
    let secret = t.base.join("outside/secret.txt");
    symlink(&secret, root.join("out")).unwrap();
    symlink(root.join("a/../../outside/secret.txt"), root.join("a/sly")).unwrap();
    symlink(root.join("out"), root.join("to_out")).unwrap();
    let fs = LocalFileSystem::new(root).unwrap();
    for (path, link, target, why) in [
        (
            "out",
            "out".to_owned(),
            secret.display().to_string(),
            "which is outside the root",
        ),
        (
            "a/sly",
            "a/sly".to_owned(),
            root.join("a/../../outside/secret.txt")
                .display()
                .to_string(),
            "which leads above the root",
        ),
        (
            "to_out",
            "out".to_owned(),
            secret.display().to_string(),
            "which is outside the root",
        ),
    ] {
        for err in [
            fs.read(Path::new(path)).await.unwrap_err(),
            fs.write(Path::new(path), b"x".to_vec()).await.unwrap_err(),
        ] {
            assert!(matches!(err, FsError::OutsideRoot { .. }), "{path}: {err}");
            assert_eq!(err.path(), path);
            let message = err.to_string();
            assert!(
                message.contains(&format!("the symbolic link {link:?} points to {target:?}"))
                    && message.contains(why),
                "{path}: {message}"
            );
        }
    }
    assert_eq!(std::fs::read(&secret).unwrap(), b"secret\n");
}

#[tokio::test]
async fn a_search_from_a_link_to_the_root_searches_the_root() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "alpha\n").unwrap();
    symlink(".", dir.path().join("here")).unwrap();
    symlink(dir.path(), dir.path().join("abs")).unwrap();
    let m = manager(Arc::new(LocalFileSystem::new(dir.path()).unwrap()));
    for link in ["here", "abs"] {
        assert_eq!(
            text(&m, "search_file", json!({"pattern": "alpha", "path": link})).await,
            "1 match in 1 file (1 file searched)\na.txt:1: alpha",
            "{link}"
        );
    }
}

#[tokio::test]
async fn a_long_name_within_name_max_is_written_whatever_its_characters() {
    for (kind, fs, dir) in file_systems() {
        // 244 bytes, 124 characters: within the 255 bytes a name may have.
        let name = format!("{}.txt", "é".repeat(120));
        if let Some(dir) = &dir {
            std::fs::write(dir.path().join(&name), "the system takes it").unwrap();
            std::fs::remove_file(dir.path().join(&name)).unwrap();
        }
        let m = manager(fs);
        assert_eq!(
            text(&m, "write", json!({"path": name, "content": "x"})).await,
            format!("Created {name:?} (1 byte)"),
            "{kind}"
        );
        text(
            &m,
            "edit",
            json!({"path": name, "old_string": "x", "new_string": "y"}),
        )
        .await;
    }
}

#[tokio::test]
async fn a_long_refused_argument_is_quoted_cut() {
    // The model wrote it, and reads the answer: 100,000 characters are not echoed back.
    let long = "a".repeat(100_000);
    for (kind, fs, _dir) in file_systems() {
        fs.write(Path::new("a.txt"), b"x\n".to_vec()).await.unwrap();
        let m = manager(fs);
        let cases = [
            (
                "search_file",
                json!({"pattern": format!("({long}")}),
                "unclosed group",
            ),
            (
                "search_file",
                json!({"pattern": "x", "glob": format!("[{long}")}),
                "unclosed character class",
            ),
            (
                "search_file",
                json!({"pattern": "x", "path": long.clone()}),
                "more than 4096",
            ),
            ("read", json!({"path": format!("{long}\u{0}")}), "NUL byte"),
            (
                "write",
                json!({"path": long.clone(), "content": "x"}),
                "more than 4096",
            ),
        ];
        for (tool, arguments, needle) in cases {
            let message = error(&m, tool, arguments).await.to_string();
            assert!(
                message.len() < 1000 && message.contains(needle) && message.contains("aaaa"),
                "{kind} {tool}: {} characters: {}",
                message.len(),
                &message[..message.len().min(300)]
            );
        }
        let found = text(&m, "search_file", json!({"pattern": long})).await;
        assert!(
            found.len() < 1000 && found.starts_with("No matches for \"aaaa"),
            "{kind}: {} characters",
            found.len()
        );
    }
}
