//! File and memory work polled after its Tokio runtime shut down (a future driven from
//! outside the runtime, as in a `Drop` or another executor inside `Handle::enter`): the
//! blocking pool refuses it, and the caller gets an error naming the path, not a panic.

use std::path::Path;

use toolsmith_core::MemoryAccess;
use toolsmith_harness::{
    FileMemory, FileSystem, FsError, LocalFileSystem, SearchError, SearchQuery,
};

/// Runs `future` on a plain executor inside a runtime that has been shut down.
fn after_shutdown<F: std::future::Future>(future: impl FnOnce() -> F) -> F::Output {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let handle = runtime.handle().clone();
    runtime.shutdown_background();
    let _entered = handle.enter();
    futures::executor::block_on(future())
}

fn assert_cancelled_io(error: &FsError, path: &str) {
    match error {
        FsError::Io { path: got, reason } => {
            assert_eq!(got, path);
            assert!(reason.contains("shutting down"), "{reason}");
        }
        other => panic!("expected an I/O error for {path}, got {other:?}"),
    }
}

#[test]
fn file_reads_writes_and_searches_fail_cleanly() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("kept.txt"), "kept").unwrap();
    let fs = LocalFileSystem::new(dir.path()).unwrap();

    let read = after_shutdown(|| fs.read(Path::new("kept.txt"))).unwrap_err();
    assert_cancelled_io(&read, "kept.txt");

    let write = after_shutdown(|| fs.write(Path::new("new.txt"), b"new".to_vec())).unwrap_err();
    assert_cancelled_io(&write, "new.txt");
    assert!(!dir.path().join("new.txt").exists());

    let search = after_shutdown(|| fs.search(SearchQuery::new("kept"))).unwrap_err();
    match search {
        SearchError::Fs(error) => assert_cancelled_io(&error, "."),
        other => panic!("expected a file system error, got {other:?}"),
    }
}

#[test]
fn a_memory_write_fails_cleanly_and_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("memory.json");
    let memory = FileMemory::open(&path).unwrap();

    let error = after_shutdown(|| memory.add("a fact".to_owned())).unwrap_err();
    let shown = error.to_string();
    assert!(shown.contains("memory.json"), "{shown}");
    assert!(shown.contains("shutting down"), "{shown}");

    let facts = futures::executor::block_on(memory.facts()).unwrap();
    assert!(facts.is_empty());
    assert!(!path.exists());
}
