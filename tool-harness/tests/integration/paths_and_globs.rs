//! Paths that name a directory, FIFOs under `write`, globs that leave the root, and absolute
//! symbolic links that stay inside it: each refused with an error that says why, or followed,
//! alike on both file systems where both have the feature.

use std::path::Path;
use std::sync::Arc;

use crate::common::{error, text};
use serde_json::json;
use toolsmith_core::{ToolCallManager, ToolErrorKind};
use toolsmith_harness::{
    FileSystem, InMemoryFileSystem, LocalFileSystem, SearchError, SearchQuery, ToolPreset,
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
