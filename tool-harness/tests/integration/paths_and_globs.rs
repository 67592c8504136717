//! Paths that name a directory, FIFOs under `write`, globs that leave the root, and absolute
//! symbolic links that stay inside it: each refused with an error that says why, or followed,
//! alike on both file systems where both have the feature.

use std::os::unix::fs::symlink;
use std::path::Path;
use std::sync::Arc;

use crate::common::{error, text};
use serde_json::json;
use toolsmith_core::{ToolCallManager, ToolErrorKind};
use toolsmith_harness::{
    FileSystem, FsError, InMemoryFileSystem, LocalFileSystem, SearchError, SearchQuery, ToolPreset,
};

fn both() -> Vec<(&'static str, Arc<dyn FileSystem>, Option<tempfile::TempDir>)> {
    let dir = tempfile::tempdir().unwrap();
    let local: Arc<dyn FileSystem> = Arc::new(LocalFileSystem::new(dir.path()).unwrap());
    vec![
        ("local", local, Some(dir)),
        ("memory", Arc::new(InMemoryFileSystem::new()), None),
    ]
}

fn manager(fs: Arc<dyn FileSystem>) -> ToolCallManager {
    (ToolPreset::files(Arc::clone(&fs)) + ToolPreset::file_search(fs))
        .into_manager("paths")
        .unwrap()
}

// ---- A path that ends in '/' names a directory ----

#[tokio::test]
async fn a_path_ending_in_a_slash_is_not_a_file() {
    for (kind, fs, _dir) in both() {
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
    for (kind, fs, _dir) in both() {
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
